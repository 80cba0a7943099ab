// Series pieces (docs/format.md §7): the time-major tier. A span of consecutive dates of one window is stored as
// chunks of c x c cells x all its days, so one cell over the span is one small chunk. Chunks are listed in
// directories of 4 x 4 chunks ("groups"), each stored with the Merkle path that proves it against its piece's
// root: a reader finds one cell's chunk with one range read of its group and one of the chunk, every byte
// verified, without reading the piece's whole directory. Both directions of every byte rule live here.
//
//   "CDSSER03"                                   8 bytes magic
//   col, row, width, height, firstDay, days,     u32 LE each (firstDay: days since 1970-01-01, as i32)
//   chunkSide, groupCount, packCount
//   packCount x { root 32 bytes, records u32, recordsAt u32, tier u32 }   the lineage: older pieces first, this one last
//   groupCount x { pack u16, record u16 }        only when packCount > 1: which piece holds each group's record, and
//                                                which of its records it is
//   records x { depth x 32-byte path, 16 stored entries }    this piece's group records (format/entries.ts)
//   chunks
//
// A span written whole is one piece whose records are its groups, so its index entry alone (root) locates any group.
// A revision writes a piece holding only the groups whose chunks changed and those chunks; every other group
// record and chunk stays in the older pieces of its lineage (docs/contract.md §5).

import { BlockCodec, type StoredBlock, decodeTenths, rawBlockBytes, readBlockRow, tenthsValue } from "./cells.js";
import { ENTRY_BYTES, type StoredEntry, bytesToHex, checkEntries, hexToBytes, readEntry, writeEntry } from "./entries.js";
import { type Window, intersectWindows } from "./grid.js";
import type { Ref } from "./objects.js";
import type { SourceEntry } from "./records.js";

const SERIES_MAGIC = "CDSSER03";
const HEADER_FIXED = 8 + 9 * 4;
const PACK_BYTES = 32 + 4 + 4 + 4;
const MAP_BYTES = 4;
/**
 * Chunks per group side: a group directory lists 4 x 4 chunks, so a point read's record (768 bytes of entries and
 * its path) weighs less than its chunk (docs/performance.md "Codecs").
 */
export const GROUP_CHUNKS = 4;
/** Chunks per group: a chunk's position in its group is 0..15. */
export const GROUP_POSITIONS = GROUP_CHUNKS * GROUP_CHUNKS;
/**
 * Values per chunk the chunk side aims at: the largest power-of-two side with side^2 x days at most this, from 1 to
 * 64 cells (a year: 4 x 4 cells; 31 days: 16 x 16). Measured (docs/performance.md "Codecs"): a day's plane of 4 x 4
 * cells predicts 15 of them from their neighbours, and a year of maximum temperature stores in 0.35 B a value
 * against 0.57 at 2 x 2, while a point read's chunk stays about 2 kB.
 */
export const CHUNK_VALUES = 8192;

/**
 * A span that holds any of its version's newest this-many dates lists its dates' sources in the index root
 * itself: a cold reader of the newest month reads no sources object.
 */
export const INLINE_SOURCES_DAYS = 31;

/** A span of the series tier, as the version's index lists it. */
export interface SeriesSpan {
  /** first and last date; every date between them is held, every one with `window` */
  first: string;
  last: string;
  window: Window;
  chunkSide: number;
  /** the newest piece of its lineage */
  piece: Ref;
  /** sha256 (hex) Merkle root of the group records `piece` holds */
  root: string;
  /** a revised span: the older pieces its records and chunks still lie in, oldest first */
  packs?: Ref[];
  /** a revised span: `piece`'s header (its first `size` bytes), which maps every group to a piece of the lineage */
  header?: Ref;
  /**
   * the source lists of its dates, in date order: inline for a span holding any of the version's newest
   * INLINE_SOURCES_DAYS dates (a cold reader of them then reads none), else the ref of that JSON array
   */
  sources: Ref | SourceEntry[][];
  /** what the span was built from: equal basis, equal span (a publish reuses it) */
  basis: string;
}

/** The chunk side for a span of `days` days: side^2 x days close to CHUNK_VALUES, a power of two. */
export function chooseChunkSide(days: number): number {
  let side = 1;
  while (side < 64 && 4 * side * side * days <= CHUNK_VALUES) side *= 2;
  return side;
}

