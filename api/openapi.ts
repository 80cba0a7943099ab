// GET /api/v1/openapi.json: OpenAPI 3.1 of the whole interface, from the route table and the contract's schemas.

import { API_VERSION, LIMITS } from "../schemas/contract.js";
import { CONTRACT_SCHEMAS } from "../schemas/validate.js";
import { ERROR_KINDS, type ErrorKind, statusOf } from "./errors.js";
import { type RouteSpec, groupByPath } from "./routes.js";

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

const STATUS_OF_KIND: Record<ErrorKind, string> = Object.fromEntries(ERROR_KINDS.map((k) => [k, String(statusOf(k))])) as Record<ErrorKind, string>;

const etagHeaders = {
  ETag: { description: "Validator of this representation; send it back as If-None-Match.", schema: { type: "string" } },
  "Cache-Control": { description: "How long the answer may be kept.", schema: { type: "string" } },
};

const queryHeaders = {
  "Content-Digest": { description: "sha-256=:<base64>: of the message content as sent, after any content coding (RFC 9530).", schema: { type: "string" } },
  "Service-Dataset-Version": { description: "The immutable version used.", schema: refSchema("common/$defs/version-id") },
  "Service-Request-SHA256": { description: "SHA-256 of the validated, normalized request.", schema: refSchema("common/$defs/sha256") },
  Link: { description: '`</api/v1/datasets/{id}>; rel="describedby"`: source references, license, attribution.', schema: { type: "string" } },
};

function schemaRef(id: string) {
  return refSchema(schemaIdToComponent(id));
}

function describeOperation(route: RouteSpec): Json {
  const statuses = new Set<string>(route.errors.map((k) => STATUS_OF_KIND[k]));
  statuses.add("503");
  if (route.etag) statuses.add("304");
  const parameters = [
    ...(route.path.includes(":id") ? [{ name: "id", in: "path", required: true, description: "Dataset version id.", schema: refSchema("common/$defs/version-id") }] : []),
    ...(route.query ?? []).map((p) => ({ name: p.name, in: "query", required: p.required ?? false, description: p.description, schema: p.schema })),
  ];
  const answer =
    route.answers.length === 0 ? { type: "object" } : route.answers.length === 1 ? schemaRef(route.answers[0]) : { oneOf: route.answers.map(schemaRef) };
  const ok = route.answers.length === 0 && route.method === "POST"
    ? {}
    : {
        "200": {
          description: route.summary,
          headers: route.method === "POST" ? queryHeaders : etagHeaders,
          content: {
            ...describeJson(answer),
            ...(route.csv ? { "text/csv": { schema: { type: "string", description: "date,longitude,latitude,variable,value,unit,tile,row,col" } } } : {}),
          },
        },
      };
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(route.body
      ? {
          requestBody: {
            required: true,
            description: `JSON body of at most ${LIMITS.maxRequestBytes} bytes; Content-Type application/json.`,
            content: describeJson(schemaRef(route.body)),
          },
        }
      : {}),
    responses: { ...ok, ...describeErrors([...statuses].sort()) },
  };
}

function describePaths(): Json {
  const paths: Json = {};
  for (const [path, routes] of groupByPath()) {
    const item: Json = {};
    for (const route of routes) item[route.method.toLowerCase()] = describeOperation(route);
    paths[path.replace(/:([a-z]+)/g, "{$1}")] = item;
  }
  return paths;
}

/** The OpenAPI 3.1 document; built once at start from the same schemas the server validates with. */
export function buildOpenApi(): Json {
  const componentSchemas: Json = {};
  for (const schema of CONTRACT_SCHEMAS) {
    const id = (schema as { $id: string }).$id;
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
