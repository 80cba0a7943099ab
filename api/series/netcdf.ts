// The series route's NetCDF answer: a CF-1.8 classic or 64-bit offset file, header first, then data a slab of days at a time.
//
// The rules (docs/netcdf.md; docs/contract.md §8.2):
// - Kind: CDF-1 (classic) when the whole file is at most `classicMaxBytes` (2^31 - 1), so every `begin` offset fits
//   the signed 32-bit field netcdf-c reads; otherwise CDF-2 (64-bit offsets). CDF-2 still caps every fixed-size
//   variable but the last at 2^32 - 4 bytes, so two variables over 4 GiB each cannot be written at all:
//   NetcdfTooLargeError, which the route answers as a 413 with a split plan.
// - No record (unlimited) dimension: `time` is fixed, so each variable's values are one contiguous block and the
//   file is written variable by variable, days ascending. A record dimension would interleave every variable day by
//   day; NCO's ncrcat wants one (`ncks --mk_rec_dmn time` makes it), CDO, GDAL and xarray do not.
// - Variables in file order: `time` (double), `lat` (double, north to south), `lon` (double), `crs` (an int scalar
//   whose attributes are the CF grid mapping of EPSG:4326, with the WKT as `crs_wkt` and GDAL's `spatial_ref`),
//   then one float32 variable per asked variable, dims (time, lat, lon), in the order asked.
// - `time` is double days since 1970-01-01: what CDO and GDAL write themselves, exact for whole days, and room for
//   a sub-day time later without changing the type. CDO, GDAL and xarray read int32 days too (the Zarr view's
//   type); double is chosen because it is what every CF tool meets most.
// - Byte order is big-endian throughout (the format's XDR). Missing values are written as the canonical float32 NaN
//   0x7fc00000, the same bits as `_FillValue`, so a reader comparing bits and one testing isnan agree.
// - Names and char attributes are padded with zero bytes to 4; int, float and double data are whole multiples of
//   4 bytes, so no data block needs padding and each begins where the one before it ends.
// - The module uses DataView and Uint8Array only (no node: modules): the mirror client runs it in a browser.

import { CELL_SIZE_DEG, WGS84_WKT } from "../../format/grid.js";

/** One asked variable of the file: float32, dims (time, lat, lon). */
export interface NetcdfVariable {
  /** the variable's name in the file: its API name */
  name: string;
  units: string;
  longName: string;
  standardName?: string;
  cellMethods?: string;
  /** more string attributes, written after the CF ones (a comment on observation times, say) */
  attributes?: Readonly<Record<string, string>>;
}

/** Global attributes of the file; `Conventions` is always "CF-1.8". */
export interface NetcdfGlobals {
  title: string;
  institution: string;
  source: string;
  license: string;
  history: string;
  /** more string attributes (each variable's dataset version and content sha256), written after the others */
  extra?: Readonly<Record<string, string>>;
}

/** What a file holds: its coordinates, variables and global attributes. */
export interface NetcdfDescription {
  /** whole days since 1970-01-01 (UTC), ascending */
  days: ArrayLike<number>;
  /** cell-centre latitudes, north to south, already rounded to 9 decimals */
  lat: ArrayLike<number>;
  /** cell-centre longitudes, west to east, already rounded to 9 decimals */
  lon: ArrayLike<number>;
  variables: readonly NetcdfVariable[];
  globals: NetcdfGlobals;
}

/** The format's size limits; tests make them small to reach CDF-2 and the too-large error without writing GBs. */
export interface NetcdfLimits {
  /** the largest file written as CDF-1 */
  classicMaxBytes: number;
  /** the largest fixed-size variable CDF-2 allows, except the last */
  variableMaxBytes: number;
}

export const NETCDF_LIMITS: NetcdfLimits = { classicMaxBytes: 2 ** 31 - 1, variableMaxBytes: 2 ** 32 - 4 };

/** A file planned: its kind, its exact length and its first bytes, before any data value is read. */
export interface NetcdfLayout {
  /** 1: classic (CDF-1); 2: 64-bit offset (CDF-2) */
  kind: 1 | 2;
  /** the file's exact length in bytes (the answer's Content-Length) */
  byteLength: number;
  /** the header and the coordinates' values: the file's first bytes */
  prelude: Uint8Array;
  days: number;
  rows: number;
  cols: number;
  /** the data variables in file order, each with its offset and length */
  variables: readonly { name: string; begin: number; byteLength: number }[];
}

