// Bench phase of GET /api/v1/series (docs/contract.md §8.2), beside sirv serving the same answer bytes in the same run:
// one place and variable over 365 days, a different place and period each request (goal >= 0.5 of sirv's
// requests/s); one place over a whole 20,000-day archive at 4 connections (goal p50 <= 20 ms, p99 <= 60 ms);
// 10 places x 5 variables x 10 years in one call (goal <= 150 ms) and the server's memory under 16 such calls at once
// (goal <= 250 MB). The dist: 20,000 small-window days of max_temp (the long archive's inputs) and ten years of the
// other four variables over the same cells, published into a temporary folder.
//
// Runs alone too: node_modules/.bin/tsx bench/series-route.ts (makes its inputs in .cache/bench once; needs wrk).

import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { dateToDayNumber } from "../format/dates.js";
import { type Window, colToLon, rowToLat } from "../format/grid.js";
import type { Variable } from "../format/variables.js";
import { FIVE_VARIABLES as VARIABLES } from "./variable-sources.js";
import { writeSiloTiff } from "../pipeline/ingest/geotiff.js";
import { formatBytes } from "../pipeline/progress.js";
import { publish } from "../pipeline/publish/publish.js";
import { dateToMemberPath } from "../sources/silo.js";
import { type Proc, readRss, runWrk, startServer, startStatic } from "./load.js";
import { BENCH_CACHE, listDays, makeSiloLikeWindowDays } from "./sources.js";

type Say = (line?: string) => void;
const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** The long archive's cells and days (bench/run.ts phase 3 makes the same files). */
const WINDOW: Window = [400, 300, 8, 8];
const LONG = listDays("1950-01-01", 20_000);
/** The other four variables over the archive's last ten years. */
const TEN_YEARS = LONG.slice(-3653);

export interface SeriesBenchContext {
  work: string;
  say: Say;
  log: (line: string) => void;
  figures: Record<string, number>;
  seconds: number;
  /** a goal is not met */
  fail: (why: string) => void;
}

/** Small-window days of a variable other than max_temp, within its plausible range, every day distinct. */
async function makeVariableDays(folder: string, dates: string[], variable: Variable, log: (line: string) => void): Promise<void> {
  const missing = dates.filter((d) => !existsSync(join(folder, dateToMemberPath(d, variable))));
  if (missing.length === 0) return;
  log(`making ${missing.length} small-window ${variable.silo} days in ${folder} (once; kept for later runs)`);
  const [low, high] = variable.plausible;
  const span = Math.min(high - Math.max(low, 0), 40) * 10;
  for (const date of missing) {
    const day = dateToDayNumber(date);
    const values = Float32Array.from({ length: WINDOW[2] * WINDOW[3] }, (_, i) => Math.fround(Math.max(low, 0) + (((day * 7 + i * 13) % span) + span) % span / 10));
    await writeSiloTiff(join(folder, dateToMemberPath(date, variable)), WINDOW, values);
  }
}

/** A sources folder of links to the cached files: max_temp's 20,000 days, the others' ten years. */
async function linkSources(folder: string, caches: Map<Variable, string>): Promise<void> {
  for (const [variable, cache] of caches) {
    for (const date of variable.silo === "max_temp" ? LONG : TEN_YEARS) {
      const target = join(folder, dateToMemberPath(date, variable));
      await mkdir(join(target, ".."), { recursive: true });
      await symlink(resolve(cache, dateToMemberPath(date, variable)), target);
    }
  }
}

async function publishDist(work: string, log: (line: string) => void): Promise<string> {
  const caches = new Map<Variable, string>();
  for (const variable of VARIABLES) {
    const cache = join(BENCH_CACHE, variable.silo === "max_temp" ? "long-silo-like" : `series-${variable.silo}`);
    if (variable.silo === "max_temp") await makeSiloLikeWindowDays(cache, LONG, WINDOW, log);
    else await makeVariableDays(cache, TEN_YEARS, variable, log);
    caches.set(variable, cache);
  }
  const sources = join(work, "series-sources");
  await linkSources(sources, caches);
  const dist = join(work, "dist-series");
  log(`publishing ${LONG.length} days of max_temp and ${TEN_YEARS.length} of four more variables`);
  await publish({ sources, dist, observations: false, explorer: false, log: () => {} });
  return dist;
}

/** Every cell centre of the window, as [lat, lon]. */
function places(): [number, number][] {
  const out: [number, number][] = [];
  for (let r = WINDOW[1]; r < WINDOW[1] + WINDOW[3]; r++) for (let c = WINDOW[0]; c < WINDOW[0] + WINDOW[2]; c++) out.push([rowToLat(r), colToLon(c)]);
  return out;
}

/**
 * A wrk Lua script asking a different series call each time: `places` places from the window (a point moved inside
 * its cell each time, so no two requests are the same text and no answer cache serves them), `query` after them.
 */
