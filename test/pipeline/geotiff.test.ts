// Checks pipeline/ingest/geotiff.ts against GDAL: every cell of every fixture, the refusals, and the writer's round trip.

import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { PublishError } from "../../pipeline/errors.js";
import { readSiloTiff, writeSiloTiff } from "../../pipeline/ingest/geotiff.js";
import { MAX_TEMP } from "../../format/variables.js";
import { colToEdgeLon, GRID, rowToEdgeLat } from "../../format/grid.js";
import type { Window } from "../../format/grid.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/", import.meta.url));
const PYTHON = "/usr/bin/python3";
const LEGACY_OCEAN = Math.fround(-3276.8);

const HAS_GDAL =
  spawnSync("gdalinfo", ["--version"]).status === 0 && spawnSync(PYTHON, ["-c", "from osgeo import gdal"]).status === 0;

/** Fails the calling test unless GDAL is installed: these tests mean nothing without the reference reader. */
function requireGdal(): void {
  if (!HAS_GDAL) {
    assert.unreachable("GDAL is missing (gdalinfo or Python osgeo): run `bash test/support/ensure-gdal.sh`, then rerun the tests");
  }
}

// GDAL reads the file and hands back its geotransform, CRS, nodata and every cell as float32 little-endian,
// unscaled by GDAL itself (gdal_translate -unscale -ot Float32) when the band has a scale or offset.
const GDAL_DUMP = `
import base64, json, sys
from array import array
from osgeo import gdal
gdal.UseExceptions()
ds = gdal.Open(sys.argv[1])
scaled = ds.GetRasterBand(1).GetScale() not in (None, 1) or ds.GetRasterBand(1).GetOffset() not in (None, 0)
if scaled:
    ds = gdal.Translate("/vsimem/unscaled.tif", ds, unscale=True, outputType=gdal.GDT_Float32)
band = ds.GetRasterBand(1)
cells = array("f", band.ReadRaster(0, 0, ds.RasterXSize, ds.RasterYSize, buf_type=gdal.GDT_Float32))
if sys.byteorder == "big":
    cells.byteswap()
srs = ds.GetSpatialRef()
nodata = band.GetNoDataValue()
print(json.dumps({
    "width": ds.RasterXSize,
    "height": ds.RasterYSize,
    "bands": ds.RasterCount,
    "geotransform": list(ds.GetGeoTransform()),
    "epsg": srs.GetAuthorityCode(None) if srs else None,
    "nodata": None if nodata is None else repr(nodata),
    "cells": base64.b64encode(cells.tobytes()).decode(),
}))
`;

interface GdalRead {
  width: number;
  height: number;
  bands: number;
  geotransform: number[];
  epsg: string | null;
  nodata: number | null;
  cells: Float32Array;
}

function readWithGdal(file: string): GdalRead {
  const run = spawnSync(PYTHON, ["-c", GDAL_DUMP, file], { encoding: "utf8", maxBuffer: 64 << 20 });
  if (run.status !== 0) throw new Error(`GDAL could not read ${file}: ${run.stderr}`);
  const out = JSON.parse(run.stdout);
  const bytes = Buffer.from(out.cells, "base64");
  const cells = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  // repr() spells NaN "nan"; Number() would only get there by accident
  const nodata = out.nodata === null ? null : out.nodata === "nan" ? NaN : Number(out.nodata);
  return { ...out, nodata, cells };
}

function runGdal(args: string[]): void {
  const run = spawnSync(args[0], args.slice(1), { encoding: "utf8" });
  if (run.status !== 0) throw new Error(`${args.join(" ")} failed: ${run.stderr}`);
}

/** The global window GDAL's geotransform names, refusing anything that is not exactly on the grid. */
function gdalWindow(gdal: GdalRead): Window {
  const [x0, dx, rx, y0, ry, dy] = gdal.geotransform;
  assert.equal([dx, rx, ry, dy], [0.05, 0, 0, -0.05], "GDAL geotransform is a north-up 0.05 degree grid");
  const col = Math.round((x0 * 1000 - GRID.westEdgeMilliDeg) / GRID.cellMilliDeg);
  const row = Math.round((GRID.northEdgeMilliDeg - y0 * 1000) / GRID.cellMilliDeg);
  assert.ok(Math.abs(x0 - colToEdgeLon(col)) < 1e-9 && Math.abs(y0 - rowToEdgeLat(row)) < 1e-9, `GDAL origin ${x0}, ${y0} on grid`);
  return [col, row, gdal.width, gdal.height];
}

