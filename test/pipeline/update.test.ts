// make update over ten nights against a stand-in for SILO's bucket that rewrites its files in place (test/support/silo-bucket.ts),
// run as a maintainer's cron runs it (make, in a checkout of its own): after every night the newest version's cells,
// read through the server's series route over HTTP, equal GDAL's reading of the bucket's files; only new and rewritten
// files are downloaded, the rest cost a 304; a file rewritten with the same cells makes no version; a night killed with
// SIGKILL while it fetches, or between two moves into the sources folder, leaves the dist verifying and serving and
// nothing half published, and the next night catches up; a night whose bucket fails part of one variable's period
// publishes the others, names it, exits non-zero, and the next night catches up; so does one whose rewritten file the
// publish refuses. Then make publish VARIABLES=, and (in process, with a short stall watch) a file that never comes.

import { execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { dateToDayNumber, dayNumberToDate, listDates } from "../../format/dates.js";
import type { Window } from "../../format/grid.js";
import { sha256Hex } from "../../format/hash.js";
import { findVariable, MAX_TEMP, type Variable, VARIABLES } from "../../format/variables.js";
import { describeUpdate, update } from "../../pipeline/commands/update.js";
import { REPO } from "../docs/doc-blocks.js";
import { makeCheckout, READER_ENV } from "../docs/doc-run.js";
import { freshDirs, makeWorkDir } from "../support/helpers.js";
import { withServer } from "../support/server-fixture.js";
import { type Patch, type SiloBucket, startSiloBucket } from "../support/silo-bucket.js";

const fresh = freshDirs(makeWorkDir("update"));
const checkout = makeCheckout(fresh("checkout"));
/** 8 x 8 cells around Alice Springs: 64 places, one series call per variable */
const WINDOW: Window = [436, 272, 8, 8];
const [COL0, ROW0, WIDTH, HEIGHT] = WINDOW;
const SOURCES = fresh("silo");
const DIST = fresh("dist");
const DAILY_RAIN = findVariable("daily_rain")!;
const BOTH = [MAX_TEMP, DAILY_RAIN];
/** two local patches of a few cells, one up and one down (rain stays above 0: the bucket's values are 21..44) */
const PATCHES: Patch[] = [
  { col: 437, row: 273, width: 2, height: 2, delta: 1.5 },
  { col: 440, row: 276, width: 3, height: 2, delta: -2.3 },
];
let bucket: SiloBucket;

const addDays = (date: string, days: number) => dayNumberToDate(dateToDayNumber(date) + days);
const D1 = "2026-11-20";
const [D2, D3, D4, D5] = [1, 2, 3, 4].map((n) => addDays(D1, n));

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** make with the reader's environment and the bucket's address, in the checkout; its exit code however it ends. */
async function runMake(args: string[]): Promise<Ran> {
  try {
    const { stdout, stderr } = await promisify(execFile)("make", args, { cwd: checkout, env: { ...READER_ENV, SILO_BASE_URL: bucket.dailyBaseUrl }, maxBuffer: 64 << 20, timeout: 300_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as Error & { code?: number; stdout?: string; stderr?: string };
    if (typeof e.code !== "number") throw err;
    return { code: e.code, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

/** The night's make update of both variables, SILO's own revision windows. */
const runNight = (to: string, ...more: string[]) => runMake(["update", `TO=${to}`, "VARIABLES=max_temp,daily_rain", `SOURCES=${SOURCES}`, `DIST=${DIST}`, ...more]);

/** A variable's row of the night's summary: the dates asked for, and new, revised, unchanged and failed files. */
function readRow(stdout: string, variable: Variable): [string, number, number, number, number] {
  const line = stdout.split("\n").find((l) => l.startsWith(`  ${variable.silo} `));
  assert.ok(line, `no row for ${variable.silo} in:\n${stdout}`);
  const [, period, ...counts] = line!.trim().split(/\s+/);
  return [period, ...counts.slice(0, 4).map(Number)] as [string, number, number, number, number];
}

/** The answers the bucket gave since `from`, as "status path" lines of daily files, sorted. */
function answersSince(from: number): string[] {
  return bucket.answers.slice(from).map((a) => `${a.status} ${a.path}`).sort();
}

/** What the night should have cost: a 200 for each changed path, a conditional 304 for every other file of the periods. */
function expectAnswers(to: string, changed: string[]): string[] {
  const asked = BOTH.flatMap((v) => listDates(addDays(to, 1 - v.revisionDays), to).map((date) => bucket.dailyPath(v.silo, date)));
  return asked.map((path) => `${changed.includes(path) ? 200 : 304} ${path}`).sort();
}

/** Each dataset's newest version in the dist's catalog: its id and period. */
function newestVersions(): Record<string, string> {
  const catalog = JSON.parse(readFileSync(join(DIST, "catalog.json"), "utf8"));
  const newest: Record<string, string> = {};
  for (const c of catalog.candidates) newest[c.record.dataset_key] ??= `${c.coverage.first}..${c.coverage.last} ${c.id}`;
  return { tmax: newest["silo-tmax"], rain: newest["silo-rain"] };
}

/** The bucket's cells of daily files as GDAL reads them: row-major over the window, float32 values as doubles. */
async function readBucketCells(paths: string[]): Promise<number[][]> {
  const files = await Promise.all(paths.map((p) => bucket.fileOf(p)));
  const script = [
    "import json, sys",
    "from osgeo import gdal",
    "out = []",
    "for f in sys.argv[1:]:",
    "    ds = gdal.Open(f)",
    "    gt = ds.GetGeoTransform()",
    "    out.append({'west': gt[0], 'north': gt[3], 'values': ds.GetRasterBand(1).ReadAsArray().astype(float).ravel().tolist()})",
    "print(json.dumps(out))",
  ].join("\n");
  const { stdout } = await promisify(execFile)("/usr/bin/python3", ["-c", script, ...files], { maxBuffer: 64 << 20 });
  const read = JSON.parse(stdout) as { west: number; north: number; values: number[] }[];
  for (const r of read) assert.equal([Math.round((r.west - 111.975) / 0.05), Math.round((-9.975 - r.north) / 0.05), r.values.length], [COL0, ROW0, WIDTH * HEIGHT]);
  return read.map((r) => r.values);
}

/** The newest version's cells of the window on `dates`, through the server's series route (CSV) over HTTP, row-major per date. */
async function readServedCells(variable: Variable, dates: string[]): Promise<{ cells: Map<string, number[]>; version: string }> {
  const places = Array.from({ length: WIDTH * HEIGHT }, (_, i) => [COL0 + (i % WIDTH), ROW0 + Math.floor(i / WIDTH)]);
  const lat = places.map(([, row]) => (-10 - row * 0.05).toFixed(2)).join(",");
  const lon = places.map(([col]) => (112 + col * 0.05).toFixed(2)).join(",");
  const sorted = [...dates].sort();
  const query = `lat=${lat}&lon=${lon}&variables=${variable.silo}&start=${sorted[0]}&end=${sorted.at(-1)}`;
  return withServer(DIST, async (served) => {
    const answer = await fetch(`${served.url}/api/v1/series?${query}`);
    const text = await answer.text();
    assert.is(answer.status, 200, text);
    const cells = new Map(dates.map((d) => [d, new Array<number>(WIDTH * HEIGHT).fill(NaN)]));
    for (const line of text.trim().split("\n").slice(1)) {
      const [lon, lat, date, value] = line.split(",");
      const i = (Math.round((-10 - Number(lat)) / 0.05) - ROW0) * WIDTH + (Math.round((Number(lon) - 112) / 0.05) - COL0);
      cells.get(date)?.splice(i, 1, Math.fround(Number(value)));
    }
    return { cells, version: answer.headers.get("service-dataset-version") ?? "" };
  });
}

/** After a night: the newest version of each variable answers the bucket's cells on `dates`, every cell, exactly. */
async function assertServedIsBucket(datesOf: Map<Variable, string[]>): Promise<void> {
  for (const [variable, dates] of datesOf) {
    const bucketCells = await readBucketCells(dates.map((d) => bucket.dailyPath(variable.silo, d)));
    const { cells, version } = await readServedCells(variable, dates);
    assert.is(version, newestVersions()[variable === MAX_TEMP ? "tmax" : "rain"].split(" ")[1]);
    dates.forEach((date, i) => assert.equal(cells.get(date), bucketCells[i].map(Math.fround), `${variable.silo} ${date}`));
  }
}

/** A patch cell's value as served: the revision is there, not the first draft. */
async function readPatchCell(variable: Variable, date: string): Promise<number> {
  const { cells } = await readServedCells(variable, [date]);
  return cells.get(date)![(PATCHES[0].row - ROW0) * WIDTH + (PATCHES[0].col - COL0)];
}

/** sha256 of each file of the sources folder outside its staging folder, and of silo.lock.json: "exactly as it was" is this, equal. */
function listSources(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirRecursive(SOURCES)) if (!entry.startsWith(".update/") && !entry.startsWith(".sources.lock")) out[entry] = sha256Hex(readFileSync(join(SOURCES, entry)));
  return out;
}

function readdirRecursive(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length + 1)).sort();
}

const nights = suite("make update, night after night");
nights.before(async () => {
  bucket = await startSiloBucket(fresh("bucket"), WINDOW);
});
nights.after(() => bucket.close());

nights("update - night 1, an empty folder: each variable's revision window (190 days, rain 366) fetched and published, and how to backfill said", async () => {
  bucket.lastDate = D1;
  const from = bucket.answers.length;
  const night = await runNight(D1);
  assert.is(night.code, 0, night.stderr);
  assert.equal(readRow(night.stdout, MAX_TEMP), [`${addDays(D1, -189)}..${D1}`, 190, 0, 0, 0]);
  assert.equal(readRow(night.stdout, DAILY_RAIN), [`${addDays(D1, -365)}..${D1}`, 366, 0, 0, 0]);
  assert.match(night.stdout, `the folder held no max_temp file, so only its revision window from ${addDays(D1, -189)} was fetched; backfill the days before it with make fetch YEARS=1889-2025 VARIABLES=max_temp SOURCES=${SOURCES} and make fetch FROM=2026-01-01 TO=${addDays(D1, -190)} VARIABLES=max_temp SOURCES=${SOURCES}`);
  assert.match(night.stdout, /^update of .* to 2026-11-20: 556 files downloaded \(/m);
  assert.match(night.stdout, /^ {2}published 3 versions into .*: silo-tmax-20260515-20261120-\w+, silo-rain-20251120-20261120-\w+, noaa-weather-/m);
  assert.equal(answersSince(from), expectAnswers(D1, expectAnswers(D1, []).map((answer) => answer.replace(/^304 /, ""))));
  assert.ok(bucket.answers.slice(from).every((a) => !a.conditional));
  assert.equal(newestVersions().tmax.split(" ")[0], `${addDays(D1, -189)}..${D1}`);
  await assertServedIsBucket(new Map([[MAX_TEMP, [addDays(D1, -189), D1]], [DAILY_RAIN, [addDays(D1, -365), D1]]]));
});

nights("update - night 2: a new day, 3 temperature and 6 rain days rewritten in place, one rewritten with the same cells; only those downloaded, the rest a 304; the newest version is the bucket's", async () => {
  bucket.lastDate = D2;
  const tmax = [10, 45, 80].map((n) => addDays(D2, -n));
  const rain = [5, 60, 120, 200, 300, 360].map((n) => addDays(D2, -n));
  for (const date of tmax) await bucket.revise("max_temp", date, PATCHES);
  for (const date of rain) await bucket.revise("daily_rain", date, PATCHES);
  await bucket.rewriteSame("max_temp", addDays(D2, -30));
  const before = await readPatchCell(MAX_TEMP, tmax[0]);
  const from = bucket.answers.length;
  const night = await runNight(D2);
  assert.is(night.code, 0, night.stderr);
  assert.equal(readRow(night.stdout, MAX_TEMP), [`${addDays(D2, -189)}..${D2}`, 1, 4, 185, 0]);
  assert.equal(readRow(night.stdout, DAILY_RAIN), [`${addDays(D2, -365)}..${D2}`, 1, 6, 359, 0]);
  assert.match(night.stdout, /^update of .*: 12 files downloaded \(/m);
  const changed = [...[...tmax, addDays(D2, -30), D2].map((d) => bucket.dailyPath("max_temp", d)), ...[...rain, D2].map((d) => bucket.dailyPath("daily_rain", d))];
  assert.equal(answersSince(from), expectAnswers(D2, changed));
  assert.equal(bucket.answers.slice(from).filter((a) => a.status === 304 && !a.conditional), []);
  await assertServedIsBucket(new Map([[MAX_TEMP, [...tmax, addDays(D2, -30), D2]], [DAILY_RAIN, [...rain, D2]]]));
  assert.is(await readPatchCell(MAX_TEMP, tmax[0]), Math.fround(before + 1.5));
});

nights("update - night 3: a file rewritten with the same cells is downloaded and makes no new version (nothing is written)", async () => {
  await bucket.rewriteSame("daily_rain", addDays(D2, -60));
  const catalog = await readFile(join(DIST, "catalog.json"));
  const from = bucket.answers.length;
  const night = await runNight(D2);
  assert.is(night.code, 0, night.stderr);
  assert.equal(readRow(night.stdout, DAILY_RAIN), [`${addDays(D2, -365)}..${D2}`, 0, 1, 365, 0]);
  assert.equal(readRow(night.stdout, MAX_TEMP), [`${addDays(D2, -189)}..${D2}`, 0, 0, 190, 0]);
  assert.match(night.stdout, /^ {2}nothing new to publish: .* already holds silo-tmax-.*, silo-rain-/m);
  assert.equal(answersSince(from), expectAnswers(D2, [bucket.dailyPath("daily_rain", addDays(D2, -60))]));
  assert.ok((await readFile(join(DIST, "catalog.json"))).equals(catalog), "catalog.json is as it was");
});

/** make update started in a process group of its own, to be killed whole (make and node). */
function startNight(to: string): { exited: Promise<number | null>; kill: () => void; output: () => string } {
  const child = spawn("make", ["update", `TO=${to}`, "VARIABLES=max_temp,daily_rain", `SOURCES=${SOURCES}`, `DIST=${DIST}`], {
    cwd: checkout,
    env: { ...READER_ENV, SILO_BASE_URL: bucket.dailyBaseUrl },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  return { exited: new Promise((done) => child.once("exit", (code) => done(code))), kill: () => process.kill(-child.pid!, "SIGKILL"), output: () => output };
}

const waitFor = async (what: string, ok: () => boolean, ms = 120_000) => {
  for (const until = Date.now() + ms; !ok(); await new Promise((r) => setTimeout(r, 50))) if (Date.now() > until) assert.unreachable(`timed out waiting for ${what}`);
};

nights("update - night 4 killed with SIGKILL halfway through its fetch: the folder is as it was, the dist verifies and serves the last night's cells, a publish finds nothing new; a second update meanwhile refused", async () => {
  bucket.lastDate = D3;
  const revised = [[MAX_TEMP, addDays(D3, -3)], [DAILY_RAIN, addDays(D3, -7)]] as const;
  for (const [v, date] of revised) await bucket.revise(v.silo, date, PATCHES);
  const stalled = bucket.dailyPath("daily_rain", addDays(D3, -100));
  bucket.failures.set(stalled, { kind: "stall" });
  const sources = listSources();
  const catalog = await readFile(join(DIST, "catalog.json"));
  const before = await readPatchCell(DAILY_RAIN, revised[1][1]);
  const from = bucket.answers.length;
  const night = startNight(D3);
  try {
    // every file of the night answered but the stalled one: the four changed files are downloaded, staged, not moved
    await waitFor("the night's answers", () => bucket.answers.length - from === 555);
    const second = await runNight(D3, "LOCK_WAIT=0");
    assert.is(second.code, 2);
    assert.match(second.stderr, new RegExp(`^error: ${SOURCES}/\\.sources\\.lock: another update \\(pid \\d+ on host .*\\) is writing this sources folder; waited 0 s for it \\(LOCK_WAIT\\)\\. Run make update again once it has finished, or give LOCK_WAIT more seconds \\[lock\\]$`, "m"));
  } finally {
    night.kill();
  }
  assert.is(await night.exited, null);
  assert.equal(answersSince(from).filter((a) => a.startsWith("200 ")), [...revised.map(([v, d]) => bucket.dailyPath(v.silo, d)), ...BOTH.map((v) => bucket.dailyPath(v.silo, D3))].map((p) => `200 ${p}`).sort());
  assert.equal(listSources(), sources, "nothing of the killed night is in the folder");
  assert.ok(existsSync(join(SOURCES, ".update", "daily_rain", D3.slice(0, 4), `${D3.replaceAll("-", "")}.daily_rain.tif`)), "the night's downloads wait in its staging folder");
  const verified = await runMake(["verify", `DIST=${DIST}`]);
  assert.is(verified.code, 0, verified.stderr);
  assert.match(verified.stdout, /: all verified$/m);
  assert.is(await readPatchCell(DAILY_RAIN, revised[1][1]), before);
  const published = await runMake(["publish", `SOURCES=${SOURCES}`, `DIST=${DIST}`]);
  assert.is(published.code, 0, published.stderr);
  assert.match(published.stdout, /^nothing to publish: /m);
  assert.ok((await readFile(join(DIST, "catalog.json"))).equals(catalog));
});

nights("update - night 5 after the kill: the staged downloads are dropped, asked for again, and the night published whole", async () => {
  bucket.failures.clear();
  const from = bucket.answers.length;
  const night = await runNight(D3);
  assert.is(night.code, 0, night.stderr);
  assert.match(night.stderr, /^max_temp: removed the downloads of an update stopped before its fetch completed \(asked for again tonight\)$/m);
  assert.match(night.stderr, /^daily_rain: removed the downloads of an update stopped before its fetch completed/m);
  assert.equal(readRow(night.stdout, MAX_TEMP).slice(1), [1, 1, 188, 0]);
  assert.equal(readRow(night.stdout, DAILY_RAIN).slice(1), [1, 1, 364, 0]);
  const changed = [bucket.dailyPath("max_temp", addDays(D3, -3)), bucket.dailyPath("daily_rain", addDays(D3, -7)), ...BOTH.map((v) => bucket.dailyPath(v.silo, D3))];
  assert.equal(answersSince(from), expectAnswers(D3, changed));
  assert.not.ok(existsSync(join(SOURCES, ".update")));
  await assertServedIsBucket(new Map([[MAX_TEMP, [addDays(D3, -3), D3]], [DAILY_RAIN, [addDays(D3, -7), D3]]]));
});

/** A script running the night's update in one process that SIGKILLs itself at its `killAt`th move into the sources folder. */
async function writeKillingUpdate(): Promise<string> {
  const dir = fresh("child");
  mkdirSync(dir);
  // .mts: an ES module wherever it lies (top-level await)
  const script = join(dir, "update-killed-mid-move.mts");
  await writeFile(
    script,
    `import { update } from ${JSON.stringify(join(REPO, "pipeline", "commands", "update.ts"))};
     import { parseVariables } from ${JSON.stringify(join(REPO, "pipeline", "ingest", "fetch.ts"))};
     const [to, sources, dist, killAt] = process.argv.slice(2);
     let moves = 0;
     const quiet = { line: () => {}, status: () => {}, done: () => {} };
     await update({ to, sources, dist, variables: parseVariables("max_temp,daily_rain"), progress: quiet, onMove: () => ++moves === Number(killAt) && process.kill(process.pid, "SIGKILL") });`,
  );
  return script;
}

nights("update - night 6 killed between two moves into the folder: make publish refuses the half-moved variable, and the next update finishes the moves and publishes", async () => {
  bucket.lastDate = D4;
  for (const date of [addDays(D4, -2), addDays(D4, -3)]) await bucket.revise("daily_rain", date, PATCHES);
  await bucket.revise("max_temp", addDays(D4, -4), PATCHES);
  const catalog = await readFile(join(DIST, "catalog.json"));
  const script = await writeKillingUpdate();
  // max_temp's two moves (its new day, then its rewritten day), then rain's new day and the first of its two rewritten
  // days: killed after the fourth move, before its last
  const child = spawn(process.execPath, ["--import", "tsx", script, D4, SOURCES, DIST, "4"], { cwd: REPO, env: { ...process.env, SILO_BASE_URL: bucket.dailyBaseUrl }, stdio: "inherit" });
  const signal = await new Promise((done) => child.once("exit", (_code, sig) => done(sig)));
  assert.is(signal, "SIGKILL");
  assert.ok(existsSync(join(SOURCES, ".update", "daily_rain", "commit.json")), "rain's commit waits to be finished");
  const refused = await runMake(["publish", `SOURCES=${SOURCES}`, `DIST=${DIST}`]);
  assert.is(refused.code, 2);
  assert.match(refused.stderr, new RegExp(`^error: ${D4.slice(0, 4)}/${addDays(D4, -2).replaceAll("-", "")}\\.daily_rain\\.tif: sha256 \\w+ differs from silo\\.lock\\.json \\(\\w+\\); the file changed after it was written \\[provenance\\]$`, "m"));
  assert.ok((await readFile(join(DIST, "catalog.json"))).equals(catalog), "nothing published");
  const from = bucket.answers.length;
  const night = await runNight(D4);
  assert.is(night.code, 0, night.stderr);
  assert.match(night.stderr, /^daily_rain: finished moving the 3 files of an update stopped while moving them$/m);
  assert.equal(bucket.answers.slice(from).filter((a) => a.status !== 304), [], "everything was fetched by the killed night");
  assert.equal([readRow(night.stdout, MAX_TEMP).slice(1), readRow(night.stdout, DAILY_RAIN).slice(1)], [[0, 0, 190, 0], [0, 0, 366, 0]]);
  assert.match(night.stdout, /^ {2}published 2 versions into /m);
  await assertServedIsBucket(new Map([[MAX_TEMP, [addDays(D4, -4), D4]], [DAILY_RAIN, [addDays(D4, -3), addDays(D4, -2), D4]]]));
});

nights("update - night 7, the bucket failing part of rain's period: temperature is published, rain is named and left as it was, the exit is non-zero", async () => {
  bucket.lastDate = D5;
  await bucket.revise("max_temp", addDays(D5, -5), PATCHES);
  await bucket.revise("daily_rain", addDays(D5, -9), PATCHES);
  const failing = bucket.dailyPath("daily_rain", addDays(D5, -30));
  // retried at once: the backoff between attempts is download.test's; this night is about what follows them
  bucket.failures.set(failing, { kind: "503", retryAfterS: 0 });
  const rainBefore = newestVersions().rain;
  const lock = await readFile(join(SOURCES, "silo.lock.json"), "utf8");
  const rainFile = join(SOURCES, D5.slice(0, 4), `${addDays(D5, -9).replaceAll("-", "")}.daily_rain.tif`);
  const rainBytes = await readFile(rainFile);
  const night = await runNight(D5);
  assert.is(night.code, 2);
  assert.equal(readRow(night.stdout, MAX_TEMP).slice(1), [1, 1, 188, 0]);
  assert.equal(readRow(night.stdout, DAILY_RAIN).slice(1), [1, 1, 363, 1]);
  assert.match(night.stdout, `  daily_rain  ${addDays(D5, -365)}..${D5}    1        1        363       1  not published tonight: 1 of its 366 files failed to download\n      daily_rain ${addDays(D5, -30)} ${bucket.dailyBaseUrl}${failing.slice("/daily".length)}: 503 Service Unavailable after 5 attempts\n`);
  assert.match(night.stdout, /^ {2}published 1 version into .*: silo-tmax-\d+-20261124-\w+$/m);
  assert.match(night.stderr, `error: ${SOURCES}: daily_rain not published tonight: 1 of its 366 files failed to download; the dist keeps its last version, and the next make update catches up [update]`);
  assert.equal(bucket.answers.filter((a) => a.path === failing).map((a) => a.status), [200, 304, 304, 304, 304, 304, 304, 503, 503, 503, 503, 503]);
  const newest = newestVersions();
  assert.equal([newest.tmax.split(" ")[0].slice(-10), newest.rain], [D5, rainBefore]);
  // nothing of rain's night is in the folder: its lock entries, its rewritten file, no new day
  assert.equal(JSON.parse(await readFile(join(SOURCES, "silo.lock.json"), "utf8")).files.filter((f: { path: string }) => f.path.includes("daily_rain")), JSON.parse(lock).files.filter((f: { path: string }) => f.path.includes("daily_rain")));
  assert.ok((await readFile(rainFile)).equals(rainBytes));
  assert.not.ok(existsSync(join(SOURCES, D5.slice(0, 4), `${D5.replaceAll("-", "")}.daily_rain.tif`)));
  assert.not.ok(existsSync(join(SOURCES, ".update")));
  await assertServedIsBucket(new Map([[MAX_TEMP, [addDays(D5, -5), D5]]]));
});

nights("update - night 8, the bucket well again: rain catches up (its two changed files downloaded), temperature costs 304s only", async () => {
  bucket.failures.clear();
  const from = bucket.answers.length;
  const night = await runNight(D5);
  assert.is(night.code, 0, night.stderr);
  assert.equal(answersSince(from).filter((a) => a.startsWith("200 ")), [`200 ${bucket.dailyPath("daily_rain", addDays(D5, -9))}`, `200 ${bucket.dailyPath("daily_rain", D5)}`]);
  assert.equal(answersSince(from).length, 556);
  assert.match(night.stdout, /^ {2}published 1 version into .*: silo-rain-20251120-20261124-\w+$/m);
  await assertServedIsBucket(new Map([[DAILY_RAIN, [addDays(D5, -30), addDays(D5, -9), D5]], [MAX_TEMP, [addDays(D5, -5)]]]));
  const verified = await runMake(["verify", `DIST=${DIST}`]);
  assert.is(verified.code, 0, verified.stderr);
});

nights("update - nights 9 and 10: a rewritten rain file the publish refuses (a value past the plausible range) stops rain alone, named with its file and cell; SILO's next rewrite is taken", async () => {
  const D6 = addDays(D5, 1);
  bucket.lastDate = D6;
  const bad = addDays(D6, -12);
  await bucket.revise("daily_rain", bad, [{ col: COL0, row: ROW0, width: 1, height: 1, delta: 1600 }]);
  const rainBefore = newestVersions().rain;
  const night = await runNight(D6);
  assert.is(night.code, 2);
  assert.match(night.stderr, /^daily_rain: the publish refused one of its files; publishing the other variables without it$/m);
  const file = `${D6.slice(0, 4)}/${bad.replaceAll("-", "")}.daily_rain.tif`;
  assert.match(night.stderr, new RegExp(`^error: ${SOURCES}: daily_rain not published tonight: the publish refused its files: ${SOURCES}/${file}: value 16\\d\\d(\\.\\d+)? at cell \\(col ${COL0}, row ${ROW0}; lon [\\d.]+, lat -[\\d.]+\\) is outside the plausible range 0\\.\\.1500; check the source file and the variable it holds \\[decode\\]; the dist keeps its last version, and the next make update catches up \\[update\\]$`, "m"));
  assert.match(night.stdout, /^ {2}published 1 version into .*: silo-tmax-\d+-20261125-\w+$/m);
  assert.is(newestVersions().rain, rainBefore);
  // SILO corrects its file the next night: rain is revised again, and published
  await bucket.revise("daily_rain", bad, [{ col: COL0, row: ROW0, width: 1, height: 1, delta: -1600 }]);
  const from = bucket.answers.length;
  const next = await runNight(D6);
  assert.is(next.code, 0, next.stderr);
  assert.equal(answersSince(from).filter((a) => a.startsWith("200 ")), [`200 ${bucket.dailyPath("daily_rain", bad)}`]);
  assert.match(next.stdout, /^ {2}published 1 version into .*: silo-rain-20251120-20261125-\w+$/m);
  await assertServedIsBucket(new Map([[DAILY_RAIN, [bad, D6]]]));
});

nights("update - make publish VARIABLES= publishes only those variables of the folder, and refuses one it holds none of; make update passes EXTEND and PREFER on", async () => {
  const dist = fresh("dist-rain");
  const rain = await runMake(["publish", `SOURCES=${SOURCES}`, `DIST=${dist}`, "VARIABLES=daily_rain"]);
  assert.is(rain.code, 0, rain.stderr);
  const keys = JSON.parse(readFileSync(join(dist, "catalog.json"), "utf8")).candidates.map((c: { record: { dataset_key: string } }) => c.record.dataset_key).sort();
  assert.equal(keys, ["silo-rain"]);
  const vp = await runMake(["publish", `SOURCES=${SOURCES}`, `DIST=${dist}`, "VARIABLES=vp,max_temp"]);
  assert.is(vp.code, 2);
  assert.match(vp.stderr, `error: ${SOURCES}: holds no files of vp (it holds max_temp, daily_rain); fetch them first, or leave them out of VARIABLES [discover]`);
  const dry = await runMake(["-n", "update", "TO=2026-11-25", "EXTEND=1", "PREFER=daily", "REVISION_DAYS=30"]);
  assert.is(dry.stdout.replace(/\\\n\s*/g, " ").replace(/\s+/g, " ").trim(), 'node build/cli.js update --to "2026-11-25" --revision-days "30" --extend --prefer "daily"');
});

nights.run();

// ---------------------------------------------------------------------------------------------------------------

const stalls = suite("update - a bucket that stalls");

stalls("update - a file whose answer never comes fails its variable once the stall watch gives up; the other variable is published", async () => {
  const own = await startSiloBucket(fresh("stalling-bucket"), WINDOW);
  try {
    own.lastDate = "2026-03-10";
    own.failures.set(own.dailyPath("max_temp", "2026-03-09"), { kind: "stall" });
    const sources = fresh("stalling-silo");
    const summary = await update({
      to: "2026-03-10", variables: BOTH, sources, dist: fresh("stalling-dist"), revisionDays: 3, baseUrl: own.dailyBaseUrl,
      tuning: { stallMs: 300, retries: 1, backoffMs: 5 }, progress: { line: () => {}, status: () => {}, done: () => {} }, publish: { observations: false, explorer: false },
    });
    const [tmax, rain] = summary.nights;
    assert.equal([tmax.failures.map((f) => [f.item.key, f.reason]), tmax.added.length, tmax.failed], [[["max_temp 2026-03-09", "stalled: no response for 0.3 s after 2 attempts"]], 2, "1 of its 3 files failed to download"]);
    assert.equal([rain.failed, rain.added.length], [null, 3]);
    assert.equal(summary.published!.added.map((d) => d.id.split("-").slice(0, 4).join("-")), ["silo-rain-20260308-20260310"]);
    assert.equal(readdirRecursive(sources).filter((f) => f.endsWith(".tif")), ["2026/20260308.daily_rain.tif", "2026/20260309.daily_rain.tif", "2026/20260310.daily_rain.tif"]);
    assert.equal(describeUpdate(summary).errors, [`${sources}: max_temp not published tonight: 1 of its 3 files failed to download; the dist keeps its last version, and the next make update catches up [update]`]);
  } finally {
    await own.close();
  }
});

stalls.run();

// ---------------------------------------------------------------------------------------------------------------

const settings = suite("update - settings");

settings("update - TO, REVISION_DAYS and VARIABLES are checked before anything is asked; REVISION_DAYS=0 of an empty folder fetches and publishes nothing, and says how to backfill", async () => {
  const own = await startSiloBucket(fresh("quiet-bucket"), WINDOW);
  try {
    const quiet = { line: () => {}, status: () => {}, done: () => {} };
    const base = { sources: fresh("quiet-silo"), dist: fresh("quiet-dist"), baseUrl: own.dailyBaseUrl, progress: quiet };
    const refusals: [Partial<Parameters<typeof update>[0]>, string][] = [
      [{ to: "2026-02-30" }, `TO: "2026-02-30" is not a calendar date; give YYYY-MM-DD [update]`],
      [{ to: "2026-03-01", revisionDays: -1 }, "REVISION_DAYS: -1 is not a whole number of days >= 0; leave it out for SILO's own revision windows [update]"],
      [{ to: "2026-03-01", variables: [] }, `VARIABLES: none given; give some of ${VARIABLES.map((v) => v.silo).join(", ")}, or leave it out for all of them [update]`],
    ];
    for (const [given, message] of refusals) {
      const err = await update({ ...base, to: "", ...given }).then(() => null, (e: Error) => e);
      assert.is(err?.message, message);
    }
    const summary = await update({ ...base, to: "2026-03-01", variables: [DAILY_RAIN], revisionDays: 0 });
    assert.equal([own.requests, summary.nights[0].first, summary.published, summary.publishError], [[], null, null, null]);
    const { lines, errors } = describeUpdate(summary);
    assert.equal(errors, []);
    assert.equal(lines.slice(2, 4).map((l) => l.trim()), [
      "daily_rain  none                      0        0          0       0",
      `the folder held no daily_rain file, so only its revision window from 2026-03-02 was fetched; backfill the days before it with make fetch YEARS=1889-2025 VARIABLES=daily_rain SOURCES=${base.sources} and make fetch FROM=2026-01-01 TO=2026-03-01 VARIABLES=daily_rain SOURCES=${base.sources}; the next make update publishes them`,
    ]);
    assert.is(lines[4], "  nothing to publish: the folder holds no file of daily_rain");
  } finally {
    await own.close();
  }
});

settings("update - SILO's revision windows: 366 days for daily_rain, 190 for the four others (docs/publishing.md's table)", () => {
  assert.equal(["max_temp", "min_temp", "daily_rain", "radiation", "vp"].map((v) => findVariable(v)!.revisionDays), [190, 190, 366, 190, 190]);
  const table = readFileSync(join(REPO, "docs", "publishing.md"), "utf8");
  assert.ok(table.includes("| `daily_rain` | 366 days") && table.includes("| `max_temp`, `min_temp`, `radiation`, `vp` | 190 days"));
});

settings.run();
