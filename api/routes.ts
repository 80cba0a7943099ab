// The one route table of the interface (docs/contract.md §1.1): method, path, handler and what it answers. It drives
// the server's polka registration, the Allow header of a 405, the mirror client's routing and the OpenAPI paths.

import { LIMITS } from "./contract.js";
import { CREDENTIALS_CORS, type CorsSpec, JSON_BODY_CORS, READ_CORS } from "./cors.js";
import type { Answer } from "./answer.js";
import { answerAcquisition, answerQuery, answerResolve, answerValidate, precheckDataRequest } from "./data.js";
import { answerCatalog, answerInspect, answerObservations } from "./datasets.js";
import type { ErrorKind } from "./errors.js";
import { answerLayers, answerSample } from "./layers.js";
import { answerRevisions } from "./revisions.js";
import { answerCapabilities, answerHealth, answerOpenApi } from "./meta.js";
import type { Context } from "./context.js";
import { TILE_PARAM } from "./params.js";
import { SERIES_DESCRIPTION, SERIES_PARAMETERS, SERIES_PLAN_ITEM, describeSeriesOk } from "./series-openapi.js";
import { answerSeries, precheckSeries } from "./series-route.js";
import { ZARR_ROUTES } from "./zarr-routes.js";

export interface ParameterSpec {
  name: string;
  required?: boolean;
  description: string;
  schema: Record<string, unknown>;
}

export interface RouteSpec {
  method: "GET" | "POST";
  /** polka pattern: `:id` is a path parameter */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  query?: ParameterSpec[];
  /** schema id of the JSON body (POST routes), and whether the route reads it (the acquisition route never does) */
  body?: string;
  readsBody?: boolean;
  /** schema id (or ids: one of) of the 200 answer, and whether it may be CSV */
  answers: string[];
  csv?: boolean;
  /** documentation: the 200 answer carries Service-Dataset-Version, Service-Request-SHA256 and Link (docs/contract.md §3.5) */
  provenance?: boolean;
  /** what a cross-origin caller may send: the request headers its CORS preflight allows (api/cors.ts) */
  cors: CorsSpec;
  /** error kinds the route can answer besides 503 service_unavailable */
  errors: ErrorKind[];
  /** immutable GET answers carry an ETag and answer If-None-Match with 304 */
  etag?: "immutable" | "short";
  /**
   * the answer is computed from the dist (read, decoded, written): the transport may bound how many run at once
   * and shed the rest (ApiRequest.admit); cheap answers (health, capabilities, the document, validate) never wait
   */
  computed?: boolean;
  /**
   * cheap checks a computed route runs before it waits for a turn (the contract check of a data request): a
   * request that fails them is answered at once, never queued nor shed
   */
  precheck?: (ctx: Context) => void;
  /**
   * The OpenAPI description of a 200 the contract's schemas do not cover (its media types and headers; `head`: the
   * HEAD form), and the schema of its 413's plan items (default: data requests)
   */
  document?: { ok: (head: boolean) => Record<string, unknown>; planItem?: Record<string, unknown> };
  handle: (ctx: Context) => Promise<Answer>;
  /** documentation of routes beyond the contract (the Zarr view): their OpenAPI tag, path parameters besides `id`, */
  tag?: string;
  pathParams?: ParameterSpec[];
  /** the 200's media types and schemas when they are not the contract's JSON schemas of `answers` */
  content?: Record<string, { schema: Record<string, unknown> }>;
  /** a byte range may be asked for (206, 416) */
  ranges?: boolean;
  /** it may answer 302 with a Location */
  redirects?: boolean;
}

const limit: ParameterSpec = {
  name: "limit",
  description: `Items per page; the response is also capped at ${LIMITS.maxResponseBytes} bytes.`,
  schema: { type: "integer", minimum: 1, maximum: LIMITS.maxPageLimit, default: LIMITS.defaultPageLimit },
};
const after: ParameterSpec = {
  name: "after",
  description: "Opaque `nextCursor` of the preceding page; omit for the first page.",
  schema: { type: "string", maxLength: LIMITS.maxCursorLength },
};
const PAGE_ERRORS: ErrorKind[] = ["invalid_parameters", "not_found", "response_too_large"];
const POST_ERRORS: ErrorKind[] = ["malformed_json", "payload_too_large", "unsupported_media_type", "invalid_request"];

