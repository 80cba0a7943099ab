// The operations phases of `make bench` (issue 16): the whole grid's 413, an overload from a cold page cache, SIGTERM
// during load, and a soak with a live publish. Each phase can run alone: BENCH_ONLY=operations (all four) or
// BENCH_ONLY=plans|overload|stop|soak, with BENCH_DIST=<a published year of full-grid days> to skip publishing one.

import { execFileSync } from "node:child_process";
import { cp } from "node:fs/promises";
import http from "node:http";
import { join } from "node:path";
import { bboxToWindow } from "../format/grid.js";
import { listDates } from "../format/dates.js";
import { makeDataRequest } from "../api/query/request.js";
import { type CountedRun, type Proc, pacedScript, readRss, runWrkCounting, startServer, variedQueryScript } from "./load.js";
import { runSoak } from "./soak.js";
import type { OperationsContext } from "./tools.js";

const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const LAND: [[number, number], [number, number]] = [[300, 650], [120, 420]];
const OVERLOAD_SECONDS = Number(process.env.BENCH_OVERLOAD_SECONDS ?? 30);
/** the soak's length; the issue's is 10 minutes (shorten it while developing) */
const SOAK_SECONDS = Number(process.env.BENCH_SOAK_SECONDS ?? 600);

/** One POST over a kept-alive connection: status, bytes and the milliseconds to the last byte (the body kept as bytes). */
const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });
function post(url: string, body: unknown): Promise<{ status: number; bytes: number; ms: number; json: () => any }> {
  const text = JSON.stringify(body);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const headers = { "content-type": "application/json", "accept-encoding": "identity", "content-length": Buffer.byteLength(text) };
    const req = http.request(url, { method: "POST", agent: keepAlive, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const ms = performance.now() - started;
        const bytes = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, bytes: bytes.length, ms, json: () => JSON.parse(bytes.toString("utf8")) });
      });
    });
    req.on("error", reject);
    req.end(text);
  });
}

/** Drops the page cache (root only): the archive's pieces come from the disk again. Null when done, else why not. */
export function dropPageCache(): string | null {
  try {
    execFileSync("sh", ["-c", "sync; echo 3 > /proc/sys/vm/drop_caches"], { stdio: "pipe" });
    return null;
  } catch (err) {
    return String((err as { stderr?: Buffer }).stderr ?? err).trim() || "not permitted";
  }
}

// ---------------------------------------------------------------------------------------------------------------

/** The whole grid over 31 days: the 413's size and time in both formats, and its chain of plans to the end. */
export async function runPlans(ctx: OperationsContext): Promise<void> {
  const server = await startServer(ctx.dist);
  try {
    ctx.say();
    ctx.say("the whole grid (841 x 681) over 31 days: the 413 and its chain of planRest (median of 15 requests each, after 5)");
    for (const format of ["json", "csv"] as const) {
      const request = makeDataRequest([0, 0, 841, 681], "2003-03-01", "2003-03-31", { format });
      const times: number[] = [];
      let first = await post(`${server.url}/api/v1/data/query`, request);
      for (let i = 0; i < 20; i++) times.push((first = await post(`${server.url}/api/v1/data/query`, request)).ms);
      times.splice(0, 5); // the first few run before the JIT has compiled the plan's loop
      times.sort((a, b) => a - b);
      const { rows, refusals, largest } = await followChain(server.url, request);
      Object.assign(ctx.figures, { [`whole_grid_413_${format}_ms`]: times[7], [`whole_grid_413_${format}_bytes`]: first.bytes, [`whole_grid_${format}_chain_rows`]: rows });
      ctx.say(`  ${format.padEnd(4)} ${first.status}  ${fmt(first.bytes)} bytes (goal <= 1,000,000)  median ${fmt(times[7], 1)} ms, fastest ${fmt(times[0], 1)} ms (goal <= 20)  chain: ${refusals} 413s, largest ${fmt(largest)} bytes, ${fmt(rows)} rows (goal 17,754,351)`);
      if (first.status !== 413 || largest > 1_000_000 || rows !== 17_754_351) ctx.fail(`the whole grid's ${format} 413 chain`);
    }
  } finally {
    await server.stop();
  }
}

/** Follows plan and planRest to the end, counting the rows of the parts by arithmetic (each part within the limits). */
async function followChain(url: string, request: unknown): Promise<{ rows: number; refusals: number; largest: number }> {
  let rows = 0;
  let refusals = 0;
  let largest = 0;
  for (let next: unknown = request; next; ) {
    const answer = await post(`${url}/api/v1/data/query`, next);
    if (answer.status !== 413) throw new Error(`the chain answered ${answer.status}`);
    refusals++;
    largest = Math.max(largest, answer.bytes);
    const body = answer.json();
    for (const part of body.plan) {
      const window = bboxToWindow(part.region.bbox)!;
      rows += window[2] * window[3] * listDates(part.period.start, part.period.end).length;
    }
    next = body.planRest;
  }
  return { rows, refusals, largest };
}

