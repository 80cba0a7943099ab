// A publish under faults: a full disk (a real tmpfs, filled up to each stage in turn) and SIGKILL at 20 moments.
// After each, the dist is exactly as it was (the full disk) or still verifies (the kill), it serves, and the next
// publish succeeds and leaves nothing of the failed one behind.

import { execFileSync, spawn } from "node:child_process";
import { statfsSync } from "node:fs";
import { cp, mkdir, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { Window } from "../../format/grid.js";
import { sha256Hex } from "../../format/hash.js";
import { StoreError } from "../../pipeline/errors.js";
import { JOURNAL_FILE, recoverJournal } from "../../pipeline/store/journal.js";
import { publish, recoverDist } from "../../pipeline/publish/publish.js";
import { verifyDist } from "../../pipeline/commands/verify.js";
import { childArgs } from "../support/child-bundles.js";
import { makeWorkDir, writeSiloDays } from "../support/helpers.js";
import { request, withServer } from "../support/server-fixture.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const WORK = makeWorkDir("publish-faults");

const WINDOW: Window = [400, 300, 40, 40];
const BASE_DATES = ["2004-02-01", "2004-02-02", "2004-02-03"];
const NEW_DATES = ["2004-03-01", "2004-03-02", "2004-03-03", "2004-03-04"];
const PUBLISHED = "2024-05-01T00:00:00Z";
let sources: { base: string; next: string; oldExplorer: string; explorer: string } | null = null;

/** The two source folders, an explorer page of an older release and one of this release, made once. */
async function useSources(): Promise<NonNullable<typeof sources>> {
  if (sources) return sources;
  const base = join(WORK, "sources-base");
  const next = join(WORK, "sources-next");
  await writeSiloDays(base, BASE_DATES, WINDOW, (col, row, _date, day) => 20 + day + (col - 400) / 10 + (row - 300) / 100);
  await writeSiloDays(next, NEW_DATES, WINDOW, (col, row, _date, day) => 30 + day + (col - 400) / 10 + (row - 300) / 100);
  const [oldExplorer, explorer] = [join(WORK, "old-explorer.html"), join(WORK, "explorer.html")];
  await writeFile(oldExplorer, "<!doctype html><title>an older explorer</title>\n");
  await writeFile(explorer, `<!doctype html><title>this release's explorer</title>\n${"<p>a page of some size</p>\n".repeat(400)}`);
  sources = { base, next, oldExplorer, explorer };
  return sources;
}

/** A dist holding one raster version and an older explorer: what every publish below starts from. */
async function makeBase(dist: string): Promise<void> {
  const { base, oldExplorer } = await useSources();
  await publish({ sources: base, dist, log: () => {}, observations: false, publishedAt: PUBLISHED, explorer: oldExplorer });
}

/** The publish under test: new days, the observation table and a new explorer (every stage writes something). */
async function publishNext(dist: string, onStage?: (stage: string) => void) {
  const { next, explorer } = await useSources();
  return publish({ sources: next, dist, log: () => {}, publishedAt: "2024-06-01T00:00:00Z", explorer, onStage });
}

/** Every file (path, size, sha256) and folder of a dist, sorted: "exactly as it was" is this, equal. */
async function listTree(root: string, dir = root): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const name = relative(root, path);
    if (entry.isDirectory()) out.push(`${name}/`, ...(await listTree(root, path)));
    else out.push(`${name} ${(await stat(path)).size} ${sha256Hex(await readFile(path))}`);
  }
  return out.sort();
}

async function assertVerifies(dist: string, where: string): Promise<string[]> {
  const report = await verifyDist(dist);
  assert.equal(report.problems, [], `${where}: problems`);
  for (const v of report.versions) assert.equal(v.problems, [], `${where}: ${v.id}`);
  return report.unlisted;
}

async function assertServes(dist: string): Promise<void> {
  await withServer(dist, async (served) => {
    const answer = await request(served, "/api/v1/datasets");
    assert.is(answer.status, 200);
  });
}