type MissingKinds = { nodata: number; legacy: number; nan: number; inf: number };

/** Which of GDAL's cells docs/contract.md §6.1 calls missing, by kind. */
function countMissingKinds(gdal: GdalRead): MissingKinds {
  const kinds = { nodata: 0, legacy: 0, nan: 0, inf: 0 };
  const nodata = gdal.nodata === null ? null : Math.fround(gdal.nodata);
  for (const v of gdal.cells) {
    if (Number.isNaN(v)) kinds.nan++;
    else if (v === nodata) kinds.nodata++;
    else if (v === LEGACY_OCEAN) kinds.legacy++;
    else if (!Number.isFinite(v)) kinds.inf++;
  }
  return kinds;
}

/** Every cell: GDAL's finite, non-missing values bit for bit; GDAL's missing cells NaN in ours. */
function assertSameCells(ours: Float32Array, gdal: GdalRead, label: string): void {
  assert.is(ours.length, gdal.cells.length, `${label}: cell count`);
  const nodata = gdal.nodata === null ? null : Math.fround(gdal.nodata);
  const ourBits = new Uint32Array(ours.buffer, ours.byteOffset, ours.length);
  const gdalBits = new Uint32Array(gdal.cells.buffer, gdal.cells.byteOffset, gdal.cells.length);
  let mismatches = 0;
  let firstMismatch = "";
  for (let i = 0; i < ours.length; i++) {
    const g = gdal.cells[i];
    const missing = !Number.isFinite(g) || g === nodata || g === LEGACY_OCEAN;
    const same = missing ? Number.isNaN(ours[i]) : ourBits[i] === gdalBits[i];
    if (!same && mismatches++ === 0) firstMismatch = `cell ${i}: ours ${ours[i]}, GDAL ${g}`;
  }
  assert.is(mismatches, 0, `${label}: ${mismatches} cells differ from GDAL, first ${firstMismatch}`);
}

async function rejection(promise: Promise<unknown>): Promise<PublishError> {
  try {
    await promise;
  } catch (err) {
    assert.instance(err, PublishError, `expected a PublishError, got ${String(err)}`);
    return err as PublishError;
  }
  return assert.unreachable("expected readSiloTiff to reject") as never;
}

async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "geotiff-test-"));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A deterministic full-grid field: one-decimal values, a ragged missing ocean, some inland gaps. */
function makeFullGrid(): Float32Array {
  const values = new Float32Array(GRID.width * GRID.height);
  for (let row = 0; row < GRID.height; row++) {
    for (let col = 0; col < GRID.width; col++) {
      const land = ((col - 420) / 400) ** 2 + ((row - 330) / 320) ** 2 < 1 - ((col * row) % 7) / 100;
      const gap = (col * 7 + row * 13) % 97 === 0;
      const tenths = 250 + Math.round(100 * Math.sin(col / 40) + 80 * Math.cos(row / 30)) + ((col * 37 + row * 53) % 23);
      values[row * GRID.width + col] = land && !gap ? tenths / 10 : NaN;
    }
  }
  return values;
}

// --- precondition ---

const setup = suite("geotiff - reference reader");

setup("geotiff - GDAL is installed (else run `bash test/support/ensure-gdal.sh`)", () => {
  requireGdal();
});

setup.run();

// --- good fixtures, cell by cell against GDAL ---

