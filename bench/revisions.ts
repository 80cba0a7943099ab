// The revision season (issue 32, docs/contract.md §5): SILO rewrites recent days every night. A full-grid year of max_temp and
// daily_rain, then 30 nights of `make update` (a new process each) against a stand-in bucket served by nginx (ETag,
// Last-Modified, 304): each night adds a day, rewrites 3 max_temp days of the last 90 and 6 daily_rain days of the
// last 365 (two patches of 300 cells each) and rewrites one file with the same cells. The baseline: the same nights
// with no rewrite, in the same run. Every revised day's cells are checked against GDAL's reading of the bucket, a
// version pinned after the first night answers byte for byte after every night and after make prune, and the pruned
// dist is weighed against one publish of the final files. Then one revision night onto a 365-day and a 20,000-day
// archive of a 64 x 64 window: what it costs must not grow with the archive.

import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdir, rename, rm, symlink } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { canonicalizeMissing } from "../format/cells.js";
import { dateToDayNumber, dayNumberToDate } from "../format/dates.js";
import type { Window } from "../format/grid.js";
import { sha256Hex } from "../format/hash.js";
import { MAX_TEMP, type Variable, findVariable } from "../format/variables.js";
import { type RasterView, openVersion } from "../format/versions.js";
import { readSiloTiff, writeSiloTiff } from "../pipeline/ingest/geotiff.js";
import { prune } from "../pipeline/commands/prune.js";
import { readPublished } from "../pipeline/store/catalog.js";
import { formatBytes } from "../pipeline/progress.js";
import { dateToMemberPath } from "../sources/silo.js";
import { type Nginx, startNginx } from "../test/support/nginx.js";
import { startServer } from "./load.js";
import { listDays, makeFullGridDays, makeSiloLikeWindowDays } from "./sources.js";
import { makeFullGridVariableDays } from "./variable-sources.js";
import { sizeOfTree } from "./tools.js";

const run = promisify(execFile);
const CLI = "build/cli.js";
const DAILY_RAIN = findVariable("daily_rain")!;
const VARIABLES: Variable[] = [MAX_TEMP, DAILY_RAIN];
const YEAR = listDays("2003-01-01", 365);
const NIGHTS = listDays("2004-01-01", Number(process.env.BENCH_REVISION_NIGHTS ?? 30));
/** Per night: max_temp days of its last 90 and daily_rain days of its last 365 rewritten, each in two patches. */
const REWRITES: [Variable, number, number][] = [[MAX_TEMP, 3, 90], [DAILY_RAIN, 6, 365]];
const PATCH: [number, number] = [20, 15]; // 300 cells
const GDAL_HASH = `
import sys, hashlib, numpy as np
from osgeo import gdal
for f in sys.argv[1:]:
    ds = gdal.Open(f)  # held: a band outlives a dataset nobody holds only until it is collected
    b = ds.GetRasterBand(1)
    a = b.ReadAsArray().astype('<f4')
    nd = b.GetNoDataValue()
    a[(a == np.float32(nd)) | (a == np.float32(-3276.8)) | ~np.isfinite(a)] = np.nan
    bits = a.view('<u4')
    bits[np.isnan(a)] = 0x7fc00000
    print(hashlib.sha256(a.tobytes()).hexdigest())
`;

type Say = (line?: string) => void;

export interface RevisionContext {
  work: string;
  /** full-grid COGs of max_temp and daily_rain, 2003-01-01 .. the last night (bench/sources.ts) */
  yearCache: string;
  /** small-window days (bench/sources.ts makeSiloLikeWindowDays) */
  longCache: string;
  say: Say;
  log: (line: string) => void;
  figures: Record<string, number>;
}

/** A deterministic sequence in [0, 1): mulberry32. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** A bucket: SILO's layout (<variable>/<YYYY>/<file>) of links to the cached files, served by nginx. */
class Bucket {
  private constructor(
    readonly root: string,
    readonly nginx: Nginx,
    private readonly cache: string,
  ) {}

