// GET /api/v1/openapi.json: OpenAPI 3.1 of the whole interface, its schemas taken from schemas/*.schema.json.

import { API_VERSION, LIMITS } from "../schemas/contract.js";
import { schemas } from "../schemas/validate.js";

type Json = Record<string, unknown>;

const SCHEMA_FILE = /^([a-z0-9-]+)\.schema\.json$/;

function schemaIdToComponent(schemaId: string): string {
  const m = SCHEMA_FILE.exec(schemaId);
  if (!m) throw new Error(`schema id ${schemaId} is not <name>.schema.json`);
  return m[1];
}

/**
 * A schema's `$ref`s rewritten to document pointers: `x.schema.json#/a/b` -> `#/components/schemas/x/a/b`, and
 * a local `#/a` -> `#/components/schemas/<own>/a`, so the document resolves without the files' `$id`s.
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
      out.$ref = `#/components/schemas/${target}${pointer}`;
    } else {
      out[key] = rewriteRefs(value, own);
    }
  }
  return out;
}

const refSchema = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const describeJson = (schema: unknown) => ({ "application/json": { schema } });

const ERROR_MEANINGS: Record<string, string> = {
  "304": "Not modified: the If-None-Match validator matches (no body).",
  "400": "Invalid query parameters, or an empty, malformed or unreadable JSON body (`invalid_parameters`, `malformed_json`).",
  "402": "Payment challenge (planned; acquisition only, not returned while acquisition is not enabled).",
  "404": "Unknown, unpublished, or unavailable under public demo access (`not_found`).",
  "409": "Idempotency key reused with different input (planned; not returned while acquisition is not enabled).",
  "413": "Request or response exceeds its bound (`payload_too_large`, `request_too_large`, `response_too_large`).",
  "415": "Content-Type must be application/json (`unsupported_media_type`).",
  "422": "Invalid contract, incompatible coverage or unsupported query (`invalid_request`, `coverage_unavailable`, `no_cell_centers`, `unsupported_grid`).",
  "503": "Data service unavailable; retry with exponential backoff (`service_unavailable`; `acquisition_not_ready` on the acquisition route).",
};

function describeErrors(codes: string[]): Json {
  const out: Json = {};
  for (const code of codes) out[code] = { $ref: `#/components/responses/E${code}` };
  return out;
}

const idParameter = {
  name: "id",
  in: "path",
  required: true,
  description: "Dataset version id.",
  schema: refSchema("common/$defs/version-id"),
};
const limitParameter = {
  name: "limit",
  in: "query",
  description: `Items per page; the response is also capped at ${LIMITS.maxResponseBytes} bytes.`,
  schema: { type: "integer", minimum: 1, maximum: LIMITS.maxPageLimit, default: LIMITS.defaultPageLimit },
};
const afterParameter = {
  name: "after",
  in: "query",
  description: "Opaque `nextCursor` of the preceding page; omit for the first page.",
  schema: { type: "string", maxLength: LIMITS.maxCursorLength },
};
const etagHeaders = {
  ETag: { description: "Validator of this representation; send it back as If-None-Match.", schema: { type: "string" } },
  "Cache-Control": { description: "`public, max-age=31536000, immutable`: a dataset version never changes.", schema: { type: "string" } },
};

function describeRequestBody(schemaName: string) {
  return {
    required: true,
    description: `JSON body of at most ${LIMITS.maxRequestBytes} bytes; Content-Type application/json.`,
    content: describeJson(refSchema(schemaName)),
  };
}

const POST_ERRORS = ["400", "413", "415", "422", "503"];
const PAGE_ERRORS = ["304", "400", "404", "413", "503"];

function describePaths(): Json {
  return {
    "/api/health": {
      get: {
        operationId: "getHealth",
        summary: "Process and configuration status (no database or source check).",
        responses: { "200": { description: "Health.", content: describeJson(refSchema("health")) } },
      },
    },
    "/api/v1/capabilities": {
      get: {
        operationId: "getCapabilities",
        summary: "Implemented variables, sources, representations, limits and features.",
        responses: { "200": { description: "Capabilities.", content: describeJson(refSchema("capabilities")) } },
      },
    },
    "/api/v1/openapi.json": {
      get: {
        operationId: "getOpenApi",
        summary: "This OpenAPI 3.1 description.",
        responses: { "200": { description: "OpenAPI document.", content: describeJson({ type: "object" }) } },
      },
    },
    "/api/v1/datasets": {
      get: {
        operationId: "listDatasets",
        summary: "Published catalog metadata (restricted datasets omitted; unknown query parameters ignored).",
        responses: {
          "200": { description: "Catalog.", content: describeJson(refSchema("catalog-response")) },
          ...describeErrors(["413", "503"]),
        },
      },
    },
    "/api/v1/datasets/{id}": {
      get: {
        operationId: "getDataset",
        summary: "One immutable dataset version: units, coverage, source hashes, license, attribution, spatial support.",
        parameters: [idParameter],
        responses: {
          "200": { description: "The dataset record.", headers: etagHeaders, content: describeJson(refSchema("dataset-response")) },
          ...describeErrors(["304", "400", "404", "413", "503"]),
        },
      },
    },
    "/api/v1/datasets/{id}/observations": {
      get: {
        operationId: "listObservations",
        summary: "Observations of a public demo version in stable id order; follow nextCursor until null.",
        parameters: [idParameter, limitParameter, afterParameter],
        responses: {
          "200": { description: "One page.", headers: etagHeaders, content: describeJson(refSchema("observations-page")) },
          ...describeErrors(PAGE_ERRORS),
        },
      },
    },
    "/api/v1/layers/{id}": {
      get: {
        operationId: "getLayers",
        summary: "Without `tile`: a page of tile metadata. With `tile`: that tile with its cells.",
        parameters: [
          idParameter,
          limitParameter,
          afterParameter,
          {
            name: "tile",
            in: "query",
            description: "A tile id from the layer index; omit to list tile metadata.",
            schema: { type: "string", maxLength: 128 },
          },
        ],
        responses: {
          "200": {
            description: "A page of tile metadata, or one tile.",
            headers: etagHeaders,
            content: describeJson({ oneOf: [refSchema("layers-page"), refSchema("tile-response")] }),
          },
          ...describeErrors(PAGE_ERRORS),
        },
      },
    },
    "/api/v1/layers/{id}/sample": {
      get: {
        operationId: "getSample",
        summary: "One raster cell by tile id and zero-based row and column within the tile.",
        parameters: [
          idParameter,
          { name: "tile", in: "query", required: true, description: "Tile id from the layer index.", schema: { type: "string", maxLength: 128 } },
          { name: "row", in: "query", required: true, description: "Zero-based row within the tile.", schema: { type: "integer", minimum: 0 } },
          { name: "col", in: "query", required: true, description: "Zero-based column within the tile.", schema: { type: "integer", minimum: 0 } },
        ],
        responses: {
          "200": { description: "Pixel sample.", headers: etagHeaders, content: describeJson(refSchema("pixel-sample")) },
          ...describeErrors(PAGE_ERRORS),
        },
      },
    },
    "/api/v1/data/validate": {
      post: {
        operationId: "validateDataRequest",
        summary: "Contract check only (shape, calendar dates, ordered bounds); not a coverage guarantee, quote or purchase.",
        requestBody: describeRequestBody("data-request"),
        responses: {
          "200": { description: "Valid, with defaults applied.", content: describeJson(refSchema("validation")) },
          ...describeErrors(POST_ERRORS),
        },
      },
    },
    "/api/v1/data/resolve": {
      post: {
        operationId: "resolveDataRequest",
        summary: "Complete published demo coverage check: the selected version and row count, or an unavailable reason.",
        requestBody: describeRequestBody("data-request"),
        responses: {
          "200": { description: "Resolution (available=false is a successful outcome).", content: describeJson(refSchema("resolution")) },
          ...describeErrors(POST_ERRORS),
        },
      },
    },
    "/api/v1/data/query": {
      post: {
        operationId: "queryData",
        summary: "The complete bounded result inline: native cells whose centres fall in the box, dates inclusive.",
        requestBody: describeRequestBody("data-request"),
        responses: {
          "200": {
            description: "Query result as JSON, or CSV (header row, quoted values, null as an empty field, CRLF line ends).",
            headers: {
              "Content-Digest": { description: "sha-256=:<base64>: of the exact response bytes.", schema: { type: "string" } },
              "Repr-Digest": { description: "sha-256=:<base64>: of the uncompressed body.", schema: { type: "string" } },
              "Service-Dataset-Version": { description: "The immutable version used.", schema: refSchema("common/$defs/version-id") },
              "Service-Request-SHA256": { description: "SHA-256 of the validated, normalized request.", schema: refSchema("common/$defs/sha256") },
              Link: { description: '`</api/v1/datasets/{id}>; rel="describedby"`: source references, license, attribution.', schema: { type: "string" } },
            },
            content: {
              ...describeJson(refSchema("query-result")),
              "text/csv": { schema: { type: "string", description: "date,longitude,latitude,variable,value,unit,tile,row,col" } },
            },
          },
          ...describeErrors(POST_ERRORS),
        },
      },
    },
    "/api/v1/data/requests": {
      post: {
        operationId: "createAcquisitionRequest",
        summary: "Acquisition (not enabled): always 503 acquisition_not_ready; never charges or queues work.",
        description: "Use POST /api/v1/data/query for published demo data. The Authorization headers are documented for the planned flow and are not active.",
        security: [{ bearer: [] }, {}],
        requestBody: { required: false, content: describeJson(refSchema("acquisition-request")) },
        responses: describeErrors(["402", "409", "503"]),
      },
    },
  };
}

/** The OpenAPI 3.1 document; built once at start from the same schemas the server validates with. */
export function buildOpenApi(): Json {
  const componentSchemas: Json = {};
  for (const [id, schema] of Object.entries(schemas)) {
    const name = schemaIdToComponent(id);
    componentSchemas[name] = rewriteRefs(schema, name);
  }
  const responses: Json = {};
  for (const [code, description] of Object.entries(ERROR_MEANINGS)) {
    responses[`E${code}`] = code === "304" ? { description } : { description, content: describeJson(refSchema("error")) };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Climate Data Service",
      version: API_VERSION,
      description:
        "Read-only climate data service: versioned, immutable datasets; bounded queries answered inline with a provenance manifest. Acquisition is not enabled.",
    },
    servers: [{ url: "/" }],
    paths: describePaths(),
    components: {
      schemas: componentSchemas,
      responses,
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "Documented for the acquisition route; not active." },
      },
    },
  };
}
