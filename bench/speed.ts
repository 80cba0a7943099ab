// make bench's rows of issue 35 (BENCH_ONLY=speed): the computed answers a client asks most, each beside sirv serving
// the very same answer bytes in the same run (wrk, 1 thread, 10 connections, a new place and period every request),
// the daily publish that closes a year, start-up to the first 200 and the server's memory after the runs. The
// machines are shared: every ratio is taken in rounds, server then sirv, and each round's ratio is printed beside
// the median, so the noise of the moment shows.

import { execFileSync } from "node:child_process";
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { makeDataRequest } from "../api/query/request.js";
import { colToLon, rowToLat } from "../format/grid.js";
import { MAX_TEMP } from "../format/variables.js";
import { formatBytes } from "../pipeline/progress.js";
import { dateToMemberPath } from "../sources/silo.js";
import { type Proc, type WrkResult, readRss, runWrk, startBareNode, startServer, startStatic, variedQueryScript } from "./load.js";
import { BENCH_CACHE, YEAR_CACHE, listDays, makeFullGridDays, makeSiloLikeWindowDays } from "./sources.js";
import { linkFolder, runProbe } from "./tools.js";

type Say = (line?: string) => void;
const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const VARIABLE = "air_temperature_max";
const YEAR = listDays("2003-01-01", 365);
/** The long archive of a 64 x 64 window (bench/revisions.ts makes the same inputs): annual files to 2002, daily after. */
const LONG = listDays("1950-01-01", 20_000);
const LONG_WINDOW: [number, number, number, number] = [400, 300, 64, 64];

export interface SpeedContext {
  work: string;
  say: Say;
  log: (line: string) => void;
  figures: Record<string, number>;
  seconds: number;
  /** a goal, met or not: counted for the last line; an unmet one prints `!! ...: a goal is not met` */
  goal: (met: boolean, what: string) => void;
}

/** A computed workload: the server's request script, and the one answer sirv serves as a file. */
interface Workload {
  name: string;
  key: string;
  /** a wrk Lua script making a different request each time */
  script: string;
  /** one such request (a GET's path, or a query's body): its answer's bytes are sirv's file */
  sample: string | { body: string };
}

/** Rounds of server then sirv, after 2 s of the same load unmeasured: each round's figures. */
async function measure(server: Proc, sirv: Proc, w: Workload, ctx: SpeedContext, rounds: number): Promise<{ s: WrkResult; base: WrkResult }[]> {
  const script = join(ctx.work, `${w.key}.lua`);
  await writeFile(script, w.script);
  await runWrk(server.url, 2, script);
  const out: { s: WrkResult; base: WrkResult }[] = [];
  for (let r = 0; r < rounds; r++) {
    const s = await runWrk(server.url, ctx.seconds, script);
    const base = await runWrk(`${sirv.url}/${w.key}.bin`, ctx.seconds);
    out.push({ s, base });
  }
  return out;
}

