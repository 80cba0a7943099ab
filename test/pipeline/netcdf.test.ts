// Checks pipeline/ingest/netcdf.ts against GDAL on netCDF4-made annual files (committed windows of the grid, and full-grid
// years made here), that the same days as GeoTIFFs in every encoding publish to the same version id and pieces, and
// that bad annual files stop the publish naming the file, the day and the reason.

import { spawnSync } from "node:child_process";
import { copyFile, mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { colToEdgeLon, GRID, rowToEdgeLat, type Window } from "../../format/grid.js";
import { objectPath } from "../../format/objects.js";
import type { MonthPage, RasterIndex, YearPage } from "../../format/version-index.js";
import { PublishError } from "../../pipeline/errors.js";
import { NETCDF_LIBRARY } from "../../pipeline/ingest/netcdf.js";
import { WorkerPool } from "../../pipeline/pool.js";
import type { PublishSummary } from "../../pipeline/publish/publish.js";
import { expectPublishError, freshDirs, makeWorkDir, publishSilently } from "../support/helpers.js";
import type { NetcdfReply, NetcdfRequest } from "../support/netcdf-worker.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const FIXTURES = fileURLToPath(new URL("../fixtures/", import.meta.url));
const MAKE = join(FIXTURES, "make-netcdf-fixtures.py");
const PYTHON = "/usr/bin/python3";
const LEGACY_OCEAN = Math.fround(-3276.8);
const freshDir = freshDirs(makeWorkDir("netcdf-test"));

const HAS_TOOLS = spawnSync(PYTHON, ["-c", "import netCDF4, numpy; from osgeo import gdal"]).status === 0;

function requireTools(): void {
  if (!HAS_TOOLS) assert.unreachable("python3-netcdf4, python3-numpy or python3-gdal is missing: run `bash test/support/ensure-python.sh`, then rerun the tests");
}

function runPython(args: string[]): string {
  const run = spawnSync(PYTHON, args, { encoding: "utf8", maxBuffer: 256 << 20 });
  if (run.status !== 0) throw new Error(`${args.join(" ")} failed: ${run.stderr}`);
  return run.stdout;
}

// h5wasm runs in worker threads, as in a publish (see pipeline/pool.ts): one thread for this file's reads.
let pool: WorkerPool<NetcdfRequest, NetcdfReply> | null = null;

async function decodeAnnual(path: string, days: number[]): Promise<Extract<NetcdfReply, { ok: true }>> {
  pool ??= new WorkerPool(new URL("../support/netcdf-worker.ts", import.meta.url), 1, [NETCDF_LIBRARY]);
  const reply = await pool.run({ path, days });
  if (!reply.ok) throw new PublishError(reply.file, reply.stage, reply.reason);
  return reply;
}

// GDAL reads the variable (one band per day, north-up whatever the file's order) and hands back, for the days
// asked, the stored numbers and the values unscaled by GDAL itself (gdal_translate -unscale -ot Float32).
const GDAL_DUMP = `
import base64, json, sys
from array import array
from osgeo import gdal
gdal.UseExceptions()
name = 'NETCDF:"%s":max_temp' % sys.argv[1]
ds = gdal.Open(name)
out = {"geotransform": list(ds.GetGeoTransform()), "width": ds.RasterXSize, "height": ds.RasterYSize, "bands": ds.RasterCount, "days": []}
for n in [int(d) + 1 for d in sys.argv[2].split(",")]:
    band = ds.GetRasterBand(n)
    raw = array("d", band.ReadRaster(buf_type=gdal.GDT_Float64))
    unscaled = gdal.Translate("/vsimem/day.tif", ds, bandList=[n], unscale=True, outputType=gdal.GDT_Float32)
    cells = array("f", unscaled.GetRasterBand(1).ReadRaster(buf_type=gdal.GDT_Float32))
    out["days"].append({"raw": base64.b64encode(raw.tobytes()).decode(), "cells": base64.b64encode(cells.tobytes()).decode(),
                        "scale": band.GetScale(), "offset": band.GetOffset()})
print(json.dumps(out))
`;

interface GdalDay {
  raw: Float64Array;
  cells: Float32Array;
  scale: number | null;
  offset: number | null;
}

function readWithGdal(path: string, days: number[]): { window: Window; bands: number; days: GdalDay[] } {
  const out = JSON.parse(runPython(["-c", GDAL_DUMP, path, days.join(",")]));
  const decode = <T>(text: string, make: (b: ArrayBuffer) => T) => {
    const bytes = Buffer.from(text, "base64");
    return make(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  };
  const [x0, dx, , y0, , dy] = out.geotransform as number[];
  assert.ok(Math.abs(dx - 0.05) < 1e-9 && Math.abs(dy + 0.05) < 1e-9, `GDAL pixel size ${dx}, ${dy}`);
  const col = Math.round((x0 * 1000 - GRID.westEdgeMilliDeg) / GRID.cellMilliDeg);
  const row = Math.round((GRID.northEdgeMilliDeg - y0 * 1000) / GRID.cellMilliDeg);
  assert.ok(Math.abs(x0 - colToEdgeLon(col)) < 1e-9 && Math.abs(y0 - rowToEdgeLat(row)) < 1e-9, `GDAL origin ${x0}, ${y0} on the grid`);
  return {
    window: [col, row, out.width, out.height],
    bands: out.bands,
    days: out.days.map((d: { raw: string; cells: string; scale: number | null; offset: number | null }) => ({
      raw: decode(d.raw, (b) => new Float64Array(b)),
      cells: decode(d.cells, (b) => new Float32Array(b)),
      scale: d.scale,
      offset: d.offset,
    })),
  };
}

/**
 * Every cell of one day against GDAL. Missing: a stored number the file declares missing (`missingRaw`: GDAL
 * honours _FillValue only, not a separate missing_value), NaN, or the legacy ocean value after unscaling. Values:
 * bit for bit when the scale attribute is float64 (or there is none). A float32 scale_factor holds
 * 0.10000000149011612, and GDAL multiplies by that, landing one float32 step away from the tenth for about a
 * fifth of the numbers (253 -> 25.300001); the decoder takes the decimal the writer meant (docs/contract.md
 * §6.1), so there the check is: the same tenth as GDAL, and exactly Math.fround(stored / 10).
 */
function assertSameAsGdal(ours: Float32Array, gdal: GdalDay, missingRaw: number[], float32Scale: boolean, label: string): number {
  assert.is(ours.length, gdal.cells.length, `${label}: cell count`);
  let mismatches = 0;
  let first = "";
  let valid = 0;
  const ourBits = new Uint32Array(ours.buffer, ours.byteOffset, ours.length);
  const gdalBits = new Uint32Array(gdal.cells.buffer, gdal.cells.byteOffset, gdal.cells.length);
  for (let i = 0; i < ours.length; i++) {
    const raw = gdal.raw[i];
    const g = gdal.cells[i];
    const missing = Number.isNaN(raw) || missingRaw.includes(raw) || g === LEGACY_OCEAN;
    let same: boolean;
    if (missing) same = Number.isNaN(ours[i]);
    else if (float32Scale) same = Math.round(ours[i] * 10) === Math.round(g * 10) && ours[i] === Math.fround(raw / 10);
    else same = ourBits[i] === gdalBits[i];
    if (!missing) valid++;
    if (!same && mismatches++ === 0) first = `cell ${i}: ours ${ours[i]}, GDAL ${g} (stored ${raw})`;
  }
  assert.is(mismatches, 0, `${label}: ${mismatches} cells differ from GDAL, first ${first}`);
  return valid;
}

function listDates(first: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => new Date(Date.parse(first) + i * 86_400_000).toISOString().slice(0, 10));
}

// ---------------------------------------------------------------------------------------------------------------

const setup = suite("netcdf - reference tools");

setup("netcdf - GDAL, netCDF4 and numpy are installed (else run `bash test/support/ensure-python.sh`)", () => {
  requireTools();
});

setup.run();

// ---------------------------------------------------------------------------------------------------------------

interface GoodFixture {
  file: string;
  window: Window;
  dates: string[];
  missingRaw: number[];
  float32Scale: boolean;
  /** cells GDAL and we both read as values, over the days checked */
  valid: number;
}

const GOOD: GoodFixture[] = [
  { file: "nc-packed-south-up.nc", window: [0, 330, 37, 23], dates: listDates("2003-01-01", 5), missingRaw: [-32767], float32Scale: true, valid: 4003 },
  { file: "nc-packed-f64-north-up.nc", window: [804, 300, 37, 23], dates: listDates("2003-01-01", 5), missingRaw: [-32767, -9999], float32Scale: false, valid: 3741 },
  { file: "nc-float-leap.nc", window: [600, 400, 12, 9], dates: listDates("2004-01-01", 366), missingRaw: [], float32Scale: false, valid: 38165 },
  { file: "nc-default-fill.nc", window: [420, 200, 9, 7], dates: listDates("1999-01-01", 3), missingRaw: [-32767], float32Scale: false, valid: 180 },
];

const good = suite("openAnnualFile - decodes netCDF4-made files as GDAL reads them");

for (const fixture of GOOD) {
  good(`openAnnualFile - ${fixture.file}: dates, window and every cell of every day agree with GDAL`, async () => {
    requireTools();
    const path = join(FIXTURES, fixture.file);
    const days = fixture.dates.map((_, i) => i);
    const ours = await decodeAnnual(path, days);
    const gdal = readWithGdal(path, days);
    assert.equal(ours.dates, fixture.dates);
    assert.equal(ours.window, fixture.window);
    assert.equal(gdal.window, fixture.window, "GDAL's window (north-up) is the one the fixture was made for");
    assert.is(gdal.bands, fixture.dates.length);
    let valid = 0;
    days.forEach((d) => {
      valid += assertSameAsGdal(ours.days[d].values, gdal.days[d], fixture.missingRaw, fixture.float32Scale, `${fixture.file} day ${d}`);
      assert.is(ours.days[d].missing, ours.days[d].values.filter(Number.isNaN).length);
    });
    assert.is(valid, fixture.valid, "cells with values, as the fixture script's own formulas count them");
  });
}

good("openAnnualFile - a float32 scale_factor unpacks to the tenth SILO meant: 253 is exactly Math.fround(25.3)", async () => {
  requireTools();
  const path = join(FIXTURES, "nc-packed-south-up.nc");
  const gdal = readWithGdal(path, [0]).days[0];
  const ours = (await decodeAnnual(path, [0])).days[0].values;
  assert.is(Math.fround(gdal.scale!), Math.fround(0.1));
  let offByOne = 0;
  for (let i = 0; i < ours.length; i++) {
    const k = gdal.raw[i];
    if (k === -32767) continue;
    assert.is(ours[i], Math.fround(k / 10), `stored ${k}`);
    if (gdal.cells[i] !== ours[i]) offByOne++;
  }
  // GDAL's float32 arithmetic is one float32 step off for some tenths here; the decoder for none
  assert.ok(offByOne > 100, `GDAL differs on ${offByOne} cells`);
  assert.is.not(Math.fround(253 * Math.fround(0.1)), Math.fround(25.3));
});

good.run();

// ---------------------------------------------------------------------------------------------------------------

const full = suite("openAnnualFile - full 841 x 681 years made by netCDF4");

for (const orientation of ["south-up", "north-up"]) {
  full(`openAnnualFile - a full-grid ${orientation} packed year agrees with GDAL on every cell`, async () => {
    requireTools();
    const path = join(freshDir(`full-${orientation}`), "2004.max_temp.nc");
    await mkdir(join(path, ".."), { recursive: true });
    runPython([MAKE, "full", path, "2004", "3", orientation]);
    const ours = await decodeAnnual(path, [0, 1, 2]);
    const gdal = readWithGdal(path, [0, 2]);
    assert.equal(ours.dates, ["2004-01-01", "2004-01-02", "2004-01-03"]);
    assert.equal(ours.window, [0, 0, 841, 681]);
    assert.equal(gdal.window, [0, 0, 841, 681]);
    const valid = assertSameAsGdal(ours.days[0].values, gdal.days[0], [-32767], true, "day 0");
    assertSameAsGdal(ours.days[2].values, gdal.days[1], [-32767], true, "day 2");
    assert.ok(valid > 250_000 && valid < 572_721 - 100_000, `${valid} land cells`);
  });
}

full.run();

// ---------------------------------------------------------------------------------------------------------------

function publishQuietly(sources: string, dist: string, extra: object = {}): Promise<PublishSummary> {
  return publishSilently(sources, dist, { publishedAt: "2026-01-01T00:00:00Z", ...extra });
}

/** date -> [cells sha256, piece sha256] of a single-version dist. */
async function readDays(dist: string, indexSha256: string): Promise<Map<string, [string, string]>> {
  const read = async <T>(sha: string) => JSON.parse(await readFile(join(dist, objectPath(sha, "json")), "utf8")) as T;
  const out = new Map<string, [string, string]>();
  for (const year of (await read<RasterIndex>(indexSha256)).years) {
    for (const month of (await read<YearPage>(year.ref.sha256)).months) {
      for (const day of (await read<MonthPage>(month.ref.sha256)).days) out.set(day.date, [day.cells, day.piece.sha256]);
    }
  }
  return out;
}

const ENCODINGS = ["float32-cog", "float32-nan-packbits", "float32-legacy-ocean-lzw", "float64-strips", "int16-scaled-tiled", "uint16-offset-zstd", "int32-scaled-strips"];

const same = suite("publish - the same days from any form publish to the same version");

for (const [label, make] of [
  ["a committed window (south-up, packed)", async (dir: string) => copyFile(join(FIXTURES, "nc-packed-south-up.nc"), join(dir, "2003.max_temp.nc"))],
  ["a full-grid north-up year made here", async (dir: string) => void runPython([MAKE, "full", join(dir, "2004.max_temp.nc"), "2004", "2", "north-up"])],
] as const) {
  same(`publish - ${label}: the annual file and its days as GeoTIFFs in ${ENCODINGS.length} encodings give one version id and the same pieces`, async () => {
    requireTools();
    const annual = freshDir("annual");
    await mkdir(annual, { recursive: true });
    await make(annual);
    const [name] = await readdir(annual);
    const tiffs = freshDir("tiffs");
    runPython([MAKE, "tiffs", join(annual, name), tiffs]);
    assert.equal((await readdir(tiffs)).sort(), [...ENCODINGS].sort());
    const referenceDist = freshDir("dist-annual");
    const reference = (await publishQuietly(annual, referenceDist)).added[0];
    const referenceDays = await readDays(referenceDist, reference.metadata.index.sha256);
    for (const encoding of ENCODINGS) {
      const dist = freshDir(`dist-${encoding}`);
      const record = (await publishQuietly(join(tiffs, encoding), dist)).added[0];
      assert.is(record.id, reference.id, encoding);
      assert.equal(await readDays(dist, record.metadata.index.sha256), referenceDays, `${encoding}: cells and pieces of every day`);
    }
  });
}

same.run();

// ---------------------------------------------------------------------------------------------------------------

/** A sources folder holding one annual file (as 2003.max_temp.nc unless named), made from `bytes`. */
async function folderWith(bytes: Buffer, name = "2003.max_temp.nc"): Promise<string> {
  const dir = freshDir("bad");
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, name), bytes);
  return join(dir, name);
}

