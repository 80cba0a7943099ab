// Bench phase of GET /api/v1/series with bbox= (docs/contract.md §8.2): a 0.2 degree box (4 x 4
// cells) over 30 years of the long archive, one call at a time, another box each call, as CSV (goal p50 <= 100 ms)
// and as NetCDF (the same goal); then 8 NetCDF answers of the bound's size (32 x 32 cells x 9,765 days, 9,999,360
// values, 40 MB each) read at once, the server's peak RSS beside its goal (<= 250 MB: memory does not grow with the
// answers). The dist: the long archive's 64 x 64 SILO-like cells (bench/sources.ts makeSiloLikeWindowDays, the
// revision rows' inputs, .cache/bench/long64-silo-like), its last 30 years published into a temporary folder.
//
// Runs alone: BENCH_ONLY=box node_modules/.bin/tsx bench/run.ts (or node_modules/.bin/tsx bench/series-box.ts).

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type Window, colToEdgeLon, rowToEdgeLat } from "../format/grid.js";
import { MAX_NETCDF_VALUES } from "../api/series/formats/netcdf.js";
import { formatBytes } from "../pipeline/progress.js";
import { publish } from "../pipeline/publish/publish.js";
import { type Proc, readRss, startServer } from "./load.js";
import { BENCH_CACHE, listDays, makeSiloLikeWindowDays } from "./sources.js";
import { linkFolder } from "./tools.js";

type Say = (line?: string) => void;
const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** The long archive's cells (bench/revisions.ts makes the same files) and days: 20,001 from 1950-01-01. */
const WINDOW: Window = [400, 300, 64, 64];
const LONG = listDays("1950-01-01", 20_001);
/** Its last thirty years (10,958 days). */
const THIRTY = LONG.slice(-10_958);
/** A box of the bound's size: 32 x 32 cells over the most days that keep it within MAX_NETCDF_VALUES. */
const BOUND_SIDE = 32;
const BOUND_DAYS = Math.floor(MAX_NETCDF_VALUES / (BOUND_SIDE * BOUND_SIDE));

export interface BoxBenchContext {
  work: string;
  say: Say;
  log: (line: string) => void;
  figures: Record<string, number>;
  /** a goal is not met */
  fail: (why: string) => void;
}

/** The edges of the cells [col, row, width, height]: a box whose centres are exactly those cells. */
const bboxOf = (col: number, row: number, width: number, height: number) => [colToEdgeLon(col), rowToEdgeLat(row + height), colToEdgeLon(col + width), rowToEdgeLat(row)].join(",");

/** Reads an answer to its end, keeping none of it: its status and byte count. */
async function drain(url: string): Promise<{ status: number; bytes: number }> {
  const res = await fetch(url, { headers: { "Accept-Encoding": "identity" } });
  let bytes = 0;
  for await (const part of res.body as unknown as AsyncIterable<Uint8Array>) bytes += part.byteLength;
  return { status: res.status, bytes };
}

/** `count` sequential calls of a 4 x 4 box over the thirty years, each at other cells of the window: times in ms, sorted. */
async function timeBoxes(url: string, format: "csv" | "netcdf", count: number, fail: (why: string) => void): Promise<{ times: number[]; bytes: number }> {
  const times: number[] = [];
  let bytes = 0;
  for (let n = 0; n < count; n++) {
    const [col, row] = [WINDOW[0] + ((n * 7) % 15) * 4, WINDOW[1] + ((n * 11) % 15) * 4];
    const path = `/api/v1/series?bbox=${bboxOf(col, row, 4, 4)}&start=${THIRTY[0]}&end=${THIRTY[THIRTY.length - 1]}${format === "netcdf" ? "&format=netcdf" : ""}`;
    const t = performance.now();
    const answer = await drain(`${url}${path}`);
    times.push(performance.now() - t);
    if (answer.status !== 200) fail(`${path}: answered ${answer.status}`);
    bytes = answer.bytes;
  }
  return { times: times.sort((a, b) => a - b), bytes };
}