/** The file would exceed what CDF-2 can hold: the caller answers 413 and splits the ask. */
export class NetcdfTooLargeError extends Error {
  constructor(
    message: string,
    readonly variableBytes: number,
    readonly limitBytes: number,
  ) {
    super(message);
    this.name = "NetcdfTooLargeError";
  }
}

/** A description the format cannot hold, or slabs out of order: a bug of the caller, never the user's. */
export class NetcdfWriteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NetcdfWriteError";
  }
}

const NC_CHAR = 2;
const NC_INT = 4;
const NC_FLOAT = 5;
const NC_DOUBLE = 6;
const NC_DIMENSION = 0x0a;
const NC_VARIABLE = 0x0b;
const NC_ATTRIBUTE = 0x0c;
/** vsize of a variable too large for the 32-bit field (only ever the last one, in CDF-2) */
const VSIZE_TOO_LARGE = 2 ** 32 - 1;
/** The float32 NaN that x86, ARM and the NetCDF library write; a missing value is written as exactly these bits. */
export const CANONICAL_NAN_BITS = 0x7fc00000;

/** Names as CF asks them: a letter first, then letters, digits and underscores (netcdf-c allows more; readers may not). */
const NAME = /^[A-Za-z][A-Za-z0-9_]*$|^_[A-Za-z0-9_]+$/;

type AttributeValue = string | { type: typeof NC_INT | typeof NC_FLOAT | typeof NC_DOUBLE; values: readonly number[] };
type Attribute = readonly [name: string, value: AttributeValue];

/** A variable of the file as the header describes it. */
interface Entry {
  name: string;
  dimIds: readonly number[];
  type: number;
  attributes: readonly Attribute[];
  bytes: number;
}

const double = (...values: number[]): AttributeValue => ({ type: NC_DOUBLE, values });

/** The file's variables in order: coordinates, the grid mapping, then the data. */
function describeEntries(d: NetcdfDescription): Entry[] {
  const days = d.days.length;
  const rows = d.lat.length;
  const cols = d.lon.length;
  const coordinates: Entry[] = [
    { name: "time", dimIds: [0], type: NC_DOUBLE, bytes: days * 8, attributes: [["standard_name", "time"], ["long_name", "time"], ["units", "days since 1970-01-01"], ["calendar", "standard"], ["axis", "T"]] },
    { name: "lat", dimIds: [1], type: NC_DOUBLE, bytes: rows * 8, attributes: [["standard_name", "latitude"], ["long_name", "latitude of the cell centre"], ["units", "degrees_north"], ["axis", "Y"]] },
    { name: "lon", dimIds: [2], type: NC_DOUBLE, bytes: cols * 8, attributes: [["standard_name", "longitude"], ["long_name", "longitude of the cell centre"], ["units", "degrees_east"], ["axis", "X"]] },
    { name: "crs", dimIds: [], type: NC_INT, bytes: 4, attributes: crsAttributes(d) },
  ];
  const data = d.variables.map((v): Entry => ({ name: v.name, dimIds: [0, 1, 2], type: NC_FLOAT, bytes: days * rows * cols * 4, attributes: variableAttributes(v) }));
  return [...coordinates, ...data];
}

/** CF's grid mapping of EPSG:4326, its WKT for GDAL, and GDAL's own GeoTransform when the cells are SILO's. */
function crsAttributes(d: NetcdfDescription): Attribute[] {
  const attributes: Attribute[] = [
    ["grid_mapping_name", "latitude_longitude"],
    ["semi_major_axis", double(6378137)],
    ["inverse_flattening", double(298.257223563)],
    ["longitude_of_prime_meridian", double(0)],
    ["crs_wkt", WGS84_WKT],
    ["spatial_ref", WGS84_WKT],
  ];
  const transform = geoTransformOf(d);
  return transform ? [...attributes, ["GeoTransform", transform]] : attributes;
}

/**
 * GDAL's affine of the first cell's corner, as its netCDF driver writes it, when lat and lon step by exactly one
 * cell: GDAL derives the same from the coordinates, except for a single row or column, which has no spacing to
 * derive it from (one cell over years is the commonest box of all). Places that are not one box get none.
 */