export const ROUTES: RouteSpec[] = [
  {
    method: "GET",
    path: "/api/health",
    operationId: "getHealth",
    cors: READ_CORS,
    summary: "Process and configuration status (no database or source check).",
    answers: ["health.schema.json"],
    errors: [],
    handle: answerHealth,
  },
  {
    method: "GET",
    path: "/api/v1/capabilities",
    operationId: "getCapabilities",
    cors: READ_CORS,
    summary: "Implemented variables, sources, representations, limits and features.",
    answers: ["capabilities.schema.json"],
    errors: [],
    etag: "short",
    handle: answerCapabilities,
  },
  {
    method: "GET",
    path: "/api/v1/openapi.json",
    operationId: "getOpenApi",
    cors: READ_CORS,
    summary: "This OpenAPI 3.1 description of the interface.",
    answers: [],
    errors: [],
    etag: "short",
    handle: answerOpenApi,
  },
  {
    method: "GET",
    path: "/api/v1/datasets",
    operationId: "listDatasets",
    cors: READ_CORS,
    computed: true,
    summary: "Published catalog metadata in stable id order (restricted datasets omitted); follow nextCursor until null.",
    query: [limit, after],
    answers: ["catalog-response.schema.json"],
    errors: ["invalid_parameters", "response_too_large"],
    etag: "short",
    handle: answerCatalog,
  },
  {
    method: "GET",
    path: "/api/v1/datasets/:id",
    operationId: "getDataset",
    cors: READ_CORS,
    computed: true,
    summary: "One immutable dataset version: units, coverage, source hashes, license, attribution, spatial support.",
    answers: ["dataset-response.schema.json"],
    errors: ["invalid_parameters", "not_found", "response_too_large"],
    etag: "immutable",
    handle: answerInspect,
  },
  {
    method: "GET",
    path: "/api/v1/datasets/:id/observations",
    operationId: "listObservations",
    cors: READ_CORS,
    computed: true,
    summary: "Observations of a public demo version in stable id order; follow nextCursor until null.",
    query: [limit, after],
    answers: ["observations-page.schema.json"],
    errors: PAGE_ERRORS,
    etag: "immutable",
    handle: answerObservations,
  },
  {
    method: "GET",
    path: "/api/v1/datasets/:id/revisions",
    operationId: "getRevisions",
    cors: READ_CORS,
    tag: "revisions",
    computed: true,
    summary: "Which dates of a version have been revised since: the dates whose cells differ from the newest version of its dataset (or `against`).",
    description:
      "SILO rewrites recent days every night as late station reports arrive; each revision is a new version, and a pinned version never changes. This compares a pinned version with the newest of its dataset, or with the version `against` names, as inclusive date ranges: `revised` (both hold the date, with other cells), `added` (only the other holds it), `removed` (only the pinned one does).",
    query: [{ name: "against", description: "The version to compare with (of the same dataset); default: the newest, the one a request without a pin reads.", schema: { type: "string", pattern: "^[a-zA-Z0-9_-]{1,128}$" } }],
    answers: ["revisions-response.schema.json"],
    errors: ["invalid_parameters", "not_found", "response_too_large"],
    etag: "short",
    handle: answerRevisions,
  },
  {
    method: "GET",
    path: "/api/v1/layers/:id",
    operationId: "getLayers",
    cors: READ_CORS,
    computed: true,
    summary: "Without `tile`: a page of tile metadata. With `tile`: that tile with its cells.",
    query: [
      limit,
      after,
      { name: "tile", description: "A tile id from the layer index; omit to list tile metadata (an empty value is 400).", schema: { type: "string", ...TILE_PARAM } },
    ],
    answers: ["layers-page.schema.json", "tile-response.schema.json"],
    errors: PAGE_ERRORS,
    etag: "immutable",
    handle: answerLayers,
  },
  {
    method: "GET",
    path: "/api/v1/layers/:id/sample",
    operationId: "getSample",
    cors: READ_CORS,
    computed: true,
    summary: "One raster cell by tile id and zero-based row and column within the tile.",
    query: [
      { name: "tile", required: true, description: "Tile id from the layer index.", schema: { type: "string", ...TILE_PARAM } },
      { name: "row", required: true, description: "Zero-based row within the tile.", schema: { type: "integer", minimum: 0 } },
      { name: "col", required: true, description: "Zero-based column within the tile.", schema: { type: "integer", minimum: 0 } },
    ],
    answers: ["pixel-sample.schema.json"],
    errors: PAGE_ERRORS,
    etag: "immutable",
    handle: answerSample,
  },
  {
    method: "POST",
    path: "/api/v1/data/validate",
    operationId: "validateDataRequest",
    cors: JSON_BODY_CORS,
    readsBody: true,
    summary: "Contract check only (shape, calendar dates, ordered bounds); not a coverage guarantee, quote or purchase.",
    body: "data-request.schema.json",
    answers: ["validation.schema.json"],
    errors: POST_ERRORS,
    handle: answerValidate,
  },
  {
    method: "POST",
    path: "/api/v1/data/resolve",
    operationId: "resolveDataRequest",
    cors: JSON_BODY_CORS,
    computed: true,
    readsBody: true,
    summary: "Complete published demo coverage check: the selected version and row count, or an unavailable reason.",
    body: "data-request.schema.json",
    answers: ["resolution.schema.json"],
    errors: POST_ERRORS,
    precheck: precheckDataRequest,
    handle: answerResolve,
  },
  {
    method: "POST",
    path: "/api/v1/data/query",
    operationId: "queryData",
    cors: JSON_BODY_CORS,
    computed: true,
    readsBody: true,
    summary: "The complete bounded result inline: native cells whose centres fall in the box, dates inclusive.",
    body: "data-request.schema.json",
    description:
      'The answer is JSON (a manifest and the rows) or, with `"format": "csv"`, CSV. A 413 `request_too_large` or `response_too_large` carries `plan`: smaller requests whose answers, concatenated in order, hold exactly these rows.',
    answers: ["query-result.schema.json"],
    csv: true,
    provenance: true,
    errors: [...POST_ERRORS, "request_too_large", "response_too_large", "coverage_unavailable", "no_cell_centers", "unsupported_grid"],
    precheck: precheckDataRequest,
    handle: answerQuery,
  },
  {
    method: "GET",
    path: "/api/v1/series",
    operationId: "getSeries",
    cors: READ_CORS,
    computed: true,
    summary: "Places over any period in one call (SILO's whole archive at a place): tidy CSV, JSON with a provenance manifest, or an APSIM weather file.",
    description: SERIES_DESCRIPTION,
    query: SERIES_PARAMETERS,
    answers: [],
    errors: ["invalid_parameters", "request_too_large", "coverage_unavailable", "missing_values"],
    etag: "short",
    document: { ok: (head) => describeSeriesOk(head, true), planItem: SERIES_PLAN_ITEM },
    precheck: precheckSeries,
    handle: answerSeries,
  },
  {
    method: "POST",
    path: "/api/v1/data/requests",
    operationId: "createAcquisitionRequest",
    cors: CREDENTIALS_CORS,
    summary: "Acquisition (not enabled): always 503 acquisition_not_ready; never charges or queues work.",
    description:
      "Use POST /api/v1/data/query for published demo data. Planned, not active: requests will carry `Authorization: Bearer <ACCESS_TOKEN>`, and a purchase will answer 402 with `WWW-Authenticate: Payment` and be retried with `Authorization: Payment` (docs/contract.md §4.5). No security scheme applies while acquisition is not enabled.",
    body: "acquisition-request.schema.json",
    answers: [],
    errors: ["acquisition_not_ready"],
    handle: answerAcquisition,
  },
  ...ZARR_ROUTES,
];

