// One series piece written (docs/format.md §7): a span's header (its lineage and, when it has older pieces, where
// every group's record lies), the group records this piece holds with their Merkle paths, then its chunks. A span
// written whole and a span's revision are both written here, so the byte rule has one writer.

import { hexToBytes, type StoredEntry } from "../../format/entries.js";
import { sha256Hex } from "../../format/hash.js";
import type { Ref } from "../../format/objects.js";
import type { DayEntry } from "../../format/version-index.js";
import { assertValid } from "../../schemas/validate.js";
import { type GroupLattice, type PackInfo, type SeriesSpan, buildMerkle, encodeGroupEntries, encodeSeriesHeader, groupRecordBytes, merkleDepth, seriesHeaderBytes } from "../../format/series.js";
import type { ObjectStore } from "../store/objects.js";

/** A group record this piece holds: its 16 entries; those of chunks stored here give offsets from the piece's first chunk. */
export interface PieceGroup {
  group: number;
  entries: StoredEntry[];
}

export interface SeriesPieceInput {
  lattice: GroupLattice;
  firstDay: number;
  days: number;
  /** the older pieces of the lineage, oldest first, as their headers described them (none for a span written whole) */
  older: { ref: Ref; info: PackInfo }[];
  /** (pack << 16 | record) of every group, for the groups this piece does not hold (ignored without older pieces) */
  map: Uint32Array | null;
  /** the records this piece holds, in group order; entries of chunks stored here carry the piece's own pack index */
  groups: PieceGroup[];
  /** the chunks stored here, in the order their entries' offsets count */
  chunks: Uint8Array[];
  /** its tier in the lineage (format/series.ts PackInfo); 0 unless it merges older pieces */
  tier?: number;
}

export interface WrittenPiece {
  ref: Ref;
  root: string;
  /** the header's Ref when the lineage has older pieces (readers then read it to find a group's record) */
  header?: Ref;
  info: PackInfo;
}

/** Header, group records (each with its Merkle path), chunks: assembled and stored as one content-addressed object. */
export async function writeSeriesPiece(input: SeriesPieceInput, store: ObjectStore): Promise<WrittenPiece> {
  const { lattice, older, groups } = input;
  const packCount = older.length + 1;
  const depth = merkleDepth(groups.length);
  const recordsAt = seriesHeaderBytes(packCount, lattice.count);
  const chunkBase = recordsAt + groups.length * groupRecordBytes(depth);
  const own = packCount - 1;
  const directories = groups.map((g) => encodeGroupEntries(g.entries.map((e) => (e.pack === own && e.length > 0 ? { ...e, offset: e.offset + chunkBase } : e))));
  const { root, paths } = await buildMerkle(directories.map((d) => hexToBytes(sha256Hex(d))), depth, sha256Hex);
  const info: PackInfo = { root, records: groups.length, recordsAt, tier: input.tier ?? 0 };
  let map: Uint32Array | null = null;
  if (packCount > 1) {
    map = Uint32Array.from(input.map!);
    groups.forEach((g, record) => (map![g.group] = (own << 16) | record));
  }
  const header = encodeSeriesHeader({ window: lattice.window, firstDay: input.firstDay, days: input.days, chunkSide: lattice.chunkSide, groupCount: lattice.count, packs: [...older.map((o) => o.info), info], map });
  const parts: Uint8Array[] = [header];
  directories.forEach((d, i) => parts.push(paths[i], d));
  const ref = await store.put(Buffer.concat([...parts, ...input.chunks]), "ser");
  return { ref, root, info, ...(packCount > 1 ? { header: { sha256: sha256Hex(header), size: header.byteLength } } : {}) };
}

/** The index entry of a span whose newest piece is `piece` (sources inline until the series stage places them). */
export function toSpan(days: DayEntry[], lattice: GroupLattice, piece: WrittenPiece, basis: string, packs: Ref[] = []): SeriesSpan {
  const sources = days.map((d) => d.sources);
  assertValid("dist-series-sources.schema.json", sources, `series sources ${days[0].date}..`);
  const span: SeriesSpan = { first: days[0].date, last: days[days.length - 1].date, window: lattice.window, chunkSide: lattice.chunkSide, piece: piece.ref, root: piece.root, sources, basis };
  return packs.length > 0 ? { ...span, packs, header: piece.header } : span;
}
