// Observation stage: the NOAA weather table of vega-datasets -> one observation version's chunks, index and record.
// Every publish runs it, and the table almost never changes: a dist holding a version made from these very bytes
// by this transform is found by the bytes' sha256 alone, before the 11,688 observations are parsed or encoded.

import { readFile } from "node:fs/promises";
import { csvParse } from "d3-dsv";
import { isCalendarDate } from "../../format/dates.js";
import { sha256Hex } from "../../format/hash.js";
import { DIST_FORMAT, type Ref, objectPath } from "../../format/objects.js";
import { type Dataset, versionId } from "../../format/records.js";
import { type ObservationIndex, PAGE_SIZE } from "../../format/version-index.js";
import { assertValid } from "../../schemas/validate.js";
import { NOAA_WEATHER } from "../../sources/noaa-weather.js";
import { PublishError } from "../errors.js";
import type { ObjectStore } from "../store/objects.js";

export const OBSERVATION_TRANSFORM_VERSION = "noaa-weather-observations-v1";

interface Observation {
  id: string;
  dataset_version_id: string;
  variable: string;
  value: number | null;
  unit: string;
  observed_on: string;
  period_label: null;
  entity_id: string;
  dimensions: Record<string, string>;
  quality_flags: unknown[];
}

interface PackageResource {
  name: string;
  path: string;
  description?: string;
  licenses?: { title?: string; path?: string }[];
  sources?: { title?: string; path?: string }[];
  schema?: { fields?: { name: string; description?: string }[] };
}

function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
}

/** The table's resource in datapackage.json, checked against the units our descriptor assumes. */
async function readDescription(): Promise<{ resource: PackageResource; packageVersion: string }> {
  const file = NOAA_WEATHER.datapackagePath;
  const pkg = JSON.parse(await readFile(file, "utf8")) as { version: string; resources: PackageResource[] };
  const resource = pkg.resources.find((r) => r.name === NOAA_WEATHER.resourceName);
  if (!resource) throw new PublishError(file, "observations", `no resource named "${NOAA_WEATHER.resourceName}"`);
  for (const [column, spec] of Object.entries(NOAA_WEATHER.columns)) {
    const field = resource.schema?.fields?.find((f) => f.name === column);
    if (!field?.description?.includes(spec.stated)) {
      throw new PublishError(file, "observations", `column "${column}" is no longer described in ${spec.stated}; check its unit before publishing`);
    }
  }
  return { resource, packageVersion: pkg.version };
}

function parseValue(text: string, file: string, line: number, column: string): number | null {
  if (text === "") return null; // missing stays null, never 0
  const value = Number(text);
  if (!Number.isFinite(value)) throw new PublishError(file, "observations", `line ${line}: ${column} "${text}" is not a number`);
  return value;
}

export interface ObservationVersion {
  record: Dataset;
  observations: number;
}

/** What the stage asks of the dist it publishes into. */
export interface PublishedTables {
  /** the first of the dist's records (in id order) that `keep` accepts, if any */
  first: (keep: (record: Dataset) => boolean) => Promise<Dataset | null>;
  /** the record of a version id, if the dist holds it */
  find: (id: string) => Promise<Dataset | null>;
}

/** The stage's outcome: a new version written, or the dist's version of the very same table. */
export type ObservationStage = { written: ObservationVersion } | { published: Dataset };

/** The variables and units a record of the table states: the descriptor's (sources/noaa-weather.ts). */
function tableVariables(): Record<string, string> {
  return Object.fromEntries(Object.values(NOAA_WEATHER.columns).map((c) => [c.variable, c.unit]));
}

/**
 * Whether a published record is the version these bytes make: the same source sha256, transform and variables give
 * the same observations, hence the same content hash and id (docs/format.md §6), without parsing a row.
 */
function isSameTable(record: Dataset, sourceSha256: string): boolean {
  const variables = tableVariables();
  return (
    record.transform_version === OBSERVATION_TRANSFORM_VERSION &&
    record.source_manifest.length === 1 &&
    record.source_manifest[0].sha256 === sourceSha256 &&
    JSON.stringify(record.variables) === JSON.stringify(variables)
  );
}

type Row = Omit<Observation, "dataset_version_id">;

/** The table's rows in id order, each checked, and the stations (entity id to name) they come from. */
function readRows(text: string, file: string): { rows: Row[]; entities: Map<string, string> } {
  const table = csvParse(text);
  const expected = ["location", "date", ...Object.keys(NOAA_WEATHER.columns), NOAA_WEATHER.categoryColumn];
  const absent = expected.filter((c) => !table.columns.includes(c));
  if (absent.length) throw new PublishError(file, "observations", `header "${table.columns.join(",")}" lacks ${absent.join(", ")}`);
  const rows: Row[] = [];
  const entities = new Map<string, string>();
  for (const [n, fields] of table.entries()) {
    const line = n + 2; // the header is line 1
    const location = fields.location ?? "";
    const date = fields.date ?? "";
    if (!isCalendarDate(date)) throw new PublishError(file, "observations", `line ${line}: "${date}" is not a date`);
    const entity = slug(location);
    entities.set(entity, location);
    const category = fields[NOAA_WEATHER.categoryColumn];
    for (const [column, spec] of Object.entries(NOAA_WEATHER.columns)) {
      rows.push({
        id: `${entity}-${date}-${spec.variable}`,
        variable: spec.variable,
        value: parseValue(fields[column] ?? "", file, line, column),
        unit: spec.unit,
        observed_on: date,
        period_label: null,
        entity_id: entity,
        dimensions: { location, ...(category ? { [NOAA_WEATHER.categoryColumn]: category } : {}) },
        quality_flags: [],
      });
    }
  }
  rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (let i = 1; i < rows.length; i++) {
    if (rows[i].id === rows[i - 1].id) throw new PublishError(file, "observations", `two rows for ${rows[i].id}`);
  }
  return { rows, entities };
}

