// The contract's JSON Schemas (and the dist format's), compiled on demand (or at build time), with ajv errors turned
// into contract issues. Platform-free: the schemas are imported, not read from disk, so a browser bundle carries them too.

import { Ajv2020 } from "ajv/dist/2020.js";
import type { ErrorObject, ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import acquisitionRequest from "./acquisition-request.schema.json" with { type: "json" };
import capabilities from "./capabilities.schema.json" with { type: "json" };
import catalogResponse from "./catalog-response.schema.json" with { type: "json" };
import common from "./common.schema.json" with { type: "json" };
import dataRequest from "./data-request.schema.json" with { type: "json" };
import datasetResponse from "./dataset-response.schema.json" with { type: "json" };
import dataset from "./dataset.schema.json" with { type: "json" };
import error from "./error.schema.json" with { type: "json" };
import health from "./health.schema.json" with { type: "json" };
import layersPage from "./layers-page.schema.json" with { type: "json" };
import observation from "./observation.schema.json" with { type: "json" };
import observationsPage from "./observations-page.schema.json" with { type: "json" };
import pixelSample from "./pixel-sample.schema.json" with { type: "json" };
import queryResult from "./query-result.schema.json" with { type: "json" };
import resolution from "./resolution.schema.json" with { type: "json" };
import revisionsResponse from "./revisions-response.schema.json" with { type: "json" };
import seriesResult from "./series-result.schema.json" with { type: "json" };
import tileDetail from "./tile-detail.schema.json" with { type: "json" };
import tileMetadata from "./tile-metadata.schema.json" with { type: "json" };
import tileResponse from "./tile-response.schema.json" with { type: "json" };
import validation from "./validation.schema.json" with { type: "json" };
import distCommon from "./dist/dist-common.schema.json" with { type: "json" };
import distCatalogPointer from "./dist/dist-catalog-pointer.schema.json" with { type: "json" };
import distCatalogRoot from "./dist/dist-catalog-root.schema.json" with { type: "json" };
import distCatalogLeaf from "./dist/dist-catalog-leaf.schema.json" with { type: "json" };
import distManifest from "./dist/dist-manifest.schema.json" with { type: "json" };
import distRasterIndex from "./dist/dist-raster-index.schema.json" with { type: "json" };
import distYearPage from "./dist/dist-year-page.schema.json" with { type: "json" };
import distMonthPage from "./dist/dist-month-page.schema.json" with { type: "json" };
import distObservationIndex from "./dist/dist-observation-index.schema.json" with { type: "json" };
import distSeriesSources from "./dist/dist-series-sources.schema.json" with { type: "json" };

export type { ErrorObject, ValidateFunction };

/** The schemas of the interface contract: what the OpenAPI document publishes. */
export const CONTRACT_SCHEMAS: readonly object[] = [acquisitionRequest, capabilities, catalogResponse, common, dataRequest, datasetResponse, dataset, error, health, layersPage, observation, observationsPage, pixelSample, queryResult, resolution, revisionsResponse, seriesResult, tileDetail, tileMetadata, tileResponse, validation];
/** The dist format's own schemas: checked by the pipeline before writing and by readers of catalog.json. */
export const DIST_SCHEMAS: readonly object[] = [distCommon, distCatalogPointer, distCatalogRoot, distCatalogLeaf, distManifest, distRasterIndex, distYearPage, distMonthPage, distObservationIndex, distSeriesSources];

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object") {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/**
 * Every schema by its `$id` (the bare file name, e.g. "dataset.schema.json"). Frozen: ajv compiles from these
 * same objects, so a consumer that rewrites `$ref`s (the OpenAPI builder) must work on a copy.
 */
export const schemas: Record<string, object> = Object.fromEntries(
  [...CONTRACT_SCHEMAS, ...DIST_SCHEMAS].map((schema) => [(schema as { $id: string }).$id, deepFreeze(schema)]),
);

/**
 * An annotation of a schema: what an issue's message says when that schema's value breaks a keyword, by keyword
 * (`required`, `minimum`, ...; `*` for any other), `{value}` standing for the value as quoted and `{count}` for an
 * array's length. The GET routes' parameters say what they allow in their own words this way (api/parameters.ts).
 */
export const MESSAGES_KEYWORD = "x-messages";

// allowUnionTypes: the contract's "number or null" fields are `type: ["number", "null"]`, which keeps their
// errors to one `type` issue instead of anyOf noise. validateSchema off: checking every schema against the
// 2020-12 meta-schema costs 50 ms at each start; the tests check them (schemas.test.ts) instead.
export const AJV_OPTIONS = { strict: true, allErrors: true, useDefaults: true, allowUnionTypes: true, keywords: [MESSAGES_KEYWORD] };
// verbose: each error carries the schema holding its keyword, which messages read what is allowed from.
// code.optimize off: ajv's pass over the generated code took a third of compiling the catalog pointer's validator
// (41 ms of the server's start, 28 without it), and validating a query's request takes the same 2.3 µs either way.
const COMPILE_OPTIONS = { ...AJV_OPTIONS, verbose: true, validateSchema: false, code: { optimize: false } };

/** An ajv with the formats and every schema known so far, compiling as validatorFor does; `code` adds to its options. */
export function makeAjv(code: Record<string, unknown> = {}): Ajv2020 {
  const made = new Ajv2020({ ...COMPILE_OPTIONS, code: { ...COMPILE_OPTIONS.code, ...code } });
  addFormats.default(made);
  for (const schema of Object.values(schemas)) made.addSchema(schema);
  return made;
}

/** validatorFor's ajv, made when a validator is first compiled (a server's start compiles none). */
let ajv: Ajv2020 | null = null;

/**
 * Validators compiled at build time from these same schema files (schemas/precompile.ts; the server loads them when
 * they were built from the files it holds, server/precompiled.ts), by `$id`: taken before ajv compiles one.
 */
const precompiled = new Map<string, ValidateFunction>();

export function usePrecompiled(validators: Record<string, ValidateFunction>): void {
  for (const [id, validate] of Object.entries(validators)) precompiled.set(id, validate);
}

/**
 * Adds a schema declared in code (a GET route's parameters, api/parameters.ts) to the ones the contract's checks use,
 * under its `$id`; the same object again is a no-op, another one under a known id an error.
 */
export function registerSchema(schema: { $id: string }): void {
  const known = schemas[schema.$id];
  if (known === schema) return;
  if (known) throw new Error(`a schema with $id "${schema.$id}" is registered already`);
  schemas[schema.$id] = deepFreeze(schema);
  ajv?.addSchema(schema);
}

/**
 * The version id's pattern as common.schema.json declares it, its one declaration: code that needs a RegExp, or a
 * pattern holding a version id, derives it from this.
 */
export const VERSION_ID_PATTERN: string = (common as { $defs: { "version-id": { pattern: string } } }).$defs["version-id"].pattern;

/** The compiled validator of a schema id: built at build time, or compiled by ajv on first use and cached. */
export function validatorFor(id: string): ValidateFunction {
  const validate = precompiled.get(id) ?? (id in schemas ? (ajv ??= makeAjv()).getSchema(id) : undefined);
  if (!validate) throw new Error(`no schema with $id "${id}" in schemas/ (known: ${Object.keys(schemas).join(", ")})`);
  return validate;
}

/** One violated rule, as the contract's error body carries it (docs/contract.md §4.2, §4). */
export interface Issue {
  code: string;
  path: (string | number)[];
  message: string;
}

/** ajv keyword to the contract's issue code (docs/contract.md §4); keywords not listed keep their own name. */
const CODES: Record<string, string> = {
  required: "required",
  type: "type",
  enum: "enum",
  const: "enum",
  pattern: "pattern",
  additionalProperties: "additional_property",
  unevaluatedProperties: "additional_property",
  minimum: "out_of_range",
  maximum: "out_of_range",
  exclusiveMinimum: "out_of_range",
  exclusiveMaximum: "out_of_range",
  minItems: "length",
  maxItems: "length",
  items: "length", // `items: false` after prefixItems: too many items
  minLength: "length",
  maxLength: "length",
  minProperties: "length",
  maxProperties: "length",
};

interface Draft extends Issue {
  pointer: string; // ajv instancePath, to find the branch errors of a combinator
}

function pointerToPath(pointer: string, data: unknown, hasData: boolean): (string | number)[] {
  if (pointer === "") return [];
  const path: (string | number)[] = [];
  let node = data;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    // With the data at hand an index is a number exactly when its container is an array; without it, a
    // segment of digits is taken as an index (no object of the contract has digit-only keys).
    const isIndex = hasData ? Array.isArray(node) : /^(0|[1-9][0-9]*)$/.test(key);
    path.push(isIndex ? Number(key) : key);
    node = node !== null && typeof node === "object" ? (node as Record<string, unknown>)[key] : undefined;
  }
  return path;
}

