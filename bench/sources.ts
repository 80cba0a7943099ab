// Bench inputs, made once and kept in .cache/bench/ (deterministic, like the demo): a year of full-grid days as
// SILO ships them (COG, DEFLATE + floating-point predictor), and long archives of small windows of SILO-like days, of
// max_temp (the other four variables' beside them: bench/variable-sources.ts).

import { MAX_TEMP, type Variable } from "../format/variables.js";
import { makeSiloLikeMaxTemp } from "./silo-like.js";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { promisify } from "node:util";
import { dateToDayNumber, dayNumberToDate } from "../format/dates.js";
import { GRID, type Window } from "../format/grid.js";
import { makeLandMask } from "../pipeline/ingest/demo.js";
import { writeSiloTiff } from "../pipeline/ingest/geotiff.js";
import { dateToMemberPath } from "../sources/silo.js";

const run = promisify(execFile);
export const BENCH_CACHE = ".cache/bench";

export function listDays(first: string, count: number): string[] {
  const start = dateToDayNumber(first);
  return Array.from({ length: count }, (_, i) => dayNumberToDate(start + i));
}

/** The bench's max_temp of a day: SILO-like (bench/silo-like.ts), as smooth in space and as changeable as weather. */
export const makeBenchMaxTemp = makeSiloLikeMaxTemp;
/** Full-grid days, made once: named for their generator, so a change of it never reuses another's files. */
export const YEAR_CACHE = join(BENCH_CACHE, "silo-like-year");

/**
 * Writes full-grid days as SILO writes its files: a plain GeoTIFF in `scratch`, rewritten by GDAL as a COG
 * (DEFLATE + floating-point predictor) under its name; two conversions at a time. `finish` waits for the last.
 */
export function createCogWriter(scratch: string): { write(target: string, values: Float32Array): Promise<void>; finish(): Promise<void> } {
  const pending: Promise<void>[] = [];
  return {
    async write(target, values) {
      const plain = join(scratch, basename(target));
      await writeSiloTiff(plain, [0, 0, GRID.width, GRID.height], values);
      await mkdir(dirname(target), { recursive: true });
      pending.push(
        run("gdal_translate", ["-q", "-of", "COG", "-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=FLOATING_POINT", plain, `${target}.part`]).then(async () => {
          await rename(`${target}.part`, target);
          await rm(plain);
        }),
      );
      if (pending.length >= 2) await pending.shift();
    },
    async finish() {
      await Promise.all(pending.splice(0));
    },
  };
}

/** Full-grid days of a variable (max_temp by makeBenchMaxTemp unless told) as COGs, made once. */
export async function makeFullGridDays(folder: string, dates: string[], log: (line: string) => void, variable: Variable = MAX_TEMP, make = makeBenchMaxTemp): Promise<void> {
  const missing = dates.filter((d) => !existsSync(join(folder, dateToMemberPath(d, variable))));
  if (missing.length === 0) return;
  log(`making ${missing.length} full-grid COG days of ${variable.silo} in ${folder} (once; kept for later runs)`);
  const mask = makeLandMask();
  const scratch = join(folder, ".scratch");
  await mkdir(scratch, { recursive: true });
  const writer = createCogWriter(scratch);
  for (const [i, date] of missing.entries()) {
    await writer.write(join(folder, dateToMemberPath(date, variable)), make(date, mask));
    if ((i + 1) % 50 === 0) log(`  ${i + 1}/${missing.length}`);
  }
  await writer.finish();
  await rm(scratch, { recursive: true, force: true });
}

/** The days of `dates` that `folder` lacks, each written as a small GeoTIFF of `window` from `valuesOf`: made once, kept for later runs. */
async function makeWindowDays(folder: string, dates: string[], window: Window, what: string, log: (line: string) => void, valuesOf: (date: string) => Float32Array): Promise<void> {
  const missing = dates.filter((d) => !existsSync(join(folder, dateToMemberPath(d, MAX_TEMP))));
  if (missing.length === 0) return;
  log(`making ${missing.length} ${what} in ${folder} (once; kept for later runs)`);
  for (const date of missing) await writeSiloTiff(join(folder, dateToMemberPath(date, MAX_TEMP)), window, valuesOf(date));
}

/** A window of SILO-like max_temp days: the whole grid's cells of the window, made alone (0.3 ms a day of 16 x 16 cells). */
export function makeSiloLikeWindowDays(folder: string, dates: string[], window: Window, log: (line: string) => void): Promise<void> {
  const mask = makeLandMask();
  return makeWindowDays(folder, dates, window, `days of a ${window[2]} x ${window[3]} window of SILO-like max_temp`, log, (date) => makeSiloLikeMaxTemp(date, mask, window));
}
