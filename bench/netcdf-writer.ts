// The series route's NetCDF writer measured in process: MB/s of whole answers (layout, prelude and every slab), and
// the memory a long answer streamed a slab at a time holds, so a change to api/series/netcdf.ts is measured alike.
//
//   node_modules/.bin/tsx --expose-gc bench/netcdf-writer.ts   (NETCDF_ROUNDS: rounds of each shape, default 9)

import { createHash } from "node:crypto";
import { layoutNetcdf, type NetcdfDescription, streamNetcdf } from "../api/series/netcdf.js";
import { colToLon, rowToLat } from "../format/grid.js";
import { VARIABLES } from "../format/variables.js";

const ROUNDS = Number(process.env.NETCDF_ROUNDS ?? 9);

function describe(rows: number, cols: number, days: number, variables = 1): NetcdfDescription {
  return {
    days: Array.from({ length: days }, (_, t) => 7000 + t),
    lat: Array.from({ length: rows }, (_, r) => rowToLat(300 + r)),
    lon: Array.from({ length: cols }, (_, c) => colToLon(600 + c)),
    variables: VARIABLES.slice(0, variables).map((v) => ({ name: v.name, units: v.unit, longName: v.label, standardName: v.standardName ?? undefined, cellMethods: v.cellMethods ?? undefined })),
    globals: { title: "bench", institution: "bench", source: "bench", license: "CC-BY-4.0", history: "bench" },
  };
}

/** SILO-like tenths with about 8% missing, the same every run. */
function values(n: number): Float32Array {
  let a = 12345;
  return Float32Array.from({ length: n }, () => {
    a = (Math.imul(a, 1103515245) + 12345) | 0;
    const x = (a >>> 8) / 2 ** 24;
    return x < 0.08 ? Number.NaN : Math.round(x * 500 - 50) / 10;
  });
}

/** One answer written whole: its bytes, its milliseconds and its sha256 (the same in every round). */
async function writeOnce(d: NetcdfDescription, cells: Float32Array, slabDays?: number): Promise<{ bytes: number; ms: number; sha256: string }> {
  const hash = createHash("sha256");
  const perDay = d.lat.length * d.lon.length;
  const start = performance.now();
  const layout = layoutNetcdf(d);
  let bytes = 0;
  const chunks: Uint8Array[] = [];
  for await (const chunk of streamNetcdf(layout, (_, t0, t1) => cells.subarray(t0 * perDay, t1 * perDay), slabDays)) {
    bytes += chunk.length;
    chunks.push(chunk);
  }
  const ms = performance.now() - start;
  for (const chunk of chunks) hash.update(chunk);
  return { bytes, ms, sha256: hash.digest("hex").slice(0, 16) };
}

async function measure(name: string, rows: number, cols: number, days: number): Promise<void> {
  const d = describe(rows, cols, days);
  const cells = values(rows * cols * days);
  const first = await writeOnce(d, cells); // a cold start: the server's first answer of the shape after it starts
  for (let i = 0; i < 3; i++) await writeOnce(d, cells);
  const runs = [];
  for (let i = 0; i < ROUNDS; i++) runs.push(await writeOnce(d, cells));
  const ms = runs.map((r) => r.ms).sort((a, b) => a - b);
  const median = ms[Math.floor(ms.length / 2)];
  const { bytes, sha256 } = runs[0];
  console.log(`${name.padEnd(28)} ${(bytes / 1e6).toFixed(2).padStart(8)} MB  median ${median.toFixed(1).padStart(7)} ms  ${(bytes / 1e6 / (median / 1000)).toFixed(0).padStart(5)} MB/s  (best ${(bytes / 1e6 / (ms[0] / 1000)).toFixed(0)}, cold ${first.ms.toFixed(1)} ms)  sha256 ${sha256}`);
}

/** A long answer streamed and dropped a slab at a time (1 MiB slabs: 26 days of 100 x 100): the heap must not grow with it. */
async function measureMemory(rows: number, cols: number, days: number): Promise<void> {
  const d = describe(rows, cols, days);
  const perDay = rows * cols;
  // the reader hands out ready slabs (one per length), so the time measured is the writer's
  const slabs = new Map<number, Float32Array>();
  const slabOf = (n: number) => slabs.get(n) ?? slabs.set(n, values(n)).get(n)!;
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const before = process.memoryUsage();
  let peakHeap = before.heapUsed + before.arrayBuffers;
  let bytes = 0;
  const start = performance.now();
  for await (const chunk of streamNetcdf(layoutNetcdf(d), (_, t0, t1) => slabOf((t1 - t0) * perDay))) {
    bytes += chunk.length;
    const now = process.memoryUsage();
    peakHeap = Math.max(peakHeap, now.heapUsed + now.arrayBuffers);
  }
  const ms = performance.now() - start;
  const grew = (peakHeap - before.heapUsed - before.arrayBuffers) / 2 ** 20;
  console.log(`${`${rows} x ${cols} x ${days} streamed`.padEnd(28)} ${(bytes / 1e6).toFixed(0).padStart(8)} MB  ${(bytes / 1e6 / (ms / 1000)).toFixed(0)} MB/s, a slab of 26 days at a time; heap + array buffers peaked ${grew.toFixed(1)} MiB above the start${gc ? "" : " (run with --expose-gc for a clean start)"}`);
}

await measure("16 cells x 11,000 days", 4, 4, 11000);
await measure("100 x 100 cells x 365 days", 100, 100, 365);
await measureMemory(100, 100, 11000);
