// Find SILO daily files in a folder laid out as the bucket is (YYYY/) or flat, and the provenance beside them.

import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { isCalendarDate } from "../format/dates.js";
import { SILO_TMAX } from "../sources/silo.js";
import { PublishError } from "./errors.js";

export interface SiloFile {
  date: string; // YYYY-MM-DD
  path: string; // on disk
  memberPath: string; // relative to the sources folder, '/'-separated
}

export async function findSiloFiles(folder: string): Promise<SiloFile[]> {
  let top: string[];
  try {
    top = await readdir(folder);
  } catch {
    throw new PublishError(folder, "discover", "sources folder not found or unreadable; pass SOURCES=<folder of YYYYMMDD.max_temp.tif files>");
  }
  const candidates: string[] = [];
  for (const name of top) {
    if (/^\d{4}$/.test(name)) {
      for (const inner of await readdir(join(folder, name)).catch(() => [])) candidates.push(join(folder, name, inner));
    } else candidates.push(join(folder, name));
  }
  const byDate = new Map<string, SiloFile>();
  for (const path of candidates) {
    const memberPath = relative(folder, path).split("\\").join("/");
    const m = SILO_TMAX.fileName.exec(memberPath.split("/").pop()!);
    if (!m) continue;
    const date = `${m[1]}-${m[2]}-${m[3]}`;
    if (!isCalendarDate(date)) throw new PublishError(memberPath, "discover", `${date} is not a calendar date`);
    const twin = byDate.get(date);
    if (twin) throw new PublishError(memberPath, "discover", `same date as ${twin.memberPath}; keep one file per day`);
    byDate.set(date, { date, path, memberPath });
  }
  if (byDate.size === 0) {
    throw new PublishError(folder, "discover", "no SILO daily max_temp files (YYYYMMDD.max_temp.tif, flat or in YYYY/ folders) found");
  }
  return [...byDate.values()].sort((a, b) => (a.date < b.date ? -1 : 1));
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
