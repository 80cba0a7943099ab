// Bench of the Zarr view (docs/clients.md "Zarr"), alone (`node_modules/.bin/tsx bench/zarr.ts`) or as a phase of
// make bench (benchZarr): the series chunk shape and the compressor, chosen by measurement; what xarray and GDAL
// request over HTTP; a chunk's server time; the server beside sirv serving a file of the same size; its memory.
// Alone it publishes a year of full-grid days (or takes BENCH_DIST) and a long small-window archive, in a
// temporary folder it removes.

import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { deflateSync } from "node:zlib";
import { Service } from "../api/service.js";
import { ROUTES } from "../api/interface.js";
import { readSeriesChunk } from "../api/zarr/chunks.js";
import type { GridCube } from "../api/cube.js";
import { CHUNK_SHAPES, type ChunkShape } from "../api/zarr/view.js";
import { Archive } from "../format/archive.js";
import { candidatesOf } from "../format/catalog.js";
import { dateToDayNumber } from "../format/dates.js";
import { LocalStorage, nodePlatform } from "../format/local.js";
import { Snapshot } from "../format/snapshot.js";
import { variableOfRecord } from "../format/variables.js";
import { type RasterView, openVersion } from "../format/versions.js";
import { formatBytes } from "../pipeline/progress.js";
import { publish } from "../pipeline/publish/publish.js";
import { type Proc, readRss, runWrk, startServer, startStatic } from "./load.js";
import { BENCH_CACHE, YEAR_CACHE, listDays, makeFullGridDays, makeSiloLikeWindowDays } from "./sources.js";
import { linkFolder } from "./tools.js";

const run = promisify(execFile);
type Say = (line?: string) => void;
const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const VARIABLE = "air_temperature_max";
/** The long archive's cells and the point read over 30 years in it (bench/run.ts phase 3 uses the same). */
export const LONG_WINDOW: [number, number, number, number] = [400, 300, 8, 8];
const THIRTY_YEARS = 10957;
/** A 1-degree box: 20 x 20 cells, edges on cell edges (133.975..134.975 E, 24.025..23.025 S). */
const BOX = { col: 440, row: 261, width: 20, height: 20 };
const SHAPES: ChunkShape[] = [
  { days: 365, side: 8 },
  { days: 1024, side: 2 },
  { days: 1024, side: 4 },
  { days: 2048, side: 4 },
  { days: 4096, side: 2 },
];

export interface ZarrBenchContext {
  say: Say;
  log: (line: string) => void;
  figures: Record<string, number>;
  work: string;
  seconds: number;
}

/** The newest version of a dist as the view serves it, over its own archive. */
async function openNewest(dist: string): Promise<{ zv: GridCube; archive: Archive }> {
  const archive = new Archive(new LocalStorage(dist), nodePlatform, { cacheBytes: 64 << 20 });
  const { pointer, sha256 } = await archive.readPointer();
  const record = await new Snapshot(archive, pointer, sha256).findRecord(candidatesOf(pointer, VARIABLE)[0].id);
  const view = (await openVersion(archive, record!)) as RasterView;
  const firstDay = dateToDayNumber(view.index.coverage.first);
  const zv = { view, variable: variableOfRecord(record!)!, firstDay, days: dateToDayNumber(view.index.coverage.last) - firstDay + 1 };
  return { zv, archive };
}

/** Chunks of `shape` holding cells [c0, c0+w) x [r0, r0+h) over date indices [t0, t1): each computed and deflated. */
async function readChunks(zv: GridCube, shape: ChunkShape, cells: typeof BOX, t0: number, t1: number): Promise<{ count: number; bytes: number; ms: number[] }> {
  const out = { count: 0, bytes: 0, ms: [] as number[] };
  const span = (start: number, size: number, side: number) => [Math.floor(start / side), Math.floor((start + size - 1) / side)];
  const [ta, tb] = span(t0, t1 - t0, shape.days);
  const [ra, rb] = span(cells.row, cells.height, shape.side);
  const [ca, cb] = span(cells.col, cells.width, shape.side);
  for (let t = ta; t <= tb; t++) {
    for (let r = ra; r <= rb; r++) {
      for (let c = ca; c <= cb; c++) {
        const started = performance.now();
        const values = await readSeriesChunk(zv, shape, t, r, c);
        const bytes = values ? deflateSync(new Uint8Array(values.buffer), { level: 1 }).byteLength : 0;
        out.ms.push(performance.now() - started);
        out.count++;
        out.bytes += bytes;
      }
    }
  }
  return out;
}

