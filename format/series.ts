// Series pieces (docs/format.md §9): the time-major tier. A span of consecutive dates of one window is stored as
// chunks of c x c cells x all its days, so one cell over the span is one small chunk. Chunks are listed in
// directories of 8 x 8 chunks ("groups"), each stored with the Merkle path that proves it against the span's
// root: a reader finds one cell's chunk with one range read of its group and one of the chunk, every byte
// verified, without reading the piece's whole directory. Both directions of every byte rule live here.
//
//   "CDSSER01"                                   8 bytes magic
//   col, row, width, height, firstDay, days,     u32 LE each (firstDay: days since 1970-01-01, as i32)
//   chunkSide, groupCount, depth
//   root                                         32 bytes: Merkle root of the group directories
//   groupCount x { depth x 32-byte path, 64 x { codec u32 (order << 8 | codec), length u32, offset u64, sha256 } }
//   chunks, in group order, then position order (row-major 8 x 8 inside a group)

import { BlockCodec } from "./cells.js";
import { bytesToHex } from "./day-piece.js";
import { type Window, intersectWindows } from "./grid.js";
import type { Ref } from "./objects.js";
import type { SourceEntry } from "./records.js";

const SERIES_MAGIC = "CDSSER01";
const HEADER_FIXED = 8 + 9 * 4 + 32;
const ENTRY_BYTES = 48;
/** Chunks per group side: a group directory lists 8 x 8 chunks. */
export const GROUP_CHUNKS = 8;
/** Chunks per group: a chunk's position in its group is 0..63. */
const GROUP_POSITIONS = GROUP_CHUNKS * GROUP_CHUNKS;
/**
 * Values per chunk the chunk side aims at: the largest power-of-two side with side^2 x days at most this
 * (measured: docs/format.md §9), from 1 to 64 cells.
 */
export const CHUNK_VALUES = 2048;

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
  piece: Ref;
  /** sha256 (hex) Merkle root of the piece's group directories */
  root: string;
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

/** Where groups lie: the lattice of (8 x chunkSide)-cell squares that the window touches, row-major. */
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

  /** Merkle depth: levels above the leaves, so the leaves pad to a power of two. */
  get depth(): number {
    return Math.ceil(Math.log2(Math.max(1, this.count)));
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

/** Byte size of one group record: its Merkle path, then its 64 entries. */
export function groupRecordBytes(depth: number): number {
  return depth * 32 + GROUP_POSITIONS * ENTRY_BYTES;
}

export function seriesHeaderBytes(): number {
  return HEADER_FIXED;
}

/** Where group `i`'s record starts in the piece. */
export function groupRecordOffset(lattice: GroupLattice, i: number): number {
  return HEADER_FIXED + i * groupRecordBytes(lattice.depth);
}

/**
 * How a chunk's values are ordered before its codec: each cell's days (so the codec's differences run along time),
 * or each day's cells (along space). The writer keeps whichever gives the smaller differences, chunk by chunk.
 */
export const ChunkOrder = { Cells: 0, Days: 1 } as const;
export type ChunkOrder = (typeof ChunkOrder)[keyof typeof ChunkOrder];

export interface ChunkEntry {
  codec: BlockCodec;
  order: ChunkOrder;
  offset: number;
  length: number;
  sha256: string;
}

/** Checks a group directory's entries (its record's bytes after the path) as read: their size and every codec. */
export function checkGroupEntries(bytes: Uint8Array): void {
  if (bytes.byteLength !== GROUP_POSITIONS * ENTRY_BYTES) throw new Error(`a group directory is ${GROUP_POSITIONS * ENTRY_BYTES} bytes, not ${bytes.byteLength}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = 0; at < bytes.byteLength; at += ENTRY_BYTES) {
    const word = view.getUint32(at, true);
    if ((word & 0xff) > BlockCodec.Float32 || word >>> 8 > ChunkOrder.Days) throw new Error(`a group directory names an unknown codec ${word}`);
  }
}

/**
 * One entry of a checked group directory: a reader decodes only the entry it uses (a point read uses one of the
 * 64, and decoding all of them was most of what a varied point series allocated).
 */
export function groupEntry(bytes: Uint8Array, position: number): ChunkEntry {
  const at = position * ENTRY_BYTES;
  const view = new DataView(bytes.buffer, bytes.byteOffset + at, ENTRY_BYTES);
  const word = view.getUint32(0, true);
  return {
    codec: (word & 0xff) as BlockCodec,
    order: (word >>> 8) as ChunkOrder,
    length: view.getUint32(4, true),
    offset: view.getUint32(8, true) + view.getUint32(12, true) * 2 ** 32,
    sha256: bytesToHex(bytes.subarray(at + 16, at + 48)),
  };
}

export function encodeGroupEntries(entries: ChunkEntry[]): Uint8Array {
  const out = new Uint8Array(GROUP_POSITIONS * ENTRY_BYTES);
  const view = new DataView(out.buffer);
  entries.forEach((e, i) => {
    const at = i * ENTRY_BYTES;
    view.setUint32(at, e.codec | (e.order << 8), true);
    view.setUint32(at + 4, e.length, true);
    view.setUint32(at + 8, e.offset % 2 ** 32, true);
    view.setUint32(at + 12, Math.floor(e.offset / 2 ** 32), true);
    out.set(hexToBytes(e.sha256), at + 16);
  });
  return out;
}

const NIBBLE = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) NIBBLE["0123456789abcdef".charCodeAt(i)] = i;

function hexToBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = (NIBBLE[hex.charCodeAt(2 * i)] << 4) | NIBBLE[hex.charCodeAt(2 * i + 1)];
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

export function encodeSeriesHeader(lattice: GroupLattice, firstDay: number, days: number, root: string): Uint8Array {
  const out = new Uint8Array(HEADER_FIXED);
  const view = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) out[i] = SERIES_MAGIC.charCodeAt(i);
  [...lattice.window, firstDay, days, lattice.chunkSide, lattice.count, lattice.depth].forEach((n, i) => view.setInt32(8 + 4 * i, n, true));
  out.set(hexToBytes(root), 8 + 9 * 4);
  return out;
}

/** The header's fields; throws when the bytes are not a series header. */
export function decodeSeriesHeader(bytes: Uint8Array): { window: Window; firstDay: number; days: number; chunkSide: number; groupCount: number; depth: number; root: string } {
  let magic = "";
  for (let i = 0; i < 8 && i < bytes.length; i++) magic += String.fromCharCode(bytes[i]);
  if (magic !== SERIES_MAGIC || bytes.length < HEADER_FIXED) throw new Error("not a series piece header");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Array.from({ length: 9 }, (_, i) => view.getInt32(8 + 4 * i, true));
  return { window: [n[0], n[1], n[2], n[3]], firstDay: n[4], days: n[5], chunkSide: n[6], groupCount: n[7], depth: n[8], root: bytesToHex(bytes.subarray(8 + 36, HEADER_FIXED)) };
}
