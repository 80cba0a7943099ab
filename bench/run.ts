// `make bench`: publish cost per full-grid day and query latency, each as a ratio to a baseline of the same run.
//
// Machines here are shared and noisy, so every figure is paired with a baseline measured moments before:
// publish per day against decoding the same day alone; query latency against GET /api/health.

import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { findSiloFiles } from "../pipeline/discover.js";
import { writeDemo } from "../pipeline/demo.js";
import { readSiloTiff } from "../pipeline/geotiff.js";
import { publish } from "../pipeline/publish.js";
import { createApp } from "../server/app.js";
import { PLAUSIBLE_TMAX_DEGC } from "../schemas/contract.js";

const DEMO = ".cache/demo";

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}
function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))];
}
const ms = (x: number) => `${x.toFixed(2)} ms`;

/** The demo days recompressed as SILO ships them (COG, DEFLATE + floating-point predictor), when GDAL is here. */
async function makeCogs(folder: string): Promise<string | null> {
  try {
    execFileSync("gdal_translate", ["--version"], { stdio: "ignore" });
  } catch {
    return null;
  }
  for (const f of await findSiloFiles(DEMO)) {
    await mkdir(join(folder, f.date.slice(0, 4)), { recursive: true });
    execFileSync("gdal_translate", ["-q", "-of", "COG", "-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=FLOATING_POINT", f.path, join(folder, f.memberPath)]);
  }
  return folder;
}

async function benchPublish(sources: string, label: string, dist: string): Promise<string> {
  const files = await findSiloFiles(sources);
  const decodeMs: number[] = [];
  for (const f of files) {
    const t = performance.now();
    await readSiloTiff(f.path, PLAUSIBLE_TMAX_DEGC);
    decodeMs.push(performance.now() - t);
  }
  const t = performance.now();
  const s = await publish({ sources, dist, observations: true, log: () => {} });
  const totalMs = performance.now() - t;
  const rasterBytes = await sizeOfTree(dist);
  const perDay = totalMs / s.days;
  return [
    `publish ${label}: ${s.days} full-grid days (841 x 681) + ${s.observations} observations in ${(totalMs / 1000).toFixed(1)} s`,
    `  per day ${ms(perDay)}  baseline decode-only per day ${ms(median(decodeMs))}  ratio ${(perDay / median(decodeMs)).toFixed(1)}x`,
    `  dist per day ${(rasterBytes / s.days / 1e6).toFixed(2)} MB (everything in dist, observations included), dist ${(rasterBytes / 1e6).toFixed(1)} MB`,
  ].join("\n");
}

async function sizeOfTree(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? await sizeOfTree(path) : (await stat(path)).size;
  }
  return total;
}

function queryBody(bbox: number[], start: string, end: string, format: string): string {
  return JSON.stringify({
    variables: ["air_temperature_max"],
    region: { bbox, crs: "EPSG:4326" },
    period: { start, end },
    temporal_resolution: "daily",
    spatial_resolution: "native",
    units: { air_temperature_max: "degC" },
    data_class: "interpolated_observation",
    missing_policy: "preserve",
    source_preference: "silo",
    format,
  });
}

async function timeRequests(url: string, init: RequestInit | undefined, n: number): Promise<{ times: number[]; bytes: number; status: number }> {
  let bytes = 0;
  let status = 0;
  const times: number[] = [];
  for (let i = 0; i < n + 5; i++) {
    const t = performance.now();
    const res = await fetch(url, init);
    const body = await res.arrayBuffer();
    if (i >= 5) times.push(performance.now() - t); // the first five warm caches and the JIT
    bytes = body.byteLength;
    status = res.status;
  }
  return { times, bytes, status };
}

async function benchServer(dist: string): Promise<string> {
  const app = await createApp({ dist, log: false });
  await new Promise<void>((resolve) => app.server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const post = (body: string): RequestInit => ({ method: "POST", headers: { "content-type": "application/json" }, body });
  const N = 200;
  try {
    const health = await timeRequests(`${base}/api/health`, undefined, N);
    const cases: [string, RequestInit, string][] = [
      ["1 cell x 31 days, JSON", post(queryBody([133.88, -23.73, 133.92, -23.68], "2003-01-01", "2003-01-31", "json")), "/api/v1/data/query"],
      ["10,000 rows (100 x 100 cells x 1 day), CSV", post(queryBody([130, -25, 135, -20], "2003-01-15", "2003-01-15", "csv")), "/api/v1/data/query"],
      ["10,000 rows (50 x 50 cells x 4 days), CSV", post(queryBody([140, -30, 142.5, -27.5], "2003-01-10", "2003-01-13", "csv")), "/api/v1/data/query"],
    ];
    const lines = [`server (sequential requests over loopback, ${N} each after 5 warm-up; baseline GET /api/health median ${ms(median(health.times))})`];
    for (const [name, init, path] of cases) {
      const r = await timeRequests(`${base}${path}`, init, N);
      if (r.status !== 200) throw new Error(`${name}: status ${r.status}`);
      lines.push(
        `  ${name}: median ${ms(median(r.times))}  p95 ${ms(percentile(r.times, 0.95))}  ${r.bytes} bytes  ratio to health ${(median(r.times) / median(health.times)).toFixed(1)}x`,
      );
    }
    lines.push(`  server process RSS after the run: ${(process.memoryUsage().rss / 1e6).toFixed(0)} MB (bench and server share one process)`);
    return lines.join("\n");
  } finally {
    await app.close();
  }
}

const work = await mkdtemp(join(tmpdir(), "bench-"));
try {
  await writeDemo(DEMO);
  const cogs = await makeCogs(join(work, "cogs"));
  if (cogs) console.log(await benchPublish(cogs, "(GDAL COGs, DEFLATE + floating-point predictor, as SILO ships them)", join(work, "dist-cog")));
  else console.log("publish of COGs skipped: gdal_translate not found (bash test/ensure-gdal.sh installs it)");
  const dist = join(work, "dist");
  console.log(await benchPublish(DEMO, "(bundled demo, uncompressed GeoTIFF)", dist));
  console.log(await benchServer(dist));
} finally {
  await rm(work, { recursive: true, force: true });
}
