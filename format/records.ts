// Dataset records: their fields (docs/contract.md §1.2), the version id, and which records may answer a query.

import type { Ref } from "./objects.js";
import { variableOfRecord } from "./variables.js";

export const QUERY_VARIABLE = "air_temperature_max";
export const QUERY_UNIT = "degC";
export const QUERY_SOURCE = "silo";
export const QUERY_DATA_CLASS = "interpolated_observation";

/** Dataset record fields (docs/contract.md §1.2); the schema is schemas/dataset.schema.json. */
export interface Dataset {
  id: string;
  dataset_key: string;
  title: string;
  content_sha256: string;
  source_manifest: SourceEntry[];
  transform_version: string;
  data_class: string;
  variables: Record<string, string>;
  temporal_resolution: string;
  spatial_support: Record<string, unknown>;
  bbox: [number, number, number, number] | null;
  period_start: string;
  period_end: string;
  license: string;
  attribution: string;
  access_level: "demo" | "paid" | "restricted";
  metadata: DatasetMetadata;
  status?: "staging" | "published" | "retired";
  published_at?: string | null;
  created_at?: string;
}

export interface DatasetMetadata {
  /** the version's index root: everything a reader needs below the record */
  index: Ref & { path: string; kind: "raster" | "observation" };
  [extra: string]: unknown;
}

export interface SourceEntry {
  sha256: string;
  url?: string;
  doi?: string;
  member_path?: string;
  license?: string;
  [extra: string]: unknown;
}

/** Version id: {dataset_key}-{firstdate}-{lastdate}-{16 hex of the content hash} (docs/contract.md §5). */
export function versionId(datasetKey: string, first: string, last: string, contentSha256: string): string {
  return `${datasetKey}-${first.replaceAll("-", "")}-${last.replaceAll("-", "")}-${contentSha256.slice(0, 16)}`;
}

/**
 * A catalog candidate (docs/format.md §3): published demo data of the SILO source, interpolated observations,
 * daily, one variable of format/variables.ts in its unit. The newest candidates of each variable answer requests
 * that pin no version (the query route's, the series route's, the Zarr view's `latest`).
 */
export function isCandidate(record: Dataset): boolean {
  const variable = variableOfRecord(record);
  return (
    record.status === "published" &&
    record.access_level === "demo" &&
    record.metadata?.source === QUERY_SOURCE &&
    record.data_class === QUERY_DATA_CLASS &&
    record.temporal_resolution === "daily" &&
    variable !== undefined &&
    record.variables[variable.name] === variable.unit
  );
}

/**
 * What may answer a direct query, from the catalog record alone (docs/contract.md §3.4): a candidate of
 * air_temperature_max in degC.
 */
export function isQueryCompatible(record: Dataset): boolean {
  return isCandidate(record) && record.variables[QUERY_VARIABLE] === QUERY_UNIT;
}
