// GET /api/v1/openapi.json: OpenAPI 3.1 of every answer the server gives, from a route table and the contract's
// schemas: each route's one operation (its 200, 304 and errors, with recorded examples) under its tag, in the order a
// user works; what every path answers besides (HEAD, the CORS preflight, 405) stated once, in the description and as
// shared components. What a family adds (its media types, its tag) its routes say.

import { CONTRACT_SCHEMAS } from "../schemas/validate.js";
import { API_VERSION, LIMITS } from "./contract.js";
import { preflightHeaders } from "./cors.js";
import { type ErrorKind, INTERNAL_ERROR_BODY, statusOf } from "./errors.js";
import { EXAMPLES, addExamples } from "./examples.js";
import { type ParameterSchema, VERSION_ID_TEXT, describeParameterSchema } from "./parameters.js";
import { type RouteSpec, type RouteTable, allowOf, groupByPath } from "./routes.js";
import { TAGS } from "./tags.js";

type Json = Record<string, unknown>;

const SCHEMA_FILE = /^([a-z0-9-]+)\.schema\.json$/;

function schemaIdToComponent(schemaId: string): string {
  const m = SCHEMA_FILE.exec(schemaId);
  if (!m) throw new Error(`schema id ${schemaId} is not <name>.schema.json`);
  return m[1];
}

/**
 * A schema's `$ref`s rewritten to components: `x.schema.json` -> `x`, and `x.schema.json#/$defs/y` or a local
 * `#/$defs/y` -> `x.y`, the component its `$defs` entry becomes (tools resolve component names, not pointers
 * into a schema's `$defs`, and a `$defs`-only file such as common.schema.json is then no component of its own).
 */
function rewriteRefs(node: unknown, own: string): unknown {
  if (Array.isArray(node)) return node.map((child) => rewriteRefs(child, own));
  if (node === null || typeof node !== "object") return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === "$id" || key === "$schema") continue;
    if (key === "$ref" && typeof value === "string") {
      const [file, pointer = ""] = value.split("#");
      const target = file === "" ? own : schemaIdToComponent(file);
      const def = /^\/\$defs\/([a-z0-9-]+)$/.exec(pointer);
      if (pointer !== "" && !def) throw new Error(`${own}: $ref ${value} points inside a schema; only whole schemas and $defs entries are published`);
      out.$ref = `#/components/schemas/${target}${def ? `.${def[1]}` : ""}`;
    } else {
      out[key] = rewriteRefs(value, own);
    }
  }
  return out;
}

/** The contract's schemas (never the dist format's) as components: each file, and each of its `$defs` entries. */
function describeSchemas(): Json {
  const out: Json = {};
  for (const schema of CONTRACT_SCHEMAS) {
    const { $defs, ...rest } = schema as Json & { $defs?: Json };
    const name = schemaIdToComponent(rest.$id as string);
    for (const [def, sub] of Object.entries($defs ?? {})) out[`${name}.${def}`] = rewriteRefs(sub, name);
    const content = Object.keys(rest).filter((k) => !["$id", "$schema", "title", "description"].includes(k));
    if (content.length > 0) out[name] = rewriteRefs(rest, name);
  }
  return out;
}

const refSchema = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const refHeader = (name: string) => ({ $ref: `#/components/headers/${name}` });
const schemaRef = (id: string) => refSchema(schemaIdToComponent(id));

/** What each error kind means, as the error responses of the document say it (docs/contract.md §4). */
const KIND_MEANINGS: Record<ErrorKind, string> = {
  bad_request: "`bad_request`: the request is not HTTP/1.1 the server can read (answered before any route; the connection is closed)",
  invalid_parameters: "`invalid_parameters`: a query parameter or the path id breaks its rule (`issues` names it)",
  malformed_json: "`malformed_json`: the body is empty, not UTF-8, not JSON, or ended early",
  not_found: "`not_found`: the version, tile or cell is unknown, unpublished, or not public demo data",
  method_not_allowed: "`method_not_allowed`: the path does not answer this method (see `Allow`)",
  payload_too_large: `\`payload_too_large\`: the body is over ${LIMITS.maxRequestBytes} bytes`,
  request_too_large: `\`request_too_large\`: over ${LIMITS.maxCells} rows (cells x days)`,
  response_too_large: `\`response_too_large\`: the answer would be over ${LIMITS.maxResponseBytes} bytes (narrow the box or the period)`,
  unsupported_media_type: "`unsupported_media_type`: send the header `Content-Type: application/json`",
  range_not_satisfiable: "`range_not_satisfiable`: the Range starts past the end of the answer (`Content-Range: bytes */<size>` gives its size)",
  invalid_request: "`invalid_request`: the body breaks the data request contract (`issues` point at the fields)",
  coverage_unavailable: "`coverage_unavailable`: no compatible published version covers every selected cell on every date",
  no_cell_centers: "`no_cell_centers`: the box overlaps the grid but holds none of its cell centres",
  unsupported_grid: "`unsupported_grid`: the candidate grid is not a north-up regular EPSG:4326 grid",
  missing_values: "`missing_values`: an APSIM weather file cannot hold a missing value, and the place misses some (or is ocean)",
  internal_error: "`internal_error`: the server failed to answer; the failure is logged and nothing about it is said",
  service_unavailable: "`service_unavailable`: the server is busy (with `Retry-After`), or the catalog or this version's files cannot be read or verified; retry with exponential backoff",
  acquisition_not_ready: "`acquisition_not_ready`: acquisition is not enabled; POST the data request to /api/v1/data/query",
};