/** Where groups lie: the lattice of (4 x chunkSide)-cell squares that the window touches, row-major. */
export class GroupLattice {
  readonly groupSide: number;
  readonly col0: number;
  readonly row0: number;
  readonly cols: number;
  readonly rows: number;

  constructor(
    readonly window: Window,
    readonly chunkSide: number,
  ) {
    this.groupSide = chunkSide * GROUP_CHUNKS;
    const g = this.groupSide;
    this.col0 = Math.floor(window[0] / g);
    this.row0 = Math.floor(window[1] / g);
    this.cols = Math.floor((window[0] + window[2] - 1) / g) - this.col0 + 1;
    this.rows = Math.floor((window[1] + window[3] - 1) / g) - this.row0 + 1;
  }

  get count(): number {
    return this.cols * this.rows;
  }

  /** The group and position of a global cell's chunk inside the window. */
  locate(col: number, row: number): { group: number; position: number } {
    const g = this.groupSide;
    const group = (Math.floor(row / g) - this.row0) * this.cols + (Math.floor(col / g) - this.col0);
    const position = Math.floor((row % g) / this.chunkSide) * GROUP_CHUNKS + Math.floor((col % g) / this.chunkSide);
    return { group, position };
  }

  /** The cells of the chunk at a group's position, clipped to the window (width or height 0 when it lies outside). */
  chunkWindow(group: number, position: number): Window {
    const c = this.chunkSide;
    const gc = (this.col0 + (group % this.cols)) * this.groupSide;
    const gr = (this.row0 + Math.floor(group / this.cols)) * this.groupSide;
    return intersectWindows(this.window, [gc + (position % GROUP_CHUNKS) * c, gr + Math.floor(position / GROUP_CHUNKS) * c, c, c]);
  }

  /** How many chunks hold cells of `area` (inside the window): select(area).length, without listing them. */
  countChunks(area: Window): number {
    const c = this.chunkSide;
    const span = (start: number, size: number) => Math.ceil((start + size) / c) - Math.floor(start / c);
    return span(area[0], area[2]) * span(area[1], area[3]);
  }

  /** Chunks holding cells of `area` (inside the window), as group and position, in piece order. */
  select(area: Window): { group: number; position: number }[] {
    const c = this.chunkSide;
    const out: { group: number; position: number }[] = [];
    for (let r = Math.floor(area[1] / c) * c; r < area[1] + area[3]; r += c) {
      for (let col = Math.floor(area[0] / c) * c; col < area[0] + area[2]; col += c) out.push(this.locate(col, r));
    }
    return out.sort((a, b) => a.group - b.group || a.position - b.position);
  }
}

/** Byte size of one group record: its Merkle path, then its 16 entries. */
export function groupRecordBytes(depth: number): number {
  return depth * 32 + GROUP_POSITIONS * ENTRY_BYTES;
}

/** Merkle depth over `leaves` leaves: levels above them, so they pad to a power of two. */
export function merkleDepth(leaves: number): number {
  return Math.ceil(Math.log2(Math.max(1, leaves)));
}

/** One piece of a span's lineage as the newest piece's header describes it. */
export interface PackInfo {
  /** Merkle root over the group records this piece holds */
  root: string;
  /** how many group records it holds */
  records: number;
  /** where its first group record starts */
  recordsAt: number;
  /**
   * 0 for a span's first piece and for a revision; n + 1 for a piece that merged pieces of tier n (writers keep a
   * lineage's tail in tiers: pipeline/publish/series-revise.ts)
   */
  tier: number;
}

/** Bytes of a series header describing a lineage of `packCount` pieces over `groupCount` groups. */
export function seriesHeaderBytes(packCount: number, groupCount: number): number {
  return HEADER_FIXED + PACK_BYTES * packCount + (packCount > 1 ? MAP_BYTES * groupCount : 0);
}

/**
 * Where each group's record lies in a span's lineage: a span written whole has one piece whose records are its
 * groups in order (readers need no header); a revised span's newest header maps each group to a piece and record.
 */
export class SpanLayout {
  constructor(
    readonly lattice: GroupLattice,
    readonly packs: PackInfo[],
    /** (pack << 16 | record) per group; null: one piece, record = group */
    private readonly map: Uint32Array | null,
  ) {}

  /** A span stored in one piece, from its index entry alone. */
  static whole(lattice: GroupLattice, root: string): SpanLayout {
    return new SpanLayout(lattice, [{ root, records: lattice.count, recordsAt: seriesHeaderBytes(1, lattice.count), tier: 0 }], null);
  }