const BAD: { fixture: string; reason: string }[] = [
  { fixture: "nc-bad-grid.nc", reason: "longitude 122.01 (index 0) is not on the SILO 0.05 degree grid (112 + 0.05k, ascending); is this a resampled file?" },
  { fixture: "nc-bad-variable.nc", reason: "holds no max_temp variable (it holds min_temp); publish the max_temp file" },
  { fixture: "nc-bad-time-units.nc", reason: 'time units "months since 2003-01-01" are not CF "days since YYYY-MM-DD"; is this a SILO annual file?' },
  { fixture: "nc-bad-calendar.nc", reason: 'time calendar "noleap" is not the standard (Gregorian) calendar SILO uses' },
  {
    fixture: "nc-bad-implausible.nc",
    reason: "day 2003-01-02 (max_temp[1]): value 75.5 at cell (col 203, row 102; lon 122.15, lat -15.1) is outside the plausible range -20..60; check the source file and the variable it holds",
  },
  { fixture: "nc-bad-classic.nc", reason: "is a classic NetCDF-3 file; SILO's annual files are NetCDF-4 (HDF5): convert it with `nccopy -k nc4`, or fetch it again" },
];

const bad = suite("publish - bad annual files stop the publish naming the file, the day and the reason");

for (const { fixture, reason } of BAD) {
  bad(`publish - ${fixture}: ${reason.slice(0, 50)}...`, async () => {
    const path = await folderWith(await readFile(join(FIXTURES, fixture)));
    const dist = freshDir("bad-dist");
    const err = await expectPublishError(publishQuietly(join(path, ".."), dist));
    assert.equal([err.file, err.stage, err.reason], [path, "decode", reason]);
    assert.not.ok((await readdir(dist)).includes("catalog.json"), "nothing is published");
  });
}

