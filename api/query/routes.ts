// The query family's entries of the route table (docs/contract.md §1.1, §3): POST validate, resolve and query, and
// the reserved acquisition route; what the OpenAPI document says of them beyond the contract's schemas (their example
// bodies are recorded ones, api/examples.ts).

import { CREDENTIALS_CORS, JSON_BODY_CORS } from "../cors.js";
import type { ErrorKind } from "../errors.js";
import { type RouteSpec, defineRoute } from "../routes.js";
import { LIMITS } from "../contract.js";
import { answerAcquisition, answerQuery, answerResolve, answerValidate, checkDataRequest } from "./data.js";
import type { SeriesCallHint } from "./request.js";
import { CSV_HEADER } from "./serialize.js";

const POST_ERRORS: ErrorKind[] = ["malformed_json", "payload_too_large", "unsupported_media_type", "invalid_request"];
const DATA_REQUEST = "data-request.schema.json";

/** The query's CSV answer, beside its JSON (`"format": "csv"`). */
const CSV_CONTENT = {
  "text/csv": {
    schema: {
      type: "string",
      description: `With \`"format": "csv"\`: the header row \`${CSV_HEADER}\`, then one row per cell and date in the JSON order; every non-null field double-quoted, a null value an empty unquoted field, every line ending with CRLF.`,
      pattern: `^${CSV_HEADER}\\r\\n`,
    },
  },
};

/** POST validate, resolve and query; their 422s point to the series call that answers a request (`seriesCall`). */
export function queryRoutes(seriesCall: SeriesCallHint): RouteSpec[] {
  const check = checkDataRequest(seriesCall);
  return [
    defineRoute({
      method: "POST",
      path: "/api/v1/data/validate",
      operationId: "validateDataRequest",
      tag: "Resolve and query",
      cors: JSON_BODY_CORS,
      readsBody: true,
      summary: "Check a data request",
      description: "The contract check only (shape, calendar dates, ordered bounds), its defaults applied; not a coverage guarantee, quote or purchase.",
      body: DATA_REQUEST,
      answers: ["validation.schema.json"],
      errors: POST_ERRORS,
      check,
      handle: answerValidate,
    }),
    defineRoute({
      method: "POST",
      path: "/api/v1/data/resolve",
      operationId: "resolveDataRequest",
      tag: "Resolve and query",
      cors: JSON_BODY_CORS,
      computed: true,
      readsBody: true,
      summary: "Find what answers a data request",
      description: "The complete coverage check against what is published: the version that would answer, its tiles and the row count, or the reason none can (`available: false` is a 200).",
      body: DATA_REQUEST,
      answers: ["resolution.schema.json"],
      errors: POST_ERRORS,
      check,
      handle: answerResolve,
    }),
    defineRoute({
      method: "POST",
      path: "/api/v1/data/query",
      operationId: "queryData",
      tag: "Resolve and query",
      cors: JSON_BODY_CORS,
      computed: true,
      readsBody: true,
      summary: "Query a data request's rows",
      body: DATA_REQUEST,
      description:
        'The complete bounded result inline: the native cells whose centres fall in the box, dates inclusive. The answer is JSON (a manifest and the rows) or, with `"format": "csv"`, CSV. A 413 `request_too_large` or `response_too_large` carries `plan`: smaller requests whose answers, concatenated in order, hold exactly these rows.',
      answers: ["query-result.schema.json"],
      content: CSV_CONTENT,
      provenance: true,
      errors: [...POST_ERRORS, "request_too_large", "response_too_large", "coverage_unavailable", "no_cell_centers", "unsupported_grid"],
      // a 413's body, its plan included, is bounded as every answer is (docs/contract.md §3.3); tests scale it down
      bounds: { planBytes: LIMITS.maxResponseBytes },
      check,
      handle: answerQuery,
    }),
  ];
}

/** The reserved acquisition route: never reads its body, always 503 (docs/contract.md §4.5). */
export const ACQUISITION_ROUTES: RouteSpec[] = [
  {
    method: "POST",
    path: "/api/v1/data/requests",
    operationId: "createAcquisitionRequest",
    tag: "Resolve and query",
    cors: CREDENTIALS_CORS,
    summary: "Acquisition (not enabled: 503)",
    description:
      "Always 503 `acquisition_not_ready`; never charges or queues work. Use POST /api/v1/data/query for published demo data. Planned, not active: requests will carry `Authorization: Bearer <ACCESS_TOKEN>`, and a purchase will answer 402 with `WWW-Authenticate: Payment` and be retried with `Authorization: Payment` (docs/contract.md §4.5). No security scheme applies while acquisition is not enabled.",
    body: "acquisition-request.schema.json",
    answers: [],
    errors: ["acquisition_not_ready"],
    handle: answerAcquisition,
  },
];
