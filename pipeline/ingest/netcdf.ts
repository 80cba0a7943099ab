// Reads SILO's annual NetCDF-4 files (YYYY.<variable>.nc, docs/contract.md §6.1): the one module that touches
// h5wasm (libhdf5 in WebAssembly), so an upgrade of it is checked in one place. A file is opened lazily from disk
// (opening reads a few hundred bytes) and read one day at a time: a 410 MB year is never held in memory.

import { open } from "node:fs/promises";
import type * as H5 from "h5wasm/node";
import { colToLon, GRID, isInsideGrid, rowToLat, type Window } from "../../format/grid.js";
import type { Variable } from "../../format/variables.js";
import { PublishError, describeError } from "../errors.js";
import { attributeValue, type Packing, type RawCells, type SiloDay, toSiloValues } from "./silo-values.js";

/**
 * The package a worker thread imports before tsx's loader (pipeline/pool.ts): loaded through tsx, the 4 MB
 * bundle costs seconds and about 600 MB per thread; loaded first, about 100 ms.
 */
export const NETCDF_LIBRARY = { name: "h5wasm", subpath: "./node" } as const;

const STAGE = "decode";
const GRID_TOLERANCE_DEG = 1e-9;
const DAY_MS = 86_400_000;
const CALENDARS = new Set(["standard", "gregorian", "proleptic_gregorian"]);
const UNIT_MS: Record<string, number> = { days: DAY_MS, hours: 3_600_000, minutes: 60_000, seconds: 1000 };
// netCDF-4's default fill values (netcdf.h NC_FILL_*): cells never written hold them when no _FillValue is declared
// (keys: integer size and signedness, or float size)
const DEFAULT_FILL: Record<string, number> = {
  "int1/1": -127,
  "int1/0": 255,
  "int2/1": -32767,
  "int2/0": 65535,
  "int4/1": -2147483647,
  "int4/0": 4294967295,
  float4: Math.fround(9.969209968386869e36),
  float8: 9.969209968386869e36,
};

let loading: Promise<typeof H5> | undefined;

/** h5wasm, ready, with HDF5 errors thrown: by default libhdf5 only prints them, and a damaged chunk reads as garbage. */
function loadLibrary(): Promise<typeof H5> {
  return (loading ??= import("h5wasm/node").then(async (h5) => {
    (await h5.ready).activate_throwing_error_handler();
    return h5;
  }));
}

export interface NetcdfYear {
  path: string;
  /** the date of each time index, YYYY-MM-DD */
  dates: string[];
  window: Window;
  /** day `index` as SILO values (north-up, missing NaN, plausible); throws PublishError naming the file and the day */
  readDay(index: number): SiloDay;
  close(): void;
}

/** Opens and checks an annual file of `wanted`: the variable, the grid, the time axis and the packing; throws PublishError. */
export async function openAnnualFile(path: string, wanted: Variable): Promise<NetcdfYear> {
  const h5 = await loadLibrary();
  const fail = (reason: string): never => {
    throw new PublishError(path, STAGE, reason);
  };
  let file: H5.File;
  try {
    file = new h5.File(path, "r");
  } catch (err) {
    return fail(await describeOpenFailure(path, err));
  }
  try {
    const variable = findVariable(h5, file, wanted, fail);
    const [lat, lon, time] = coordinates(h5, file, variable, wanted.silo, fail);
    const grid = locateGrid(lat, lon, fail);
    const dates = readDates(time, fail);
    if (variable.shape![0] !== dates.length) fail(`${wanted.silo} has ${variable.shape![0]} days but time has ${dates.length}`);
    const packing = readPacking(variable, fail);
    return {
      path,
      dates,
      window: grid.window,
      readDay: (index) => readDay(path, variable, { ...grid, packing, date: dates[index], index }, wanted),
      close: () => void file.close(),
    };
  } catch (err) {
    file.close();
    throw err;
  }
}

async function describeOpenFailure(path: string, err: unknown): Promise<string> {
  const head = Buffer.alloc(8);
  const read = await open(path, "r")
    .then(async (h) => (await h.read(head, 0, 8, 0).finally(() => h.close())).bytesRead)
    .catch((e: NodeJS.ErrnoException) => e.code ?? describeError(e));
  if (typeof read === "string") return `cannot read the file (${read})`;
  if (head.subarray(0, 3).toString("latin1") === "CDF") {
    return "is a classic NetCDF-3 file; SILO's annual files are NetCDF-4 (HDF5): convert it with `nccopy -k nc4`, or fetch it again";
  }
  return `truncated or corrupt NetCDF-4 (HDF5) file (${firstLine(err)}); fetch the file again`;
}