  static async start(root: string, cache: string, dates: string[]): Promise<Bucket> {
    const bucket = new Bucket(root, await startNginx(root), cache);
    for (const date of dates) await bucket.add(date);
    return bucket;
  }

  get url(): string {
    return this.nginx.url.replace(/\/$/, "");
  }

  file(variable: Variable, date: string): string {
    return join(this.root, variable.silo, dateToMemberPath(date, variable));
  }

  async add(date: string): Promise<void> {
    for (const v of VARIABLES) {
      await mkdir(dirname(this.file(v, date)), { recursive: true });
      await symlink(resolve(this.cache, dateToMemberPath(date, v)), this.file(v, date));
    }
  }

  /** Rewrites a day's file in place as SILO does: the same cells or patched ones, as a COG, renamed over the old. */
  async rewrite(variable: Variable, date: string, values: Float32Array | null, night: number): Promise<void> {
    const target = this.file(variable, date);
    const plain = `${target}.plain.tif`;
    if (values) await writeSiloTiff(plain, [0, 0, 841, 681], values);
    const source = values ? plain : target;
    // the same cells in new bytes: a metadata item says which night wrote the file
    await run("gdal_translate", ["-q", "-of", "COG", "-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=FLOATING_POINT", "-mo", `REWRITTEN=${night}`, source, `${target}.part`]);
    await rename(`${target}.part`, target);
    await rm(plain, { force: true });
  }

  /** Statuses of the requests answered since `from` (the access log's lines). */
  async statuses(from: number): Promise<{ requests: number; count: Record<string, number> }> {
    const lines = await this.nginx.requests();
    const count: Record<string, number> = {};
    for (const line of lines.slice(from)) count[line.split(" ")[2]] = (count[line.split(" ")[2]] ?? 0) + 1;
    return { requests: lines.length, count };
  }
}

/** One lane of the season: a sources folder and a dist, updated night after night from its bucket. */
interface Lane {
  name: string;
  sources: string;
  dist: string;
  bucket: Bucket;
  /** per night: wall time, CPU time (user and system, every thread), bytes the dist grew, the bucket's 200s and 304s */
  nights: { date: string; ms: number; cpuMs: number; bytes: number; downloads: number; notModified: number }[];
}

async function runNight(lane: Lane, date: string): Promise<void> {
  const before = await sizeOfTree(lane.dist);
  const asked = (await lane.bucket.nginx.requests()).length;
  const epoch = String(Date.parse(`${dayNumberToDate(dateToDayNumber(date) + 1)}T05:00:00Z`) / 1000);
  const started = performance.now();
  // BENCH_PROFILE_DIR: each night's update writes a CPU profile there (node --cpu-prof), named by lane and date
  const profile = process.env.BENCH_PROFILE_DIR ? ["--cpu-prof", "--cpu-prof-dir", process.env.BENCH_PROFILE_DIR, "--cpu-prof-name", `${lane.name}-${date}.cpuprofile`] : [];
  // GNU time reports the process's CPU time: on a shared machine it moves less than the wall time
  const { stderr } = await run("/usr/bin/time", ["-f", "@@cpu %U %S", "node", ...profile, CLI, "update", "--to", date, "--variables", "max_temp,daily_rain", "--sources", lane.sources, "--dist", lane.dist], {
    env: { ...process.env, SILO_BASE_URL: lane.bucket.url, SOURCE_DATE_EPOCH: epoch },
    maxBuffer: 16 << 20,
  });
  const ms = performance.now() - started;
  const [user, system] = /@@cpu ([0-9.]+) ([0-9.]+)/.exec(stderr)!.slice(1).map(Number);
  const { count } = await lane.bucket.statuses(asked);
  lane.nights.push({ date, ms, cpuMs: (user + system) * 1000, bytes: (await sizeOfTree(lane.dist)) - before, downloads: count["200"] ?? 0, notModified: count["304"] ?? 0 });
}

/** The night's rewrites in the revision lane's bucket: which dates of which variable, and one rewritten with the same cells. */
/** A day of a variable the night rewrote, and the windows of its patches (none for a rewrite with the same cells). */
interface Rewritten {
  variable: Variable;
  date: string;
  patches: Window[];
}

