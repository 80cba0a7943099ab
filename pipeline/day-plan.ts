// Which days a new raster version holds, in date order: the folder's files, merged with the base version's days
// when extending. Whole years and months of the base that the folder does not touch come as index nodes, so
// planning costs the folder's days, not the archive's.

import type { IndexNode, MonthPage, YearPage } from "../format/version-index.js";
import type { DayEntry } from "../format/version-index.js";
import type { RasterView } from "../format/versions.js";
import type { SiloFile } from "./discover.js";

/** A day of the new version: its file (decoded unless the base already holds those bytes), its base entry, or both. */
export interface PlannedDay {
  kind: "day";
  date: string;
  base: DayEntry | null;
  file: SiloFile | null;
}

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
 * (a file whose bytes it already published is not decoded again); with it, every base day is kept.
 */
export async function* planDays(files: SiloFile[], base: RasterView | null, extend: boolean): AsyncGenerator<PlanItem> {
  const filesByYear = groupBy(files, (f) => f.date.slice(0, 4));
  const baseYears = new Map((base?.index.years ?? []).map((y) => [y.key, y]));
  for (const year of sortedKeys(filesByYear.keys(), extend ? baseYears.keys() : [])) {
    const yearFiles = filesByYear.get(year) ?? [];
    const baseYear = baseYears.get(year);
    if (yearFiles.length === 0) yield { kind: "year", node: baseYear! };
    else yield* planYear(yearFiles, baseYear && (await base!.readJson<YearPage>(baseYear.ref)), base, extend);
  }
}

async function* planYear(files: SiloFile[], baseYear: YearPage | undefined, base: RasterView | null, extend: boolean): AsyncGenerator<PlanItem> {
  const baseMonths = new Map((baseYear?.months ?? []).map((m) => [m.key, m]));
  const filesByMonth = groupBy(files, (f) => f.date.slice(0, 7));
  for (const month of sortedKeys(filesByMonth.keys(), extend ? baseMonths.keys() : [])) {
    const monthFiles = filesByMonth.get(month) ?? [];
    const baseMonth = baseMonths.get(month);
    if (monthFiles.length === 0) {
      yield { kind: "month", node: baseMonth! };
      continue;
    }
    const baseDays = new Map((baseMonth ? (await base!.readJson<MonthPage>(baseMonth.ref)).days : []).map((d) => [d.date, d]));
    const fileByDate = new Map(monthFiles.map((f) => [f.date, f]));
    for (const date of sortedKeys(fileByDate.keys(), extend ? baseDays.keys() : [])) {
      yield { kind: "day", date, base: baseDays.get(date) ?? null, file: fileByDate.get(date) ?? null };
    }
  }
}