const GOOD: { file: string; window: Window; missing: MissingKinds }[] = [
  { file: "cog-deflate-fp.tif", window: [100, 50, 37, 23], missing: { nodata: 29, legacy: 0, nan: 0, inf: 0 } },
  { file: "lzw.tif", window: [0, 0, 37, 23], missing: { nodata: 28, legacy: 0, nan: 0, inf: 0 } },
  { file: "strips.tif", window: [804, 658, 37, 23], missing: { nodata: 30, legacy: 0, nan: 0, inf: 0 } },
  { file: "legacy-ocean.tif", window: [400, 300, 37, 23], missing: { nodata: 22, legacy: 247, nan: 0, inf: 0 } },
  { file: "nan.tif", window: [600, 400, 37, 23], missing: { nodata: 0, legacy: 0, nan: 29, inf: 2 } },
  { file: "pixel-is-point.tif", window: [300, 200, 37, 23], missing: { nodata: 30, legacy: 0, nan: 0, inf: 0 } },
  // the other encodings GDAL writes for the grid: float64, and integers with a scale and offset
  { file: "float64.tif", window: [150, 300, 37, 23], missing: { nodata: 29, legacy: 0, nan: 0, inf: 0 } },
  { file: "int16-scaled.tif", window: [250, 350, 37, 23], missing: { nodata: 22, legacy: 176, nan: 0, inf: 0 } },
  { file: "uint16-offset.tif", window: [350, 400, 37, 23], missing: { nodata: 29, legacy: 0, nan: 0, inf: 0 } },
  { file: "int32-bigendian.tif", window: [450, 450, 37, 23], missing: { nodata: 29, legacy: 0, nan: 0, inf: 0 } },
];

const good = suite("readSiloTiff - decodes GDAL-written files exactly as GDAL reads them");

for (const { file, window, missing } of GOOD) {
  good(`readSiloTiff - ${file}: window, every cell and missing count agree with GDAL`, async () => {
    requireGdal();
    const path = join(FIXTURES, file);
    const decoded = await readSiloTiff(path, MAX_TEMP.plausible);
    const gdal = readWithGdal(path);

    assert.is(decoded.file, path);
    assert.equal(gdalWindow(gdal), window, "GDAL's window is the one the fixture was made for");
    assert.equal(decoded.window, window);
    assert.equal(countMissingKinds(gdal), missing, "GDAL sees the missing cells the fixture was made with");
    const expectedMissing = missing.nodata + missing.legacy + missing.nan + missing.inf;
    assert.is(decoded.missing, expectedMissing);
    assert.is(decoded.values.filter(Number.isNaN).length, expectedMissing, "missing counts the NaN cells");
    assertSameCells(decoded.values, gdal, file);
  });
}

good("readSiloTiff - the fixture set holds every good file the script makes", async () => {
  const tifs = (await readdir(FIXTURES)).filter((f) => f.endsWith(".tif") && !f.startsWith("bad-")).sort();
  assert.equal(tifs, GOOD.map((g) => g.file).sort());
});

good.run();

// --- full-size grids made by GDAL at test time ---

const full = suite("readSiloTiff - full 841 x 681 grids recompressed by GDAL");

const FULL_GRID_FORMATS: [string, string[]][] = [
  ["cog-deflate-fp", ["-of", "COG", "-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=FLOATING_POINT"]],
  // long LZW strips fill the 4096-entry code table many times over, which the small fixtures never do
  ["lzw-fp-strips", ["-of", "GTiff", "-co", "COMPRESS=LZW", "-co", "PREDICTOR=3", "-co", "BLOCKYSIZE=64"]],
  ["lzw-tiled", ["-of", "GTiff", "-co", "COMPRESS=LZW", "-co", "TILED=YES"]],
  ["deflate-strips", ["-of", "GTiff", "-co", "COMPRESS=DEFLATE", "-co", "ZLEVEL=9"]],
];

for (const [name, options] of FULL_GRID_FORMATS) {
  full(`readSiloTiff - full grid as ${name} agrees with GDAL on every cell`, async () => {
    requireGdal();
    await withTempDir(async (dir) => {
      const source = join(dir, "source.tif");
      const recompressed = join(dir, `${name}.tif`);
      const values = makeFullGrid();
      await writeSiloTiff(source, [0, 0, GRID.width, GRID.height], values);
      runGdal(["gdal_translate", "-q", ...options, source, recompressed]);

      const decoded = await readSiloTiff(recompressed, MAX_TEMP.plausible);
      const gdal = readWithGdal(recompressed);
      assert.equal(decoded.window, [0, 0, 841, 681]);
      assert.equal(gdalWindow(gdal), [0, 0, 841, 681]);
      assert.is(decoded.missing, values.filter(Number.isNaN).length);
      assertSameCells(decoded.values, gdal, name);
      assert.ok(Buffer.from(decoded.values.buffer, decoded.values.byteOffset, decoded.values.byteLength).equals(Buffer.from(values.buffer)));
    });
  });
}