async function rewriteNight(bucket: Bucket, date: string, night: number): Promise<Rewritten[]> {
  const next = random(night * 7919);
  const revised: Rewritten[] = [];
  const today = dateToDayNumber(date);
  for (const [variable, count, back] of REWRITES) {
    const picked = new Set<string>();
    while (picked.size < count) picked.add(dayNumberToDate(today - 1 - Math.floor(next() * back)));
    for (const day of picked) {
      const grid = await readSiloTiff(bucket.file(variable, day), variable.plausible);
      const patches = patch(grid.values, variable, next);
      await bucket.rewrite(variable, day, grid.values, night);
      revised.push({ variable, date: day, patches });
    }
  }
  let same = dayNumberToDate(today - 1 - Math.floor(next() * 90));
  while (revised.some((r) => r.variable === MAX_TEMP && r.date === same)) same = dayNumberToDate(dateToDayNumber(same) - 1);
  await bucket.rewrite(MAX_TEMP, same, null, night);
  return [...revised, { variable: MAX_TEMP, date: same, patches: [] }];
}

/** Two patches of PATCH cells inside the continent's box: temperatures move by 0.7, rain grows by 1.3 mm; their windows. */
function patch(values: Float32Array, variable: Variable, next: () => number): Window[] {
  const windows: Window[] = [];
  for (let p = 0; p < 2; p++) {
    const [c0, r0] = [100 + Math.floor(next() * 600), 100 + Math.floor(next() * 450)];
    windows.push([c0, r0, PATCH[0], PATCH[1]]);
    for (let r = r0; r < r0 + PATCH[1]; r++) {
      for (let c = c0; c < c0 + PATCH[0]; c++) {
        const v = values[r * 841 + c];
        if (v === v) values[r * 841 + c] = Math.fround(Math.round((v + (variable === DAILY_RAIN ? 1.3 : p === 0 ? 0.7 : -0.7)) * 10) / 10);
      }
    }
  }
  return windows;
}

/** The newest version of each variable in a dist. */
async function newestViews(dist: string): Promise<Map<Variable, RasterView>> {
  const snapshot = (await readPublished(dist))!;
  const out = new Map<Variable, RasterView>();
  for (const v of VARIABLES) {
    const candidate = snapshot.pointer.candidates.find((c) => Object.keys(c.record.variables)[0] === v.name)!;
    out.set(v, (await openVersion(snapshot.archive, candidate.record)) as RasterView);
  }
  return out;
}

/**
 * The night's rewritten days in the newest versions against GDAL's reading of the bucket's files: the day entry's
 * cells sha256 and the stored day piece decoded, whole; and the series tier's cells of each patch equal the day
 * piece's (a whole year span would be read for every cell otherwise). The count of days that match.
 */
async function checkRevised(dist: string, bucket: Bucket, days: Rewritten[]): Promise<number> {
  const { stdout } = await run("/usr/bin/python3", ["-c", GDAL_HASH, ...days.map((r) => bucket.file(r.variable, r.date))]);
  const gdal = stdout.trim().split("\n");
  const views = await newestViews(dist);
  const bytesOf = (cells: Float32Array) => Buffer.from(cells.buffer, cells.byteOffset, cells.byteLength);
  let matched = 0;
  for (const [i, { variable, date, patches }] of days.entries()) {
    const view = views.get(variable)!;
    const day = (await view.findDay(date))!;
    const cells = await view.readCells(day, day.window);
    canonicalizeMissing(cells);
    let same = day.cells === gdal[i] && sha256Hex(new Uint8Array(cells.buffer)) === gdal[i];
    const span = view.index.series.find((s) => s.first <= date && date <= s.last)!;
    const d = dateToDayNumber(date) - dateToDayNumber(span.first);
    for (const area of patches) {
      const [series] = await view.readSeries(span, area, d, d + 1);
      same &&= bytesOf(series).equals(bytesOf(await view.readCells(day, area)));
    }
    if (same) matched++;
  }
  await views.get(MAX_TEMP)!.archive.storage.close?.();
  return matched;
}

