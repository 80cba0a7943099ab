// The JSON Schemas against the contract: valid examples pass, each violation gives its exact issue code and path.

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { AJV_OPTIONS, assertValid, schemas, toIssues, validatorFor, type Issue } from "../../schemas/validate.js";
import { checkRequest } from "../../api/query/request.js";
import { describeSeriesCall } from "../../api/series/hint.js";

type Json = Record<string, unknown>;
const clone = <T>(value: T): T => structuredClone(value);

/** Validates a copy of `value` against schema `id`; returns the copy (defaults applied) and its issues. */
function check(id: string, value: unknown): { value: unknown; issues: Issue[] } {
  const copy = clone(value);
  const validate = validatorFor(id);
  const ok = validate(copy);
  const issues = toIssues(validate.errors, copy);
  assert.is(ok, issues.length === 0, `${id}: validity and issues disagree: ${JSON.stringify(issues)}`);
  return { value: copy, issues };
}

const codesAndPaths = (issues: Issue[]) => issues.map(({ code, path }) => ({ code, path }));

const SHA = "e165b22947cfbbc5e165b22947cfbbc5e165b22947cfbbc5e165b22947cfbbc5";
const VERSION = "silo-tmax-20030101-20030131-e165b22947cfbbc5";
const TILE = "silo-tmax-20030101-20030131-e165b22947cfbbc5-20030101-r0-c0";
const TRANSFORM = [0.05, 0, 111.975, 0, -0.05, -9.975];

const REQUEST: Json = {
  variables: ["air_temperature_max"],
  region: { bbox: [142.3, -30.0, 142.4, -29.9], crs: "EPSG:4326" },
  period: { start: "2003-01-01", end: "2003-01-03" },
  temporal_resolution: "daily",
  spatial_resolution: "native",
  units: { air_temperature_max: "degC" },
  data_class: "interpolated_observation",
  missing_policy: "preserve",
  source_preference: "silo",
};

/** REQUEST with `edit` applied to a copy. */
function request(edit: (r: Json & { region: Json; period: Json }) => void): Json {
  const r = clone(REQUEST) as Json & { region: Json; period: Json };
  edit(r);
  return r;
}

const DataRequest = suite("data request");

DataRequest("data request - the contract's example passes and gets format json filled in", () => {
  const { value, issues } = check("data-request.schema.json", REQUEST);
  assert.equal(issues, []);
  assert.equal(value, { ...REQUEST, format: "json" });
});

DataRequest("data request - keeps format csv and a pinned dataset_version", () => {
  const { value, issues } = check(
    "data-request.schema.json",
    request((r) => Object.assign(r, { format: "csv", dataset_version: VERSION })),
  );
  assert.equal(issues, []);
  assert.is((value as Json).format, "csv");
});

DataRequest("data request - period and units accept extra properties, which the contract check then leaves out (docs/contract.md §3.1)", () => {
  const spec = request((r) => {
    r.period.tz = "UTC";
    r.units = { air_temperature_max: "degC", precipitation_amount: "mm" };
  });
  assert.equal(check("data-request.schema.json", spec).issues, []);
  assert.equal(checkRequest(clone(spec), describeSeriesCall), { ...REQUEST, format: "json" });
});

DataRequest("data request - 2004-02-29 is a valid date", () => {
  assert.equal(check("data-request.schema.json", request((r) => (r.period.start = "2004-02-29"))).issues, []);
});

