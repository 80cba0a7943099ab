// Two builds of the server on one dist, run in turn (A B, then B A, ...) because the machines here are shared and
// noisy and only runs taken side by side compare: make bench's computed rows of phase 2 (another cell x 31 days,
// another full tile, another 50 x 50 box each request; wrk, 1 thread, 10 connections), then its overload probe
// (256 connections of point series from a cold page cache, health asked every 20 ms on a kept-alive and on a new
// connection). Prints each run, then per row the median and range of each build and the B/A ratio of each round, in
// requests a second and in the server's CPU time an answer.
//
//   make build/server.js && cp build/server.js build/server-b.js    (and another build as build/server-a.js)
//   SERVER_A=build/server-a.js SERVER_B=build/server-b.js BENCH_DIST=<a published year of full-grid days, 2003> \
//     node_modules/.bin/tsx bench/ab.ts
//
// AB_ROUNDS (default 4) rounds of the rows, BENCH_SECONDS (5) each; AB_OVERLOAD_ROUNDS (2) of the overload,
// BENCH_OVERLOAD_SECONDS (30) each. Without BENCH_DIST a year is published first (bench/sources.ts makes its days).

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { publish } from "../pipeline/publish/publish.js";
import { type CountedRun, type Proc, type WrkResult, pacedScript, runWrk, runWrkCounting, startServerBundle, variedQueryScript, variedTileScript } from "./load.js";
import { dropPageCache } from "./operations.js";
import { YEAR_CACHE, listDays, makeFullGridDays } from "./sources.js";
import { linkFolder } from "./tools.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.AB_ROUNDS ?? 4);
const OVERLOAD_ROUNDS = Number(process.env.AB_OVERLOAD_ROUNDS ?? 2);
const OVERLOAD_SECONDS = Number(process.env.BENCH_OVERLOAD_SECONDS ?? 30);
const YEAR = listDays("2003-01-01", 365);
const LAND: [[number, number], [number, number]] = [[300, 650], [120, 420]];
const CLOCK_TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());
const BUILDS = { A: process.env.SERVER_A ?? "", B: process.env.SERVER_B ?? "" };
type Build = keyof typeof BUILDS;

const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const spread = (values: number[], digits = 0) => `${fmt(median(values), digits)} (${fmt(Math.min(...values), digits)}-${fmt(Math.max(...values), digits)})`;

/** A, B in even rounds and B, A in odd ones, so a drift of the machine's load falls on both. */
const orderOf = (round: number): Build[] => (round % 2 === 0 ? ["A", "B"] : ["B", "A"]);

async function withServer<T>(build: Build, dist: string, work: (server: Proc) => Promise<T>): Promise<T> {
  const server = await startServerBundle(BUILDS[build], dist, {}, () => {}); // its stop lines are not figures
  try {
    return await work(server);
  } finally {
    await server.stop();
  }
}

/** A run's figures, and the server's CPU time per answer (less moved by other work on the machine than req/s). */
type RowRun = WrkResult & { cpuMsPerAnswer: number };

interface Row {
  name: string;
  script: string;
  runs: Record<Build, RowRun[]>;
}

/** CPU time the process has used, every thread counted (ms), from /proc. */
function readCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}

async function makeRows(work: string, versionId: string): Promise<Row[]> {
  const shapes = [
    { name: "point series: another cell x 31 days each request", script: variedQueryScript({ width: 1, height: 1, days: 31, format: "json" }, YEAR, ...LAND) },
    { name: "another full 256 x 256 tile and date each request", script: variedTileScript(versionId, YEAR, ["r0-c1", "r0-c2", "r1-c1", "r1-c2"]) },
    { name: "another 50 x 50 box and date each request", script: variedQueryScript({ width: 50, height: 50, days: 1, format: "json" }, YEAR, ...LAND) },
  ];
  return Promise.all(
    shapes.map(async ({ name, script }, i) => {
      const path = join(work, `row-${i}.lua`);
      await writeFile(path, script);
      return { name, script: path, runs: { A: [], B: [] } };
    }),
  );
}

async function runRows(dist: string, rows: Row[]): Promise<void> {
  for (let round = 0; round < ROUNDS; round++) {
    for (const build of orderOf(round)) {
      await withServer(build, dist, async (server) => {
        await runWrk(server.url, 2, rows[0].script); // warm: the JIT and the catalog, as make bench's first query
        for (const row of rows) {
          const cpuBefore = readCpuMs(server.pid);
          const wrk = await runWrk(server.url, SECONDS, row.script);
          const result = { ...wrk, cpuMsPerAnswer: (readCpuMs(server.pid) - cpuBefore) / (wrk.rps * SECONDS) };
          row.runs[build].push(result);
          const errors = result.errors > 0 ? `  ${result.errors} errors (non-2xx or socket)` : "";
          console.log(`  round ${round + 1} ${build}  ${row.name.padEnd(52)} ${fmt(result.rps).padStart(7)} req/s  p99 ${fmt(result.p99Ms, 1).padStart(6)} ms  CPU ${fmt(result.cpuMsPerAnswer, 2)} ms an answer${errors}`);
        }
      });
    }
  }
}

