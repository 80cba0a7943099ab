// SILO cell values from any encoding (docs/contract.md §6.1), one rule for GeoTIFF and NetCDF alike: packed
// integers unpacked in double precision and narrowed to float32 once; missing cells (declared nodata or fill
// values, the legacy ocean value, NaN, infinities) as NaN; every other value inside the plausible range.

import type { Window } from "../../format/grid.js";
import { colToLon, rowToLat } from "../../format/grid.js";
import { MISSING_BITS, NOT_TENTHS, toTenthsCode } from "../../format/cells.js";
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
  /** row-major over the window, north-up; a missing cell is the one NaN pattern of canonical cells (format/cells.ts MISSING_BITS) */
  values: Float32Array;
  /** how many cells are missing */
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
 * Stored cells -> SILO values over the window: unpacked, missing as the canonical NaN, plausible. `southUp` stored
 * rows run south to north (a NetCDF file whose latitudes ascend) and are flipped. Calls `fail` on the first
 * implausible value. One pass over the cells does it all: a full-grid year is 209 million of them.
 */
export function toSiloValues(raw: RawCells, window: Window, packing: Packing, southUp: boolean, plausible: readonly [number, number], fail: Fail): SiloDay {
  const [, , width, height] = window;
  const values = raw instanceof Float32Array && !southUp ? raw : new Float32Array(width * height);
  const day =
    raw instanceof Int16Array || raw instanceof Uint16Array || raw instanceof Int8Array || raw instanceof Uint8Array
      ? fromTable(raw, values, width, height, southUp, StoredTable.of(raw, packing, plausible))
      : fromNumbers(raw, values, width, height, southUp, makeUnpack(packing), plausible);
  if (day.implausible) checkPlausible(values, window, plausible, fail);
  return day.codes && day.allTenths ? { values, missing: day.missing, codes: day.codes } : { values, missing: day.missing };
}

interface Pass {
  missing: number;
  implausible: boolean;
  allTenths: boolean;
  codes: Int16Array | null;
}

/** A stored number's entry in StoredTable.entries: its tenths code in the low 16 bits, then what it is. */
const MISSING = 1 << 16;
const IMPLAUSIBLE = 1 << 17;
const NOT_A_TENTH = 1 << 18;

/**
 * Everything about each number a 16-bit or 8-bit sample can hold (SILO's packed int16), at index stored + bias (signed
 * types start at their minimum): a cell then costs two loads, not a call.
 */
class StoredTable {
  readonly bias: number;
  /** the value's float32 bits, missing as the canonical NaN: copied as integers, so no NaN pattern can change */
  readonly bits: Uint32Array;
  readonly entries: Int32Array;

  constructor(raw: Int16Array | Uint16Array | Int8Array | Uint8Array, unpack: (stored: number) => number, [lo, hi]: readonly [number, number]) {
    const [min, count] = raw instanceof Int16Array ? [-32768, 65536] : raw instanceof Uint16Array ? [0, 65536] : raw instanceof Int8Array ? [-128, 256] : [0, 256];
    this.bias = -min;
    const values = new Float32Array(count);
    this.bits = new Uint32Array(values.buffer);
    this.entries = new Int32Array(count);
    // a loop: Int32Array.from(table, fn) goes through the iterator protocol
    for (let i = 0; i < count; i++) {
      const v = unpack(min + i);
      values[i] = v;
      const code = toTenthsCode(v);
      if (v !== v) this.bits[i] = MISSING_BITS;
      const kind = v !== v ? MISSING : (v < lo || v > hi ? IMPLAUSIBLE : 0) | (code === NOT_TENTHS ? NOT_A_TENTH : 0);
      this.entries[i] = (code & 0xffff) | kind;
    }
  }

  /** The table of the packing: a file's days share one, so it is made once a file, not once a day. */
  static of(raw: Int16Array | Uint16Array | Int8Array | Uint8Array, packing: Packing, plausible: readonly [number, number]): StoredTable {
    const key = JSON.stringify([raw.constructor.name, packing, plausible]);
    if (lastTable?.key !== key) lastTable = { key, table: new StoredTable(raw, makeUnpack(packing), plausible) };
    return lastTable.table;
  }
}

let lastTable: { key: string; table: StoredTable } | undefined;

function fromTable(raw: Int16Array | Uint16Array | Int8Array | Uint8Array, values: Float32Array, width: number, height: number, southUp: boolean, table: StoredTable): Pass {
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  const codes = new Int16Array(width * height);
  const { bias, bits: tableBits, entries } = table;
  let missing = 0;
  let seen = 0;
  for (let r = 0; r < height; r++) {
    const from = (southUp ? height - 1 - r : r) * width;
    const to = r * width;
    for (let c = 0; c < width; c++) {
      const stored = raw[from + c] + bias;
      const entry = entries[stored];
      bits[to + c] = tableBits[stored];
      // an Int16Array keeps the low 16 bits: the code
      codes[to + c] = entry;
      missing += (entry >>> 16) & 1;
      seen |= entry;
    }
  }
  return { missing, implausible: (seen & IMPLAUSIBLE) !== 0, allTenths: (seen & NOT_A_TENTH) === 0, codes };
}

function fromNumbers(raw: RawCells, values: Float32Array, width: number, height: number, southUp: boolean, unpack: (stored: number) => number, [lo, hi]: readonly [number, number]): Pass {
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  let missing = 0;
  let implausible = false;
  for (let r = 0; r < height; r++) {
    const from = (southUp ? height - 1 - r : r) * width;
    const to = r * width;
    for (let c = 0; c < width; c++) {
      const v = unpack(raw[from + c]);
      if (v !== v) {
        bits[to + c] = MISSING_BITS;
        missing++;
      } else {
        values[to + c] = v;
        if (v < lo || v > hi) implausible = true;
      }
    }
  }
  return { missing, implausible, allTenths: false, codes: null };
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