/** The first line of an HDF5 error stack: what failed, without the stack. */
function firstLine(err: unknown): string {
  const lines = describeError(err).split("\n").map((l) => l.trim()).filter(Boolean);
  const minor = lines.find((l) => l.startsWith("minor:"))?.slice(6).trim();
  const what = lines.find((l) => /^#\d+:/.test(l))?.replace(/^#\d+:\s*\S+\s+line\s+\d+\s+in\s+\S+\(\):\s*/, "");
  return [what, minor].filter(Boolean).join(": ") || lines[0] || "unknown HDF5 error";
}

/** The file's variable named as SILO names `wanted`: 3 dimensions, integer or float samples, in its unit when it says. */
function findVariable(h5: typeof H5, file: H5.File, wanted: Variable, fail: (r: string) => never): H5.Dataset {
  const name = wanted.silo;
  const found = file.get(name);
  if (!(found instanceof h5.Dataset)) {
    const held = file.keys().filter((k) => {
      const d = file.get(k);
      return d instanceof h5.Dataset && (d.shape?.length ?? 0) === 3;
    });
    return fail(`holds no ${name} variable (it holds ${held.join(", ") || "no 3-dimensional variable"}); publish the ${name} file`);
  }
  const { type, size } = found.metadata;
  if (found.shape?.length !== 3) fail(`${name} has ${found.shape?.length ?? 0} dimensions; expected (time, lat, lon)`);
  if (!((type === 0 && [1, 2, 4].includes(size)) || (type === 1 && [4, 8].includes(size)))) {
    fail(`${name} holds ${JSON.stringify(found.dtype)} samples; expected integers (packed) or float32/float64`);
  }
  const units = readText(found, "units");
  if (units !== undefined && !wanted.unitSpellings.includes(units.trim().toLowerCase().replace(/ /g, "_"))) {
    fail(`${name} units are "${units}", not ${wanted.unit}; is this another variable or a converted file?`);
  }
  return found;
}

function readText(d: H5.Dataset, name: string): string | undefined {
  if (!(name in d.attrs)) return undefined;
  const value = d.attrs[name].value;
  return typeof value === "string" ? value : Array.isArray(value) && typeof value[0] === "string" ? value[0] : String(value);
}

/** The number an attribute holds, and whether it is stored as float32; undefined when absent. */
function readNumbers(d: H5.Dataset, name: string): { values: number[]; float32: boolean } | undefined {
  if (!(name in d.attrs)) return undefined;
  const attr = d.attrs[name];
  const value = attr.value;
  const values = typeof value === "number" || typeof value === "bigint" ? [Number(value)] : ArrayBuffer.isView(value) ? Array.from(value as unknown as ArrayLike<number | bigint>, Number) : [];
  return { values, float32: attr.metadata.type === 1 && attr.metadata.size === 4 };
}

/** The variable's coordinate variables, in its dimension order (time, lat, lon), from its attached scales. */
function coordinates(h5: typeof H5, file: H5.File, variable: H5.Dataset, name: string, fail: (r: string) => never): [Float64Array, Float64Array, { values: number[]; units?: string; calendar?: string }] {
  const expected = [["time"], ["lat", "latitude"], ["lon", "longitude"]];
  const found = expected.map((names, axis) => {
    let scale: string | undefined;
    try {
      scale = variable.get_attached_scales(axis)[0]?.replace(/^\//, "");
    } catch {
      scale = undefined; // no dimension scales: netCDF always attaches them, but a plain HDF5 writer may not
    }
    const axisName = scale ?? names.find((n) => file.get(n) instanceof h5.Dataset);
    if (!axisName || !names.includes(axisName)) fail(`${name} dimension ${axis + 1} is "${axisName ?? "unnamed"}"; expected (time, lat, lon)`);
    const d = file.get(axisName!);
    if (!(d instanceof h5.Dataset) || d.shape?.length !== 1 || d.shape[0] !== variable.shape![axis]) fail(`coordinate variable ${axisName} does not match ${name}'s dimension ${axis + 1}`);
    return d as H5.Dataset;
  });
  const asNumbers = (d: H5.Dataset) => Float64Array.from(d.value as unknown as ArrayLike<number>, Number);
  const time = { values: Array.from(asNumbers(found[0])), units: readText(found[0], "units"), calendar: readText(found[0], "calendar") };
  return [asNumbers(found[1]), asNumbers(found[2]), time];
}

/**
 * The window of the SILO grid the coordinates name: every centre on the lattice (docs/contract.md §6.1) within
 * 1e-9 degrees (float32 coordinates: the float32 of the lattice value), longitudes ascending, latitudes either way.
 */
function locateGrid(lat: Float64Array, lon: Float64Array, fail: (r: string) => never): { window: Window; southUp: boolean } {
  const col0 = Math.round((lon[0] * 1000 - (GRID.westEdgeMilliDeg + GRID.cellMilliDeg / 2)) / GRID.cellMilliDeg);
  const southUp = lat.length > 1 && lat[1] > lat[0];
  const north = southUp ? lat[lat.length - 1] : lat[0];
  const row0 = Math.round(((GRID.northEdgeMilliDeg - GRID.cellMilliDeg / 2) - north * 1000) / GRID.cellMilliDeg);
  const onLattice = (stored: number, expected: number) => Math.abs(stored - expected) <= GRID_TOLERANCE_DEG || stored === Math.fround(expected);
  lon.forEach((v, i) => {
    if (!onLattice(v, colToLon(col0 + i))) {
      fail(`longitude ${v} (index ${i}) is not on the SILO 0.05 degree grid (112 + 0.05k, ascending); is this a resampled file?`);
    }
  });
  lat.forEach((v, i) => {
    const row = southUp ? row0 + lat.length - 1 - i : row0 + i;
    if (!onLattice(v, rowToLat(row))) {
      fail(`latitude ${v} (index ${i}) is not on the SILO 0.05 degree grid (-10 - 0.05k, in one direction); is this a resampled file?`);
    }
  });
  const window: Window = [col0, row0, lon.length, lat.length];
  if (!isInsideGrid(window)) fail(`window [${window.join(", ")}] reaches outside the ${GRID.width} x ${GRID.height} SILO grid`);
  return { window, southUp };
}

/** Each time value as a date: CF units "<days|hours|minutes|seconds> since <date>[ <time>]", a standard calendar, midnight. */
function readDates({ values, units, calendar }: { values: number[]; units?: string; calendar?: string }, fail: (r: string) => never): string[] {
  if (calendar !== undefined && !CALENDARS.has(calendar.trim().toLowerCase())) {
    fail(`time calendar "${calendar}" is not the standard (Gregorian) calendar SILO uses`);
  }
  const m = /^(days|hours|minutes|seconds)\s+since\s+(\d{1,4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2})(?:\.0+)?)?)?\s*(?:Z|UTC|[+-]0{1,2}(?::?00)?)?$/i.exec(units?.trim() ?? "");
  if (!m) fail(`time units "${units ?? ""}" are not CF "days since YYYY-MM-DD"; is this a SILO annual file?`);
  const [, unit, y, mo, d, h = "0", mi = "0", s = "0"] = m!;
  const epoch = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  const dates = values.map((t, i) => {
    const ms = epoch + t * UNIT_MS[unit.toLowerCase()];
    if (!Number.isFinite(ms) || ms % DAY_MS !== 0) fail(`time value ${t} (index ${i}) is not midnight of a day (${units}); SILO stamps each day at 00:00`);
    return new Date(ms).toISOString().slice(0, 10);
  });
  dates.forEach((date, i) => {
    if (i > 0 && date <= dates[i - 1]) fail(`time index ${i} (${date}) does not follow index ${i - 1} (${dates[i - 1]}); days must ascend, each once`);
  });
  return dates;
}

