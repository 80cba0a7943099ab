// The plan a 413 from the series route carries (docs/contract.md §8.2): calls of the same route, pinned to the
// versions that would answer, each within the bound on values, whose answers concatenated in order hold exactly the
// asked values in the asked order: whole places while they fit, else one place at a time in ranges of dates. A box
// splits into boxes the same way: bands of whole rows of cells, else runs of one row, else one cell in ranges of dates
// (each part's edges are its cells' edges, so its centres, and no other, lie inside). A NetCDF box splits by dates
// first (whole boxes, `cdo mergetime` joins them), then as the text formats. A box's 413 is bounded as the query's
// is: the steps that fit its byte bound (whole rows, or whole ranges of dates), then `planRest`, the call for the rest.
// Places need no such cut: at most 100, each in a few ranges of dates under the bound on values.

import { dateToDayNumber, dayNumberToDate } from "../../format/dates.js";
import { type Window, windowBbox } from "../../format/grid.js";
import { LIMITS } from "../contract.js";
import { type Place, type SeriesConfig, seriesPath } from "./call.js";
import { MAX_SERIES_VALUES, type SeriesFormatSpec } from "./formats/format.js";
import type { SeriesSelection } from "./select.js";

export interface SeriesPlan {
  /** GET paths (with their query), in order */
  plan: string[];
  /** with a plan of a box's first part only: the call for the rest */
  planRest?: string;
  summary: string;
}

const addDays = (date: string, days: number) => dayNumberToDate(dateToDayNumber(date) + days);

/** The calls that answer a selection too large for one, in order (every part pinned: one answer never mixes versions). */
export function planSeriesCalls(config: SeriesConfig, format: SeriesFormatSpec, selection: SeriesSelection, bound: number = MAX_SERIES_VALUES, maxBytes: number = LIMITS.maxResponseBytes): SeriesPlan {
  const variables = selection.choices.map((c) => c.variable.name);
  const pins = selection.choices.map((c) => c.view.record.id);
  const perPlace = selection.days * variables.length;
  const call = (places: Place[], start: string, end: string) =>
    seriesPath({ lats: places.map((p) => p.lat), lons: places.map((p) => p.lon), start, end, variables, format: format.name, pins });
  if (config.box) return planBoxCalls(format, config.box.window, selection, bound, variables, pins, maxBytes);
  const plan: string[] = [];
  if (perPlace <= bound) {
    const group = Math.floor(bound / perPlace);
    for (let i = 0; i < config.places.length; i += group) plan.push(call(config.places.slice(i, i + group), selection.start, selection.end));
  } else {
    const daysPerCall = Math.max(1, Math.floor(bound / variables.length));
    for (const place of config.places) {
      for (let d = 0; d < selection.days; d += daysPerCall) plan.push(call([place], addDays(selection.start, d), addDays(selection.start, Math.min(selection.days, d + daysPerCall) - 1)));
    }
  }
  return { plan, summary: summarizePlan(format, plan) };
}

/** "The plan holds N calls, ...", with how the format's parts join. */
function summarizePlan(format: SeriesFormatSpec, plan: string[]): string {
  const { joined, eachPart } = format.plan;
  return `The plan holds ${plan.length} calls, each within the bound, whose answers in order hold exactly these values${joined ? ` (${joined})` : ""}.${eachPart ?? ""}`;
}

/** A step of a box's plan: its parts, and the call for the rest of the box from this step on. */
interface PlanUnit {
  parts: string[];
  rest: string;
}

/** Room a 413 keeps besides `plan` and `planRest`: its `error` and `message`, and the JSON around them. */
const ERROR_FRAME_BYTES = 2048;

/**
 * The parts of a box's call, a step at a time in the answer's order: a NetCDF box's ranges of dates (whole boxes), or
 * else its rows (bands of whole rows, the runs of one row, or a row's cells in ranges of dates). Each step says the
 * call for the rest, so a plan cut there continues with it.
 */