/** The series chunk shape: a point over 30 years (the long archive) and a 1-degree box over a year, per candidate. */
async function benchShapes(ctx: ZarrBenchContext, yearDist: string, longDist: string): Promise<void> {
  const long = await openNewest(longDist);
  const year = await openNewest(yearDist);
  ctx.say();
  ctx.say("Zarr view: the series chunk shape (chunks computed in process from the verified pieces, zlib level 1)");
  ctx.say(`  ${"days x cells".padEnd(14)} ${"point, 30 years".padStart(28)} ${"1-degree box, a year".padStart(30)} ${"ms a chunk".padStart(11)}`);
  for (const shape of SHAPES) {
    const point = await readChunks(long.zv, shape, { col: LONG_WINDOW[0] + 3, row: LONG_WINDOW[1] + 3, width: 1, height: 1 }, long.zv.days - THIRTY_YEARS, long.zv.days);
    const box = await readChunks(year.zv, shape, BOX, 0, year.zv.days);
    const chosen = shape.days === CHUNK_SHAPES.series.days && shape.side === CHUNK_SHAPES.series.side;
    const name = `${shape.days} x ${shape.side} x ${shape.side}${chosen ? " *" : ""}`;
    ctx.say(`  ${name.padEnd(14)} ${`${point.count} chunks ${formatBytes(point.bytes)}`.padStart(28)} ${`${box.count} chunks ${formatBytes(box.bytes)}`.padStart(30)} ${fmt(median([...point.ms, ...box.ms]), 2).padStart(11)}`);
    if (chosen) Object.assign(ctx.figures, { zarr_point_30y_chunks: point.count, zarr_point_30y_bytes: point.bytes, zarr_box_year_chunks: box.count, zarr_box_year_bytes: box.bytes });
  }
  ctx.say("  (* the shape the view serves; a chunk's ms is the median over both reads, cold caches at first)");
  long.archive.storage.close?.();
  year.archive.storage.close?.();
}

/** The compressor: what each candidate costs a chunk, maps and series, on the year's days. */
async function benchCompressors(ctx: ZarrBenchContext, yearDist: string): Promise<void> {
  const { zv, archive } = await openNewest(yearDist);
  const chunks: Uint8Array[] = [];
  for (const date of ["2003-02-10", "2003-06-15", "2003-11-20"]) {
    const day = (await zv.view.findDay(date))!;
    for (let r = 0; r < 3; r++) for (let c = 0; c < 4; c++) {
      const values = new Float32Array(256 * 256).fill(NaN);
      const area: [number, number, number, number] = [c * 256, r * 256, Math.min(256, 841 - c * 256), Math.min(256, 681 - r * 256)];
      const cells = await zv.view.readCells(day, area);
      for (let y = 0; y < area[3]; y++) values.set(cells.subarray(y * area[2], (y + 1) * area[2]), y * 256);
      chunks.push(new Uint8Array(values.buffer));
    }
  }
  const series = await readSeriesChunk(zv, CHUNK_SHAPES.series, 0, Math.floor(BOX.row / 4), Math.floor(BOX.col / 4));
  ctx.say();
  ctx.say(`Zarr view: compressors, ${chunks.length} maps chunks (12 tiles of 3 days; 256 kB of float32 each) and one series chunk (${formatBytes(series!.byteLength)})`);
  for (const [name, level] of [["none (maps)", -1], ["zlib level 1 (series)", 1], ["zlib level 6", 6], ["zlib level 9", 9]] as const) {
    const time = (data: Uint8Array) => {
      if (level < 0) return { ms: 0, bytes: data.byteLength };
      const started = performance.now();
      const bytes = deflateSync(data, { level }).byteLength;
      return { ms: performance.now() - started, bytes };
    };
    const maps = chunks.map(time);
    const s = time(new Uint8Array(series!.buffer));
    ctx.say(`  ${name.padEnd(22)} maps: median ${fmt(median(maps.map((m) => m.ms)), 2)} ms, ${formatBytes(maps.reduce((n, m) => n + m.bytes, 0) / maps.length)} a chunk; series: ${fmt(s.ms, 2)} ms, ${formatBytes(s.bytes)}`);
    if (level === 1) Object.assign(ctx.figures, { zarr_maps_deflate_ms: median(maps.map((m) => m.ms)), zarr_maps_chunk_bytes: maps.reduce((n, m) => n + m.bytes, 0) / maps.length });
  }
  ctx.say("  (the view declares none for maps chunks and zlib level 1 for series chunks: both read by GDAL 3.6, zarr-python and zarrita)");
  archive.storage.close?.();
}

