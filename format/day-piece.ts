// Day pieces (docs/format.md §5): a header (the block directory) followed by the encoded blocks in piece order.
// Both directions live here: the writer assembles a piece from encoded blocks, readers parse its header.
//
//   "CDSDAY02"                          8 bytes magic
//   col, row, width, height, blockSide  5 x u32 LE
//   blockCount                          u32 LE
//   blockCount x { codec u32, length u32, sha256 32 bytes }
//   block bytes, concatenated in piece order (offsets are cumulative lengths after the header)

import { BLOCK_SIDE, listBlocks } from "./blocks.js";
import { BlockCodec } from "./cells.js";
import type { Window } from "./grid.js";

const DAY_MAGIC = "CDSDAY02";
const DAY_FIXED_BYTES = 8 + 6 * 4;
const BLOCK_ENTRY_BYTES = 40;

export interface BlockEntry {
  codec: BlockCodec;
  offset: number; // from the start of the piece
  length: number;
  sha256: string;
}

/** One block as the writer encoded it: its codec, its stored bytes and their sha256. */
export interface EncodedBlock {
  codec: BlockCodec;
  bytes: Uint8Array;
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

function hexToBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

function encodeDayHeader(window: Window, blocks: { codec: BlockCodec; length: number; sha256: string }[]): Uint8Array {
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

/** A whole piece: the header of `blocks` (in listBlocks order), then their bytes. */
export function assembleDayPiece(window: Window, blocks: EncodedBlock[]): { bytes: Uint8Array; header: Uint8Array } {
  if (blocks.length !== listBlocks(window).length) throw new Error(`a day piece of window ${window.join(",")} needs ${listBlocks(window).length} blocks`);
  const header = encodeDayHeader(window, blocks.map((b) => ({ codec: b.codec, length: b.bytes.byteLength, sha256: b.sha256 })));
  const bytes = new Uint8Array(header.byteLength + blocks.reduce((n, b) => n + b.bytes.byteLength, 0));
  bytes.set(header, 0);
  let at = header.byteLength;
  for (const b of blocks) {
    bytes.set(b.bytes, at);
    at += b.bytes.byteLength;
  }
  return { bytes, header };
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