function* planBoxUnits(format: SeriesFormatSpec, window: Window, selection: SeriesSelection, bound: number, variables: string[], pins: string[]): Generator<PlanUnit> {
  const [c0, r0, width, height] = window;
  const call = (part: Window, start: string, end: string) => seriesPath({ bbox: windowBbox(part), start, end, variables, format: format.name, pins });
  const dates = (d: number, days: number) => [addDays(selection.start, d), addDays(selection.start, Math.min(selection.days, d + days) - 1)] as const;
  const rowsFrom = (r: number) => call([c0, r, width, r0 + height - r], selection.start, selection.end);
  const perCell = selection.days * variables.length;
  const perDay = width * height * variables.length;
  if (format.plan.splitsBoxByDates && perDay <= bound) {
    // whole boxes over ranges of dates: one file a range, joined by time (cdo mergetime, xarray.open_mfdataset)
    const daysPerCall = Math.floor(bound / perDay);
    for (let d = 0; d < selection.days; d += daysPerCall) yield { parts: [call(window, ...dates(d, daysPerCall))], rest: call(window, dates(d, selection.days)[0], selection.end) };
  } else if (perCell * width <= bound) {
    const rows = Math.floor(bound / (perCell * width));
    for (let r = r0; r < r0 + height; r += rows) yield { parts: [call([c0, r, width, Math.min(rows, r0 + height - r)], selection.start, selection.end)], rest: rowsFrom(r) };
  } else if (perCell <= bound) {
    const cols = Math.floor(bound / perCell);
    for (let r = r0; r < r0 + height; r++) {
      const parts: string[] = [];
      for (let c = c0; c < c0 + width; c += cols) parts.push(call([c, r, Math.min(cols, c0 + width - c), 1], selection.start, selection.end));
      yield { parts, rest: rowsFrom(r) };
    }
  } else {
    const daysPerCall = Math.max(1, Math.floor(bound / variables.length));
    for (let r = r0; r < r0 + height; r++) {
      const parts: string[] = [];
      for (let c = c0; c < c0 + width; c++) for (let d = 0; d < selection.days; d += daysPerCall) parts.push(call([c, r, 1, 1], ...dates(d, daysPerCall)));
      yield { parts, rest: rowsFrom(r) };
    }
  }
}

/**
 * A box's plan, its 413 within `maxBytes` (docs/contract.md §8.2): the first steps that fit (the first always), and
 * `planRest`, the call for the rest, when the others do not. Work grows with that bound, never with the box.
 */
function planBoxCalls(format: SeriesFormatSpec, window: Window, selection: SeriesSelection, bound: number, variables: string[], pins: string[], maxBytes: number): SeriesPlan {
  const plan: string[] = [];
  let bytes = 0;
  let steps = 0;
  for (const { parts, rest } of planBoxUnits(format, window, selection, bound, variables, pins)) {
    // each part a JSON string and its comma; the rest's call the same, with its member name
    const size = parts.reduce((n, p) => n + p.length + 3, 0);
    if (plan.length > 0 && ERROR_FRAME_BYTES + bytes + size + rest.length + 16 > maxBytes) {
      const byDates = format.plan.splitsBoxByDates && window[2] * window[3] * variables.length <= bound;
      const plural = steps === 1 ? "" : "s";
      const done = byDates ? `its first ${steps} range${plural} of dates` : `its first ${steps} row${plural} of ${window[3]}`;
      const joined = format.plan.joined ? ` (${format.plan.joined})` : "";
      return {
        plan,
        planRest: rest,
        summary: `The plan holds ${plan.length} calls for the box's first part, ${done}, each within the bound, whose answers in order hold exactly its values${joined}; planRest asks for the rest, and its 413 carries the next parts.`,
      };
    }
    plan.push(...parts);
    bytes += size;
    steps++;
  }
  return { plan, summary: summarizePlan(format, plan) };
}
