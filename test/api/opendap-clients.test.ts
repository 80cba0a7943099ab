// OPeNDAP read by the netCDF world's own clients, by URL, with no project code (docs/contract.md §8.6): ncdump, nccopy,
// NCO's ncks, CDO, xarray (engine="netcdf4"), Python's netCDF4 and R's ncdf4, each reading a subset of the demo's
// versions, every value compared with GDAL's reading of the GeoTIFFs they were published from (float32 for float32,
// missing where GDAL reads the nodata value). The docs' recipes run here too (docs/clients.md "OPeNDAP").

import { execFile } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { GRID, type Window, colToLon, rowToLat } from "../../format/grid.js";
import { listDates } from "../../format/dates.js";
import { docBlock, localize } from "../docs/doc-blocks.js";
import { runBash } from "../docs/doc-run.js";
import { type Served, buildDemoDist, withServer } from "../support/server-fixture.js";

const run = promisify(execFile);
const PYTHON = "/usr/bin/python3";
const DATES = listDates("2003-01-01", "2003-01-31");
const TMAX = "air_temperature_max";

let dist: string;
let sources: string;
let work: string;
/** the demo's version of each SILO variable by its name: max_temp, daily_rain */
const ids: Record<string, string> = {};

// GDAL reads a window of each day's file (the demo's are whole-grid GeoTIFFs): float32 bits, nodata as NaN
const READ_WITH_GDAL = `
import sys, json, struct, math
from osgeo import gdal
gdal.UseExceptions()
for line in sys.stdin.read().splitlines():
    path, col, row, width, height = json.loads(line)
    ds = gdal.Open(path)
    gt = ds.GetGeoTransform()
    x0 = round((111.975 + col * 0.05 - gt[0]) / gt[1]); y0 = round((-9.975 - row * 0.05 - gt[3]) / gt[5])
    band = ds.GetRasterBand(1)
    nodata = band.GetNoDataValue()
    values = struct.unpack("<%df" % (width * height), band.ReadRaster(x0, y0, width, height, buf_type=gdal.GDT_Float32))
    print(json.dumps([None if (math.isnan(v) or (nodata is not None and v == struct.unpack("<f", struct.pack("<f", nodata))[0])) else v for v in values]))
`;

/** GDAL's values of a window on each date (date-major, then rows, then columns), NaN where it reads nodata. */
async function readWithGdal(silo: string, dates: string[], [col, row, width, height]: Window): Promise<Float32Array> {
  const lines = dates.map((d) => JSON.stringify([join(sources, d.slice(0, 4), `${d.replaceAll("-", "")}.${silo}.tif`), col, row, width, height]));
  const child = run(PYTHON, ["-c", READ_WITH_GDAL], { maxBuffer: 1 << 28, timeout: 120_000 });
  child.child.stdin!.end(lines.join("\n"));
  const { stdout } = await child;
  return Float32Array.from(stdout.trim().split("\n").flatMap((l) => JSON.parse(l) as (number | null)[]), (v) => (v === null ? NaN : v));
}

/** Values compared as float32 (every NaN alike): throws at the first difference. */
function assertSameValues(got: ArrayLike<number>, want: Float32Array, what: string): void {
  assert.is(got.length, want.length, `${what}: how many values`);
  for (let i = 0; i < want.length; i++) {
    const g = Math.fround(got[i]);
    assert.ok(Object.is(g, want[i]) || (Number.isNaN(g) && Number.isNaN(want[i])), `${what}: value ${i} is ${got[i]}, GDAL reads ${want[i]}`);
  }
  assert.ok(Array.from(want).some((v) => !Number.isNaN(v)), `${what}: some value is held`);
}

/** The values ncdump prints of a variable (`_` is the fill value, NaN here). */
function ncdumpValues(text: string, name: string): number[] {
  const at = text.indexOf(` ${name} =`, text.indexOf("\ndata:\n"));
  assert.ok(at > 0, text.slice(-400));
  const list = text.slice(text.indexOf("=", at) + 1, text.indexOf(";", at));
  return list.split(",").map((v) => (v.trim() === "_" ? NaN : Number(v)));
}

const url = (served: Served, silo = "max_temp") => `${served.url}/opendap/${ids[silo]}`;

const clients = suite("opendap clients");
clients.before(async () => {
  dist = await buildDemoDist();
  sources = join(dirname(dist), "sources");
  for (const c of JSON.parse(readFileSync(join(dist, "catalog.json"), "utf8")).candidates as { id: string; record: { dataset_key: string } }[]) {
    ids[{ "silo-tmax": "max_temp", "silo-rain": "daily_rain" }[c.record.dataset_key] ?? c.record.dataset_key] ??= c.id;
  }
  work = await mkdtemp(join(tmpdir(), "opendap-clients-"));
  process.on("exit", () => rmSync(work, { recursive: true, force: true }));
});

