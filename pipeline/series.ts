// Series stage: the new version's days -> its series spans (docs/format.md §9), after its index tree is written.
//
// Which spans a version has follows from its dates alone, like an LSM tree whose merges are a binary counter:
// every closed year is one span; the closed months of the open year are grouped by the binary digits of their
// count (8 + 2 + 1 for November); the open month's days likewise (16 + 4 + 2 for the 22nd). A new day rewrites at
// most the spans its digit carries into, so a day costs about log2(31) days of series bytes, and a closed year
// is written once. A span whose days did not change (the same index pages: equal basis) is taken from the base
// version as it is.

import { deflateRawSync } from "node:zlib";
import type { Archive } from "../format/archive.js";
import { BlockCodec, TENTHS_MISSING_CODE, differenceRows, encodeBlockCells } from "../format/cells.js";
import { dateToDayNumber, dayNumberToDate } from "../format/dates.js";
import { type Window, intersectWindows } from "../format/grid.js";
import { sha256Hex } from "../format/hash.js";
import type { Ref } from "../format/objects.js";
import {
  type ChunkEntry,
  ChunkLayout,
  EMPTY_SHA256,
  GroupLattice,
  type SeriesSpan,
  buildMerkle,
  chooseChunkSide,
  encodeGroupEntries,
  encodeSeriesHeader,
  groupRecordBytes,
  seriesHeaderBytes,
} from "../format/series.js";
import type { DayEntry, IndexNode, MonthPage, YearPage } from "../format/version-index.js";
import { assertValid } from "../schemas/validate.js";
import type { ObjectStore } from "./files.js";
import type { IndexTree } from "./index-tree.js";

/** Bump when the span rule or the piece bytes change: every basis changes with it, so nothing stale is reused. */
const SERIES_VERSION = "series-1";
// Same level as the day pieces: within a few percent of the best at a fraction of the time.
const DEFLATE_LEVEL = Number(process.env.SERIES_LEVEL ?? 6);

/** A period of the span rule: its basis, and how to read its day entries when it must be built. */
interface Period {
  basis: string;
  loadDays: () => Promise<DayEntry[]>;
}

/** Inclusive [first, last] runs of 1-based indices: n's binary digits from the highest, in order. */
export function binaryRuns(n: number): [number, number][] {
  const runs: [number, number][] = [];
  let start = 1;
  for (let bit = 2 ** Math.floor(Math.log2(Math.max(1, n))); bit >= 1; bit /= 2) {
    if (n & bit) {
      runs.push([start, start + bit - 1]);
      start += bit;
    }
  }
  return runs;
}

/** The last date of a month (YYYY-MM). */
function monthEnd(month: string): string {
  const [y, m] = month.split("-").map(Number);
  const next = m === 12 ? `${y + 1}-01-01` : `${y}-${String(m + 1).padStart(2, "0")}-01`;
  return dayNumberToDate(dateToDayNumber(next) - 1);
}

const basisOf = (...parts: string[]) => sha256Hex(`${SERIES_VERSION}\n${parts.join("\n")}`);

/** The periods of a version's dates (see the file's opening comment), oldest first. */
async function planPeriods(tree: IndexTree, archive: Archive): Promise<Period[]> {
  const last = tree.coverage.last;
  const readMonth = (node: IndexNode) => archive.readJson<MonthPage>(node.ref).then((p) => p.days);
  const readYear = async (node: IndexNode) => (await Promise.all((await archive.readJson<YearPage>(node.ref)).months.map(readMonth))).flat();
  const periods: Period[] = [];
  for (const year of tree.years) {
    if (`${year.key}-12-31` <= last) {
      periods.push({ basis: basisOf("year", year.key, year.ref.sha256), loadDays: () => readYear(year) });
      continue;
    }
    const months = (await archive.readJson<YearPage>(year.ref)).months;
    const closed = months.filter((m) => monthEnd(m.key) <= last);
    const closedCount = closed.length ? Number(closed[closed.length - 1].key.slice(5)) : 0;
    for (const [a, b] of binaryRuns(closedCount)) {
      const group = closed.filter((m) => Number(m.key.slice(5)) >= a && Number(m.key.slice(5)) <= b);
      if (group.length === 0) continue;
      const basis = basisOf("months", year.key, String(a), String(b), ...group.map((m) => m.ref.sha256));
      periods.push({ basis, loadDays: async () => (await Promise.all(group.map(readMonth))).flat() });
    }
    const open = months.find((m) => monthEnd(m.key) > last);
    if (open) periods.push(...openMonthPeriods(await readMonth(open)));
  }
  return periods;
}