function geoTransformOf(d: NetcdfDescription): string | null {
  const steps = (values: ArrayLike<number>, sign: number) => Array.from(values).every((v, i) => i === 0 || Math.abs(v - values[i - 1] - sign * CELL_SIZE_DEG) < 1e-9);
  if (!steps(d.lat, -1) || !steps(d.lon, 1)) return null;
  const west = round9(d.lon[0] - CELL_SIZE_DEG / 2);
  const north = round9(d.lat[0] + CELL_SIZE_DEG / 2);
  return [west, CELL_SIZE_DEG, 0, north, 0, -CELL_SIZE_DEG].join(" ");
}

function round9(x: number): number {
  return Math.round(x * 1e9) / 1e9;
}

/** A data variable's CF attributes, then the caller's own. */
function variableAttributes(v: NetcdfVariable): Attribute[] {
  return [
    ["long_name", v.longName],
    ...(v.standardName ? [["standard_name", v.standardName] as const] : []),
    ["units", v.units],
    ...(v.cellMethods ? [["cell_methods", v.cellMethods] as const] : []),
    ["_FillValue", { type: NC_FLOAT, values: [Number.NaN] }],
    ["grid_mapping", "crs"],
    ...Object.entries(v.attributes ?? {}),
  ];
}

function globalAttributes(g: NetcdfGlobals): Attribute[] {
  return [
    ["Conventions", "CF-1.8"],
    ["title", g.title],
    ["institution", g.institution],
    ["source", g.source],
    ["license", g.license],
    ["history", g.history],
    ...Object.entries(g.extra ?? {}),
  ];
}

/** Throws when the format, CF or the series route's order cannot hold what is described. */
function checkDescription(d: NetcdfDescription, entries: readonly Entry[], globals: readonly Attribute[]): void {
  // a dimension of length 0 is the record dimension in the classic format: an empty answer is no file at all
  if (d.days.length === 0 || d.lat.length === 0 || d.lon.length === 0) throw new NetcdfWriteError(`a NetCDF answer needs at least one day, row and column (${d.days.length} x ${d.lat.length} x ${d.lon.length})`);
  if (d.variables.length === 0) throw new NetcdfWriteError("a NetCDF answer needs at least one variable");
  checkAscending("days", d.days, 1, Number.isInteger);
  checkAscending("lat", d.lat, -1, Number.isFinite);
  checkAscending("lon", d.lon, 1, Number.isFinite);
  checkNames("variable", entries.map((e) => e.name));
  checkNames("global attribute", globals.map(([name]) => name));
  for (const e of entries) checkNames(`attribute of ${e.name}`, e.attributes.map(([name]) => name));
}

/** Coordinates must be strictly monotonic (CF), in the direction the layout promises. */
function checkAscending(what: string, values: ArrayLike<number>, sign: number, isValid: (v: number) => boolean): void {
  for (let i = 0; i < values.length; i++) {
    if (!isValid(values[i])) throw new NetcdfWriteError(`${what}[${i}] is ${values[i]}, not a valid coordinate`);
    if (i > 0 && sign * (values[i] - values[i - 1]) <= 0) throw new NetcdfWriteError(`${what} must be strictly ${sign > 0 ? "ascending" : "descending"}: ${what}[${i - 1}] = ${values[i - 1]}, ${what}[${i}] = ${values[i]}`);
  }
}

function checkNames(what: string, names: readonly string[]): void {
  const seen = new Set<string>();
  for (const name of names) {
    if (!NAME.test(name)) throw new NetcdfWriteError(`${what} name ${JSON.stringify(name)} is not a CF name (a letter, then letters, digits or _)`);
    if (seen.has(name)) throw new NetcdfWriteError(`${what} name ${JSON.stringify(name)} is given twice`);
    seen.add(name);
  }
}

/** A growing big-endian byte buffer, for the header and the coordinates (a few KB; data never goes through it). */
class ByteWriter {
  private bytes: Uint8Array;
  private view: DataView;
  length = 0;

  constructor(capacity = 4096) {
    this.bytes = new Uint8Array(capacity);
    this.view = new DataView(this.bytes.buffer);
  }

