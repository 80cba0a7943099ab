// Find SILO source files in a folder laid out as the bucket is (YYYY/) or flat: daily GeoTIFFs
// (YYYYMMDD.<var>.tif) and annual NetCDF files (YYYY.<var>.nc) of any variable format/variables.ts knows, any
// mix, and the provenance beside them.

import { readdir, readFile } from "node:fs/promises";
import { join, sep } from "node:path";
import { isCalendarDate } from "../../format/dates.js";
import { type Variable, VARIABLES, describeVariables, findVariable } from "../../format/variables.js";
import { SILO } from "../../sources/silo.js";
import { PublishError } from "../errors.js";

/** One day's GeoTIFF. */
export interface DayFile {
  kind: "daily";
  variable: Variable;
  date: string; // YYYY-MM-DD
  path: string; // on disk
  memberPath: string; // relative to the sources folder, '/'-separated
}

/** One year's annual NetCDF file; the days it holds are read from its time axis. */
export interface YearFile {
  kind: "annual";
  variable: Variable;
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
    throw new PublishError(folder, "discover", "sources folder not found or unreadable; pass SOURCES=<folder of YYYYMMDD.<variable>.tif or YYYY.<variable>.nc files>");
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

/** The variable a SILO file name names, or a stop naming the file and the variables known. */
function toVariable(memberPath: string, silo: string): Variable {
  const variable = findVariable(silo);
  if (!variable || variable.silo !== silo) {
    throw new PublishError(memberPath, "discover", `"${silo}" is not a SILO variable this archive publishes; known: ${VARIABLES.map((v) => v.silo).join(", ")}; move the file out of the folder`);
  }
  return variable;
}

/** A stop for a file dated before its variable's first date: SILO has no such file, so it is not SILO's (fail closed). */
function checkStart(memberPath: string, variable: Variable, first: string): void {
  if (first >= variable.firstDate) return;
  throw new PublishError(
    memberPath,
    "discover",
    `${variable.silo} starts on ${variable.firstDate} (SILO's first date of it), and this file holds ${first}; it is not a SILO file of ${variable.silo}: move it out of the folder`,
    variable,
  );
}

function toSiloFile(base: string, memberPath: string): SiloFile | null {
  const name = memberPath.slice(memberPath.lastIndexOf("/") + 1);
  // one string per file, not path.join: a folder of 50,000 days is listed on every publish
  const path = base + (sep === "/" ? memberPath : memberPath.split("/").join(sep));
  const year = SILO.annualFileName.exec(name);
  if (year) {
    const variable = toVariable(memberPath, year[2]);
    checkStart(memberPath, variable, `${year[1]}-12-31`);
    return { kind: "annual", variable, year: year[1], path, memberPath };
  }
  const m = SILO.dailyFileName.exec(name);
  if (!m) return null;
  const date = `${m[1]}-${m[2]}-${m[3]}`;
  const variable = toVariable(memberPath, m[4]);
  if (!isCalendarDate(date)) throw new PublishError(memberPath, "discover", `${date} is not a calendar date`, variable);
  checkStart(memberPath, variable, date);
  return { kind: "daily", variable, date, path, memberPath };
}

/**
 * Every SILO file of the folder, by variable in the order of format/variables.ts: daily files in date order,
 * then annual files in year order.
 */
export async function findSiloFiles(folder: string): Promise<Map<Variable, SiloFile[]>> {
  const byKey = new Map<string, SiloFile>();
  const base = join(folder, "x").slice(0, -1); // the folder with one separator after it
  for (const memberPath of await listCandidates(folder)) {
    const file = toSiloFile(base, memberPath);
    if (!file) continue;
    const key = `${file.variable.silo} ${file.kind === "daily" ? file.date : `annual ${file.year}`}`;
    const twin = byKey.get(key);
    if (twin) throw new PublishError(file.memberPath, "discover", `same ${file.kind === "daily" ? "date" : "year"} as ${twin.memberPath}; keep one file per ${file.kind === "daily" ? "day" : "year"}`, file.variable);
    byKey.set(key, file);
  }
  if (byKey.size === 0) {
    throw new PublishError(folder, "discover", `no SILO daily files (YYYYMMDD.<variable>.tif) or annual files (YYYY.<variable>.nc), flat or in YYYY/ folders, found; variables: ${describeVariables()}`);
  }
  const byVariable = new Map<Variable, SiloFile[]>();
  for (const variable of VARIABLES) {
    const files = [...byKey.keys()].filter((k) => k.startsWith(`${variable.silo} `)).sort().map((k) => byKey.get(k)!);
    if (files.length > 0) byVariable.set(variable, files);
  }
  return byVariable;
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
