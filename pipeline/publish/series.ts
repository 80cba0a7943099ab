// Series stage: the new version's days -> its series spans (docs/format.md §7), after its index tree is written.
//
// Which spans a version has follows from its dates alone, like an LSM tree whose merges are a binary counter:
// every closed year is one span; the closed months of the open year are grouped by the binary digits of their
// count (8 + 2 + 1 for November); the open month's days likewise (16 + 4 + 2 for the 22nd), but in at most three
// runs, the third holding the rest (16 + 8 + 6 for the 30th), so a cold reader of the newest 31 days reads at
// most four spans. A new day rewrites at most the spans its digit carries into (and the merged rest), so a day
// costs a few days of series bytes, and a closed year is written once. A span whose days did not change (the
// same index pages: equal basis) is taken from the base version as it is.

import type { Archive } from "../../format/archive.js";
import { dateToDayNumber, dayNumberToDate } from "../../format/dates.js";
import { type Window, intersectWindows } from "../../format/grid.js";
import { sha256Hex } from "../../format/hash.js";
import { GroupLattice, INLINE_SOURCES_DAYS, type SeriesSpan, chooseChunkSide } from "../../format/series.js";
import type { SourceEntry } from "../../format/records.js";
import type { DayEntry, IndexNode, MonthPage, YearPage } from "../../format/version-index.js";
import type { RasterView } from "../../format/versions.js";
import type { ObjectStore } from "../store/objects.js";
import type { IndexTree } from "./index-tree.js";
import { WorkerPool } from "../pool.js";
import type { StripTask } from "./series-worker.js";
import { type StripResult, encodeStrip } from "./series-strip.js";
import { type PieceGroup, toSpan, writeSeriesPiece } from "./series-piece.js";
import { reviseSpan } from "./series-revise.js";

/** Encodes one strip of a span: here, or on a worker thread. */
type StripEncoder = (days: DayEntry[], lattice: GroupLattice, strip: Window) => Promise<StripResult>;

/**
 * Strips of small spans are encoded on this thread; those of large ones on a pool of threads started for the
 * first of them, each reading the day pieces itself.
 */
class StripEncoders {
  private pool: WorkerPool<StripTask, StripResult | { error: string }> | null = null;

  constructor(private readonly archive: Archive, private readonly dist: string, private readonly threads: number) {}

  for(days: DayEntry[]): StripEncoder {
    const window = days[0].window;
    if (days.length * window[2] * window[3] < PARALLEL_VALUES) return (d, lattice, strip) => encodeStrip(d, lattice, strip, this.archive);
    this.pool ??= new WorkerPool(new URL(`./series-worker${import.meta.url.slice(-3)}`, import.meta.url), this.threads);
    const pool = this.pool;
    return async (d, lattice, strip) => {
      const result = await pool.run({ dist: this.dist, days: d, window: lattice.window, chunkSide: lattice.chunkSide, strip });
      if ("error" in result) throw new Error(result.error);
      return result;
    };
  }

  async close(): Promise<void> {
    await this.pool?.close();
  }
}

/** Bump when the span rule or the piece bytes change: every basis changes with it, so nothing stale is reused. */
const SERIES_VERSION = "series-1";
/** Spans of at least this many values (days x cells) are encoded on every core: a full-grid month and up. */
const PARALLEL_VALUES = 10_000_000;

/**
 * A span as the span rule plans it (a closed year, closed months, an open-month run), before a gap or a change of
 * window splits it: its basis, and how to read its day entries when it must be built.
 */
export interface PlannedSpan {
  basis: string;
  loadDays: () => Promise<DayEntry[]>;
}

/** Open-month runs: with the previous month's span, a cold read of the newest 31 days crosses at most four. */
const OPEN_MONTH_RUNS = 3;

/**
 * Inclusive [first, last] ranges of 1-based indices: n's binary digits from the highest, in order; with
 * `maxRanges`, the last range holds every index after the first maxRanges - 1.
 */
export function binaryRanges(n: number, maxRanges = Infinity): [number, number][] {
  const ranges: [number, number][] = [];
  let start = 1;
  for (let bit = 2 ** Math.floor(Math.log2(Math.max(1, n))); bit >= 1 && start <= n; bit /= 2) {
    if (!(n & bit)) continue;
    const end = ranges.length === maxRanges - 1 ? n : start + bit - 1;
    ranges.push([start, end]);
    start = end + 1;
  }
  return ranges;
}

