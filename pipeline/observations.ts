// Observation stage: the NOAA weather table of vega-datasets -> one observation version's pages and record.

import { readFile } from "node:fs/promises";
import { type Dataset, datasetPath, indexPath, sha256Hex, versionId } from "../schemas/dist.js";
import { assertValid } from "../schemas/validate.js";
import { NOAA_WEATHER } from "../sources/noaa-weather.js";
import { isCalendarDate } from "../schemas/dates.js";
import { PublishError } from "./errors.js";
import type { DistWriter } from "./files.js";
import { writePages } from "./pages.js";

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

export interface ObservationSummary {
  dataset: Dataset;
  observations: number;
  missing: number;
}

export async function publishObservations(writer: DistWriter): Promise<ObservationSummary> {
  const { resource, packageVersion } = await readDescription();
  const file = NOAA_WEATHER.csvPath;
  const bytes = await readFile(file);
  const lines = bytes.toString("utf8").split(/\r?\n/).filter((l) => l !== "");
  const header = lines[0].split(",");
  const expected = ["location", "date", ...Object.keys(NOAA_WEATHER.columns), NOAA_WEATHER.categoryColumn];
  const absent = expected.filter((c) => !header.includes(c));
  if (absent.length) throw new PublishError(file, "observations", `header "${lines[0]}" lacks ${absent.join(", ")}`);
  const at = (name: string) => header.indexOf(name);

  const rows: Omit<Observation, "dataset_version_id">[] = [];
  const entities = new Map<string, string>();
  for (let n = 1; n < lines.length; n++) {
    const fields = lines[n].split(",");
    if (fields.length !== header.length) throw new PublishError(file, "observations", `line ${n + 1}: ${fields.length} fields, expected ${header.length}`);
    const location = fields[at("location")];
    const date = fields[at("date")];
    if (!isCalendarDate(date)) throw new PublishError(file, "observations", `line ${n + 1}: "${date}" is not a date`);
    const entity = slug(location);
    entities.set(entity, location);
    const category = fields[at(NOAA_WEATHER.categoryColumn)];
    for (const [column, spec] of Object.entries(NOAA_WEATHER.columns)) {
      rows.push({
        id: `${entity}-${date}-${spec.variable}`,
        variable: spec.variable,
        value: parseValue(fields[at(column)], file, n + 1, column),
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
  const dates = rows.map((r) => r.observed_on).sort();
  const first = dates[0];
  const last = dates[dates.length - 1];

  // content_sha256: transform version and every observation, canonically (fixed key order), in id order.
  const contentSha256 = sha256Hex(`${OBSERVATION_TRANSFORM_VERSION}\n${rows.map((r) => JSON.stringify(r)).join("\n")}\n`);
  const id = versionId(NOAA_WEATHER.datasetKey, first, last, contentSha256);
  const observations: Observation[] = rows.map(({ id: obsId, ...rest }) => ({ id: obsId, dataset_version_id: id, ...rest }));

  const license = resource.licenses?.map((l) => `${l.title} (${l.path})`).join("; ") ?? "unknown";
  const origin = resource.sources?.map((s) => s.title).join("; ") ?? "NOAA";
  const variables = Object.fromEntries(Object.values(NOAA_WEATHER.columns).map((c) => [c.variable, c.unit]));
  const dataset: Dataset = {
    id,
    dataset_key: NOAA_WEATHER.datasetKey,
    title: `NOAA daily weather observations, Seattle and New York, ${first} to ${last}`,
    content_sha256: contentSha256,
    source_manifest: [
      {
        sha256: sha256Hex(bytes),
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
      entities: [...entities].sort().map(([entity_id, name]) => ({ entity_id, name })),
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
      observations: observations.length,
      missing_values: observations.filter((o) => o.value === null).length,
      dimensions: { location: "station name as given", [NOAA_WEATHER.categoryColumn]: "categorical weather type of that station-day" },
    },
  };
  assertValid("dataset.schema.json", dataset, datasetPath(id));
  await writer.write(datasetPath(id), JSON.stringify({ dataset }));
  const index = { kind: "observation" as const, observationCount: observations.length };
  assertValid("dist-index.schema.json", index, indexPath(id));
  await writer.write(indexPath(id), JSON.stringify(index));
  await writePages(writer, id, "observations", observations, (items, nextCursor) => ({ datasetVersion: id, observations: items, nextCursor }), "observations-page.schema.json");
  await writePages(writer, id, "layers", [], (items, nextCursor) => ({ dataset, tiles: items, nextCursor }), "layers-page.schema.json");
  return { dataset, observations: observations.length, missing: dataset.metadata.missing_values as number };
}