type SchemaNode = Record<string, unknown>;

/** The node at a JSON pointer in schema `base` (an `$id`), or undefined. */
function walkSchema(base: string, pointer: string): SchemaNode | undefined {
  let node: unknown = schemas[base];
  for (const raw of pointer.split("/").filter(Boolean)) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as SchemaNode)[raw.replaceAll("~1", "/").replaceAll("~0", "~")];
  }
  return node !== null && typeof node === "object" ? (node as SchemaNode) : undefined;
}

/** A schema with its `$ref` followed (its own keywords, e.g. a description, kept beside the target's). */
function deref(schema: unknown, base: string): { node: SchemaNode; base: string } | undefined {
  if (schema === null || typeof schema !== "object") return undefined;
  const { $ref, ...own } = schema as SchemaNode;
  if (typeof $ref !== "string") return { node: schema as SchemaNode, base };
  const [file, pointer = ""] = $ref.split("#");
  const target = walkSchema(file || base, pointer);
  return target ? deref({ ...target, ...own }, file || base) : undefined;
}

/** The one value a schema allows, when it allows exactly one (a const, a one-item enum, objects and arrays of them). */
function onlyValue(schema: SchemaNode, base: string): unknown {
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length === 1) return schema.enum[0];
  if (schema.type === "array" && typeof schema.minItems === "number" && schema.minItems === schema.maxItems && schema.items) {
    const item = deref(schema.items, base);
    const value = item && onlyValue(item.node, item.base);
    return value === undefined ? undefined : Array.from({ length: schema.minItems }, () => value);
  }
  if (schema.type === "object" && Array.isArray(schema.required) && schema.required.length > 0) {
    const entries = (schema.required as string[]).map((key) => {
      const child = deref((schema.properties as SchemaNode | undefined)?.[key], base);
      return [key, child && onlyValue(child.node, child.base)] as const;
    });
    return entries.every(([, v]) => v !== undefined) ? Object.fromEntries(entries) : undefined;
  }
  return undefined;
}