/** A chunk's server time: Service.handle in this process (warm), another chunk each request, median of 200. */
async function benchServerTime(ctx: ZarrBenchContext, yearDist: string): Promise<void> {
  const service = new Service({ routes: ROUTES, storage: new LocalStorage(yearDist), platform: nodePlatform, warn: () => {}, cacheBytes: 24 << 20 });
  const { pointer } = await service.archive.readPointer();
  const id = candidatesOf(pointer, VARIABLE)[0].id;
  const ask = async (path: string) => {
    const started = performance.now();
    const answer = await service.handle({ method: "GET", path, query: new URLSearchParams(), baseUrl: "http://x" });
    if (answer.status !== 200) throw new Error(`${path}: ${answer.status}`);
    return performance.now() - started;
  };
  const maps: number[] = [];
  const series: number[] = [];
  for (let n = 0; n < 200; n++) {
    maps.push(await ask(`/zarr/v2/${id}/maps/${VARIABLE}/${(n * 37) % 365}.${n % 2}.${1 + (Math.floor(n / 2) % 2)}`));
    series.push(await ask(`/zarr/v2/${id}/series/${VARIABLE}/0.${40 + ((n * 7) % 100)}.${80 + ((n * 13) % 100)}`));
  }
  Object.assign(ctx.figures, { zarr_maps_chunk_ms: median(maps), zarr_series_chunk_ms: median(series) });
  ctx.say();
  ctx.say("Zarr view: server time of a chunk (Service.handle in process, warm, another chunk each request, 200 of each)");
  ctx.say(`  maps chunk (a land tile of another day)          p50 ${fmt(median(maps), 2)} ms  (goal <= 5 ms)`);
  ctx.say(`  series chunk (another 4 x 4 cells, 365 days)     p50 ${fmt(median(series), 2)} ms  (goal <= 5 ms)`);
  service.close();
}

/** A proxy in front of `target` that counts what it forwards: how many requests a reader makes. */
async function startCountingProxy(target: string): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    const upstream = http.request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
      seen.push(`${req.method} ${req.url} ${answer.statusCode}`);
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, seen, close: () => new Promise((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }) };
}

const XARRAY_POINT = `import sys, xarray as xr
ds = xr.open_zarr(sys.argv[1], consolidated=True)
if len(sys.argv) > 2:
    v = ds["${VARIABLE}"].sel(lon=float(sys.argv[2]), lat=float(sys.argv[3]), method="nearest").isel(time=slice(-${THIRTY_YEARS}, None)).values
    print(len(v))
`;