/** The rows of some workloads over one server: sirv serves each sample's bytes; each row its goal. */
async function runWorkloads(server: Proc, workloads: (Workload & { goal: number; p99?: number })[], ctx: SpeedContext, rounds: number): Promise<void> {
  const dir = join(ctx.work, `speed-static-${workloads[0].key}`);
  await mkdir(dir, { recursive: true });
  for (const w of workloads) {
    const headers = { "Accept-Encoding": "identity", "Content-Type": "application/json" };
    const res = typeof w.sample === "string" ? await fetch(`${server.url}${w.sample}`, { headers }) : await fetch(`${server.url}/api/v1/data/query`, { method: "POST", headers, body: w.sample.body });
    if (res.status !== 200) throw new Error(`${w.name}: ${res.status} ${await res.text()}`);
    await writeFile(join(dir, `${w.key}.bin`), new Uint8Array(await res.arrayBuffer()));
  }
  const sirv = await startStatic(dir, `${workloads[0].key}.bin`);
  try {
    for (const w of workloads) {
      const runs = await measure(server, sirv, w, ctx, rounds);
      const ratios = runs.map((r) => r.s.rps / r.base.rps);
      const ratio = median(ratios);
      const rps = median(runs.map((r) => r.s.rps));
      const p99 = median(runs.map((r) => r.s.p99Ms));
      const base = median(runs.map((r) => r.base.rps));
      const errors = runs.reduce((n, r) => n + r.s.errors, 0);
      const size = (await fetch(`${sirv.url}/${w.key}.bin`, { method: "HEAD" })).headers.get("content-length");
      Object.assign(ctx.figures, { [`speed_${w.key}_rps`]: rps, [`speed_${w.key}_p99_ms`]: p99, [`speed_${w.key}_sirv_rps`]: base, [`speed_${w.key}_ratio`]: ratio });
      const goalText = `>= ${w.goal}${w.p99 !== undefined ? `, p99 <= ${w.p99} ms` : ""}`;
      ctx.say(
        `  ${`${w.name} (${formatBytes(Number(size))})`.padEnd(62)} ${fmt(rps).padStart(6)} ${fmt(p99, 1).padStart(6)} ${fmt(base).padStart(7)} ${fmt(median(runs.map((r) => r.base.p99Ms)), 1).padStart(6)}  ${fmt(ratio, 2).padStart(5)}  rounds ${ratios.map((x) => fmt(x, 2)).join(" ")}  (goal ${goalText})`,
      );
      // an error answer (a 503 of load shedding, say) fails the row's goal: every request must be answered
      const errorText = errors > 0 ? `, ${errors} error answers (goal 0)` : "";
      ctx.goal(errors === 0 && ratio >= w.goal && (w.p99 === undefined || p99 <= w.p99), `${w.name}: ${fmt(ratio, 2)} of sirv, p99 ${fmt(p99, 1)} ms${errorText} (goal ${goalText})`);
    }
  } finally {
    await sirv.stop();
  }
}

/** Start-up: `make serve` to the first 200 of health, and a bare node HTTP server, in turn; the medians. */
async function measureStart(dist: string, ctx: SpeedContext, times: number): Promise<void> {
  const serve: number[] = [];
  const bare: number[] = [];
  for (let i = 0; i < times; i++) {
    const b = await startBareNode();
    bare.push(b.startMs);
    await b.stop();
    const s = await startServer(dist);
    serve.push(s.startMs);
    await s.stop();
  }
  const ms = median(serve);
  Object.assign(ctx.figures, { speed_startup_ms: ms, speed_bare_node_start_ms: median(bare) });
  ctx.say(`  make serve to the first 200               ${fmt(ms)} ms (median of ${times}: ${serve.map((x) => fmt(x)).join(" ")}) beside a bare node HTTP server ${fmt(median(bare))} ms  (goal <= 250 ms)`);
  ctx.goal(ms <= 250, `make serve to the first 200: ${fmt(ms)} ms (goal <= 250)`);
}

/** The daily publish that closes 2003: its grown folder onto the 364 days before, a new process each, from copies of one dist. */
async function measureYearClose(ctx: SpeedContext, yearCache: string): Promise<string> {
  const folder = await linkFolder(join(ctx.work, "speed-year"), yearCache, YEAR.slice(0, -1));
  const base = join(ctx.work, "speed-dist-364");
  // BENCH_SPEED_BASE: a dist of these 364 days published before (copied here, never written), to skip the longest step
  const given = process.env.BENCH_SPEED_BASE;
  if (given) await cp(given, base, { recursive: true });
  else ctx.log("publishing 364 full-grid days (the base of the year-closing publish)");
  const first = given ? null : runProbe(folder, base);
  await linkFolder(folder, yearCache, YEAR.slice(-1));
  const runs: Record<string, number>[] = [];
  let dist = "";
  for (let i = 0; i < 3; i++) {
    dist = join(ctx.work, `speed-dist-close-${i}`);
    await cp(base, dist, { recursive: true });
    runs.push(runProbe(folder, dist));
    if (i < 2) await rm(dist, { recursive: true, force: true });
  }
  await rm(base, { recursive: true, force: true });
  const wall = median(runs.map((r) => r.wallMs));
  const cpu = median(runs.map((r) => r.cpuMs));
  Object.assign(ctx.figures, { speed_year_close_s: wall / 1000, speed_year_close_cpu_s: cpu / 1000 });
  if (first) ctx.figures.speed_year_364_s = first.wallMs / 1000;
  const load = execFileSync("cat", ["/proc/loadavg"], { encoding: "utf8" }).split(" ")[0];
  const before = first ? `the 364 days before it in one publish ${fmt(first.wallMs / 1000, 1)} s (${fmt(first.wallMs / 364)} ms a day)` : `the 364 days before it from ${given}`;
  ctx.say(`  the daily publish that closes 2003          ${fmt(wall / 1000, 2)} s (median of 3: ${runs.map((r) => fmt(r.wallMs / 1000, 2)).join(" ")} s; CPU ${fmt(cpu / 1000, 2)} s on every thread)  (goal <= 8 s)`);
  ctx.say(`    beside: ${before}; load average ${load} on ${execFileSync("nproc", { encoding: "utf8" }).trim()} cores`);
  ctx.goal(wall <= 8000, `the year-closing daily publish: ${fmt(wall / 1000, 2)} s (goal <= 8 s)`);
  return dist;
}