  private room(n: number): void {
    if (this.length + n <= this.bytes.length) return;
    const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + n));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
    this.view = new DataView(grown.buffer);
  }
  uint32(v: number): void {
    this.room(4);
    this.view.setUint32(this.length, v, false);
    this.length += 4;
  }
  /** An OFFSET: 32 bits in CDF-1, 64 in CDF-2 (a JS number is exact far beyond any file written). */
  offset(v: number, kind: 1 | 2): void {
    if (kind === 2) this.uint32(Math.floor(v / 2 ** 32));
    this.uint32(v % 2 ** 32);
  }
  int32(v: number): void {
    this.room(4);
    this.view.setInt32(this.length, v, false);
    this.length += 4;
  }
  float32(v: number): void {
    this.room(4);
    if (Number.isNaN(v)) this.view.setUint32(this.length, CANONICAL_NAN_BITS, false);
    else this.view.setFloat32(this.length, v, false);
    this.length += 4;
  }
  float64(v: number): void {
    this.room(8);
    this.view.setFloat64(this.length, v, false);
    this.length += 8;
  }
  /** Raw bytes, then zero bytes up to a multiple of 4 (the format's padding). */
  padded(b: Uint8Array): void {
    const n = Math.ceil(b.length / 4) * 4;
    this.room(n);
    this.bytes.set(b, this.length);
    this.bytes.fill(0, this.length + b.length, this.length + n);
    this.length += n;
  }
  result(): Uint8Array {
    return this.bytes.slice(0, this.length);
  }
}

const UTF8 = new TextEncoder();

function writeName(w: ByteWriter, name: string): void {
  const b = UTF8.encode(name);
  w.uint32(b.length);
  w.padded(b);
}

function writeAttributes(w: ByteWriter, attributes: readonly Attribute[]): void {
  if (attributes.length === 0) return void (w.uint32(0), w.uint32(0)); // ABSENT
  w.uint32(NC_ATTRIBUTE);
  w.uint32(attributes.length);
  for (const [name, value] of attributes) {
    writeName(w, name);
    if (typeof value === "string") {
      const b = UTF8.encode(value);
      w.uint32(NC_CHAR);
      w.uint32(b.length);
      w.padded(b);
      continue;
    }
    w.uint32(value.type);
    w.uint32(value.values.length);
    for (const v of value.values) (value.type === NC_DOUBLE ? w.float64(v) : value.type === NC_FLOAT ? w.float32(v) : w.int32(v));
  }
}

/** The header: magic, numrecs, dimensions, global attributes, then each variable with its vsize and begin. */
function encodeHeader(d: NetcdfDescription, entries: readonly Entry[], globals: readonly Attribute[], kind: 1 | 2, begins: readonly number[]): Uint8Array {
  const w = new ByteWriter();
  w.padded(new Uint8Array([0x43, 0x44, 0x46, kind])); // "CDF" and the version byte
  w.uint32(0); // numrecs: no record dimension
  w.uint32(NC_DIMENSION);
  w.uint32(3);
  for (const [name, length] of [["time", d.days.length], ["lat", d.lat.length], ["lon", d.lon.length]] as const) {
    writeName(w, name);
    w.uint32(length);
  }
  writeAttributes(w, globals);
  w.uint32(NC_VARIABLE);
  w.uint32(entries.length);
  entries.forEach((e, i) => {
    writeName(w, e.name);
    w.uint32(e.dimIds.length);
    for (const id of e.dimIds) w.uint32(id);
    writeAttributes(w, e.attributes);
    w.uint32(e.type);
    const vsize = Math.ceil(e.bytes / 4) * 4;
    w.uint32(vsize > NETCDF_LIMITS.variableMaxBytes ? VSIZE_TOO_LARGE : vsize);
    w.offset(begins[i], kind);
  });
  return w.result();
}

/** The coordinates' and the grid mapping's values, which follow the header. */
function encodeCoordinates(d: NetcdfDescription): Uint8Array {
  const w = new ByteWriter((d.days.length + d.lat.length + d.lon.length) * 8 + 4);
  for (const values of [d.days, d.lat, d.lon]) for (let i = 0; i < values.length; i++) w.float64(values[i]);
  w.int32(0); // crs: a scalar whose value means nothing; its attributes are the point (CF grid mapping)
  return w.result();
}

