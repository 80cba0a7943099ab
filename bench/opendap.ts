// Bench phase of OPeNDAP (docs/contract.md §8.6), each figure beside a baseline of the same run:
// - a place over 20,000 days in one .dods, p50 of sequential calls (another cell each), beside the series route's
//   CSV of the same place and period (goal <= 2x);
// - a full-grid map of one date in one .dods (2.3 MB), another date each request, wrk beside sirv serving the same
//   bytes (goal >= 0.5); beside it, the work no such answer can skip, each step timed alone on the same date (its
//   body's sha256, inflating and decoding its blocks), and the most of sirv one core could give after it;
// - `ncdump -h` of the 20,000-day dataset: its requests' server time from the server's own log (goal < 30 ms);
// - CDO reading 31 time steps of a 2.5 degree box (31 whole-field requests), end to end (goal < 2 s);
// - the server's peak RSS while 8 .dods answers of the bound's size (17 full-grid dates, 9.7 million values) are
//   read at once (goal < 250 MB).
// Runs alone: BENCH_ONLY=opendap node_modules/.bin/tsx bench/run.ts (it then publishes 62 full-grid days and the long
// archive's 20,000 days of 64 x 64 cells itself).

import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { inflateRawSync } from "node:zlib";
import { MAX_FILE_VALUES } from "../api/contract.js";
import { GRID, colToLon, rowToLat } from "../format/grid.js";
import { formatBytes } from "../pipeline/progress.js";
import { Archive } from "../format/archive.js";
import { BLOCK_SIDE, listBlocks } from "../format/blocks.js";
import { BlockCodec, rawBlockBytes, toStoredBlock } from "../format/cells.js";
import { lineageOf } from "../format/entries.js";
import { LocalStorage, nodePlatform } from "../format/local.js";
import { objectPath } from "../format/objects.js";
import { Snapshot } from "../format/snapshot.js";
import { type RasterView, openVersion } from "../format/versions.js";
import { type Proc, readRss, runWrk, startServer, startStatic } from "./load.js";

const run = promisify(execFile);
type Say = (line?: string) => void;
const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const p50 = (t: number[]) => [...t].sort((a, b) => a - b)[Math.floor(t.length / 2)];
const VARIABLE = "air_temperature_max";

export interface OpendapBenchContext {
  work: string;
  say: Say;
  log: (line: string) => void;
  figures: Record<string, number>;
  seconds: number;
  /** a goal is not met */
  fail: (why: string) => void;
}

/** The newest candidate of silo-tmax in a dist: its id, first date and window. */
function newestOf(dist: string): { id: string; first: string; days: number; window: number[] } {
  const c = JSON.parse(readFileSync(join(dist, "catalog.json"), "utf8")).candidates.find((x: { record: { dataset_key: string } }) => x.record.dataset_key === "silo-tmax");
  const day = (d: string) => Date.parse(`${d}T00:00:00Z`) / 86_400_000;
  return { id: c.id, first: c.coverage.first, days: day(c.coverage.last) - day(c.coverage.first) + 1, window: c.coverage.windowAll };
}

async function timed(url: string): Promise<{ ms: number; status: number; bytes: number }> {
  const t = performance.now();
  const res = await fetch(url);
  const bytes = (await res.arrayBuffer()).byteLength;
  return { ms: performance.now() - t, status: res.status, bytes };
}

