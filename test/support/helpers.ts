// Set-up code test files share: a temp folder of the process's own with fresh paths under it, a publish that prints
// nothing, a publish expected to fail, and a dist's JSON object read by its ref.

import { mkdtempSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as assert from "uvu/assert";
import { objectPath, type Ref } from "../../format/objects.js";
import { type PipelineError, PublishError } from "../../pipeline/errors.js";
import { type PublishOptions, type PublishSummary, publish } from "../../pipeline/publish/publish.js";

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