/** Nothing of a failed or killed publish is left: no journal, backup, temporary file, held lock or unlisted file. */
async function assertClean(dist: string, where: string): Promise<void> {
  const unlisted = await assertVerifies(dist, where);
  assert.equal(unlisted, [], `${where}: files no manifest lists`);
  // the lock file stays between writers, empty while none holds it
  const leftovers = (await listTree(dist)).filter((f) => /\.tmp |\.publish-backup |^\.publish\./.test(f) && !f.startsWith(".publish.lock 0 "));
  assert.equal(leftovers, [], `${where}: leftovers`);
}

// ---------------------------------------------------------------------------------------------------------------

const full = suite("a full disk at every stage (tmpfs)");

/** Bytes in use on the filesystem of `dir`. */
function usedBytes(dir: string): number {
  const fs = statfsSync(dir);
  return (fs.blocks - fs.bfree) * fs.bsize;
}

function freeBytes(dir: string): number {
  const fs = statfsSync(dir);
  return fs.bavail * fs.bsize;
}

full("full disk - ENOSPC at each stage stops the publish naming the stage and the space needed; the dist is exactly as it was, verifies and serves; the next publish succeeds", async () => {
  const mnt = join(WORK, "tmpfs");
  await mkdir(mnt);
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=14m", "tmpfs", mnt], { stdio: "pipe" });
  } catch (err) {
    console.log(`  skipped: cannot mount a 14 MB tmpfs here (${String((err as { stderr?: Buffer }).stderr ?? err).trim()}); the full-disk test needs root`);
    return;
  }
  try {
    const dist = join(mnt, "dist");
    await makeBase(dist);
    const base = await listTree(dist);

    // a publish with room to spare, to learn where on the disk each stage begins (the same bytes every time)
    const probe = join(mnt, "probe");
    await cp(dist, probe, { recursive: true });
    const start = usedBytes(mnt);
    const begins: [string, number][] = [];
    await publishNext(probe, (stage) => begins.push([stage, usedBytes(mnt) - start]));
    await rm(probe, { recursive: true });
    const stages = begins.map(([s]) => s);
    for (const s of ["lock", "journal", "day pieces", "index", "observations", "explorer", "catalog", "manifest", "catalog.json"]) assert.ok(stages.includes(s), `${s} in ${stages}`);

    for (const [i, [stage, at]] of begins.entries()) {
      // room for everything before this stage, and half of what it writes (at least a page short of it); the
      // last stage writes one page (the new catalog.json)
      const size = i + 1 < begins.length ? begins[i + 1][1] - at : 4096;
      const room = at + Math.floor(size / 2 / 4096) * 4096;
      const filler = join(mnt, "filler");
      await writeFile(filler, Buffer.alloc(freeBytes(mnt) - room));
      assert.is(freeBytes(mnt), room, `room before ${stage}`);
      const err = await publishNext(dist).then(() => null, (e) => e);
      assert.ok(err instanceof StoreError, `${stage}: ${err}`);
      assert.is(err.stage, stage, err.message);
      assert.match(err.reason, /^no space left on device: this publish needs about [0-9.]+ [kM]?B in .*; free at least [0-9.]+ [kM]?B more there and publish again$/);
      assert.equal(await listTree(dist), base, `after a full disk in ${stage}: the dist is exactly as it was`);
      await rm(filler);
    }
    await assertVerifies(dist, "after the full disks");
    await assertServes(dist);

    // space freed (the filesystem made larger): the next publish succeeds
    execFileSync("mount", ["-o", "remount,size=200m", mnt]);
    const summary = await publishNext(dist);
    assert.is(summary.added.length, 2);
    await assertClean(dist, "the publish after space was freed");
  } finally {
    execFileSync("umount", [mnt]);
  }
});

full.run();

// ---------------------------------------------------------------------------------------------------------------

const killed = suite("SIGKILL at 20 moments of a publish");

/**
 * A publish in its own process, for the test to kill: prints "started" when the publish begins, "done" at its end.
 * It publishes what publishKilled does in-process (the new days and this release's explorer page).
 */
