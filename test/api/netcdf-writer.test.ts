// The series route's NetCDF writer (api/series/netcdf.ts): files it writes read back by the field's own readers alone
// (ncdump, CDO, GDAL, xarray), every value compared exactly; its layout, its 64-bit offsets, and its refusals.

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, createWriteStream, openSync, readFileSync, truncateSync, writeFileSync, writeSync } from "node:fs";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { join } from "node:path";
import { build } from "esbuild";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  CANONICAL_NAN_BITS,
  NETCDF_LIMITS,
  type NetcdfDescription,
  type NetcdfLayout,
  type NetcdfLimits,
  NetcdfTooLargeError,
  type NetcdfVariable,
  NetcdfWriteError,
  NetcdfWriter,
  float32ToBigEndian,
  layoutNetcdf,
  streamNetcdf,
} from "../../api/series/netcdf.js";
import { planSlabs } from "../../api/series/netcdf-file.js";
import { dateToDayNumber, dayNumberToDate } from "../../format/dates.js";
import { colToLon, rowToLat } from "../../format/grid.js";
import { VARIABLES, type Variable } from "../../format/variables.js";
import { docBlock } from "../docs/doc-blocks.js";
import { makeWorkDir } from "../support/helpers.js";

const work = makeWorkDir("netcdf-writer");
const PYTHON = "/usr/bin/python3";
const [TMAX, TMIN, RAIN, , VP] = VARIABLES;

/** NaNs as other writers leave them: a quiet NaN with a payload, a negative NaN, a signalling NaN. */
const ODD_NANS = [0x7fc00001, 0xffc00000, 0x7f800001].map((bits) => new Float32Array(new Uint32Array([bits]).buffer)[0]);

interface Box {
  row: number;
  col: number;
  rows: number;
  cols: number;
  first: string;
  days: number;
}

/** A variable of the file as the series route will describe it, from the one table of variables. */
function fileVariable(v: Variable): NetcdfVariable {
  return { name: v.name, units: v.unit, longName: v.label, standardName: v.standardName ?? undefined, cellMethods: v.cellMethods ?? undefined, attributes: { comment: `SILO's value of a date covers ${v.observed}` } };
}

function describeBox(box: Box, variables: NetcdfVariable[]): NetcdfDescription {
  const first = dateToDayNumber(box.first);
  return {
    days: Array.from({ length: box.days }, (_, t) => first + t),
    lat: Array.from({ length: box.rows }, (_, r) => rowToLat(box.row + r)),
    lon: Array.from({ length: box.cols }, (_, c) => colToLon(box.col + c)),
    variables,
    globals: {
      title: "SILO daily climate grids, a box over days",
      institution: "Queensland Government, Department of Environment, Science and Innovation (SILO)",
      source: "SILO gridded data (https://www.longpaddock.qld.gov.au/silo/)",
      license: "CC-BY-4.0",
      history: "2026-11-26T00:00:00Z written by GET /api/v1/series",
      extra: Object.fromEntries(variables.flatMap((v, k) => [[`${v.name}_dataset_version`, `silo-test-v${k + 1}`], [`${v.name}_content_sha256`, "ab".repeat(32)]])),
    },
  };
}

/**
 * Values of variable k of a box, as SILO's: tenths in float32, the last column of the first row always missing (an
 * ocean cell), and every 97th day a cell gone (a gap); the missing NaNs in odd bit patterns the writer must mend.
 */
function boxValues(box: Box, k: number): Float32Array {
  const values = new Float32Array(box.days * box.rows * box.cols);
  let i = 0;
  for (let t = 0; t < box.days; t++) {
    for (let r = 0; r < box.rows; r++) {
      for (let c = 0; c < box.cols; c++, i++) {
        const ocean = box.cols > 1 && r === 0 && c === box.cols - 1;
        const gap = t % 97 === 1 && r === box.rows - 1 && c === 0;
        values[i] = ocean || gap ? ODD_NANS[i % 3] : (((t * 37 + r * 11 + c * 5 + k * 101) % 900) - 300) / 10;
      }
    }
  }
  return values;
}

/** The bits a reader must find: the values as float32, every NaN the canonical one. */
function expectedBits(values: Float32Array): Uint32Array {
  return Uint32Array.from(new Uint32Array(values.buffer, values.byteOffset, values.length), (b) => ((b & 0x7fffffff) > 0x7f800000 ? CANONICAL_NAN_BITS : b));
}