/** The 64 x 64 window's archive of 20,000 days from 1950 (bench/revisions.ts's inputs), from its daily files. */
async function publishLong(ctx: SpeedContext, longCache: string): Promise<string> {
  // BENCH_SPEED_LONG: this archive published before (only read)
  if (process.env.BENCH_SPEED_LONG) return process.env.BENCH_SPEED_LONG;
  await makeSiloLikeWindowDays(longCache, LONG, LONG_WINDOW, ctx.log);
  const sources = join(ctx.work, "speed-long");
  for (const date of LONG) {
    const target = join(sources, dateToMemberPath(date, MAX_TEMP));
    await mkdir(dirname(target), { recursive: true });
    await symlink(resolve(longCache, dateToMemberPath(date, MAX_TEMP)), target);
  }
  const dist = join(ctx.work, "speed-dist-long");
  ctx.log(`publishing ${LONG.length} days of a 64 x 64 window`);
  runProbe(sources, dist);
  return dist;
}

/** A wrk script of the series route: one place of the window (moved inside its cell each time) over another 365 days. */
function seriesScript(): { script: string; sample: string } {
  const cells: [number, number][] = [];
  for (let r = 0; r < LONG_WINDOW[3]; r += 3) for (let c = 0; c < LONG_WINDOW[2]; c += 3) cells.push([rowToLat(LONG_WINDOW[1] + r), colToLon(LONG_WINDOW[0] + c)]);
  const periods = Array.from({ length: 500 }, (_, k) => {
    const i = (k * 37) % (LONG.length - 365);
    return [LONG[i], LONG[i + 364]];
  });
  const script = `local cells = {${cells.map(([lat, lon]) => `{${lat},${lon}}`).join(",")}}
local periods = {${periods.map(([s, e]) => `{"${s}","${e}"}`).join(",")}}
local n = 0
request = function()
  n = n + 1
  local cell = cells[1 + (n * 7) % #cells]
  local p = periods[1 + (n * 31) % #periods]
  local lat = string.format("%.4f", cell[1] + ((n * 17) % 41 - 20) * 0.001)
  local lon = string.format("%.4f", cell[2] + ((n * 29) % 41 - 20) * 0.001)
  return wrk.format("GET", "/api/v1/series?lat=" .. lat .. "&lon=" .. lon .. "&start=" .. p[1] .. "&end=" .. p[2])
end
`;
  const [lat, lon] = cells[9];
  return { script, sample: `/api/v1/series?lat=${lat}&lon=${lon}&start=${periods[0][0]}&end=${periods[0][1]}` };
}

/** A wrk script of Zarr chunks of `group`: another day and tile (maps) or another 4 x 4 cells (series) each request. */
function zarrScript(id: string, group: "maps" | "series"): string {
  const key =
    group === "maps"
      ? `(n % 365) .. "." .. (math.floor(n / 365) % 2) .. "." .. (1 + math.floor(n / 730) % 2)`
      : `"0." .. (40 + n % 100) .. "." .. (80 + (n * 7) % 100)`;
  return `local n = 0\nrequest = function()\n  n = n + 1\n  return wrk.format("GET", "/zarr/v2/${id}/${group}/${VARIABLE}/" .. ${key})\nend\n`;
}