/** CF packing: scale_factor, add_offset, _FillValue (or netCDF's default fill), missing_value, valid_min/max/range. */
function readPacking(variable: H5.Dataset, fail: (r: string) => never): Packing {
  const one = (name: string, fallback: number): number => {
    const found = readNumbers(variable, name);
    if (!found) return fallback;
    if (found.values.length !== 1 || !Number.isFinite(found.values[0])) fail(`${name} ${JSON.stringify(found.values)} is not one finite number`);
    return attributeValue(found.values[0], found.float32);
  };
  const scale = one("scale_factor", 1);
  if (scale === 0) fail("scale_factor is 0");
  const { type, size, signed } = variable.metadata;
  const fill = readNumbers(variable, "_FillValue")?.values ?? [DEFAULT_FILL[type === 1 ? `float${size}` : `int${size}/${signed ? 1 : 0}`] ?? NaN];
  const missing = [...fill, ...(readNumbers(variable, "missing_value")?.values ?? [])].filter((v) => !Number.isNaN(v));
  // a float32 variable holds the float32 of each declared number
  const stored = type === 1 && size === 4 ? missing.map(Math.fround) : missing;
  const range = readNumbers(variable, "valid_range")?.values;
  const lo = range?.[0] ?? readNumbers(variable, "valid_min")?.values[0];
  const hi = range?.[1] ?? readNumbers(variable, "valid_max")?.values[0];
  const valid: [number, number] | undefined = lo === undefined && hi === undefined ? undefined : [lo ?? -Infinity, hi ?? Infinity];
  return { scale, offset: one("add_offset", 0), missing: [...new Set(stored)], valid };
}

/** One day of a yearly file: its index along time, and how its slice of the variable becomes a window of values. */
interface DaySlice {
  window: Window;
  southUp: boolean;
  packing: Packing;
  date: string;
  index: number;
}

function readDay(path: string, variable: H5.Dataset, day: DaySlice, wanted: Variable): SiloDay {
  const where = `day ${day.date} (${wanted.silo}[${day.index}])`;
  const fail = (reason: string): never => {
    throw new PublishError(path, STAGE, `${where}: ${reason}`);
  };
  let raw: RawCells;
  try {
    raw = variable.slice([[day.index, day.index + 1], [], []]) as RawCells;
  } catch (err) {
    return fail(`cannot read its cells (${firstLine(err)}); the file is damaged: fetch it again`);
  }
  if (!ArrayBuffer.isView(raw) || raw.length !== day.window[2] * day.window[3]) fail(`read ${(raw as { length?: number })?.length} cells, expected ${day.window[2] * day.window[3]}`);
  return toSiloValues(raw, day.window, day.packing, day.southUp, wanted.plausible, fail);
}
