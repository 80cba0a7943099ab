// make test's runner (test/parallel.ts) over small test files of its own, and the shared fixtures' key and manifest.

import { execFile } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { checkManifest, fixtureKey, listManifest, MANIFEST_FILE, preparedFixtures, removeOthers } from "./support/fixture-cache.js";
import { freshDirs, makeWorkDir } from "./support/helpers.js";
import { runTests } from "./parallel.js";

const ROOT = join(import.meta.dirname, "..");
const UVU = pathToFileURL(join(ROOT, "node_modules/uvu/dist/index.mjs")).href;
const freshDir = freshDirs(makeWorkDir("parallel-test"));
const run = promisify(execFile);

/** A test file of `tests` (name -> body), each marking its start and end in dir/marks/<file> first. */
function testFile(dir: string, file: string, tests: Record<string, string>, tail = ""): void {
  const marks = join(dir, "marks");
  mkdirSync(marks, { recursive: true });
  const body = Object.entries(tests).map(([name, code]) => `t(${JSON.stringify(name)}, async () => { ${code} });`);
  writeFileSync(
    join(dir, file),
    `import { test as t } from ${JSON.stringify(UVU)};
import { appendFileSync } from "node:fs";
const mark = (what) => appendFileSync(${JSON.stringify(join(marks, file))}, what + " " + (performance.timeOrigin + performance.now()) + "\\n");
mark("start");
process.on("exit", () => mark("end"));
${tail}
${body.join("\n")}
t.run();
`,
  );
}

/** [start, end] of a file's process, in ms since the epoch. */
function spanOf(dir: string, file: string): [number, number] {
  const lines = readFileSync(join(dir, "marks", file), "utf8").trim().split("\n");
  return [Number(lines[0].split(" ")[1]), Number(lines[1].split(" ")[1])];
}

const pass = "";
const fail = `throw new Error("this test fails");`;

const runner = suite("test runner");

runner("runner - sums every file's summary; a failed test, a crash at load and an exit code after the summary each count and are named; one last line", async () => {
  const dir = freshDir("tests");
  testFile(dir, "a.test.ts", { one: pass, two: pass });
  testFile(dir, "b.test.ts", { ok: pass, broken: fail });
  testFile(dir, "c.test.ts", {}, `throw new Error("broken at load");`);
  testFile(dir, "d.test.ts", { ok: pass }, `process.on("exit", () => { process.exitCode = 3; });`);
  const cli = await run("node_modules/.bin/tsx", ["test/parallel.ts", "--dir", dir], { cwd: ROOT }).then(
    () => assert.unreachable("the runner should exit non-zero") as never,
    (err: { code: number; stdout: string }) => err,
  );
  assert.is(cli.code, 1);
  const lines = cli.stdout.trimEnd().split("\n");
  assert.is(lines.at(-1), "4 passed, 3 failed");
  assert.equal(lines.filter((l) => /passed, \d+ failed$/.test(l)), ["4 passed, 3 failed"]);
  assert.equal(lines.filter((l) => l.startsWith("FAILED ")), [
    "FAILED b.test.ts: 1 of 2 tests failed",
    "FAILED c.test.ts: crashed before its summary (exit code 1)",
    "FAILED d.test.ts: failed after its summary (exit code 3)",
  ]);
  // each file's output whole, in name order, whatever order they ended in
  const headers = lines.filter((l) => l.startsWith("=== ")).map((l) => l.split(" ")[1]);
  assert.equal(headers, ["a.test.ts", "b.test.ts", "c.test.ts", "d.test.ts"]);
  assert.match(cli.stdout, /=== c\.test\.ts [^\n]*\n[^]*broken at load[^]*\n=== d\.test\.ts/);
  // a line the moment each file ends, numbered in the order they ended, with its result
  const progress = lines.filter((l) => l.startsWith("[")).map((l) => l.replace(/^\[(\d)\/4 +\d+:\d\d\] /, "$1 ").replace(/, [0-9.]+ s$/, ""));
  assert.equal(progress.map((l) => l.slice(0, 1)), ["1", "2", "3", "4"]);
  assert.equal(progress.map((l) => l.slice(2)).sort(), ["a.test.ts: 2 passed", "b.test.ts: 1 of 2 FAILED", "c.test.ts: failed (exit 1)", "d.test.ts: failed (exit 3)"]);
  assert.equal(Object.keys(JSON.parse(readFileSync(join(dir, "durations.json"), "utf8"))).sort(), ["a.test.ts", "b.test.ts", "c.test.ts", "d.test.ts"]);
});