clients("opendap clients - ncdump reads the header and a constrained grid; nccopy copies a constrained URL into a file", async () => {
  await withServer(dist, async (served) => {
    const header = (await run("ncdump", ["-h", url(served)])).stdout;
    for (const line of ["\ttime = 31 ;", "\tlat = 681 ;", "\tlon = 841 ;", `\tfloat ${TMAX}(time, lat, lon) ;`, `\t\t:dataset_version = "${ids.max_temp}" ;`, `\t\t${TMAX}:_FillValue = NaNf ;`]) {
      assert.ok(header.includes(`${line}\n`), `${line}\n${header}`);
    }
    // a box crossing the coast (ocean cells are missing) on days 3..5
    const box: Window = [33, 300, 6, 4]; // 113.65..113.9 E: the coast at 113.8
    const constraint = `${TMAX}[2:4][${box[1]}:${box[1] + box[3] - 1}][${box[0]}:${box[0] + box[2] - 1}]`;
    const want = await readWithGdal("max_temp", DATES.slice(2, 5), box);
    assert.ok(want.some(Number.isNaN), "the box holds ocean");
    const dumped = (await run("ncdump", ["-p", "9,17", "-v", TMAX, `${url(served)}?${constraint}`])).stdout;
    assertSameValues(ncdumpValues(dumped, TMAX), want, "ncdump");
    const copy = join(work, "nccopy.nc");
    await run("nccopy", [`${url(served)}?${constraint}`, copy]);
    assertSameValues(ncdumpValues((await run("ncdump", ["-p", "9,17", "-v", TMAX, copy])).stdout, TMAX), want, "nccopy");
  });
});

clients("opendap clients - NCO's ncks -d cuts a box of days by index into a file", async () => {
  await withServer(dist, async (served) => {
    const out = join(work, "ncks.nc");
    await run("ncks", ["-O", "-d", "time,10,13", "-d", "lat,400,404", "-d", "lon,500,507", "-v", TMAX, url(served), out]);
    const dumped = (await run("ncdump", ["-p", "9,17", "-v", `${TMAX},lat,lon`, out])).stdout;
    assert.equal(ncdumpValues(dumped, "lat"), [400, 401, 402, 403, 404].map(rowToLat));
    assert.equal(ncdumpValues(dumped, "lon"), [500, 501, 502, 503, 504, 505, 506, 507].map(colToLon));
    assertSameValues(ncdumpValues(dumped, TMAX), await readWithGdal("max_temp", DATES.slice(10, 14), [500, 400, 8, 5]), "ncks");
  });
});

clients("opendap clients - CDO describes the dataset (sinfon) and writes a box over several steps (outputtab)", async () => {
  await withServer(dist, async (served) => {
    const info = (await run("cdo", ["-s", "sinfon", url(served)])).stdout;
    assert.match(info, /1 : lonlat +: points=572721 \(841x681\)/);
    assert.match(info, /lon : 112 to 154 by 0\.05 degrees_east/);
    assert.match(info, /lat : -10 to -44 by -0\.05 degrees_north/);
    assert.match(info, /time : 31 steps/);
    // 133.0..133.2 E, -25.1..-24.9 S: cells 420..424 by rows 298..302, days 6..8
    const table = (await run("cdo", ["-s", "outputtab,date,lon,lat,value", "-sellonlatbox,132.99,133.21,-25.11,-24.89", "-seltimestep,7/9", url(served)])).stdout;
    const rows = table.trim().split("\n").slice(1).map((line) => line.trim().split(/\s+/));
    assert.is(rows.length, 3 * 5 * 5);
    const want = await readWithGdal("max_temp", DATES.slice(6, 9), [420, 298, 5, 5]);
    rows.forEach(([date, lon, lat, value], i) => {
      const [day, cell] = [Math.floor(i / 25), i % 25];
      assert.is(date, DATES[6 + day]);
      assert.equal([Number(lon), Number(lat)], [colToLon(420 + (cell % 5)), rowToLat(298 + Math.floor(cell / 5))]);
      assert.is(Math.fround(Number(value)), want[i], `${date} ${lon} ${lat}`);
    });
  });
});

// xarray opens the dataset lazily: reading one place over every date asks one small .dods, never the grid
const XARRAY = `
import sys, json, xarray as xr
ds = xr.open_dataset(sys.argv[1], engine="netcdf4")
v = ds["${TMAX}"]
place = v.sel(lat=float(sys.argv[2]), lon=float(sys.argv[3]), method="nearest")
print(json.dumps({"dims": list(v.dims), "shape": list(v.shape), "dtype": str(v.dtype), "time": [str(ds.time.values[0])[:10], str(ds.time.values[-1])[:10]],
                  "version": ds.attrs["dataset_version"], "values": [None if x != x else float(x) for x in place.values]}))
`;