/** What xarray requests, cold: opening the series group, then a point over 30 years of the long archive. */
async function benchXarray(ctx: ZarrBenchContext, server: Proc, longId: string): Promise<void> {
  const script = join(ctx.work, "zarr-xarray.py");
  await writeFile(script, XARRAY_POINT);
  const url = (proxy: string) => `${proxy}/zarr/v2/${longId}/series`;
  const count = async (args: string[]) => {
    const proxy = await startCountingProxy(server.url);
    try {
      await run("/usr/bin/python3", [script, url(proxy.url), ...args], { timeout: 300_000 });
      return proxy.seen;
    } finally {
      await proxy.close();
    }
  };
  const open = await count([]);
  // the cell (403, 303) of the long archive's window: its centre
  const point = await count(["132.15", "-25.15"]);
  const more = point.length - open.length;
  Object.assign(ctx.figures, { zarr_xarray_open_requests: open.length, zarr_xarray_point_30y_requests: more });
  ctx.say();
  ctx.say("Zarr view over HTTP, cold: what the readers ask for (counted by a proxy in front of make serve)");
  ctx.say(`  xarray opens the series group                 ${open.length} requests (${[...new Set(open.map((s) => s.split(" ")[1].split("/").slice(-2).join("/")))].join(", ")})`);
  ctx.say(`  ... then a point over 30 years (long archive) ${more} more requests  (goal <= 15)`);
}

const GDAL_MAP = `import os, sys
os.environ["GDAL_DISABLE_READDIR_ON_OPEN"] = "EMPTY_DIR"
from osgeo import gdal
gdal.UseExceptions()
print(gdal.Open(f'ZARR:"/vsicurl/{sys.argv[1]}":/${VARIABLE}:{sys.argv[2]}').ReadAsArray().shape)
`;

/** What GDAL requests for a map of one day: its chunks (one per 256 x 256 tile) and its own probes. */
async function benchGdal(ctx: ZarrBenchContext, server: Proc, yearId: string): Promise<void> {
  const script = join(ctx.work, "zarr-gdal.py");
  await writeFile(script, GDAL_MAP);
  const proxy = await startCountingProxy(server.url);
  try {
    await run("/usr/bin/python3", [script, `${proxy.url}/zarr/v2/${yearId}/maps`, "165"], { timeout: 300_000 });
  } finally {
    await proxy.close();
  }
  const chunks = proxy.seen.filter((s) => /^GET \S+\/maps\/\w+\/\d+\.\d+\.\d+ 200$/.test(s));
  Object.assign(ctx.figures, { zarr_gdal_map_chunks: chunks.length, zarr_gdal_map_requests: proxy.seen.length });
  ctx.say(`  GDAL, the full grid of one day               ${chunks.length} chunk requests (goal 12) beside ${proxy.seen.length - chunks.length} probes: ${proxy.seen.filter((s) => !chunks.includes(s)).map((s) => s.replace(/\/zarr\/v2\/[^/]+\/maps\//, "")).join("; ")}`);
}

/** wrk on another chunk each request, and the same chunk again, beside sirv serving a file of its size. */
async function benchLoad(ctx: ZarrBenchContext, server: Proc, yearId: string): Promise<void> {
  const staticDir = join(ctx.work, "zarr-static");
  await mkdir(staticDir, { recursive: true });
  const rows: { name: string; key: string; path: string; script?: string }[] = [
    { name: "maps chunk, another each request", key: "zarr_maps_varied", path: `/zarr/v2/${yearId}/maps/${VARIABLE}/100.1.1`, script: `/zarr/v2/${yearId}/maps/${VARIABLE}/" .. (n % 365) .. "." .. (math.floor(n / 365) % 2) .. "." .. (1 + math.floor(n / 730) % 2)` },
    { name: "maps chunk, repeated", key: "zarr_maps_repeated", path: `/zarr/v2/${yearId}/maps/${VARIABLE}/100.1.1` },
    { name: "series chunk, another each request", key: "zarr_series_varied", path: `/zarr/v2/${yearId}/series/${VARIABLE}/0.70.120`, script: `/zarr/v2/${yearId}/series/${VARIABLE}/0." .. (40 + n % 100) .. "." .. (80 + (n * 7) % 100)` },
    { name: "series chunk, repeated", key: "zarr_series_repeated", path: `/zarr/v2/${yearId}/series/${VARIABLE}/0.70.120` },
  ];
  for (const row of rows) await writeFile(join(staticDir, `${row.key}.bin`), new Uint8Array(await (await fetch(`${server.url}${row.path}`)).arrayBuffer()));
  const sirv = await startStatic(staticDir, `${rows[0].key}.bin`);
  try {
    ctx.say();
    ctx.say(`Zarr view: the server vs sirv serving a file of the chunk's size (wrk, 1 thread, 10 connections, ${ctx.seconds} s each)`);
    for (const row of rows) {
      const script = row.script ? join(ctx.work, `${row.key}.lua`) : undefined;
      if (script) await writeFile(script, `local n = 0\nrequest = function()\n  n = n + 1\n  return wrk.format("GET", "${row.script})\nend\n`);
      const s = await runWrk(`${server.url}${row.path}`, ctx.seconds, script);
      const base = await runWrk(`${sirv.url}/${row.key}.bin`, ctx.seconds);
      Object.assign(ctx.figures, { [`${row.key}_rps`]: s.rps, [`${row.key}_ratio`]: s.rps / base.rps, [`${row.key}_p50_ms`]: s.p50Ms });
      ctx.say(`  ${row.name.padEnd(38)} ${fmt(s.rps).padStart(7)} req/s  p50 ${fmt(s.p50Ms, 1)} ms  p99 ${fmt(s.p99Ms, 1)} ms  errors ${s.errors}   sirv ${fmt(base.rps)} req/s   ratio ${fmt(s.rps / base.rps, 2)}  (goal >= 0.3)`);
    }
  } finally {
    await sirv.stop();
  }
}

