// A span some of whose days were revised (SILO rewrites recent days every night): each chunk holding a changed cell
// written again as a Patch of the days that changed over its whole base (or whole, when most of its days did), in a
// new piece with the group records that list them; every other chunk and record stays in the pieces of its lineage
// (docs/format.md §7). Reads only the revised days' changed blocks and the changed chunks, so a revision costs what
// changed, whatever the span's or the archive's length: a day of a patch, not the patch's cells over a year.
//
// The lineage's pieces are kept in tiers, as an LSM tree keeps its runs: a revision adds a piece of tier 0; when
// MERGE_FANOUT pieces of one tier end the lineage, they are merged into one piece of the next tier (live records
// and chunks copied as stored, superseded ones dropped). So a lineage holds a few pieces per tier, and each revised
// chunk is copied about log_8(revisions) times.

import { inflateRawSync } from "node:zlib";
import type { Archive } from "../../format/archive.js";
import { BLOCK_SIDE, BlockOrder } from "../../format/blocks.js";
import { BlockCodec } from "../../format/cells.js";
import { type StoredEntry, lineageOf } from "../../format/entries.js";
import { dateToDayNumber } from "../../format/dates.js";
import type { Window } from "../../format/grid.js";
import { type ChunkPatch, GROUP_POSITIONS, GroupLattice, type SeriesSpan, type SpanLayout, decodeChunkPatch, groupEntry } from "../../format/series.js";
import type { DayEntry } from "../../format/version-index.js";
import type { ObjectStore } from "../store/objects.js";
import { type PieceGroup, toSpan, writeSeriesPiece } from "./series-piece.js";
import { EMPTY_ENTRY, type EncodedChunk, encodeChunkValues, encodePatch } from "./series-strip.js";

/** Pieces of one tier that are merged into one of the next. */
export const MERGE_FANOUT = 8;
/** A lineage longer than this is written whole again (tiers keep it far shorter: about 7 a tier). */
const MAX_LINEAGE = 64;

/** Where a changed chunk lies: its group and position, its cells, and the span's days on which a cell of it changed. */
interface ChangedChunk {
  group: number;
  position: number;
  window: Window;
  days: Set<number>;
}

/** A chunk is patched while its patched days are at most this share of the span's; past it, it is written whole. */
const PATCH_SHARE = 1 / 4;

/**
 * The revision of `base` (same dates, window and chunk side) holding `days`; null when it is better written whole
 * (it touches more than half the span's chunks, or its lineage is too long). `baseDays` are the base version's
 * entries of the same dates.
 */
export async function reviseSpan(days: DayEntry[], base: SeriesSpan, baseDays: (DayEntry | null)[], basis: string, archive: Archive, store: ObjectStore): Promise<SeriesSpan | null> {
  const lattice = new GroupLattice(base.window, base.chunkSide);
  const revised = days.flatMap((day, d) => (baseDays[d]?.cells === day.cells ? [] : [d]));
  if (revised.some((d) => baseDays[d]?.window.join() !== days[d].window.join())) return null;
  const { changed, revised: revisedDays } = await findChanges(lattice, revised.map((d) => [d, baseDays[d]!, days[d]]), archive);
  // no chunk changed (a source replaced by one with the same cells): the span's pieces stand, with the new sources
  if (changed.length === 0) return { ...base, sources: days.map((d) => d.sources), basis };
  // a revision touching most of the span's chunks shares little: the span is written whole, its lineage starts again
  if (changed.length * 2 > lattice.countChunks(lattice.window)) return null;
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
  const current = await readDirectories(lattice, layout, keep, changed, base, archive);
  const patches = new PatchReader(base, days.length, archive);
  // a patch in a piece being merged whose base is merged too is folded into a whole chunk, as an LSM merge folds runs
  const folded = await findFolded(current, keep, patches, lattice);
  const chunks = await encodeChanged([...changed, ...folded], { base, dayCount: days.length, revised: revisedDays, current, keep, patches }, archive);
  const groups = await gatherGroups(keep, current, chunks, base, archive);
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
          const chunk = found.get(key) ?? { group, position, window: lattice.chunkWindow(group, position), days: new Set<number>() };
          chunk.days.add(day);
          found.set(key, chunk);
        }
      });
      return { day, blocks };
    }),
  );
  return { changed: [...found.values()].sort((a, b) => a.group - b.group || a.position - b.position), revised };
}

/** Chunks read from the base span at once: their reads in flight together, their values in memory together. */
const READ_BATCH = 64;

/** A Patch entry's parts, read once a revision (its stored bytes verified against the entry). */
class PatchReader {
  private readonly read = new Map<string, Promise<ChunkPatch>>();

  constructor(
    private readonly span: SeriesSpan,
    private readonly dayCount: number,
    private readonly archive: Archive,
  ) {}

  of(entry: StoredEntry): Promise<ChunkPatch> {
    const lineage = lineageOf(this.span);
    const key = `${entry.pack}@${entry.offset}`;
    let found = this.read.get(key);
    if (!found) {
      found = this.archive.readStored(lineage[entry.pack].sha256, "ser", entry).then((bytes) => decodeChunkPatch(inflateRawSync(bytes), this.dayCount, lineage.length));
      this.read.set(key, found);
    }
    return found;
  }
}

/** What encoding the changed chunks needs besides them: the span, its days, the revised cells, the entries as they are, which packs stay. */
interface RevisionInputs {
  base: SeriesSpan;
  dayCount: number;
  revised: RevisedDay[];
  current: Map<number, StoredEntry[]>;
  keep: number;
  patches: PatchReader;
}