function reportRows(rows: Row[]): void {
  console.log(`\nrows: median (range) of ${ROUNDS} runs each; B/A: the ratio of each round's pair`);
  for (const row of rows) {
    const rps = (b: Build) => row.runs[b].map((r) => r.rps);
    const ratios = rps("B").map((b, i) => b / rps("A")[i]);
    console.log(`  ${row.name}`);
    console.log(`    req/s   A ${spread(rps("A"))}   B ${spread(rps("B"))}   B/A ${ratios.map((r) => fmt(r, 2)).join(" ")}`);
    console.log(`    p99 ms  A ${spread(row.runs.A.map((r) => r.p99Ms), 1)}   B ${spread(row.runs.B.map((r) => r.p99Ms), 1)}`);
    const cpu = (b: Build) => row.runs[b].map((r) => r.cpuMsPerAnswer);
    console.log(`    CPU ms an answer  A ${spread(cpu("A"), 2)}   B ${spread(cpu("B"), 2)}   B/A ${cpu("B").map((b, i) => fmt(b / cpu("A")[i], 2)).join(" ")}`);
  }
}

interface Overload {
  load: CountedRun;
  kept: CountedRun;
  fresh: CountedRun;
  cold: boolean;
}

async function runOverloads(dist: string, work: string): Promise<Record<Build, Overload[]>> {
  const runs: Record<Build, Overload[]> = { A: [], B: [] };
  const series = variedQueryScript({ width: 1, height: 1, days: 31, format: "json" }, YEAR, ...LAND);
  for (let round = 0; round < OVERLOAD_ROUNDS; round++) {
    for (const build of orderOf(round)) {
      const result = await withServer(build, dist, async (server) => {
        const cold = dropPageCache() === null;
        const [load, kept, fresh] = await Promise.all([
          runWrkCounting(server.url, OVERLOAD_SECONDS, 256, 2, series, join(work, "overload.lua")),
          runWrkCounting(server.url, OVERLOAD_SECONDS, 1, 2, pacedScript("/api/health", 20), join(work, "health-kept.lua")),
          runWrkCounting(server.url, OVERLOAD_SECONDS, 1, 2, pacedScript("/api/health", 20, true), join(work, "health-fresh.lua")),
        ]);
        return { load, kept, fresh, cold };
      });
      runs[build].push(result);
      const { load, kept, fresh, cold } = result;
      console.log(
        `  overload ${round + 1} ${build}  ${cold ? "cold" : "WARM (page cache not dropped)"}: ${fmt(load.requests)} answers (200 ${fmt(load.statuses[200] ?? 0)}, 503 ${fmt(load.statuses[503] ?? 0)}), ` +
          `p99 ${fmt(load.p99Ms, 1)} ms, over 2 s ${load.timeouts}; health p99 kept-alive ${fmt(kept.p99Ms, 1)} ms, new connection ${fmt(fresh.p99Ms, 1)} ms, max ${fmt(Math.max(kept.maxMs, fresh.maxMs), 1)} ms`,
      );
    }
  }
  return runs;
}

function reportOverloads(runs: Record<Build, Overload[]>): void {
  console.log(`\noverload: median (range) of ${OVERLOAD_ROUNDS} runs each`);
  const line = (what: string, of: (o: Overload) => number, digits = 0) => console.log(`  ${what.padEnd(34)} A ${spread(runs.A.map(of), digits)}   B ${spread(runs.B.map(of), digits)}`);
  line("answers in the run", (o) => o.load.requests);
  line("200s", (o) => o.load.statuses[200] ?? 0);
  line("load p99 ms", (o) => o.load.p99Ms, 1);
  line("health p99 ms, kept-alive", (o) => o.kept.p99Ms, 1);
  line("health p99 ms, a new connection", (o) => o.fresh.p99Ms, 1);
  line("health max ms", (o) => Math.max(o.kept.maxMs, o.fresh.maxMs), 1);
}

async function prepareDist(work: string): Promise<string> {
  if (process.env.BENCH_DIST) return process.env.BENCH_DIST;
  const cache = YEAR_CACHE;
  await makeFullGridDays(cache, YEAR, (line) => console.error(line));
  const dist = join(work, "dist-year");
  console.error("publishing a year of full-grid days (set BENCH_DIST to a published one to skip this)");
  await publish({ sources: await linkFolder(join(work, "year"), cache, YEAR), dist, observations: false, log: () => {} });
  return dist;
}

if (!BUILDS.A || !BUILDS.B) throw new Error("give SERVER_A and SERVER_B: two server bundles (see the header of bench/ab.ts)");
const work = await mkdtemp(join(tmpdir(), "bench-ab-"));
try {
  const dist = await prepareDist(work);
  const versionId = await withServer("A", dist, async (server) => ((await (await fetch(`${server.url}/api/v1/datasets`)).json()) as { datasets: { id: string }[] }).datasets[0].id);
  console.log(`A/B on ${new Date().toISOString().slice(0, 16)}Z: A ${BUILDS.A}, B ${BUILDS.B}, dist ${dist}`);
  const rows = await makeRows(work, versionId);
  if (ROUNDS > 0) await runRows(dist, rows);
  const overloads = OVERLOAD_ROUNDS > 0 ? await runOverloads(dist, work) : null;
  if (ROUNDS > 0) reportRows(rows);
  if (overloads) reportOverloads(overloads);
} finally {
  await rm(work, { recursive: true, force: true });
}
