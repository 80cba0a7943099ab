// A selection's days and reading its cells from the tier api/tiers.ts chooses (docs/format.md §7): the day pieces
// (one read per date and block) or the series spans (one read per span and chunk), whichever reads less.

import { type Coverage, holdsDate } from "../../format/coverage.js";
import { type Window, containsWindow } from "../../format/grid.js";
import type { SourceEntry } from "../../format/records.js";
import type { SeriesSpan } from "../../format/series.js";
import type { DayEntry } from "../../format/version-index.js";
import type { RasterView } from "../../format/versions.js";
import { type SpanSlice, chooseSeriesTier } from "../tiers.js";
import type { DayCells } from "./serialize.js";

/** A date of a selection: its day's window (tile-local indices follow from it) and its sources. */
export interface SelectedDay {
  date: string;
  window: Window;
  sources: SourceEntry[];
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
  const series = containsWindow(coverage.windowAll, window) ? await readSeriesDays(view, window, dates) : null;
  if (series) return series;
  const entries: DayEntry[] = [];
  for (const date of dates) {
    const day = await view.findDay(date);
    if (!day || !containsWindow(day.window, window)) return null;
    entries.push(day);
  }
  return { days: entries.map((e) => ({ date: e.date, window: e.window, sources: e.sources })), source: { kind: "days", entries } };
}

/** The series tier's days, when chooseSeriesTier takes it for these dates and cells: each date with its span's sources. */
async function readSeriesDays(view: RasterView, window: Window, dates: string[]): Promise<SelectedDays | null> {
  const slices = chooseSeriesTier(view, window, dates[0], dates[dates.length - 1], dates.length);
  if (!slices) return null;
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
  else {
    const one = window[2] * window[3] === 1;
    const read = (s: SpanSlice) => (one ? readPlace(view, s.span, window, s.from, s.to) : view.readSeries(s.span, window, s.from, s.to));
    cells = (await Promise.all(source.slices.map(read))).flat();
  }
  return days.map((d, i) => ({ date: d.date, window: d.window, cells: cells[i] }));
}

/**
 * One cell's days of a span, a view a day: through readSeriesPoint, which decodes only this cell's days of its chunk and
 * keeps nothing (the next request asks another place), where readSeries decodes and caches the whole chunk.
 */
async function readPlace(view: RasterView, span: SeriesSpan, [col, row]: Window, from: number, to: number): Promise<Float32Array[]> {
  const all = new Float32Array(to - from);
  await view.readSeriesPoint(span, col, row, from, to, all, 0);
  return Array.from({ length: to - from }, (_, d) => all.subarray(d, d + 1));
}
