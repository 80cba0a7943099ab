// A span some of whose days were revised (SILO rewrites recent days every night): its changed chunks re-encoded
// and written in a new piece with the group records that list them; every other chunk and record stays in the
// pieces of its lineage (docs/format.md §9). Reads only the revised days' changed blocks and the changed chunks, so a
// revision costs what changed, whatever the span's or the archive's length.
//
// The lineage's pieces are kept in tiers, as an LSM tree keeps its runs: a revision adds a piece of tier 0; when
// MERGE_FANOUT pieces of one tier end the lineage, they are merged into one piece of the next tier (live records
// and chunks copied as stored, superseded ones dropped). So a lineage holds a few pieces per tier, and each revised
// chunk is copied about log_8(revisions) times.

import type { Archive } from "../../format/archive.js";
import { BLOCK_SIDE, BlockOrder } from "../../format/blocks.js";
import { type StoredEntry, lineageOf } from "../../format/entries.js";
import { dateToDayNumber } from "../../format/dates.js";
import type { Window } from "../../format/grid.js";
import { GroupLattice, type SeriesSpan, type SpanLayout, groupEntry } from "../../format/series.js";
import type { DayEntry } from "../../format/version-index.js";
import type { ObjectStore } from "../dist/files.js";
import { type PieceGroup, toSpan, writeSeriesPiece } from "./series-piece.js";
import { EMPTY_ENTRY, encodeChunkValues } from "./series-strip.js";

/** Pieces of one tier that are merged into one of the next. */
export const MERGE_FANOUT = 8;
/** A lineage longer than this is written whole again (tiers keep it far shorter: about 7 a tier). */
const MAX_LINEAGE = 64;

/** Where a changed chunk lies: its group and position, and its cells. */
interface ChangedChunk {
  group: number;
  position: number;
  window: Window;
}

/**
 * The revision of `base` (same dates, window and chunk side) holding `days`; null when it is better written whole
 * (it touches more than half the span's groups, or its lineage is too long). `baseDays` are the base version's
 * entries of the same dates.
 */
export async function reviseSpan(days: DayEntry[], base: SeriesSpan, baseDays: (DayEntry | null)[], basis: string, archive: Archive, store: ObjectStore): Promise<SeriesSpan | null> {
  const lattice = new GroupLattice(base.window, base.chunkSide);
  const revised = days.flatMap((day, d) => (baseDays[d]?.cells === day.cells ? [] : [d]));
  if (revised.some((d) => baseDays[d]?.window.join() !== days[d].window.join())) return null;
  const { changed, revised: revisedDays } = await findChanges(lattice, revised.map((d) => [d, baseDays[d]!, days[d]]), archive);
  // no chunk changed (a source replaced by one with the same cells): the span's pieces stand, with the new sources
  if (changed.length === 0) return { ...base, sources: days.map((d) => d.sources), basis };
  // a revision touching most of the span shares little: the span is written whole, its lineage starts again
  if (new Set(changed.map((c) => c.group)).size * 2 > lattice.count) return null;
  const layout = await archive.readSpanLayout(base);
  const lineage = lineageOf(base);
  if (lineage.length >= MAX_LINEAGE) return null;
  const tiers = layout.packs.map((p) => p.tier);
  // the new piece is of tier 0, unless it takes in the pieces it merges with: those after the first `keep`
  let tier = 0;
  let keep = lineage.length;
  while (keep > 1 && countTail(tiers.slice(0, keep), tier) >= MERGE_FANOUT - 1) {
    keep -= MERGE_FANOUT - 1;
    tier++;
  }
  const chunks = await encodeChanged(changed, base, days.length, revisedDays, archive);
  const groups = await gatherGroups(lattice, layout, keep, changed, chunks, base, archive);
  const older = lineage.slice(0, keep).map((ref, i) => ({ ref, info: layout.packs[i] }));
  const map = Uint32Array.from({ length: lattice.count }, (_, g) => {
    const at = layout.locate(g);
    return (at.pack << 16) | at.record;
  });
  const piece = await writeSeriesPiece({ lattice, firstDay: dateToDayNumber(days[0].date), days: days.length, older, map, groups: groups.records, chunks: groups.bytes, tier }, store);
  return toSpan(days, lattice, piece, basis, older.map((o) => o.ref));
}

/** How many pieces at the end of the lineage are of `tier`. */
function countTail(tiers: number[], tier: number): number {
  let n = 0;
  for (let i = tiers.length - 1; i >= 1 && tiers[i] === tier; i--) n++;
  return n;
}

/** A revised day (its index in the span) and the new cells of each of its blocks that changed, by lattice block. */
interface RevisedDay {
  day: number;
  blocks: Map<string, { window: Window; cells: Float32Array }>;
}

const blockKey = (col: number, row: number) => `${Math.floor(col / BLOCK_SIDE)},${Math.floor(row / BLOCK_SIDE)}`;

/**
 * The chunks holding a cell whose value changed on a revised day (blocks whose bytes differ, compared cell by cell),
 * and each revised day's changed blocks with their new cells; every day's and block's reads in flight together.
 */