/** What a version pinned after the first night answers: a series at two places, a Zarr series chunk, a box query. */
async function pinnedAnswers(dist: string, id: string, rainId: string): Promise<string[]> {
  const server = await startServer(dist);
  try {
    const paths = [
      `/api/v1/series?lat=-25,-30.5&lon=135,146&variables=max_temp&dataset_version=${id}`,
      `/api/v1/series?lat=-25&lon=135&variables=daily_rain&format=json&dataset_version=${rainId}`,
      `/zarr/v2/${id}/series/air_temperature_max/0.60.80`,
    ];
    return await Promise.all(paths.map(async (p) => sha256Hex(new Uint8Array(await (await fetch(server.url + p)).arrayBuffer()))));
  } finally {
    await server.stop();
  }
}

export async function benchRevisionSeason(ctx: RevisionContext): Promise<number> {
  const { work, yearCache, log } = ctx;
  await makeFullGridDays(yearCache, [...YEAR, ...NIGHTS], log);
  await makeFullGridVariableDays(yearCache, [...YEAR, ...NIGHTS], log);
  const root = join(work, "revisions");
  const lanes: Lane[] = [];
  let failures = 0;
  try {
    for (const name of ["append-only", "revisions"]) {
      const bucket = await Bucket.start(join(root, name, "bucket"), yearCache, YEAR);
      lanes.push({ name, sources: join(root, name, "sources"), dist: join(root, name, "dist"), bucket, nights: [] });
    }
    // the year: fetched and published once, then the folder and dist copied for the other lane
    const [baseline, revising] = lanes;
    log("revision season: fetching and publishing the year (once)");
    const env = { ...process.env, SILO_BASE_URL: baseline.bucket.url, SOURCE_DATE_EPOCH: String(Date.parse("2004-01-01T05:00:00Z") / 1000) };
    await run("node", [CLI, "fetch", "--from", YEAR[0], "--to", YEAR[YEAR.length - 1], "--variables", "max_temp,daily_rain", "--sources", baseline.sources], { env, maxBuffer: 64 << 20 });
    await run("node", [CLI, "publish", "--sources", baseline.sources, "--dist", baseline.dist], { env, maxBuffer: 16 << 20 });
    await cp(baseline.sources, revising.sources, { recursive: true });
    await cp(baseline.dist, revising.dist, { recursive: true });
    const checked = { days: 0, matched: 0, pins: 0, pinsEqual: 0 };
    let pinned: { ids: [string, string]; answers: string[] } | null = null;
    for (const [n, date] of NIGHTS.entries()) {
      for (const lane of lanes) await lane.bucket.add(date);
      const rewritten = await rewriteNight(revising.bucket, date, n + 1);
      for (const lane of lanes) await runNight(lane, date);
      checked.days += rewritten.length;
      checked.matched += await checkRevised(revising.dist, revising.bucket, rewritten);
      const views = await newestViews(revising.dist);
      if (!pinned) {
        const ids: [string, string] = [views.get(MAX_TEMP)!.record.id, views.get(DAILY_RAIN)!.record.id];
        pinned = { ids, answers: await pinnedAnswers(revising.dist, ...ids) };
      } else {
        checked.pins++;
        if ((await pinnedAnswers(revising.dist, ...pinned.ids)).join() === pinned.answers.join()) checked.pinsEqual++;
      }
      await views.get(MAX_TEMP)!.archive.storage.close?.();
      log(`  night ${n + 1}/${NIGHTS.length} ${date}: ${lanes.map((l) => `${l.name} ${fmt(l.nights[n].ms / 1000, 1)} s ${formatBytes(l.nights[n].bytes)}`).join(", ")}`);
    }
    failures += await reportSeason(lanes, checked, pinned!, root, ctx);
    return failures;
  } finally {
    for (const lane of lanes) await lane.bucket.nginx.stop();
  }
}

