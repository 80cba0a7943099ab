// The contract's JSON Schemas (and the dist format's), compiled on demand, with ajv errors turned into contract
// issues. Platform-free: the schemas are imported, not read from disk, so a browser bundle carries them too.

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
export const CONTRACT_SCHEMAS: readonly object[] = [acquisitionRequest, capabilities, catalogResponse, common, dataRequest, datasetResponse, dataset, error, health, layersPage, observation, observationsPage, pixelSample, queryResult, resolution, seriesResult, tileDetail, tileMetadata, tileResponse, validation];
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

// allowUnionTypes: the contract's "number or null" fields are `type: ["number", "null"]`, which keeps their
// errors to one `type` issue instead of anyOf noise. validateSchema off: checking every schema against the
// 2020-12 meta-schema costs 50 ms at each start; the tests check them (schemas.test.ts) instead.
export const AJV_OPTIONS = { strict: true, allErrors: true, useDefaults: true, allowUnionTypes: true } as const;
const ajv = new Ajv2020({ ...AJV_OPTIONS, validateSchema: false });
addFormats.default(ajv);
for (const schema of Object.values(schemas)) ajv.addSchema(schema);

/** The compiled validator of a schema id; ajv compiles it on first use and caches it. */
export function validatorFor(id: string): ValidateFunction {
  const validate = ajv.getSchema(id);
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

function describe(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case "required":
      return `missing required property "${String(p.missingProperty)}"`;
    case "additionalProperties":
    case "unevaluatedProperties":
      return `unknown property "${String(p.additionalProperty ?? p.unevaluatedProperty)}"`;
    case "enum":
      return `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
    case "const":
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case "format":
      return p.format === "date" ? "must be a valid calendar date YYYY-MM-DD" : `must be a valid ${String(p.format)}`;
    case "pattern":
      return `must match ${String(p.pattern)}`;
    default:
      return e.message ?? `fails ${e.keyword}`;
  }
}

function toDraft(e: ErrorObject, data: unknown, hasData: boolean): Draft {
  const path = pointerToPath(e.instancePath, data, hasData);
  const p = e.params as Record<string, unknown>;
  if (e.keyword === "required") path.push(String(p.missingProperty));
  if (e.keyword === "additionalProperties") path.push(String(p.additionalProperty));
  if (e.keyword === "unevaluatedProperties") path.push(String(p.unevaluatedProperty));
  const code =
    e.keyword === "format" ? (p.format === "date" ? "invalid_date" : "format") : (CODES[e.keyword] ?? e.keyword);
  return { code, path, message: describe(e), pointer: e.instancePath };
}

const isUnder = (pointer: string, parent: string) => pointer === parent || pointer.startsWith(`${parent}/`);

/**
 * ajv reports an anyOf/oneOf failure as the errors of every branch followed by the combinator's own error.
 * Replace that run by what a client can act on: the branch errors that point below the combinator's field,
 * else one issue at the field ("must be string or null" when every branch failed on the same code).
 * Branch errors are found by position (the run just before the combinator error, at or under its field),
 * since errors inside a `$ref` carry the referenced schema's own schemaPath.
 */
function collapseCombinators(errors: ErrorObject[], data: unknown, hasData: boolean): Draft[] {
  const out: Draft[] = [];
  for (const e of errors) {
    const self = toDraft(e, data, hasData);
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
 * digit-only keys exactly. One issue per code and path; a field with a wrong type reports only `type`.
 */
export function toIssues(errors: ErrorObject[] | null | undefined, data?: unknown): Issue[] {
  if (!errors || errors.length === 0) return [];
  const hasData = data !== undefined;
  let drafts = collapseCombinators(errors, data, hasData);
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
  const issues = toIssues(validate.errors, value);
  const shown = issues.slice(0, 10).map((i) => `${formatPath(i.path)}: ${i.message} (${i.code})`);
  if (issues.length > shown.length) shown.push(`and ${issues.length - shown.length} more`);
  throw new Error(`${what}: does not match ${id}: ${shown.join("; ")}`);
}