full("readSiloTiff - a full grid in a big-endian file with a long strip table is refused, not misread", async () => {
  requireGdal();
  await withTempDir(async (dir) => {
    const source = join(dir, "source.tif");
    const big = join(dir, "big-endian.tif");
    await writeSiloTiff(source, [0, 0, GRID.width, GRID.height], makeFullGrid());
    runGdal(["gdal_translate", "-q", "-co", "ENDIANNESS=BIG", "-co", "BLOCKYSIZE=2", source, big]);
    const err = await rejection(readSiloTiff(big, MAX_TEMP.plausible));
    assert.is(
      err.reason,
      "is a big-endian GeoTIFF whose StripOffsets table the geotiff library misreads as little-endian; rewrite it little-endian (gdal_translate -co ENDIANNESS=LITTLE)",
    );
    // the same cells little-endian decode exactly (the small big-endian fixture, with a short table, decodes too)
    runGdal(["gdal_translate", "-q", "-co", "ENDIANNESS=LITTLE", big, join(dir, "little.tif")]);
    assert.is((await readSiloTiff(join(dir, "little.tif"), MAX_TEMP.plausible)).window.join(), "0,0,841,681");
  });
});

full.run();

// --- files it must refuse, with the reason a maintainer needs ---

const BAD: { file: string; reason: string }[] = [
  { file: "bad-crs.tif", reason: "CRS is EPSG:4283, not the SILO grid's EPSG:4326 (WGS 84)" },
  { file: "bad-crs-projected.tif", reason: "CRS is projected (EPSG:3577), not the SILO grid's geographic EPSG:4326" },
  {
    file: "bad-origin.tif",
    reason: "origin longitude 121.985 is not on the SILO 0.05 degree grid (111.975 + 0.05k); is this a resampled file?",
  },
  { file: "bad-bands.tif", reason: "has 2 bands; a SILO file has exactly one" },
  { file: "bad-truncated.tif", reason: "truncated or corrupt GeoTIFF (tile 0 needs bytes up to 3059 but the file has 2493)" },
  {
    file: "bad-implausible.tif",
    reason: "value 75.5 at cell (col 210, row 105; lon 122.5, lat -15.25) is outside the plausible range -20..60",
  },
  { file: "bad-cellsize.tif", reason: "cell size 0.1 x 0.1 degrees is not the SILO 0.05 degree cell" },
  { file: "bad-rotated.tif", reason: "grid is rotated or sheared (ModelTransformation terms 0.001, 0.001)" },
  { file: "bad-south-up.tif", reason: "grid is not north-up (latitude step 0.05 per row, expected -0.05)" },
  { file: "bad-complex.tif", reason: "samples are complex integers (SampleFormat 5, BitsPerSample 32); a SILO-grid file stores float32 or float64" },
  { file: "bad-outside.tif", reason: "window [814, 100, 37, 23] (columns 814..850, rows 100..122) reaches outside the 841 x 681 SILO grid" },
];

const bad = suite("readSiloTiff - refuses files that are not the SILO grid");

for (const { file, reason } of BAD) {
  bad(`readSiloTiff - ${file} is refused: ${reason.slice(0, 40)}...`, async () => {
    const path = join(FIXTURES, file);
    const err = await rejection(readSiloTiff(path, MAX_TEMP.plausible));
    assert.is(err.file, path);
    assert.is(err.stage, "decode");
    assert.ok(err.message.includes(file), `message names the file: ${err.message}`);
    assert.ok(err.reason.includes(reason), `reason\n  ${err.reason}\nholds\n  ${reason}`);
  });
}

bad("readSiloTiff - the fixture set holds every bad file the script makes", async () => {
  const tifs = (await readdir(FIXTURES)).filter((f) => f.startsWith("bad-")).sort();
  assert.equal(tifs, BAD.map((b) => b.file).sort());
});

bad.run();

// --- damaged files: always a PublishError, never a raw error or a crash ---

const damaged = suite("readSiloTiff - damaged files");

