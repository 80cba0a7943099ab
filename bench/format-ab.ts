// Issue 44's publish rows: climate-dist-3's build beside this one, same run, same inputs, each publish a new process
// and the two builds in turn (these machines are shared and noisy). On a SILO-like full-grid year (bench/silo-like.ts)
// of max_temp and of daily_rain:
//
// - the year published from SILO's annual NetCDF form: wall time (goal: at most 12 s on 2 cores), and each tier's
//   bytes a land value (goals: both tiers at most 0.8 B for max_temp, 0.7 B for rain; no tier grows);
// - the year-closing daily publish: 2003-12-31 onto 2003-01-01..12-30 (EXTEND), which writes the year's series span
//   (goal: at most half the baseline's time);
// - this build's year with 1 thread and with every core: the scaling docs/publishing.md "The backfill" extrapolates;
// - reads (max_temp's year, each build's server on its own dist, in turn): a point query of 31 days and the year's
//   series at another place anywhere on the land grid each request, and another tile and date of the day pieces
//   (goal: no slower; wrk, 10 connections, BENCH_SECONDS each);
// - a place over 20,000 SILO-like days of a 64 x 64 window, each build's server on its own dist: sequential series
//   calls at another place each, and at places asked again (goal: no slower);
// - a cold mirror client over a static host reading one place over thirty years of a 64 x 64 window, each build's
//   client (bench/mirror-read-probe.ts, run in the build's tree) on its own build's dist of the same files (goal:
//   fewer bytes, no more requests).
//
// The baseline is built from BENCH_BASELINE_COMMIT (default 2e3aa02, the last climate-dist-3 commit) in a git
// worktree, bundled as `make bench` bundles this build's probe. BENCH_AB_ROUNDS (default 2) rounds.
//
// Runs alone: BENCH_ONLY=format-ab node_modules/.bin/tsx bench/run.ts; the mirror row alone: BENCH_ONLY=mirror-ab; the
// long archive's alone: BENCH_ONLY=long-ab.

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { cp, mkdir, rename, rm, symlink, writeFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { join, resolve } from "node:path";
import { type Window, colToLon, rowToLat } from "../format/grid.js";
import { type Variable, MAX_TEMP, findVariable } from "../format/variables.js";
import { makeLandMask } from "../pipeline/ingest/demo.js";
import { formatBytes } from "../pipeline/progress.js";
import { dateToMemberPath } from "../sources/silo.js";
import { makeSiloLikeMaxTemp, makeSiloLikeRain } from "./silo-like.js";
import { BENCH_CACHE, YEAR_CACHE, listDays, makeFullGridDays, makeSiloLikeWindowDays } from "./sources.js";
import { linkFolder } from "./tools.js";
import { runWrk, startServerBundle, variedQueryScript, variedTileScript } from "./load.js";

type Say = (line?: string) => void;
const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

const BASELINE_COMMIT = process.env.BENCH_BASELINE_COMMIT ?? "2e3aa02";
const ROUNDS = Number(process.env.BENCH_AB_ROUNDS ?? 2);
const YEAR = listDays("2003-01-01", 365);
const MAKE_NETCDF = "test/fixtures/make-netcdf-fixtures.py";
const ESBUILD = ["--bundle", "--platform=node", "--format=esm", "--target=node20", "--log-level=warning", "--packages=external", "--outdir=build", "--entry-names=[name]"];
/** Land of the bench's grid, as bench/ab.ts reads it: columns, then rows. */
const LAND: [[number, number], [number, number]] = [[300, 650], [120, 420]];
const ENTRIES = ["pipeline/cli.ts", "pipeline/publish/day-worker.ts", "pipeline/publish/series-worker.ts", "bench/publish-probe.ts"];
/** The mirror row's archive: a 64 x 64 window of SILO-like max_temp over thirty years, and the place it reads. */
const THIRTY_WINDOW: Window = [480, 280, 64, 64];
const THIRTY_YEARS = listDays("1974-01-01", 10_957);
/** The long archive's row: 20,000 days of a 64 x 64 window of SILO-like max_temp. */
const LONG_WINDOW: Window = [400, 300, 64, 64];
const LONG_DAYS = listDays("1950-01-01", 20_000);
const THIRTY_PLACE = { col: 511, row: 301 };

export interface FormatAbContext {
  work: string;
  say: Say;
  log: (line: string) => void;
  figures: Record<string, number>;
  fail: (why: string) => void;
}

/** A build of the publish probe: its bundle, and the folder it runs in (its schemas, its explorer page). */
interface Build {
  name: string;
  probe: string;
  server: string;
  cwd: string;
}

interface Probe {
  wallMs: number;
  cpuMs: number;
  maxRssMb: number;
  dayBytesWritten: number;
  seriesBytesWritten: number;
  bytesWritten: number;
  id: string;
}

function runProbe(build: Build, sources: string, dist: string, extend = false, env: Record<string, string> = {}): Probe {
  const started = performance.now();
  const args = [build.probe, resolve(sources), resolve(dist), ...(extend ? ["--extend"] : [])];
  const out = execFileSync("node", args, { cwd: build.cwd, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 20, env: { ...process.env, ...env } });
  return { ...JSON.parse(out.trim().split("\n").pop()!), wallMs: performance.now() - started };
}

/** climate-dist-3's probe, bundled from its commit in a worktree beside this one (node_modules shared). */
function buildBaseline(work: string, log: (line: string) => void): Build {
  const tree = join(work, "baseline-tree");
  log(`building the baseline's publish probe from ${BASELINE_COMMIT} in ${tree}`);
  execFileSync("git", ["worktree", "add", "--detach", "--force", tree, BASELINE_COMMIT], { stdio: "ignore" });
  execFileSync("ln", ["-s", resolve("node_modules"), join(tree, "node_modules")]);
  // the mirror row's probe is this tree's file, run with the baseline's client (the same calls in both)
  execFileSync("cp", ["bench/mirror-read-probe.ts", join(tree, "bench/mirror-read-probe.ts")]);
  execFileSync(resolve("node_modules/.bin/esbuild"), [...ESBUILD, ...ENTRIES], { cwd: tree });
  // its server as make builds it, with the validators its start loads
  execFileSync(resolve("node_modules/.bin/esbuild"), ["server/main.ts", "--bundle", "--platform=node", "--format=esm", "--target=node20", "--outfile=build/server.js", "--log-level=warning", "--banner:js=import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);"], { cwd: tree });
  execFileSync(resolve("node_modules/.bin/tsx"), ["schemas/precompile.ts", "build/validators.js"], { cwd: tree });
  // the same explorer page for both: it is stored in the dist, and its bytes are no part of the comparison
  execFileSync("cp", ["build/explorer.html", join(tree, "build/explorer.html")]);
  return { name: "climate-dist-3", probe: join(tree, "build/publish-probe.js"), server: join(tree, "build/server.js"), cwd: tree };
}

/** The year's days of `variable` as full-grid COGs and as one annual NetCDF file, made once into .cache/bench. */
async function makeInputs(variable: Variable, make: (date: string, mask: Uint8Array) => Float32Array, log: (line: string) => void): Promise<{ days: string; annual: string }> {
  const days = YEAR_CACHE;
  await makeFullGridDays(days, YEAR, log, variable, make);
  const annual = join(BENCH_CACHE, "silo-like-annual", `2003.${variable.silo}.nc`);
  if (!existsSync(annual)) {
    log(`making ${annual} from the year's GeoTIFFs (once)`);
    await mkdir(join(annual, ".."), { recursive: true });
    execFileSync("/usr/bin/python3", [MAKE_NETCDF, "from-tiffs", `${annual}.part`, "2003", ...YEAR.map((d) => join(days, dateToMemberPath(d, variable)))], { maxBuffer: 1 << 20 });
    await rename(`${annual}.part`, annual);
  }
  return { days, annual };
}

/** Both builds over one variable's year: from the annual file, the year's close, and this build's thread scaling. */
async function benchVariable(ctx: FormatAbContext, builds: [Build, Build], variable: Variable, make: (date: string, mask: Uint8Array) => Float32Array): Promise<Map<string, Probe & { dist: string }>> {
  const { work, say, log, figures } = ctx;
  const { days, annual } = await makeInputs(variable, make, log);
  const land = makeLandMask().reduce((n, m) => n + m, 0) * YEAR.length;
  const folder = (name: string) => join(work, `${variable.silo}-${name}`);
  const annualFolder = folder("annual");
  await mkdir(annualFolder, { recursive: true });
  await symlink(resolve(annual), join(annualFolder, `2003.${variable.silo}.nc`));
  const before = await linkFolder(folder("before-close"), days, YEAR.slice(0, -1), [variable]);
  const closing = await linkFolder(folder("closing-day"), days, YEAR.slice(-1), [variable]);
  const results = new Map<string, { year: Probe[]; close: Probe[] }>(builds.map((b) => [b.name, { year: [], close: [] }]));
  const bases = new Map<string, string>();
  const years = new Map<string, Probe & { dist: string }>();
  for (const build of builds) {
    log(`${variable.silo}: ${build.name} publishes 2003-01-01..12-30 (the year-close rows' base)`);
    const base = join(work, `${variable.silo}-${build.name}-base`);
    runProbe(build, before, base);
    bases.set(build.name, base);
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const build of round % 2 ? [...builds].reverse() : builds) {
      log(`${variable.silo}: round ${round + 1}, ${build.name}: the year from the annual file, then the year's close`);
      const dist = join(work, `${variable.silo}-${build.name}-year`);
      const year = runProbe(build, annualFolder, dist);
      results.get(build.name)!.year.push(year);
      // the last round's years stay for the reads rows
      if (round === ROUNDS - 1) years.set(build.name, { ...year, dist: `${dist}-kept` });
      await (round === ROUNDS - 1 ? rename(dist, `${dist}-kept`) : rm(dist, { recursive: true, force: true }));
      const closed = join(work, `${variable.silo}-${build.name}-closed`);
      await cp(bases.get(build.name)!, closed, { recursive: true });
      results.get(build.name)!.close.push(runProbe(build, closing, closed, true));
      await rm(closed, { recursive: true, force: true });
    }
  }
  const [base, next] = builds.map((b) => results.get(b.name)!);
  const ids = new Set([...base.year, ...next.year].map((p) => p.id));
  if (ids.size !== 1) throw new Error(`${variable.silo}: the builds published different versions of the same year: ${[...ids].join(", ")}`);
  const row = (p: { year: Probe[]; close: Probe[] }) => ({
    yearS: median(p.year.map((r) => r.wallMs)) / 1000,
    yearCpuS: median(p.year.map((r) => r.cpuMs)) / 1000,
    peakMb: Math.max(...p.year.map((r) => r.maxRssMb)),
    closeS: median(p.close.map((r) => r.wallMs)) / 1000,
    dayB: p.year[0].dayBytesWritten / land,
    seriesB: p.year[0].seriesBytesWritten / land,
    total: p.year[0].bytesWritten,
  });
  const [a, b] = [row(base), row(next)];
  say(`  ${variable.silo}: a full-grid year (${fmt(land)} land values), medians of ${ROUNDS}`);
  say(`    ${"build".padEnd(16)} ${"year from annual".padStart(17)} ${"CPU".padStart(8)} ${"peak".padStart(8)} ${"year close".padStart(11)} ${"day B/value".padStart(12)} ${"series B/value".padStart(15)} ${"both".padStart(6)} ${"written".padStart(9)}`);
  for (const [name, r] of [[builds[0].name, a], [builds[1].name, b]] as const) {
    say(`    ${name.padEnd(16)} ${`${fmt(r.yearS, 1)} s`.padStart(17)} ${`${fmt(r.yearCpuS, 1)} s`.padStart(8)} ${`${fmt(r.peakMb)} MB`.padStart(8)} ${`${fmt(r.closeS, 2)} s`.padStart(11)} ${fmt(r.dayB, 3).padStart(12)} ${fmt(r.seriesB, 3).padStart(15)} ${fmt(r.dayB + r.seriesB, 2).padStart(6)} ${formatBytes(r.total).padStart(9)}`);
  }
  say(`    ratios: year ${fmt(b.yearS / a.yearS, 2)}, year close ${fmt(b.closeS / a.closeS, 2)} (goal <= 0.5), day tier ${fmt(b.dayB / a.dayB, 2)}, series tier ${fmt(b.seriesB / a.seriesB, 2)}`);
  const key = variable.silo;
  Object.assign(figures, {
    [`ab_${key}_year_s`]: b.yearS, [`ab_${key}_year_base_s`]: a.yearS,
    [`ab_${key}_close_s`]: b.closeS, [`ab_${key}_close_base_s`]: a.closeS,
    [`ab_${key}_day_b`]: b.dayB, [`ab_${key}_day_base_b`]: a.dayB,
    [`ab_${key}_series_b`]: b.seriesB, [`ab_${key}_series_base_b`]: a.seriesB,
  });
  const goal = key === "max_temp" ? 0.8 : 0.7;
  if (b.dayB + b.seriesB > goal) ctx.fail(`${key}: both tiers ${fmt(b.dayB + b.seriesB, 2)} B a value (goal ${goal})`);
  if (b.dayB > a.dayB || b.seriesB > a.seriesB) ctx.fail(`${key}: a tier grew`);
  if (b.yearS > 12) ctx.fail(`${key}: the year from the annual file took ${fmt(b.yearS, 1)} s (goal 12 s)`);
  if (b.closeS > a.closeS / 2) ctx.fail(`${key}: the year close took ${fmt(b.closeS / a.closeS, 2)} of the baseline's (goal 0.5)`);

  // the scaling with threads: this build, 1 thread against every core (at most 8)
  const cores = Math.min(availableParallelism(), 8);
  const one: number[] = [];
  const all: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const threads of round % 2 ? [cores, 1] : [1, cores]) {
      const dist = join(work, `${variable.silo}-threads`);
      const p = runProbe(builds[1], annualFolder, dist, false, { PUBLISH_THREADS: String(threads) });
      (threads === 1 ? one : all).push(p.wallMs / 1000);
      await rm(dist, { recursive: true, force: true });
    }
  }
  const [t1, tn] = [median(one), median(all)];
  // Amdahl's law from the two: the share that does not divide among threads
  const serial = cores > 1 ? (tn / t1 - 1 / cores) / (1 - 1 / cores) : 1;
  say(`    threads: the year from the annual file in ${fmt(t1, 1)} s on 1 thread, ${fmt(tn, 1)} s on ${cores} (speed-up ${fmt(t1 / tn, 2)}; serial share ${fmt(serial * 100, 0)}%)`);
  Object.assign(figures, { [`ab_${key}_year_1_thread_s`]: t1, [`ab_${key}_year_${cores}_threads_s`]: tn, [`ab_${key}_serial_share`]: serial });
  return years;
}

