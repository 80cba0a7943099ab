// A raster version as a cube (time, lat, lon) over the whole SILO grid, as the Zarr view and OPeNDAP serve it: its
// axes (days since 1970-01-01 from its first date to its last; cell centres, north to south and west to east), and
// the values of a hyperslab of it, every cell read once from the tier api/tiers.ts chooses.

import { BLOCK_SIDE } from "../format/blocks.js";
import { MISSING_BITS, swapWord } from "../format/cells.js";
import { dateToDayNumber, dayNumberToDate } from "../format/dates.js";
import { GRID, type Window, colToLon, intersectWindows, rowToLat } from "../format/grid.js";
import type { RasterView } from "../format/versions.js";
import { type Variable, variableOfRecord } from "../format/variables.js";
import type { Context } from "./context.js";
import type { HttpError } from "./errors.js";
import { VERSION_ID } from "./parameters.js";
import { openData } from "./records.js";
import { type AxisStep, type SpanSlice, chooseSeriesTier } from "./tiers.js";

/** A version as a cube: the variable it holds, and its time axis (whole days since 1970-01-01). */
export interface GridCube {
  view: RasterView;
  variable: Variable;
  firstDay: number;
  days: number;
}

/** The cube of a published demo raster version of a SILO variable; anything else is `notFound`'s error (each view's 404). */
export async function openCube(ctx: Context, id: string, notFound: (what: string) => HttpError): Promise<GridCube> {
  if (!VERSION_ID.test(id)) throw notFound(`Version ${JSON.stringify(id.slice(0, 140))}`);
  const view = await openData(ctx, id);
  const variable = view.kind === "raster" ? variableOfRecord(view.record) : undefined;
  if (view.kind !== "raster" || !variable) throw notFound(`Version ${id} (not a raster of a SILO variable)`);
  const firstDay = dateToDayNumber(view.index.coverage.first);
  return { view, variable, firstDay, days: dateToDayNumber(view.index.coverage.last) - firstDay + 1 };
}

/** The time axis: whole days since 1970-01-01, one a date from the first to the last (gaps included). */
export function timeAxis(cube: GridCube): Int32Array {
  return Int32Array.from({ length: cube.days }, (_, i) => cube.firstDay + i);
}

/** Cell-centre latitudes, north to south (row 0 first). */
export const latAxis = (): Float64Array => Float64Array.from({ length: GRID.height }, (_, row) => rowToLat(row));
/** Cell-centre longitudes, west to east. */
export const lonAxis = (): Float64Array => Float64Array.from({ length: GRID.width }, (_, col) => colToLon(col));

/** A hyperslab of the cube: every `step`-th index of each axis (time, lat as rows, lon as columns). */
export interface Hyperslab {
  time: AxisStep;
  lat: AxisStep;
  lon: AxisStep;
}

export const countValues = (slab: Hyperslab): number => slab.time.count * slab.lat.count * slab.lon.count;

const lastOf = (axis: AxisStep) => axis.start + axis.step * (axis.count - 1);

/** The part of an axis selection inside [lo, hi): the selection's indices [i0, i1), as a selection of its own. */
function clipAxis(axis: AxisStep, lo: number, hi: number): { i0: number; i1: number; axis: AxisStep } {
  const i0 = Math.max(0, Math.ceil((lo - axis.start) / axis.step));
  const i1 = Math.min(axis.count, Math.floor((hi - 1 - axis.start) / axis.step) + 1);
  return { i0, i1, axis: { start: axis.start + i0 * axis.step, step: axis.step, count: Math.max(0, i1 - i0) } };
}

/**
 * The areas a tier reads for an axis selection, as [first, size] runs: one run when the step is shorter than the
 * tier's unit (no unit between two cells is skipped, so the run reads no more pieces), else one run a cell.
 */