/** Where each variable begins, the data packed after a header of `headerBytes`. */
function beginsOf(entries: readonly Entry[], headerBytes: number): number[] {
  let at = headerBytes;
  return entries.map((e) => {
    const begin = at;
    at += Math.ceil(e.bytes / 4) * 4;
    return begin;
  });
}

/** CDF-1 when the file fits the classic format, else CDF-2 when every variable but the last fits its 32-bit vsize. */
function chooseKind(entries: readonly Entry[], classicBytes: number, limits: NetcdfLimits): 1 | 2 {
  if (classicBytes <= limits.classicMaxBytes) return 1;
  const tooLarge = entries.slice(0, -1).find((e) => e.bytes > limits.variableMaxBytes);
  if (tooLarge) {
    const message = `variable ${tooLarge.name} would be ${tooLarge.bytes} bytes; a 64-bit offset NetCDF file holds at most ${limits.variableMaxBytes} bytes in each variable but the last: ask fewer days, cells or variables at a time`;
    throw new NetcdfTooLargeError(message, tooLarge.bytes, limits.variableMaxBytes);
  }
  return 2;
}

/**
 * Plans a file: checks the description, picks the kind, computes the header (every variable's offset) and the
 * coordinates' bytes, so the exact length is known before any data is read. Throws NetcdfTooLargeError when not
 * even CDF-2 can hold it, NetcdfWriteError when the description is malformed.
 */
export function layoutNetcdf(d: NetcdfDescription, limits: NetcdfLimits = NETCDF_LIMITS): NetcdfLayout {
  const entries = describeEntries(d);
  const globals = globalAttributes(d.globals);
  checkDescription(d, entries, globals);
  const zeros = entries.map(() => 0);
  const dataBytes = entries.reduce((sum, e) => sum + Math.ceil(e.bytes / 4) * 4, 0);
  const kind = chooseKind(entries, encodeHeader(d, entries, globals, 1, zeros).length + dataBytes, limits);
  // the header's length does not depend on the offsets' values, only on their width: measure, then write them in
  const begins = beginsOf(entries, encodeHeader(d, entries, globals, kind, zeros).length);
  const header = encodeHeader(d, entries, globals, kind, begins);
  const coordinates = encodeCoordinates(d);
  const prelude = new Uint8Array(header.length + coordinates.length);
  prelude.set(header);
  prelude.set(coordinates, header.length);
  const first = entries.length - d.variables.length;
  const variables = entries.slice(first).map((e, i) => ({ name: e.name, begin: begins[first + i], byteLength: e.bytes }));
  return { kind, byteLength: header.length + dataBytes, prelude, days: d.days.length, rows: d.lat.length, cols: d.lon.length, variables };
}

/**
 * float32 values as big-endian bytes, every NaN as the canonical NaN. The bits are read as integers, so a NaN's
 * payload is seen and replaced (a float read would hand JavaScript a NaN whose payload it may change), and
 * DataView writes them big-endian on any host (measured within noise of swapping words in a Uint32Array here).
 */
export function float32ToBigEndian(values: Float32Array): Uint8Array {
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  const out = new Uint8Array(values.length * 4);
  const view = new DataView(out.buffer);
  const nan = CANONICAL_NAN_BITS; // a local: V8 checks a module binding on every read of it, a third of the speed here
  for (let i = 0; i < bits.length; i++) {
    const b = bits[i];
    view.setUint32(i * 4, (b & 0x7fffffff) > 0x7f800000 ? nan : b, false);
  }
  return out;
}

/**
 * Writes a planned file's bytes in order: `start()` gives the prelude, then `writeSlab` each variable's days in
 * order, a slab of whole days at a time, then `finish()` checks that exactly the promised bytes were given. Each
 * call returns a new array the caller may keep (a stream holds chunks until they are sent); nothing else is kept.
 */
export class NetcdfWriter {
  private started = false;
  private variable = 0;
  private nextDay = 0;
  private written = 0;

  constructor(readonly layout: NetcdfLayout) {}

  /** The header and the coordinates: the first bytes of the file. */
  start(): Uint8Array {
    if (this.started) throw new NetcdfWriteError("start() was called twice");
    this.started = true;
    this.written = this.layout.prelude.length;
    return this.layout.prelude;
  }