function seriesScript(count: number, query: string, periods: [string, string][] = []): string {
  const cells = places();
  return `local cells = {${cells.map(([lat, lon]) => `{${lat},${lon}}`).join(",")}}
local periods = {${periods.map(([s, e]) => `{"${s}","${e}"}`).join(",")}}
local n = 0
request = function()
  n = n + 1
  local lats, lons = {}, {}
  for k = 1, ${count} do
    local cell = cells[1 + (n * 7 + k * 13) % #cells]
    lats[k] = string.format("%.4f", cell[1] + ((n * 17 + k) % 41 - 20) * 0.001)
    lons[k] = string.format("%.4f", cell[2] + ((n * 29 + k) % 41 - 20) * 0.001)
  end
  local path = "/api/v1/series?lat=" .. table.concat(lats, ",") .. "&lon=" .. table.concat(lons, ",") .. "${query}"
  if #periods > 0 then
    local p = periods[1 + (n * 31) % #periods]
    path = path .. "&start=" .. p[1] .. "&end=" .. p[2]
  end
  return wrk.format("GET", path)
end
`;
}

interface Shape {
  name: string;
  key: string;
  file: string;
  /** the path of the one call sirv's copy is the answer of */
  sample: string;
  script: string;
  connections: number;
}

async function fetchBytes(url: string): Promise<Uint8Array> {
  const res = await fetch(url, { headers: { "Accept-Encoding": "identity" } });
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return new Uint8Array(await res.arrayBuffer());
}

/** Sequential calls of 10 places x 5 variables x 10 years, each at other places: their times in ms. */
async function timeWideCalls(url: string, count: number): Promise<number[]> {
  const cells = places();
  const [start, end] = [TEN_YEARS[0], TEN_YEARS[TEN_YEARS.length - 1]];
  const times: number[] = [];
  for (let n = 0; n < count; n++) {
    const chosen = Array.from({ length: 10 }, (_, k) => cells[(n * 11 + k * 5) % cells.length]);
    const path = `/api/v1/series?lat=${chosen.map(([lat]) => (lat - n * 0.0007).toFixed(4)).join(",")}&lon=${chosen.map(([, lon]) => lon.toFixed(4)).join(",")}&variables=${VARIABLES.map((v) => v.silo).join(",")}&start=${start}&end=${end}`;
    const t = performance.now();
    await fetchBytes(`${url}${path}`);
    times.push(performance.now() - t);
  }
  return times.sort((a, b) => a - b);
}

function shapesOf(): Shape[] {
  const cells = places();
  const [lat, lon] = cells[9];
  const periods: [string, string][] = Array.from({ length: 500 }, (_, k) => {
    const i = (k * 37) % (LONG.length - 365);
    return [LONG[i], LONG[i + 364]];
  });
  const all = VARIABLES.map((v) => v.silo).join(",");
  const wide = `&variables=${all}&start=${TEN_YEARS[0]}&end=${TEN_YEARS[TEN_YEARS.length - 1]}`;
  return [
    { name: "1 place x 365 days, 1 variable, CSV, another place and period each request", key: "series_365", file: "series-365.csv", sample: `/api/v1/series?lat=${lat}&lon=${lon}&start=${periods[0][0]}&end=${periods[0][1]}`, script: seriesScript(1, "", periods), connections: 10 },
    { name: `1 place x ${fmt(LONG.length)} days (the whole archive), CSV, 4 connections`, key: "series_archive", file: "series-archive.csv", sample: `/api/v1/series?lat=${lat}&lon=${lon}`, script: seriesScript(1, ""), connections: 4 },
    { name: "10 places x 5 variables x 10 years, CSV, 16 connections", key: "series_wide", file: "series-wide.csv", sample: `/api/v1/series?lat=${cells.slice(0, 10).map(([a]) => a).join(",")}&lon=${cells.slice(0, 10).map(([, b]) => b).join(",")}${wide}`, script: seriesScript(10, wide), connections: 16 },
  ];
}

/** The server and sirv, each shape: requests/s, p50 and p99, beside sirv serving the sample answer's bytes. */
async function runShapes(server: Proc, sirv: Proc, shapes: Shape[], ctx: SeriesBenchContext): Promise<Map<string, { rps: number; p50: number; p99: number; base: number }>> {
  const out = new Map<string, { rps: number; p50: number; p99: number; base: number }>();
  for (const shape of shapes) {
    const script = join(ctx.work, `${shape.key}.lua`);
    await writeFile(script, shape.script);
    // two seconds of the same load first, not counted: the chunks of the archive's places come into the caches
    await runWrk(server.url, 2, script, {}, shape.connections);
    const s = await runWrk(server.url, ctx.seconds, script, {}, shape.connections);
    const base = await runWrk(`${sirv.url}/${shape.file}`, ctx.seconds, undefined, {}, shape.connections);
    if (s.errors > 0) ctx.fail(`${shape.name}: the server answered ${s.errors} errors`);
    out.set(shape.key, { rps: s.rps, p50: s.p50Ms, p99: s.p99Ms, base: base.rps });
    const sirvText = `${fmt(base.rps)} (${fmt(base.p50Ms, 1)}/${fmt(base.p99Ms, 1)})`;
    ctx.say(`  ${shape.name.padEnd(78)} ${fmt(s.rps).padStart(7)} ${fmt(s.p50Ms, 1).padStart(7)} ${fmt(s.p99Ms, 1).padStart(7)} ${sirvText.padStart(22)} ${fmt(s.rps / base.rps, 2).padStart(6)}`);
    Object.assign(ctx.figures, { [`${shape.key}_rps`]: s.rps, [`${shape.key}_p50_ms`]: s.p50Ms, [`${shape.key}_p99_ms`]: s.p99Ms, [`${shape.key}_ratio`]: s.rps / base.rps });
  }
  return out;
}

