// The Zarr view read by the field's own tools over HTTP, with no project code: GDAL 3.6 (/vsicurl/), Debian's
// xarray + zarr 2.13 (fsspec, aiohttp) and zarr.js (zarrita, as a browser or Node app would), GDAL and xarray each in its own process (loading GDAL beside numcodecs crashed here). Whole
// maps and whole series they read equal the query route's answers, float32 for float32, NaN where it says null.

import { execFile } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { dateToDayNumber, dayNumberToDate } from "../../format/dates.js";
import { docBlock } from "../docs/doc-blocks.js";
import { type Served, buildDemoDist, post, requestFor, withServer } from "../support/server-fixture.js";

const run = promisify(execFile);
const HERE = import.meta.dirname;
const VARIABLE = "air_temperature_max";
const FIRST = "2003-01-01";

let dist: string;
let id: string;
let out: string;

const readers = suite("zarr readers");
readers.before(async () => {
  dist = await buildDemoDist();
  // the query route answers air_temperature_max: the view of its newest version is compared with it
  id = JSON.parse(readFileSync(join(dist, "catalog.json"), "utf8")).candidates.find((c: { id: string }) => c.id.startsWith("silo-tmax-")).id;
  out = await mkdtemp(join(tmpdir(), "zarr-readers-"));
  process.on("exit", () => rmSync(out, { recursive: true, force: true }));
});

/** The query route's values of a window of cells over dates, in its row order, as float32 (null: NaN), from CSV answers. */
async function queryWindow(served: Served, cells: { col: number; row: number; width: number; height: number }, start: string, end: string): Promise<Float32Array> {
  const answer = await post(served, "/api/v1/data/query", requestFor(cells, start, end, { format: "csv", dataset_version: id }));
  assert.is(answer.status, 200, answer.text.slice(0, 300));
  const lines = answer.text.split("\r\n").slice(1, -1);
  return Float32Array.from(lines, (line) => {
    const value = line.split(",")[4];
    return value === "" ? NaN : Number(value.slice(1, -1));
  });
}

/** One whole day of the grid (681 x 841, north-up) from the query route, in 100 x 100 boxes. */
async function queryMap(served: Served, date: string): Promise<Float32Array> {
  const map = new Float32Array(681 * 841);
  for (let row = 0; row < 681; row += 100) {
    for (let col = 0; col < 841; col += 100) {
      const cells = { col, row, width: Math.min(100, 841 - col), height: Math.min(100, 681 - row) };
      const values = await queryWindow(served, cells, date, date);
      for (let r = 0; r < cells.height; r++) map.set(values.subarray(r * cells.width, (r + 1) * cells.width), (row + r) * 841 + col);
    }
  }
  return map;
}

function readFloats(name: string): Float32Array {
  const bytes = readFileSync(join(out, name));
  return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
}

/**
 * What each group's variable declares its chunks are stored as: the maps group's as they are (compressor null, since
 * issue 35), the series group's zlib. Each reader below is asked the maps of one encoding and the series of the other.
 */
async function assertCompressors(served: Served): Promise<void> {
  const compressorOf = async (group: string) => ((await (await fetch(`${served.url}/zarr/v2/${id}/${group}/${VARIABLE}/.zarray`)).json()) as { compressor: unknown }).compressor;
  assert.equal([await compressorOf("maps"), await compressorOf("series")], [null, { id: "zlib", level: 1 }]);
}

/** The first cell where two float32 arrays differ (every NaN equal to every NaN), or null. */
function firstDifference(got: Float32Array, want: Float32Array): string | null {
  if (got.length !== want.length) return `${got.length} values, expected ${want.length}`;
  for (let i = 0; i < got.length; i++) {
    if (!(Object.is(got[i], want[i]) || (Number.isNaN(got[i]) && Number.isNaN(want[i])))) return `value ${i}: ${got[i]} != ${want[i]}`;
  }
  return null;
}

