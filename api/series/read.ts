// The values of a series call: each variable at each place over the period, from the series tier (one chunk a span
// at a place); every byte verified as it is read.

import type { Window } from "../../format/grid.js";
import type { Place, SeriesConfig } from "./call.js";
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

/**
 * A box's values: each span's chunks of the whole window in one read (a handful of chunks a span, not one read a cell),
 * days x cells as the tier gives them, then each cell's column.
 */
async function readBox(choice: SeriesChoice, window: Window, days: number): Promise<Float32Array[]> {
  const cells = window[2] * window[3];
  const out = Array.from({ length: cells }, () => new Float32Array(days));
  let at = 0;
  await Promise.all(
    choice.slices.map(async ({ span, from, to }) => {
      const start = at;
      at += to - from;
      const read = await choice.view.readSeries(span, window, from, to);
      for (let d = 0; d < read.length; d++) {
        const day = read[d];
        for (let c = 0; c < cells; c++) out[c][start + d] = day[c];
      }
    }),
  );
  return out;
}

/** values[v][p]: variable v (in the order asked) at place p (in the order asked, a box's cells row-major), one value a day from start. */
export function readSeriesValues(selection: SeriesSelection, config: SeriesConfig): Promise<Float32Array[][]> {
  const { box, places } = config;
  if (box) return Promise.all(selection.choices.map((choice) => readBox(choice, box.window, selection.days)));
  return Promise.all(selection.choices.map((choice) => Promise.all(places.map((place) => readFromSpans(choice, place, selection.days)))));
}
