// Find SILO source files in a folder laid out as the bucket is (YYYY/) or flat: daily GeoTIFFs
// (YYYYMMDD.max_temp.tif) and annual NetCDF files (YYYY.max_temp.nc), and the provenance beside them.

import { readdir, readFile } from "node:fs/promises";
import { join, sep } from "node:path";
import { isCalendarDate } from "../../format/dates.js";
import { SILO_TMAX } from "../../sources/silo.js";
import { PublishError } from "../errors.js";

/** One day's GeoTIFF. */
export interface DayFile {
  kind: "daily";
  date: string; // YYYY-MM-DD
  path: string; // on disk
  memberPath: string; // relative to the sources folder, '/'-separated
}

/** One year's annual NetCDF file; the days it holds are read from its time axis. */
export interface YearFile {
  kind: "annual";
  year: string; // YYYY, from the name
  path: string;
  memberPath: string;
}

export type SiloFile = DayFile | YearFile;

/** Member paths (relative, '/'-separated) of the names at the top of the folder and in its YYYY/ folders. */
async function listCandidates(folder: string): Promise<string[]> {
  let top: string[];
  try {
    top = await readdir(folder);
  } catch {
    throw new PublishError(folder, "discover", "sources folder not found or unreadable; pass SOURCES=<folder of YYYYMMDD.max_temp.tif or YYYY.max_temp.nc files>");
  }
  const candidates: string[] = [];
  // sorted, so a message naming two files names them in the same order on every machine
  for (const name of top.sort()) {
    if (/^\d{4}$/.test(name)) {
      for (const inner of (await readdir(join(folder, name)).catch(() => [])).sort()) candidates.push(`${name}/${inner}`);
    } else candidates.push(name);
  }
  return candidates;
}

function toSiloFile(base: string, memberPath: string): SiloFile | null {
  const name = memberPath.slice(memberPath.lastIndexOf("/") + 1);
  // one string per file, not path.join: a folder of 50,000 days is listed on every publish
  const path = base + (sep === "/" ? memberPath : memberPath.split("/").join(sep));
  const year = SILO_TMAX.annualFileName.exec(name);
  if (year) return { kind: "annual", year: year[1], path, memberPath };
  const m = SILO_TMAX.fileName.exec(name);
  if (!m) return null;
  const date = `${m[1]}-${m[2]}-${m[3]}`;
  if (!isCalendarDate(date)) throw new PublishError(memberPath, "discover", `${date} is not a calendar date`);
  return { kind: "daily", date, path, memberPath };
}

/** Every SILO file of the folder: daily files in date order, then annual files in year order. */
export async function findSiloFiles(folder: string): Promise<SiloFile[]> {
  const byKey = new Map<string, SiloFile>();
  const base = join(folder, "x").slice(0, -1); // the folder with one separator after it
  for (const memberPath of await listCandidates(folder)) {
    const file = toSiloFile(base, memberPath);
    if (!file) continue;
    const key = file.kind === "daily" ? file.date : `annual ${file.year}`;
    const twin = byKey.get(key);
    if (twin) throw new PublishError(file.memberPath, "discover", `same ${file.kind === "daily" ? "date" : "year"} as ${twin.memberPath}; keep one file per ${file.kind === "daily" ? "day" : "year"}`);
    byKey.set(key, file);
  }
  if (byKey.size === 0) {
    throw new PublishError(folder, "discover", "no SILO daily max_temp files (YYYYMMDD.max_temp.tif) or annual files (YYYY.max_temp.nc), flat or in YYYY/ folders, found");
  }
  return [...byKey.keys()].sort().map((k) => byKey.get(k)!);
}

/** JSON provenance written beside sources by `make fetch` (silo.lock.json) or the demo generator (demo.json). */
export async function readJsonIfPresent(file: string): Promise<unknown | null> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    return null;
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new PublishError(file, "discover", "provenance file is not valid JSON; delete it or restore it");
  }
}
