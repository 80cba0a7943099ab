// Which tier answers a read (docs/format.md §7), decided here for every family: the series spans that hold a period
// (one binary search), whether they hold the cells asked, and when they read fewer pieces than the day pieces.

import { BLOCK_SIDE } from "../format/blocks.js";
import { dateToDayNumber } from "../format/dates.js";
import { type Window, containsWindow } from "../format/grid.js";
import type { SeriesSpan } from "../format/series.js";
import type { RasterView } from "../format/versions.js";

/** Days [from, to) of a series span (0 = its first date). */
export interface SpanSlice {
  span: SeriesSpan;
  from: number;
  to: number;
}

/** The parts of the spans (in date order, none overlapping) that lie in days [d0, d1) since 1970-01-01, in order. */
export function sliceSpans(spans: SeriesSpan[], d0: number, d1: number): SpanSlice[] {
  let lo = 0;
  let hi = spans.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (dateToDayNumber(spans[mid].last) < d0) lo = mid + 1;
    else hi = mid;
  }
  const out: SpanSlice[] = [];
  for (let i = lo; i < spans.length; i++) {
    const first = dateToDayNumber(spans[i].first);
    if (first >= d1) break;
    out.push({ span: spans[i], from: Math.max(d0, first) - first, to: Math.min(d1, dateToDayNumber(spans[i].last) + 1) - first });
  }
  return out;
}

/** The spans that hold `first`..`last` in order, or null when some date of it has no span. */
export function findSlices(spans: SeriesSpan[], first: string, last: string): SpanSlice[] | null {
  const d0 = dateToDayNumber(first);
  const d1 = dateToDayNumber(last) + 1;
  const slices = sliceSpans(spans, d0, d1);
  let day = d0;
  for (const s of slices) {
    if (dateToDayNumber(s.span.first) + s.from !== day) return null; // a date between two spans
    day += s.to - s.from;
  }
  return day === d1 ? slices : null;
}

/**
 * The series tier's slices when they hold every cell of `windows` on every date of first..last, in order, else null.
 * A span's days all hold its window, so its window says exactly which cells every date of it holds.
 */
export function findHoldingSlices(view: RasterView, windows: Window[], first: string, last: string): SpanSlice[] | null {
  const slices = findSlices(view.index.series, first, last);
  return slices?.every((s) => windows.every((w) => containsWindow(s.span.window, w))) ? slices : null;
}

/** Every `step`-th cell of a run of `count` from `start` along one axis (rows or columns). */
export interface AxisStep {
  start: number;
  step: number;
  count: number;
}

/**
 * Lattice units of `side` cells (blocks, chunks) an axis selection touches: each of its cells' units, counted once.
 * A step shorter than a unit leaves no unit between two cells untouched, so they are the units from the first to the last.
 */
export function countAxisUnits({ start, step, count }: AxisStep, side: number): number {
  const last = start + step * (count - 1);
  return step >= side ? count : Math.floor(last / side) - Math.floor(start / side) + 1;
}

/** The cells of `window`, every one of them: one step along each axis. */
const everyCell = (window: Window): [AxisStep, AxisStep] => [
  { start: window[0], step: 1, count: window[2] },
  { start: window[1], step: 1, count: window[3] },
];

/**
 * Which tier answers a read of the cells `cols` x `rows` (inside `window`, their bounding box) on `dates` of the consecutive
 * dates first..last: the series tier (its slices) when it holds them all and reads fewer pieces than the day pieces
 * (one read per span and chunk the cells touch, against one per date and block: a place over days), else null, the
 * day pieces (a tile, a single date, a map every few dates). Both give the very same cells. The one choice of every
 * family that reads both tiers (the query, OPeNDAP); the Zarr view's groups are one tier each.
 */
export function chooseSeriesTier(view: RasterView, window: Window, first: string, last: string, dates: number, [cols, rows] = everyCell(window)): SpanSlice[] | null {
  const slices = findHoldingSlices(view, [window], first, last);
  if (!slices) return null;
  const seriesReads = slices.reduce((n, s) => n + countAxisUnits(cols, s.span.chunkSide) * countAxisUnits(rows, s.span.chunkSide), 0);
  return seriesReads < dates * countAxisUnits(cols, BLOCK_SIDE) * countAxisUnits(rows, BLOCK_SIDE) ? slices : null;
}