/** sha256 of values as little-endian float32 with canonical NaNs: what numpy's bytes of the same array hash to. */
function littleEndianSha256(values: Float32Array): string {
  const bits = expectedBits(values);
  const bytes = new Uint8Array(bits.length * 4);
  const view = new DataView(bytes.buffer);
  bits.forEach((b, i) => view.setUint32(i * 4, b, true));
  return createHash("sha256").update(bytes).digest("hex");
}

interface Written {
  path: string;
  box: Box;
  description: NetcdfDescription;
  layout: NetcdfLayout;
  values: Float32Array[];
}

/** Writes a file through streamNetcdf, a slab of `slabDays` days at a time, and checks the promised length. */
async function writeBox(name: string, box: Box, variables: Variable[], options: { limits?: NetcdfLimits; slabDays?: number; values?: Float32Array[] } = {}): Promise<Written> {
  const { limits = NETCDF_LIMITS, slabDays = 30 } = options;
  const described = variables.map(fileVariable);
  const description = describeBox(box, described);
  const layout = layoutNetcdf(description, limits);
  const values = options.values ?? variables.map((_, k) => boxValues(box, k));
  const perDay = box.rows * box.cols;
  const read = (v: string, t0: number, t1: number) => values[described.findIndex((d) => d.name === v)].slice(t0 * perDay, t1 * perDay);
  const chunks: Uint8Array[] = [];
  for await (const chunk of streamNetcdf(layout, read, slabDays)) chunks.push(chunk);
  const path = join(work, `${name}.nc`);
  writeFileSync(path, Buffer.concat(chunks));
  assert.is(readFileSync(path).length, layout.byteLength, "the file is exactly as long as the layout promised");
  return { path, box, description, layout, values };
}

const tool = (command: string, args: string[]) => execFileSync(command, args, { encoding: "utf8", maxBuffer: 256 * 2 ** 20, stdio: ["ignore", "pipe", "pipe"] });
const gdalName = (w: Written, variable: string) => `NETCDF:"${w.path}":${variable}`;

const ONE: Box = { row: 0, col: 0, rows: 1, cols: 1, first: "2024-02-28", days: 3 };
const SIXTEEN: Box = { row: 350, col: 760, rows: 4, cols: 4, first: "1999-12-01", days: 400 };
const TWO: Box = { row: 680, col: 838, rows: 1, cols: 3, first: "1889-01-01", days: 40 };
const WIDE: Box = { row: 100, col: 200, rows: 3, cols: 5, first: "2020-01-01", days: 20 };

let one: Written;
let sixteen: Written;
let two: Written;
let wide: Written;

const readers = suite("netcdf-writer readers");

readers.before(async () => {
  // docs/netcdf.md shows this file: its values are the page's
  one = await writeBox("one", ONE, [TMAX], { values: [new Float32Array([30.5, ODD_NANS[0], 31.2])] });
  sixteen = await writeBox("sixteen", SIXTEEN, [TMAX], { slabDays: 7 });
  two = await writeBox("two", TWO, [RAIN, VP], { slabDays: 40 });
  // a CDF-2 file without writing 2 GiB: the classic limit lowered, the variable limit left as the format's
  wide = await writeBox("wide", WIDE, [TMAX, { ...VP, name: "pan_evaporation", standardName: "" }], { limits: { classicMaxBytes: 1000, variableMaxBytes: NETCDF_LIMITS.variableMaxBytes } });
});