clients("opendap clients - xarray (engine netcdf4) reads a place over every date lazily", async () => {
  const [col, row] = [433, 274]; // 133.65 E, -23.7 S
  const asked: string[] = [];
  await withServer(
    dist,
    async (served) => {
      const { stdout } = await run(PYTHON, ["-c", XARRAY, url(served), String(rowToLat(row)), String(colToLon(col))], { timeout: 120_000 });
      const found = JSON.parse(stdout);
      assert.equal([found.dims, found.shape, found.dtype, found.time, found.version], [["time", "lat", "lon"], [31, GRID.height, GRID.width], "float32", ["2003-01-01", "2003-01-31"], ids.max_temp]);
      assertSameValues(found.values.map((v: number | null) => v ?? NaN), await readWithGdal("max_temp", DATES, [col, row, 1, 1]), "xarray");
    },
    { log: (line) => asked.push(line) },
  );
  const data = asked.filter((line) => line.includes(".dods"));
  assert.ok(data.length > 0 && data.every((line) => Number(line.split(" ")[3]) < 100_000), `every .dods xarray asked is small:\n${data.join("\n")}`);
});

clients("opendap clients - Python's netCDF4 reads a slab, R's ncdf4 reads with start and count", async () => {
  await withServer(dist, async (served) => {
    const python = `import sys, json, netCDF4\nv = netCDF4.Dataset(sys.argv[1])["${TMAX}"]\nprint(json.dumps([None if x != x else float(x) for x in v[20:23, 350:354, 600:603].filled(float("nan")).ravel()]))`;
    const slab = JSON.parse((await run(PYTHON, ["-c", python, url(served)])).stdout) as (number | null)[];
    assertSameValues(slab.map((v) => v ?? NaN), await readWithGdal("max_temp", DATES.slice(20, 23), [600, 350, 3, 4]), "netCDF4");
    // R counts from 1 and lists dimensions fastest first (lon, lat, time): rain over 5 cells x 2 rows x 4 days
    const r = `library(ncdf4); nc <- nc_open("${url(served, "daily_rain")}"); v <- ncvar_get(nc, "precipitation_amount", start = c(501, 201, 11), count = c(5, 2, 4)); cat(sprintf("%.9g", v), sep = "\\n")`;
    const values = (await run("Rscript", ["-e", r], { timeout: 120_000 })).stdout.trim().split("\n").map((v) => (v === "NA" || v === "NaN" ? NaN : Number(v)));
    assertSameValues(values, await readWithGdal("daily_rain", DATES.slice(10, 14), [500, 200, 5, 2]), "R ncdf4");
  });
});

clients("opendap clients - docs/clients.md's OPeNDAP recipes run as written against the newest versions", async () => {
  await withServer(dist, async (served) => {
    const live = (block: string) => localize(block, { "http://127.0.0.1:8080": served.url });
    const readme = await runBash(live(docBlock("README.md", "ncdump -h http://127.0.0.1:8080/opendap/latest/silo-tmax")), { cwd: work });
    assert.ok(readme.stdout.includes(`\tfloat air_temperature_max(time, lat, lon) ;`), readme.stdout.slice(0, 500));
    const tools = await runBash(live(docBlock("docs/clients.md", "nccopy 'http://127.0.0.1:8080/opendap/latest/silo-tmax?")), { cwd: work });
    assert.ok(tools.stdout.includes(`:dataset_version = "${ids.max_temp}" ;`), tools.stdout.slice(0, 500));
    const week = await readWithGdal("max_temp", DATES.slice(0, 7), [400, 300, 20, 20]);
    for (const file of ["week.nc", "week-nco.nc"]) {
      assertSameValues(ncdumpValues((await run("ncdump", ["-p", "9,17", "-v", TMAX, join(work, file)])).stdout, TMAX), week, file);
    }
    const cdo = await runBash(live(docBlock("docs/clients.md", "cdo sinfon http://127.0.0.1:8080/opendap/latest/silo-tmax")), { cwd: work });
    assert.match(cdo.stdout, /time : 31 steps/);
    assert.is(cdo.stdout.split("\n").filter((line) => /^ *2003-01-0[123] +133/.test(line)).length, 3 * 5 * 5, cdo.stdout);
    const xarray = (await run(PYTHON, ["-c", live(docBlock("docs/clients.md", "place = ds[\"air_temperature_max\"].sel(lat=-23.7"))], { timeout: 120_000 })).stdout;
    assert.ok(xarray.startsWith(`${ids.max_temp} [`), xarray);
    const slab = (await run(PYTHON, ["-c", live(docBlock("docs/clients.md", "box = v[0:7, 300:320, 400:420]"))])).stdout;
    assert.match(slab, /^\(7, 20, 20\) \d+\.\d+\n$/);
    const r = (await run("Rscript", ["-e", live(docBlock("docs/clients.md", "nc <- nc_open(\"http://127.0.0.1:8080/opendap/latest/silo-rain\")"))], { timeout: 120_000 })).stdout;
    const rain = await readWithGdal("daily_rain", DATES, [400, 300, 1, 1]);
    assert.is(r.trim(), `[1] ${Number(rain.reduce((a, b) => a + b, 0).toPrecision(7))}`);
  });
});

clients.run();