bad("publish - a truncated annual file (cut at half, at 4 KiB, 100 bytes short) is 'truncated or corrupt', naming the file", async () => {
  const bytes = await readFile(join(FIXTURES, "nc-packed-south-up.nc"));
  for (const length of [Math.floor(bytes.length / 2), 4096, bytes.length - 100]) {
    const path = await folderWith(bytes.subarray(0, length));
    const err = await expectPublishError(publishQuietly(join(path, ".."), freshDir("truncated-dist")));
    assert.equal([err.file, err.stage], [path, "decode"]);
    assert.match(err.reason, /^truncated or corrupt NetCDF-4 \(HDF5\) file \(.+\); fetch the file again$/);
  }
});

bad("publish - a damaged chunk stops at its day, naming the file and the day (never garbage cells)", async () => {
  const bytes = Buffer.from(await readFile(join(FIXTURES, "nc-packed-south-up.nc")));
  const chunk = findLastChunk(bytes);
  for (let i = chunk + 20; i < chunk + 60; i++) bytes[i] ^= 0x5a;
  const path = await folderWith(bytes);
  const err = await expectPublishError(publishQuietly(join(path, ".."), freshDir("damaged-dist")));
  assert.equal([err.file, err.stage], [path, "decode"]);
  assert.match(err.reason, /^day 2003-01-0\d \(max_temp\[\d\]\): cannot read its cells \(.+\); the file is damaged: fetch it again$/);
});

