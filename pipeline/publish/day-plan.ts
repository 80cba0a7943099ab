// Which days a new raster version holds, in date order: the folder's days, merged with the base version's days
// when extending. Whole years and months of the base that the folder does not touch, or whose files did not
// change since they were published (pipeline/publish/source-cache.ts), come as index nodes: planning reads only the
// pages of the nodes that changed, so it costs the new days, not the archive's.

import type { IndexNode, MonthPage, YearPage } from "../../format/version-index.js";
import type { DayEntry } from "../../format/version-index.js";
import type { RasterView } from "../../format/versions.js";
import type { DayInput } from "./day-sources.js";

/** A day of the new version: its sources (decoded unless the base already holds those bytes), its base entry, or both. */
export interface PlannedDay {
  kind: "day";
  date: string;
  base: DayEntry | null;
  input: DayInput | null;
}

/** Whether the base version's node for a year or month (key YYYY or YYYY-MM) is what the folder's days of it make. */
export type IsUnchanged = (key: string, baseNode: IndexNode) => boolean;

export type PlanItem = { kind: "year" | "month"; node: IndexNode } | PlannedDay;

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

const sortedKeys = (...sets: Iterable<string>[]) => [...new Set(sets.flatMap((s) => [...s]))].sort();

/**
 * The new version's years, months and days in date order. Without `extend`, the base only lends its day entries
 * and its unchanged nodes (a file whose bytes it already published is not decoded again); with it, every base day
 * is kept.
 */
export async function* planDays(days: DayInput[], base: RasterView | null, extend: boolean, isUnchanged: IsUnchanged = () => false): AsyncGenerator<PlanItem> {
  const daysByYear = groupBy(days, (d) => d.date.slice(0, 4));
  const baseYears = new Map((base?.index.years ?? []).map((y) => [y.key, y]));
  for (const year of sortedKeys(daysByYear.keys(), extend ? baseYears.keys() : [])) {
    const yearDays = daysByYear.get(year) ?? [];
    const baseYear = baseYears.get(year);
    if (yearDays.length === 0 || (baseYear && isUnchanged(year, baseYear))) yield { kind: "year", node: baseYear! };
    else yield* planYear(yearDays, baseYear && (await base!.readJson<YearPage>(baseYear.ref)), base, extend, isUnchanged);
  }
}

async function* planYear(days: DayInput[], baseYear: YearPage | undefined, base: RasterView | null, extend: boolean, isUnchanged: IsUnchanged): AsyncGenerator<PlanItem> {
  const baseMonths = new Map((baseYear?.months ?? []).map((m) => [m.key, m]));
  const daysByMonth = groupBy(days, (d) => d.date.slice(0, 7));
  for (const month of sortedKeys(daysByMonth.keys(), extend ? baseMonths.keys() : [])) {
    const monthDays = daysByMonth.get(month) ?? [];
    const baseMonth = baseMonths.get(month);
    if (monthDays.length === 0 || (baseMonth && isUnchanged(month, baseMonth))) {
      yield { kind: "month", node: baseMonth! };
      continue;
    }
    const baseDays = new Map((baseMonth ? (await base!.readJson<MonthPage>(baseMonth.ref)).days : []).map((d) => [d.date, d]));
    const inputByDate = new Map(monthDays.map((d) => [d.date, d]));
    for (const date of sortedKeys(inputByDate.keys(), extend ? baseDays.keys() : [])) {
      yield { kind: "day", date, base: baseDays.get(date) ?? null, input: inputByDate.get(date) ?? null };
    }
  }
}