readers("zarr readers - GDAL reads whole maps over /vsicurl/ (uncompressed chunks): the grid's georeferencing, 256 x 256 blocks, the query route's values", async () => {
  await withServer(dist, async (served) => {
    await assertCompressors(served);
    const { stdout } = await run("/usr/bin/python3", [join(HERE, "zarr-read-gdal.py"), `${served.url}/zarr/v2/${id}/maps`, VARIABLE, out, "14", "30"], { timeout: 120_000 });
    const found = stdout.trim().split("\n").map((line) => JSON.parse(line));
    for (const f of found) {
      assert.equal([f.size, f.epsg, f.nodata, f.unit, f.block], [[841, 681], "4326", "nan", "degC", [256, 256]]);
      const want = [111.975, 0.05, 0, -9.975, 0, -0.05];
      f.geotransform.forEach((v: number, i: number) => assert.ok(Math.abs(v - want[i]) < 1e-9, `geotransform ${f.geotransform}`));
    }
    for (const index of [14, 30]) {
      const date = dayNumberToDate(dateToDayNumber(FIRST) + index);
      assert.is(firstDifference(readFloats(`gdal-${index}.f32`), await queryMap(served, date)), null, date);
    }
  });
});

readers("zarr readers - xarray opens both groups lazily and reads a whole map (uncompressed chunks), whole series of points and a 1-degree box (zlib chunks): the query route's values", async () => {
  const points = [[133.85, -23.7], [150, -33], [112, -10]];
  const box = { col: 440, row: 261, width: 20, height: 20 }; // 133.975..134.975 E, -24.025..-23.025: edges on cell edges
  await withServer(dist, async (served) => {
    await assertCompressors(served);
    const args = [join(HERE, "zarr-read-xarray.py"), served.url, id, VARIABLE, out, "14", ...points.map((p) => p.join(",")), "133.975,-24.025,134.975,-23.025"];
    const { stdout } = await run("/usr/bin/python3", args, { timeout: 120_000 });
    const found = JSON.parse(stdout.trim().split("\n").pop()!);
    assert.equal(found, { dtype: "float32", dims: ["time", "lat", "lon"], shape: [31, 681, 841], time: ["2003-01-01", "2003-01-31"], units: "degC", standard_name: "air_temperature", box: [31, 20, 20], map: [681, 841] });
    assert.is(firstDifference(readFloats("xarray-map.f32"), await queryMap(served, "2003-01-15")), null, "the map");
    for (const [n, [lon, lat]] of points.entries()) {
      const col = Math.round((lon - 112) / 0.05);
      const row = Math.round((-10 - lat) / 0.05);
      assert.is(firstDifference(readFloats(`xarray-point-${n}.f32`), await queryWindow(served, { col, row, width: 1, height: 1 }, FIRST, "2003-01-31")), null, `point ${lon},${lat}`);
    }
    // 20 x 20 cells x 31 days is over the query's 10,000 rows: two periods
    const want = new Float32Array(31 * 400);
    want.set(await queryWindow(served, box, FIRST, "2003-01-15"), 0);
    want.set(await queryWindow(served, box, "2003-01-16", "2003-01-31"), 15 * 400);
    assert.is(firstDifference(readFloats("xarray-box.f32"), want), null, "the box");
  });
});

readers("zarr readers - zarr.js (zarrita) opens both groups from their consolidated metadata and reads a whole map (uncompressed chunks) and whole series of points (zlib chunks): the query route's values", async () => {
  const zarr = await import("zarrita"); // ESM only: uvu loads test files as CommonJS
  await withServer(dist, async (served) => {
    await assertCompressors(served);
    const open = async (group: string) => {
      const store = await zarr.withConsolidatedMetadata(new zarr.FetchStore(`${served.url}/zarr/v2/${id}/${group}`), { format: "v2" });
      const root = await zarr.open.v2(store, { kind: "group" });
      return zarr.open.v2(root.resolve(VARIABLE), { kind: "array" });
    };
    const maps = await open("maps");
    assert.equal([maps.shape, maps.chunks, maps.dtype], [[31, 681, 841], [1, 256, 256], "float32"]);
    const day = await zarr.get(maps, [14, null, null]);
    assert.is(firstDifference(day.data as Float32Array, await queryMap(served, "2003-01-15")), null, "the map");
    const series = await open("series");
    assert.equal([series.shape, series.chunks], [[31, 681, 841], [1024, 4, 4]]);
    for (const [col, row] of [[437, 274], [760, 460], [0, 0]]) {
      const point = await zarr.get(series, [null, row, col]);
      assert.is(firstDifference(point.data as Float32Array, await queryWindow(served, { col, row, width: 1, height: 1 }, FIRST, "2003-01-31")), null, `cell ${col},${row}`);
    }
  });
});


