// The stored entry (docs/format.md §5, §7): where one block of a day piece or one chunk of a series piece lies and
// what its bytes are. Both directories use the same 48 bytes, so one rule reads and writes them:
//
//   word    u32 LE   codec (bits 0-7) | chunk order (bits 8-15, series chunks) | pack (bits 16-31)
//   length  u32 LE   stored bytes
//   offset  u64 LE   where they start in their pack
//   sha256  32 bytes of the stored bytes
//
// A pack is the piece that holds the bytes: an entry of a revised piece may point into the piece it revises, so
// unchanged blocks and chunks are shared between versions instead of written again (docs/contract.md §5). `pack` indexes
// the piece's lineage: the older pieces its entry lists in `packs`, oldest first, then the piece itself.

import { BlockCodec } from "./cells.js";
import type { Ref } from "./objects.js";

export const ENTRY_BYTES = 48;
/** The most packs one piece's lineage can name (the pack field's 16 bits). */
export const MAX_PACKS = 0xffff;

export interface StoredEntry {
  codec: BlockCodec;
  /** a series chunk's order (ChunkOrder); 0 for day blocks */
  order: number;
  /** index into the lineage: the entry's `packs`, then the piece itself */
  pack: number;
  offset: number;
  length: number;
  sha256: string;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

export function bytesToHex(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i]];
  return out;
}

const NIBBLE = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) NIBBLE["0123456789abcdef".charCodeAt(i)] = i;

export function hexToBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = (NIBBLE[hex.charCodeAt(2 * i)] << 4) | NIBBLE[hex.charCodeAt(2 * i + 1)];
  return out;
}

export function writeEntry(out: Uint8Array, at: number, e: StoredEntry): void {
  const view = new DataView(out.buffer, out.byteOffset + at, ENTRY_BYTES);
  view.setUint32(0, e.codec | (e.order << 8) | (e.pack << 16), true);
  view.setUint32(4, e.length, true);
  view.setUint32(8, e.offset % 2 ** 32, true);
  view.setUint32(12, Math.floor(e.offset / 2 ** 32), true);
  out.set(hexToBytes(e.sha256), at + 16);
}

/** The entry at `at` (a reader decodes only the entries it uses). */
export function readEntry(bytes: Uint8Array, at: number): StoredEntry {
  const view = new DataView(bytes.buffer, bytes.byteOffset + at, ENTRY_BYTES);
  const word = view.getUint32(0, true);
  return {
    codec: (word & 0xff) as BlockCodec,
    order: (word >>> 8) & 0xff,
    pack: word >>> 16,
    length: view.getUint32(4, true),
    offset: view.getUint32(8, true) + view.getUint32(12, true) * 2 ** 32,
    sha256: bytesToHex(bytes.subarray(at + 16, at + 48)),
  };
}

/** The codecs an entry of a series piece may name; a day piece's, all but Patch. */
export const KNOWN_CODECS: ReadonlySet<number> = new Set(Object.values(BlockCodec));
export const DAY_CODECS: ReadonlySet<number> = new Set([BlockCodec.Empty, BlockCodec.Float32, BlockCodec.Tenths]);

/**
 * Checks `count` entries from `at` as read: every codec one of `codecs`, every order at most `maxOrder`, every pack
 * inside a lineage of `packCount` pieces; throws naming the first that is not.
 */
export function checkEntries(bytes: Uint8Array, at: number, count: number, packCount: number, maxOrder: number, codecs = KNOWN_CODECS): void {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < count; i++) {
    const word = view.getUint32(at + i * ENTRY_BYTES, true);
    if (!codecs.has(word & 0xff)) throw new Error(`entry ${i} names an unknown codec ${word & 0xff}`);
    if (((word >>> 8) & 0xff) > maxOrder) throw new Error(`entry ${i} names an unknown order ${(word >>> 8) & 0xff}`);
    if (word >>> 16 >= packCount) throw new Error(`entry ${i} names pack ${word >>> 16} of a lineage of ${packCount}`);
  }
}

/** The pieces an entry's lineage names: its older packs, then its own piece. */
export function lineageOf(entry: { piece: Ref; packs?: Ref[] }): Ref[] {
  return [...(entry.packs ?? []), entry.piece];
}