/** The last date of a month (YYYY-MM). */
function monthEnd(month: string): string {
  const [y, m] = month.split("-").map(Number);
  const next = m === 12 ? `${y + 1}-01-01` : `${y}-${String(m + 1).padStart(2, "0")}-01`;
  return dayNumberToDate(dateToDayNumber(next) - 1);
}

const basisOf = (...parts: string[]) => sha256Hex(`${SERIES_VERSION}\n${parts.join("\n")}`);

/** The planned spans of a version's dates (see the file's opening comment), oldest first. */
export async function planSpans(tree: IndexTree, archive: Archive): Promise<PlannedSpan[]> {
  const last = tree.coverage.last;
  const readMonth = (node: IndexNode) => archive.readJson<MonthPage>(node.ref).then((p) => p.days);
  const readYear = async (node: IndexNode) => (await Promise.all((await archive.readJson<YearPage>(node.ref)).months.map(readMonth))).flat();
  const planned: PlannedSpan[] = [];
  for (const year of tree.years) {
    if (`${year.key}-12-31` <= last) {
      planned.push({ basis: basisOf("year", year.key, year.ref.sha256), loadDays: () => readYear(year) });
      continue;
    }
    const months = (await archive.readJson<YearPage>(year.ref)).months;
    const closed = months.filter((m) => monthEnd(m.key) <= last);
    const closedCount = closed.length ? Number(closed[closed.length - 1].key.slice(5)) : 0;
    for (const [a, b] of binaryRanges(closedCount)) {
      const group = closed.filter((m) => Number(m.key.slice(5)) >= a && Number(m.key.slice(5)) <= b);
      if (group.length === 0) continue;
      const basis = basisOf("months", year.key, String(a), String(b), ...group.map((m) => m.ref.sha256));
      planned.push({ basis, loadDays: async () => (await Promise.all(group.map(readMonth))).flat() });
    }
    const open = months.find((m) => monthEnd(m.key) > last);
    if (open) planned.push(...openMonthRuns(await readMonth(open)));
  }
  return planned;
}

/** The open month's runs: its days by binary ranges of day numbers (at most OPEN_MONTH_RUNS). */
function openMonthRuns(days: DayEntry[]): PlannedSpan[] {
  const runs: PlannedSpan[] = [];
  const lastDay = Number(days[days.length - 1].date.slice(8));
  for (const [a, b] of binaryRanges(lastDay, OPEN_MONTH_RUNS)) {
    const run = days.filter((d) => Number(d.date.slice(8)) >= a && Number(d.date.slice(8)) <= b);
    if (run.length > 0) runs.push({ basis: basisOf("days", JSON.stringify(run)), loadDays: async () => run });
  }
  return runs;
}

/** The spans of a planned span's days: consecutive dates with one window (a span never holds a gap or two windows). */
function splitSpans(days: DayEntry[]): DayEntry[][] {
  const spans: DayEntry[][] = [];
  for (const day of days) {
    const span = spans[spans.length - 1];
    const prev = span?.[span.length - 1];
    const continues = prev && dateToDayNumber(day.date) === dateToDayNumber(prev.date) + 1 && prev.window.join() === day.window.join();
    if (continues) span.push(day);
    else spans.push([day]);
  }
  return spans;
}

export interface SeriesSummary {
  spans: SeriesSpan[];
  /** spans written whole, revised (their changed chunks written), taken as they were */
  built: number;
  revised: number;
  reused: number;
  bytesWritten: number;
}

/** The version's series spans: reused from the base version where their basis is unchanged, else built. */
export async function buildSeries(tree: IndexTree, base: RasterView | null, archive: Archive, store: ObjectStore, threads: number, onSpan: (text: string) => void): Promise<SeriesSummary> {
  const encoders = new StripEncoders(archive, store.root, threads);
  let summary: SeriesSummary;
  try {
    summary = await buildSpans(tree, base, archive, store, encoders, onSpan);
  } finally {
    await encoders.close();
  }
  const before = store.bytesWritten;
  summary.spans = await placeSources(summary.spans, tree.coverage.last, archive, store);
  summary.bytesWritten += store.bytesWritten - before;
  return summary;
}