readers("zarr readers - every example of docs/clients.md's Zarr section runs against a live server: xarray, GDAL, zarr.js, the QGIS and R source strings", async () => {
  await withServer(dist, async (served) => {
    const live = (text: string) => text.replaceAll("http://127.0.0.1:8080", served.url);
    const cwd = await mkdtemp(join(out, "docs-"));
    // the xarray block reads its cell with the block before it (the place rule, silo_cell)
    const python = docBlock("docs/clients.md", "def silo_cell(lon, lat):") + docBlock("docs/clients.md", "base = \"http://127.0.0.1:8080/zarr/v2\"");
    const xarray = await run("/usr/bin/python3", ["-c", live(python)], { cwd, timeout: 120_000 });
    assert.match(xarray.stdout, /^\(437, 274\) \(437, 274\)$/m);
    assert.match(xarray.stdout, /count\s+31\.0/);
    assert.match(xarray.stdout, /\(41, 41\)/);
    const sh = docBlock("docs/clients.md", "export GDAL_DISABLE_READDIR_ON_OPEN=EMPTY_DIR");
    const gdal = await run("bash", ["-euo", "pipefail", "-c", live(sh)], { cwd, timeout: 120_000 });
    const lines = gdal.stdout.split("\n");
    assert.ok(lines.includes("Size is 841, 681"), gdal.stdout);
    const cell = lines.find((line) => /^-?[0-9.]+$/.test(line));
    assert.is(Math.fround(Number(cell)), (await queryWindow(served, { col: 437, row: 274, width: 1, height: 1 }, "2003-01-15", "2003-01-15"))[0]);
    // GDAL's box: whole cells from the edge at or west of 133 and north of -23 (40 x 40); xarray's: the 41 x 41 centres inside
    for (const [file, size, west, north] of [["box.tif", 40, 132.975, -22.975], ["box.nc", 40, 132.975, -22.975], ["region.nc", 41, 132.975, -22.975]] as const) {
      const info = JSON.parse((await run("gdalinfo", ["-json", join(cwd, file)])).stdout);
      assert.equal(info.size, [size, size], file);
      assert.ok(Math.abs(info.geoTransform[0] - west) < 1e-9 && Math.abs(info.geoTransform[3] - north) < 1e-9, `${file}: ${info.geoTransform}`);
    }
    // the zarr.js block, from a folder inside the checkout so that node finds zarrita in its node_modules
    const js = docBlock("docs/clients.md", "zarr.withConsolidatedMetadata");
    const jsFolder = await mkdtemp(join(HERE, "..", "..", ".cache", "zarr-doc-"));
    try {
      await writeFile(join(jsFolder, "example.mjs"), live(js));
      const env = { ...process.env, FORCE_COLOR: "0" }; // uvu's colours would reach console.log's output
      const zarrJs = await run(process.execPath, [join(jsFolder, "example.mjs")], { env, timeout: 60_000 });
      assert.is(zarrJs.stdout, "[ 681, 841 ] 31 true\n");
    } finally {
      rmSync(jsFolder, { recursive: true, force: true });
    }
    const sources = [docBlock("docs/clients.md", "/maps\":/air_temperature_max:14\n"), docBlock("docs/clients.md", "region <- crop(day,")].flatMap((block) => [...block.matchAll(/ZARR:"[^"]*":\/\w+:[0-9]+/g)].map((m) => m[0]));
    assert.is(sources.length, 2);
    for (const source of sources) {
      const info = await run("gdalinfo", [live(source)], { env: { ...process.env, GDAL_DISABLE_READDIR_ON_OPEN: "EMPTY_DIR" } });
      assert.match(info.stdout, /Size is 841, 681/);
    }
  });
});

readers.run();
