// Day pieces (docs/format.md §5): a header (the block directory), then the blocks this piece stores. Both
// directions live here: the writer assembles a piece from its blocks, readers parse its header.
//
//   "CDSDAY04"                          8 bytes magic
//   col, row, width, height, blockSide  5 x u32 LE
//   blockCount                          u32 LE
//   blockCount x stored entry           48 bytes each (format/entries.ts): codec, pack, length, offset, sha256
//   the blocks this piece stores, in piece order
//
// A revised day stores only its changed blocks: an unchanged block's entry points into the piece it came from (a
// pack the day entry lists), so a revision of a few local patches costs those patches' blocks.

import { BLOCK_SIDE, listBlocks } from "./blocks.js";
import type { BlockCodec } from "./cells.js";
import { DAY_CODECS, ENTRY_BYTES, type StoredEntry, checkEntries, readEntry, writeEntry } from "./entries.js";
import type { Window } from "./grid.js";

const DAY_MAGIC = "CDSDAY04";
const DAY_FIXED_BYTES = 8 + 6 * 4;

/** One block as the writer has it: stored here (its bytes), or already stored in an older pack of the lineage. */
export type PieceBlock =
  | { codec: BlockCodec; sha256: string; bytes: Uint8Array }
  | { codec: BlockCodec; sha256: string; length: number; pack: number; offset: number };

/** A parsed day-piece header, kept compact (readers cache many): its own bytes; an entry is made when asked for. */
export class DayHeader {
  constructor(
    readonly window: Window,
    private readonly bytes: Uint8Array,
    readonly count: number,
  ) {}

  /** Every block's entry (tools and tests; readers ask for the blocks they need). */
  get blocks(): StoredEntry[] {
    return Array.from({ length: this.count }, (_, i) => this.block(i));
  }

  block(i: number): StoredEntry {
    return readEntry(this.bytes, DAY_FIXED_BYTES + ENTRY_BYTES * i);
  }
}

export function dayHeaderSize(blockCount: number): number {
  return DAY_FIXED_BYTES + ENTRY_BYTES * blockCount;
}

/**
 * A whole piece: the header of `blocks` (in listBlocks order), then the bytes of those stored here, which take
 * pack index `ownPack` (the lineage's last: the number of older packs).
 */
export function assembleDayPiece(window: Window, blocks: PieceBlock[], ownPack: number): { bytes: Uint8Array; header: Uint8Array } {
  if (blocks.length !== listBlocks(window).length) throw new Error(`a day piece of window ${window.join(",")} needs ${listBlocks(window).length} blocks`);
  const headerSize = dayHeaderSize(blocks.length);
  const stored = blocks.reduce((n, b) => n + ("bytes" in b ? b.bytes.byteLength : 0), 0);
  const bytes = new Uint8Array(headerSize + stored);
  const view = new DataView(bytes.buffer);
  for (let i = 0; i < 8; i++) bytes[i] = DAY_MAGIC.charCodeAt(i);
  [...window, BLOCK_SIDE, blocks.length].forEach((n, i) => view.setUint32(8 + 4 * i, n, true));
  let at = headerSize;
  blocks.forEach((b, i) => {
    const entry: StoredEntry =
      "bytes" in b
        ? { codec: b.codec, order: 0, pack: b.bytes.byteLength > 0 ? ownPack : 0, offset: b.bytes.byteLength > 0 ? at : 0, length: b.bytes.byteLength, sha256: b.sha256 }
        : { codec: b.codec, order: 0, pack: b.pack, offset: b.offset, length: b.length, sha256: b.sha256 };
    writeEntry(bytes, DAY_FIXED_BYTES + ENTRY_BYTES * i, entry);
    if ("bytes" in b) {
      bytes.set(b.bytes, at);
      at += b.bytes.byteLength;
    }
  });
  return { bytes, header: bytes.slice(0, headerSize) };
}

/**
 * Parses a verified header of a piece whose lineage holds `packCount` pieces; throws when it does not describe `window`.
 * `legacy`: another format's magic and codecs (make upgrade reads climate-dist-3's CDSDAY03, whose header is laid out alike).
 */
export function decodeDayHeader(bytes: Uint8Array, window: Window, packCount: number, legacy?: { magic: string; codecs: ReadonlySet<number> }): DayHeader {
  const magic = legacy?.magic ?? DAY_MAGIC;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let found = "";
  for (let i = 0; i < 8 && i < bytes.length; i++) found += String.fromCharCode(bytes[i]);
  if (found !== magic || bytes.length < DAY_FIXED_BYTES) throw new Error(`not a ${magic} day piece header`);
  const [col, row, width, height, side, count] = Array.from({ length: 6 }, (_, i) => view.getUint32(8 + 4 * i, true));
  if (side !== BLOCK_SIDE || [col, row, width, height].some((n, i) => n !== window[i])) {
    throw new Error(`day piece header describes window ${[col, row, width, height].join(",")} / block ${side}`);
  }
  if (count !== listBlocks(window).length || bytes.length !== dayHeaderSize(count)) throw new Error("day piece header has the wrong block count");
  checkEntries(bytes, DAY_FIXED_BYTES, count, packCount, 0, legacy?.codecs ?? DAY_CODECS);
  return new DayHeader(window, bytes.slice(), count);
}