const violations: [string, (r: Json & { region: Json; period: Json }) => void, Pick<Issue, "code" | "path">[]][] = [
  ["missing units", (r) => delete r.units, [{ code: "required", path: ["units"] }]],
  ["extra top-level key", (r) => (r.extra = 1), [{ code: "additional_property", path: ["extra"] }]],
  ["extra key in region", (r) => (r.region.srid = 4326), [{ code: "additional_property", path: ["region", "srid"] }]],
  ["bbox with 3 items", (r) => (r.region.bbox = [142.3, -30.0, 142.4]), [{ code: "length", path: ["region", "bbox"] }]],
  ["bbox with 5 items", (r) => (r.region.bbox = [142.3, -30, 142.4, -29.9, 0]), [{ code: "length", path: ["region", "bbox"] }]],
  ["west 181", (r) => (r.region.bbox = [181, -30.0, 142.4, -29.9]), [{ code: "out_of_range", path: ["region", "bbox", 0] }]],
  ["south -91", (r) => (r.region.bbox = [142.3, -91, 142.4, -29.9]), [{ code: "out_of_range", path: ["region", "bbox", 1] }]],
  ["east -181", (r) => (r.region.bbox = [142.3, -30, -181, -29.9]), [{ code: "out_of_range", path: ["region", "bbox", 2] }]],
  ["north -91", (r) => (r.region.bbox = [142.3, -30.0, 142.4, -91]), [{ code: "out_of_range", path: ["region", "bbox", 3] }]],
  ["bbox item a string", (r) => (r.region.bbox = [142.3, "-30", 142.4, -29.9]), [{ code: "type", path: ["region", "bbox", 1] }]],
  ["crs EPSG:3857", (r) => (r.region.crs = "EPSG:3857"), [{ code: "enum", path: ["region", "crs"] }]],
  ["region missing crs", (r) => delete r.region.crs, [{ code: "required", path: ["region", "crs"] }]],
  ["start 2003-02-30", (r) => (r.period.start = "2003-02-30"), [{ code: "invalid_date", path: ["period", "start"] }]],
  ["start 2003-02-29", (r) => (r.period.start = "2003-02-29"), [{ code: "invalid_date", path: ["period", "start"] }]],
  ["end 2003-1-3", (r) => (r.period.end = "2003-1-3"), [{ code: "invalid_date", path: ["period", "end"] }]],
  ["variables []", (r) => (r.variables = []), [{ code: "length", path: ["variables"] }]],
  [
    "variables with two items",
    (r) => (r.variables = ["air_temperature_max", "air_temperature_max"]),
    [{ code: "length", path: ["variables"] }],
  ],
  ["variables precipitation", (r) => (r.variables = ["precipitation_amount"]), [{ code: "enum", path: ["variables", 0] }]],
  ["variables a string", (r) => (r.variables = "air_temperature_max"), [{ code: "type", path: ["variables"] }]],
  ["format xml", (r) => (r.format = "xml"), [{ code: "enum", path: ["format"] }]],
  ["dataset_version bad id!", (r) => (r.dataset_version = "bad id!"), [{ code: "pattern", path: ["dataset_version"] }]],
  ["dataset_version of 129 chars", (r) => (r.dataset_version = "a".repeat(129)), [{ code: "pattern", path: ["dataset_version"] }]],
  ["source_preference auto", (r) => (r.source_preference = "auto"), [{ code: "enum", path: ["source_preference"] }]],
  ["units degF", (r) => (r.units = { air_temperature_max: "degF" }), [{ code: "enum", path: ["units", "air_temperature_max"] }]],
  ["temporal_resolution monthly", (r) => (r.temporal_resolution = "monthly"), [{ code: "enum", path: ["temporal_resolution"] }]],
  ["spatial_resolution 0.1", (r) => (r.spatial_resolution = 0.1), [{ code: "type", path: ["spatial_resolution"] }]],
  ["data_class forecast", (r) => (r.data_class = "forecast"), [{ code: "enum", path: ["data_class"] }]],
  ["missing_policy zero", (r) => (r.missing_policy = "zero"), [{ code: "enum", path: ["missing_policy"] }]],
  [
    "two violations at once",
    (r) => {
      delete r.period.end;
      r.region.bbox = [142.3, -30.0, 142.4, 91];
    },
    [
      { code: "out_of_range", path: ["region", "bbox", 3] },
      { code: "required", path: ["period", "end"] },
    ],
  ],
];

for (const [name, edit, expected] of violations) {
  DataRequest(`data request - ${name} gives ${expected.map((e) => `${e.code} at ${e.path.join(".")}`).join(", ")}`, () => {
    const { issues } = check("data-request.schema.json", request(edit));
    assert.equal(codesAndPaths(issues), expected);
    for (const issue of issues) assert.ok(issue.message.length > 0);
  });
}

DataRequest("data request - a body that is not an object is one type issue at the root", () => {
  assert.equal(codesAndPaths(check("data-request.schema.json", [REQUEST]).issues), [{ code: "type", path: [] }]);
});

DataRequest.run();

const DATASET: Json = {
  id: VERSION,
  dataset_key: "silo-tmax",
  title: "SILO daily maximum temperature, January 2003 (generated demo)",
  content_sha256: SHA,
  source_manifest: [{ sha256: SHA, url: "https://example.org/20030101.max_temp.tif", license: "CC-BY-4.0", extra: 1 }],
  transform_version: "tiles-v1",
  data_class: "interpolated_observation",
  variables: { air_temperature_max: "degC" },
  temporal_resolution: "daily",
  spatial_support: { kind: "grid", cell_size_deg: 0.05 },
  bbox: [111.975, -44.025, 154.025, -9.975],
  period_start: "2003-01-01",
  period_end: "2003-01-31",
  license: "CC-BY-4.0",
  attribution: "Queensland Government SILO",
  access_level: "demo",
  metadata: { synthetic: true },
  status: "published",
  published_at: null,
  created_at: "2026-01-01T00:00:00Z",
  anything_else: "allowed",
};

