// The plan a 413 from the series route carries (docs/contract.md §8.2): calls of the same route, pinned to the
// versions that would answer, each within the bound on values, whose answers concatenated in order hold exactly the
// asked values in the asked order: whole places while they fit, else one place at a time in ranges of dates. A box
// splits into boxes the same way: bands of whole rows of cells, else runs of one row, else one cell in ranges of dates
// (each part's edges are its cells' edges, so its centres, and no other, lie inside). A NetCDF box splits by dates
// first (whole boxes, `cdo mergetime` joins them), then as the text formats.

import { dateToDayNumber, dayNumberToDate } from "../../format/dates.js";
import { type Window, windowBbox } from "../../format/grid.js";
import { type Place, type SeriesConfig, seriesPath } from "./call.js";
import { MAX_SERIES_VALUES, type SeriesFormatSpec } from "./formats/format.js";
import type { SeriesSelection } from "./select.js";

export interface SeriesPlan {
  /** GET paths (with their query), in order */
  plan: string[];
  summary: string;
}

const addDays = (date: string, days: number) => dayNumberToDate(dateToDayNumber(date) + days);

/** The calls that answer a selection too large for one, in order (every part pinned: one answer never mixes versions). */
export function planSeriesCalls(config: SeriesConfig, format: SeriesFormatSpec, selection: SeriesSelection, bound: number = MAX_SERIES_VALUES): SeriesPlan {
  const variables = selection.choices.map((c) => c.variable.name);
  const pins = selection.choices.map((c) => c.view.record.id);
  const perPlace = selection.days * variables.length;
  const call = (places: Place[], start: string, end: string) =>
    seriesPath({ lats: places.map((p) => p.lat), lons: places.map((p) => p.lon), start, end, variables, format: format.name, pins });
  if (config.box) return planBoxCalls(format, config.box.window, selection, bound, variables, pins);
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

/** The parts of a box's call: boxes of whole rows, runs of a row, or a cell's ranges of dates; in the answer's order. */
function planBoxCalls(format: SeriesFormatSpec, window: Window, selection: SeriesSelection, bound: number, variables: string[], pins: string[]): SeriesPlan {
  const [c0, r0, width, height] = window;
  const call = (part: Window, start: string, end: string) => seriesPath({ bbox: windowBbox(part), start, end, variables, format: format.name, pins });
  const plan: string[] = [];
  const perCell = selection.days * variables.length;
  const perDay = width * height * variables.length;
  if (format.plan.splitsBoxByDates && perDay <= bound) {
    // whole boxes over ranges of dates: one file a range, joined by time (cdo mergetime, xarray.open_mfdataset)
    const daysPerCall = Math.floor(bound / perDay);
    for (let d = 0; d < selection.days; d += daysPerCall) plan.push(call(window, addDays(selection.start, d), addDays(selection.start, Math.min(selection.days, d + daysPerCall) - 1)));
  } else if (perCell * width <= bound) {
    const rows = Math.floor(bound / (perCell * width));
    for (let r = r0; r < r0 + height; r += rows) plan.push(call([c0, r, width, Math.min(rows, r0 + height - r)], selection.start, selection.end));
  } else if (perCell <= bound) {
    const cols = Math.floor(bound / perCell);
    for (let r = r0; r < r0 + height; r++) for (let c = c0; c < c0 + width; c += cols) plan.push(call([c, r, Math.min(cols, c0 + width - c), 1], selection.start, selection.end));
  } else {
    const daysPerCall = Math.max(1, Math.floor(bound / variables.length));
    for (let r = r0; r < r0 + height; r++) {
      for (let c = c0; c < c0 + width; c++) {
        for (let d = 0; d < selection.days; d += daysPerCall) plan.push(call([c, r, 1, 1], addDays(selection.start, d), addDays(selection.start, Math.min(selection.days, d + daysPerCall) - 1)));
      }
    }
  }
  return { plan, summary: summarizePlan(format, plan) };
}