const HEADERS: Json = {
  "Content-Digest": {
    description: "`sha-256=:<base64>:`, the SHA-256 of the message content exactly as sent, after any content coding (RFC 9530).",
    required: true,
    schema: { type: "string", pattern: "^sha-256=:[A-Za-z0-9+/]{43}=:$" },
  },
  "Access-Control-Allow-Origin": { description: "Every answer may be read by any origin.", required: true, schema: { type: "string", const: "*" } },
  "Cache-Control": { description: "`public, max-age=31536000, immutable` about an immutable version; `public, max-age=60` for the catalog, capabilities and this document; `no-store` otherwise.", required: true, schema: { type: "string" } },
  ETag: { description: "Strong validator of this representation; send it back as If-None-Match for a 304.", required: true, schema: { type: "string", pattern: '^"[0-9a-f]{32}(-br|-gzip)?"$' } },
  "Service-Dataset-Version": { description: "The immutable version that answered.", required: true, schema: refSchema("common.version-id") },
  "Service-Request-SHA256": { description: "SHA-256 of the canonical JSON of the validated request, defaults applied.", required: true, schema: refSchema("common.sha256") },
  "Retry-After": {
    description: "On a 503 `service_unavailable` from a busy server: the seconds to wait before asking again (then back off exponentially).",
    required: false,
    schema: { type: "string", pattern: "^[0-9]+$" },
  },
  "Accept-Ranges": { description: "`bytes`: a single byte range of this answer may be asked for (Range).", required: true, schema: { type: "string", const: "bytes" } },
  "Content-Range": { description: "`bytes <first>-<last>/<size>` of a 206; `bytes */<size>` of a 416.", required: true, schema: { type: "string", pattern: "^bytes ([0-9]+-[0-9]+|\\*)/[0-9]+$" } },
  Location: { description: "Where the same key of the newest version is, relative to this path.", required: true, schema: { type: "string" } },
  Link: { description: '`</api/v1/datasets/{id}>; rel="describedby"`: the dataset record, with source references, license and attribution.', required: true, schema: { type: "string", pattern: `^</api/v1/datasets/${VERSION_ID_TEXT}>; rel="describedby"$` } },
};

type HeaderName = keyof typeof HEADERS;

function headersOf(names: HeaderName[], extra: Json = {}): Json {
  return { ...Object.fromEntries(names.map((n) => [n, refHeader(String(n))])), ...extra };
}

/** The error body (docs/contract.md §4.2) with the `error` values this answer carries (a 500's is no kind: it names no cause). */
const errorSchema = (kinds: string[], plan = false, planItem?: Json, planRest?: Json) => ({
  allOf: [
    refSchema("error"),
    {
      type: "object",
      properties: {
        error: { type: "string", enum: kinds },
        ...(plan
          ? {
              plan: {
                description: planItem
                  ? "With `request_too_large`: calls that each fit, whose answers concatenated in order hold exactly the values asked for (CSV: keep the first header line only)."
                  : "With `request_too_large` and `response_too_large`: complete data requests (same fields and format, pinned to the version that would answer), each within every limit, whose answers concatenated in order hold exactly the rows asked for, in order (CSV: keep the first header line only). Split by date first, then by bands of whole cell rows, north to south.",
                type: "array",
                minItems: 1,
                items: planItem ?? schemaRef("data-request.schema.json"),
              },
              ...(planItem
                ? planRest
                  ? { planRest }
                  : {}
                : {
                    planRest: {
                      description:
                        "Present when `plan` would not fit this answer's 1,000,000 bytes: `plan` then holds the parts of the first dates (whole dates), and `planRest` is the original request, pinned, with its period starting at the first date `plan` does not cover. Asking it answers 413 with the next parts (and perhaps the next `planRest`): following `plan`, then `planRest` until it is absent, gives exactly the rows asked for, in order.",
                      ...schemaRef("data-request.schema.json"),
                    },
                  }),
            }
          : {}),
      },
    },
  ],
});