/**
 * Spans holding any of the newest INLINE_SOURCES_DAYS dates list their sources inline, the others by Ref; a span
 * reused from the base version changes form as it ages (its piece stays as it is).
 */
async function placeSources(spans: SeriesSpan[], last: string, archive: Archive, store: ObjectStore): Promise<SeriesSpan[]> {
  const newest = dayNumberToDate(dateToDayNumber(last) - INLINE_SOURCES_DAYS + 1);
  return Promise.all(
    spans.map(async (span) => {
      const inline = span.last >= newest;
      if (inline === Array.isArray(span.sources)) return span;
      const sources = Array.isArray(span.sources) ? await store.putJson(span.sources) : await archive.readJson<SourceEntry[][]>(span.sources);
      return { ...span, sources };
    }),
  );
}

async function buildSpans(tree: IndexTree, base: RasterView | null, archive: Archive, store: ObjectStore, encoders: StripEncoders, onSpan: (text: string) => void): Promise<SeriesSummary> {
  const known = new Map<string, SeriesSpan[]>();
  const sameDates = new Map<string, SeriesSpan>();
  for (const span of base?.index.series ?? []) {
    known.set(span.basis, [...(known.get(span.basis) ?? []), span]);
    sameDates.set(`${span.first} ${span.last} ${span.window.join()}`, span);
  }
  const summary: SeriesSummary = { spans: [], built: 0, revised: 0, reused: 0, bytesWritten: 0 };
  for (const planned of await planSpans(tree, archive)) {
    const reuse = known.get(planned.basis);
    if (reuse) {
      summary.spans.push(...reuse);
      summary.reused += reuse.length;
      continue;
    }
    for (const days of splitSpans(await planned.loadDays())) {
      const before = store.bytesWritten;
      // the same dates in the base, some of them revised: only the changed chunks are written
      const was = sameDates.get(`${days[0].date} ${days[days.length - 1].date} ${days[0].window.join()}`);
      const revision = was && chooseChunkSide(days.length) === was.chunkSide ? await reviseSpan(days, was, await Promise.all(days.map((d) => base!.findDay(d.date))), planned.basis, archive, store) : null;
      // a revision that changed no chunk (a file rewritten with the same cells) keeps the span's pieces: reused
      if (revision) summary[store.bytesWritten > before ? "revised" : "reused"]++;
      else {
        onSpan(`series ${days[0].date}..${days[days.length - 1].date} (${days.length} days)`);
        summary.built++;
      }
      summary.spans.push(revision ?? (await buildSpan(days, planned.basis, encoders.for(days), store)));
      summary.bytesWritten += store.bytesWritten - before;
    }
  }
  return summary;
}

/** The rows of the window read at once: whole groups, whole 64-row day blocks (each block inflated once). */
export function listStrips(lattice: GroupLattice): Window[] {
  const height = Math.max(lattice.groupSide, 64);
  const [c0, r0, w, h] = lattice.window;
  const strips: Window[] = [];
  for (let top = Math.floor(r0 / height) * height; top < r0 + h; top += height) {
    strips.push(intersectWindows([c0, top, w, height], lattice.window));
  }
  return strips;
}

/** One span written whole: its piece, its strips encoded here or, when large, on every core; its sources inline until placed. */
async function buildSpan(days: DayEntry[], basis: string, encode: StripEncoder, store: ObjectStore): Promise<SeriesSpan> {
  const window = days[0].window;
  const lattice = new GroupLattice(window, chooseChunkSide(days.length));
  const groups: PieceGroup[] = [];
  const chunks: Uint8Array[] = [];
  let offset = 0;
  // strips are encoded in parallel when the encoder has threads, and placed in order as they come back
  for (const result of await Promise.all(listStrips(lattice).map((strip) => encode(days, lattice, strip)))) {
    const at = offset;
    result.groups.forEach((group, i) => groups.push({ group, entries: result.entries[i].map((e) => ({ ...e, offset: e.offset + at })) }));
    chunks.push(result.chunks);
    offset += result.chunks.byteLength;
  }
  groups.sort((a, b) => a.group - b.group);
  const piece = await writeSeriesPiece({ lattice, firstDay: dateToDayNumber(days[0].date), days: days.length, older: [], map: null, groups, chunks }, store);
  return toSpan(days, lattice, piece, basis);
}
