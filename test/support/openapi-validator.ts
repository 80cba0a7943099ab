// Checks one HTTP answer against the OpenAPI document the server serves: the status is documented for that path
// and method, the required headers are there and match, and the body has a documented media type and schema.

import { brotliDecompressSync, gunzipSync } from "node:zlib";
import SwaggerParser from "@apidevtools/swagger-parser";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { ROUTES } from "../../api/interface.js";
import { buildOpenApi } from "../../api/openapi.js";

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

let building: Promise<OpenApiValidator> | null = null;

/** The validator of this process, built once from the document GET /api/v1/openapi.json serves. */
export function openApiValidator(): Promise<OpenApiValidator> {
  return (building ??= buildValidator());
}

const essence = (type: string | undefined) => (type ?? "").split(";")[0].trim().toLowerCase();

function decode(bytes: Buffer, coding: string | undefined): Buffer {
  if (bytes.length === 0) return bytes; // HEAD: the coding names what a GET would send
  if (coding === "br") return brotliDecompressSync(bytes);
  if (coding === "gzip") return gunzipSync(bytes);
  return bytes;
}

async function buildValidator(): Promise<OpenApiValidator> {
  // swagger-parser dereferences in place: give it a copy
  const document = (await SwaggerParser.dereference(structuredClone(buildOpenApi(ROUTES)) as any)) as Json;
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
      const operation = document.paths[found.template][method] as Json | undefined;
      if (!operation) return [`${where}: ${exchange.method} is not documented on ${found.template}`];
      const response = operation.responses[String(exchange.status)] as Json | undefined;
      if (!response) {
        return [`${where}: status ${exchange.status} is not documented for ${operation.operationId} (${Object.keys(operation.responses).join(", ")})`];
      }
      for (const [name, header] of Object.entries((response.headers ?? {}) as Json)) {
        const value = exchange.headers[name.toLowerCase()];
        if (value === undefined) {
          if (header.required) problems.push(`${where}: required header ${name} is missing`);
          continue;
        }
        const validate = compile(header.schema);
        if (!validate(String(value))) problems.push(`${where}: header ${name}: ${JSON.stringify(value)} ${ajv.errorsText(validate.errors)}`);
      }
      checkBody(where, exchange, response.content, problems);
      return problems;
    },
  };
}