/** Patches in the pieces being merged whose base is in one too: each becomes a whole chunk (no day of it changed now). */
async function findFolded(current: Map<number, StoredEntry[]>, keep: number, patches: PatchReader, lattice: GroupLattice): Promise<ChangedChunk[]> {
  const folded: ChangedChunk[] = [];
  for (const [group, entries] of current) {
    for (const [position, e] of entries.entries()) {
      if (e.codec === BlockCodec.Patch && e.pack >= keep && (await patches.of(e)).base.pack >= keep) folded.push({ group, position, window: lattice.chunkWindow(group, position), days: new Set() });
    }
  }
  return folded;
}

/**
 * Each changed chunk's stored bytes: its values (the base span's, with the revised days' new cells put in: a chunk lies
 * inside one 64-cell block, c divides 64) as a Patch of the days that changed over its whole base, while those days are
 * few and its base stays in the lineage; else encoded whole.
 */
async function encodeChanged(changed: ChangedChunk[], inputs: RevisionInputs, archive: Archive): Promise<Map<string, EncodedChunk | null>> {
  const { base, dayCount, revised } = inputs;
  const out = new Map<string, EncodedChunk | null>();
  for (let first = 0; first < changed.length; first += READ_BATCH) {
    const batch = changed.slice(first, first + READ_BATCH);
    const read = await Promise.all(batch.map((chunk) => archive.readSeries(base, chunk.window, 0, dayCount)));
    for (const [k, chunk] of batch.entries()) {
      const [cc, cr, cw, ch] = chunk.window;
      const byDay = read[k];
      for (const { day, blocks } of revised) {
        const block = blocks.get(blockKey(cc, cr));
        if (!block) continue; // the block did not change that day: the base's cells are the day's
        const [bc, br, bw] = block.window;
        for (let y = 0; y < ch; y++) for (let x = 0; x < cw; x++) byDay[day][y * cw + x] = block.cells[(cr - br + y) * bw + (cc - bc + x)];
      }
      out.set(`${chunk.group}:${chunk.position}`, await encodeRevised(chunk, byDay, inputs));
    }
  }
  return out;
}

/** One changed chunk: a Patch over its whole base when it can be one, else whole. */
async function encodeRevised(chunk: ChangedChunk, byDay: Float32Array[], inputs: RevisionInputs): Promise<EncodedChunk | null> {
  const [, , cw, ch] = chunk.window;
  const cells = cw * ch;
  const { dayCount, keep } = inputs;
  const entry = inputs.current.get(chunk.group)![chunk.position];
  let whole: StoredEntry | null = null;
  const days = new Set(chunk.days);
  if (entry.codec === BlockCodec.Patch) {
    const patch = await inputs.patches.of(entry);
    if (patch.base.pack < keep) {
      whole = patch.base;
      for (const d of patch.days) days.add(d);
    }
  } else if (entry.codec !== BlockCodec.Empty && entry.pack < keep) whole = entry;
  if (whole && chunk.days.size > 0 && days.size <= dayCount * PATCH_SHARE) return encodePatch(whole, [...days].sort((a, b) => a - b), byDay, [cw, ch]);
  const values = new Float32Array(cells * dayCount);
  for (let d = 0; d < dayCount; d++) for (let i = 0; i < cells; i++) values[i * dayCount + d] = byDay[d][i];
  return encodeChunkValues(values, cw, ch, dayCount);
}
/** `read` of every item, READ_BATCH at a time (their reads in flight together), in order. */
async function readInBatches<T, R>(items: T[], read: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let first = 0; first < items.length; first += READ_BATCH) out.push(...(await Promise.all(items.slice(first, first + READ_BATCH).map(read))));
  return out;
}

/**
 * The entries as they are of every group the new piece holds a record of: every group with a changed chunk, and every
 * group whose record lies in a piece being merged (`keep` and after).
 */
async function readDirectories(lattice: GroupLattice, layout: SpanLayout, keep: number, changed: ChangedChunk[], base: SeriesSpan, archive: Archive): Promise<Map<number, StoredEntry[]>> {
  const wanted = new Set(changed.map((c) => c.group));
  for (let g = 0; g < lattice.count; g++) if (layout.locate(g).pack >= keep) wanted.add(g);
  const groups = [...wanted].sort((a, b) => a - b);
  const directories = await readInBatches(groups, (group) => archive.readGroup(base, group));
  return new Map(groups.map((group, k) => [group, Array.from({ length: GROUP_POSITIONS }, (_, position) => groupEntry(directories[k], position))]));
}

/** The group records of the new piece, in group order; chunks of merged pieces not written again are copied as stored. */
async function gatherGroups(
  keep: number,
  current: Map<number, StoredEntry[]>,
  chunks: Map<string, EncodedChunk | null>,
  base: SeriesSpan,
  archive: Archive,
): Promise<{ records: PieceGroup[]; bytes: Uint8Array[] }> {
  const lineage = lineageOf(base);
  const groups = [...current.keys()];
  const copies = groups.flatMap((group) => current.get(group)!.flatMap((e, position) => (e.length > 0 && e.pack >= keep && !chunks.has(`${group}:${position}`) ? [e] : [])));
  const copied = new Map((await readInBatches(copies, (e) => archive.readStored(lineage[e.pack].sha256, "ser", e))).map((bytes, i) => [copies[i], bytes]));
  const bytes: Uint8Array[] = [];
  let offset = 0;
  const place = (stored: Uint8Array, e: Omit<StoredEntry, "pack" | "offset">): StoredEntry => {
    bytes.push(stored);
    offset += stored.byteLength;
    return { ...e, pack: keep, offset: offset - stored.byteLength };
  };
  const records = groups.map((group): PieceGroup => ({
    group,
    entries: current.get(group)!.map((e, position) => {
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
