// One strip of a series span: the span's days' cells over a band of whole groups, encoded as chunks with their
// group directories (offsets relative to the strip's first chunk). The same code runs in the publish's thread
// and in series worker threads (pipeline/publish/series-worker.ts), so a large span is built on every core.

import type { Archive } from "../../format/archive.js";
import { BlockCodec, type CodesAt, encodeBlockCells, encodeTenths, encodeTenthsAt, holdsValue, valuesToTenths } from "../../format/cells.js";
import type { StoredEntry } from "../../format/entries.js";
import type { Window } from "../../format/grid.js";
import { sha256Hex } from "../../format/hash.js";
import { type ChunkPatch, ChunkOrder, EMPTY_SHA256, GROUP_POSITIONS, GroupLattice, encodeChunkPatch } from "../../format/series.js";
import { deflateBlock } from "./pieces.js";
import type { DayEntry } from "../../format/version-index.js";

/** Days whose strip cells are read at once. */
const LOAD_BATCH = 32;

/** What a strip gives: each of its groups' 16 entries (offsets from the strip's first chunk, pack 0) and its chunks. */
export interface StripResult {
  groups: number[];
  entries: StoredEntry[][];
  chunks: Uint8Array;
}

/** Encodes the chunks of the groups in `strip` (a band of whole groups of `lattice`). */
export async function encodeStrip(days: DayEntry[], lattice: GroupLattice, strip: Window, archive: Archive): Promise<StripResult> {
  const cells = await Strip.load(days, strip, archive);
  try {
    return encodeChunks(cells, lattice, strip);
  } finally {
    cells.release();
  }
}

function encodeChunks(cells: Strip, lattice: GroupLattice, strip: Window): StripResult {
  const groups = groupsIn(lattice, strip);
  const parts: Uint8Array[] = [];
  let offset = 0;
  const entries = groups.map((group) =>
    Array.from({ length: GROUP_POSITIONS }, (_, position): StoredEntry => {
      const chunk = cells.encodeChunk(lattice.chunkWindow(group, position));
      if (!chunk) return { ...EMPTY_ENTRY, offset };
      parts.push(chunk.bytes);
      const entry = { codec: chunk.codec, order: chunk.order, pack: 0, length: chunk.length, sha256: chunk.sha256, offset };
      offset += chunk.length;
      return entry;
    }),
  );
  // its own buffer, so a worker thread can hand it over without a copy
  const chunks = new Uint8Array(offset);
  let at = 0;
  for (const part of parts) {
    chunks.set(part, at);
    at += part.byteLength;
  }
  return { groups, entries, chunks };
}

function groupsIn(lattice: GroupLattice, strip: Window): number[] {
  const g = lattice.groupSide;
  const first = Math.floor(strip[1] / g) - lattice.row0;
  const last = Math.floor((strip[1] + strip[3] - 1) / g) - lattice.row0;
  const out: number[] = [];
  for (let r = first; r <= last; r++) for (let c = 0; c < lattice.cols; c++) out.push(r * lattice.cols + c);
  return out;
}

/**
 * Strip buffers of this thread, kept for the next strip: a fresh one's pages are faulted in as its cells are copied,
 * and for a year's strip of the full grid (39 MB) that took 200 ms, eight times the copy itself.
 */
const spareCodes: Int16Array[] = [];
const SPARE_CODES = 2;

function takeCodes(length: number): Int16Array {
  const i = spareCodes.findIndex((b) => b.length >= length);
  return (i >= 0 ? spareCodes.splice(i, 1)[0] : new Int16Array(length)).subarray(0, length);
}

function giveBack(codes: Int16Array): void {
  spareCodes.unshift(new Int16Array(codes.buffer));
  spareCodes.length = Math.min(spareCodes.length, SPARE_CODES);
}

/** Two work buffers of a thread, grown as needed: a chunk's cells, and its cells in the chosen chunk order. */
const buffers = [new Int16Array(4096), new Int16Array(4096)];
function scratch(which: 0 | 1, length: number): Int16Array {
  if (buffers[which].length < length) buffers[which] = new Int16Array(length);
  return buffers[which].subarray(0, length);
}

/** A chunk with no value held: no bytes. */
export const EMPTY_ENTRY: StoredEntry = { codec: BlockCodec.Empty, order: ChunkOrder.Cells, pack: 0, length: 0, sha256: EMPTY_SHA256, offset: 0 };

export type EncodedChunk = Omit<StoredEntry, "offset" | "pack"> & { bytes: Uint8Array };

/**
 * A strip of a span's cells over all its days, as tenths codes, day after day; the days' float values are read
 * instead only when some value is not tenths.
 */
class Strip {
  private constructor(
    readonly window: Window,
    readonly days: number,
    private readonly codes: Int16Array | null,
    private readonly floats: Float32Array[] | null,
  ) {}

