// A decoded day grid -> its day piece (docs/format.md §5): canonical cells hash, then each block encoded with its
// codec, DEFLATEd and hashed (on a decoding thread); then, on the writer's thread, the piece assembled by
// format/day-piece.ts, sharing every unchanged block with the piece of the same date it revises.

import { constants, deflateRawSync } from "node:zlib";
import { listBlocks } from "../../format/blocks.js";
import { type BlockCodec, canonicalizeMissing, encodeBlockCells, encodeBlockCodes, valuesToTenths } from "../../format/cells.js";
import { type DayHeader, type PieceBlock, assembleDayPiece } from "../../format/day-piece.js";
import { lineageOf } from "../../format/entries.js";
import type { Window } from "../../format/grid.js";
import { sha256Hex } from "../../format/hash.js";
import type { Ref } from "../../format/objects.js";
import type { DayEntry } from "../../format/version-index.js";

/** A day's cells encoded block by block: what a decoding thread hands the writer (one buffer, moved, not copied). */
export interface EncodedDay {
  window: Window;
  /** sha256 of the canonical cells (float32 LE over the window, one NaN pattern) */
  cells: string;
  missing: number;
  /** each block of listBlocks(window), its stored bytes being `length` bytes of `data` in turn */
  blocks: { codec: BlockCodec; sha256: string; length: number }[];
  data: Uint8Array;
}

/**
 * Day blocks and series chunks alike: DEFLATE with run-length matches only (zlib's Z_RLE), in a window just large
 * enough for the bytes (a block is at most 16 kB: zlib sets up a smaller window in less time, for the same bytes).
 * On the Tenths codec's byte planes (low bytes small, high bytes nearly all zero) it stores what level 6's default
 * strategy stores in less than half its time: a day's blocks of the SILO-like max_temp year take 71.8 kB against level
 * 3's 81.7 kB, encoded in 3.9 ms against 8.4, and a block inflates in 16.7 µs against 12.3 (a tile, 16 blocks, read
 * about 4% slower). memLevel stays zlib's default 8: at 4 its symbol buffer ends a Huffman block every 1,024
 * symbols, and a year's chunk took 25% more time and 6% more bytes (docs/performance.md "Codecs").
 */
export function deflateBlock(raw: Uint8Array): Uint8Array {
  const windowBits = Math.min(15, Math.max(9, Math.ceil(Math.log2(raw.byteLength))));
  return new Uint8Array(deflateRawSync(raw, { level: 6, strategy: constants.Z_RLE, windowBits }));
}

/**
 * A revised day's unchanged blocks stay in the pieces they lie in, at most this many of them; past it the day is
 * stored whole again, so no day is ever gathered from many pieces (a rain day SILO revises night after night).
 */
export const MAX_DAY_PACKS = 4;

/** The sha256 of a day's canonical cells (missing made one NaN pattern, in place) and its missing count. */
export function hashCells(values: Float32Array): { cells: string; missing: number } {
  const missing = canonicalizeMissing(values);
  return { cells: cellsSha256(values), missing };
}

/** The sha256 of cells whose missing ones are the canonical NaN already (a SiloDay's: pipeline/ingest/silo-values.ts). */
export function cellsSha256(values: Float32Array): string {
  return sha256Hex(new Uint8Array(values.buffer, values.byteOffset, values.byteLength));
}

/**
 * Deterministic: the same cells give the same block bytes on the same zlib; ids never depend on these bytes. `codes`:
 * the values' tenths codes when the reader has them (SiloDay.codes), else they are worked out here; when every value
 * is a tenth, each block is encoded from the day's codes where they lie, else block by block from its values.
 */
export function encodeDayBlocks(window: Window, values: Float32Array, hashed = hashCells(values), codes = tenthsOf(values)): EncodedDay {
  const [wc, wr, ww] = window;
  const parts = listBlocks(window).map((part) => {
    const [c, r, w, h] = part.window;
    const { codec, raw } = codes ? encodeBlockCodes({ codes, at: (r - wr) * ww + (c - wc), rowStride: ww, planeStride: w * h }, w, h) : encodeBlockCells(copyBlock(values, ww, part.window, wc, wr), w);
    const bytes = raw ? deflateBlock(raw) : new Uint8Array(0);
    return { codec, bytes, sha256: sha256Hex(bytes) };
  });
  const data = new Uint8Array(parts.reduce((n, p) => n + p.bytes.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    data.set(p.bytes, at);
    at += p.bytes.byteLength;
  }
  return { window, ...hashed, blocks: parts.map((p) => ({ codec: p.codec, sha256: p.sha256, length: p.bytes.byteLength })), data };
}

/** The tenths codes of a day's values, or null when some value is not a tenth. */
function tenthsOf(values: Float32Array): Int16Array | null {
  const codes = new Int16Array(values.length);
  return valuesToTenths(values, codes) ? codes : null;
}

/** A block's cells copied out of the day's values (rows of `dayWidth` from the window's corner wc, wr). */
function copyBlock(values: Float32Array, dayWidth: number, [c, r, w, h]: Window, wc: number, wr: number): Float32Array {
  const block = new Float32Array(w * h);
  for (let y = 0; y < h; y++) {
    const from = (r - wr + y) * dayWidth + (c - wc);
    block.set(values.subarray(from, from + w), y * w);
  }
  return block;
}

/** The day's piece: whole, or, revising `base` (the same date's entry in the base version), only its changed blocks. */
export function assembleDay(day: EncodedDay, base: { entry: DayEntry; header: DayHeader } | null): { bytes: Uint8Array; header: Uint8Array; packs: Ref[] } {
  const own: PieceBlock[] = [];
  let at = 0;
  for (const b of day.blocks) {
    own.push({ codec: b.codec, sha256: b.sha256, bytes: day.data.subarray(at, at + b.length) });
    at += b.length;
  }
  const shared = base && base.entry.window.join() === day.window.join() ? shareBlocks(own, base) : null;
  if (!shared) return { ...assembleDayPiece(day.window, own, 0), packs: [] };
  return { ...assembleDayPiece(day.window, shared.blocks, shared.packs.length), packs: shared.packs };
}

/** Blocks equal to the base's point where the base's bytes lie; null when none is shared or too many pieces would be. */
function shareBlocks(own: PieceBlock[], base: { entry: DayEntry; header: DayHeader }): { blocks: PieceBlock[]; packs: Ref[] } | null {
  const lineage = lineageOf(base.entry);
  const used = new Map<number, number>(); // base lineage index -> new lineage index
  const blocks = own.map((block, i): PieceBlock => {
    const was = base.header.block(i);
    if (!("bytes" in block) || block.bytes.byteLength === 0 || was.sha256 !== block.sha256 || was.codec !== block.codec) return block;
    if (!used.has(was.pack)) used.set(was.pack, used.size);
    return { codec: was.codec, sha256: was.sha256, length: was.length, pack: was.pack, offset: was.offset };
  });
  if (used.size === 0 || used.size > MAX_DAY_PACKS) return null;
  // the lineage keeps the base's order, oldest first
  const order = [...used.keys()].sort((a, b) => a - b);
  const renumber = new Map(order.map((old, i) => [old, i]));
  return {
    blocks: blocks.map((b) => ("pack" in b ? { ...b, pack: renumber.get(b.pack)! } : b)),
    packs: order.map((old) => lineage[old]),
  };
}
