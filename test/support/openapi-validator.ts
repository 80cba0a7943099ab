// Checks one HTTP answer against the OpenAPI document the server serves: the status is documented for that path
// and method, the required headers are there and match, and the body has a documented media type and schema. A path
// lists its operations only; what every path answers besides is checked by the rules the document states once
// (docs/contract.md §4.8): HEAD as its GET without the body (Repr-Digest for Content-Digest), OPTIONS as the shared
// Preflight, any other method as the shared MethodNotAllowed, with `Allow` naming the path's methods.

import { brotliDecompressSync, gunzipSync } from "node:zlib";
import SwaggerParser from "@apidevtools/swagger-parser";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { ROUTES } from "../../api/interface.js";
import { buildOpenApi } from "../../api/openapi.js";
import type { RouteTable } from "../../api/routes.js";

type Json = Record<string, any>;

export interface Exchange {
  method: string;
  /** request path, with its query string */
  path: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** the bytes as received (before any content decoding) */
  bytes: Buffer;
}

export interface OpenApiValidator {
  /** Every way the exchange departs from the document (empty when it is documented). */
  check(exchange: Exchange): string[];
}

const building = new WeakMap<RouteTable, Promise<OpenApiValidator>>();

/** The validator of a route table (default the interface's), built once from the document GET /api/v1/openapi.json serves. */
export function openApiValidator(routes: RouteTable = ROUTES): Promise<OpenApiValidator> {
  let validator = building.get(routes);
  if (!validator) building.set(routes, (validator = buildValidator(routes)));
  return validator;
}

const essence = (type: string | undefined) => (type ?? "").split(";")[0].trim().toLowerCase();

function decode(bytes: Buffer, coding: string | undefined): Buffer {
  if (bytes.length === 0) return bytes; // HEAD: the coding names what a GET would send
  if (coding === "br") return brotliDecompressSync(bytes);
  if (coding === "gzip") return gunzipSync(bytes);
  return bytes;
}

async function buildValidator(routes: RouteTable): Promise<OpenApiValidator> {
  // swagger-parser dereferences in place: give it a copy
  const document = (await SwaggerParser.dereference(structuredClone(buildOpenApi(routes)) as any)) as Json;
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
  addFormats.default(ajv);
  const compiled = new Map<object, ValidateFunction>();
  const compile = (schema: object) => {
    let validate = compiled.get(schema);
    if (!validate) compiled.set(schema, (validate = ajv.compile(schema)));
    return validate;
  };
  const templates = Object.keys(document.paths).map((template) => ({
    template,
    pattern: new RegExp(`^${template.replace(/[.]/g, "\\.").replace(/\{[a-z]+\}/g, "[^/]+")}$`),
  }));
  const errorSchema = document.components.schemas.error as object;
  const shared = document.components.responses as Record<string, Json>;

  function checkBody(where: string, exchange: Exchange, content: Json | undefined, problems: string[]): void {
    const bytes = decode(exchange.bytes, exchange.headers["content-encoding"] as string | undefined);
    if (!content) {
      if (bytes.length > 0) problems.push(`${where}: documented without a body, got ${bytes.length} bytes`);
      return;
    }
    const type = essence(exchange.headers["content-type"] as string | undefined);
    const media = content[type];
    if (!media) {
      problems.push(`${where}: Content-Type ${exchange.headers["content-type"]} is not documented (${Object.keys(content).join(", ")})`);
      return;
    }
    let value: unknown = bytes.toString("utf8");
    // a 206 holds a range of the representation's bytes, JSON or not
    if (type === "application/json" && exchange.status !== 206) {
      try {
        value = JSON.parse(value as string);
      } catch {
        problems.push(`${where}: the body is not JSON`);
        return;
      }
    }
    const validate = compile(media.schema);
    if (!validate(value)) problems.push(`${where}: the ${type} body breaks the documented schema: ${ajv.errorsText(validate.errors)}`);
  }

  return {
    check(exchange) {
      const problems: string[] = [];
      const path = exchange.path.split("?")[0];
      const method = exchange.method.toLowerCase();
      const where = `${exchange.method} ${exchange.path} ${exchange.status}`;
      const found = templates.find((t) => t.pattern.test(path));
      if (!found) {
        // A path the document does not hold is no route: 404 not_found, the section 7 body (docs/contract.md §4).
        if (exchange.status !== 404) problems.push(`${where}: an undocumented path answers ${exchange.status}, not 404`);
        if (method !== "head") checkBody(where, exchange, { "application/json": { schema: errorSchema } }, problems);
        return problems;
      }
      const item = document.paths[found.template] as Json;
      const { response, named, problems: first } = findResponse(item, shared, method, exchange.status, where);
      if (!response) return first;
      problems.push(...first);
      const head = method === "head";
      for (const [documented, header] of Object.entries((response.headers ?? {}) as Json)) {
        // a HEAD sends no content: its Repr-Digest is the digest a GET's Content-Digest would be
        const name = head && documented === "Content-Digest" ? "Repr-Digest" : documented;
        const value = exchange.headers[name.toLowerCase()];
        if (value === undefined) {
          if (header.required) problems.push(`${where}: required header ${name} is missing`);
          continue;
        }
        const validate = compile(header.schema);
        if (!validate(String(value))) problems.push(`${where}: header ${name}: ${JSON.stringify(value)} ${ajv.errorsText(validate.errors)}`);
      }
      if (head) {
        if (exchange.bytes.length > 0) problems.push(`${where}: a HEAD answer has ${exchange.bytes.length} bytes of body`);
      } else checkBody(where, exchange, response.content, problems);
      if (named === "MethodNotAllowed" || named === "Preflight") problems.push(...checkAllow(item, exchange, where));
      return problems;
    },
  };
}