/** A place over every date of the long archive: .dods beside the series route, alternating, another cell each pair. */
async function benchPlace(ctx: OpendapBenchContext, server: Proc, long: ReturnType<typeof newestOf>): Promise<void> {
  const [c0, r0, w, h] = long.window;
  const last = new Date((Date.parse(`${long.first}T00:00:00Z`) / 86_400_000 + long.days - 1) * 86_400_000).toISOString().slice(0, 10);
  const dap: number[] = [];
  const series: number[] = [];
  for (let n = 0; n < 25; n++) {
    const [col, row] = [c0 + ((n * 7) % w), r0 + ((n * 11) % h)];
    const a = await timed(`${server.url}/opendap/${long.id}.dods?${VARIABLE}.${VARIABLE}%5B0:${long.days - 1}%5D%5B${row}%5D%5B${col}%5D`);
    const b = await timed(`${server.url}/api/v1/series?lat=${rowToLat(row)}&lon=${colToLon(col)}&start=${long.first}&end=${last}&dataset_version=${long.id}`);
    if (a.status !== 200 || b.status !== 200) ctx.fail(`a place over ${long.days} days: answered ${a.status} and ${b.status}`);
    // the first four warm the page cache and the code paths: not counted
    if (n >= 4) dap.push(a.ms), series.push(b.ms);
  }
  const ratio = p50(dap) / p50(series);
  Object.assign(ctx.figures, { dap_place_p50_ms: p50(dap), dap_place_series_p50_ms: p50(series), dap_place_ratio: ratio });
  ctx.say(`  a place over ${fmt(long.days)} days, one .dods (${formatBytes(long.days * 4)} of values): p50 ${fmt(p50(dap), 1)} ms; the series route's CSV of it ${fmt(p50(series), 1)} ms; ratio ${fmt(ratio, 2)} (goal <= 2)`);
  if (ratio > 2) ctx.fail(`a place over ${long.days} days in one .dods: ${fmt(ratio, 2)} of the series route (goal <= 2)`);
}

/** A full-grid map of one date, another date each request: wrk against the server, and sirv serving one such answer. */
async function benchMap(ctx: OpendapBenchContext, server: Proc, dist: string, year: ReturnType<typeof newestOf>): Promise<void> {
  const mapPath = (t: number) => `/opendap/${year.id}.dods?${VARIABLE}.${VARIABLE}%5B${t}%5D%5B0:${GRID.height - 1}%5D%5B0:${GRID.width - 1}%5D`;
  const dir = join(ctx.work, "dap-static");
  await mkdir(dir, { recursive: true });
  const bytes = new Uint8Array(await (await fetch(`${server.url}${mapPath(0)}`)).arrayBuffer());
  await writeFile(join(dir, "map.dods"), bytes);
  const script = join(ctx.work, "dap-map.lua");
  const prefix = `/opendap/${year.id}.dods?${VARIABLE}.${VARIABLE}%5B`;
  await writeFile(script, `local n = 0\nrequest = function()\n  n = n + 1\n  return wrk.format("GET", "${prefix}" .. ((n * 7) % ${year.days}) .. "%5D%5B0:${GRID.height - 1}%5D%5B0:${GRID.width - 1}%5D")\nend\n`);
  const sirv = await startStatic(dir, "map.dods");
  try {
    const s = await runWrk(server.url, ctx.seconds, script);
    const base = await runWrk(`${sirv.url}/map.dods`, ctx.seconds);
    if (s.errors > 0) ctx.fail(`a full-grid map .dods: ${s.errors} errors under load`);
    const ratio = s.rps / base.rps;
    const floor = await mapFloor(dist, year.id, bytes);
    const floorMs = floor.hashMs + floor.inflateMs + floor.decodeMs;
    const most = 1000 / floorMs / base.rps;
    Object.assign(ctx.figures, { dap_map_rps: s.rps, dap_map_p99_ms: s.p99Ms, dap_map_sirv_rps: base.rps, dap_map_ratio: ratio, dap_map_floor_ms: floorMs, dap_map_floor_ratio: most });
    ctx.say(`  a full-grid map of one date (${formatBytes(bytes.byteLength)}), another date each request: ${fmt(s.rps)}/s, p99 ${fmt(s.p99Ms, 1)} ms; sirv ${fmt(base.rps)}/s; ratio ${fmt(ratio, 2)} (goal >= 0.5)`);
    ctx.say(`    the work no map skips, each step alone (best of 20): sha256 of the body ${fmt(floor.hashMs, 2)} ms, inflating its ${floor.blocks} blocks ${fmt(floor.inflateMs, 2)} ms, decoding them ${fmt(floor.decodeMs, 2)} ms: ${fmt(floorMs, 2)} ms, so one thread gives at most ${fmt(1000 / floorMs)}/s, ${fmt(most, 2)} of sirv`);
    if (ratio < 0.5) ctx.fail(`a full-grid map .dods: ${fmt(ratio, 2)} of sirv (goal >= 0.5)`);
  } finally {
    await sirv.stop();
  }
}

