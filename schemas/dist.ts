// The dist/ directory: its path grammar, file shapes, hashing and cursor rules, shared by writer and reader.
//
// dist/
//   catalog.json                          the one mutable file, replaced atomically and last (CatalogFile)
//   manifests/<sha256>.json               every other file with size and sha256 (Manifest), immutable
//   versions/<id>/dataset.json            {dataset: Dataset}, the inspect body
//   versions/<id>/index.json              VersionIndex: what the server needs to answer without scanning
//   versions/<id>/cells.f32               raster only: float32 LE cells, one window block per date, NaN = missing
//   versions/<id>/tiles/<tile>.json       raster only: {datasetVersion, tile: RasterTile detail}, the ?tile= body
//   versions/<id>/layers/<page>.json      tile metadata pages: {dataset, tiles, nextCursor}, PAGE_SIZE items
//   versions/<id>/observations/<page>.json observation pages: {datasetVersion, observations, nextCursor}
// <page> is "first" for the first page, else the cursor that leads to it, so a static mirror maps
// `?after=<cursor>` to `<cursor>.json`.

import { createHash } from "node:crypto";
import type { Window } from "./grid.js";

export const DIST_FORMAT = "climate-dist-1";
export const PAGE_SIZE = 100;
export const CATALOG_FILE = "catalog.json";

export const versionDir = (id: string) => `versions/${id}`;
export const datasetPath = (id: string) => `versions/${id}/dataset.json`;
export const indexPath = (id: string) => `versions/${id}/index.json`;
export const cellsPath = (id: string) => `versions/${id}/cells.f32`;
export const tilePath = (id: string, tile: string) => `versions/${id}/tiles/${tile}.json`;
export type ListKind = "layers" | "observations";
export const pagePath = (id: string, kind: ListKind, cursor: string | null) =>
  `versions/${id}/${kind}/${cursor ?? "first"}.json`;
export const manifestPath = (sha256: string) => `manifests/${sha256}.json`;

export interface FileEntry {
  path: string;
  size: number;
  sha256: string;
}

export interface Manifest {
  format: typeof DIST_FORMAT;
  files: FileEntry[]; // sorted by path; every file of dist except catalog.json and the manifest itself
}

/** Dataset record fields as the contract has them (interface.md 2.1); the schema is schemas/dataset.schema.json. */
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
  metadata: Record<string, unknown>;
  status?: "staging" | "published" | "retired";
  published_at?: string | null;
  created_at?: string;
}

export interface SourceEntry {
  sha256: string;
  url?: string;
  doi?: string;
  member_path?: string;
  license?: string;
  [extra: string]: unknown;
}

/**
 * catalog.json. Its `datasets` are the GET /api/v1/datasets records: the immutable dataset.json record plus
 * `status` and `published_at`, which only the catalog holds (so every other file stays byte-identical across
 * publishes of the same sources).
 */
export interface CatalogFile {
  format: typeof DIST_FORMAT;
  datasets: Dataset[];
  manifest: FileEntry;
}

export interface RasterDate {
  date: string; // YYYY-MM-DD
  window: Window; // global cells published for this date
  offset: number; // byte offset of this date's block in cells.f32 (row-major over window)
}

export interface RasterIndex {
  kind: "raster";
  variable: string;
  unit: string;
  crs: string;
  tileSide: number;
  tileCount: number; // tiles over all dates = items of the layers list
  dates: RasterDate[]; // ascending
}

export interface ObservationIndex {
  kind: "observation";
  observationCount: number;
}

export type VersionIndex = RasterIndex | ObservationIndex;

export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/**
 * Opaque page cursors: "<offset>-<check>", the check binding offset to version and list so that a cursor
 * the server did not issue (edited, or from another list) is recognised (decisions.md 4). Filename-safe.
 */
export function encodeCursor(versionId: string, kind: ListKind, offset: number): string {
  return `${offset}-${sha256Hex(`${versionId}/${kind}/${offset}`).slice(0, 12)}`;
}

export function decodeCursor(versionId: string, kind: ListKind, cursor: string): number | null {
  const m = /^([1-9][0-9]{0,9})-[0-9a-f]{12}$/.exec(cursor);
  if (!m) return null;
  const offset = Number(m[1]);
  return encodeCursor(versionId, kind, offset) === cursor ? offset : null;
}

/** Version id: {dataset_key}-{firstdate}-{lastdate}-{16 hex of the content hash} (decisions.md 5). */
export function versionId(datasetKey: string, first: string, last: string, contentSha256: string): string {
  return `${datasetKey}-${first.replaceAll("-", "")}-${last.replaceAll("-", "")}-${contentSha256.slice(0, 16)}`;
}