const sum = (values: number[]) => values.reduce((n, v) => n + v, 0);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function reportSeason(lanes: Lane[], checked: { days: number; matched: number; pins: number; pinsEqual: number }, pinned: { ids: [string, string]; answers: string[] }, root: string, ctx: RevisionContext): Promise<number> {
  const { say, figures } = ctx;
  const [baseline, revising] = lanes;
  let failures = 0;
  const bytesRatio = sum(revising.nights.map((n) => n.bytes)) / sum(baseline.nights.map((n) => n.bytes));
  const timeRatio = sum(revising.nights.map((n) => n.ms)) / sum(baseline.nights.map((n) => n.ms));
  const cpuRatio = sum(revising.nights.map((n) => n.cpuMs)) / sum(baseline.nights.map((n) => n.cpuMs));
  // make prune with its defaults at the season's end (KEEP_DAYS=30 of the nights' publish times), deleting at once
  const end = new Date(Date.parse(`${dayNumberToDate(dateToDayNumber(NIGHTS[NIGHTS.length - 1]) + 1)}T06:00:00Z`));
  const pruned = await prune({ dist: revising.dist, rule: { keepDays: 30, keepIds: new Set(), dropVersions: true }, graceMs: 0, now: end });
  const afterPrune = await sizeOfTree(revising.dist);
  const pinsAfterPrune = (await pinnedAnswers(revising.dist, ...pinned.ids)).join() === pinned.answers.join();
  // one publish of the final files: the bucket as it stands, into an empty dist
  const once = join(root, "once");
  await run("node", [CLI, "fetch", "--from", YEAR[0], "--to", NIGHTS[NIGHTS.length - 1], "--variables", "max_temp,daily_rain", "--sources", join(once, "sources")], { env: { ...process.env, SILO_BASE_URL: revising.bucket.url }, maxBuffer: 64 << 20 });
  await run("node", [CLI, "publish", "--sources", join(once, "sources"), "--dist", join(once, "dist")], { maxBuffer: 16 << 20 });
  const oneShot = await sizeOfTree(join(once, "dist"));
  const downloads = sum(revising.nights.map((n) => n.downloads));
  const expected = NIGHTS.length * (VARIABLES.length + sum(REWRITES.map(([, c]) => c)) + 1);
  Object.assign(figures, {
    revision_night_bytes_ratio: bytesRatio,
    revision_night_time_ratio: timeRatio,
    revision_night_cpu_ratio: cpuRatio,
    revision_dist_after_prune_ratio: afterPrune / oneShot,
    revision_days_checked: checked.days,
    revision_days_matching: checked.matched,
  });
  say();
  say(`a revision season: a full-grid year of max_temp and daily_rain, then ${NIGHTS.length} nights of make update (a new process each) against nginx as SILO's bucket`);
  say(`  each night: a new day of each; revisions: 3 max_temp days of the last 90 and 6 daily_rain days of the last 365 rewritten in two patches of ${PATCH[0] * PATCH[1]} cells, one file rewritten with the same cells`);
  say(`                                   append-only (baseline)    with revisions    ratio`);
  say(`  bytes written, ${NIGHTS.length} nights           ${formatBytes(sum(baseline.nights.map((n) => n.bytes))).padStart(10)}    ${formatBytes(sum(revising.nights.map((n) => n.bytes))).padStart(16)}    ${fmt(bytesRatio, 2)}  (goal <= 3)`);
  say(`  time, ${NIGHTS.length} nights                    ${(fmt(sum(baseline.nights.map((n) => n.ms)) / 1000, 1) + " s").padStart(10)}    ${(fmt(sum(revising.nights.map((n) => n.ms)) / 1000, 1) + " s").padStart(16)}    ${fmt(timeRatio, 2)}  (goal <= 2)`);
  say(`  CPU time, ${NIGHTS.length} nights                ${(fmt(sum(baseline.nights.map((n) => n.cpuMs)) / 1000, 1) + " s").padStart(10)}    ${(fmt(sum(revising.nights.map((n) => n.cpuMs)) / 1000, 1) + " s").padStart(16)}    ${fmt(cpuRatio, 2)}  (every thread; steadier than wall time on a shared machine)`);
  say(`  median night                     ${(fmt(median(baseline.nights.map((n) => n.ms)) / 1000, 2) + " s").padStart(10)}    ${(fmt(median(revising.nights.map((n) => n.ms)) / 1000, 2) + " s").padStart(16)}    bytes ${formatBytes(median(baseline.nights.map((n) => n.bytes)))} and ${formatBytes(median(revising.nights.map((n) => n.bytes)))}`);
  say(`  downloads (200) and 304s         ${`${sum(baseline.nights.map((n) => n.downloads))} / ${sum(baseline.nights.map((n) => n.notModified))}`.padStart(10)}    ${`${downloads} / ${sum(revising.nights.map((n) => n.notModified))}`.padStart(16)}    (goal: the new and rewritten files alone: ${NIGHTS.length * VARIABLES.length} and ${expected})`);
  say(`  revised days equal to GDAL's reading of the bucket (day entry, day piece and series tier): ${checked.matched} of ${checked.days}`);
  say(`  a version pinned after the first night answers byte for byte: ${checked.pinsEqual} of ${checked.pins} nights, and after the prune: ${pinsAfterPrune ? "yes" : "no"}`);
  say(`  make prune (KEEP_DAYS=30 at the season's end): ${pruned.dropped.length} of ${pruned.kept.length + pruned.dropped.length} versions dropped; dist ${formatBytes(afterPrune)}, one publish of the final files ${formatBytes(oneShot)}   ratio ${fmt(afterPrune / oneShot, 2)}  (goal <= 1.5)`);
  const goals: [boolean, string][] = [
    [bytesRatio <= 3, "a revision night's bytes"],
    [timeRatio <= 2, "a revision night's time"],
    [afterPrune / oneShot <= 1.5, "the pruned dist against one publish"],
    [checked.matched === checked.days, "revised days equal to the bucket"],
    [checked.pinsEqual === checked.pins && pinsAfterPrune, "pinned answers"],
    [downloads === expected && sum(baseline.nights.map((n) => n.downloads)) === NIGHTS.length * VARIABLES.length, "only new and changed files downloaded"],
  ];
  for (const [met, what] of goals) {
    if (met) continue;
    say(`  !! ${what}: a goal is not met`);
    failures++;
  }
  return failures;
}

