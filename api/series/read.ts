// The values of a series call: each variable at each place over the period, from the series tier (one chunk a span
// at a place); every byte verified as it is read.

import type { Place } from "./params.js";
import type { SeriesChoice, SeriesSelection } from "./select.js";

/** One variable at one place over start..end from its version's series spans: NaN for missing. */
export async function readFromSpans(choice: SeriesChoice, place: Place, days: number): Promise<Float32Array> {
  const out = new Float32Array(days);
  const reads: Promise<void>[] = [];
  let at = 0;
  for (const { span, from, to } of choice.slices) {
    reads.push(choice.view.readSeriesPoint(span, place.col, place.row, from, to, out, at));
    at += to - from;
  }
  await Promise.all(reads);
  return out;
}

/** values[v][p]: variable v (in the order asked) at place p (in the order asked), one value a day from start. */
export function readSeriesValues(selection: SeriesSelection, places: Place[]): Promise<Float32Array[][]> {
  return Promise.all(
    selection.choices.map((choice) =>
      Promise.all(places.map((place) => readFromSpans(choice, place, selection.days))),
    ),
  );
}