runner("runner - the longest file by the last run's durations starts first, and no more than `jobs` run at once", async () => {
  const dir = freshDir("tests");
  // c ends long before d, so b takes its place well before a takes the next
  const sleeps: Record<string, number> = { a: 0, b: 1500, c: 200, d: 1500 };
  for (const [f, ms] of Object.entries(sleeps)) testFile(dir, `${f}.test.ts`, { sleeps: `await new Promise((r) => setTimeout(r, ${ms}));` });
  const durations = join(dir, "durations.json");
  writeFileSync(durations, JSON.stringify({ "a.test.ts": 1, "b.test.ts": 2, "c.test.ts": 40, "d.test.ts": 3 }));
  const tally = await runTests({ dir, jobs: 2, durationsFile: durations, write: () => {} });
  assert.equal(tally, { passed: 4, failed: 0, notes: [] });
  const spans = Object.fromEntries(["a", "b", "c", "d"].map((f) => [f, spanOf(dir, `${f}.test.ts`)]));
  const byStart = Object.keys(spans).sort((x, y) => spans[x][0] - spans[y][0]);
  assert.equal(byStart.slice(0, 2).sort(), ["c", "d"], "c (40 s last time) and d (3 s) start first");
  assert.equal(byStart.slice(2), ["b", "a"], "then b (2 s), then a, the shortest");
  for (const [f, [start]] of Object.entries(spans)) {
    const running = Object.values(spans).filter(([s, e]) => s <= start && start < e).length;
    assert.ok(running <= 2, `${running} files running when ${f} started`);
  }
});

runner("runner - a file that hangs is stopped at the timeout, its children with it, and counted as failed", async () => {
  const dir = freshDir("tests");
  testFile(dir, "a.test.ts", { ok: pass });
  testFile(dir, "hangs.test.ts", { forever: `await new Promise(() => setInterval(() => {}, 1000));` });
  // long enough for a passing file to load and run on a loaded machine; every second of it holds a slot of make test idle
  const tally = await runTests({ dir, jobs: 2, timeoutSec: 4, durationsFile: null, write: () => {} });
  assert.is(tally.passed, 1);
  assert.is(tally.failed, 1);
  assert.match(tally.notes.join("\n"), /^hangs\.test\.ts: stopped after \d+ s \(a test hangs\?\)$/);
});

runner.run();

const fixtures = suite("shared fixtures");

fixtures("fixtures - the key changes with any input file, and comes back with the same bytes; no prepared folder, none found", () => {
  const root = freshDir("checkout");
  mkdirSync(join(root, "pipeline", "publish"), { recursive: true });
  mkdirSync(join(root, "server"), { recursive: true });
  writeFileSync(join(root, "pipeline", "publish", "publish.ts"), "export const a = 1;\n");
  writeFileSync(join(root, "package-lock.json"), "{}\n");
  writeFileSync(join(root, "server", "app.ts"), "// the server writes no dist\n");
  const first = fixtureKey(root);
  assert.match(first, /^[0-9a-f]{16}$/);
  writeFileSync(join(root, "server", "app.ts"), "// edited\n");
  assert.is(fixtureKey(root), first, "server/ does not shape a dist");
  writeFileSync(join(root, "pipeline", "publish", "publish.ts"), "export const a = 2;\n");
  const second = fixtureKey(root);
  assert.is.not(second, first);
  writeFileSync(join(root, "package-lock.json"), "{ }\n");
  assert.is.not(fixtureKey(root), second);
  writeFileSync(join(root, "pipeline", "publish", "publish.ts"), "export const a = 1;\n");
  writeFileSync(join(root, "package-lock.json"), "{}\n");
  assert.is(fixtureKey(root), first);
  assert.is(preparedFixtures(root), null);
});

fixtures("fixtures - a new key removes older keys and the half-built folders of gone processes, not one a living run builds", async () => {
  const home = freshDir("fixtures-home");
  // a pid no process holds: above any pid_max Linux allows
  for (const name of ["aaaa", "bbbb", "bbbb.tmp-4194305", `cccc.tmp-${process.pid}`]) mkdirSync(join(home, name, "demo"), { recursive: true });
  await removeOthers("aaaa", home);
  assert.equal(readdirSync(home).sort(), ["aaaa", `cccc.tmp-${process.pid}`]);
});

fixtures("fixtures - the manifest names every file a test changed, added or removed in a prepared folder", async () => {
  const folder = freshDir("prepared");
  mkdirSync(join(folder, "demo", "dist"), { recursive: true });
  writeFileSync(join(folder, "demo", "dist", "catalog.json"), "{}\n");
  writeFileSync(join(folder, "demo", "dist", "a.json"), "[1]\n");
  writeFileSync(join(folder, MANIFEST_FILE), JSON.stringify(await listManifest(folder)));
  assert.equal(await checkManifest(folder), []);
  const copy = freshDir("copy");
  cpSync(folder, copy, { recursive: true });
  assert.equal(await checkManifest(copy), [], "a copy is as good");
  writeFileSync(join(copy, "demo", "dist", "catalog.json"), "{ }\n");
  writeFileSync(join(copy, "demo", "dist", "new.json"), "[]\n");
  rmSync(join(copy, "demo", "dist", "a.json"));
  assert.equal(await checkManifest(copy), ["demo/dist/a.json: removed", "demo/dist/catalog.json: changed", "demo/dist/new.json: added"]);
  rmSync(join(copy, MANIFEST_FILE));
  assert.equal(await checkManifest(copy), ["manifest.json: missing or unreadable"]);
});

fixtures.run();