/** Every row of the Zarr view's bench, over a published year of full-grid days and a long small-window archive. */
export async function benchZarr(ctx: ZarrBenchContext, yearDist: string, longDist: string): Promise<void> {
  await benchShapes(ctx, yearDist, longDist);
  await benchCompressors(ctx, yearDist);
  await benchServerTime(ctx, yearDist);
  const year = await startServer(yearDist);
  const long = await startServer(longDist);
  try {
    const idOf = async (p: Proc) => ((await (await fetch(`${p.url}/api/v1/datasets?limit=1000`)).json()) as { datasets: { id: string; dataset_key: string }[] }).datasets.find((d) => d.dataset_key === "silo-tmax")!.id;
    await benchXarray(ctx, long, await idOf(long));
    await benchGdal(ctx, year, await idOf(year));
    await benchLoad(ctx, year, await idOf(year));
    const rss = readRss(year.pid);
    ctx.figures.zarr_server_rss_mb = rss.rssMb;
    ctx.say(`  server memory after the Zarr runs: RSS ${fmt(rss.rssMb)} MB, peak ${fmt(rss.peakMb)} MB  (goal <= 200 MB)`);
  } finally {
    await Promise.all([year.stop(), long.stop()]);
  }
}

/** Alone: a year of full-grid days (BENCH_DIST, or published here) and BENCH_ZARR_LONG_DAYS small days from 1950. */
async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), "bench-zarr-"));
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const figures: Record<string, number> = {};
  try {
    const year = listDays("2003-01-01", Number(process.env.BENCH_ZARR_DAYS ?? 365));
    let yearDist = process.env.BENCH_DIST ?? "";
    if (!yearDist) {
      await makeFullGridDays(YEAR_CACHE, year, log);
      yearDist = join(work, "dist-year");
      log(`publishing ${year.length} full-grid days`);
      await publish({ sources: await linkFolder(join(work, "year"), YEAR_CACHE, year), dist: yearDist, observations: false, log: () => {} });
    }
    const longDays = listDays("1950-01-01", Number(process.env.BENCH_ZARR_LONG_DAYS ?? 11_000));
    await makeSiloLikeWindowDays(join(BENCH_CACHE, "long-silo-like"), longDays, LONG_WINDOW, log);
    const longDist = join(work, "dist-long");
    log(`publishing ${longDays.length} small-window days`);
    await publish({ sources: await linkFolder(join(work, "long"), join(BENCH_CACHE, "long-silo-like"), longDays), dist: longDist, observations: false, log: () => {} });
    await benchZarr({ say: (line = "") => console.log(line), log, figures, work, seconds: Number(process.env.BENCH_SECONDS ?? 5) }, yearDist, longDist);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  console.log(JSON.stringify(Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, Math.round(v * 100) / 100]))));
}

if (import.meta.url === pathToFileURL(resolve(process.argv[1] ?? "")).href) await main();