/** A title that names a value in the words of the data (`west`, `south` of a bbox), not a heading (`Region`). */
const isValueName = (title: unknown): title is string => typeof title === "string" && /^[a-z][a-z_]*$/.test(title);

const typeNoun = (type: unknown) => (Array.isArray(type) ? type.join(" or ") : type === "object" || type === "array" || type === "integer" ? `an ${type}` : `a ${String(type)}`);

/** A schema pictured in a few characters, for inside another's picture: "YYYY-MM-DD", [west, south, east, north]. */
function pictureOf(schema: SchemaNode, base: string): string {
  const only = onlyValue(schema, base);
  if (only !== undefined) return JSON.stringify(only);
  if (schema.format === "date") return '"YYYY-MM-DD"';
  if (isValueName(schema.title)) return schema.title;
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(" or ");
  if (Array.isArray(schema.prefixItems)) return `[${schema.prefixItems.map((item) => pictureOf(deref(item, base)?.node ?? {}, base)).join(", ")}]`;
  if (schema.type === "object" && Array.isArray(schema.required)) {
    const props = (schema.properties ?? {}) as SchemaNode;
    return `{${(schema.required as string[]).map((k) => `"${k}": ${pictureOf(deref(props[k], base)?.node ?? {}, base)}`).join(", ")}}`;
  }
  return schema.type ? typeNoun(schema.type) : "a value";
}

/**
 * What a schema allows, in words a caller can act on, from the schema's own const, enum, range, format, pattern and
 * shape (docs/contract.md §4: messages say what to send instead).
 */