/** Each build's server on its own year of max_temp, in turn: the same varied reads, req/s and their ratio. */
async function benchReads(ctx: FormatAbContext, builds: [Build, Build], years: Map<string, Probe & { dist: string }>): Promise<void> {
  const seconds = Number(process.env.BENCH_SECONDS ?? 5);
  const scripts = [
    { key: "point_31", name: "a point query of 31 days, another place and period", script: variedQueryScript({ width: 1, height: 1, days: 31, format: "json" }, YEAR, ...LAND) },
    { key: "series_365", name: "the year's series of another place (CSV)", script: seriesYearScript() },
    { key: "tile", name: "another 256 x 256 tile and date of the day pieces", script: "" },
  ];
  const rps = new Map<string, number[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const build of round % 2 ? [...builds].reverse() : builds) {
      const year = years.get(build.name)!;
      const server = await startServerBundle(build.server, year.dist, {}, () => {});
      try {
        for (const row of scripts) {
          const path = join(ctx.work, `reads-${row.key}.lua`);
          await writeFile(path, row.script || variedTileScript(year.id, YEAR, ["r0-c1", "r0-c2", "r1-c1", "r1-c2"]));
          if (round === 0 && row === scripts[0]) await runWrk(server.url, 2, path); // warm: the JIT and the catalog
          const result = await runWrk(server.url, seconds, path);
          if (result.errors > 0) ctx.fail(`${build.name}: ${result.errors} errors reading ${row.name}`);
          rps.set(`${build.name} ${row.key}`, [...(rps.get(`${build.name} ${row.key}`) ?? []), result.rps]);
        }
      } finally {
        await server.stop();
      }
    }
  }
  ctx.say(`  reads of max_temp's year, each build's server on its own dist, in turn (req/s, medians of ${ROUNDS}; wrk, 10 connections, ${seconds} s)`);
  for (const row of scripts) {
    const [a, b] = builds.map((build) => median(rps.get(`${build.name} ${row.key}`)!));
    ctx.say(`    ${row.name.padEnd(56)} ${builds[0].name} ${fmt(a).padStart(6)}   ${builds[1].name} ${fmt(b).padStart(6)}   ratio ${fmt(b / a, 2)}`);
    Object.assign(ctx.figures, { [`ab_reads_${row.key}_rps`]: b, [`ab_reads_${row.key}_base_rps`]: a });
    if (b < a * 0.9) ctx.fail(`${row.name}: ${fmt(b / a, 2)} of the baseline's req/s (goal: no slower)`);
  }
}