/** The JSON schema of a route's 200; a GET route without a contract schema is this document's own route. */
function okSchema(route: RouteSpec): Json {
  if (route.answers.length === 1) return schemaRef(route.answers[0]);
  if (route.answers.length > 1) return { oneOf: route.answers.map(schemaRef) };
  return {
    type: "object",
    description: "An OpenAPI 3.1 document.",
    required: ["openapi", "info", "paths"],
    properties: { openapi: { type: "string", const: "3.1.0" }, info: { type: "object" }, paths: { type: "object" } },
  };
}

/** The headers of every answer with a body (a HEAD's carry Repr-Digest in place of Content-Digest: the description says so once). */
const BODY_HEADERS: HeaderName[] = ["Content-Digest", "Access-Control-Allow-Origin", "Cache-Control"];

/** The answers of a route's operation: 200, 304 with an ETag, its errors by status, 500 and 503. */
function describeResponses(route: RouteSpec): Json {
  const responses: Json = {};
  if (route.document) responses["200"] = route.document.ok();
  else if (route.answers.length > 0 || route.content || (route.method === "GET" && !route.redirects)) {
    const json = route.answers.length > 0 || !route.content ? { "application/json": { schema: okSchema(route) } } : {};
    const content: Json = { ...json, ...route.content };
    const extra = [...(route.etag ? ["ETag"] : []), ...(route.ranges ? ["Accept-Ranges"] : [])];
    const headers: HeaderName[] = [...BODY_HEADERS, ...extra, ...(route.provenance ? ["Service-Dataset-Version", "Service-Request-SHA256", "Link"] : [])];
    responses["200"] = { description: route.summary, headers: headersOf(headers), content };
  }
  Object.assign(responses, describeRangesAndRedirects(route));
  if (route.etag) {
    responses["304"] = {
      description: "Not modified: If-None-Match matches this representation's ETag (no body).",
      headers: headersOf(["ETag", "Cache-Control", "Access-Control-Allow-Origin"]),
    };
  }

  const errorContent = (schema: Json): Json => (route.errorForm ? { [route.errorForm.type.split(";")[0]]: { schema: { type: "string", description: route.errorForm.description } } } : { "application/json": { schema } });
  const byStatus = new Map<number, ErrorKind[]>();
  for (const kind of [...route.errors, "service_unavailable" as const]) {
    const status = statusOf(kind);
    if (!byStatus.get(status)?.includes(kind)) byStatus.set(status, [...(byStatus.get(status) ?? []), kind]);
  }
  for (const [status, kinds] of [...byStatus].sort(([a], [b]) => a - b)) {
    const plan = status === 413 && kinds.includes("request_too_large");
    const description = kinds.map((k) => KIND_MEANINGS[k]).join("; ") + (plan ? "; `plan` splits a too large request into requests that fit." : ".");
    const headers = headersOf(status === 503 ? [...BODY_HEADERS, "Retry-After"] : BODY_HEADERS); // Retry-After: a busy server
    responses[String(status)] = { description, headers, content: errorContent(errorSchema(kinds, plan, route.document?.planItem, route.document?.planRest)) };
  }
  const internal = errorContent(errorSchema([INTERNAL_ERROR_BODY.error])) as Record<string, Json>;
  // the one body every 500 has (docs/contract.md §4.2): its example, kept once in components
  if (internal["application/json"]) internal["application/json"].examples = { internal_error: { $ref: "#/components/examples/internal_error" } };
  responses["500"] = {
    description: `\`${INTERNAL_ERROR_BODY.error}\`: an unexpected failure, logged by the server; the body says nothing of its cause.`,
    headers: headersOf(BODY_HEADERS),
    content: internal,
  };
  return Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));
}