function runsOf(axis: AxisStep, unit: number): [number, number][] {
  if (axis.step < unit) return [[axis.start, lastOf(axis) - axis.start + 1]];
  return Array.from({ length: axis.count }, (_, i) => [axis.start + i * axis.step, 1]);
}

/** The cells a hyperslab asks that the version may hold, and where they go in the answer. */
interface Selection {
  /** values go into `out` as big-endian words (OPeNDAP's XDR), not host-order float32 */
  bigEndian: boolean;
  slab: Hyperslab;
  rows: AxisStep;
  cols: AxisStep;
  /** the answer index of the first held row and column */
  row0: number;
  col0: number;
  /** bounding window of the held cells */
  window: Window;
  out: Float32Array;
}

/** Copies the asked cells of `area` (row-major `cells`) into the answer's time step `ti`. */
function place(sel: Selection, cells: Float32Array, area: Window, ti: number): void {
  const { rows, cols, slab, out } = sel;
  const [ac, ar, aw, ah] = area;
  const r = clipAxis(rows, ar, ar + ah);
  const c = clipAxis(cols, ac, ac + aw);
  if (r.axis.count === 0 || c.axis.count === 0) return;
  const width = slab.lon.count;
  const [words, cellWords] = sel.bigEndian ? [wordsOf(out), wordsOf(cells)] : [null, null];
  for (let i = r.i0; i < r.i1; i++) {
    const from = (rows.start + i * rows.step - ar) * aw + (c.axis.start - ac);
    const at = (ti * slab.lat.count + sel.row0 + i) * width + sel.col0 + c.i0;
    if (words && cellWords) for (let k = 0; k < c.axis.count; k++) words[at + k] = swapWord(cellWords[from + k * cols.step]);
    else if (cols.step === 1) out.set(cells.subarray(from, from + c.axis.count), at);
    else for (let k = 0; k < c.axis.count; k++) out[at + k] = cells[from + k * cols.step];
  }
}

const wordsOf = (values: Float32Array) => new Uint32Array(values.buffer, values.byteOffset, values.length);

/** The areas of the selection for a tier whose unit is `side` cells. */
function areasOf(sel: Selection, side: number): Window[] {
  const rowRuns = runsOf(sel.rows, side);
  return runsOf(sel.cols, side).flatMap(([c, w]) => rowRuns.map(([r, h]): Window => [c, r, w, h]));
}

/** Days read at once from the day pieces, and values at once from the series tier (bounded memory, reads overlapped). */
const DAYS_AT_ONCE = 8;
const SERIES_VALUES_AT_ONCE = 4 << 20;

/** The asked dates from the day pieces: each date's areas, straight into the answer when every cell of them is asked. */
async function readFromDays(cube: GridCube, sel: Selection): Promise<void> {
  const { time } = sel.slab;
  const whole = sel.rows.step === 1 && sel.cols.step === 1;
  const areas = areasOf(sel, BLOCK_SIDE);
  const readDay = async (ti: number) => {
    const day = await cube.view.findDay(dayNumberToDate(cube.firstDay + time.start + ti * time.step));
    if (!day) return; // a gap: NaN
    for (const area of areas) {
      const held = intersectWindows(area, day.window);
      if (held[2] === 0 || held[3] === 0) continue;
      // a map's blocks are read for this answer alone: they would push out the blocks points and boxes share
      const reuse = held[2] * held[3] > 16 * BLOCK_SIDE * BLOCK_SIDE ? "once" : "cache";
      if (!whole) place(sel, await cube.view.readCells(day, held, undefined, reuse), held, ti);
      else {
        const at = (ti * sel.slab.lat.count + sel.row0 + held[1] - sel.rows.start) * sel.slab.lon.count + sel.col0 + held[0] - sel.cols.start;
        await cube.view.readCells(day, held, { out: sel.out, at, stride: sel.slab.lon.count, bigEndian: sel.bigEndian }, reuse);
      }
    }
  };
  for (let t0 = 0; t0 < time.count; t0 += DAYS_AT_ONCE) {
    await Promise.all(Array.from({ length: Math.min(DAYS_AT_ONCE, time.count - t0) }, (_, k) => readDay(t0 + k)));
  }
}