  /** Days [t0, t1) of one variable, (t1 - t0) x rows x cols values, row-major, NaN for missing. */
  writeSlab(name: string, t0: number, t1: number, values: Float32Array): Uint8Array {
    const { layout } = this;
    const expected = layout.variables[this.variable];
    if (!this.started) throw new NetcdfWriteError("writeSlab() before start()");
    if (!expected) throw new NetcdfWriteError(`writeSlab(${name}, ${t0}, ${t1}) after every variable was written`);
    if (name !== expected.name || t0 !== this.nextDay || !Number.isInteger(t1) || t1 <= t0 || t1 > layout.days) {
      throw new NetcdfWriteError(`writeSlab(${name}, ${t0}, ${t1}) out of order: expected ${expected.name} from day ${this.nextDay}, ending after it and at most at ${layout.days}`);
    }
    const count = (t1 - t0) * layout.rows * layout.cols;
    if (values.length !== count) throw new NetcdfWriteError(`writeSlab(${name}, ${t0}, ${t1}) has ${values.length} values, not ${t1 - t0} x ${layout.rows} x ${layout.cols} = ${count}`);
    const bytes = float32ToBigEndian(values);
    this.written += bytes.length;
    this.nextDay = t1;
    if (t1 === layout.days) [this.variable, this.nextDay] = [this.variable + 1, 0];
    return bytes;
  }

  /** Throws unless every variable was written and the bytes total the layout's length. */
  finish(): void {
    if (this.variable < this.layout.variables.length || this.written !== this.layout.byteLength) {
      const at = this.layout.variables[this.variable];
      throw new NetcdfWriteError(`the NetCDF file ended at ${this.written} of ${this.layout.byteLength} bytes${at ? `, ${at.name} at day ${this.nextDay}` : ""}`);
    }
  }
}

/** Values of one variable for days [t0, t1), as `writeSlab` takes them. */
export type ReadDays = (name: string, t0: number, t1: number) => Float32Array | Promise<Float32Array>;

/** Days a slab holds so that it is about `slabBytes` (1 MiB by default), and at least one day. */
export function daysPerSlab(layout: NetcdfLayout, slabBytes = 2 ** 20): number {
  return Math.max(1, Math.min(layout.days, Math.floor(slabBytes / (layout.rows * layout.cols * 4))));
}

/**
 * How a variable's days are cut into slabs: a number of days each, or each variable's own edges (0, ..., days;
 * ascending), where a reader's stored pieces break so that it reads each piece once.
 */
export type SlabPlan = number | ((name: string) => readonly number[]);

/** The edges of a variable's slabs: [0, days, 2 days, ..., layout.days], or the plan's own, checked. */
function slabEdges(layout: NetcdfLayout, name: string, slabs: SlabPlan): readonly number[] {
  if (typeof slabs === "number") {
    if (!Number.isInteger(slabs) || slabs < 1) throw new NetcdfWriteError(`a slab is a whole number of days, at least 1, not ${slabs}`);
    return [...Array.from({ length: Math.ceil(layout.days / slabs) }, (_, k) => k * slabs), layout.days];
  }
  const edges = slabs(name);
  if (edges[0] !== 0 || edges[edges.length - 1] !== layout.days || edges.some((e, k) => k > 0 && !(Number.isInteger(e) && e > edges[k - 1]))) {
    throw new NetcdfWriteError(`the slabs of ${name} do not cut 0..${layout.days} into ascending whole days: ${edges.join(",")}`);
  }
  return edges;
}

/**
 * The whole file as an async generator of byte chunks (`Readable.from(...)` on Node, a ReadableStream in a
 * browser): the prelude, then each variable a slab at a time. Memory holds one slab, however long the answer; the
 * last step checks the total against `layout.byteLength`.
 */
export async function* streamNetcdf(layout: NetcdfLayout, read: ReadDays, slabs: SlabPlan = daysPerSlab(layout)): AsyncGenerator<Uint8Array> {
  const edges = layout.variables.map(({ name }) => slabEdges(layout, name, slabs));
  const writer = new NetcdfWriter(layout);
  yield writer.start();
  for (const [v, { name }] of layout.variables.entries()) {
    for (let k = 1; k < edges[v].length; k++) yield writer.writeSlab(name, edges[v][k - 1], edges[v][k], await read(name, edges[v][k - 1], edges[v][k]));
  }
  writer.finish();
}