const OBSERVATION: Json = {
  id: "seattle-2012-01-01-temp_max",
  dataset_version_id: "noaa-weather-20120101-20151231-0123456789abcdef",
  variable: "air_temperature_max",
  value: null,
  unit: "degC",
  observed_on: "2012-01-01",
  period_label: null,
  entity_id: "seattle",
  dimensions: {},
  quality_flags: [],
};

const TILE_DETAIL: Json = {
  id: TILE,
  variable: "air_temperature_max",
  unit: "degC",
  observed_on: "2003-01-01",
  width: 2,
  height: 2,
  crs: "EPSG:4326",
  transform: TRANSFORM,
  bbox: [111.975, -10.075, 112.075, -9.975],
  dataset_version_id: VERSION,
  cells: [24.2, null, 25, -3.5],
  source_window: [0, 0, 2, 2],
};

const PIXEL: Json = {
  datasetVersion: VERSION,
  tile: TILE,
  row: 0,
  col: 1,
  value: null,
  unit: "degC",
  variable: "air_temperature_max",
  date: "2003-01-01",
  crs: "EPSG:4326",
  transform: TRANSFORM,
};

const QUERY_RESULT: Json = {
  manifest: {
    datasetVersion: VERSION,
    datasetContentSha256: SHA,
    requestSha256: SHA,
    transformVersion: "tiles-v1",
    queryVersion: "native-cell-centers-v1",
    dataClass: "interpolated_observation",
    crs: "EPSG:4326",
    missingPolicy: "preserve",
    spatialSelection: "cell_center_in_bbox_west_south_inclusive_east_north_exclusive",
    rowCount: 1,
    sourceManifest: [{ sha256: SHA }],
    license: "CC-BY-4.0",
    attribution: "Queensland Government SILO",
    dataSha256: SHA,
  },
  data: [
    {
      date: "2003-01-01",
      longitude: 142.3,
      latitude: -29.9,
      variable: "air_temperature_max",
      value: 31.4,
      unit: "degC",
      tile: TILE,
      row: 3,
      col: 4,
    },
  ],
};

const HEALTH: Json = {
  service: "service-api",
  status: "ok",
  scope: "process",
  environment: "demo",
  paymentMode: "test",
  capabilities: { requestValidation: true, acquisition: false, payments: false },
};

const base = "http://localhost:3000";
const CAPABILITIES: Json = {
  apiVersion: "1.0.0",
  features: { directQuery: true, acquisition: false },
  query: {
    sources: ["silo"],
    variables: ["air_temperature_max"],
    dataClasses: ["interpolated_observation"],
    crs: ["EPSG:4326"],
    temporalResolutions: ["daily"],
    spatialResolutions: ["native"],
    units: { air_temperature_max: ["degC"] },
    formats: ["json", "csv"],
    defaultFormat: "json",
    delivery: "inline",
    missingPolicy: "preserve",
    access: "public_demo",
    limits: {
      maxDays: 31,
      maxCells: 10000,
      maxRequestBytes: 16384,
      maxResponseBytes: 1000000,
      defaultPageLimit: 100,
      maxPageLimit: 1000,
      maxCursorLength: 256,
      maxTileSide: 256,
      maxTileCells: 65536,
    },
    spatialSelection: "cell_center_in_bbox_west_south_inclusive_east_north_exclusive",
  },
  links: {
    self: `${base}/api/v1/capabilities`,
    datasets: `${base}/api/v1/datasets`,
    validate: `${base}/api/v1/data/validate`,
    resolve: `${base}/api/v1/data/resolve`,
    query: `${base}/api/v1/data/query`,
    openapi: `${base}/api/v1/openapi.json`,
  },
};

const ERROR: Json = {
  error: "invalid_request",
  message: "The request does not match the contract.",
  issues: [{ code: "out_of_range", path: ["region", "bbox", 0], message: "must be <= 180", hint: "extras allowed" }],
  requestId: "extras allowed",
};

const RESOLUTION: Json = {
  available: true,
  reason: "available",
  selection: { datasetVersion: VERSION, tileIds: [TILE], rowCount: 12 },
  acquisitionEnabled: false,
};

/** `value` with the property at `path` set to `to` (or deleted when `to` is DELETE), on a copy. */
const DELETE = Symbol("delete");
function edited(value: Json, path: (string | number)[], to: unknown): Json {
  const copy = clone(value);
  let node = copy as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1];
  if (to === DELETE) delete node[last];
  else node[last] = to;
  return copy;
}