async function writeChild(): Promise<string> {
  const script = join(WORK, "publish-child.mts");
  await writeFile(
    script,
    `import { publish } from ${JSON.stringify(join(REPO, "pipeline", "publish", "publish.ts"))};
     const [sources, dist] = process.argv.slice(2);
     console.log("started");
     await publish({ sources, dist, log: () => {}, observations: false, publishedAt: "2024-06-01T00:00:00Z", explorer: ${JSON.stringify(sources!.explorer)} });
     console.log("done");`,
  );
  return script;
}

/** The child's publish, in this process (the next publish after a kill). */
async function publishKilled(dist: string) {
  const { next, explorer } = await useSources();
  return publish({ sources: next, dist, log: () => {}, observations: false, publishedAt: "2024-06-01T00:00:00Z", explorer });
}

/** Runs the child publish; kills it `killAfterMs` after it started (null: lets it finish). Returns ms from start to its end. */
function runChild(script: string[], dist: string, killAfterMs: number | null): Promise<{ ms: number; finished: boolean }> {
  return new Promise((resolve, reject) => {
    // node itself (the script built beside the pipeline's built threads, or under tsx as its loader): one process, so
    // the kill reaches the publish (tsx's CLI would relay)
    const child = spawn(process.execPath, [...script, sources!.next, dist], { cwd: REPO, stdio: ["ignore", "pipe", "inherit"] });
    let started = 0;
    let out = "";
    child.stdout.on("data", (chunk) => {
      out += chunk;
      if (!started && out.includes("started")) {
        started = performance.now();
        if (killAfterMs !== null) setTimeout(() => child.kill("SIGKILL"), killAfterMs);
      }
    });
    child.on("error", reject);
    child.on("exit", () => resolve({ ms: performance.now() - started, finished: out.includes("done") }));
  });
}

killed("kill - SIGKILL at 20 moments: the dist verifies and serves after each, and the next publish cleans what the killed one left", async () => {
  await useSources();
  const script = await childArgs(await writeChild(), "pipeline/publish");
  const pristine = join(WORK, "kill-base");
  await makeBase(pristine);
  const probe = join(WORK, "kill-probe");
  await cp(pristine, probe, { recursive: true });
  const { ms: whole, finished } = await runChild(script, probe, null);
  assert.ok(finished, "the publish runs to its end when left alone");
  const outcomes = { committed: 0, undone: 0 };
  for (let i = 0; i < 20; i++) {
    const dist = join(WORK, `kill-${i}`);
    await cp(pristine, dist, { recursive: true });
    const { finished: ran } = await runChild(script, dist, Math.round((whole * (i + 0.5)) / 20));
    const where = `killed at ${i + 1}/20`;
    await assertVerifies(dist, where);
    await assertServes(dist);
    const catalogChanged = (await readFile(join(dist, "catalog.json"), "utf8")) !== (await readFile(join(pristine, "catalog.json"), "utf8"));
    outcomes[catalogChanged || ran ? "committed" : "undone"]++;
    // the next publish cleans first: every fifth time the whole publish, else its first step alone
    if (i % 5 === 4) await publishKilled(dist);
    else await recoverDist(dist);
    await assertClean(dist, `${where}, then ${i % 5 === 4 ? "published again" : "cleaned by the next publish's first step"}`);
    await rm(dist, { recursive: true });
  }
  // the moments span the publish: most kills come before its catalog.json is swapped. How many moves with the
  // machine's load against the timed run: 9 (in make test), 16 and 20 (alone) of 20 on 2026-11-29
  assert.ok(outcomes.undone >= 8, JSON.stringify(outcomes));
});

// the moment between creating the journal and writing its first line: nothing was done, so nothing is undone, and
// the log says so rather than that a catalog was replaced
killed("faults - a journal killed before its first line is an interrupted publish that wrote nothing", async () => {
  const dist = join(WORK, "empty-journal");
  await mkdir(dist, { recursive: true });
  await writeFile(join(dist, JOURNAL_FILE), "");
  assert.is(await recoverJournal(dist, null), "cleaned up after an interrupted publish: 0 files it had written removed");
  assert.is(await stat(join(dist, JOURNAL_FILE)).catch(() => null), null, "the journal is closed");
});

killed.run();
