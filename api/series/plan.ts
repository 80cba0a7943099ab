// The plan a 413 from the series route carries (docs/contract.md §8.2): calls of the same route, pinned to the
// versions that would answer, each within the bound on values, whose answers concatenated in order hold exactly the
// asked values in the asked order: whole places while they fit, else one place at a time in ranges of dates.

import { dateToDayNumber, dayNumberToDate } from "../../format/dates.js";
import { MAX_SERIES_VALUES, type Place, type SeriesConfig, seriesPath } from "./params.js";
import type { SeriesSelection } from "./select.js";

export interface SeriesPlan {
  /** GET paths (with their query), in order */
  plan: string[];
  summary: string;
}

const addDays = (date: string, days: number) => dayNumberToDate(dateToDayNumber(date) + days);

/** The calls that answer a selection too large for one, in order (every part pinned: one answer never mixes versions). */
export function planSeriesCalls(config: SeriesConfig, selection: SeriesSelection, bound: number = MAX_SERIES_VALUES): SeriesPlan {
  const variables = selection.choices.map((c) => c.variable.name);
  const pins = selection.choices.map((c) => c.view.record.id);
  const perPlace = selection.days * variables.length;
  const call = (places: Place[], start: string, end: string) =>
    seriesPath({ lats: places.map((p) => p.lat), lons: places.map((p) => p.lon), start, end, variables, format: config.format, pins });
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
  const csv = config.format === "csv" ? " (CSV: keep the first header line only)" : "";
  const met = config.format === "met" ? " Each part is its own APSIM file, its tav and amp over the whole calendar years it holds (else the place's record's); ask format=csv for one table." : "";
  return { plan, summary: `The plan holds ${plan.length} calls, each within the bound, whose answers in order hold exactly these values${csv}.${met}` };
}
