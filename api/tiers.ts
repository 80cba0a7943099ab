// Which tier answers a selection's cells, and reading them (docs/format.md §9): the day pieces (one read per
// date and block) or the series spans (one read per span and chunk), whichever reads less. Both give the
// very same cells; a tile or a single date reads day pieces, a place over days reads series chunks.

import { countBlocks } from "../format/blocks.js";
import { type Coverage, holdsDate } from "../format/coverage.js";
import { dateToDayNumber } from "../format/dates.js";
import { type Window, containsWindow } from "../format/grid.js";
import type { SourceEntry } from "../format/records.js";
import { GroupLattice, type SeriesSpan } from "../format/series.js";
import type { DayEntry } from "../format/version-index.js";
import type { RasterView } from "../format/versions.js";
import type { DayCells } from "./serialize.js";

/** A date of a selection: its day's window (tile-local indices follow from it) and its sources. */
export interface SelectedDay {
  date: string;
  window: Window;
  sources: SourceEntry[];
}

/** Days [from, to) of a series span (0 = its first date). */
export interface SpanSlice {
  span: SeriesSpan;
  from: number;
  to: number;
}

/** Where a selection's cells are read from. */
export type CellSource = { kind: "days"; entries: DayEntry[] } | { kind: "series"; slices: SpanSlice[] };

export interface SelectedDays {
  days: SelectedDay[];
  source: CellSource;
}

/** Whether the version holds every cell of `window` on every date, and how to read them; null if not. */
export async function selectDays(view: RasterView, coverage: Coverage, window: Window, dates: string[]): Promise<SelectedDays | null> {
  if (!dates.every((d) => holdsDate(coverage, d)) || !containsWindow(coverage.windowAny, window)) return null;
  const series = containsWindow(coverage.windowAll, window) ? await selectSeries(view, window, dates) : null;
  if (series) return series;
  const entries: DayEntry[] = [];
  for (const date of dates) {
    const day = await view.findDay(date);
    if (!day || !containsWindow(day.window, window)) return null;
    entries.push(day);
  }
  return { days: entries.map((e) => ({ date: e.date, window: e.window, sources: e.sources })), source: { kind: "days", entries } };
}

/** The spans that hold `first`..`last` in order, or null when some date of it has no span. */
export function findSlices(spans: SeriesSpan[], first: string, last: string): SpanSlice[] | null {
  let lo = 0;
  let hi = spans.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (spans[mid].first <= first) lo = mid;
    else hi = mid - 1;
  }
  const slices: SpanSlice[] = [];
  let day = dateToDayNumber(first);
  const end = dateToDayNumber(last);
  for (let i = lo; i < spans.length && day <= end; i++) {
    const start = dateToDayNumber(spans[i].first);
    const stop = dateToDayNumber(spans[i].last);
    if (start > day || stop < day) return null;
    slices.push({ span: spans[i], from: day - start, to: Math.min(stop, end) - start + 1 });
    day = Math.min(stop, end) + 1;
  }
  return day > end ? slices : null;
}

/** The series tier for these dates and cells, when it holds them and reads fewer pieces than the day pieces. */
async function selectSeries(view: RasterView, window: Window, dates: string[]): Promise<SelectedDays | null> {
  const spans = view.index.series;
  const slices = findSlices(spans, dates[0], dates[dates.length - 1]);
  if (!slices || slices.some((s) => !containsWindow(s.span.window, window))) return null;
  const seriesReads = slices.reduce((n, s) => n + new GroupLattice(s.span.window, s.span.chunkSide).countChunks(window), 0);
  if (seriesReads >= dates.length * countBlocks(window)) return null;
  const days: SelectedDay[] = [];
  for (const { span, from, to } of slices) {
    const sources = await view.readSpanSources(span);
    for (let d = from; d < to; d++) days.push({ date: dates[days.length], window: span.window, sources: sources[d] });
  }
  return { days, source: { kind: "series", slices } };
}

/** The selected cells of every date, in date order, from the chosen tier. */
export async function readSelectedCells(view: RasterView, window: Window, days: SelectedDay[], source: CellSource): Promise<DayCells[]> {
  let cells: Float32Array[];
  if (source.kind === "days") cells = await Promise.all(source.entries.map((e) => view.readCells(e, window)));
  else cells = (await Promise.all(source.slices.map((s) => view.readSeries(s.span, window, s.from, s.to)))).flat();
  return days.map((d, i) => ({ date: d.date, window: d.window, cells: cells[i] }));
}