/** What a client should do on a 405 for a path, by the methods it has. */
function hintFor(routes: RouteSpec[]): string {
  const post = routes.find((r) => r.method === "POST");
  if (post?.body === "data-request.schema.json") {
    return `POST a JSON data request with -H 'Content-Type: application/json'; GET /api/v1/openapi.json describes it with an example.`;
  }
  if (post) return "POST is the only method here; GET /api/v1/openapi.json describes it.";
  return "this route only reads; use GET.";
}

export function allowOf(routes: RouteSpec[]): string {
  const methods = routes.flatMap((r) => (r.method === "GET" ? ["GET", "HEAD"] : [r.method]));
  return [...methods, "OPTIONS"].join(", ");
}

/** Route patterns split once: every request is matched against each of them. */
const patternParts = new Map<string, string[]>();

function matchPath(pattern: string, path: string): Record<string, string> | null {
  let want = patternParts.get(pattern);
  if (!want) patternParts.set(pattern, (want = pattern.split("/")));
  const got = path.split("/");
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i].startsWith(":")) {
      if (got[i] === "") return null;
      try {
        params[want[i].slice(1)] = decodeURIComponent(got[i]);
      } catch {
        // not UTF-8 once decoded: still this route, with an id that breaks its pattern (400, docs/contract.md §1.2)
        params[want[i].slice(1)] = got[i];
      }
    } else if (want[i] !== got[i]) return null;
  }
  return params;
}

export type RouteMatch = { route: RouteSpec; params: Record<string, string> } | { allow: string; hint: string; routes: RouteSpec[] };

/** The route for a method and path; for a known path with another method, what is allowed there. */
export function findRoute(method: string, path: string): RouteMatch | null {
  const wanted = method === "HEAD" ? "GET" : method;
  const onPath: RouteSpec[] = [];
  for (const route of ROUTES) {
    const params = matchPath(route.path, path);
    if (!params) continue;
    if (route.method === wanted) return { route, params };
    onPath.push(route);
  }
  return onPath.length > 0 ? { allow: allowOf(onPath), hint: hintFor(onPath), routes: onPath } : null;
}

/** Routes grouped by path, for registration and documentation. */
export function groupByPath(): Map<string, RouteSpec[]> {
  const out = new Map<string, RouteSpec[]>();
  for (const route of ROUTES) out.set(route.path, [...(out.get(route.path) ?? []), route]);
  return out;
}
