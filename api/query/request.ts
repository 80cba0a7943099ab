// The data request of validate, resolve and query: its body, its contract check and its hash (docs/contract.md §3.1;
// docs/contract.md §3, §4).

import stableStringify from "fast-json-stable-stringify";
import { QUERY_DATA_CLASS, QUERY_SOURCE, QUERY_UNIT, QUERY_VARIABLE } from "../../format/records.js";
import { dateToDayNumber, listDates } from "../../format/dates.js";
import { type Window, windowBbox } from "../../format/grid.js";
import { describeVariables, findVariable } from "../../format/variables.js";
import { type Platform, fromUtf8, utf8 } from "../../format/storage.js";
import { formatPath, schemas, toIssues, validatorFor } from "../../schemas/validate.js";
import { LIMITS } from "../contract.js";
import { HttpError, type Issue, payloadTooLarge } from "../errors.js";

/** The data request after the contract check, with `format` filled in (docs/contract.md §3.1). */
export interface RequestConfig {
  variables: [typeof QUERY_VARIABLE];
  region: { bbox: [number, number, number, number]; crs: "EPSG:4326" };
  period: { start: string; end: string };
  temporal_resolution: "daily";
  spatial_resolution: "native";
  units: { air_temperature_max: typeof QUERY_UNIT };
  data_class: typeof QUERY_DATA_CLASS;
  format: "json" | "csv";
  missing_policy: "preserve";
  source_preference: typeof QUERY_SOURCE;
  dataset_version?: string;
}

/**
 * The series call that answers what a data request asks (api/series/hint.ts, handed in where the route table is made,
 * api/interface.ts): the query's 422s for more than 31 days or another variable point there (docs/contract.md §8.2).
 */
export type SeriesCallHint = (spec: unknown, variable?: string) => string;

export const JSON_CONTENT_HINT = "send the header -H 'Content-Type: application/json' (GET /api/v1/openapi.json has an example data request)";

/** `application/json`, with or without parameters such as charset (docs/contract.md §4). */
export function isJsonContentType(header: string | undefined): boolean {
  return (header ?? "").split(";")[0].trim().toLowerCase() === "application/json";
}

/** 415 on another media type, 413 over the size bound, 400 on empty, non-UTF-8 or malformed JSON (docs/contract.md §4). */
export function parseJsonBody(contentType: string | undefined, body: Uint8Array | null | undefined): unknown {
  if (!isJsonContentType(contentType)) {
    throw new HttpError({ kind: "unsupported_media_type", message: `Content-Type must be application/json (got ${contentType ? JSON.stringify(contentType) : "none"}); ${JSON_CONTENT_HINT}.` });
  }
  if (body && body.byteLength > LIMITS.maxRequestBytes) throw payloadTooLarge();
  if (!body || body.byteLength === 0) throw new HttpError({ kind: "malformed_json", message: "The request body is empty; send a JSON data request (GET /api/v1/openapi.json has an example)." });
  let text: string;
  try {
    text = fromUtf8(body);
  } catch {
    throw new HttpError({ kind: "malformed_json", message: "The request body is not valid UTF-8; send the JSON data request encoded as UTF-8." });
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new HttpError({ kind: "malformed_json", message: `The request body is not valid JSON (${(err as Error).message}); send one JSON object (GET /api/v1/openapi.json has an example data request).` });
  }
}

const DATA_REQUEST_SCHEMA = "data-request.schema.json";

/** The properties `units` declares; others are accepted and ignored (docs/contract.md §3.1). */
const UNIT_KEYS = Object.keys((schemas[DATA_REQUEST_SCHEMA] as { properties: { units: { properties: object } } }).properties.units.properties);

/** `value` with only `keys`, in that order: what an open object of the request keeps once checked. */
function keepDeclared<T extends object>(value: T, keys: readonly string[]): T {
  return Object.fromEntries(keys.filter((k) => k in value).map((k) => [k, (value as Record<string, unknown>)[k]])) as T;
}