readers("netcdf-writer - ncdump -h of one cell over three days is exactly docs/netcdf.md's header", () => {
  const header = tool("ncdump", ["-h", one.path]).replace(/^netcdf one \{/, "netcdf series {");
  assert.is(header, docBlock("docs/netcdf.md", "netcdf series {"));
  assert.is(tool("ncdump", ["-k", one.path]).trim(), "classic");
});

readers("netcdf-writer - cdo outputtab of one cell over three days is exactly docs/netcdf.md's table", () => {
  const trimmed = (text: string) => text.split("\n").map((line) => line.trimEnd()).join("\n");
  assert.is(trimmed(tool("cdo", ["-s", "outputtab,date,lon,lat,value", one.path])), trimmed(docBlock("docs/netcdf.md", "2024-02-29    112    -10      nan")));
});

readers("netcdf-writer - ncdump -v prints the coordinates and every value as written, _ where missing", () => {
  for (const w of [one, sixteen, two]) {
    const dump = tool("ncdump", ["-v", ["time", "lat", "lon", ...w.description.variables.map((v) => v.name)].join(","), w.path]);
    const data = dump.slice(dump.indexOf("\ndata:\n"));
    const listed = (name: string) => {
      const m = new RegExp(`\\n ${name} =\\s*([^;]*);`).exec(data);
      assert.ok(m, `${name} in ncdump -v`);
      return m[1].split(",").map((s) => s.trim());
    };
    assert.equal(listed("time"), Array.from(w.description.days, String));
    assert.equal(listed("lat").map(Number), Array.from(w.description.lat));
    assert.equal(listed("lon").map(Number), Array.from(w.description.lon));
    w.description.variables.forEach((v, k) => {
      const expected = Array.from(w.values[k], (x) => (Number.isNaN(x) ? "_" : String(Math.round(x * 10) / 10)));
      assert.equal(listed(v.name), expected, v.name);
    });
  }
});

readers("netcdf-writer - ncdump -h names each variable's CF attributes, the kind and the caller's global attributes", () => {
  const header = tool("ncdump", ["-h", two.path]);
  assert.match(header, "float precipitation_amount(time, lat, lon) ;\n\t\tprecipitation_amount:long_name = \"daily rainfall\" ;\n\t\tprecipitation_amount:standard_name = \"lwe_thickness_of_precipitation_amount\" ;\n\t\tprecipitation_amount:units = \"mm\" ;\n\t\tprecipitation_amount:cell_methods = \"time: sum\" ;\n\t\tprecipitation_amount:_FillValue = NaNf ;\n\t\tprecipitation_amount:grid_mapping = \"crs\" ;");
  // vapour pressure has no cell_methods; the renamed variable has no standard_name: neither writes an empty one
  assert.match(header, "water_vapor_partial_pressure_in_air:units = \"hPa\" ;\n\t\twater_vapor_partial_pressure_in_air:_FillValue = NaNf ;");
  assert.not.match(tool("ncdump", ["-h", wide.path]), "pan_evaporation:standard_name");
  assert.match(header, ':precipitation_amount_dataset_version = "silo-test-v1" ;\n\t\t:precipitation_amount_content_sha256 = "abab');
  assert.match(header, ':water_vapor_partial_pressure_in_air_dataset_version = "silo-test-v2" ;');
  assert.match(header, "time = 40 ;\n\tlat = 1 ;\n\tlon = 3 ;");
  assert.is(tool("ncdump", ["-k", wide.path]).trim(), "64-bit offset");
});

readers("netcdf-writer - cdo sinfon sees a lonlat grid of the box, daily steps from the first date, float32 variables", () => {
  const info = tool("cdo", ["-s", "sinfon", sixteen.path]);
  assert.match(info, /F32 {2}: air_temperature_max\n/);
  assert.match(info, "lonlat                   : points=16 (4x4)");
  assert.match(info, "lon : 150 to 150.15 by 0.05 degrees_east");
  assert.match(info, "lat : -27.5 to -27.65 by -0.05 degrees_north");
  assert.match(info, "time : 400 steps");
  assert.match(info, "RefTime =  1970-01-01 00:00:00  Units = days  Calendar = standard");
  assert.match(info, /^ {2}1999-12-01 00:00:00 /m);
  assert.match(info, / 2001-01-03 00:00:00\n/);
  const pair = tool("cdo", ["-s", "sinfon", two.path]);
  assert.match(pair, /F32 {2}: precipitation_amount\n.*F32 {2}: water_vapor_partial_pressure_in_air\n/);
  assert.match(pair, "points=3 (3x1)");
});

/** Rows of `cdo outputtab,date,lon,lat,value` as they must be: steps, then rows north to south, then columns. */
function outputtabRows(w: Written, k: number): string[][] {
  const rows: string[][] = [];
  const { days, lat, lon } = w.description;
  let i = 0;
  for (let t = 0; t < days.length; t++) {
    for (let r = 0; r < lat.length; r++) {
      for (let c = 0; c < lon.length; c++, i++) {
        const x = w.values[k][i];
        rows.push([dayNumberToDate(days[t]), String(lon[c]), String(lat[r]), Number.isNaN(x) ? "nan" : String(Math.round(x * 10) / 10)]);
      }
    }
  }
  return rows;
}

readers("netcdf-writer - cdo outputtab gives every cell of every date as written, nan where missing", () => {
  for (const [w, k] of [[one, 0], [sixteen, 0], [two, 0], [two, 1], [wide, 1]] as const) {
    const name = w.description.variables[k].name;
    const text = tool("cdo", ["-s", "outputtab,date,lon,lat,value", `-selname,${name}`, w.path]);
    const rows = text.split("\n").filter((line) => line !== "" && !line.startsWith("#")).map((line) => line.trim().split(/\s+/));
    assert.equal(rows, outputtabRows(w, k), `${w.path} ${name}`);
  }
});

readers("netcdf-writer - GDAL georeferences the box from the first cell's edges, one band a day, EPSG:4326", () => {
  for (const w of [one, sixteen, two]) {
    const name = w.description.variables[0].name;
    const info = JSON.parse(tool("gdalinfo", ["-json", gdalName(w, name)]));
    const expected = [111.975 + 0.05 * w.box.col, 0.05, 0, -9.975 - 0.05 * w.box.row, 0, -0.05];
    expected.forEach((x, i) => assert.ok(Math.abs(info.geoTransform[i] - x) < 1e-9, `${w.path}: geoTransform ${info.geoTransform} is not ${expected}`));
    assert.equal(info.size, [w.box.cols, w.box.rows]);
    assert.is(info.bands.length, w.box.days);
    assert.match(info.coordinateSystem.wkt, 'ID["EPSG",4326]');
    assert.is(info.bands[0].metadata[""].NETCDF_DIM_time, String(w.description.days[0]));
    assert.is(info.bands[0].noDataValue, "NaN");
  }
});

readers("netcdf-writer - gdallocationinfo reads every cell's every day as the float32 written, nan where missing", () => {
  for (const w of [one, sixteen]) {
    const { rows, cols, days } = w.box;
    for (let r = 0; r < rows; r++) {
      for (let c = 0; c < cols; c++) {
        const text = tool("gdallocationinfo", ["-valonly", gdalName(w, "air_temperature_max"), String(c), String(r)]);
        const read = text.trim().split("\n").map((s) => (s === "nan" ? Number.NaN : Math.fround(Number(s))));
        const written = Array.from({ length: days }, (_, t) => w.values[0][(t * rows + r) * cols + c]);
        assert.equal(read, written, `cell ${r},${c}`);
      }
    }
  }
});

/** What xarray decodes of each [engine, file, variables...] asked, as JSON lines, by Debian's xarray with no code of ours. */
const XARRAY = `
import hashlib, json, sys
import numpy as np, xarray as xr
def read(engine, path, *names):
    ds = xr.open_dataset(path, engine=engine)
    out = {"time": [str(t)[:10] for t in ds.time.values], "lat": ds.lat.values.tolist(), "lon": ds.lon.values.tolist(), "attrs": {k: str(v) for k, v in ds.attrs.items()}, "vars": {}}
    for name in names:
        a = ds[name].values
        out["vars"][name] = {"dtype": str(a.dtype), "dims": list(ds[name].dims), "nan": int(np.isnan(a).sum()), "sha256": hashlib.sha256(np.ascontiguousarray(a, dtype="<f4").tobytes()).hexdigest(), "units": ds[name].attrs.get("units"), "fill": str(ds[name].encoding.get("_FillValue"))}
    out["crs"] = ds["crs"].attrs.get("grid_mapping_name")
    return out
for ask in json.loads(sys.argv[1]):
    print(json.dumps(read(*ask)))
`;

readers("netcdf-writer - xarray decodes dates, NaN for missing and float32 values equal bit for bit (netCDF4 and scipy)", () => {
  // two readers of the format: netcdf-c (through netCDF4) and scipy's own pure-Python one, in one Python process
  const asks = [one, sixteen, two, wide].flatMap((w) => [[w, "netcdf4"], [w, "scipy"]] as const);
  const lines = tool(PYTHON, ["-c", XARRAY, JSON.stringify(asks.map(([w, engine]) => [engine, w.path, ...w.description.variables.map((v) => v.name)]))]).trim().split("\n");
  assert.is(lines.length, asks.length);
  asks.forEach(([w, engine], i) => {
    const got = JSON.parse(lines[i]);
    const names = w.description.variables.map((v) => v.name);
    assert.equal(got.time, Array.from(w.description.days, dayNumberToDate));
    assert.equal(got.lat, Array.from(w.description.lat));
    assert.equal(got.lon, Array.from(w.description.lon));
    assert.is(got.attrs.Conventions, "CF-1.8");
    assert.is(got.attrs[`${names[0]}_dataset_version`], "silo-test-v1");
    assert.is(got.crs, "latitude_longitude");
    names.forEach((name, k) => {
      const missing = w.values[k].filter(Number.isNaN).length;
      assert.ok(missing > 0, "the variable has missing values to compare");
      assert.equal(got.vars[name], { dtype: "float32", dims: ["time", "lat", "lon"], nan: missing, sha256: littleEndianSha256(w.values[k]), units: w.description.variables[k].units, fill: "nan" }, `${w.path} ${name} (${engine})`);
    });
  });
});

readers.run();

const layout = suite("netcdf-writer layout");

const dataOf = (w: Written, k: number) => readFileSync(w.path).subarray(w.layout.variables[k].begin, w.layout.variables[k].begin + w.layout.variables[k].byteLength);

layout("netcdf-writer - the bytes are the header's promise: CDF-1 magic, big-endian values at each variable's begin", () => {
  const file = readFileSync(sixteen.path);
  assert.equal([...file.subarray(0, 4)], [0x43, 0x44, 0x46, 1]);
  assert.equal(Buffer.from(file.subarray(0, sixteen.layout.prelude.length)), Buffer.from(sixteen.layout.prelude));
  const data = dataOf(sixteen, 0);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const bits = expectedBits(sixteen.values[0]);
  assert.is(data.length, bits.length * 4);
  for (let i = 0; i < bits.length; i++) if (view.getUint32(i * 4, false) !== bits[i]) assert.unreachable(`value ${i}: ${view.getUint32(i * 4, false).toString(16)} is not ${bits[i].toString(16)}`);
  assert.is(sixteen.layout.variables[0].begin + data.length, file.length, "the one variable ends the file");
  // netcdf-c and scipy both ignore vsize (it is redundant), so only the bytes can tell it is right: the last
  // variable's entry ends the header with its vsize and a 32-bit begin
  const headerEnd = sixteen.layout.variables[0].begin - (400 * 8 + 4 * 8 + 4 * 8 + 4);
  const header = new DataView(file.buffer, file.byteOffset, headerEnd);
  assert.equal([header.getUint32(headerEnd - 8, false), header.getUint32(headerEnd - 4, false)], [400 * 16 * 4, sixteen.layout.variables[0].begin]);
});

layout("netcdf-writer - the second variable begins where the first ends; CDF-2 begins are 64 bits", () => {
  assert.is(two.layout.variables[1].begin, two.layout.variables[0].begin + two.layout.variables[0].byteLength);
  assert.is(two.layout.kind, 1);
  assert.is(wide.layout.kind, 2);
  assert.equal([...readFileSync(wide.path).subarray(0, 4)], [0x43, 0x44, 0x46, 2]);
  assert.is(Buffer.from(dataOf(wide, 1)).toString("hex"), Buffer.from(float32ToBigEndian(wide.values[1])).toString("hex"));
});

layout("netcdf-writer - every NaN becomes 0x7fc00000; -0, infinities and subnormals keep their bits", () => {
  const values = new Float32Array([...ODD_NANS, Number.NaN, -0, Infinity, -Infinity, 1e-45, -3.4028234663852886e38, 20.1]);
  const view = new DataView(float32ToBigEndian(values).buffer);
  const got = Array.from({ length: values.length }, (_, i) => view.getUint32(i * 4, false).toString(16));
  assert.equal(got, ["7fc00000", "7fc00000", "7fc00000", "7fc00000", "80000000", "7f800000", "ff800000", "1", "ff7fffff", "41a0cccd"]);
});

layout("netcdf-writer - the bytes do not depend on the slab size, and always total the promised length", async () => {
  const hashes = new Set<string>();
  for (const days of [1, 7, 97, 400]) {
    const chunks: Uint8Array[] = [];
    const perDay = SIXTEEN.rows * SIXTEEN.cols;
    for await (const chunk of streamNetcdf(sixteen.layout, (_, t0, t1) => sixteen.values[0].slice(t0 * perDay, t1 * perDay), days)) chunks.push(chunk);
    assert.is(chunks.length, 1 + Math.ceil(400 / days));
    assert.is(chunks.reduce((n, c) => n + c.length, 0), sixteen.layout.byteLength);
    hashes.add(createHash("sha256").update(Buffer.concat(chunks)).digest("hex"));
  }
  // slabs on a reader's own edges (a series span's): the same bytes
  const perDay = SIXTEEN.rows * SIXTEEN.cols;
  const asked: string[] = [];
  const read = (_: string, t0: number, t1: number) => (asked.push(`${t0}..${t1}`), sixteen.values[0].slice(t0 * perDay, t1 * perDay));
  const chunks: Uint8Array[] = [];
  for await (const chunk of streamNetcdf(sixteen.layout, read, () => [0, 1, 366, 400])) chunks.push(chunk);
  assert.equal(asked, ["0..1", "1..366", "366..400"]);
  hashes.add(createHash("sha256").update(Buffer.concat(chunks)).digest("hex"));
  assert.equal([...hashes], [createHash("sha256").update(readFileSync(sixteen.path)).digest("hex")]);
});

layout("netcdf-writer - the series answer's slabs lie on its spans' edges: small spans joined to 1 MiB, spans over 16 MiB cut", () => {
  const years = (n: number) => Array.from({ length: n }, () => ({ from: 0, to: 365 }) as never);
  // a 32 x 32 box: a year is 1.4 MiB, a slab each
  assert.equal(planSlabs(years(3), 1024), [0, 365, 730, 1095]);
  // a place over a century: one slab (1 MiB is 262,144 days of one cell)
  assert.equal(planSlabs(years(100), 1), [0, 36_500]);
  // 16 x 16 cells: a year is 365 KiB, two join (730 KiB), a third would pass 1 MiB
  assert.equal(planSlabs(years(5), 256), [0, 730, 1460, 1825]);
  // the whole grid over 17 days (37 MiB): three parts of one span
  assert.equal(planSlabs([{ from: 100, to: 117 } as never], 572_721), [0, 6, 11, 17]);
  // a span cut in parts is closed: the next small one does not join its last part
  assert.equal(planSlabs([{ from: 0, to: 17 }, { from: 0, to: 1 }] as never, 572_721), [0, 6, 11, 17, 18]);
});

layout("netcdf-writer - a slab is read only when the consumer asks for it; Readable.from streams the same bytes to a file", async () => {
  const perDay = SIXTEEN.rows * SIXTEEN.cols;
  const asked: number[] = [];
  const read = (_: string, t0: number, t1: number) => (asked.push(t0), sixteen.values[0].slice(t0 * perDay, t1 * perDay));
  const chunks = streamNetcdf(sixteen.layout, read, 100);
  assert.is((await chunks.next()).value?.length, sixteen.layout.prelude.length);
  assert.equal(asked, [], "the prelude needs no values");
  await chunks.next();
  assert.equal(asked, [0], "one slab read for one slab given");
  await chunks.return(undefined);
  const path = join(work, "piped.nc");
  await pipeline(Readable.from(streamNetcdf(sixteen.layout, read, 100)), createWriteStream(path));
  assert.ok(readFileSync(path).equals(readFileSync(sixteen.path)));
});

layout("netcdf-writer - the module bundles for a browser from its own and format/ files alone, no node: module", async () => {
  const result = await build({ absWorkingDir: join(import.meta.dirname, "../.."), entryPoints: ["api/series/netcdf.ts"], bundle: true, platform: "browser", format: "esm", write: false, metafile: true, logLevel: "silent" });
  assert.equal(Object.keys(result.metafile.inputs).sort(), ["api/series/netcdf.ts", "format/grid.ts"]);
});

/** The full SILO grid over years: only the layout is computed (the header and coordinates, a few hundred KB). */
function fullGrid(days: number, variables: Variable[]): NetcdfDescription {
  return describeBox({ row: 0, col: 0, rows: 681, cols: 841, first: "1889-01-01", days }, variables.map(fileVariable));
}

layout("netcdf-writer - past 2 GiB the file is CDF-2; the last variable may pass 4 GiB (vsize 2^32 - 1), no other may", () => {
  const dayBytes = 681 * 841 * 4;
  const one = layoutNetcdf(fullGrid(365, [TMAX]));
  assert.is(one.kind, 1, "a year of the full grid is 836 MB: classic");
  const decade = layoutNetcdf(fullGrid(3653, [TMAX]));
  assert.is(decade.kind, 2);
  assert.is(decade.byteLength, decade.prelude.length + 3653 * dayBytes);
  const vsize = new DataView(decade.prelude.buffer).getUint32(decade.variables[0].begin - 12 - 3653 * 8 - 681 * 8 - 841 * 8 - 4, false);
  assert.is(vsize, 2 ** 32 - 1, "the last variable's vsize when it passes 4 GiB");
  const fits = Math.floor(NETCDF_LIMITS.variableMaxBytes / dayBytes);
  assert.is(layoutNetcdf(fullGrid(fits, [TMAX, VP])).kind, 2, `two variables of ${fits} days fit`);
  try {
    layoutNetcdf(fullGrid(fits + 1, [TMAX, VP]));
    assert.unreachable("two variables over 4 GiB each");
  } catch (err) {
    assert.instance(err, NetcdfTooLargeError);
    const e = err as NetcdfTooLargeError;
    assert.equal([e.variableBytes, e.limitBytes], [(fits + 1) * dayBytes, 2 ** 32 - 4]);
    assert.match(e.message, "variable air_temperature_max would be");
  }
});

layout("netcdf-writer - a lowered variable limit turns a small two-variable file into the too-large error, not one variable", () => {
  const limits = { classicMaxBytes: 100, variableMaxBytes: 1000 };
  const box = { ...WIDE, days: 20 };
  assert.throws(() => layoutNetcdf(describeBox(box, [TMAX, VP].map(fileVariable)), limits), (e: unknown) => e instanceof NetcdfTooLargeError && e.variableBytes === 20 * 15 * 4);
  assert.is(layoutNetcdf(describeBox(box, [TMAX].map(fileVariable)), limits).kind, 2);
});

layout("netcdf-writer - a sparse 12.9 GB CDF-2 file: the third variable, 8.6 GB in, reads back with netCDF4 at its 64-bit offset", () => {
  const dayBytes = 681 * 841 * 4;
  const days = Math.floor(NETCDF_LIMITS.variableMaxBytes / dayBytes);
  const planned = layoutNetcdf(fullGrid(days, [TMAX, TMIN, VP]));
  assert.ok(planned.variables[2].begin > 2 ** 32, "the third variable begins past 2^32: only a 64-bit offset reaches it");
  const path = join(work, "sparse.nc");
  writeFileSync(path, planned.prelude);
  truncateSync(path, planned.byteLength); // a hole, not 8.6 GB of disk
  const lastDay = Float32Array.from({ length: 681 * 841 }, (_, i) => (i % 841 === 5 ? Number.NaN : (i % 1000) / 10));
  const fd = openSync(path, "r+");
  try {
    writeSync(fd, float32ToBigEndian(lastDay), 0, dayBytes, planned.variables[2].begin + (days - 1) * dayBytes);
  } finally {
    closeSync(fd);
  }
  assert.is(tool("ncdump", ["-k", path]).trim(), "64-bit offset");
  const read = `
import sys, netCDF4
v = netCDF4.Dataset(sys.argv[1])["water_vapor_partial_pressure_in_air"]
v.set_auto_mask(False)
print(" ".join(repr(float(v[-1, r, c])) for r, c in [(0, 0), (0, 5), (680, 840), (321, 123)]))
`;
  const got = tool(PYTHON, ["-c", read, path]).trim().split(" ").map(Number);
  const at = (r: number, c: number) => lastDay[r * 841 + c];
  assert.equal(got, [at(0, 0), at(0, 5), at(680, 840), at(321, 123)]);
});

layout.run();

const refusals = suite("netcdf-writer refusals");

function freshWriter(): { writer: NetcdfWriter; perDay: number } {
  const writer = new NetcdfWriter(sixteen.layout);
  writer.start();
  return { writer, perDay: 16 };
}

const refused = (call: () => unknown, message: string) => assert.throws(call, (e: unknown) => e instanceof NetcdfWriteError && e.message.includes(message));

refusals("netcdf-writer - slabs out of order, of the wrong size or of another variable throw, and the writer state holds", () => {
  const { writer, perDay } = freshWriter();
  const days = (n: number) => new Float32Array(n * perDay);
  refused(() => writer.writeSlab("air_temperature_max", 1, 2, days(1)), "expected air_temperature_max from day 0");
  refused(() => writer.writeSlab("precipitation_amount", 0, 1, days(1)), "out of order");
  refused(() => writer.writeSlab("air_temperature_max", 0, 0, days(0)), "out of order");
  refused(() => writer.writeSlab("air_temperature_max", 0, 401, days(401)), "at most at 400");
  refused(() => writer.writeSlab("air_temperature_max", 0, 2, days(1)), "has 16 values, not 2 x 4 x 4 = 32");
  assert.is(writer.writeSlab("air_temperature_max", 0, 2, days(2)).length, 2 * perDay * 4);
  refused(() => writer.writeSlab("air_temperature_max", 0, 2, days(2)), "from day 2");
  refused(() => writer.finish(), "ended at");
  writer.writeSlab("air_temperature_max", 2, 400, days(398));
  writer.finish();
  refused(() => writer.writeSlab("air_temperature_max", 0, 1, days(1)), "after every variable was written");
});

refusals("netcdf-writer - a slab before start(), a second start(), a stream whose reader gives too few values, slabs of no whole days throw", async () => {
  const writer = new NetcdfWriter(one.layout);
  refused(() => writer.writeSlab("air_temperature_max", 0, 1, new Float32Array(1)), "before start()");
  writer.start();
  refused(() => writer.start(), "twice");
  const chunks: Uint8Array[] = [];
  try {
    for await (const chunk of streamNetcdf(one.layout, () => new Float32Array(1), 2)) chunks.push(chunk);
    assert.unreachable("two days of one cell are two values");
  } catch (err) {
    assert.instance(err, NetcdfWriteError);
    assert.match((err as Error).message, "has 1 values, not 2 x 1 x 1 = 2");
  }
  assert.is(chunks.length, 1, "the prelude went out, no slab after it");
  for (const edges of [[0, 2], [1, 2], [0, 0, 1]]) {
    try {
      await streamNetcdf(one.layout, () => new Float32Array(1), () => edges).next();
      assert.unreachable(`slabs ${edges}`);
    } catch (err) {
      assert.instance(err, NetcdfWriteError);
      assert.is((err as Error).message, `the slabs of air_temperature_max do not cut 0..${one.layout.days} into ascending whole days: ${edges.join(",")}`);
    }
  }
  for (const days of [0, 1.5, -1]) {
    const stream = streamNetcdf(one.layout, () => new Float32Array(1), days);
    try {
      await stream.next();
      assert.unreachable(`a slab of ${days} days`);
    } catch (err) {
      assert.instance(err, NetcdfWriteError);
      assert.match((err as Error).message, `not ${days}`);
    }
  }
});

refusals("netcdf-writer - descriptions the format or CF cannot hold are refused before any byte", () => {
  const base = describeBox(WIDE, [fileVariable(TMAX)]);
  refused(() => layoutNetcdf({ ...base, days: [] }), "at least one day, row and column (0 x 3 x 5)");
  refused(() => layoutNetcdf({ ...base, variables: [] }), "at least one variable");
  refused(() => layoutNetcdf({ ...base, lat: Array.from(base.lat).reverse() }), "lat must be strictly descending");
  refused(() => layoutNetcdf({ ...base, lon: [1, 2, 2, 3, 4] }), "lon must be strictly ascending");
  refused(() => layoutNetcdf({ ...base, days: [1, 2.5] }), "days[1] is 2.5");
  refused(() => layoutNetcdf({ ...base, lat: [Number.NaN, 1, 0] }), "lat[0] is NaN");
  refused(() => layoutNetcdf({ ...base, variables: [{ ...fileVariable(TMAX), name: "time" }] }), 'variable name "time" is given twice');
  refused(() => layoutNetcdf({ ...base, variables: [{ ...fileVariable(TMAX), name: "max temp" }] }), "is not a CF name");
  refused(() => layoutNetcdf({ ...base, globals: { ...base.globals, extra: { title: "again" } } }), 'global attribute name "title" is given twice');
  refused(() => layoutNetcdf({ ...base, variables: [{ ...fileVariable(TMAX), attributes: { units: "K" } }] }), 'attribute of air_temperature_max name "units" is given twice');
});

refusals.run();