type Case = [name: string, id: string, value: unknown, expected: Pick<Issue, "code" | "path">[]];
const resourceCases: Case[] = [
  ["valid Dataset passes (extras allowed)", "dataset.schema.json", DATASET, []],
  ["Dataset with bbox null passes", "dataset.schema.json", edited(DATASET, ["bbox"], null), []],
  ["Dataset without optional fields passes", "dataset.schema.json", edited(edited(DATASET, ["status"], DELETE), ["published_at"], DELETE), []],
  ["Dataset with empty source_manifest", "dataset.schema.json", edited(DATASET, ["source_manifest"], []), [{ code: "length", path: ["source_manifest"] }]],
  ["Dataset with an uppercase source hash", "dataset.schema.json", edited(DATASET, ["source_manifest", 0, "sha256"], SHA.toUpperCase()), [{ code: "pattern", path: ["source_manifest", 0, "sha256"] }]],
  ["Dataset with a source url that is not a URI", "dataset.schema.json", edited(DATASET, ["source_manifest", 0, "url"], "not a uri"), [{ code: "format", path: ["source_manifest", 0, "url"] }]],
  ["Dataset with access_level public", "dataset.schema.json", edited(DATASET, ["access_level"], "public"), [{ code: "enum", path: ["access_level"] }]],
  ["Dataset with period_end 2003-01-32", "dataset.schema.json", edited(DATASET, ["period_end"], "2003-01-32"), [{ code: "invalid_date", path: ["period_end"] }]],
  ["Dataset with a numeric variable unit", "dataset.schema.json", edited(DATASET, ["variables", "air_temperature_max"], 1), [{ code: "type", path: ["variables", "air_temperature_max"] }]],
  ["Dataset without metadata", "dataset.schema.json", edited(DATASET, ["metadata"], DELETE), [{ code: "required", path: ["metadata"] }]],
  ["Dataset with bbox of 3 numbers", "dataset.schema.json", edited(DATASET, ["bbox"], [1, 2, 3]), [{ code: "length", path: ["bbox"] }]],
  ["Dataset with the changes of its version passes", "dataset.schema.json", edited(DATASET, ["metadata"], { built_from: null, changes: { added: [["2003-01-01", "2003-01-31"]], revised: [], removed: [], exact: true }, citation: "x" }), []],
  ["Dataset with a change range of one date", "dataset.schema.json", edited(DATASET, ["metadata"], { changes: { added: [["2003-01-01"]], revised: [], removed: [], exact: true } }), [{ code: "length", path: ["metadata", "changes", "added", 0] }]],
  ["Dataset built from an id with a space", "dataset.schema.json", edited(DATASET, ["metadata", "built_from"], "not an id"), [{ code: "oneOf", path: ["metadata", "built_from"] }]],
  ["valid Observation passes (null value, null period_label)", "observation.schema.json", OBSERVATION, []],
  ["Observation with observed_on null passes", "observation.schema.json", edited(OBSERVATION, ["observed_on"], null), []],
  ["Observation with value '0'", "observation.schema.json", edited(OBSERVATION, ["value"], "0"), [{ code: "type", path: ["value"] }]],
  ["Observation without quality_flags", "observation.schema.json", edited(OBSERVATION, ["quality_flags"], DELETE), [{ code: "required", path: ["quality_flags"] }]],
  ["Observation with a bad dataset_version_id", "observation.schema.json", edited(OBSERVATION, ["dataset_version_id"], "a/b"), [{ code: "pattern", path: ["dataset_version_id"] }]],
  ["valid tile detail passes", "tile-detail.schema.json", TILE_DETAIL, []],
  ["tile detail is also valid tile metadata", "tile-metadata.schema.json", TILE_DETAIL, []],
  ["tile detail with 65536 cells passes", "tile-detail.schema.json", edited(TILE_DETAIL, ["cells"], new Array(65536).fill(null)), []],
  ["tile detail with 65537 cells", "tile-detail.schema.json", edited(TILE_DETAIL, ["cells"], new Array(65537).fill(1)), [{ code: "length", path: ["cells"] }]],
  ["tile detail with width 257", "tile-detail.schema.json", edited(TILE_DETAIL, ["width"], 257), [{ code: "out_of_range", path: ["width"] }]],
  ["tile detail with height 0", "tile-detail.schema.json", edited(TILE_DETAIL, ["height"], 0), [{ code: "out_of_range", path: ["height"] }]],
  ["tile detail with width 1.5", "tile-detail.schema.json", edited(TILE_DETAIL, ["width"], 1.5), [{ code: "type", path: ["width"] }]],
  ["tile detail with a 5-number transform", "tile-detail.schema.json", edited(TILE_DETAIL, ["transform"], TRANSFORM.slice(0, 5)), [{ code: "length", path: ["transform"] }]],
  ["tile detail with a string cell", "tile-detail.schema.json", edited(TILE_DETAIL, ["cells", 2], "25"), [{ code: "type", path: ["cells", 2] }]],
  ["tile detail with source_window beyond 2^53-1", "tile-detail.schema.json", edited(TILE_DETAIL, ["source_window", 1], 9007199254740992), [{ code: "out_of_range", path: ["source_window", 1] }]],
  ["tile detail with a fractional source_window", "tile-detail.schema.json", edited(TILE_DETAIL, ["source_window", 0], 0.5), [{ code: "type", path: ["source_window", 0] }]],
  ["tile detail without dataset_version_id", "tile-detail.schema.json", edited(TILE_DETAIL, ["dataset_version_id"], DELETE), [{ code: "required", path: ["dataset_version_id"] }]],
  ["tile detail without observed_on (from the metadata part)", "tile-detail.schema.json", edited(TILE_DETAIL, ["observed_on"], DELETE), [{ code: "required", path: ["observed_on"] }]],
  ["valid pixel sample passes", "pixel-sample.schema.json", PIXEL, []],
  ["pixel sample with an extra property", "pixel-sample.schema.json", edited(PIXEL, ["quality"], "good"), [{ code: "additional_property", path: ["quality"] }]],
  ["pixel sample with row -1", "pixel-sample.schema.json", edited(PIXEL, ["row"], -1), [{ code: "out_of_range", path: ["row"] }]],
  ["pixel sample with date 2003-13-01", "pixel-sample.schema.json", edited(PIXEL, ["date"], "2003-13-01"), [{ code: "invalid_date", path: ["date"] }]],
  ["valid query result passes", "query-result.schema.json", QUERY_RESULT, []],
  ["query result with a wrong queryVersion", "query-result.schema.json", edited(QUERY_RESULT, ["manifest", "queryVersion"], "v2"), [{ code: "enum", path: ["manifest", "queryVersion"] }]],
  ["query result with an extra manifest field", "query-result.schema.json", edited(QUERY_RESULT, ["manifest", "extra"], 1), [{ code: "additional_property", path: ["manifest", "extra"] }]],
  ["query result without dataSha256", "query-result.schema.json", edited(QUERY_RESULT, ["manifest", "dataSha256"], DELETE), [{ code: "required", path: ["manifest", "dataSha256"] }]],
  ["query result with an extra row field", "query-result.schema.json", edited(QUERY_RESULT, ["data", 0, "quality"], 1), [{ code: "additional_property", path: ["data", 0, "quality"] }]],
  ["query result row with value 'NaN'", "query-result.schema.json", edited(QUERY_RESULT, ["data", 0, "value"], "NaN"), [{ code: "type", path: ["data", 0, "value"] }]],
  ["query result with an extra top-level field", "query-result.schema.json", edited(QUERY_RESULT, ["links"], {}), [{ code: "additional_property", path: ["links"] }]],
  ["query result row with value null passes", "query-result.schema.json", edited(QUERY_RESULT, ["data", 0, "value"], null), []],
  ["valid resolution passes", "resolution.schema.json", RESOLUTION, []],
  ["unavailable resolution with null selection passes", "resolution.schema.json", { available: false, reason: "request_too_large", selection: null, acquisitionEnabled: false }, []],
  ["resolution with rowCount 0", "resolution.schema.json", edited(RESOLUTION, ["selection", "rowCount"], 0), [{ code: "out_of_range", path: ["selection", "rowCount"] }]],
  ["resolution with acquisitionEnabled true", "resolution.schema.json", edited(RESOLUTION, ["acquisitionEnabled"], true), [{ code: "enum", path: ["acquisitionEnabled"] }]],
  ["resolution with an unknown reason", "resolution.schema.json", edited(RESOLUTION, ["reason"], "busy"), [{ code: "enum", path: ["reason"] }]],
  ["valid health passes", "health.schema.json", HEALTH, []],
  ["health with status degraded", "health.schema.json", edited(HEALTH, ["status"], "degraded"), [{ code: "enum", path: ["status"] }]],
  ["health with an extra field", "health.schema.json", edited(HEALTH, ["uptime"], 1), [{ code: "additional_property", path: ["uptime"] }]],
  ["health without capabilities.payments", "health.schema.json", edited(HEALTH, ["capabilities", "payments"], DELETE), [{ code: "required", path: ["capabilities", "payments"] }]],
  ["valid capabilities passes", "capabilities.schema.json", CAPABILITIES, []],
  ["capabilities with an extra query field", "capabilities.schema.json", edited(CAPABILITIES, ["query", "extra"], 1), [{ code: "additional_property", path: ["query", "extra"] }]],
  ["capabilities with a relative link", "capabilities.schema.json", edited(CAPABILITIES, ["links", "openapi"], "/api/v1/openapi.json"), [{ code: "format", path: ["links", "openapi"] }]],
  ["capabilities with a string feature", "capabilities.schema.json", edited(CAPABILITIES, ["features", "acquisition"], "no"), [{ code: "type", path: ["features", "acquisition"] }]],
  ["capabilities without a limit", "capabilities.schema.json", edited(CAPABILITIES, ["query", "limits", "maxDays"], DELETE), [{ code: "required", path: ["query", "limits", "maxDays"] }]],
  ["valid error passes (extras allowed)", "error.schema.json", ERROR, []],
  ["error with a boolean in an issue path", "error.schema.json", edited(ERROR, ["issues", 0, "path", 1], true), [{ code: "type", path: ["issues", 0, "path", 1] }]],
  ["error with a fractional index in an issue path", "error.schema.json", edited(ERROR, ["issues", 0, "path", 2], 0.5), [{ code: "type", path: ["issues", 0, "path", 2] }]],
  ["error issue without message", "error.schema.json", edited(ERROR, ["issues", 0, "message"], DELETE), [{ code: "required", path: ["issues", 0, "message"] }]],
  ["error without error", "error.schema.json", { message: "x" }, [{ code: "required", path: ["error"] }]],
];