// ---------------------------------------------------------------------------------------------------------------

/** Percentiles of a wrk probe run (keep-alive or a new connection each time). */
function describeProbe(name: string, probe: CountedRun): string {
  return `${name}: ${fmt(probe.requests)} asked, p50 ${fmt(probe.p50Ms, 1)} ms, p99 ${fmt(probe.p99Ms, 1)} ms, max ${fmt(probe.maxMs, 1)} ms`;
}

/**
 * 256 connections of varied 31-day point series (wrk, a 2 s timeout) from a cold page cache, health asked every
 * 20 ms meanwhile on a kept-alive connection and on a new connection each time.
 */
export async function runOverload(ctx: OperationsContext): Promise<void> {
  let stderr = "";
  const server = await startServer(ctx.dist, {}, (text) => (stderr += text));
  try {
    const cold = dropPageCache();
    const series = variedQueryScript({ width: 1, height: 1, days: 31, format: "json" }, ctx.year, ...LAND);
    const [load, kept, fresh] = await Promise.all([
      runWrkCounting(server.url, OVERLOAD_SECONDS, 256, 2, series, join(ctx.work, "overload.lua")),
      runWrkCounting(server.url, OVERLOAD_SECONDS, 1, 2, pacedScript("/api/health", 20), join(ctx.work, "health-kept.lua")),
      runWrkCounting(server.url, OVERLOAD_SECONDS, 1, 2, pacedScript("/api/health", 20, true), join(ctx.work, "health-fresh.lua")),
    ]);
    const rss = readRss(server.pid);
    const answered = (load.statuses[200] ?? 0) + (load.statuses[503] ?? 0);
    const others = load.requests - answered;
    const resets = load.socketErrors.connect + load.socketErrors.read + load.socketErrors.write;
    const healthP99 = Math.max(kept.p99Ms, fresh.p99Ms);
    Object.assign(ctx.figures, {
      overload_requests: load.requests,
      overload_200: load.statuses[200] ?? 0,
      overload_503: load.statuses[503] ?? 0,
      overload_other_statuses: others,
      overload_503_without_retry_after: load.noRetryAfter,
      overload_over_2s: load.timeouts,
      overload_max_ms: load.maxMs,
      overload_socket_errors: resets,
      overload_health_p99_ms: healthP99,
      overload_health_kept_p99_ms: kept.p99Ms,
      overload_health_fresh_p99_ms: fresh.p99Ms,
      overload_peak_rss_mb: rss.peakMb,
    });
    ctx.say();
    ctx.say(`overload: 256 connections of varied 31-day point series for ${OVERLOAD_SECONDS} s (wrk, 2 s timeout), ${cold ? `page cache NOT dropped (${cold})` : "from a cold page cache"}`);
    ctx.say(`  answered ${fmt(load.requests)}: 200 ${fmt(load.statuses[200] ?? 0)}, 503 ${fmt(load.statuses[503] ?? 0)} (without Retry-After ${load.noRetryAfter}), other ${others}  (goal: 200 or 503 with Retry-After)`);
    ctx.say(`  latency p50 ${fmt(load.p50Ms, 1)} ms, p99 ${fmt(load.p99Ms, 1)} ms, max ${fmt(load.maxMs)} ms; over 2 s ${load.timeouts}  (goal 0)`);
    ctx.say(`  socket errors (connect, read, write) ${load.socketErrors.connect}, ${load.socketErrors.read}, ${load.socketErrors.write}  (goal 0: no connection reset)`);
    ctx.say(`  health every 20 ms: ${describeProbe("kept-alive", kept)}; ${describeProbe("a new connection each", fresh)}  (goal p99 <= 50 ms)`);
    ctx.say(`  server RSS peak ${fmt(rss.peakMb)} MB (goal <= 300 MB); ${(/busy: .*/.exec(stderr) ?? [""])[0]}`);
    if (others > 0 || load.noRetryAfter > 0 || load.timeouts > 0 || resets > 0 || rss.peakMb > 300) ctx.fail("the overload's answers");
    if (healthP99 > 50) ctx.say(`  !! health p99 ${fmt(healthP99, 1)} ms is over the 50 ms goal (docs/operating.md, "Limits and settings")`);
  } finally {
    await server.stop();
  }
}

// ---------------------------------------------------------------------------------------------------------------