/**
 * The table as a version: its record and, written to the store, its chunks and index. A dist holding the version of
 * these very bytes is found by their sha256 and nothing is parsed; else the id is computed first, so a table whose
 * bytes changed but whose observations did not is found published too, and nothing is written.
 */
export async function publishObservations(store: ObjectStore, published: PublishedTables): Promise<ObservationStage> {
  // the package's description is read and its units checked every time (a small JSON file): a newer package
  // describing a unit otherwise is refused before anything is published, as it always was
  const description = await readDescription();
  const file = NOAA_WEATHER.csvPath;
  const bytes = await readFile(file);
  const sourceSha256 = sha256Hex(bytes);
  const same = await published.first((r) => r.dataset_key === NOAA_WEATHER.datasetKey && isSameTable(r, sourceSha256));
  if (same) return { published: same };
  const { rows, entities } = readRows(bytes.toString("utf8"), file);
  const dates = rows.map((r) => r.observed_on).sort();
  // content_sha256: transform version and every observation, canonically (fixed key order), in id order.
  const contentSha256 = sha256Hex(`${OBSERVATION_TRANSFORM_VERSION}\n${rows.map((r) => JSON.stringify(r)).join("\n")}\n`);
  const id = versionId(NOAA_WEATHER.datasetKey, dates[0], dates[dates.length - 1], contentSha256);
  const existing = await published.find(id);
  if (existing) return { published: existing };
  const observations: Observation[] = rows.map(({ id: obsId, ...rest }) => ({ id: obsId, dataset_version_id: id, ...rest }));
  const chunks = [];
  store.expect("observations", Math.ceil(observations.length / PAGE_SIZE));
  for (let i = 0; i < observations.length; i += PAGE_SIZE) chunks.push(await store.put(JSON.stringify(observations.slice(i, i + PAGE_SIZE)), "json"));
  const index: ObservationIndex = { format: DIST_FORMAT, kind: "observation", count: observations.length, chunks };
  assertValid("dist-observation-index.schema.json", index, "observation index");
  const indexRef = await store.putJson(index);
  const period = { first: dates[0], last: dates[dates.length - 1] };
  const record = describeTable({ id, contentSha256, sourceSha256, period, entities, observations, indexRef, ...description });
  assertValid("dataset.schema.json", record, `record of ${id}`);
  return { written: { record, observations: observations.length } };
}

interface TableVersion {
  id: string;
  contentSha256: string;
  period: { first: string; last: string };
  sourceSha256: string;
  entities: Map<string, string>;
  observations: Observation[];
  indexRef: Ref;
  resource: PackageResource;
  packageVersion: string;
}

/** The catalog record of the table's version: where it came from, its license and its stations. */
function describeTable(v: TableVersion): Dataset {
  const { resource, packageVersion } = v;
  const { first, last } = v.period;
  const license = resource.licenses?.map((l) => `${l.title} (${l.path})`).join("; ") ?? "unknown";
  const origin = resource.sources?.map((s) => s.title).join("; ") ?? "NOAA";
  const variables = tableVariables();
  return {
    id: v.id,
    dataset_key: NOAA_WEATHER.datasetKey,
    title: `NOAA daily weather observations, Seattle and New York, ${first} to ${last}`,
    content_sha256: v.contentSha256,
    source_manifest: [
      {
        sha256: v.sourceSha256,
        url: `https://www.npmjs.com/package/${NOAA_WEATHER.packageName}/v/${packageVersion}`,
        member_path: `${NOAA_WEATHER.packageName}@${packageVersion}/${NOAA_WEATHER.memberPath}`,
        license,
        package: NOAA_WEATHER.packageName,
        package_version: packageVersion,
        origin: resource.sources ?? [],
      },
    ],
    transform_version: OBSERVATION_TRANSFORM_VERSION,
    data_class: NOAA_WEATHER.dataClass,
    variables,
    temporal_resolution: NOAA_WEATHER.temporalResolution,
    spatial_support: {
      type: "stations",
      entities: [...v.entities].sort().map(([entity_id, name]) => ({ entity_id, name })),
    },
    bbox: null,
    period_start: first,
    period_end: last,
    license,
    attribution: `${origin}, via the ${NOAA_WEATHER.packageName} npm package ${packageVersion} (${NOAA_WEATHER.memberPath}). ${resource.description?.replace(/\s+/g, " ").trim() ?? ""}`.trim(),
    access_level: "demo",
    metadata: {
      synthetic: false,
      description: resource.description ?? "",
      observations: v.observations.length,
      missing_values: v.observations.filter((o) => o.value === null).length,
      dimensions: { location: "station name as given", [NOAA_WEATHER.categoryColumn]: "categorical weather type of that station-day" },
      index: { path: objectPath(v.indexRef.sha256, "json"), sha256: v.indexRef.sha256, size: v.indexRef.size, kind: "observation" },
    },
  };
}