const Resources = suite("resources");
for (const [name, id, value, expected] of resourceCases) {
  Resources(`${id.replace(".schema.json", "")} - ${name}`, () => {
    assert.equal(codesAndPaths(check(id, value).issues), expected);
  });
}
Resources.run();

const PAGE_CASES: Case[] = [
  ["catalog response passes", "catalog-response.schema.json", { datasets: [DATASET], nextCursor: null }, []],
  ["catalog response without nextCursor", "catalog-response.schema.json", { datasets: [DATASET] }, [{ code: "required", path: ["nextCursor"] }]],
  ["catalog response with a broken dataset", "catalog-response.schema.json", { datasets: [edited(DATASET, ["id"], "x y")], nextCursor: null }, [{ code: "pattern", path: ["datasets", 0, "id"] }]],
  ["dataset response passes", "dataset-response.schema.json", { dataset: DATASET }, []],
  ["observations page passes", "observations-page.schema.json", { datasetVersion: VERSION, observations: [OBSERVATION], nextCursor: "100-0123456789ab" }, []],
  ["last observations page passes", "observations-page.schema.json", { datasetVersion: VERSION, observations: [], nextCursor: null }, []],
  ["observations page with a 257-char cursor", "observations-page.schema.json", { datasetVersion: VERSION, observations: [], nextCursor: "c".repeat(257) }, [{ code: "length", path: ["nextCursor"] }]],
  ["observations page without nextCursor", "observations-page.schema.json", { datasetVersion: VERSION, observations: [] }, [{ code: "required", path: ["nextCursor"] }]],
  ["layers page passes", "layers-page.schema.json", { dataset: DATASET, tiles: [TILE_DETAIL], nextCursor: null }, []],
  ["layers page with a broken tile", "layers-page.schema.json", { dataset: DATASET, tiles: [edited(TILE_DETAIL, ["crs"], 4326)], nextCursor: null }, [{ code: "type", path: ["tiles", 0, "crs"] }]],
  ["tile response passes", "tile-response.schema.json", { datasetVersion: VERSION, tile: TILE_DETAIL }, []],
  ["tile response with 65537 cells", "tile-response.schema.json", { datasetVersion: VERSION, tile: edited(TILE_DETAIL, ["cells"], new Array(65537).fill(null)) }, [{ code: "length", path: ["tile", "cells"] }]],
  ["validation result passes", "validation.schema.json", { valid: true, request: { ...REQUEST, format: "json" }, coverageVerified: false, acquisitionEnabled: false, message: "ok" }, []],
  ["validation result with coverageVerified true", "validation.schema.json", { valid: true, request: REQUEST, coverageVerified: true, acquisitionEnabled: false, message: "ok" }, [{ code: "enum", path: ["coverageVerified"] }]],
  ["acquisition request with source auto and precipitation passes", "acquisition-request.schema.json", { ...REQUEST, variables: ["precipitation_amount"], units: { precipitation_amount: "mm" }, source_preference: "auto" }, []],
  ["acquisition request with two units", "acquisition-request.schema.json", { ...REQUEST, units: { air_temperature_max: "degC", precipitation_amount: "mm" } }, [{ code: "length", path: ["units"] }]],
];