const OPERATION_METHODS = ["get", "post"];

/** What a path allows, by the rule the document states: GET with HEAD, or POST, then OPTIONS. */
function allowOf(item: Json): string {
  const methods = OPERATION_METHODS.filter((m) => item[m]).flatMap((m) => (m === "get" ? ["GET", "HEAD"] : [m.toUpperCase()]));
  return [...methods, "OPTIONS"].join(", ");
}

/** The `Allow` (and a preflight's `Access-Control-Allow-Methods`) of a 405 or a preflight: the path's own methods. */
function checkAllow(item: Json, exchange: Exchange, where: string): string[] {
  const allow = allowOf(item);
  const problems: string[] = [];
  for (const name of ["allow", ...(exchange.status === 204 ? ["access-control-allow-methods"] : [])]) {
    if (exchange.headers[name] !== allow) problems.push(`${where}: ${name} is ${exchange.headers[name]}, not the path's ${allow}`);
  }
  return problems;
}

/**
 * The documented response of a status for a method on a path: its operation's, its GET's for a HEAD, the shared
 * preflight for OPTIONS, the shared 405 for a method the path does not answer.
 */
function findResponse(item: Json, shared: Record<string, Json>, method: string, status: number, where: string): { response?: Json; named?: string; problems: string[] } {
  const operation = (item[method] ?? (method === "head" ? item.get : undefined)) as Json | undefined;
  if (operation) {
    const response = operation.responses[String(status)] as Json | undefined;
    if (response) return { response, problems: [] };
    return { problems: [`${where}: status ${status} is not documented for ${operation.operationId} (${Object.keys(operation.responses).join(", ")})`] };
  }
  const named = method === "options" ? "Preflight" : "MethodNotAllowed";
  const expected = method === "options" ? 204 : 405;
  if (status !== expected) return { problems: [`${where}: ${method.toUpperCase()} on this path is answered ${expected} (${named}), not ${status}`] };
  return { response: shared[named], named, problems: [] };
}