export async function benchSeriesBox(ctx: BoxBenchContext): Promise<void> {
  const cache = join(BENCH_CACHE, "long64-silo-like");
  await makeSiloLikeWindowDays(cache, LONG, WINDOW, ctx.log);
  const sources = await linkFolder(join(ctx.work, "box-sources"), cache, THIRTY);
  const dist = join(ctx.work, "dist-box");
  ctx.log(`publishing the long archive's last ${THIRTY.length} days (64 x 64 cells)`);
  const started = performance.now();
  await publish({ sources, dist, observations: false, explorer: false, log: () => {} });
  ctx.log(`published in ${fmt((performance.now() - started) / 1000, 1)} s`);
  // 8 NetCDF answers from one client wait for their turns (two at work on two cores, each writing its file once for
  // its digest) rather than being shed, and their connections stay open while they wait
  const server: Proc = await startServer(dist, { WORK_QUEUE_MS: "300000", SEND_TIMEOUT_MS: "300000" });
  let sampler: ReturnType<typeof setInterval> | undefined;
  try {
    // warm-up, not counted: the chunks of the archive come into the page cache
    await timeBoxes(server.url, "csv", 4, ctx.fail);
    const csv = await timeBoxes(server.url, "csv", 21, ctx.fail);
    const nc = await timeBoxes(server.url, "netcdf", 21, ctx.fail);
    const p50 = (t: number[]) => t[Math.floor(t.length / 2)];
    ctx.say();
    ctx.say(`GET /api/v1/series?bbox=: a 0.2 degree box (4 x 4 cells) over 30 years of the long archive (${fmt(THIRTY.length)} days, ${THIRTY[0]}..${THIRTY[THIRTY.length - 1]}), one call at a time, another box each call`);
    ctx.say(`  CSV     (${formatBytes(csv.bytes)}): p50 ${fmt(p50(csv.times), 1)} ms, slowest ${fmt(csv.times[csv.times.length - 1], 1)} ms of ${csv.times.length} (goal p50 <= 100 ms)`);
    ctx.say(`  NetCDF  (${formatBytes(nc.bytes)}): p50 ${fmt(p50(nc.times), 1)} ms, slowest ${fmt(nc.times[nc.times.length - 1], 1)} ms of ${nc.times.length} (goal p50 <= 100 ms)`);
    if (p50(csv.times) > 100) ctx.fail(`a 4 x 4 box over 30 years as CSV: p50 ${fmt(p50(csv.times), 1)} ms (goal <= 100)`);
    if (p50(nc.times) > 100) ctx.fail(`a 4 x 4 box over 30 years as NetCDF: p50 ${fmt(p50(nc.times), 1)} ms (goal <= 100)`);

    // 8 whole-box NetCDF answers of the bound's size, each at another corner of the window, read at once
    const before = readRss(server.pid);
    const asks = Array.from({ length: 8 }, (_, k) => {
      const [col, row] = [WINDOW[0] + (k % 2) * BOUND_SIDE, WINDOW[1] + (Math.floor(k / 2) % 2) * BOUND_SIDE];
      const first = THIRTY.length - BOUND_DAYS - (k >> 2) * 30;
      return `/api/v1/series?bbox=${bboxOf(col, row, BOUND_SIDE, BOUND_SIDE)}&start=${THIRTY[first]}&end=${THIRTY[first + BOUND_DAYS - 1]}&format=netcdf`;
    });
    const t0 = performance.now();
    const first = await drain(`${server.url}${asks[0]}`);
    const oneMs = performance.now() - t0;
    if (first.status !== 200) ctx.fail(`${asks[0]}: answered ${first.status}`);
    const t = performance.now();
    let peak = before.peakMb;
    sampler = setInterval(() => {
      try {
        peak = Math.max(peak, readRss(server.pid).rssMb);
      } catch {
        // the server is gone: the reads below fail and say so
      }
    }, 100);
    const read = await Promise.all(asks.map((path) => drain(`${server.url}${path}`).catch((err: Error) => ({ status: 0, bytes: 0, error: err.message }))));
    clearInterval(sampler);
    const ms = performance.now() - t;
    const after = readRss(server.pid);
    for (const [k, r] of read.entries()) if (r.status !== 200) ctx.fail(`${asks[k]}: answered ${r.status}${"error" in r ? ` (${r.error})` : ""}`);
    ctx.say(`  one NetCDF answer of the bound's size alone (${formatBytes(first.bytes)}): ${fmt(oneMs / 1000, 2)} s, its digest pass and its sending`);
    const values = BOUND_SIDE * BOUND_SIDE * BOUND_DAYS;
    ctx.say(`  8 NetCDF answers of the bound's size at once (${BOUND_SIDE} x ${BOUND_SIDE} cells x ${fmt(BOUND_DAYS)} days, ${fmt(values)} values, ${formatBytes(read[0].bytes)} each): all read in ${fmt(ms / 1000, 1)} s; server RSS ${fmt(before.rssMb)} MB before, peak ${fmt(Math.max(peak, after.peakMb))} MB (goal <= 250 MB)`);
    const peakMb = Math.max(peak, after.peakMb);
    if (peakMb > 250) ctx.fail(`8 NetCDF answers of the bound's size at once: server peak RSS ${fmt(peakMb)} MB (goal <= 250)`);
    Object.assign(ctx.figures, {
      box_csv_p50_ms: p50(csv.times),
      box_netcdf_p50_ms: p50(nc.times),
      box_netcdf_bound_1_s: oneMs / 1000,
      box_netcdf_bound_8_s: ms / 1000,
      box_netcdf_peak_rss_mb: peakMb,
    });
  } finally {
    if (sampler) clearInterval(sampler);
    await server.stop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const work = await mkdtemp(join(tmpdir(), "bench-box-"));
  const figures: Record<string, number> = {};
  let failures = 0;
  try {
    await benchSeriesBox({
      work,
      say: (line = "") => console.log(line),
      log: (line) => process.stderr.write(`${line}\n`),
      figures,
      fail: (why) => {
        failures++;
        console.log(`  !! ${why}: a goal is not met`);
      },
    });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  console.log(JSON.stringify({ ...figures, failures }));
  process.exit(failures > 0 ? 1 : 0);
}