/**
 * A place over the long archive (20,000 SILO-like days of a 64 x 64 window), each build publishing it and its server
 * reading it, in turn: p50 of sequential GET /api/v1/series calls, each at another place of the window (no cache can
 * answer them), and, as its own row, at places asked again (the window's corner of 8 x 8 cells, from their third
 * round). Goal: no slower.
 */
async function benchLongPlace(ctx: FormatAbContext, builds: [Build, Build]): Promise<void> {
  const cache = join(BENCH_CACHE, "long64-silo-like");
  await makeSiloLikeWindowDays(cache, LONG_DAYS, LONG_WINDOW, ctx.log);
  const sources = await linkFolder(join(ctx.work, "long-sources"), cache, LONG_DAYS);
  const dists = builds.map((build) => {
    const dist = join(ctx.work, `long-${build.name}`);
    ctx.log(`${build.name} publishes ${fmt(LONG_DAYS.length)} days of a ${LONG_WINDOW[2]} x ${LONG_WINDOW[3]} window`);
    runProbe(build, sources, dist);
    return dist;
  });
  const [c0, r0, w, h] = LONG_WINDOW;
  const [first, last] = [LONG_DAYS[0], LONG_DAYS[LONG_DAYS.length - 1]];
  const url = (col: number, row: number) => `/api/v1/series?lat=${rowToLat(row)}&lon=${colToLon(col)}&start=${first}&end=${last}`;
  const rows = [
    // 40 places in 40 of the window's 256 squares of 4 x 4 cells: none in another's chunk of either build (a year's
    // chunk is 4 x 4 cells, 2 x 2 in climate-dist-3)
    { key: "cold", name: "another place each call", places: Array.from({ length: 40 }, (_, n) => [c0 + (((n * 37) % 256) % 16) * 4 + (n % 4), r0 + Math.floor(((n * 37) % 256) / 16) * 4 + ((n * 3) % 4)]), skip: 0 },
    { key: "again", name: "places asked again (8 x 8 cells, 4 rounds)", places: Array.from({ length: 4 * 64 }, (_, n) => [c0 + (n % 8), r0 + (Math.floor(n / 8) % 8)]), skip: 2 * 64 },
  ];
  const times = new Map<string, number[]>();
  // each row's first answer, as each build gave it: the builds must answer the same bytes
  const answers = new Set<string>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const [b, build] of (round % 2 ? [1, 0] : [0, 1]).map((i) => [i, builds[i]] as const)) {
      const server = await startServerBundle(build.server, dists[b], {}, () => {});
      try {
        for (const row of rows) {
          const taken: number[] = [];
          for (const [n, [col, r]] of row.places.entries()) {
            const started = performance.now();
            const res = await fetch(`${server.url}${url(col, r)}`);
            const body = await res.text();
            if (res.status !== 200) throw new Error(`${build.name}: ${res.status} for a place over the long archive: ${body.slice(0, 200)}`);
            if (n >= row.skip) taken.push(performance.now() - started);
            if (n === 0) answers.add(`${row.key} ${createHash("sha256").update(body).digest("hex")}`);
          }
          times.set(`${build.name} ${row.key}`, [...(times.get(`${build.name} ${row.key}`) ?? []), median(taken)]);
        }
      } finally {
        await server.stop();
      }
    }
  }
  if (answers.size !== rows.length) throw new Error(`the builds' series answers differ: ${[...answers].join(", ")}`);
  ctx.say(`  a place over ${fmt(LONG_DAYS.length)} SILO-like days (${first}..${last}, a ${w} x ${h} window), GET /api/v1/series CSV, sequential calls, p50 (medians of ${ROUNDS})`);
  for (const row of rows) {
    const [a, b] = builds.map((build) => median(times.get(`${build.name} ${row.key}`)!));
    ctx.say(`    ${row.name.padEnd(56)} ${builds[0].name} ${fmt(a, 1).padStart(6)} ms   ${builds[1].name} ${fmt(b, 1).padStart(6)} ms   ratio ${fmt(b / a, 2)}`);
    Object.assign(ctx.figures, { [`ab_long_place_${row.key}_p50_ms`]: b, [`ab_long_place_${row.key}_base_p50_ms`]: a });
    if (b > a / 0.9) ctx.fail(`a place over ${fmt(LONG_DAYS.length)} days, ${row.name}: p50 ${fmt(b / a, 2)} of the baseline's (goal: no slower)`);
  }
}