  /** The piece (lineage index) holding a group's record, which of its records it is, its byte range and Merkle depth there. */
  locate(group: number): { pack: number; record: number; offset: number; size: number; depth: number } {
    const word = this.map ? this.map[group] : group;
    const pack = this.map ? word >>> 16 : 0;
    const record = this.map ? word & 0xffff : word;
    const info = this.packs[pack];
    const depth = merkleDepth(info.records);
    const size = groupRecordBytes(depth);
    return { pack, record, offset: info.recordsAt + record * size, size, depth };
  }

}

/**
 * How a chunk's values are laid out: each cell's days in turn (a Float32 chunk), or each day's cells in turn (a Tenths
 * chunk: a plane of the chunk's cells a day, docs/format.md §5). A Patch names its base's order.
 */
export const ChunkOrder = { Cells: 0, Days: 1 } as const;
export type ChunkOrder = (typeof ChunkOrder)[keyof typeof ChunkOrder];

/**
 * A Patch chunk, before DEFLATE: the stored entry of the chunk it revises (its base: a Tenths or Float32 chunk of the
 * same span's lineage), the days it replaces, and their cells:
 *
 *   base entry                           48 bytes (format/entries.ts)
 *   count m                              u32 LE
 *   m days                               u32 LE each, ascending, days of the span (0 = its first)
 *   codec                                u8: 3, the m days as Tenths planes of the chunk's cells; 2, as float32 LE,
 *                                        day by day, cells row-major
 *   the cells
 *
 * So a revision of a few days of a long span writes those days of each chunk it touched, not the chunk again. A
 * revision of a patched chunk patches its base anew (the union of the days, the newest cells), never a patch.
 */
export interface ChunkPatch {
  base: StoredEntry;
  days: number[];
  codec: typeof BlockCodec.Tenths | typeof BlockCodec.Float32;
  /** the cells' stored bytes, as the codec gives them */
  cells: Uint8Array;
}

export function encodeChunkPatch(patch: ChunkPatch): Uint8Array {
  const out = new Uint8Array(ENTRY_BYTES + 4 + 4 * patch.days.length + 1 + patch.cells.byteLength);
  const view = new DataView(out.buffer);
  writeEntry(out, 0, patch.base);
  view.setUint32(ENTRY_BYTES, patch.days.length, true);
  patch.days.forEach((d, i) => view.setUint32(ENTRY_BYTES + 4 + 4 * i, d, true));
  const at = ENTRY_BYTES + 4 + 4 * patch.days.length;
  out[at] = patch.codec;
  out.set(patch.cells, at + 1);
  return out;
}

/** A patch's parts as read, checked against its span (`days` long, a lineage of `packCount`); throws naming what is wrong. */
export function decodeChunkPatch(raw: Uint8Array, days: number, packCount: number): ChunkPatch {
  if (raw.byteLength < ENTRY_BYTES + 5) throw new Error("a patch too short for its header");
  checkEntries(raw, 0, 1, packCount, ChunkOrder.Days, PATCH_BASES);
  const base = readEntry(raw, 0);
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const m = view.getUint32(ENTRY_BYTES, true);
  const at = ENTRY_BYTES + 4 + 4 * m;
  if (m === 0 || raw.byteLength < at + 1) throw new Error(`a patch of ${m} days`);
  const list = Array.from({ length: m }, (_, i) => view.getUint32(ENTRY_BYTES + 4 + 4 * i, true));
  if (list.some((d, i) => d >= days || (i > 0 && d <= list[i - 1]))) throw new Error("a patch's days are not ascending days of its span");
  const codec = raw[at];
  if (codec !== BlockCodec.Tenths && codec !== BlockCodec.Float32) throw new Error(`a patch of codec ${codec}`);
  return { base, days: list, codec, cells: raw.subarray(at + 1) };
}

/** What a Patch's base may be: a whole chunk. */
const PATCH_BASES: ReadonlySet<number> = new Set([BlockCodec.Tenths, BlockCodec.Float32]);

/** The most bytes a Patch of a chunk of `cells` cells over `days` days inflates to: a bound for the decompressor. */
export function patchBytesBound(cells: number, days: number): number {
  return ENTRY_BYTES + 4 + 4 * days + 1 + Math.max(rawBlockBytes(BlockCodec.Tenths, cells * days), cells * days * 4);
}

