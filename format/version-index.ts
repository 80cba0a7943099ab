// A version's index: the raster index root, its year and month pages and day entries, or an observation index
// (docs/format.md §4), and the content texts whose hashes identify a version (docs/format.md §6).

import type { Coverage } from "./coverage.js";
import type { Window } from "./grid.js";
import type { DIST_FORMAT, Ref } from "./objects.js";
import type { Dataset, DatasetMetadata, SourceEntry } from "./records.js";
import type { SeriesSpan } from "./series.js";

/** Items per observation chunk (= the default page size, so a default page is one stored chunk). */
export const PAGE_SIZE = 100;

export interface DayEntry {
  date: string;
  window: Window;
  /** sha256 of the day's canonical cells: float32 LE, row-major over window, one NaN bit pattern for missing */
  cells: string;
  missing: number;
  /** the day piece, and the byte length and sha256 of its header (block directory) */
  piece: Ref;
  header: Ref;
  /** a revised day: the older pieces its unchanged blocks lie in, oldest first (format/entries.ts) */
  packs?: Ref[];
  /** the source files this date was published from */
  sources: SourceEntry[];
}

export interface MonthPage {
  format: typeof DIST_FORMAT;
  month: string; // YYYY-MM
  days: DayEntry[]; // ascending
}

/** A child summary in the index tree; `content` hashes the cells below it, not their provenance. */
export interface IndexNode {
  key: string; // YYYY or YYYY-MM
  days: number;
  tiles: number;
  content: string;
  coverage: Coverage;
  ref: Ref;
}

export interface YearPage {
  format: typeof DIST_FORMAT;
  year: string;
  months: IndexNode[];
}

export interface RasterIndex {
  format: typeof DIST_FORMAT;
  kind: "raster";
  variable: string;
  unit: string;
  crs: string;
  tileSide: number;
  blockSide: number;
  days: number;
  tiles: number;
  coverage: Coverage;
  years: IndexNode[];
  /** the series tier over the same days, in date order */
  series: SeriesSpan[];
}

export interface ObservationIndex {
  format: typeof DIST_FORMAT;
  kind: "observation";
  count: number;
  /** PAGE_SIZE items per chunk (the last may hold fewer); a chunk is the JSON array text of its items */
  chunks: Ref[];
}

export type VersionIndex = RasterIndex | ObservationIndex;

/** The version index object of a record. */
export function indexRefOf(record: Dataset): DatasetMetadata["index"] {
  return record.metadata.index;
}

// Content hashes cover cells, windows and dates, never provenance or publish times (docs/format.md §6).

export function monthContentText(days: Pick<DayEntry, "date" | "window" | "cells">[]): string {
  return days.map((d) => `${d.date} ${d.window.join(",")} ${d.cells}`).join("\n");
}

export function nodesContentText(nodes: Pick<IndexNode, "key" | "content">[]): string {
  return nodes.map((n) => `${n.key} ${n.content}`).join("\n");
}

/** The text whose sha256 is a raster version's content_sha256. */
export function rasterContentText(transformVersion: string, years: Pick<IndexNode, "key" | "content">[]): string {
  return `${transformVersion}\n${nodesContentText(years)}`;
}