/** The open month's days, in binary runs of day numbers. */
function openMonthPeriods(days: DayEntry[]): Period[] {
  const periods: Period[] = [];
  const lastDay = Number(days[days.length - 1].date.slice(8));
  for (const [a, b] of binaryRuns(lastDay)) {
    const run = days.filter((d) => Number(d.date.slice(8)) >= a && Number(d.date.slice(8)) <= b);
    if (run.length > 0) periods.push({ basis: basisOf("days", JSON.stringify(run)), loadDays: async () => run });
  }
  return periods;
}

/** Runs of consecutive dates with one window: each is one span (a span never holds a gap or two windows). */
function splitRuns(days: DayEntry[]): DayEntry[][] {
  const runs: DayEntry[][] = [];
  for (const day of days) {
    const run = runs[runs.length - 1];
    const prev = run?.[run.length - 1];
    const continues = prev && dateToDayNumber(day.date) === dateToDayNumber(prev.date) + 1 && prev.window.join() === day.window.join();
    if (continues) run.push(day);
    else runs.push([day]);
  }
  return runs;
}

export interface SeriesSummary {
  spans: SeriesSpan[];
  built: number;
  reused: number;
  bytesWritten: number;
}

/** The version's series spans: reused from the base version where their basis is unchanged, else built. */
export async function buildSeries(tree: IndexTree, base: SeriesSpan[], archive: Archive, store: ObjectStore, onSpan: (text: string) => void): Promise<SeriesSummary> {
  const known = new Map<string, SeriesSpan[]>();
  for (const span of base) known.set(span.basis, [...(known.get(span.basis) ?? []), span]);
  const summary: SeriesSummary = { spans: [], built: 0, reused: 0, bytesWritten: 0 };
  for (const period of await planPeriods(tree, archive)) {
    const reuse = known.get(period.basis);
    if (reuse) {
      summary.spans.push(...reuse);
      summary.reused += reuse.length;
      continue;
    }
    for (const run of splitRuns(await period.loadDays())) {
      onSpan(`series ${run[0].date}..${run[run.length - 1].date} (${run.length} days)`);
      const before = store.bytesWritten;
      summary.spans.push(await buildSpan(run, period.basis, archive, store));
      summary.built++;
      summary.bytesWritten += store.bytesWritten - before;
    }
  }
  return summary;
}

/** The rows of the window read at once: whole groups, whole 64-row day blocks (each block inflated once). */
function listStrips(lattice: GroupLattice): Window[] {
  const height = Math.max(lattice.groupSide, 64);
  const [c0, r0, w, h] = lattice.window;
  const strips: Window[] = [];
  for (let top = Math.floor(r0 / height) * height; top < r0 + h; top += height) {
    strips.push(intersectWindows([c0, top, w, height], lattice.window));
  }
  return strips;
}

/** One span's piece and sources object, written; chunks are built a strip of days' cells at a time. */
async function buildSpan(days: DayEntry[], basis: string, archive: Archive, store: ObjectStore): Promise<SeriesSpan> {
  const window = days[0].window;
  const lattice = new GroupLattice(window, chooseChunkSide(days.length));
  const directories: Uint8Array[] = new Array(lattice.count);
  const chunks: Uint8Array[] = [];
  let offset = seriesHeaderBytes() + lattice.count * groupRecordBytes(lattice.depth);
  for (const window of listStrips(lattice)) {
    const strip = await Strip.load(days, window, archive);
    for (const group of groupsIn(lattice, window)) {
      const entries: ChunkEntry[] = [];
      for (let slot = 0; slot < 64; slot++) {
        const chunk = strip.encodeChunk(lattice.chunkWindow(group, slot));
        const { codec, layout, length, sha256 } = chunk ?? { codec: BlockCodec.Empty, layout: ChunkLayout.Cells, length: 0, sha256: EMPTY_SHA256 };
        entries.push({ codec, layout, length, sha256, offset });
        if (chunk) {
          chunks.push(chunk.bytes);
          offset += chunk.length;
        }
      }
      directories[group] = encodeGroupEntries(entries);
    }
  }
  const piece = await writePiece(lattice, dateToDayNumber(days[0].date), days.length, directories, chunks, store);
  const sources = days.map((d) => d.sources);
  assertValid("dist-series-sources.schema.json", sources, `series sources ${days[0].date}..`);
  return {
    first: days[0].date,
    last: days[days.length - 1].date,
    window,
    chunkSide: lattice.chunkSide,
    piece: piece.ref,
    root: piece.root,
    sources: await store.putJson(sources),
    basis,
  };
}