function describeAllowed(schema: SchemaNode, base: string): string {
  const only = onlyValue(schema, base);
  if (only !== undefined) return `the only value allowed is ${JSON.stringify(only)}`;
  if (Array.isArray(schema.enum)) return `the values allowed are ${schema.enum.map((v) => JSON.stringify(v)).join(", ")}`;
  if (schema.format === "date") return "it must be a calendar date YYYY-MM-DD (leap years respected)";
  const { minimum: lo, maximum: hi } = schema;
  if (typeof lo === "number" && typeof hi === "number") return `it must be ${typeNoun(schema.type)} from ${lo} to ${hi}`;
  if (typeof lo === "number") return `it must be ${typeNoun(schema.type)} of at least ${lo}`;
  if (typeof hi === "number") return `it must be ${typeNoun(schema.type)} of at most ${hi}`;
  if (typeof schema.pattern === "string") return `it must be a string matching ${schema.pattern}`;
  if (typeof schema.minLength === "number" || typeof schema.maxLength === "number") {
    return `it must be a string of ${schema.minLength ?? 0} to ${schema.maxLength ?? "any number of"} characters`;
  }
  if (schema.type === "object" && Array.isArray(schema.required) && schema.required.length > 0) return `it must be an object ${pictureOf(schema, base)}`;
  if (schema.type === "array" && Array.isArray(schema.prefixItems)) {
    const count = schema.minItems === schema.maxItems ? `exactly ${String(schema.minItems)} items ` : "";
    return `it must be an array of ${count}${pictureOf(schema, base)}`;
  }
  if (schema.type === "array" && typeof schema.minItems === "number" && schema.minItems === schema.maxItems) {
    return `it must be an array of exactly ${schema.minItems} item${schema.minItems === 1 ? "" : "s"}`;
  }
  return `it must be ${schema.type ? typeNoun(schema.type) : "another value"}`;
}

/** A value as a message quotes it: short; objects and arrays by their kind, never their (maybe huge) content. */
function quote(value: unknown): string {
  if (Array.isArray(value)) return `an array of ${value.length} item${value.length === 1 ? "" : "s"}`;
  if (value !== null && typeof value === "object") return "an object";
  if (typeof value === "string" && value.length > 40) return `${JSON.stringify(value.slice(0, 37))}...`;
  return JSON.stringify(value) ?? String(value);
}

/** "south " when the schema holding the keyword names its value (an item of an ordered array), else "". */
const titleOf = (facts: ErrorFacts) => (isValueName(facts.owner?.node.title) ? `${facts.owner!.node.title} ` : "");

interface ErrorFacts {
  /** the schema holding the failed keyword, `$ref`s followed, and the file it is in */
  owner?: { node: SchemaNode; base: string };
  /** the array schema an item belongs to (prefixItems), for its order */
  array?: SchemaNode;
  value?: unknown;
  hasValue: boolean;
}

/** The schema of the value at an instance path of `rootId`'s data (properties, prefixItems, items followed). */
function schemaForInstance(rootId: string, pointer: string): SchemaNode | undefined {
  let at = deref(schemas[rootId], rootId);
  for (const raw of pointer.split("/").slice(1)) {
    if (!at) return undefined;
    const { node, base } = at;
    const index = /^(0|[1-9][0-9]*)$/.test(raw) ? Number(raw) : -1;
    const props = node.properties as SchemaNode | undefined;
    const next = props?.[raw] ?? (Array.isArray(node.prefixItems) && index >= 0 ? (node.prefixItems[index] ?? node.items) : node.items);
    at = deref(next, base);
  }
  return at?.node;
}

/**
 * The schema facts of an ajv error: the schema holding its keyword (ajv's `parentSchema`, with `verbose`), the
 * array an item belongs to, and the offending value.
 */
function factsOf(e: ErrorObject, rootId: string | undefined, value: unknown, hasValue: boolean): ErrorFacts {
  const [file] = e.schemaPath.split("#");
  const base = file || rootId || "";
  const owner = e.parentSchema ? { node: e.parentSchema as SchemaNode, base } : undefined;
  const parent = e.instancePath.split("/").slice(0, -1).join("/");
  const container = rootId && e.instancePath ? schemaForInstance(rootId, parent) : undefined;
  const array = container && Array.isArray(container.prefixItems) ? container : undefined;
  return { owner, array, value, hasValue };
}

/** Where an item sits in an ordered array: "; bbox is [west, south, east, north] in degrees; ...". */
function orderNote(e: ErrorObject, facts: ErrorFacts): string {
  const description = facts.array?.description;
  if (typeof description !== "string") return "";
  const key = e.instancePath.split("/").at(-2) ?? "the array";
  return `; ${key} is ${description.replace(/\.$/, "")}`;
}