/**
 * The chunk `base` (stored in `order`) with the patch's days replaced: `width` x `height` cells a day, `days` days;
 * days-major whatever the base's order (tenths codes over tenths, else float32).
 */
export function applyChunkPatch(base: StoredBlock, order: ChunkOrder, patch: ChunkPatch, [width, height]: [number, number], days: number): StoredBlock {
  const cells = width * height;
  const m = patch.days.length;
  const codes = patch.codec === BlockCodec.Tenths ? decodeTenths(patch.cells, width, height, m) : null;
  if (!codes && patch.cells.byteLength !== m * cells * 4) throw new Error(`a patch's float32 cells are ${patch.cells.byteLength} bytes, not ${m * cells * 4}`);
  // a copy of its own: the cells may be a Node Buffer, whose slice() is a view of a larger pool
  const floats = codes ? null : new Float32Array(new Uint8Array(patch.cells).buffer);
  // tenths over tenths stay codes; anything else becomes float32 in the base's order
  if (base.tenths && codes && order === ChunkOrder.Days) {
    const out = base.tenths.slice();
    patch.days.forEach((d, i) => out.set(codes.subarray(i * cells, (i + 1) * cells), d * cells));
    return { codec: BlockCodec.Tenths, width: cells, tenths: out, floats: null };
  }
  const out = new Float32Array(cells * days);
  if (order === ChunkOrder.Days) for (let d = 0; d < days; d++) readBlockRow(base, d, 0, cells, out, d * cells);
  else for (let c = 0; c < cells; c++) for (let d = 0; d < days; d++) readBlockRow(base, c, d, d + 1, out, d * cells + c);
  patch.days.forEach((d, i) => {
    for (let c = 0; c < cells; c++) out[d * cells + c] = codes ? tenthsValue(codes[i * cells + c]) : floats![i * cells + c];
  });
  return { codec: BlockCodec.Float32, width: cells, tenths: null, floats: out };
}

/** Checks a group directory's entries (its record's bytes after the path) as read: their size, codecs, orders and packs. */
export function checkGroupEntries(bytes: Uint8Array, packCount: number): void {
  if (bytes.byteLength !== GROUP_POSITIONS * ENTRY_BYTES) throw new Error(`a group directory is ${GROUP_POSITIONS * ENTRY_BYTES} bytes, not ${bytes.byteLength}`);
  checkEntries(bytes, 0, GROUP_POSITIONS, packCount, ChunkOrder.Days);
}

/** One entry of a checked group directory: a reader decodes only the entry it uses. */
export function groupEntry(bytes: Uint8Array, position: number): StoredEntry {
  return readEntry(bytes, position * ENTRY_BYTES);
}

export function encodeGroupEntries(entries: StoredEntry[]): Uint8Array {
  const out = new Uint8Array(GROUP_POSITIONS * ENTRY_BYTES);
  entries.forEach((e, i) => writeEntry(out, i * ENTRY_BYTES, e));
  return out;
}

/** An all-missing (or absent) chunk: no bytes; its sha256 is that of no bytes. */
export const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

type Sha256 = (data: Uint8Array) => Promise<string> | string;

/** Parent of two Merkle nodes: sha256 of the left hash then the right one. */
async function joinHashes(sha256: Sha256, left: Uint8Array, right: Uint8Array): Promise<Uint8Array> {
  const both = new Uint8Array(64);
  both.set(left, 0);
  both.set(right, 32);
  return hexToBytes(await sha256(both));
}

/**
 * Checks a group record against the span's root: the leaf is the sha256 of its entries, lifted through the
 * path (sibling hashes from the bottom up). Returns the entries' bytes when the record proves out, else null.
 */
export async function verifyGroupRecord(record: Uint8Array, index: number, depth: number, root: string, sha256: Sha256): Promise<Uint8Array | null> {
  if (record.byteLength !== groupRecordBytes(depth)) return null;
  const entries = record.subarray(depth * 32);
  let node = hexToBytes(await sha256(entries));
  for (let level = 0; level < depth; level++) {
    const sibling = record.subarray(level * 32, level * 32 + 32);
    node = (index >> level) & 1 ? await joinHashes(sha256, sibling, node) : await joinHashes(sha256, node, sibling);
  }
  return bytesToHex(node) === root ? entries : null;
}

