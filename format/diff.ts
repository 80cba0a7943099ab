// What changed between two raster versions: the dates whose cells differ, found by walking the two index trees
// (docs/format.md §4) side by side and skipping every year or month whose content hash (docs/format.md §6) is equal
// on both sides: equal content means equal dates, windows and cells below, so the cost grows with the changes, not
// with the archive. Also the bounded date ranges a record states its changes in (metadata.changes).

import { dateToDayNumber, dayNumberToDate } from "./dates.js";
import type { Ref } from "./objects.js";
import type { DayEntry, IndexNode, MonthPage, YearPage } from "./version-index.js";

export type ChangeKind = "added" | "removed" | "revised";

/** One date whose cells differ: held by the newer version only (added), the older only (removed), or both. */
export interface DayChange {
  date: string;
  kind: ChangeKind;
  old: DayEntry | null;
  new: DayEntry | null;
}

/** One side of a comparison: a version's years and how to read its (verified) index pages. */
export interface IndexSide {
  years: IndexNode[];
  readPage<T>(ref: Ref): Promise<T>;
}

/** Pairs of nodes (or days) with the same key, in key order; a key on one side only pairs with null. */
function* pairByKey<T>(older: T[], newer: T[], keyOf: (item: T) => string): Generator<[T | null, T | null]> {
  let i = 0;
  let j = 0;
  while (i < older.length || j < newer.length) {
    const a = i < older.length ? keyOf(older[i]) : null;
    const b = j < newer.length ? keyOf(newer[j]) : null;
    if (b === null || (a !== null && a < b)) yield [older[i++], null];
    else if (a === null || b < a) yield [null, newer[j++]];
    else yield [older[i++], newer[j++]];
  }
}

async function daysOf(side: IndexSide, month: IndexNode | null): Promise<DayEntry[]> {
  return month ? (await side.readPage<MonthPage>(month.ref)).days : [];
}

async function monthsOf(side: IndexSide, year: IndexNode | null): Promise<IndexNode[]> {
  return year ? (await side.readPage<YearPage>(year.ref)).months : [];
}

const sameCells = (a: DayEntry, b: DayEntry) => a.cells === b.cells && a.window.join(",") === b.window.join(",");

/**
 * Every date whose cells differ between `older` and `newer`, in date order. A year or month present on both sides
 * with equal content is skipped unread; one present on a single side is read to list its dates.
 */
export async function* diffIndexTrees(older: IndexSide, newer: IndexSide): AsyncGenerator<DayChange> {
  for (const [oldYear, newYear] of pairByKey(older.years, newer.years, (n) => n.key)) {
    if (oldYear && newYear && oldYear.content === newYear.content) continue;
    const [oldMonths, newMonths] = await Promise.all([monthsOf(older, oldYear), monthsOf(newer, newYear)]);
    for (const [oldMonth, newMonth] of pairByKey(oldMonths, newMonths, (n) => n.key)) {
      if (oldMonth && newMonth && oldMonth.content === newMonth.content) continue;
      const [oldDays, newDays] = await Promise.all([daysOf(older, oldMonth), daysOf(newer, newMonth)]);
      for (const [a, b] of pairByKey(oldDays, newDays, (d) => d.date)) {
        if (a && b && sameCells(a, b)) continue;
        yield { date: (a ?? b)!.date, kind: !a ? "added" : !b ? "removed" : "revised", old: a, new: b };
      }
    }
  }
}

/** An inclusive range of dates. */
export type DateRange = [string, string];

/** Dates given in ascending order, as inclusive ranges of consecutive dates. */
export class DateRanges {
  readonly ranges: DateRange[] = [];
  private lastDay = Number.NaN;

  add(date: string): void {
    const day = dateToDayNumber(date);
    if (day === this.lastDay + 1) this.ranges[this.ranges.length - 1][1] = date;
    else this.ranges.push([date, date]);
    this.lastDay = day;
  }
}

/**
 * At most `max` ranges: while there are more, the two neighbouring ranges with the fewest days between them are
 * merged. The result covers every date of the input (and, when `exact` is false, some dates between them).
 */
export function boundRanges(ranges: DateRange[], max: number): { ranges: DateRange[]; exact: boolean } {
  if (ranges.length <= max) return { ranges, exact: true };
  const between = (i: number) => dateToDayNumber(ranges[i + 1][0]) - dateToDayNumber(ranges[i][1]);
  // keep the max - 1 widest separations, in date order; merge across every other one
  const cuts = Array.from({ length: ranges.length - 1 }, (_, i) => i)
    .sort((a, b) => between(b) - between(a) || a - b)
    .slice(0, max - 1)
    .sort((a, b) => a - b);
  const out: DateRange[] = [];
  let start = 0;
  for (const cut of [...cuts, ranges.length - 1]) {
    out.push([ranges[start][0], ranges[cut][1]]);
    start = cut + 1;
  }
  return { ranges: out, exact: false };
}

/** The dates `first..last` holds outside its gaps, as ranges (a coverage's held dates). */
export function heldRanges(first: string, last: string, gaps: DateRange[]): DateRange[] {
  const out: DateRange[] = [];
  let start = first;
  for (const [s, e] of gaps) {
    if (s > start) out.push([start, dayNumberToDate(dateToDayNumber(s) - 1)]);
    start = dayNumberToDate(dateToDayNumber(e) + 1);
  }
  if (start <= last) out.push([start, last]);
  return out;
}
