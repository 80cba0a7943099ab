// Set-up code test files share: a temp folder of the process's own with fresh paths under it, SILO day files made from
// a rule, a publish that prints nothing, a publish expected to fail, and a dist's JSON object read by its ref.

import { mkdtempSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as assert from "uvu/assert";
import type { Window } from "../../format/grid.js";
import { objectPath, type Ref } from "../../format/objects.js";
import { MAX_TEMP, type Variable } from "../../format/variables.js";
import { writeSiloTiff } from "../../pipeline/ingest/geotiff.js";
import { type PipelineError, PublishError } from "../../pipeline/errors.js";
import { type PublishOptions, type PublishSummary, publish } from "../../pipeline/publish/publish.js";
import { dateToMemberPath } from "../../sources/silo.js";

/** A new temp folder, removed when the process exits (exit handlers run synchronously: rmSync). */
export function makeWorkDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Paths not yet created under `dir`, numbered so no two tests share one: freshDir("dist") -> dir/7-dist. */
export function freshDirs(dir: string): (name: string) => string {
  let count = 0;
  return (name) => join(dir, `${++count}-${name}`);
}

/** A cell's value on one of the dates written (`day`: the date's index among them); null or NaN is a missing cell. */
export type CellRule = (col: number, row: number, date: string, day: number) => number | null;

/**
 * SILO daily GeoTIFFs of one variable over a window of the grid, laid out as the bucket is
 * (dir/YYYY/YYYYMMDD.<variable>.tif): each date's cells as `valueOf` gives them, stored as float32, 32 files at a time.
 */
export async function writeSiloDays(dir: string, dates: string[], window: Window, valueOf: CellRule, variable: Pick<Variable, "silo"> = MAX_TEMP): Promise<void> {
  const [c0, r0, w, h] = window;
  const writeDay = (date: string, day: number) => {
    const values = new Float32Array(w * h);
    for (let r = 0; r < h; r++) for (let c = 0; c < w; c++) values[r * w + c] = valueOf(c0 + c, r0 + r, date, day) ?? NaN;
    return writeSiloTiff(join(dir, dateToMemberPath(date, variable)), window, values);
  };
  for (let i = 0; i < dates.length; i += 32) await Promise.all(dates.slice(i, i + 32).map((date, j) => writeDay(date, i + j)));
}

/** Progress that prints nothing (the pipeline's line/status/done reporter). */
export const quietProgress = { line: () => {}, status: () => {}, done: () => {} };

/** A publish of max temperature days alone: no observation table, no explorer, nothing printed. */
export function publishSilently(sources: string, dist: string, options: Partial<PublishOptions> = {}): Promise<PublishSummary> {
  return publish({ sources, dist, observations: false, explorer: false, log: () => {}, ...options });
}

/** Awaits a pipeline run expected to fail, and returns its error, of the kind given (a LockError, a StoreError, ...). */
export async function expectFailure<T extends PipelineError>(run: Promise<unknown>, kind: abstract new (...args: never[]) => T): Promise<T> {
  try {
    await run;
  } catch (err) {
    assert.instance(err, kind, String(err));
    return err as T;
  }
  return assert.unreachable("the run should have failed") as never;
}

/** Awaits a publish expected to refuse its sources, and returns its PublishError. */
export function expectPublishError(run: Promise<unknown>): Promise<PublishError> {
  return expectFailure(run, PublishError);
}

/** A JSON object of a dist, by its ref. */
export async function readObject<T>(dist: string, ref: Ref): Promise<T> {
  return JSON.parse(await readFile(join(dist, objectPath(ref.sha256, "json")), "utf8")) as T;
}
