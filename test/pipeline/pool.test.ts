// The publish's decoding threads (pipeline/pool.ts, pipeline/publish/day-worker.ts): one pool serves every variable
// of a publish, so between variables its threads close the annual files they hold open (`each` runs the release on
// every thread started) and then decode the next variable's days without starting again.

import { copyFile, mkdir, readdir, readlink } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { NETCDF_LIBRARY } from "../../pipeline/ingest/netcdf.js";
import { WorkerPool } from "../../pipeline/pool.js";
import type { DayResult, DayTask, InspectResult, InspectTask, ReleaseResult, ReleaseTask } from "../../pipeline/publish/day-worker.js";
import { freshDirs, makeWorkDir } from "../support/helpers.js";

const FIXTURE = fileURLToPath(new URL("../fixtures/nc-packed-south-up.nc", import.meta.url));
const freshDir = freshDirs(makeWorkDir("pool-test"));

type Task = DayTask | InspectTask | ReleaseTask;
type Result = DayResult | InspectResult | ReleaseResult;

/** The descriptors of this process (its threads share them) open on files under `dir`. */
async function openUnder(dir: string): Promise<string[]> {
  const fds = await readdir("/proc/self/fd");
  const targets = await Promise.all(fds.map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => "")));
  return targets.filter((t) => t.startsWith(dir)).sort();
}

test("pool - a release closes every annual file the threads hold open; the same threads then decode on, none started again", async () => {
  const dir = freshDir("threads");
  await mkdir(dir, { recursive: true });
  const paths = ["a", "b", "c"].map((name) => join(dir, `${name}.max_temp.nc`));
  for (const path of paths) await copyFile(FIXTURE, path);
  const pool = new WorkerPool<Task, Result>(new URL("../../pipeline/publish/day-worker.ts", import.meta.url), 2, [NETCDF_LIBRARY]);
  try {
    assert.equal(await pool.each({ kind: "release" }), [], "no thread started: nothing to release, none started for it");
    assert.is(pool.started, 0);
    const inspected = (await pool.run({ kind: "inspect", path: paths[0], variable: "max_temp" })) as InspectResult;
    assert.ok(inspected.ok);
    const day = (path: string, index: number): DayTask => ({
      kind: "day",
      date: inspected.ok ? inspected.dates[index] : "",
      sources: [{ kind: "annual", path, memberPath: path.slice(dir.length + 1), index, sha256: inspected.ok ? inspected.sha256 : "" }],
      baseSha256: null,
      baseCells: null,
      prefer: null,
      variable: "max_temp",
    });
    const decode = async (tasks: DayTask[]) => {
      for (const result of (await Promise.all(tasks.map((task) => pool.run(task)))) as DayResult[]) assert.ok(result.ok && result.decoded, JSON.stringify(result));
    };
    // six days of three files on two threads: each thread keeps the files it read open for the days that follow
    await decode(paths.flatMap((path) => [day(path, 0), day(path, 1)]));
    assert.is(pool.started, 2);
    const held = await openUnder(dir);
    assert.ok(held.length >= 2, `annual files held open: ${held.join(", ")}`);
    // asked while one thread still decodes: that thread releases after its day, the other at once (with one shared
    // queue the idle thread would take both releases, and the busy one would keep its files open)
    const running = decode([day(paths[1], 4)]);
    const released = (await pool.each({ kind: "release" })) as ReleaseResult[];
    await running;
    assert.is(released.length, 2, "one release a thread");
    const closed = released.reduce((n, r) => n + r.closed, 0);
    assert.ok(closed >= held.length && closed <= 4, `files closed: ${closed} (${held.length} held before the last day; a thread keeps two)`);
    assert.equal(await openUnder(dir), [], "no descriptor left on the annual files");
    await decode([day(paths[2], 2), day(paths[0], 3)]);
    assert.is(pool.started, 2, "the same threads decode the next days");
  } finally {
    await pool.close();
  }
});

test.run();