/** The phase: the year-closing publish, then the server on that year and on the long archive, beside sirv. */
export async function benchSpeed(ctx: SpeedContext): Promise<void> {
  const rounds = Number(process.env.BENCH_SPEED_ROUNDS ?? 3);
  const yearCache = YEAR_CACHE;
  await makeFullGridDays(yearCache, YEAR, ctx.log);
  ctx.say();
  ctx.say("issue 35: computed answers beside sirv serving the same bytes, the year-closing publish, start-up and memory");
  const yearDist = await measureYearClose(ctx, yearCache);
  await measureStart(yearDist, ctx, 5);
  const longDist = await publishLong(ctx, join(BENCH_CACHE, "long64-silo-like"));
  ctx.say(`  (wrk, 1 thread, 10 connections, ${ctx.seconds} s a run after 2 s of warm-up; ${rounds} rounds of server then sirv, the medians)`);
  ctx.say(`  ${"workload".padEnd(62)} ${"req/s".padStart(6)} ${"p99".padStart(6)} ${"sirv".padStart(7)} ${"p99".padStart(6)}  ${"ratio".padStart(5)}`);
  const year = await startServer(yearDist);
  try {
    // the version closing the year (the dist also holds the 364 days before it, whose maps have no day index 364)
    const listed = ((await (await fetch(`${year.url}/api/v1/datasets`)).json()) as { datasets: { id: string; period_end: string }[] }).datasets;
    const id = listed.find((d) => d.period_end === YEAR[YEAR.length - 1])!.id;
    const point = variedQueryScript({ width: 1, height: 1, days: 31, format: "json" }, YEAR, [300, 650], [120, 420]);
    const pointBody = JSON.stringify(makeDataRequest([500, 300, 1, 1], "2003-06-01", "2003-07-01", { format: "json" }));
    await runWorkloads(
      year,
      [
        { name: "query, 1 cell x 31 days, JSON, another cell and period", key: "query_point", script: point, sample: { body: pointBody }, goal: 0.5, p99: 10 },
        { name: "Zarr maps chunk, another day and tile", key: "zarr_maps", script: zarrScript(id, "maps"), sample: `/zarr/v2/${id}/maps/${VARIABLE}/100.1.1`, goal: 0.3 },
        { name: "Zarr series chunk, another 4 x 4 cells", key: "zarr_series", script: zarrScript(id, "series"), sample: `/zarr/v2/${id}/series/${VARIABLE}/0.70.120`, goal: 1.0 },
      ],
      ctx,
      rounds,
    );
    const rss = readRss(year.pid);
    Object.assign(ctx.figures, { speed_rss_mb: rss.rssMb, speed_peak_rss_mb: rss.peakMb });
    ctx.say(`  the year's server after the runs: RSS ${fmt(rss.rssMb)} MB, peak ${fmt(rss.peakMb)} MB  (goal <= 150 MB)`);
    ctx.goal(rss.rssMb <= 150, `server RSS after the runs ${fmt(rss.rssMb)} MB (goal <= 150)`);
  } finally {
    await year.stop();
  }
  const long = await startServer(longDist);
  try {
    const { script, sample } = seriesScript();
    await runWorkloads(long, [{ name: "series route, 1 place x 365 days, CSV, another place and period", key: "series_365", script, sample, goal: 0.5, p99: 10 }], ctx, rounds);
  } finally {
    await long.stop();
  }
}

if (import.meta.url === pathToFileURL(resolve(process.argv[1] ?? "")).href) {
  const work = await mkdtemp(join(tmpdir(), "bench-speed-"));
  const figures: Record<string, number> = {};
  let goals = 0;
  let met = 0;
  try {
    await benchSpeed({
      work,
      say: (line = "") => console.log(line),
      log: (line) => process.stderr.write(`${line}\n`),
      figures,
      seconds: Number(process.env.BENCH_SECONDS ?? 5),
      goal: (ok, what) => {
        goals++;
        if (ok) met++;
        else console.log(`  !! ${what}: a goal is not met`);
      },
    });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  console.log(JSON.stringify({ ...Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, Math.round(v * 100) / 100])), goals_met: met, goals }));
}