/** A route's 206 and 416 (single byte ranges) and its 302 (a redirect to the newest version's key). */
function describeRangesAndRedirects(route: RouteSpec): Json {
  const out: Json = {};
  if (route.ranges && route.content) {
    const partial = Object.fromEntries(Object.keys(route.content).map((type) => [type, { schema: { type: "string", description: "The bytes of the range." } }]));
    out["206"] = { description: "Partial content: the one byte range asked for (Range: bytes=first-last, first- or -suffix).", headers: headersOf([...BODY_HEADERS, "ETag", "Content-Range"]), content: partial };
    out["416"] = {
      description: `${KIND_MEANINGS.range_not_satisfiable}.`,
      headers: headersOf([...BODY_HEADERS, "Content-Range"]),
      content: { "application/json": { schema: errorSchema(["range_not_satisfiable"]) } },
    };
  }
  if (route.redirects) out["302"] = { description: "Found: the same key of the dataset's newest published version (no body).", headers: headersOf([...BODY_HEADERS, "Location"]) };
  return out;
}

/**
 * A route's query parameters as OpenAPI has them, from their one schema: a list is `form` without `explode`
 * (`lat=-27.5,-28`), as the route reads it.
 */
function describeParameters(schema: ParameterSchema): Json[] {
  return Object.entries(schema.properties).map(([name, property]) => ({
    name,
    in: "query",
    required: schema.required?.includes(name) ?? false,
    description: property.description,
    schema: rewriteRefs(describeParameterSchema(property), name),
    ...(property.type === "array" ? { style: "form", explode: false } : {}),
  }));
}

function describeOperation(route: RouteSpec): Json {
  const operation: Json = {
    operationId: route.operationId,
    tags: [route.tag],
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    ...(route.parameters ? { parameters: describeParameters(route.parameters) } : {}),
    ...(route.body
      ? {
          requestBody: {
            required: true,
            description: `A JSON body of at most ${LIMITS.maxRequestBytes} bytes, sent with \`Content-Type: application/json\` (parameters such as charset allowed).`,
            content: { "application/json": { schema: schemaRef(route.body) } },
          },
        }
      : {}),
    responses: describeResponses(route),
  };
  return addExamples(operation, route.operationId);
}

function describePath(path: string, routes: RouteSpec[]): Json {
  const parameters = [
    ...(path.includes(":id") ? [{ name: "id", in: "path", required: true, description: "Dataset version id.", schema: refSchema("common.version-id") }] : []),
    ...(routes[0].pathParams ?? []).map((p) => ({ name: p.name, in: "path", required: true, description: p.description, schema: p.schema })),
  ];
  const item: Json = parameters.length > 0 ? { parameters } : {};
  for (const route of routes) item[route.method.toLowerCase()] = describeOperation(route);
  return item;
}

/** What a table's paths allow (`GET, HEAD, OPTIONS`, `POST, OPTIONS`), and the request headers their preflights allow, each once. */
function describeAllowed(table: RouteTable): { allows: string[]; allowHeaders: string[] } {
  const allows = new Set<string>();
  const allowHeaders = new Set<string>();
  for (const routes of groupByPath(table).values()) {
    const allow = allowOf(routes);
    allows.add(allow);
    allowHeaders.add(preflightHeaders(allow, routes.map((r) => r.cors))["Access-Control-Allow-Headers"]);
  }
  return { allows: [...allows], allowHeaders: [...allowHeaders] };
}

/**
 * The answers every path gives beside its operations, once (the description states when): the 405 of a method the
 * path does not answer, and the CORS preflight. A HEAD is its GET's answer without the body, so it needs none.
 */
function describeSharedAnswers(table: RouteTable): Json {
  const { allows, allowHeaders } = describeAllowed(table);
  const allow = { type: "string", enum: allows };
  return {
    MethodNotAllowed: {
      description: `Method not allowed. ${KIND_MEANINGS.method_not_allowed}.`,
      headers: { Allow: { description: "The methods of the path: `GET, HEAD, OPTIONS` where it answers GET, `POST, OPTIONS` where it answers POST.", required: true, schema: allow }, ...headersOf(BODY_HEADERS) },
      content: { "application/json": { schema: errorSchema(["method_not_allowed"]), example: EXAMPLES.methodNotAllowed.answer } },
    },
    Preflight: {
      description: "The CORS preflight (OPTIONS) of any path: what a cross-origin request may send there, cached for a day (no content).",
      headers: {
        Allow: { description: "The methods of the path.", required: true, schema: allow },
        "Access-Control-Allow-Methods": { description: "The methods of the path, as `Allow`.", required: true, schema: allow },
        "Access-Control-Allow-Headers": { description: "The request headers the path's routes read (api/cors.ts).", required: true, schema: { type: "string", enum: allowHeaders } },
        "Access-Control-Max-Age": { description: "Seconds a browser may keep this preflight.", required: true, schema: { type: "string", const: "86400" } },
        ...headersOf(["Access-Control-Allow-Origin", "Cache-Control"]),
      },
    },
  };
}