/**
 * A cold mirror client over a static host reading one place over thirty years (client.series), each build's client on
 * its own build's dist of the same SILO-like files: requests and bytes fetched (goal: fewer bytes, no more requests).
 */
async function benchMirror(ctx: FormatAbContext, builds: [Build, Build]): Promise<void> {
  const cache = join(BENCH_CACHE, "silo-like-thirty-years");
  await makeSiloLikeWindowDays(cache, THIRTY_YEARS, THIRTY_WINDOW, ctx.log);
  const sources = await linkFolder(join(ctx.work, "thirty-years"), cache, THIRTY_YEARS, [MAX_TEMP]);
  const [first, last] = [THIRTY_YEARS[0], THIRTY_YEARS[THIRTY_YEARS.length - 1]];
  const reads = builds.map((build) => {
    const dist = join(ctx.work, `thirty-years-${build.name}`);
    ctx.log(`${build.name} publishes ${fmt(THIRTY_YEARS.length)} days of a 64 x 64 window, then its client reads one place over them`);
    const published = runProbe(build, sources, dist);
    const out = execFileSync(resolve("node_modules/.bin/tsx"), ["bench/mirror-read-probe.ts", dist, String(rowToLat(THIRTY_PLACE.row)), String(colToLon(THIRTY_PLACE.col)), first, last], { cwd: build.cwd, encoding: "utf8" });
    return { ...(JSON.parse(out.trim().split("\n").pop()!) as { status: number; sha256: string; requests: number; bytes: number }), published };
  });
  const [a, b] = reads;
  if (a.status !== 200 || b.status !== 200 || a.sha256 !== b.sha256) throw new Error(`the builds' mirror clients answered differently: ${JSON.stringify(reads)}`);
  ctx.say(`  a cold mirror client over a static host: one place over thirty years (${first}..${last}, client.series), each build's client on its own dist`);
  for (const [build, r] of [[builds[0], a], [builds[1], b]] as const) {
    ctx.say(`    ${build.name.padEnd(16)} ${fmt(r.requests).padStart(4)} requests ${formatBytes(r.bytes).padStart(9)}   (the dist: ${formatBytes(r.published.bytesWritten)}, published in ${fmt(r.published.wallMs / 1000, 1)} s)`);
  }
  ctx.say(`    ratios: requests ${fmt(b.requests / a.requests, 2)}, bytes ${fmt(b.bytes / a.bytes, 2)} (goal: fewer bytes, no more requests)`);
  Object.assign(ctx.figures, { ab_mirror_30y_requests: b.requests, ab_mirror_30y_base_requests: a.requests, ab_mirror_30y_bytes: b.bytes, ab_mirror_30y_base_bytes: a.bytes });
  if (b.bytes >= a.bytes || b.requests > a.requests) ctx.fail(`the mirror client's thirty years: ${fmt(b.requests)} requests and ${formatBytes(b.bytes)} against ${fmt(a.requests)} and ${formatBytes(a.bytes)}`);
}