/**
 * A 64 x 64 window's archive as the docs' maintainer keeps it: annual NetCDF files for the years before `dailyFrom`
 * (made once from the cached days, as SILO ships them) and daily files from it on; published, then one revision night
 * (a new day, 3 days of the last 90 and 6 of the last 365 rewritten in two patches of 12 x 12 cells) published in a
 * new process: its bytes and time.
 */
async function reviseArchive(root: string, cache: string, dates: string[], dailyFrom: string): Promise<{ ms: number; bytes: number; files: number }> {
  const window: Window = [400, 300, 64, 64];
  const sources = join(root, "sources");
  const dist = join(root, "dist");
  const history = dates.slice(0, -1);
  const link = async (target: string, file: string) => {
    await mkdir(dirname(target), { recursive: true });
    await symlink(resolve(file), target);
  };
  const years = [...new Set(history.filter((d) => d < dailyFrom).map((d) => d.slice(0, 4)))];
  for (const year of years) await link(join(sources, `${year}.max_temp.nc`), await annualFile(cache, year, history.filter((d) => d.startsWith(year))));
  for (const date of history.filter((d) => d >= dailyFrom)) await link(join(sources, dateToMemberPath(date, MAX_TEMP)), join(cache, dateToMemberPath(date, MAX_TEMP)));
  await run("node", [CLI, "publish", "--sources", sources, "--dist", dist], { maxBuffer: 16 << 20 });
  const last = dates[dates.length - 1];
  await link(join(sources, dateToMemberPath(last, MAX_TEMP)), join(cache, dateToMemberPath(last, MAX_TEMP)));
  const next = random(42);
  const picked = new Set<string>();
  for (const [count, back] of [[3, 90], [6, 365]]) for (let i = 0; i < count; i++) picked.add(dayNumberToDate(dateToDayNumber(last) - 1 - Math.floor(next() * back)));
  for (const date of picked) {
    const file = join(sources, dateToMemberPath(date, MAX_TEMP));
    const grid = await readSiloTiff(file, MAX_TEMP.plausible);
    for (const [c0, r0] of [[4, 6], [40, 30]]) for (let r = r0; r < r0 + 12; r++) for (let c = c0; c < c0 + 12; c++) grid.values[r * 64 + c] = Math.fround(Math.round((grid.values[r * 64 + c] + 0.4) * 10) / 10);
    await rm(file);
    await writeSiloTiff(file, window, grid.values);
  }
  // the night three times from the same dist (a copy each time): the median time, on a shared machine
  const before = await sizeOfTree(dist);
  const nights: { ms: number; bytes: number }[] = [];
  for (let i = 0; i < 3; i++) {
    const night = join(root, `night-${i}`);
    await cp(dist, night, { recursive: true });
    const started = performance.now();
    await run("node", [CLI, "publish", "--sources", sources, "--dist", night], { maxBuffer: 16 << 20 });
    nights.push({ ms: performance.now() - started, bytes: (await sizeOfTree(night)) - before });
    await rm(night, { recursive: true });
  }
  const ms = median(nights.map((n) => n.ms));
  return { ms, bytes: nights[0].bytes, files: years.length + history.filter((d) => d >= dailyFrom).length + 1 };
}