const SHA2 = "b".repeat(64);
const REF = { sha256: SHA, size: 10 };
const FILE_ENTRY = { path: `objects/aa/${SHA}.json`, size: 10, sha256: SHA };
const COVERAGE = { first: "2003-01-01", last: "2003-01-31", gaps: [], windowAll: [0, 0, 841, 681], windowAny: [0, 0, 841, 681] };
const NODE = { key: "2003", days: 31, tiles: 372, content: SHA2, coverage: COVERAGE, ref: REF };
const RASTER_INDEX = {
  format: "climate-dist-4",
  kind: "raster",
  variable: "air_temperature_max",
  unit: "degC",
  crs: "EPSG:4326",
  tileSide: 256,
  blockSide: 64,
  days: 31,
  tiles: 372,
  coverage: COVERAGE,
  years: [NODE],
  series: [],
};
const DAY = { date: "2003-01-01", window: [0, 0, 841, 681], cells: SHA2, missing: 0, piece: REF, header: REF, sources: [{ sha256: SHA, member_path: "2003/20030101.max_temp.tif" }] };
const LEAF_RECORD = { ...DATASET, published_at: "2024-01-01T00:00:00Z", metadata: { index: { path: `objects/aa/${SHA}.json`, sha256: SHA, size: 10, kind: "raster" } } };
const POINTER = { format: "climate-dist-4", catalog: REF, manifest: REF, candidates: [{ id: VERSION, published_at: "2024-01-01T00:00:00Z", coverage: COVERAGE, record: LEAF_RECORD }] };
const DIST_CASES: Case[] = [
  ["catalog.json passes", "dist-catalog-pointer.schema.json", POINTER, []],
  ["catalog.json of another format", "dist-catalog-pointer.schema.json", { ...POINTER, format: "climate-dist-1" }, [{ code: "enum", path: ["format"] }]],
  ["catalog.json without candidates", "dist-catalog-pointer.schema.json", edited(POINTER, ["candidates"], DELETE), [{ code: "required", path: ["candidates"] }]],
  ["catalog.json candidate without its record", "dist-catalog-pointer.schema.json", edited(POINTER, ["candidates", 0, "record"], DELETE), [{ code: "required", path: ["candidates", 0, "record"] }]],
  ["catalog.json with a 3-number window", "dist-catalog-pointer.schema.json", edited(POINTER, ["candidates", 0, "coverage", "windowAll"], [0, 0, 841]), [{ code: "length", path: ["candidates", 0, "coverage", "windowAll"] }]],
  ["catalog leaf passes", "dist-catalog-leaf.schema.json", { datasets: [LEAF_RECORD] }, []],
  ["catalog leaf record without its index", "dist-catalog-leaf.schema.json", { datasets: [edited(LEAF_RECORD, ["metadata", "index"], DELETE)] }, [{ code: "required", path: ["datasets", 0, "metadata", "index"] }]],
  ["catalog leaf record without status", "dist-catalog-leaf.schema.json", { datasets: [edited(LEAF_RECORD, ["status"], DELETE)] }, [{ code: "required", path: ["datasets", 0, "status"] }]],
  ["manifest passes", "dist-manifest.schema.json", { format: "climate-dist-4", previous: null, files: [FILE_ENTRY] }, []],
  ["manifest with a negative size", "dist-manifest.schema.json", { format: "climate-dist-4", previous: REF, files: [{ ...FILE_ENTRY, size: -1 }] }, [{ code: "out_of_range", path: ["files", 0, "size"] }]],
  ["manifest entry with an extra field", "dist-manifest.schema.json", { format: "climate-dist-4", previous: null, files: [{ ...FILE_ENTRY, mtime: 1 }] }, [{ code: "additional_property", path: ["files", 0, "mtime"] }]],
  ["raster index passes", "dist-raster-index.schema.json", RASTER_INDEX, []],
  ["raster index with another block side", "dist-raster-index.schema.json", { ...RASTER_INDEX, blockSide: 32 }, [{ code: "enum", path: ["blockSide"] }]],
  ["raster index node without coverage", "dist-raster-index.schema.json", edited(RASTER_INDEX, ["years", 0, "coverage"], DELETE), [{ code: "required", path: ["years", 0, "coverage"] }]],
  ["month page passes", "dist-month-page.schema.json", { format: "climate-dist-4", month: "2003-01", days: [DAY] }, []],
  ["month page day without sources", "dist-month-page.schema.json", { format: "climate-dist-4", month: "2003-01", days: [{ ...DAY, sources: [] }] }, [{ code: "length", path: ["days", 0, "sources"] }]],
  ["year page with 13 months", "dist-year-page.schema.json", { format: "climate-dist-4", year: "2003", months: new Array(13).fill({ ...NODE, key: "2003-01" }) }, [{ code: "length", path: ["months"] }]],
  ["observation index passes", "dist-observation-index.schema.json", { format: "climate-dist-4", kind: "observation", count: 1, chunks: [REF] }, []],
  ["observation index without count", "dist-observation-index.schema.json", { format: "climate-dist-4", kind: "observation", chunks: [] }, [{ code: "required", path: ["count"] }]],
];