/** GET /api/v1/series of a whole year at another land place each request (every cell of the box in turn, as variedQueryScript). */
function seriesYearScript(): string {
  return `local n = 0
request = function()
  n = n + 1
  local cell = (n * 7919) % ${(LAND[0][1] - LAND[0][0]) * (LAND[1][1] - LAND[1][0])}
  local col = ${LAND[0][0]} + cell % ${LAND[0][1] - LAND[0][0]}
  local row = ${LAND[1][0]} + math.floor(cell / ${LAND[0][1] - LAND[0][0]})
  local lon = (112000 + 50 * col) / 1000
  local lat = (-10000 - 50 * row) / 1000
  return wrk.format("GET", string.format("/api/v1/series?lat=%.3f&lon=%.3f&start=2003-01-01&end=2003-12-31", lat, lon))
end
`;
}

/** Every row, or one alone: the mirror client's thirty years (BENCH_ONLY=mirror-ab), a place over the long archive (long-ab). */
export async function benchFormatAb(ctx: FormatAbContext, only?: "mirror" | "long"): Promise<void> {
  const baseline = buildBaseline(ctx.work, ctx.log);
  try {
    const current: Build = { name: "climate-dist-4", probe: resolve("build/publish-probe.js"), server: resolve("build/server.js"), cwd: process.cwd() };
    ctx.say();
    ctx.say(`${baseline.name} (${BASELINE_COMMIT}) beside this build, in turn, a new process each (start-up included), ${availableParallelism()} cores`);
    if (!only) {
      ctx.say(`publishing a SILO-like full-grid year`);
      const years = await benchVariable(ctx, [baseline, current], MAX_TEMP, makeSiloLikeMaxTemp);
      await benchReads(ctx, [baseline, current], years);
      await benchVariable(ctx, [baseline, current], findVariable("daily_rain")!, makeSiloLikeRain);
    }
    if (only !== "mirror") await benchLongPlace(ctx, [baseline, current]);
    if (only !== "long") await benchMirror(ctx, [baseline, current]);
  } finally {
    execFileSync("git", ["worktree", "remove", "--force", baseline.cwd], { stdio: "ignore" });
  }
}
