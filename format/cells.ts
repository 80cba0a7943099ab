// Block codecs of day pieces (docs/format.md §5): lossless, chosen per block, shared by writer and readers.
//
// SILO values carry one decimal, so most blocks store int16 tenths; a block is stored that way only when every
// value reads back as the very same float32 (Math.fround(k / 10) === v), else as float32. Horizontal differences
// make neighbouring cells small numbers, which DEFLATE packs tightly. DEFLATE itself is injected: node:zlib in
// the pipeline and server, DecompressionStream in a browser.

/** How a block's cells are stored. */
export const BlockCodec = {
  /** every cell missing: no bytes */
  Empty: 0,
  /** tenths of a degree as int16 (missing -32768), horizontal differences, raw DEFLATE */
  Tenths: 1,
  /** float32 LE, raw DEFLATE: values that tenths cannot hold exactly */
  Float32: 2,
} as const;
export type BlockCodec = (typeof BlockCodec)[keyof typeof BlockCodec];

/** One NaN bit pattern for every missing cell, so equal content always hashes equal. */
export const MISSING_BITS = 0x7fc00000;
const TENTHS_MISSING = -32768;

let tenthsTable: Float32Array | null = null;

/**
 * float32 of every int16 tenths code; index k + 32768, NaN for the missing code. Built on first use: its 65,536
 * divisions took 12 ms of a server's start, which decodes nothing until asked.
 */
function tenths(): Float32Array {
  if (tenthsTable) return tenthsTable;
  const table = new Float32Array(65536);
  for (let i = 0; i < 65536; i++) table[i] = (i - 32768) / 10;
  table[TENTHS_MISSING + 32768] = NaN;
  return (tenthsTable = table);
}

/** Rewrites every NaN to the canonical pattern; returns how many cells are missing. */
export function canonicalizeMissing(values: Float32Array): number {
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  let missing = 0;
  for (let i = 0; i < values.length; i++) {
    if (values[i] !== values[i]) {
      bits[i] = MISSING_BITS;
      missing++;
    }
  }
  return missing;
}

/** The float32 of a tenths code (NaN for the missing code). */
export function tenthsValue(code: number): number {
  return tenths()[code + 32768];
}

/** The missing code of tenths. */
export const TENTHS_MISSING_CODE = TENTHS_MISSING;

/**
 * Tenths codes of `values` into `out` (missing -32768); false, leaving `out` partly written, as soon as a value is
 * not exactly a float32 of tenths.
 */
export function valuesToTenths(values: Float32Array, out: Int16Array): boolean {
  const table = tenths();
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v !== v) {
      out[i] = TENTHS_MISSING;
      continue;
    }
    const k = Math.round(v * 10);
    if (k < -32767 || k > 32767 || table[k + 32768] !== v) return false;
    out[i] = k;
  }
  return true;
}

/** Each row of `width` codes becomes its first code and the differences that follow (wrapping in int16), in place. */
export function differenceRows(codes: Int16Array, width: number): void {
  for (let start = 0; start < codes.length; start += width) {
    // right to left, so each difference uses the original left neighbour
    for (let i = start + width - 1; i > start; i--) codes[i] = (codes[i] - codes[i - 1]) << 16 >> 16;
  }
}

/** The stored bytes of one block before DEFLATE, and its codec; null bytes for an all-missing block. */
export function encodeBlockCells(values: Float32Array, width: number): { codec: BlockCodec; raw: Uint8Array | null } {
  let present = false;
  for (let i = 0; i < values.length && !present; i++) present = values[i] === values[i];
  if (!present) return { codec: BlockCodec.Empty, raw: null };
  const tenths = new Int16Array(values.length);
  if (!valuesToTenths(values, tenths)) return { codec: BlockCodec.Float32, raw: new Uint8Array(values.slice().buffer) };
  differenceRows(tenths, width);
  return { codec: BlockCodec.Tenths, raw: new Uint8Array(tenths.buffer) };
}

/** Bytes that inflating a block must give: a bound for the decompressor and a check on what it gave. */
export function rawBlockBytes(codec: BlockCodec, cells: number): number {
  return codec === BlockCodec.Tenths ? cells * 2 : codec === BlockCodec.Float32 ? cells * 4 : 0;
}

/**
 * A block as readers keep it: its stored codes (tenths as int16 differences, or float32), decoded one row
 * segment at a time as requests read it, so reading one cell never decodes a whole block and a cached block
 * takes 2 bytes a cell.
 */
export interface StoredBlock {
  codec: BlockCodec;
  width: number;
  tenths: Int16Array | null;
  floats: Float32Array | null;
}

const EMPTY_BLOCK: Omit<StoredBlock, "width"> = { codec: BlockCodec.Empty, tenths: null, floats: null };

