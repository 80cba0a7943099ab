// The dist/ layout: every path, object shape, block position and byte offset, shared by the pipeline (writer),
// the server and the mirror client (readers), so writer and readers cannot disagree. Platform-free (no Node API).
//
// dist/
//   catalog.json                      the one mutable file (CatalogPointer), replaced atomically, last
//   objects/<aa>/<sha256>.json        immutable JSON objects, named by the sha256 of their bytes:
//                                     catalog root and leaves, version index roots, year and month pages,
//                                     observation chunks, publish manifests
//   objects/<aa>/<sha256>.day         immutable day pieces: one date's cells as compressed 64 x 64 blocks
//   explorer/                         the browser explorer (issue 9), written by every publish
//
// Every object is shared by any number of versions: a version is a small tree of index pages over day
// pieces that other versions also reference. Readers verify every byte they use against a sha256 that a
// verified parent gave them; the chain starts at catalog.json.

import { dateToDayNumber, dayNumberToDate } from "./dates.js";
import type { Window } from "./grid.js";
import { TILE_SIDE, containsWindow, windowToTiles } from "./grid.js";

export const DIST_FORMAT = "climate-dist-2";
export const CATALOG_FILE = "catalog.json";
/** Side of a stored cell block; divides TILE_SIDE, so a tile is whole blocks and one contiguous byte range. */
export const BLOCK_SIDE = 64;
/** Items per catalog leaf before it splits, and per observation chunk (= the default page size). */
export const CATALOG_LEAF_MAX = 64;
export const PAGE_SIZE = 100;

export type ObjectKind = "json" | "day";

/** Objects are sharded by the first two hex digits so no folder holds more than 1/256 of them. */
export function objectPath(sha256: string, kind: ObjectKind): string {
  return `objects/${sha256.slice(0, 2)}/${sha256}.${kind}`;
}

/** A content-addressed object: its path follows from sha256 and kind. */
export interface Ref {
  sha256: string;
  size: number;
}