const Envelopes = suite("envelopes and dist files");
for (const [name, id, value, expected] of [...PAGE_CASES, ...DIST_CASES]) {
  Envelopes(`${id.replace(".schema.json", "")} - ${name}`, () => {
    assert.equal(codesAndPaths(check(id, value).issues), expected);
  });
}
Envelopes.run();

const Api = suite("validate.ts");

Api("schemas - every file is keyed by its bare $id and carries a title and description", () => {
  const ids = Object.keys(schemas);
  for (const id of [
    "common.schema.json", "dataset.schema.json", "observation.schema.json", "tile-metadata.schema.json",
    "tile-detail.schema.json", "pixel-sample.schema.json", "data-request.schema.json", "validation.schema.json",
    "resolution.schema.json", "query-result.schema.json", "health.schema.json", "capabilities.schema.json",
    "error.schema.json", "catalog-response.schema.json", "dataset-response.schema.json",
    "observations-page.schema.json", "layers-page.schema.json", "tile-response.schema.json",
    "dist-catalog-pointer.schema.json", "dist-catalog-root.schema.json", "dist-catalog-leaf.schema.json",
    "dist-manifest.schema.json", "dist-raster-index.schema.json", "dist-year-page.schema.json", "dist-month-page.schema.json",
    "dist-observation-index.schema.json", "dist-common.schema.json",
    "acquisition-request.schema.json",
  ]) {
    assert.ok(ids.includes(id), `missing ${id}`);
  }
  for (const [id, schema] of Object.entries(schemas)) {
    const s = schema as Json;
    assert.is(s.$id, id);
    assert.is(s.$schema, "https://json-schema.org/draft/2020-12/schema");
    assert.type(s.title, "string", `${id} title`);
    assert.type(s.description, "string", `${id} description`);
    validatorFor(id);
  }
});