bad("publish - an annual file named for another year, and a folder holding a year twice, are refused", async () => {
  const path = await folderWith(await readFile(join(FIXTURES, "nc-packed-south-up.nc")), "2004.max_temp.nc");
  let err = await expectPublishError(publishQuietly(join(path, ".."), freshDir("renamed-dist")));
  assert.equal([err.file, err.stage, err.reason], [path, "discover", "time index 0 is 2003-01-01, outside 2004, the year the file's name gives; rename the file or fetch it again"]);
  const twice = join(path, "..");
  await mkdir(join(twice, "2003"));
  await copyFile(join(FIXTURES, "nc-packed-south-up.nc"), join(twice, "2003", "2003.max_temp.nc"));
  await copyFile(join(FIXTURES, "nc-packed-south-up.nc"), join(twice, "2003.max_temp.nc"));
  err = await expectPublishError(publishQuietly(twice, freshDir("twice-dist")));
  assert.equal([err.file, err.stage, err.reason], ["2003.max_temp.nc", "discover", "same year as 2003/2003.max_temp.nc; keep one file per year"]);
});

bad("cli - a bad annual file among good ones prints one line: error: <file>: day <date> (...): <reason> [decode]", async () => {
  const sources = freshDir("cli-bad");
  await mkdir(sources, { recursive: true });
  await copyFile(join(FIXTURES, "nc-bad-implausible.nc"), join(sources, "2003.max_temp.nc"));
  await copyFile(join(FIXTURES, "nc-float-leap.nc"), join(sources, "2004.max_temp.nc"));
  const run = spawnSync("node_modules/.bin/tsx", ["pipeline/cli.ts", "publish", "--sources", sources, "--dist", freshDir("cli-dist"), "--allow-gaps"], { cwd: REPO, encoding: "utf8" });
  assert.is(run.status, 1, run.stderr);
  const errors = run.stderr.split("\n").filter((l) => l.startsWith("error: "));
  assert.equal(errors, [`error: ${join(sources, "2003.max_temp.nc")}: ${BAD[4].reason} [decode]`]);
  assert.not.match(run.stderr, /^\s+at /m);
});

bad.after(async () => {
  await pool?.close();
});

bad.run();

/** The offset of the last zlib stream in a small netCDF-4 file: its last chunk (the last day's cells). */
function findLastChunk(bytes: Buffer): number {
  for (let i = bytes.length - 2; i > 0; i--) {
    // a zlib header: 0x78 then a byte making the pair a multiple of 31 (compression level 4 writes 0x78 0x5e)
    if (bytes[i] === 0x78 && bytes[i + 1] === 0x5e) return i;
  }
  throw new Error("no zlib stream found");
}