export interface FileEntry {
  path: string;
  size: number;
  sha256: string;
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

/** Where a version's date coverage stands, enough to choose a version without reading its index (decisions.md 3). */
export interface Coverage {
  first: string;
  last: string;
  /** dates between first and last that the version does not hold, as inclusive [start, end] ranges */
  gaps: [string, string][];
  /** cells every date holds (intersection of the day windows) and cells some date holds (their union) */
  windowAll: Window;
  windowAny: Window;
}

/** A query-compatible version that no newer version shadows (pipeline/catalog.ts keeps the list). */
export interface Candidate {
  id: string;
  published_at: string;
  coverage: Coverage;
}

/** catalog.json: the root of trust, the only mutable file. */
export interface CatalogPointer {
  format: typeof DIST_FORMAT;
  /** the catalog tree's root object (CatalogRoot) */
  catalog: Ref;
  /** the newest publish manifest; manifests chain back through `previous` and together list every file */
  manifest: Ref;
  /** query candidates, in choice order: newest published_at first, ties by id ascending */
  candidates: Candidate[];
}

export interface CatalogRoot {
  format: typeof DIST_FORMAT;
  count: number;
  /** leaves in id order; `first` is the smallest id of the leaf */
  leaves: { first: string; count: number; ref: Ref }[];
}

/** Catalog records as GET /api/v1/datasets lists them: the immutable record plus status and published_at. */
export interface CatalogLeaf {
  datasets: Dataset[];
}

/** A publish manifest: the files this publish added, and the manifest before it. */
export interface Manifest {
  format: typeof DIST_FORMAT;
  previous: Ref | null;
  files: FileEntry[];
}

export interface DayEntry {
  date: string;
  window: Window;
  /** sha256 of the day's canonical cells: float32 LE, row-major over window, one NaN bit pattern for missing */
  cells: string;
  missing: number;
  /** the day piece, and the byte length and sha256 of its header (block directory) */
  piece: Ref;
  header: Ref;
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

// ---- content hashes (decisions.md 5): cells, windows and dates, never provenance or publish times ----

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

// ---- coverage: dates and cells held, merged up the index tree ----

const EMPTY_WINDOW: Window = [0, 0, 0, 0];

export function intersectWindows(a: Window, b: Window): Window {
  const c0 = Math.max(a[0], b[0]);
  const r0 = Math.max(a[1], b[1]);
  const c1 = Math.min(a[0] + a[2], b[0] + b[2]);
  const r1 = Math.min(a[1] + a[3], b[1] + b[3]);
  return c1 > c0 && r1 > r0 ? [c0, r0, c1 - c0, r1 - r0] : EMPTY_WINDOW;
}

export function unionWindows(a: Window, b: Window): Window {
  if (a[2] === 0 || a[3] === 0) return b;
  if (b[2] === 0 || b[3] === 0) return a;
  const c0 = Math.min(a[0], b[0]);
  const r0 = Math.min(a[1], b[1]);
  const c1 = Math.max(a[0] + a[2], b[0] + b[2]);
  const r1 = Math.max(a[1] + a[3], b[1] + b[3]);
  return [c0, r0, c1 - c0, r1 - r0];
}

export function dayCoverage(date: string, window: Window): Coverage {
  return { first: date, last: date, gaps: [], windowAll: window, windowAny: window };
}

/** Coverage of `a` followed by `b` (b's dates all after a's): the dates between them become a gap. */
export function mergeCoverage(a: Coverage, b: Coverage): Coverage {
  const between = dateToDayNumber(b.first) - dateToDayNumber(a.last);
  if (between < 1) throw new Error(`coverage ${b.first}.. does not follow ..${a.last}`);
  const gap: [string, string][] =
    between > 1 ? [[dayNumberToDate(dateToDayNumber(a.last) + 1), dayNumberToDate(dateToDayNumber(b.first) - 1)]] : [];
  return {
    first: a.first,
    last: b.last,
    gaps: [...a.gaps, ...gap, ...b.gaps],
    windowAll: intersectWindows(a.windowAll, b.windowAll),
    windowAny: unionWindows(a.windowAny, b.windowAny),
  };
}

/** Whether `date` is one the coverage holds (within first..last and in no gap). */
export function holdsDate(coverage: Coverage, date: string): boolean {
  return date >= coverage.first && date <= coverage.last && !coverage.gaps.some(([s, e]) => date >= s && date <= e);
}


/**
 * `newer` holds every date and cell `older` holds, on every date, by its summaries alone: then no request can
 * ever choose `older` without a pin, and it leaves the query candidates (decisions.md 3).
 */
export function shadows(newer: Coverage, older: Coverage): boolean {
  if (newer.first > older.first || newer.last < older.last) return false;
  if (!containsWindow(newer.windowAll, older.windowAny)) return false;
  // every gap of `newer` inside older's period must be a gap of `older` too
  return newer.gaps.every(([s, e]) => {
    const start = s < older.first ? older.first : s;
    const end = e > older.last ? older.last : e;
    return start > end || older.gaps.some(([os, oe]) => os <= start && oe >= end);
  });
}

// ---- the block lattice: 64 x 64 blocks, ordered tile by tile so a tile is one contiguous range ----

export interface BlockSlot {
  /** position in the day piece */
  index: number;
  /** global cells of the block, clipped to the day's window */
  window: Window;
  tileRow: number;
  tileCol: number;
}

/** The blocks of a day window, in piece order: tiles row-major, then blocks row-major inside each tile. */
export function listBlocks(window: Window): BlockSlot[] {
  const slots: BlockSlot[] = [];
  for (const tile of windowToTiles(window)) {
    const [tc0, tr0, tw, th] = tile.window;
    for (let r = Math.floor(tr0 / BLOCK_SIDE) * BLOCK_SIDE; r < tr0 + th; r += BLOCK_SIDE) {
      for (let c = Math.floor(tc0 / BLOCK_SIDE) * BLOCK_SIDE; c < tc0 + tw; c += BLOCK_SIDE) {
        const c0 = Math.max(c, tc0);
        const r0 = Math.max(r, tr0);
        const c1 = Math.min(c + BLOCK_SIDE, tc0 + tw);
        const r1 = Math.min(r + BLOCK_SIDE, tr0 + th);
        slots.push({ index: slots.length, window: [c0, r0, c1 - c0, r1 - r0], tileRow: tile.tileRow, tileCol: tile.tileCol });
      }
    }
  }
  return slots;
}

/** Lattice tiles of one day; also what the layers list enumerates for that date. */
export function countTiles(window: Window): number {
  const cols = Math.ceil((window[0] + window[2]) / TILE_SIDE) - Math.floor(window[0] / TILE_SIDE);
  const rows = Math.ceil((window[1] + window[3]) / TILE_SIDE) - Math.floor(window[1] / TILE_SIDE);
  return cols * rows;
}

// ---- day pieces: header (block directory), then the encoded blocks in piece order ----
//
//   "CDSDAY02"                          8 bytes magic
//   col, row, width, height, blockSide  5 x u32 LE
//   blockCount                          u32 LE
//   blockCount x { codec u32, length u32, sha256 32 bytes }
//   block bytes, concatenated in piece order (offsets are cumulative lengths after the header)

const DAY_MAGIC = "CDSDAY02";
const DAY_FIXED_BYTES = 8 + 6 * 4;
const BLOCK_ENTRY_BYTES = 40;

/** How a block's cells are stored (schemas/cells.ts encodes and decodes them). */
export const BlockCodec = {
  /** every cell missing: no bytes */
  Empty: 0,
  /** tenths of a degree as int16 (missing -32768), horizontal differences, raw DEFLATE */
  Tenths: 1,
  /** float32 LE, raw DEFLATE: values that tenths cannot hold exactly */
  Float32: 2,
} as const;
export type BlockCodec = (typeof BlockCodec)[keyof typeof BlockCodec];

export interface BlockEntry {
  codec: BlockCodec;
  offset: number; // from the start of the piece
  length: number;
  sha256: string;
}

/**
 * A parsed day-piece header, kept compact (readers cache many: a full-grid day has 154 blocks): the header's
 * own bytes plus cumulative offsets; a block's entry is made when asked for.
 */
export class DayHeader {
  private readonly offsets: Float64Array;

