// Bench inputs, made once and kept in .cache/bench/ (deterministic, like the demo): a year of full-grid days as
// SILO ships them (COG, DEFLATE + floating-point predictor), and a long archive of small-window days.

import { MAX_TEMP } from "../format/variables.js";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { dateToDayNumber, dayNumberToDate } from "../format/dates.js";
import type { Window } from "../format/grid.js";
import { makeDemoDay, makeLandMask } from "../pipeline/ingest/demo.js";
import { writeSiloTiff } from "../pipeline/ingest/geotiff.js";
import { dateToMemberPath } from "../sources/silo.js";

const run = promisify(execFile);
export const BENCH_CACHE = ".cache/bench";

export function listDays(first: string, count: number): string[] {
  const start = dateToDayNumber(first);
  return Array.from({ length: count }, (_, i) => dayNumberToDate(start + i));
}

/**
 * Full-grid days from `first`, as COGs: the demo generator's cells (its January climate, shifted by the day of
 * the year so no two days are equal), written by GDAL as SILO writes its files. Two conversions at a time.
 */
export async function makeFullGridDays(folder: string, dates: string[], log: (line: string) => void): Promise<void> {
  const missing = dates.filter((d) => !existsSync(join(folder, dateToMemberPath(d, MAX_TEMP))));
  if (missing.length === 0) return;
  log(`making ${missing.length} full-grid COG days in ${folder} (once; kept for later runs)`);
  const mask = makeLandMask();
  const scratch = join(folder, ".scratch");
  await mkdir(scratch, { recursive: true });
  const pending: Promise<void>[] = [];
  for (const [i, date] of missing.entries()) {
    const values = makeDemoDay(dayNumberToDate(dateToDayNumber("2003-01-01") + (dateToDayNumber(date) % 31)), mask);
    const shift = Math.fround(((dateToDayNumber(date) % 365) - 182) / 20);
    for (let k = 0; k < values.length; k++) if (values[k] === values[k]) values[k] = Math.fround(Math.round((values[k] + shift) * 10) / 10);
    const plain = join(scratch, `${date}.tif`);
    await writeSiloTiff(plain, [0, 0, 841, 681], values);
    const target = join(folder, dateToMemberPath(date, MAX_TEMP));
    await mkdir(join(target, ".."), { recursive: true });
    pending.push(
      run("gdal_translate", ["-q", "-of", "COG", "-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=FLOATING_POINT", plain, `${target}.part`]).then(async () => {
        await rename(`${target}.part`, target);
        await rm(plain);
      }),
    );
    if (pending.length >= 2) await pending.shift();
    if ((i + 1) % 50 === 0) log(`  ${i + 1}/${missing.length}`);
  }
  await Promise.all(pending);
  await rm(scratch, { recursive: true, force: true });
}

/** Small-window days (uncompressed GeoTIFF, a few hundred bytes each): the shape of a long archive, cheaply. */
export async function makeSmallDays(folder: string, dates: string[], window: Window, log: (line: string) => void): Promise<void> {
  const missing = dates.filter((d) => !existsSync(join(folder, dateToMemberPath(d, MAX_TEMP))));
  if (missing.length === 0) return;
  log(`making ${missing.length} small-window days in ${folder} (once; kept for later runs)`);
  const cells = window[2] * window[3];
  for (const date of missing) {
    const day = dateToDayNumber(date);
    const values = new Float32Array(cells);
    // every day distinct (no two share a piece): the cells cycle every 400 days, the first cell every 240,000
    for (let i = 0; i < cells; i++) values[i] = Math.fround((((((day * 7 + i * 13) % 400) + 400) % 400) + 50) / 10);
    values[0] = Math.fround(((Math.floor(day / 400) % 600) + 600) % 600 / 10);
    await writeSiloTiff(join(folder, dateToMemberPath(date, MAX_TEMP)), window, values);
  }
}