/** The phase: publish the dist, start the server and sirv over the same answers, measure, check the goals. */
export async function benchSeriesRoute(ctx: SeriesBenchContext): Promise<void> {
  const dist = await publishDist(ctx.work, ctx.log);
  // 16 calls at once from one client wait for their turns (two at work on two cores) rather than being shed after
  // the default 500 ms: the goal is the memory of 16 such calls admitted, not the shedding of them
  const server = await startServer(dist, { WORK_QUEUE_MS: "10000" });
  const procs: Proc[] = [server];
  try {
    const shapes = shapesOf();
    const staticDir = join(ctx.work, "series-static");
    await mkdir(staticDir, { recursive: true });
    const sizes: string[] = [];
    for (const shape of shapes) {
      const bytes = await fetchBytes(`${server.url}${shape.sample}`);
      await writeFile(join(staticDir, shape.file), bytes);
      sizes.push(`${shape.file} ${formatBytes(bytes.byteLength)}`);
    }
    const sirv = await startStatic(staticDir, shapes[0].file);
    procs.push(sirv);
    const wide = await timeWideCalls(server.url, 21);
    ctx.say();
    ctx.say(`GET /api/v1/series vs sirv serving the same answer bytes (wrk, 1 thread, ${ctx.seconds} s each; answers: ${sizes.join(", ")})`);
    ctx.say(`  ${"workload (after 2 s of warm-up)".padEnd(78)} ${"req/s".padStart(7)} ${"p50 ms".padStart(7)} ${"p99 ms".padStart(7)} ${"sirv req/s (p50/p99)".padStart(22)} ${"ratio".padStart(6)}`);
    const results = await runShapes(server, sirv, shapes, ctx);
    const rss = readRss(server.pid);
    const [one, archive] = [results.get("series_365")!, results.get("series_archive")!];
    const median = wide[Math.floor(wide.length / 2)];
    Object.assign(ctx.figures, { series_wide_call_ms: median, series_wide_call_max_ms: wide[wide.length - 1], series_rss_mb: rss.rssMb, series_peak_rss_mb: rss.peakMb });
    ctx.say(`  10 places x 5 variables x 10 years, one call at a time: median ${fmt(median, 1)} ms, slowest ${fmt(wide[wide.length - 1], 1)} ms of ${wide.length} (goal <= 150 ms)`);
    ctx.say(`  server memory after 16 such calls at once: RSS ${fmt(rss.rssMb)} MB, peak ${fmt(rss.peakMb)} MB (goal <= 250 MB)`);
    const goals: [boolean, string][] = [
      [one.rps / one.base >= 0.5, `365 days at a place: ${fmt(one.rps / one.base, 2)} of sirv (goal >= 0.5)`],
      [archive.p50 <= 20 && archive.p99 <= 60, `the whole archive at a place: p50 ${fmt(archive.p50, 1)} ms, p99 ${fmt(archive.p99, 1)} ms (goal <= 20 and 60)`],
      [median <= 150, `10 places x 5 variables x 10 years: ${fmt(median, 1)} ms (goal <= 150)`],
      [rss.peakMb <= 250, `server peak RSS ${fmt(rss.peakMb)} MB (goal <= 250)`],
    ];
    for (const [met, what] of goals) if (!met) ctx.fail(what);
  } finally {
    await Promise.all(procs.map((p) => p.stop()));
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const work = await mkdtemp(join(tmpdir(), "bench-series-"));
  const figures: Record<string, number> = {};
  let failures = 0;
  try {
    await benchSeriesRoute({
      work,
      say: (line = "") => console.log(line),
      log: (line) => process.stderr.write(`${line}\n`),
      figures,
      seconds: Number(process.env.BENCH_SECONDS ?? 5),
      fail: (why) => {
        failures++;
        console.log(`  !! ${why}: a goal is not met`);
      },
    });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  console.log(JSON.stringify({ ...Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, Math.round(v * 100) / 100])), failures }));
  process.exit(failures > 0 ? 1 : 0);
}