  constructor(
    readonly window: Window,
    private readonly bytes: Uint8Array,
    readonly count: number,
  ) {
    this.offsets = new Float64Array(count + 1);
    this.offsets[0] = bytes.byteLength;
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < count; i++) this.offsets[i + 1] = this.offsets[i] + view.getUint32(DAY_FIXED_BYTES + BLOCK_ENTRY_BYTES * i + 4, true);
  }

  /** Every block's entry (tools and tests; readers ask for the blocks they need). */
  get blocks(): BlockEntry[] {
    return Array.from({ length: this.count }, (_, i) => this.block(i));
  }

  block(i: number): BlockEntry {
    const at = DAY_FIXED_BYTES + BLOCK_ENTRY_BYTES * i;
    return {
      codec: this.bytes[at] as BlockCodec,
      offset: this.offsets[i],
      length: this.offsets[i + 1] - this.offsets[i],
      sha256: bytesToHex(this.bytes.subarray(at + 8, at + 40)),
    };
  }
}

export function dayHeaderSize(blockCount: number): number {
  return DAY_FIXED_BYTES + BLOCK_ENTRY_BYTES * blockCount;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

export function bytesToHex(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i]];
  return out;
}

export function hexToBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export function encodeDayHeader(window: Window, blocks: { codec: BlockCodec; length: number; sha256: string }[]): Uint8Array {
  const out = new Uint8Array(dayHeaderSize(blocks.length));
  const view = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) out[i] = DAY_MAGIC.charCodeAt(i);
  [...window, BLOCK_SIDE, blocks.length].forEach((n, i) => view.setUint32(8 + 4 * i, n, true));
  blocks.forEach((b, i) => {
    const at = DAY_FIXED_BYTES + BLOCK_ENTRY_BYTES * i;
    view.setUint32(at, b.codec, true);
    view.setUint32(at + 4, b.length, true);
    out.set(hexToBytes(b.sha256), at + 8);
  });
  return out;
}

/** Parses a verified header; throws when it does not describe `window` with this lattice. */
export function decodeDayHeader(bytes: Uint8Array, window: Window): DayHeader {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let magic = "";
  for (let i = 0; i < 8 && i < bytes.length; i++) magic += String.fromCharCode(bytes[i]);
  if (magic !== DAY_MAGIC || bytes.length < DAY_FIXED_BYTES) throw new Error("not a day piece header");
  const fields = Array.from({ length: 6 }, (_, i) => view.getUint32(8 + 4 * i, true));
  const [col, row, width, height, side, count] = fields;
  if (side !== BLOCK_SIDE || [col, row, width, height].some((n, i) => n !== window[i])) {
    throw new Error(`day piece header describes window ${[col, row, width, height].join(",")} / block ${side}`);
  }
  if (count !== listBlocks(window).length || bytes.length !== dayHeaderSize(count)) throw new Error("day piece header has the wrong block count");
  for (let i = 0; i < count; i++) {
    const codec = view.getUint32(DAY_FIXED_BYTES + BLOCK_ENTRY_BYTES * i, true);
    if (codec > BlockCodec.Float32) throw new Error(`day piece header names an unknown codec ${codec}`);
  }
  return new DayHeader(window, bytes.slice(), count);
}

// ---- cursors: opaque strings a static mirror's client computes exactly as the server does ----

export type ListKind = "layers" | "observations";

/** Layers and observation pages: "<offset>-<check>", the check binding offset to version and list (decisions.md 4). */
export function cursorCheckText(versionId: string, kind: ListKind, offset: number): string {
  return `${versionId}/${kind}/${offset}`;
}

export const OFFSET_CURSOR = /^([1-9][0-9]{0,9})-([0-9a-f]{12})$/;

/** Catalog pages: "<id>.<check>": ids, not offsets, so a publish between two pages skips and repeats nothing. */
export const CATALOG_CURSOR = /^([a-zA-Z0-9_-]{1,128})\.([0-9a-f]{12})$/;
export const catalogCursorCheckText = (id: string) => `catalog/${id}`;

/** Version id: {dataset_key}-{firstdate}-{lastdate}-{16 hex of the content hash} (decisions.md 5). */
export function versionId(datasetKey: string, first: string, last: string, contentSha256: string): string {
  return `${datasetKey}-${first.replaceAll("-", "")}-${last.replaceAll("-", "")}-${contentSha256.slice(0, 16)}`;
}
