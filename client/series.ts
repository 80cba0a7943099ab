// A place over any period, as the contract asks it: consecutive 31-day queries of one cell (docs/contract.md §3.3),
// every one pinned to one version so a long series never mixes versions; the cell is the one the series route
// answers for the same point (format/grid.ts lonLatToCell).

import { makeDataRequest } from "../api/query/face.js";
import { LIMITS } from "../api/contract.js";
import { dateToDayNumber, dayNumberToDate, isCalendarDate } from "../format/dates.js";
import { lonLatToCell } from "../format/grid.js";

export interface SeriesOptions {
  format?: "json" | "csv";
  /** the version every query is pinned to (default: the one the first query resolves to) */
  datasetVersion?: string;
}

/** The consecutive periods of at most 31 days that cover start..end, in order. */
export function splitPeriod(start: string, end: string): [string, string][] {
  if (!isCalendarDate(start) || !isCalendarDate(end) || start > end) throw new RangeError(`${start}..${end} is not a period of calendar dates`);
  const periods: [string, string][] = [];
  for (let day = dateToDayNumber(start); day <= dateToDayNumber(end); day += LIMITS.maxDays) {
    periods.push([dayNumberToDate(day), dayNumberToDate(Math.min(dateToDayNumber(end), day + LIMITS.maxDays - 1))]);
  }
  return periods;
}

/** The data requests of a series: cell by cell, period by period. Points are [longitude, latitude]. */
export function planSeries(points: [number, number][], start: string, end: string, format: "json" | "csv", datasetVersion: string | undefined): object[] {
  const periods = splitPeriod(start, end);
  return points.flatMap(([lon, lat]) => {
    const cell = lonLatToCell(lon, lat); // the series route's rule: on an edge, the cell east or north
    if (!cell) throw new RangeError(`${lon}, ${lat} is outside the SILO grid`);
    const extra = { format, ...(datasetVersion ? { dataset_version: datasetVersion } : {}) };
    return periods.map(([first, last]) => makeDataRequest([cell.col, cell.row, 1, 1], first, last, extra));
  });
}
