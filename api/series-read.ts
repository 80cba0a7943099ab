// The values of a series call: each variable at each place over the period, from the series tier (one chunk a span
// at a place) or, for a version without one, day by day from the day pieces; every byte verified as it is read.

import { listDates } from "../format/dates.js";
import type { Window } from "../format/grid.js";
import type { Place } from "./series-params.js";
import type { SeriesChoice, SeriesSelection } from "./series-select.js";

/** Dates read at once from day pieces (a version without a series tier): bounded work in flight. */
const DAYS_AT_ONCE = 64;

/** One variable at one place over start..end from its version's series spans: NaN for missing. */
async function readFromSpans(choice: SeriesChoice, place: Place, days: number): Promise<Float32Array> {
  const out = new Float32Array(days);
  const reads: Promise<void>[] = [];
  let at = 0;
  for (const { span, from, to } of choice.slices!) {
    reads.push(choice.view.readSeriesPoint(span, place.col, place.row, from, to, out, at));
    at += to - from;
  }
  await Promise.all(reads);
  return out;
}

/** The same from the day pieces, a date at a time (versions published before the series tier). */
async function readFromDays(choice: SeriesChoice, place: Place, start: string, end: string): Promise<Float32Array> {
  const dates = listDates(start, end);
  const out = new Float32Array(dates.length);
  const cell: Window = [place.col, place.row, 1, 1];
  for (let i = 0; i < dates.length; i += DAYS_AT_ONCE) {
    const batch = dates.slice(i, i + DAYS_AT_ONCE);
    const cells = await Promise.all(
      batch.map(async (date) => {
        const day = await choice.view.findDay(date);
        if (!day) throw new Error(`${choice.view.record.id} lacks ${date} although its coverage holds it`);
        return choice.view.readCells(day, cell);
      }),
    );
    cells.forEach((c, k) => (out[i + k] = c[0]));
  }
  return out;
}

/** values[v][p]: variable v (in the order asked) at place p (in the order asked), one value a day from start. */
export function readSeriesValues(selection: SeriesSelection, places: Place[]): Promise<Float32Array[][]> {
  return Promise.all(
    selection.choices.map((choice) =>
      Promise.all(places.map((place) => (choice.slices ? readFromSpans(choice, place, selection.days) : readFromDays(choice, place, selection.start, selection.end)))),
    ),
  );
}
