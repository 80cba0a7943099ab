// Block codecs of day pieces (layout.ts BlockCodec): lossless, chosen per block, shared by writer and readers.
//
// SILO values carry one decimal, so most blocks store int16 tenths; a block is stored that way only when every
// value reads back as the very same float32 (Math.fround(k / 10) === v), else as float32. Horizontal differences
// make neighbouring cells small numbers, which DEFLATE packs tightly. DEFLATE itself is injected: node:zlib in
// the pipeline and server, DecompressionStream in a browser.

import { BlockCodec } from "./layout.js";

/** One NaN bit pattern for every missing cell, so equal content always hashes equal. */
export const MISSING_BITS = 0x7fc00000;
const TENTHS_MISSING = -32768;

/** float32 of every int16 tenths code; index k + 32768, NaN for the missing code */
const TENTHS = (() => {
  const table = new Float32Array(65536);
  for (let k = -32768; k <= 32767; k++) table[k + 32768] = k === TENTHS_MISSING ? NaN : Math.fround(k / 10);
  return table;
})();

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

function toTenths(values: Float32Array): Int16Array | null {
  const out = new Int16Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v !== v) {
      out[i] = TENTHS_MISSING;
      continue;
    }
    const k = Math.round(v * 10);
    if (k < -32767 || k > 32767 || TENTHS[k + 32768] !== v) return null;
    out[i] = k;
  }
  return out;
}

/** The stored bytes of one block before DEFLATE, and its codec; null bytes for an all-missing block. */
export function encodeBlockCells(values: Float32Array, width: number): { codec: BlockCodec; raw: Uint8Array | null } {
  let present = false;
  for (let i = 0; i < values.length && !present; i++) present = values[i] === values[i];
  if (!present) return { codec: BlockCodec.Empty, raw: null };
  const tenths = toTenths(values);
  if (!tenths) return { codec: BlockCodec.Float32, raw: new Uint8Array(values.slice().buffer) };
  for (let start = 0; start < tenths.length; start += width) {
    // right to left, so each difference uses the original left neighbour
    for (let i = start + width - 1; i > start; i--) tenths[i] = (tenths[i] - tenths[i - 1]) << 16 >> 16;
  }
  return { codec: BlockCodec.Tenths, raw: new Uint8Array(tenths.buffer) };
}

/** Bytes that inflating a block must give: a bound for the decompressor and a check on what it gave. */
export function rawBlockBytes(codec: BlockCodec, cells: number): number {
  return codec === BlockCodec.Tenths ? cells * 2 : codec === BlockCodec.Float32 ? cells * 4 : 0;
}

/** Cells of one block from its inflated bytes; missing cells are NaN. Throws on a size that does not fit. */
export function decodeBlockCells(codec: BlockCodec, raw: Uint8Array | null, width: number, height: number): Float32Array {
  const cells = width * height;
  const out = new Float32Array(cells);
  if (codec === BlockCodec.Empty) {
    out.fill(NaN);
    return out;
  }
  if (!raw || raw.byteLength !== rawBlockBytes(codec, cells)) throw new Error(`block inflates to ${raw?.byteLength ?? 0} bytes, expected ${rawBlockBytes(codec, cells)}`);
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  if (codec === BlockCodec.Float32) {
    for (let i = 0; i < cells; i++) out[i] = view.getFloat32(4 * i, true);
    return out;
  }
  if (codec !== BlockCodec.Tenths) throw new Error(`unknown block codec ${codec}`);
  for (let start = 0; start < cells; start += width) {
    let k = 0;
    for (let i = start; i < start + width; i++) {
      k = (k + view.getInt16(2 * i, true)) << 16 >> 16;
      out[i] = TENTHS[k + 32768];
    }
  }
  return out;
}
