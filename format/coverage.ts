// Coverage: the dates and cells a day, month, year or version holds, merged up the index tree, enough to choose
// a version without reading its index (docs/format.md §4, docs/contract.md §3.4).

import { dateToDayNumber, dayNumberToDate } from "./dates.js";
import { type Window, containsWindow, intersectWindows, unionWindows } from "./grid.js";

export interface Coverage {
  first: string;
  last: string;
  /** dates between first and last that are not held, as inclusive [start, end] ranges */
  gaps: [string, string][];
  /** cells every date holds (intersection of the day windows) and cells some date holds (their union) */
  windowAll: Window;
  windowAny: Window;
}

export function dayCoverage(date: string, window: Window): Coverage {
  return { first: date, last: date, gaps: [], windowAll: window, windowAny: window };
}

/** Coverage of `a` followed by `b` (b's dates all after a's): the dates between them become a gap. */
export function mergeCoverage(a: Coverage, b: Coverage): Coverage {
  const between = dateToDayNumber(b.first) - dateToDayNumber(a.last);
  if (between < 1) throw new Error(`coverage ${b.first}.. does not follow ..${a.last}`);
  const gap: [string, string][] =
    between > 1 ? [[dayNumberToDate(dateToDayNumber(a.last) + 1), dayNumberToDate(dateToDayNumber(b.first) - 1)]] : [];
  return {
    first: a.first,
    last: b.last,
    gaps: [...a.gaps, ...gap, ...b.gaps],
    windowAll: intersectWindows(a.windowAll, b.windowAll),
    windowAny: unionWindows(a.windowAny, b.windowAny),
  };
}

/** Whether `date` is one the coverage holds (within first..last and in no gap). */
export function holdsDate(coverage: Coverage, date: string): boolean {
  return date >= coverage.first && date <= coverage.last && !coverage.gaps.some(([s, e]) => date >= s && date <= e);
}

/**
 * `newer` holds every date and cell `older` holds, on every date, by its summaries alone: then no request can
 * ever choose `older` without a pin, and it leaves the query candidates (docs/contract.md §3.4).
 */
export function shadows(newer: Coverage, older: Coverage): boolean {
  if (newer.first > older.first || newer.last < older.last) return false;
  if (!containsWindow(newer.windowAll, older.windowAny)) return false;
  // every gap of `newer` inside older's period must be a gap of `older` too
  return newer.gaps.every(([s, e]) => {
    const start = s < older.first ? older.first : s;
    const end = e > older.last ? older.last : e;
    return start > end || older.gaps.some(([os, oe]) => os <= start && oe >= end);
  });
}