/** A block from its inflated bytes; throws when their size does not fit the block. */
export function toStoredBlock(codec: BlockCodec, raw: Uint8Array | null, width: number, height: number): StoredBlock {
  if (codec === BlockCodec.Empty) return { ...EMPTY_BLOCK, width };
  const cells = width * height;
  if (codec !== BlockCodec.Tenths && codec !== BlockCodec.Float32) throw new Error(`unknown block codec ${codec}`);
  if (!raw || raw.byteLength !== rawBlockBytes(codec, cells)) throw new Error(`block inflates to ${raw?.byteLength ?? 0} bytes, expected ${rawBlockBytes(codec, cells)}`);
  // A block is kept (in a cache) as a typed view of its bytes: they are copied out when misaligned (little-endian,
  // as on every platform this runs on) or when they sit in a much larger buffer the view would keep alive.
  const aligned = raw.byteOffset % 4 === 0 && raw.buffer.byteLength - raw.byteLength <= 64 ? raw : raw.slice();
  return codec === BlockCodec.Tenths
    ? { codec, width, tenths: new Int16Array(aligned.buffer, aligned.byteOffset, cells), floats: null }
    : { codec, width, tenths: null, floats: new Float32Array(aligned.buffer, aligned.byteOffset, cells) };
}

/** Writes cells [c0, c1) of block row `row` to `out` from `at`; missing cells are NaN. */
export function readBlockRow(block: StoredBlock, row: number, c0: number, c1: number, out: Float32Array, at: number): void {
  const start = row * block.width;
  if (block.tenths) {
    const d = block.tenths;
    const table = tenths();
    let k = 0;
    for (let i = start; i < start + c0; i++) k = (k + d[i]) << 16 >> 16;
    for (let i = start + c0; i < start + c1; i++) {
      k = (k + d[i]) << 16 >> 16;
      out[at++] = table[k + 32768];
    }
  } else if (block.floats) out.set(block.floats.subarray(start + c0, start + c1), at);
  else out.fill(NaN, at, at + (c1 - c0));
}

/** A 32-bit word with its bytes reversed: little-endian float32 bits to big-endian (XDR, OPeNDAP's wire order) and back. */
export const swapWord = (w: number): number => ((w & 0xff) << 24) | ((w & 0xff00) << 8) | ((w >>> 8) & 0xff00) | (w >>> 24);

let tenthsWordsTable: Uint32Array | null = null;

/** The float32 of every tenths code as big-endian bits (index k + 32768; the missing code's the canonical NaN's). */
function tenthsWords(): Uint32Array {
  if (tenthsWordsTable) return tenthsWordsTable;
  const bits = new Uint32Array(tenths().buffer.slice(0));
  for (let i = 0; i < bits.length; i++) bits[i] = swapWord(bits[i]);
  return (tenthsWordsTable = bits);
}

/**
 * readBlockRow for a big-endian reader: the cells' float32 bits byte-swapped into `out` (words) from `at`, so a map
 * goes to the wire in one pass (a tenths block through its own table; missing cells the canonical NaN).
 */
export function readBlockRowBigEndian(block: StoredBlock, row: number, c0: number, c1: number, out: Uint32Array, at: number): void {
  const start = row * block.width;
  if (block.tenths) {
    const d = block.tenths;
    const table = tenthsWords();
    let k = 0;
    for (let i = start; i < start + c0; i++) k = (k + d[i]) << 16 >> 16;
    for (let i = start + c0; i < start + c1; i++) {
      k = (k + d[i]) << 16 >> 16;
      out[at++] = table[k + 32768];
    }
  } else if (block.floats) {
    const words = new Uint32Array(block.floats.buffer, block.floats.byteOffset, block.floats.length);
    for (let i = start + c0; i < start + c1; i++) out[at++] = swapWord(words[i]);
  } else out.fill(swapWord(MISSING_BITS), at, at + (c1 - c0));
}

/**
 * Writes the tenths codes of cells [c0, c1) of block row `row` to `out` from `at` (missing -32768), the form a
 * writer re-encodes without a round trip through float32; false for a float32 block, whose values have no code.
 */
export function readBlockCodes(block: StoredBlock, row: number, c0: number, c1: number, out: Int16Array, at: number): boolean {
  if (block.floats) return false;
  if (!block.tenths) {
    out.fill(TENTHS_MISSING, at, at + (c1 - c0));
    return true;
  }
  const start = row * block.width;
  const d = block.tenths;
  let k = 0;
  for (let i = start; i < start + c0; i++) k = (k + d[i]) << 16 >> 16;
  for (let i = start + c0; i < start + c1; i++) {
    k = (k + d[i]) << 16 >> 16;
    out[at++] = k;
  }
  return true;
}