async function findChanges(lattice: GroupLattice, pairs: [number, DayEntry, DayEntry][], archive: Archive): Promise<{ changed: ChangedChunk[]; revised: RevisedDay[] }> {
  const found = new Map<string, ChangedChunk>();
  const revised = await Promise.all(
    pairs.map(async ([day, was, now]): Promise<RevisedDay> => {
      const [before, after] = await Promise.all([archive.readHeader(was), archive.readHeader(now)]);
      const parts = new BlockOrder(now.window).parts.filter((part) => before.block(part.index).sha256 !== after.block(part.index).sha256);
      const read = await Promise.all(parts.map((part) => Promise.all([archive.readCells(was, part.window), archive.readCells(now, part.window)])));
      const blocks = new Map<string, { window: Window; cells: Float32Array }>();
      parts.forEach((part, k) => {
        const [old, fresh] = read[k];
        const oldBits = new Uint32Array(old.buffer, old.byteOffset, old.length);
        const freshBits = new Uint32Array(fresh.buffer, fresh.byteOffset, fresh.length);
        const [c0, r0, w] = part.window;
        blocks.set(blockKey(c0, r0), { window: part.window, cells: fresh });
        for (let i = 0; i < oldBits.length; i++) {
          if (oldBits[i] === freshBits[i]) continue;
          const { group, position } = lattice.locate(c0 + (i % w), r0 + Math.floor(i / w));
          const key = `${group}:${position}`;
          if (!found.has(key)) found.set(key, { group, position, window: lattice.chunkWindow(group, position) });
        }
      });
      return { day, blocks };
    }),
  );
  return { changed: [...found.values()].sort((a, b) => a.group - b.group || a.position - b.position), revised };
}

/** Chunks read from the base span at once: their reads in flight together, their values in memory together. */
const READ_BATCH = 64;

/**
 * Each changed chunk's values: the base span's, with the revised days' new cells put in (a chunk lies inside one
 * 64-cell block: c divides 64); then encoded.
 */
async function encodeChanged(changed: ChangedChunk[], base: SeriesSpan, dayCount: number, revised: RevisedDay[], archive: Archive): Promise<Map<string, ReturnType<typeof encodeChunkValues>>> {
  const out = new Map<string, ReturnType<typeof encodeChunkValues>>();
  for (let first = 0; first < changed.length; first += READ_BATCH) {
    const batch = changed.slice(first, first + READ_BATCH);
    const read = await Promise.all(batch.map((chunk) => archive.readSeries(base, chunk.window, 0, dayCount)));
    batch.forEach((chunk, k) => {
      const [cc, cr, cw, ch] = chunk.window;
      const byDay = read[k];
      for (const { day, blocks } of revised) {
        const block = blocks.get(blockKey(cc, cr));
        if (!block) continue; // the block did not change that day: the base's cells are the day's
        const [bc, br, bw] = block.window;
        for (let y = 0; y < ch; y++) for (let x = 0; x < cw; x++) byDay[day][y * cw + x] = block.cells[(cr - br + y) * bw + (cc - bc + x)];
      }
      const cells = cw * ch;
      const values = new Float32Array(cells * dayCount);
      for (let d = 0; d < dayCount; d++) for (let i = 0; i < cells; i++) values[i * dayCount + d] = byDay[d][i];
      out.set(`${chunk.group}:${chunk.position}`, encodeChunkValues(values, cells, dayCount));
    });
  }
  return out;
}

/** `read` of every item, READ_BATCH at a time (their reads in flight together), in order. */
async function readInBatches<T, R>(items: T[], read: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let first = 0; first < items.length; first += READ_BATCH) out.push(...(await Promise.all(items.slice(first, first + READ_BATCH).map(read))));
  return out;
}

/**
 * The group records of the new piece, in group order: every group with a changed chunk, and every group whose record
 * lies in a piece being merged (`keep` and after); chunks of merged pieces are copied as stored.
 */
async function gatherGroups(
  lattice: GroupLattice,
  layout: SpanLayout,
  keep: number,
  changed: ChangedChunk[],
  chunks: Map<string, ReturnType<typeof encodeChunkValues>>,
  base: SeriesSpan,
  archive: Archive,
): Promise<{ records: PieceGroup[]; bytes: Uint8Array[] }> {
  const lineage = lineageOf(base);
  const wanted = new Set(changed.map((c) => c.group));
  for (let g = 0; g < lattice.count; g++) if (layout.locate(g).pack >= keep) wanted.add(g);
  const groups = [...wanted].sort((a, b) => a - b);
  const directories = await readInBatches(groups, (group) => archive.readGroup(base, group));
  // the entries as they were; those of merged pieces' chunks (not re-encoded) are copied as stored
  const was = directories.map((directory) => Array.from({ length: 64 }, (_, position) => groupEntry(directory, position)));
  const copies = groups.flatMap((group, k) => was[k].flatMap((e, position) => (e.length > 0 && e.pack >= keep && !chunks.has(`${group}:${position}`) ? [e] : [])));
  const copied = new Map((await readInBatches(copies, (e) => archive.readStored(lineage[e.pack].sha256, "ser", e))).map((bytes, i) => [copies[i], bytes]));
  const bytes: Uint8Array[] = [];
  let offset = 0;
  const place = (stored: Uint8Array, e: Omit<StoredEntry, "pack" | "offset">): StoredEntry => {
    bytes.push(stored);
    offset += stored.byteLength;
    return { ...e, pack: keep, offset: offset - stored.byteLength };
  };
  const records = groups.map((group, k): PieceGroup => ({
    group,
    entries: was[k].map((e, position) => {
      const key = `${group}:${position}`;
      if (chunks.has(key)) {
        const chunk = chunks.get(key);
        return chunk ? place(chunk.bytes, chunk) : { ...EMPTY_ENTRY };
      }
      const stored = copied.get(e);
      return stored ? place(stored, e) : e.length > 0 ? e : { ...EMPTY_ENTRY };
    }),
  }));
  return { records, bytes };
}