function describe(e: ErrorObject, facts: ErrorFacts): string {
  const p = e.params as Record<string, unknown>;
  const owner = facts.owner;
  const allowed = owner ? describeAllowed(owner.node, owner.base) : null;
  const got = facts.hasValue ? `${quote(facts.value)} ` : "";
  switch (e.keyword) {
    case "required": {
      const name = String(p.missingProperty);
      const child = owner && deref((owner.node.properties as SchemaNode | undefined)?.[name], owner.base);
      return child ? `is required: ${describeAllowed(child.node, child.base)}` : `missing required property "${name}"`;
    }
    case "additionalProperties":
    case "unevaluatedProperties": {
      const name = String(p.additionalProperty ?? p.unevaluatedProperty);
      const known = owner ? Object.keys((owner.node.properties ?? {}) as SchemaNode) : [];
      return `unknown property ${JSON.stringify(name)}: remove it${known.length ? `; the properties allowed are ${known.join(", ")}` : ""}`;
    }
    case "type": {
      if (!allowed || /^it must be (an? )?(string|number|integer|object|array|boolean|null)$/.test(allowed) || Array.isArray(owner?.node.type)) return `must be ${typeNoun(p.type).replace(/^an? /, "")}`;
      const title = titleOf(facts);
      return `${got}is not ${typeNoun(p.type)}; ${title}${allowed.replace(/^it /, title ? "" : "it ")}${orderNote(e, facts)}`;
    }
    case "enum":
    case "const":
      return allowed ? `${got}is not allowed; ${allowed}` : `must be ${JSON.stringify(p.allowedValue ?? p.allowedValues)}`;
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum": {
      const title = titleOf(facts);
      return allowed ? `${got}is out of range; ${title}${allowed.replace(/^it /, title ? "" : "it ")}${orderNote(e, facts)}` : (e.message ?? e.keyword);
    }
    case "format":
      return p.format === "date" ? `${got}is not a calendar date; it must be a calendar date YYYY-MM-DD (leap years respected)` : `must be a valid ${String(p.format)}`;
    case "pattern":
      return `${got}does not match; it must be a string matching ${String(p.pattern)}`;
    case "minItems":
    case "maxItems":
    case "items":
    case "minLength":
    case "maxLength": {
      const count = Array.isArray(facts.value) ? `holds ${facts.value.length} item${facts.value.length === 1 ? "" : "s"}; ` : "";
      return allowed ? `${count}${allowed}` : (e.message ?? e.keyword);
    }
    default:
      return e.message ?? `fails ${e.keyword}`;
  }
}

/** The value at an ajv instancePath of `data`. */
function valueAt(data: unknown, pointer: string): unknown {
  let node = data;
  for (const raw of pointer.split("/").slice(1)) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[raw.replaceAll("~1", "/").replaceAll("~0", "~")];
  }
  return node;
}

function toDraft(e: ErrorObject, data: unknown, hasData: boolean, rootId?: string): Draft {
  const path = pointerToPath(e.instancePath, data, hasData);
  const p = e.params as Record<string, unknown>;
  if (e.keyword === "required") path.push(String(p.missingProperty));
  if (e.keyword === "additionalProperties") path.push(String(p.additionalProperty));
  if (e.keyword === "unevaluatedProperties") path.push(String(p.unevaluatedProperty));
  const code =
    e.keyword === "format" ? (p.format === "date" ? "invalid_date" : "format") : (CODES[e.keyword] ?? e.keyword);
  const facts = factsOf(e, rootId, hasData ? valueAt(data, e.instancePath) : undefined, hasData);
  return { code, path, message: annotatedMessage(e, facts, rootId) ?? describe(e, facts), pointer: e.instancePath };
}

/**
 * The message the schema of the value at fault gives for this keyword (MESSAGES_KEYWORD; for `required`, the missing
 * property's schema), filled in; undefined when it gives none.
 */
function annotatedMessage(e: ErrorObject, facts: ErrorFacts, rootId: string | undefined): string | undefined {
  if (!rootId) return undefined;
  const missing = e.keyword === "required" ? `/${String((e.params as Record<string, unknown>).missingProperty).replaceAll("~", "~0").replaceAll("/", "~1")}` : "";
  const messages = schemaForInstance(rootId, `${e.instancePath}${missing}`)?.[MESSAGES_KEYWORD] as Record<string, string> | undefined;
  const template = e.keyword === "required" ? messages?.required : (messages?.[e.keyword] ?? messages?.["*"]);
  if (template === undefined) return undefined;
  const count = Array.isArray(facts.value) ? String(facts.value.length) : "";
  return template.replaceAll("{value}", quote(facts.value)).replaceAll("{count}", count);
}