function groupsIn(lattice: GroupLattice, strip: Window): number[] {
  const g = lattice.groupSide;
  const first = Math.floor(strip[1] / g) - lattice.row0;
  const last = Math.floor((strip[1] + strip[3] - 1) / g) - lattice.row0;
  const out: number[] = [];
  for (let r = first; r <= last; r++) for (let c = 0; c < lattice.cols; c++) out.push(r * lattice.cols + c);
  return out;
}

/** Sum of the absolute coded differences: what DEFLATE will mostly pay for. */
function spread(codes: Int16Array): number {
  let total = 0;
  for (let i = 0; i < codes.length; i++) total += Math.abs(codes[i]);
  return total;
}

type EncodedChunk = Omit<ChunkEntry, "offset"> & { bytes: Uint8Array };

/**
 * A chunk is at most a few kB: a window just large enough and a small hash table give the same bytes' worth of
 * compression at half the time of zlib's defaults (a window of 32 kB and memLevel 8 are set up on every call).
 */
const deflate = (raw: Int16Array | Uint8Array): Uint8Array =>
  new Uint8Array(deflateRawSync(raw, { level: DEFLATE_LEVEL, windowBits: Math.min(15, Math.max(9, Math.ceil(Math.log2(raw.byteLength)))), memLevel: 4 }));

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
    const codes = new Int16Array(cells * days.length);
    for (const [d, day] of days.entries()) {
      if (!(await archive.readCodes(day, window, codes.subarray(d * cells, (d + 1) * cells)))) {
        return new Strip(window, days.length, null, await Promise.all(days.map((each) => archive.readCells(each, window))));
      }
    }
    return new Strip(window, days.length, codes, null);
  }

  /** The strip indices of a chunk's cells, row-major. */
  private cellsOf([cc, cr, cw, ch]: Window): number[] {
    const out: number[] = [];
    for (let y = 0; y < ch; y++) for (let x = 0; x < cw; x++) out.push((cr - this.window[1] + y) * this.window[2] + (cc - this.window[0] + x));
    return out;
  }

  /**
   * A chunk's stored bytes: its cells with all the span's days, coded like a block in one of two layouts (rows of
   * cells over days, or rows of days over cells, so the differences run along time or along space), whichever
   * differs less. Null: nothing held.
   */
  encodeChunk(chunk: Window): EncodedChunk | null {
    if (chunk[2] === 0 || chunk[3] === 0) return null;
    const cells = this.cellsOf(chunk);
    if (!this.codes) return this.encodeFloats(cells);
    const days = this.days;
    const n = cells.length;
    const size = this.window[2] * this.window[3];
    const codes = this.codes;
    const byCell = new Int16Array(n * days);
    const byDay = new Int16Array(n * days);
    let present = false;
    for (let d = 0; d < days; d++) {
      const base = d * size;
      for (let i = 0; i < n; i++) {
        const v = codes[base + cells[i]];
        byDay[d * n + i] = v;
        byCell[i * days + d] = v;
        present ||= v !== TENTHS_MISSING_CODE;
      }
    }
    if (!present) return null;
    differenceRows(byCell, days);
    differenceRows(byDay, n);
    const useDays = spread(byDay) < spread(byCell);
    const bytes = deflate(useDays ? byDay : byCell);
    return { codec: BlockCodec.Tenths, layout: useDays ? ChunkLayout.Days : ChunkLayout.Cells, bytes, length: bytes.byteLength, sha256: sha256Hex(bytes) };
  }

  /** A chunk of a strip that holds values tenths cannot: each cell's days as float32 (or tenths if they fit). */
  private encodeFloats(cells: number[]): EncodedChunk | null {
    const values = new Float32Array(cells.length * this.days);
    cells.forEach((cell, i) => this.floats!.forEach((day, k) => (values[i * this.days + k] = day[cell])));
    const { codec, raw } = encodeBlockCells(values, this.days);
    if (!raw) return null;
    const bytes = deflate(raw);
    return { codec, layout: ChunkLayout.Cells, bytes, length: bytes.byteLength, sha256: sha256Hex(bytes) };
  }
}

/** Header, group records (each with its Merkle path), chunks: assembled and stored as one content-addressed object. */
async function writePiece(lattice: GroupLattice, firstDay: number, days: number, directories: Uint8Array[], chunks: Uint8Array[], store: ObjectStore): Promise<{ ref: Ref; root: string }> {
  const leaves = directories.map((d) => Buffer.from(sha256Hex(d), "hex"));
  const { root, paths } = await buildMerkle(leaves, lattice.depth, sha256Hex);
  const parts = [encodeSeriesHeader(lattice, firstDay, days, root)];
  directories.forEach((d, i) => parts.push(paths[i], d));
  const bytes = Buffer.concat([...parts, ...chunks]);
  return { ref: await store.put(bytes, "ser"), root };
}