/** A year of the cached small-window days as one packed annual NetCDF file (test/fixtures/make-netcdf-fixtures.py), made once. */
async function annualFile(cache: string, year: string, dates: string[]): Promise<string> {
  const file = join(`${cache}-annual`, `${year}.max_temp.nc`);
  if (existsSync(file)) return file;
  await mkdir(dirname(file), { recursive: true });
  await run("/usr/bin/python3", ["test/fixtures/make-netcdf-fixtures.py", "from-tiffs", `${file}.part`, year, ...dates.map((d) => join(cache, dateToMemberPath(d, MAX_TEMP)))], { maxBuffer: 1 << 20 });
  await rename(`${file}.part`, file);
  return file;
}

export async function benchRevisionLength(ctx: RevisionContext): Promise<number> {
  const { work, longCache, say, figures, log } = ctx;
  const long = listDays("1950-01-01", Number(process.env.BENCH_LONG_DAYS ?? 20_000) + 1);
  const short = long.slice(-366);
  await makeSiloLikeWindowDays(longCache, long, [400, 300, 64, 64], log);
  log("revision night onto a 365-day and a long archive of a 64 x 64 window (annual files made once)");
  // the daily files a maintainer keeps: the open year and the one before (rain's revision window reaches it)
  const dailyFrom = `${Number(long[long.length - 1].slice(0, 4)) - 1}-01-01`;
  const a = await reviseArchive(join(work, "revise-short"), longCache, short, short[0]);
  const b = await reviseArchive(join(work, "revise-long"), longCache, long, dailyFrom);
  const ratio = Math.max(b.bytes / a.bytes, b.ms / a.ms);
  figures.revision_long_archive_ratio = ratio;
  say();
  say(`one revision night (a new day, 9 days rewritten in two patches of 144 cells) onto an archive of a 64 x 64 window, publish in a new process (median of 3)`);
  say(`  365 days, ${a.files} daily files (baseline)    ${fmt(a.ms / 1000, 2)} s, ${formatBytes(a.bytes)} written`);
  say(`  ${fmt(long.length - 1)} days, ${b.files} files (annual before ${dailyFrom.slice(0, 4)})  ${fmt(b.ms / 1000, 2)} s, ${formatBytes(b.bytes)} written   ratio ${fmt(b.ms / a.ms, 2)} in time, ${fmt(b.bytes / a.bytes, 2)} in bytes  (goal <= 1.5)`);
  if (ratio <= 1.5) return 0;
  say("  !! a revision night on a long archive: a goal is not met");
  return 1;
}