/** One series span's part of the asked dates: each area's chunks once, then the asked days of them. */
async function readSlice(cube: GridCube, sel: Selection, { span, from, to }: SpanSlice, base: number): Promise<void> {
  const { time } = sel.slab;
  // the answer's time steps whose date lies in this slice (period day p = ti * step, the slice holds [base, base + to - from))
  const t = clipAxis({ start: 0, step: time.step, count: time.count }, base, base + to - from);
  if (t.axis.count === 0) return;
  const d0 = from + t.axis.start - base;
  const d1 = from + lastOf(t.axis) - base + 1;
  const single = sel.slab.lat.count === 1 && sel.slab.lon.count === 1 && time.step === 1;
  await Promise.all(
    areasOf(sel, span.chunkSide).map(async (area) => {
      // a place over days: its values straight into the answer (a single cell's answer index is its time step)
      if (single) {
        await cube.view.readSeriesPoint(span, area[0], area[1], d0, d1, sel.out, t.i0);
        if (sel.bigEndian) for (let i = t.i0, words = wordsOf(sel.out); i < t.i0 + d1 - d0; i++) words[i] = swapWord(words[i]);
        return;
      }
      const days = await cube.view.readSeries(span, area, d0, d1);
      for (let i = t.i0; i < t.i1; i++) place(sel, days[i * time.step - base - (d0 - from)], area, i);
    }),
  );
}

/** The asked dates from the series tier, a few spans at a time. */
async function readFromSeries(cube: GridCube, sel: Selection, slices: SpanSlice[]): Promise<void> {
  const cells = sel.window[2] * sel.window[3];
  let batch: Promise<void>[] = [];
  let values = 0;
  let base = 0;
  for (const slice of slices) {
    batch.push(readSlice(cube, sel, slice, base));
    base += slice.to - slice.from;
    values += cells * (slice.to - slice.from);
    if (values >= SERIES_VALUES_AT_ONCE) {
      await Promise.all(batch);
      [batch, values] = [[], 0];
    }
  }
  await Promise.all(batch);
}

/**
 * The values of a hyperslab into `out` (C order: time, lat, lon; NaN where the version holds no value), each cell read
 * once: a place over time from the series tier, a map of a date from the day pieces (api/tiers.ts decides). With
 * `bigEndian`, each value's bits are written byte-swapped: OPeNDAP's XDR, with no second pass over the answer.
 */
export async function readHyperslab(cube: GridCube, slab: Hyperslab, out: Float32Array, { bigEndian = false } = {}): Promise<void> {
  if (bigEndian) wordsOf(out).fill(swapWord(MISSING_BITS));
  else out.fill(NaN);
  const [wc, wr, ww, wh] = cube.view.index.coverage.windowAny;
  const rows = clipAxis(slab.lat, wr, wr + wh);
  const cols = clipAxis(slab.lon, wc, wc + ww);
  if (rows.axis.count === 0 || cols.axis.count === 0 || slab.time.count === 0) return;
  const window: Window = [cols.axis.start, rows.axis.start, lastOf(cols.axis) - cols.axis.start + 1, lastOf(rows.axis) - rows.axis.start + 1];
  const sel: Selection = { bigEndian, slab, rows: rows.axis, cols: cols.axis, row0: rows.i0, col0: cols.i0, window, out };
  const first = dayNumberToDate(cube.firstDay + slab.time.start);
  const last = dayNumberToDate(cube.firstDay + lastOf(slab.time));
  const slices = chooseSeriesTier(cube.view, window, first, last, slab.time.count, [cols.axis, rows.axis]);
  await (slices ? readFromSeries(cube, sel, slices) : readFromDays(cube, sel));
}
