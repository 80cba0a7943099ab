// The days a sources folder holds, and where each comes from: a daily GeoTIFF, a day of an annual NetCDF file,
// or both (docs/contract.md §6.1). An annual file's days come from its time axis, read once and then remembered
// (pipeline/publish/source-cache.ts), so an unchanged 410 MB file is not opened again.

import type { SiloFile, YearFile } from "../ingest/discover.js";
import { PublishError } from "../errors.js";
import type { KnownFile, SourceCache } from "./source-cache.js";

/** What a day's cells are, in one string: its window and the sha256 of its canonical cells. */
export function cellsKey(day: { window: number[]; cells: string }): string {
  return `${day.window.join(",")} ${day.cells}`;
}

/** One source of a day: a daily file, or a time index of an annual file; its sha256 once known. */
export interface DaySource {
  file: SiloFile;
  /** the day's time index inside an annual file; null for a daily file */
  index: number | null;
  /** the file's sha256: known for annual files, and for daily files whose size and times are remembered */
  sha256: string | null;
  /** a daily file's cells as a publish decoded them, when remembered: its window and cells sha256 (cellsKey) */
  cells?: string;
}

/** A date and its sources: one, or two when the folder holds it in both forms (the annual file's first). */
export interface DayInput {
  date: string;
  sources: DaySource[];
}

/** Which form wins a date held in both forms with different cells (docs/contract.md §6.1); null: neither, stop. */
export type Prefer = "daily" | "annual";

/**
 * Every date of the folder in order. `inspect` reads an annual file the cache does not vouch for (its sha256 and
 * dates, checked); its dates must lie in the year its name gives.
 */
export async function collectDays(files: SiloFile[], cache: SourceCache, inspect: (file: YearFile) => Promise<KnownFile>): Promise<DayInput[]> {
  const byDate = new Map<string, DaySource[]>();
  const add = (date: string, source: DaySource) => {
    const list = byDate.get(date);
    if (list) list.push(source);
    else byDate.set(date, [source]);
  };
  const annual = files.filter((f): f is YearFile => f.kind === "annual");
  const known = await Promise.all(
    annual.map(async (file) => {
      const cached = cache.known(file);
      if (cached?.dates) return cached;
      const found = await inspect(file);
      cache.remember(file, found);
      return found;
    }),
  );
  annual.forEach((file, i) => {
    known[i].dates!.forEach((date, index) => {
      if (date.slice(0, 4) !== file.year) {
        throw new PublishError(file.path, "discover", `time index ${index} is ${date}, outside ${file.year}, the year the file's name gives; rename the file or fetch it again`, file.variable);
      }
      add(date, { file, index, sha256: known[i].sha256 });
    });
  });
  for (const file of files) {
    if (file.kind !== "daily") continue;
    const known = cache.known(file);
    add(file.date, { file, index: null, sha256: known?.sha256 ?? null, ...(known?.cells ? { cells: known.cells } : {}) });
  }
  return [...byDate.keys()].sort().map((date) => ({ date, sources: byDate.get(date)! }));
}