  static async load(days: DayEntry[], window: Window, archive: Archive): Promise<Strip> {
    const cells = window[2] * window[3];
    // every cell of it is written: each day's blocks cover the strip, an Empty block with the missing code
    const codes = takeCodes(cells * days.length);
    // a batch of days at once: their reads are in flight together (libuv's threadpool), not one after another
    for (let first = 0; first < days.length; first += LOAD_BATCH) {
      const batch = days.slice(first, first + LOAD_BATCH);
      const held = await Promise.all(batch.map((day, k) => archive.readCodes(day, window, codes.subarray((first + k) * cells, (first + k + 1) * cells))));
      if (held.includes(false)) {
        giveBack(codes);
        return new Strip(window, days.length, null, await Promise.all(days.map((each) => archive.readCells(each, window))));
      }
    }
    return new Strip(window, days.length, codes, null);
  }

  /** Its codes' buffer goes to the next strip of this thread. */
  release(): void {
    if (this.codes) giveBack(this.codes);
  }

  /** The strip indices of a chunk's cells, row-major. */
  private cellsOf([cc, cr, cw, ch]: Window): number[] {
    const out: number[] = [];
    for (let y = 0; y < ch; y++) for (let x = 0; x < cw; x++) out.push((cr - this.window[1] + y) * this.window[2] + (cc - this.window[0] + x));
    return out;
  }

  /** A chunk's stored bytes: its cells with all the span's days (encodeCodes); null: nothing held. */
  encodeChunk(chunk: Window): EncodedChunk | null {
    if (chunk[2] === 0 || chunk[3] === 0) return null;
    if (!this.codes) return this.encodeFloats(this.cellsOf(chunk), chunk[2]);
    // the chunk's cells are read where they lie in the strip, a plane a day
    const [sc, sr, sw, sh] = this.window;
    return encodeCodes({ codes: this.codes, at: (chunk[1] - sr) * sw + (chunk[0] - sc), rowStride: sw, planeStride: sw * sh }, chunk[2], chunk[3], this.days);
  }

  /** A chunk of a strip that holds values tenths cannot: each cell's days as float32 (or tenths if they fit). */
  private encodeFloats(cells: number[], width: number): EncodedChunk | null {
    const values = new Float32Array(cells.length * this.days);
    cells.forEach((cell, i) => this.floats!.forEach((day, k) => (values[i * this.days + k] = day[cell])));
    return encodeChunkValues(values, width, cells.length / width, this.days);
  }
}

function encodeFloatChunk(values: Float32Array, days: number): EncodedChunk | null {
  const { codec, raw } = encodeBlockCells(values, days);
  if (!raw) return null;
  const bytes = deflateBlock(raw);
  return { codec, order: ChunkOrder.Cells, bytes, length: bytes.byteLength, sha256: sha256Hex(bytes) };
}

/** A chunk's stored bytes from its tenths codes (missing -32768), a plane of `width` x `height` cells a day; null when nothing is held. */
function encodeCodes(codes: CodesAt, width: number, height: number, days: number): EncodedChunk | null {
  if (!holdsValue(codes, width, height, days)) return null;
  const bytes = deflateBlock(encodeTenthsAt(codes, width, height, days));
  return { codec: BlockCodec.Tenths, order: ChunkOrder.Days, bytes, length: bytes.byteLength, sha256: sha256Hex(bytes) };
}

/**
 * A Patch of the chunk stored as `base` (a whole chunk of the span's lineage): its `days`, ascending, taken from the
 * chunk's values `byDay` (each day's `width` x `height` cells); tenths as Tenths planes, else float32 (docs/format.md §7).
 */
export function encodePatch(base: StoredEntry, days: number[], byDay: Float32Array[], [width, height]: [number, number]): EncodedChunk {
  const cells = width * height;
  const values = new Float32Array(days.length * cells);
  days.forEach((d, i) => values.set(byDay[d].subarray(0, cells), i * cells));
  const codes = new Int16Array(values.length);
  const tenths = valuesToTenths(values, codes);
  const patch: ChunkPatch = tenths
    ? { base, days, codec: BlockCodec.Tenths, cells: encodeTenths(codes, width, height, days.length) }
    : { base, days, codec: BlockCodec.Float32, cells: new Uint8Array(values.buffer) };
  const bytes = deflateBlock(encodeChunkPatch(patch));
  return { codec: BlockCodec.Patch, order: ChunkOrder.Days, bytes, length: bytes.byteLength, sha256: sha256Hex(bytes) };
}

/**
 * A chunk from its values, cells-major (each of its `width` x `height` cells' `days` values, NaN missing): tenths when
 * every value is, else float32.
 */
export function encodeChunkValues(values: Float32Array, width: number, height: number, days: number): EncodedChunk | null {
  const cells = width * height;
  const codes = scratch(1, cells * days);
  if (!valuesToTenths(values, codes)) return encodeFloatChunk(values, days);
  const byDay = scratch(0, cells * days);
  for (let i = 0; i < cells; i++) for (let d = 0; d < days; d++) byDay[d * cells + i] = codes[i * days + d];
  return encodeCodes({ codes: byDay, at: 0, rowStride: width, planeStride: cells }, width, height, days);
}
