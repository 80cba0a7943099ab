// The GET routes' query parameters (docs/contract.md §1.1, §3.3, §4, §8.2): each route's parameters are one JSON
// Schema, registered with the contract's ajv (schemas/validate.ts), from which come its check, the typed value its
// handler receives, its 400 issues (in the words the schema gives) and its OpenAPI parameters; and the path ids.

import { MESSAGES_KEYWORD, VERSION_ID_PATTERN, registerSchema, toIssues, validatorFor } from "../schemas/validate.js";
import type { Context } from "./context.js";
import { HttpError, type Issue } from "./errors.js";

/** A version id (common.schema.json's `version-id`, its one declaration). */
export const VERSION_ID = new RegExp(VERSION_ID_PATTERN);
/** The version id's pattern without its anchors, for patterns that hold one (cursors, headers, lists). */
export const VERSION_ID_TEXT = VERSION_ID_PATTERN.replace(/^\^/, "").replace(/\$$/, "");

/** One parameter: a string, an integer, a decimal number, or a list of them given comma-separated. */
export interface ParameterProperty {
  readonly description: string;
  readonly type?: "string" | "integer" | "number" | "array";
  readonly items?: ParameterProperty | { readonly [key: string]: unknown };
  readonly [keyword: string]: unknown;
}

/** The JSON Schema of a route's query parameters: an object of them (declare it `as const`, so its values are typed). */
export interface ParameterSchema {
  readonly $schema: "https://json-schema.org/draft/2020-12/schema";
  readonly $id: string;
  readonly title: string;
  readonly description: string;
  readonly type: "object";
  readonly properties: { readonly [name: string]: ParameterProperty };
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean;
  readonly [keyword: string]: unknown;
}

/** The value a parameter's schema allows, as its handler receives it. */
type ValueOf<P> = P extends { enum: readonly (infer E)[] }
  ? E
  : P extends { type: "array"; items: infer I }
    ? ValueOf<I>[]
    : P extends { type: "integer" | "number" }
      ? number
      : string;
type Properties<S extends ParameterSchema> = S["properties"];
/** The parameters always present once checked: required, or with a default. */
type Present<S extends ParameterSchema> =
  | (S extends { required: readonly (infer R)[] } ? R : never)
  | { [K in keyof Properties<S>]: Properties<S>[K] extends { default: unknown } ? K : never }[keyof Properties<S>];

/** What a route's handler receives: each parameter typed by its schema, optional unless required or defaulted. */
export type ParamsOf<S extends ParameterSchema> = { -readonly [K in keyof Properties<S> & Present<S>]: ValueOf<Properties<S>[K]> } & {
  -readonly [K in Exclude<keyof Properties<S>, Present<S>>]?: ValueOf<Properties<S>[K]>;
};

/** A decimal number as people write one: no hex, no exponent, no Infinity, no blanks. */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)$/;
const INTEGER = /^-?[0-9]+$/;

/** One value's text as its schema's type reads it; text that is no such number stays text (ajv names the fault). */
function readScalar(text: string, schema: { readonly [key: string]: unknown } | undefined): unknown {
  if (schema?.type === "integer" && INTEGER.test(text)) return Number(text);
  if (schema?.type === "number" && DECIMAL.test(text) && Number.isFinite(Number(text))) return Number(text);
  return text;
}

function readValue(text: string, property: ParameterProperty | undefined): unknown {
  if (property?.type !== "array") return readScalar(text, property);
  return text.split(",").map((item) => readScalar(item.trim(), property.items as { readonly [key: string]: unknown }));
}

/** "Query parameter lat[1] is outside ...": the first issue, and how many more there are. */
export function rejectParameters(issues: Issue[]): HttpError {
  const [first] = issues;
  const where = `${first.path[0]}${first.path.length > 1 ? `[${first.path.slice(1).join("][")}]` : ""}`;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more issue${issues.length > 2 ? "s" : ""})` : "";
  return new HttpError({ kind: "invalid_parameters", message: `Query parameter ${where} ${first.message}${more}.`, issues });
}

export function rejectParameter(name: string, code: string, message: string): HttpError {
  return rejectParameters([{ code, path: [name], message }]);
}

/**
 * The checked parameters of a query by its route's schema, or a 400 naming every parameter at fault: each given once
 * (a repeated one is ambiguous), its text read as its type says (lists at commas), then ajv, defaults filled in.
 * Issues come in the schema's order of parameters, any it does not know first.
 */
export function readParameters<S extends ParameterSchema>(query: URLSearchParams, schema: S): ParamsOf<S> {
  const issues: Issue[] = [];
  // no prototype: a parameter named __proto__ is a parameter like any other (an unknown one)
  const data: Record<string, unknown> = Object.create(null);
  for (const name of new Set(query.keys())) {
    const values = query.getAll(name);
    const property = schema.properties[name];
    if (values.length > 1) {
      const list = property?.type === "array" ? ", its values separated by commas" : "";
      issues.push({ code: "repeated", path: [name], message: `is given ${values.length} times; give it once${list}` });
    }
    data[name] = readValue(values[0], property);
  }
  const validate = validatorFor(schema.$id);
  if (!validate(data)) {
    const repeated = new Set(issues.map((i) => i.path[0]));
    issues.push(...toIssues(validate.errors, data, schema.$id).filter((i) => !repeated.has(i.path[0])));
  }
  if (issues.length > 0) {
    const order = Object.keys(schema.properties);
    const rank = (issue: Issue) => order.indexOf(String(issue.path[0])); // -1: a parameter the route does not know
    throw rejectParameters(issues.map((issue, i) => ({ issue, i })).sort((a, b) => rank(a.issue) - rank(b.issue) || a.i - b.i).map(({ issue }) => issue));
  }
  return data as ParamsOf<S>;
}

/**
 * A route's query parameters as its spec holds them: the schema (registered here with the contract's ajv; the OpenAPI
 * document's parameters come from it) and the check that reads a request's query with it, then `rules`, the checks
 * across parameters a schema cannot state.
 */
export function queryParameters<S extends ParameterSchema, T = ParamsOf<S>>(
  schema: S,
  rules?: (params: ParamsOf<S>, ctx: Context) => T,
): { parameters: ParameterSchema; check: (ctx: Context) => T } {
  registerSchema(schema);
  return {
    parameters: schema,
    check: (ctx) => {
      const params = readParameters(ctx.query, schema);
      return rules ? rules(params, ctx) : (params as T);
    },
  };
}

/** A parameter's schema as the OpenAPI document shows it: without its description (the parameter's) and its messages. */
export function describeParameterSchema(property: ParameterProperty): Record<string, unknown> {
  const strip = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(strip);
    if (node === null || typeof node !== "object") return node;
    return Object.fromEntries(Object.entries(node).filter(([key]) => key !== MESSAGES_KEYWORD).map(([key, value]) => [key, strip(value)]));
  };
  const { description: _description, ...schema } = property;
  return strip(schema) as Record<string, unknown>;
}

export function checkVersionId(id: string): void {
  if (!VERSION_ID.test(id)) {
    const message = `must match ${VERSION_ID_PATTERN}: use an id GET /api/v1/datasets lists`;
    throw new HttpError({ kind: "invalid_parameters", message: `The dataset id ${message}.`, issues: [{ code: "pattern", path: ["id"], message }] });
  }
}

export function rejectCursor(): HttpError {
  return rejectParameter("after", "invalid_cursor", "is not a cursor this service issued for this list: pass the nextCursor of the preceding page as it came, or omit after for the first page");
}