/** The Merkle tree over leaf hashes (padded with zero hashes to 2^depth): its root and every leaf's path. */
export async function buildMerkle(leaves: Uint8Array[], depth: number, sha256: Sha256): Promise<{ root: string; paths: Uint8Array[] }> {
  const levels: Uint8Array[][] = [[...leaves]];
  while (levels[levels.length - 1].length < 2 ** depth) levels[0].push(new Uint8Array(32));
  for (let level = 0; level < depth; level++) {
    const below = levels[level];
    const above: Uint8Array[] = [];
    for (let i = 0; i < below.length; i += 2) above.push(await joinHashes(sha256, below[i], below[i + 1]));
    levels.push(above);
  }
  const paths = leaves.map((_, i) => {
    const path = new Uint8Array(depth * 32);
    for (let level = 0; level < depth; level++) path.set(levels[level][(i >> level) ^ 1], level * 32);
    return path;
  });
  return { root: bytesToHex(levels[depth][0]), paths };
}

export interface SeriesHeader {
  window: Window;
  firstDay: number;
  days: number;
  chunkSide: number;
  groupCount: number;
  packs: PackInfo[];
  /** (pack << 16 | record) per group, when the lineage has more than one piece */
  map: Uint32Array | null;
}

export function encodeSeriesHeader(header: SeriesHeader): Uint8Array {
  const { packs, map } = header;
  const out = new Uint8Array(seriesHeaderBytes(packs.length, header.groupCount));
  const view = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) out[i] = SERIES_MAGIC.charCodeAt(i);
  [...header.window, header.firstDay, header.days, header.chunkSide, header.groupCount, packs.length].forEach((n, i) => view.setInt32(8 + 4 * i, n, true));
  packs.forEach((p, i) => {
    const at = HEADER_FIXED + PACK_BYTES * i;
    out.set(hexToBytes(p.root), at);
    view.setUint32(at + 32, p.records, true);
    view.setUint32(at + 36, p.recordsAt, true);
    view.setUint32(at + 40, p.tier, true);
  });
  if (packs.length > 1) map!.forEach((word, g) => view.setUint32(HEADER_FIXED + PACK_BYTES * packs.length + MAP_BYTES * g, word, true));
  return out;
}

/** The header's fields; throws when the bytes are not a whole series header. */
export function decodeSeriesHeader(bytes: Uint8Array): SeriesHeader {
  let magic = "";
  for (let i = 0; i < 8 && i < bytes.length; i++) magic += String.fromCharCode(bytes[i]);
  if (magic !== SERIES_MAGIC || bytes.length < HEADER_FIXED) throw new Error("not a series piece header");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Array.from({ length: 9 }, (_, i) => view.getInt32(8 + 4 * i, true));
  const [groupCount, packCount] = [n[7], n[8]];
  if (packCount < 1 || bytes.length < seriesHeaderBytes(packCount, groupCount)) throw new Error(`a series header of ${packCount} pieces is longer than ${bytes.length} bytes`);
  const packs = Array.from({ length: packCount }, (_, i) => {
    const at = HEADER_FIXED + PACK_BYTES * i;
    return { root: bytesToHex(bytes.subarray(at, at + 32)), records: view.getUint32(at + 32, true), recordsAt: view.getUint32(at + 36, true), tier: view.getUint32(at + 40, true) };
  });
  const mapAt = HEADER_FIXED + PACK_BYTES * packCount;
  const map = packCount > 1 ? Uint32Array.from({ length: groupCount }, (_, g) => view.getUint32(mapAt + MAP_BYTES * g, true)) : null;
  return { window: [n[0], n[1], n[2], n[3]], firstDay: n[4], days: n[5], chunkSide: n[6], groupCount, packs, map };
}

/**
 * The layout a verified header gives for `lattice`; throws when the map names a piece or record its lineage does not
 * hold (a group record is then proved against that piece's root when read).
 */
export function headerToLayout(header: SeriesHeader, lattice: GroupLattice): SpanLayout {
  if (header.groupCount !== lattice.count) throw new Error(`the series header lists ${header.groupCount} groups, the span ${lattice.count}`);
  if (header.map) {
    for (let g = 0; g < header.map.length; g++) {
      const pack = header.map[g] >>> 16;
      if (pack >= header.packs.length || (header.map[g] & 0xffff) >= header.packs[pack].records) throw new Error(`the series header maps group ${g} to a record its pieces do not hold`);
    }
  }
  return new SpanLayout(lattice, header.packs, header.map);
}