function rejectRequest(issues: Issue[]): HttpError {
  const first = issues[0];
  const where = first.path.length ? `${formatPath(first.path)} ` : "";
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more issue${issues.length > 2 ? "s" : ""}, each in issues)` : "";
  return new HttpError({ kind: "invalid_request", message: `The data request breaks the contract: ${where}${first.message}${more}.`, issues });
}

/**
 * A variable the direct query does not answer (docs/contract.md §8.1): a SILO variable is served by the series route,
 * and its issue gives the call for this request; any other name is told the variables published.
 */
function pointToSeries(issues: Issue[], spec: unknown, seriesCall: SeriesCallHint): Issue[] {
  const asked = (spec as { variables?: unknown }).variables;
  return issues.map((issue) => {
    const value = Array.isArray(asked) && issue.code === "enum" && issue.path[0] === "variables" && issue.path.length === 2 ? asked[issue.path[1] as number] : undefined;
    if (value === undefined) return issue;
    const variable = typeof value === "string" ? findVariable(value) : undefined;
    if (!variable) return { ...issue, message: `${issue.message}. The variables published are ${describeVariables()}; the others are answered by GET /api/v1/series` };
    if (variable.name === QUERY_VARIABLE) return issue;
    const message = `${value} is not answered by the direct query (air_temperature_max only); use the series route: ${seriesCall(spec, variable.name)}`;
    return { ...issue, message };
  });
}

const BBOX_ORDER = "bbox is [west, south, east, north] in degrees, longitudes first";

/** The run-time rules the schema cannot express (docs/contract.md §3.1): ordered bounds, at most 31 days. */
function checkOrder(config: RequestConfig, seriesCall: SeriesCallHint): Issue[] {
  const issues: Issue[] = [];
  const [west, south, east, north] = config.region.bbox;
  if (!(west < east)) {
    const hint = west > east ? "swap west and east" : "give the box some width";
    issues.push({ code: "bbox_order", path: ["region", "bbox", 0], message: `${west} is not less than east ${east}: ${hint} (${BBOX_ORDER}; the antimeridian cannot be crossed)` });
  }
  if (!(south < north)) {
    const hint = south > north ? "swap south and north" : "give the box some height";
    issues.push({ code: "bbox_order", path: ["region", "bbox", 1], message: `${south} is not less than north ${north}: ${hint} (${BBOX_ORDER})` });
  }
  const days = dateToDayNumber(config.period.end) - dateToDayNumber(config.period.start) + 1;
  if (days < 1) {
    const { start, end } = config.period;
    issues.push({ code: "period_order", path: ["period", "end"], message: `${end} precedes start ${start}: swap start and end (the period is start to end, both inclusive)` });
  } else if (days > LIMITS.maxDays) {
    issues.push({
      code: "too_many_days",
      path: ["period", "end"],
      message: `the period holds ${days} days; at most ${LIMITS.maxDays} are allowed (inclusive bounds). ${seriesCall(config)}`,
    });
  }
  return issues;
}

/**
 * The contract check shared by validate, resolve and query (docs/contract.md §3): the schema, then the run-time
 * rules it cannot express. Any violation is 422 invalid_request with issues pointing at the fields.
 */
export function checkRequest(spec: unknown, seriesCall: SeriesCallHint): RequestConfig {
  if (spec === null || typeof spec !== "object" || Array.isArray(spec)) {
    throw rejectRequest([{ code: "type", path: [], message: "is not a JSON object; send the data request as one JSON object (GET /api/v1/openapi.json has an example)" }]);
  }
  const validate = validatorFor(DATA_REQUEST_SCHEMA);
  // ajv fills `format` with its default here (useDefaults), on the body we own.
  if (!validate(spec)) throw rejectRequest(pointToSeries(toIssues(validate.errors, spec, DATA_REQUEST_SCHEMA), spec, seriesCall));
  const config = spec as RequestConfig;
  config.format ??= "json";
  // period and units accept extra properties and ignore them: the checked request (validate's echo, the hash,
  // a 413's plan) holds only what the contract declares
  config.period = keepDeclared(config.period, ["start", "end"]);
  config.units = keepDeclared(config.units, UNIT_KEYS);

  const issues = checkOrder(config, seriesCall);
  if (issues.length > 0) throw rejectRequest(issues);
  return config;
}

/** Every date of the inclusive period, ascending. */
export function listPeriodDates(config: RequestConfig): string[] {
  return listDates(config.period.start, config.period.end);
}

/** SHA-256 of the canonical JSON of the checked request (docs/contract.md §3). */
export function hashRequest(platform: Platform, config: RequestConfig): Promise<string> {
  return platform.sha256Hex(utf8(stableStringify(config)));
}

/**
 * A data request of the contract for global cells `window` (its box on cell edges, so exactly those centres are
 * selected) over an inclusive period, every fixed field filled in; `extra` adds `format`, `dataset_version` (or
 * anything a test wants to send).
 */
export function makeDataRequest(window: Window, start: string, end: string, extra: Record<string, unknown> = {}) {
  return {
    variables: [QUERY_VARIABLE],
    region: { bbox: windowBbox(window) as number[], crs: "EPSG:4326" },
    period: { start, end },
    temporal_resolution: "daily",
    spatial_resolution: "native",
    units: { [QUERY_VARIABLE]: QUERY_UNIT },
    data_class: QUERY_DATA_CLASS,
    missing_policy: "preserve",
    source_preference: QUERY_SOURCE,
    ...extra,
  };
}