const isUnder = (pointer: string, parent: string) => pointer === parent || pointer.startsWith(`${parent}/`);

/**
 * ajv reports an anyOf/oneOf failure as the errors of every branch followed by the combinator's own error.
 * Replace that run by what a client can act on: the branch errors that point below the combinator's field,
 * else one issue at the field ("must be string or null" when every branch failed on the same code).
 * Branch errors are found by position (the run just before the combinator error, at or under its field),
 * since errors inside a `$ref` carry the referenced schema's own schemaPath.
 */
function collapseCombinators(errors: ErrorObject[], data: unknown, hasData: boolean, rootId?: string): Draft[] {
  const out: Draft[] = [];
  for (const e of errors) {
    const self = toDraft(e, data, hasData, rootId);
    if (e.keyword !== "anyOf" && e.keyword !== "oneOf") {
      out.push(self);
      continue;
    }
    const branch: Draft[] = [];
    while (out.length > 0 && isUnder(out[out.length - 1].pointer, e.instancePath)) branch.unshift(out.pop()!);
    const deeper = branch.filter((d) => d.path.length > self.path.length);
    if (deeper.length > 0) {
      out.push(...deeper);
    } else if (branch.length > 0 && branch.every((d) => d.code === branch[0].code)) {
      const parts = [...new Set(branch.map((d) => d.message.replace(/^must be /, "")))];
      const message = branch[0].message.startsWith("must be ") ? `must be ${parts.join(" or ")}` : parts.join("; ");
      out.push({ ...self, code: branch[0].code, message });
    } else {
      out.push(self); // e.g. oneOf matched more than one branch
    }
  }
  return out;
}

/**
 * ajv errors as contract issues (docs/contract.md §4): `path` holds keys and array indexes (numbers) to the offending
 * field, including the missing or extra property name. Pass the validated value as `data` to tell indexes from
 * digit-only keys exactly. One issue per code and path; a field with a wrong type reports only `type`. Pass the
 * validated schema's `schemaId` too, so each message names what the schema allows there (its const, enum, range,
 * format or shape) and not only what is wrong.
 */
export function toIssues(errors: ErrorObject[] | null | undefined, data?: unknown, schemaId?: string): Issue[] {
  if (!errors || errors.length === 0) return [];
  const hasData = data !== undefined;
  let drafts = collapseCombinators(errors, data, hasData, schemaId);
  // dist-index's discriminator repeats what the `kind` property's own required/enum/type error already says.
  if (drafts.some((d) => d.code !== "discriminator")) drafts = drafts.filter((d) => d.code !== "discriminator");
  const key = (d: Issue) => JSON.stringify(d.path);
  const typed = new Set(drafts.filter((d) => d.code === "type").map(key));
  const seen = new Set<string>();
  const issues: Issue[] = [];
  for (const d of drafts) {
    if (d.code !== "type" && typed.has(key(d))) continue;
    const id = `${d.code} ${key(d)}`;
    if (seen.has(id)) continue;
    seen.add(id);
    issues.push({ code: d.code, path: d.path, message: d.message });
  }
  return issues;
}

/** "region.bbox[0]" style rendering of an issue path, for messages. */
export function formatPath(path: (string | number)[]): string {
  let out = "";
  for (const part of path) out += typeof part === "number" ? `[${part}]` : out ? `.${part}` : part;
  return out || "(root)";
}

/**
 * Throws unless `value` matches schema `id`; the pipeline calls it before writing any file. The error message
 * starts with `what` (the file or record being checked) and lists the issues.
 */
export function assertValid(id: string, value: unknown, what: string): void {
  const validate = validatorFor(id);
  if (validate(value)) return;
  const issues = toIssues(validate.errors, value, id);
  const shown = issues.slice(0, 10).map((i) => `${formatPath(i.path)}: ${i.message} (${i.code})`);
  if (issues.length > shown.length) shown.push(`and ${issues.length - shown.length} more`);
  throw new Error(`${what}: does not match ${id}: ${shown.join("; ")}`);
}
