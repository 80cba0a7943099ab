// Bench inputs of the four other SILO variables (min_temp, daily_rain, radiation, vp), made once in .cache/bench/
// beside the max_temp files of the same days: full-grid COGs from the demo generator, and small-window days.

import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { dateToDayNumber } from "../format/dates.js";
import type { Window } from "../format/grid.js";
import { MAX_TEMP, type Variable, VARIABLES, findVariable } from "../format/variables.js";
import { makeDemoVariables, makeLandMask } from "../pipeline/ingest/demo.js";
import { writeSiloTiff } from "../pipeline/ingest/geotiff.js";
import { dateToMemberPath } from "../sources/silo.js";
import { createCogWriter, makeBenchMaxTemp } from "./sources.js";

/** The five of issue 25's rows (max_temp, min_temp, daily_rain, radiation, vp); every variable: bench/all-variables.ts. */
export const FIVE_VARIABLES: readonly Variable[] = VARIABLES.slice(0, 5);
export const OTHER_VARIABLES: readonly Variable[] = FIVE_VARIABLES.filter((v) => v !== MAX_TEMP);

const isMissing = (folder: string, date: string) => OTHER_VARIABLES.some((v) => !existsSync(join(folder, dateToMemberPath(date, v))));
const toTenths = (v: number) => Math.fround(Math.round(v * 10) / 10);

/**
 * One full-grid day of the four other variables. Rain, radiation and vapour pressure are the demo generator's for
 * the date; the minimum is the bench's maximum (makeBenchMaxTemp, shifted by the season) less the generator's
 * diurnal range, so it lies below the maximum at every cell as SILO's does (clamped into its plausible range).
 */
export function makeBenchVariables(date: string, mask: Uint8Array): Map<string, Float32Array> {
  const demo = makeDemoVariables(date, mask);
  const [demoMax, demoMin] = [demo.get("max_temp")!, demo.get("min_temp")!];
  const tmax = makeBenchMaxTemp(date, mask);
  const [low, high] = findVariable("min_temp")!.plausible;
  const tmin = new Float32Array(tmax.length);
  for (let i = 0; i < tmax.length; i++) tmin[i] = toTenths(Math.min(high, Math.max(low, tmax[i] - (demoMax[i] - demoMin[i]))));
  demo.set("min_temp", tmin);
  for (const v of OTHER_VARIABLES) {
    const values = demo.get(v.silo)!;
    for (let i = 0; i < values.length; i++) {
      if (values[i] < v.plausible[0] || values[i] > v.plausible[1]) throw new Error(`bench ${v.silo} ${date}: cell ${i} holds ${values[i]}, outside ${v.plausible.join("..")}`);
    }
  }
  // the four alone: the generator makes every variable
  return new Map(OTHER_VARIABLES.map((v) => [v.silo, demo.get(v.silo)!]));
}

/** Full-grid days of the four other variables as COGs (as SILO ships them), made once; two conversions at a time. */
export async function makeFullGridVariableDays(folder: string, dates: string[], log: (line: string) => void): Promise<void> {
  const missing = dates.filter((d) => isMissing(folder, d));
  if (missing.length === 0) return;
  log(`making ${missing.length} full-grid days of ${OTHER_VARIABLES.map((v) => v.silo).join(", ")} as COGs in ${folder} (once; kept for later runs)`);
  const mask = makeLandMask();
  const scratch = join(folder, ".scratch-variables");
  await mkdir(scratch, { recursive: true });
  const writer = createCogWriter(scratch);
  for (const [i, date] of missing.entries()) {
    const days = makeBenchVariables(date, mask);
    for (const v of OTHER_VARIABLES) {
      const target = join(folder, dateToMemberPath(date, v));
      if (!existsSync(target)) await writer.write(target, days.get(v.silo)!);
    }
    if ((i + 1) % 25 === 0) log(`  ${i + 1}/${missing.length}`);
  }
  await writer.finish();
  await rm(scratch, { recursive: true, force: true });
}

/** A whole number modulo n, never negative (day numbers before 1970 are). */
const modulo = (x: number, n: number) => ((x % n) + n) % n;
/** Where each variable's small-window values start: 40 units above it still lie inside its plausible range. */
const SMALL_LOW: Record<string, number> = { min_temp: -5, daily_rain: 0, radiation: 1, vp: 2 };

/**
 * One small-window day of a variable, inside its plausible range: every cell cycles every 400 days (rain is 0 on
 * three cells in four, as most land is dry most days), and the first cell counts the 400-day blocks, so no two
 * days of a variable share a piece.
 */
export function makeSmallVariableDay(variable: Variable, date: string, cells: number): Float32Array {
  const day = dateToDayNumber(date);
  const low = SMALL_LOW[variable.silo];
  const values = new Float32Array(cells);
  for (let i = 0; i < cells; i++) {
    const step = modulo(day * 7 + i * 13, 400);
    values[i] = toTenths(variable.silo === "daily_rain" ? Math.max(0, step - 300) / 4 : low + step / 10);
  }
  values[0] = toTenths(low + modulo(Math.floor(day / 400), 400) / 10);
  return values;
}

/** Small-window days (uncompressed GeoTIFF) of the four other variables, beside max_temp's (bench/sources.ts makeSiloLikeWindowDays). */
export async function makeSmallVariableDays(folder: string, dates: string[], window: Window, log: (line: string) => void): Promise<void> {
  const missing = dates.filter((d) => isMissing(folder, d));
  if (missing.length === 0) return;
  log(`making ${missing.length} small-window days of ${OTHER_VARIABLES.map((v) => v.silo).join(", ")} in ${folder} (once; kept for later runs)`);
  for (const date of missing) {
    for (const v of OTHER_VARIABLES) await writeSiloTiff(join(folder, dateToMemberPath(date, v)), window, makeSmallVariableDay(v, date, window[2] * window[3]));
  }
}