damaged("readSiloTiff - every good fixture cut short is 'truncated or corrupt'", async () => {
  await withTempDir(async (dir) => {
    for (const { file } of GOOD) {
      const bytes = await readFile(join(FIXTURES, file));
      // inside the header, inside the directory, inside the data, and one byte short of a strip file
      const cuts = [0, 7, 100, 300, Math.floor(bytes.length / 2), bytes.length - 40];
      if (!file.startsWith("cog")) cuts.push(bytes.length - 1);
      for (const n of cuts) {
        const path = join(dir, `${n}-${file}`);
        await writeFile(path, bytes.subarray(0, n));
        const err = await rejection(readSiloTiff(path, MAX_TEMP.plausible));
        assert.ok(err.reason.startsWith("truncated or corrupt GeoTIFF ("), `${file} cut to ${n} bytes: ${err.reason}`);
      }
    }
  });
});

damaged("readSiloTiff - a file that is not a TIFF is 'truncated or corrupt'", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "20030101.max_temp.tif");
    await writeFile(path, "<html>404 Not Found</html>");
    const err = await rejection(readSiloTiff(path, MAX_TEMP.plausible));
    assert.ok(err.message.startsWith(`${path}: truncated or corrupt GeoTIFF (`), err.message);
  });
});

damaged("readSiloTiff - a missing file names the file", async () => {
  const path = join(FIXTURES, "no-such-file.tif");
  const err = await rejection(readSiloTiff(path, MAX_TEMP.plausible));
  assert.ok(err.message.startsWith(`${path}: cannot read the file (`), err.message);
});

damaged("readSiloTiff - corrupt LZW codes are an error, not a process abort", async () => {
  // these two bit flips sent geotiff's own LZW decoder into an endless table walk that aborted V8
  await withTempDir(async (dir) => {
    const bytes = Buffer.from(await readFile(join(FIXTURES, "lzw.tif")));
    bytes[1430] ^= 1 << 1;
    bytes[430] ^= 1 << 7;
    const path = join(dir, "flipped-lzw.tif");
    await writeFile(path, bytes);
    const err = await rejection(readSiloTiff(path, MAX_TEMP.plausible));
    assert.ok(err.reason.startsWith("truncated or corrupt GeoTIFF (cannot decode the raster: corrupt LZW stream"), err.reason);
  });
});

damaged("readSiloTiff - a corrupt DEFLATE tile is 'truncated or corrupt'", async () => {
  await withTempDir(async (dir) => {
    const bytes = Buffer.from(await readFile(join(FIXTURES, "cog-deflate-fp.tif")));
    // the last tile's data sits at the end of a COG: scramble the middle of it
    for (let i = bytes.length - 200; i < bytes.length - 150; i++) bytes[i] ^= 0x5a;
    const path = join(dir, "scrambled.tif");
    await writeFile(path, bytes);
    const err = await rejection(readSiloTiff(path, MAX_TEMP.plausible));
    assert.ok(err.reason.startsWith("truncated or corrupt GeoTIFF (cannot decode the raster:"), err.reason);
  });
});

damaged.run();

// --- the plausible range is inclusive and names the cell ---

const plausible = suite("readSiloTiff - plausible range");

plausible("readSiloTiff - values at -20 and 60 pass, just outside them fail naming cell and value", async () => {
  await withTempDir(async (dir) => {
    const window: Window = [840, 680, 1, 1];
    for (const [value, ok] of [
      [-20, true],
      [60, true],
      [Math.fround(60.1), false],
      [Math.fround(-20.1), false],
    ] as const) {
      const path = join(dir, `${value}.tif`);
      await writeSiloTiff(path, window, Float32Array.of(value));
      if (ok) {
        const decoded = await readSiloTiff(path, MAX_TEMP.plausible);
        assert.equal(Array.from(decoded.values), [value]);
      } else {
        const err = await rejection(readSiloTiff(path, MAX_TEMP.plausible));
        const shown = value > 0 ? "60.1" : "-20.1";
        assert.is(
          err.reason,
          `value ${shown} at cell (col 840, row 680; lon 154, lat -44) is outside the plausible range -20..60; ` +
            "check the source file and the variable it holds",
        );
      }
    }
  });
});

plausible.run();

// --- the writer ---

const writer = suite("writeSiloTiff - writes files both readers agree on");

