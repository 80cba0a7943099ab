// SILO cell values from any encoding (docs/contract.md §6.1), one rule for GeoTIFF and NetCDF alike: packed
// integers unpacked in double precision and narrowed to float32 once; missing cells (declared nodata or fill
// values, the legacy ocean value, NaN, infinities) as NaN; every other value inside the plausible range.

import type { Window } from "../../format/grid.js";
import { colToLon, rowToLat } from "../../format/grid.js";
import { NOT_TENTHS, toTenthsCode } from "../../format/cells.js";
import { float32ToShortest } from "../../format/number-text.js";

// Pre-1950s SILO files mark the ocean with -3276.8 while declaring -32767 (docs/contract.md §6.1); a float32 file
// holds its float32 rounding, -3276.800048828125, which is not the double -3276.8. A packed file holds -32768
// tenths, which unpacks to the same float32.
export const LEGACY_OCEAN = Math.fround(-3276.8);

/** Stored cells of one day, as a library hands them over: any integer or float sample type. */
export type RawCells = Float32Array | Float64Array | Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array;

/** How stored numbers become values: value = stored * scale + offset; `missing` lists stored numbers that mean no value. */
export interface Packing {
  scale: number;
  offset: number;
  missing: number[];
  /** stored numbers outside [min, max] are missing (CF valid_min, valid_max, valid_range) */
  valid?: [number, number];
}

/**
 * The number a scale or offset attribute stands for. A float32 attribute cannot hold 0.1: it holds
 * 0.10000000149011612, and 253 * that lands one float32 step above SILO's 25.3 for many values. The writer meant
 * the shortest decimal that reads back as that float32, so that decimal is used; a float64 attribute (or GDAL's
 * decimal text) is used as it is. With 0.1 in double, Math.fround(k * 0.1) is Math.fround(k / 10) for every int16 k.
 */
export function attributeValue(stored: number, isFloat32: boolean): number {
  return isFloat32 ? (float32ToShortest(stored) ?? stored) : stored;
}

export interface SiloDay {
  /** row-major over the window, north-up, NaN = missing */
  values: Float32Array;
  missing: number;
  /**
   * the values' tenths codes (format/cells.ts; missing -32768), when packed samples were read through a table and
   * every value is a tenth: the day's blocks are encoded from them without converting each value again
   */
  codes?: Int16Array;
}

/** Where a day's cells came from, for messages: "value 75.5 at cell (col .., row ..) of <where>". */
export type Fail = (reason: string) => never;

/**
 * Stored cells -> SILO values over the window: unpacked, missing as NaN, plausible. `southUp` stored rows run
 * south to north (a NetCDF file whose latitudes ascend) and are flipped. Calls `fail` on the first implausible value.
 */
export function toSiloValues(raw: RawCells, window: Window, packing: Packing, southUp: boolean, plausible: readonly [number, number], fail: Fail): SiloDay {
  const [, , width, height] = window;
  const values = raw instanceof Float32Array && !southUp ? raw : new Float32Array(width * height);
  const unpack = makeUnpack(packing);
  // 16-bit and 8-bit samples (SILO's packed int16) through a table of every stored number's value, made once a day:
  // the same function's answers, a load a cell instead of a call (a full-grid year is 209 million cells)
  const table = raw instanceof Int16Array || raw instanceof Uint16Array || raw instanceof Int8Array || raw instanceof Uint8Array ? unpackTable(raw, unpack) : null;
  // and each stored number's tenths code, so the cells' codes come with their values, a load a cell
  const codeTable = table ? tenthsCodes(table) : null;
  const codes = table ? new Int16Array(width * height) : null;
  let allTenths = true;
  let missing = 0;
  for (let r = 0; r < height; r++) {
    const from = (southUp ? height - 1 - r : r) * width;
    const to = r * width;
    if (table) {
      const bias = raw instanceof Int16Array ? 32768 : raw instanceof Int8Array ? 128 : 0;
      for (let c = 0; c < width; c++) {
        const stored = raw[from + c] + bias;
        const v = table[stored];
        values[to + c] = v;
        if (v !== v) missing++;
        const code = codeTable![stored];
        if (code === NOT_TENTHS) allTenths = false;
        codes![to + c] = code;
      }
      continue;
    }
    for (let c = 0; c < width; c++) {
      const v = unpack(raw[from + c]);
      values[to + c] = v;
      if (v !== v) missing++;
    }
  }
  checkPlausible(values, window, plausible, fail);
  return codes && allTenths ? { values, missing, codes } : { values, missing };
}

/** The value of every number a 16-bit or 8-bit sample can hold, at index stored + bias (signed types start at their minimum). */
function unpackTable(raw: Int16Array | Uint16Array | Int8Array | Uint8Array, unpack: (stored: number) => number): Float32Array {
  const [min, count] = raw instanceof Int16Array ? [-32768, 65536] : raw instanceof Uint16Array ? [0, 65536] : raw instanceof Int8Array ? [-128, 256] : [0, 256];
  const table = new Float32Array(count);
  for (let i = 0; i < count; i++) table[i] = unpack(min + i);
  return table;
}

/** The tenths code of every entry of an unpacking table (NOT_TENTHS where none reads back as it). */
function tenthsCodes(table: Float32Array): Int32Array {
  // a loop: Int32Array.from(table, fn) goes through the iterator protocol, 65,536 times a day
  const codes = new Int32Array(table.length);
  for (let i = 0; i < table.length; i++) codes[i] = toTenthsCode(table[i]);
  return codes;
}

/** One stored number -> its float32 value, NaN when missing. */
function makeUnpack({ scale, offset, missing, valid }: Packing): (stored: number) => number {
  const [m0, m1] = [missing[0] ?? NaN, missing[1] ?? NaN];
  const rest = missing.slice(2);
  const [lo, hi] = valid ?? [-Infinity, Infinity];
  const plain = scale === 1 && offset === 0;
  return (stored) => {
    if (stored === m0 || stored === m1 || stored < lo || stored > hi || (rest.length > 0 && rest.includes(stored))) return NaN;
    // unscaled floats stay exactly as stored (-0 included); packed numbers are unpacked in double, narrowed once
    const value = plain ? stored : stored * scale + offset;
    if (!Number.isFinite(value)) return NaN;
    const f = Math.fround(value);
    return f === LEGACY_OCEAN ? NaN : f;
  };
}

function checkPlausible(values: Float32Array, window: Window, [lo, hi]: readonly [number, number], fail: Fail): void {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v < lo || v > hi) {
      const col = window[0] + (i % window[2]);
      const row = window[1] + Math.floor(i / window[2]);
      fail(
        `value ${float32ToShortest(v)} at cell (col ${col}, row ${row}; lon ${colToLon(col)}, lat ${rowToLat(row)}) ` +
          `is outside the plausible range ${lo}..${hi}; check the source file and the variable it holds`,
      );
    }
  }
}