/**
 * What every full-grid map answer must do whatever the server around it, each step timed alone (best of 20) on the
 * first date's blocks as stored: the Content-Digest's sha256 of `body`, inflating the blocks, decoding them.
 */
async function mapFloor(dist: string, id: string, body: Uint8Array): Promise<{ hashMs: number; inflateMs: number; decodeMs: number; blocks: number }> {
  const archive = new Archive(new LocalStorage(dist), nodePlatform);
  const { pointer, sha256 } = await archive.readPointer();
  const view = (await openVersion(archive, (await new Snapshot(archive, pointer, sha256).findRecord(id))!)) as RasterView;
  const day = (await view.findDay(view.index.coverage.first))!;
  const header = await archive.readHeader(day);
  const files = new Map<string, Buffer>();
  const stored = listBlocks(day.window).flatMap((part) => {
    const entry = header.block(part.index);
    if (entry.codec === BlockCodec.Empty) return [];
    const file = join(dist, objectPath(lineageOf(day)[entry.pack].sha256, "day"));
    if (!files.has(file)) files.set(file, readFileSync(file));
    const piece = files.get(file)!.subarray(entry.offset, entry.offset + entry.length);
    return [{ piece, codec: entry.codec, w: part.window[2], h: part.window[3] }];
  });
  const best = (step: () => void) => {
    let ms = Infinity;
    for (let round = 0; round < 20; round++) {
      const t = performance.now();
      step();
      ms = Math.min(ms, performance.now() - t);
    }
    return ms;
  };
  const inflate = (b: (typeof stored)[number]) => inflateRawSync(b.piece, { chunkSize: rawBlockBytes(b.codec, b.w * b.h) + 1 });
  const raws = stored.map(inflate);
  const scratch = new Int16Array(BLOCK_SIDE * BLOCK_SIDE);
  return {
    hashMs: best(() => createHash("sha256").update(body).digest()),
    inflateMs: best(() => stored.forEach(inflate)),
    decodeMs: best(() => stored.forEach((b, i) => toStoredBlock(b.codec, raws[i], b.w, b.h, [b.w, b.h], scratch))),
    blocks: stored.length,
  };
}

/** Requests the server logged while `work` ran, with their server times (LOG=1 lines: method path status bytes ms). */
async function loggedWhile(lines: string[], work: () => Promise<unknown>): Promise<{ path: string; ms: number }[]> {
  const from = lines.length;
  await work();
  await new Promise((r) => setTimeout(r, 100));
  return lines.slice(from).flatMap((line) => {
    const m = /^GET (\S+) \d+ \d+ ([\d.]+)ms$/.exec(line);
    return m ? [{ path: m[1], ms: Number(m[2]) }] : [];
  });
}

/** ncdump -h of the long dataset: the server time of its requests. */
async function benchHeader(ctx: OpendapBenchContext, server: Proc, lines: string[], long: ReturnType<typeof newestOf>): Promise<void> {
  const times: number[] = [];
  let asked = 0;
  for (let n = 0; n < 9; n++) {
    const seen = await loggedWhile(lines, () => run("ncdump", ["-h", `${server.url}/opendap/${long.id}`]));
    asked = seen.length;
    times.push(seen.reduce((t, s) => t + s.ms, 0));
  }
  const header = p50(times.slice(1));
  ctx.figures.dap_ncdump_h_server_ms = header;
  ctx.say(`  ncdump -h of the ${fmt(long.days)}-day dataset: ${asked} requests, ${fmt(header, 1)} ms of server time (p50 of 8; goal < 30 ms)`);
  if (header >= 30) ctx.fail(`ncdump -h: ${fmt(header, 1)} ms of server time (goal < 30)`);
}