function makeWindowValues(width: number, height: number): Float32Array {
  const values = new Float32Array(width * height);
  for (let i = 0; i < values.length; i++) values[i] = i % 9 === 4 ? NaN : Math.fround(-19.9 + ((i * 37) % 799) / 10);
  return values;
}

for (const window of [
  [0, 0, 37, 23],
  [804, 658, 37, 23],
  [123, 456, 1, 5],
] as Window[]) {
  writer(`writeSiloTiff - window [${window.join(", ")}] round-trips through readSiloTiff and GDAL`, async () => {
    requireGdal();
    await withTempDir(async (dir) => {
      const path = join(dir, "nested", "dirs", "out.tif");
      const values = makeWindowValues(window[2], window[3]);
      await writeSiloTiff(path, window, values);
      assert.equal(await readdir(join(dir, "nested", "dirs")), ["out.tif"], "no temporary file is left behind");

      const decoded = await readSiloTiff(path, MAX_TEMP.plausible);
      assert.equal(decoded.window, window);
      assert.ok(Buffer.from(decoded.values.buffer).equals(Buffer.from(values.buffer)), "identical float32 bits, NaN kept");
      assert.is(decoded.missing, values.filter(Number.isNaN).length);

      const gdal = readWithGdal(path);
      assert.equal(gdal.geotransform, [colToEdgeLon(window[0]), 0.05, 0, rowToEdgeLat(window[1]), 0, -0.05]);
      assert.is(gdal.epsg, "4326");
      assert.is(gdal.nodata, -32767);
      assert.is(gdal.bands, 1);
      for (let i = 0; i < values.length; i++) {
        const expected = Number.isNaN(values[i]) ? -32767 : values[i];
        if (gdal.cells[i] !== expected) assert.unreachable(`GDAL cell ${i} is ${gdal.cells[i]}, wrote ${expected}`);
      }
    });
  });
}

writer("writeSiloTiff - the same input gives the same bytes", async () => {
  await withTempDir(async (dir) => {
    const values = makeWindowValues(37, 23);
    await writeSiloTiff(join(dir, "a.tif"), [10, 20, 37, 23], values);
    await writeSiloTiff(join(dir, "b.tif"), [10, 20, 37, 23], values);
    const [a, b] = await Promise.all([readFile(join(dir, "a.tif")), readFile(join(dir, "b.tif"))]);
    assert.ok(a.equals(b));
  });
});

writer("writeSiloTiff - gdalinfo reads it without warnings", async () => {
  requireGdal();
  await withTempDir(async (dir) => {
    const path = join(dir, "out.tif");
    await writeSiloTiff(path, [100, 50, 37, 23], makeWindowValues(37, 23));
    const run = spawnSync("gdalinfo", [path], { encoding: "utf8" });
    assert.is(run.status, 0);
    assert.is(run.stderr, "");
    assert.ok(run.stdout.includes("Size is 37, 23"));
    assert.ok(run.stdout.includes('ID["EPSG",4326]]'));
    assert.ok(run.stdout.includes("Origin = (116.974999999999994,-12.475000000000000)"));
    assert.ok(run.stdout.includes("NoData Value=-32767"));
  });
});

writer("writeSiloTiff - refuses values that would read back as missing, a wrong length and a window off the grid", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "out.tif");
    const cases: [Window, Float32Array, string][] = [
      [[0, 0, 2, 1], Float32Array.of(1, -32767), "cell 1 holds -32767, which reads back as missing"],
      [[0, 0, 2, 1], Float32Array.of(-3276.8, 1), "cell 0 holds -3276.800048828125, which reads back as missing"],
      [[0, 0, 2, 1], Float32Array.of(1, -Infinity), "cell 1 holds -Infinity, which reads back as missing"],
      [[0, 0, 2, 2], Float32Array.of(1, 2, 3), "3 values do not fill a 2 x 2 window"],
      [[840, 0, 2, 1], Float32Array.of(1, 2), "window [840, 0, 2, 1] is not inside the 841 x 681 SILO grid"],
    ];
    for (const [window, values, reason] of cases) {
      const err = await rejection(writeSiloTiff(path, window, values));
      assert.is(err.stage, "encode");
      assert.ok(err.reason.startsWith(reason), err.reason);
    }
    assert.equal(await readdir(dir), [], "nothing is written");
  });
});

writer.run();