/**
 * One request over a fresh connection, its body sent in two halves: the second when `rest` resolves. Its status,
 * and whether the answer came back whole, or the error that cut it.
 */
function askInTwo(url: string, body: string, localAddress: string, rest: Promise<unknown>): Promise<{ status: number; complete: boolean; error?: string }> {
  return new Promise((resolve) => {
    const headers = { "content-type": "application/json", "content-length": Buffer.byteLength(body) };
    const req = http.request(`${url}/api/v1/data/query`, { method: "POST", agent: false, localAddress, headers }, (res) => {
      let bytes = 0;
      res.on("data", (c: Buffer) => (bytes += c.length));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, complete: bytes === Number(res.headers["content-length"]) }));
      res.on("error", (err) => resolve({ status: res.statusCode ?? 0, complete: false, error: err.message }));
    });
    req.on("error", (err) => resolve({ status: 0, complete: false, error: err.message }));
    req.write(body.slice(0, 100));
    void rest.then(() => req.end(body.slice(100)));
  });
}

/** SIGTERM while 64 connections load the server and 16 large queries are being answered: none cut off. */
export async function runStopUnderLoad(ctx: OperationsContext): Promise<void> {
  let stderr = "";
  const server: Proc = await startServer(ctx.dist, {}, (text) => (stderr += text));
  const series = variedQueryScript({ width: 1, height: 1, days: 31, format: "json" }, ctx.year, ...LAND);
  const load = runWrkCounting(server.url, 8, 64, 5, series, join(ctx.work, "stop.lua"));
  await new Promise((r) => setTimeout(r, 3000));
  // 16 requests for answers of about a megabyte each (100 x 100 cells, CSV), begun (headers and half the body
  // read) before the signal, their bodies completed 20 ms after it; each from its own address: its own line for
  // a turn beside the load's
  const bodies = Array.from({ length: 16 }, (_, i) => JSON.stringify(makeDataRequest([300 + i * 20, 150 + i * 10, 100, 100], ctx.year[40 + i * 9], ctx.year[40 + i * 9], { format: "csv" })));
  let release = () => {};
  const rest = new Promise<void>((resolve) => (release = resolve));
  const inFlight = bodies.map((body, i) => askInTwo(server.url, body, `127.0.0.${10 + i}`, rest));
  await new Promise((r) => setTimeout(r, 500));
  setTimeout(release, 20);
  const signalled = performance.now();
  const exited = new Promise<number>((resolve) => server.child.once("exit", (code) => resolve(code ?? -1)));
  process.kill(server.pid, "SIGTERM");
  const [answers, code] = await Promise.all([Promise.all(inFlight), exited]);
  const exitMs = performance.now() - signalled;
  const loadRun = await load;
  const cut = answers.filter((a) => !a.complete).length;
  const drained = /stopped: every begun request answered, in (\d+) ms/.exec(stderr);
  Object.assign(ctx.figures, { stop_cut_off: cut, stop_exit_ms: exitMs, stop_exit_code: code });
  ctx.say();
  ctx.say("SIGTERM during load (64 connections of point series; 16 requests for one-megabyte CSV answers begun before it, their bodies finished after it)");
  ctx.say(`  the 16 begun answers: ${16 - cut} complete (${answers.map((a) => a.status).join(" ")}), ${cut} cut off  (goal 0)`);
  ctx.say(`  exit ${code} after ${fmt(exitMs)} ms (goal: within the drain timeout, 10,000 ms); the server: ${drained ? drained[0] : stderr.split("\n").filter(Boolean).slice(-1)[0]}`);
  const { connect, read, write } = loadRun.socketErrors;
  ctx.say(`  the load (wrk, 64 connections): ${fmt(loadRun.requests)} answers, read errors ${read} (a request cut off would be one); after the exit its reconnections fail: connect ${connect}, write ${write}`);
  if (cut > 0 || code !== 0 || exitMs > 10_000) ctx.fail("SIGTERM during load");
}

// ---------------------------------------------------------------------------------------------------------------

/** The phases BENCH_ONLY names (all of them for `operations`), on a year dist. */
export async function runOperations(ctx: OperationsContext, only: string): Promise<void> {
  const wanted = (phase: string) => only === "" || only === "operations" || only.split(",").includes(phase);
  if (wanted("plans")) await runPlans(ctx);
  if (wanted("overload")) await runOverload(ctx);
  if (wanted("stop")) await runStopUnderLoad(ctx);
  if (wanted("soak")) {
    const dist = join(ctx.work, "dist-soak");
    await cp(ctx.dist, dist, { recursive: true });
    await runSoak({ ...ctx, dist }, SOAK_SECONDS);
  }
}