/** CDO over 31 steps of a box of the full-grid dates, end to end. */
async function benchCdo(ctx: OpendapBenchContext, server: Proc, lines: string[], year: ReturnType<typeof newestOf>): Promise<void> {
  // 2.5 degrees: 50 x 50 cells inland (130..132.5 E, -25..-22.5 S), 31 steps: CDO asks each whole field
  const t = performance.now();
  const seen = await loggedWhile(lines, () => run("cdo", ["-s", "outputtab,date,lon,lat,value", "-sellonlatbox,130,132.45,-24.95,-22.5", `-seltimestep,1/31`, `${server.url}/opendap/${year.id}`], { maxBuffer: 1 << 26 }));
  const cdoMs = performance.now() - t;
  const fields = seen.filter((s) => s.path.endsWith(".dods")).length;
  ctx.figures.dap_cdo_31_s = cdoMs / 1000;
  ctx.say(`  CDO, 31 time steps of a 2.5 degree box: ${fmt(cdoMs / 1000, 2)} s end to end, ${seen.length} requests (${fields} .dods) (goal < 2 s)`);
  if (cdoMs >= 2000) ctx.fail(`CDO over 31 steps: ${fmt(cdoMs / 1000, 2)} s (goal < 2)`);
}

/** 8 .dods answers of the bound's size (17 full-grid dates each, other dates each) read at once: the server's peak RSS. */
async function benchMemory(ctx: OpendapBenchContext, server: Proc, year: ReturnType<typeof newestOf>): Promise<void> {
  const steps = Math.floor(MAX_FILE_VALUES / (GRID.width * GRID.height + 1)) - 1;
  const asks = Array.from({ length: 8 }, (_, k) => {
    const t0 = (k * 5) % (year.days - steps);
    return `${server.url}/opendap/${year.id}.dods?${VARIABLE}%5B${t0}:${t0 + steps - 1}%5D%5B0:${GRID.height - 1}%5D%5B0:${GRID.width - 1}%5D`;
  });
  const before = readRss(server.pid).rssMb;
  let peak = before;
  const sampler = setInterval(() => {
    try {
      peak = Math.max(peak, readRss(server.pid).rssMb);
    } catch {
      // gone: the reads below say so
    }
  }, 50);
  const t = performance.now();
  const read = await Promise.all(asks.map((url) => timed(url)));
  clearInterval(sampler);
  for (const r of read) if (r.status !== 200) ctx.fail(`a bound-size .dods answered ${r.status}`);
  Object.assign(ctx.figures, { dap_bound_rss_before_mb: before, dap_bound_rss_peak_mb: peak });
  ctx.say(`  8 .dods of the bound's size at once (${steps} full-grid dates, ${formatBytes(read[0].bytes)} each): ${fmt((performance.now() - t) / 1000, 1)} s; RSS ${fmt(before)} MB before, peak ${fmt(peak)} MB (goal < 250 MB)`);
  if (peak >= 250) ctx.fail(`8 bound-size .dods at once: peak RSS ${fmt(peak)} MB (goal < 250)`);
}

/** The OPeNDAP rows over a dist of full-grid days (at least 31) and one of a long archive (20,000 days). */
export async function benchOpendap(ctx: OpendapBenchContext, yearDist: string, longDist: string): Promise<void> {
  const lines: string[] = [];
  const server = await startServer(yearDist, { LOG: "1", WORK_QUEUE_MS: "300000", SEND_TIMEOUT_MS: "300000" }, (text) => lines.push(...text.split("\n").filter(Boolean)));
  const longServer = await startServer(longDist, { LOG: "1" }, (text) => lines.push(...text.split("\n").filter(Boolean)));
  try {
    const year = newestOf(yearDist);
    const long = newestOf(longDist);
    ctx.say();
    ctx.say(`OPeNDAP: ${fmt(year.days)} full-grid dates, and the long archive (${fmt(long.days)} dates of ${long.window[2]} x ${long.window[3]} cells)`);
    await benchPlace(ctx, longServer, long);
    await benchHeader(ctx, longServer, lines, long);
    await benchCdo(ctx, server, lines, year);
    await benchMap(ctx, server, yearDist, year);
    await benchMemory(ctx, server, year);
  } finally {
    await Promise.all([server.stop(), longServer.stop()]);
  }
}