Api("schemas - every schema is valid JSON Schema 2020-12 (the server skips this check at start)", () => {
  const strict = new Ajv2020({ ...AJV_OPTIONS, validateSchema: true });
  addFormats.default(strict);
  for (const schema of Object.values(schemas)) strict.addSchema(schema);
  for (const id of Object.keys(schemas)) assert.type(strict.getSchema(id), "function", id);
  assert.throws(() => strict.addSchema({ $id: "broken.schema.json", type: "nonsense" }), /schema is invalid/);
});

Api("validatorFor - caches and rejects unknown ids", () => {
  assert.is(validatorFor("dataset.schema.json"), validatorFor("dataset.schema.json"));
  assert.throws(() => validatorFor("nope.schema.json"), /no schema with \$id "nope.schema.json"/);
});

Api("assertValid - passes a valid value and throws naming what and the issues", () => {
  assertValid("dist-manifest.schema.json", { format: "climate-dist-4", previous: null, files: [] }, "manifest");
  try {
    assertValid("dist-manifest.schema.json", { format: "climate-dist-4", previous: null, files: [{ ...FILE_ENTRY, size: -1 }] }, "manifests/abc.json");
    assert.unreachable("should throw");
  } catch (err) {
    assert.instance(err, Error);
    assert.match((err as Error).message, /^manifests\/abc\.json: /);
    assert.match((err as Error).message, /files\[0\]\.size: -1 is out of range; it must be an integer of at least 0 \(out_of_range\)/);
  }
});

Api("toIssues - no errors is no issues", () => {
  assert.equal(toIssues(null), []);
  assert.equal(toIssues(undefined), []);
  assert.equal(toIssues([]), []);
});

Api("toIssues - without the data, digit-only segments are indexes", () => {
  const validate = validatorFor("data-request.schema.json");
  validate(request((r) => (r.region.bbox = [200, -30, 142.4, -29.9])));
  assert.equal(codesAndPaths(toIssues(validate.errors)), [{ code: "out_of_range", path: ["region", "bbox", 0] }]);
});

Api("toIssues - with the data, a digit-only object key stays a string", () => {
  const validate = validatorFor("dataset.schema.json");
  const value = edited(DATASET, ["variables"], { "0": 5 });
  validate(value);
  assert.equal(codesAndPaths(toIssues(validate.errors, value)), [{ code: "type", path: ["variables", "0"] }]);
});

Api("toIssues - anyOf/oneOf branch noise collapses to the useful issues", () => {
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  const validate = ajv.compile({
    type: "object",
    properties: {
      a: { anyOf: [{ type: "string" }, { type: "integer" }] },
      b: {
        oneOf: [
          { type: "object", required: ["x"], properties: { x: { type: "string" } } },
          { type: "null" },
        ],
      },
    },
  });
  const value = { a: true, b: { x: 1 } };
  validate(value);
  assert.equal(toIssues(validate.errors, value), [
    { code: "type", path: ["a"], message: "must be string or integer" },
    { code: "type", path: ["b", "x"], message: "must be string" },
  ]);
});

Api.run();