/** The description's account of what every path answers besides its operations (docs/contract.md §4.8). */
function describeEveryPath(table: RouteTable): string {
  const { allowHeaders } = describeAllowed(table);
  const refused = EXAMPLES.methodNotAllowed;
  return [
    "## Every path",
    "Each path below lists only what it does. Three answers hold on every path and are stated here once:",
    "- **HEAD**: every path that answers GET answers HEAD as it would the GET (status and headers, `Content-Length` and `ETag` included) without the body, with `Repr-Digest` (the digest of the content a GET sends) in place of `Content-Digest`.",
    `- **CORS preflight**: \`OPTIONS\` on any path is 204 with \`Allow\` and \`Access-Control-Allow-Methods\` naming its methods, \`Access-Control-Allow-Headers\` the request headers its routes read, as each route's entry says (one of ${allowHeaders.map((h) => `\`${h}\``).join("; ")}), and \`Access-Control-Max-Age: 86400\`. Every answer carries \`Access-Control-Allow-Origin: *\`, so any origin may read it.`,
    "- **405**: any other method (PUT, POST, DELETE, PATCH or TRACE on a GET path; GET, HEAD, PUT, DELETE, PATCH or TRACE on a POST path) is 405 `method_not_allowed` with `Allow`: `GET, HEAD, OPTIONS` on a path that answers GET, `POST, OPTIONS` on one that answers POST, and a message saying what to send. For example:",
    ["```", `${refused.method} ${refused.path}`, "", `HTTP/1.1 ${refused.status} Method Not Allowed`, `Allow: ${refused.headers?.allow}`, "", JSON.stringify(refused.answer, null, 2), "```"].join("\n"),
    "Tools find these answers as `components.responses.MethodNotAllowed` and `components.responses.Preflight`.",
  ].join("\n\n");
}

/** The OpenAPI 3.1 document of a route table, from the same schemas the service validates with; built once a service. */
export function buildOpenApi(table: RouteTable): Json {
  const paths: Json = {};
  const tagOrder = (route: RouteSpec) => TAGS.findIndex((t) => t.name === route.tag);
  // the paths in the order of their tags (a user's), and of the table within a tag
  const groups = [...groupByPath(table)].map(([path, routes], i) => ({ path, routes, order: tagOrder(routes[0]) * table.length + i }));
  for (const { path, routes } of groups.sort((a, b) => a.order - b.order)) paths[path.replace(/:([a-z]+)/g, "{$1}")] = describePath(path, routes);
  return {
    openapi: "3.1.0",
    info: {
      title: "Climate Data Service",
      version: API_VERSION,
      description: [
        "Read-only climate data service: versioned, immutable datasets; bounded queries answered inline with a provenance manifest. Acquisition is not enabled.",
        `The operations are grouped in the order a user works: ${TAGS.map((t) => t.name).join(", ")}. Each shows a request (as curl, to the demo's address \`http://${EXAMPLES.host}\`, which \`make demo\` serves) and the answers it received, recorded from the demo dist; a long body is cut, and the example says where.`,
        describeEveryPath(table),
        "## License",
        "This license covers this interface description only. The data carry their own: each dataset record and each query manifest states its `license` and `attribution` (SILO data CC-BY-4.0; the generated demo raster CC0-1.0; NOAA observations a U.S. Government work).",
      ].join("\n\n"),
      license: { name: "CC0-1.0", identifier: "CC0-1.0" },
    },
    // the server renders this document as HTML beside it (server/docs.ts); a static mirror has no such page
    externalDocs: { description: "This document as an HTML page (Redoc), served by the server beside it; a static mirror serves the JSON alone.", url: "/api/v1/docs" },
    servers: [{ url: "/", description: "This server." }],
    // Public demo endpoints need no credentials: no security scheme applies (docs/contract.md §4.5).
    security: [],
    tags: TAGS.map(({ name, description }) => ({ name, description })),
    paths,
    components: {
      schemas: describeSchemas(),
      responses: describeSharedAnswers(table),
      headers: HEADERS,
      examples: { internal_error: { summary: "Any route, on an unexpected failure", value: INTERNAL_ERROR_BODY } },
    },
  };
}
