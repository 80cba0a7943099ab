// The rows of a query answer as JSON and CSV (docs/contract.md §3, §3.5).
//
// Rows are written straight from the cells: every repeated piece of text (a value, a coordinate, a tile id
// with its row, the fixed keys) is made once and concatenated, never a per-row object. Numbers follow
// docs/contract.md §2 (shortest float32 decimals, coordinates rounded to 9 decimals); CSV follows docs/contract.md §3.

import { QUERY_UNIT, QUERY_VARIABLE } from "../../format/records.js";
import { TILE_SIDE, clipTile, type Window, colToLon, rowToLat, tileId } from "../../format/grid.js";
import { valueBytes } from "../../format/number-text.js";
import type { ByteSink } from "../bytes.js";

export const CSV_HEADER = "date,longitude,latitude,variable,value,unit,tile,row,col";

/** A value in a JSON answer (null when missing), and as a CSV field (quoted; empty when missing). */
const JSON_VALUE = valueBytes("", "", "null");
const CSV_VALUE = valueBytes('"', '"', "");

/** One date's cells of a selection: the rows of the answer for that date. */
export interface DayCells {
  date: string;
  /** the day's window: tile-local indices count from its clipped tiles */
  window: Window;
  /** row-major over the selection window */
  cells: Float32Array;
}

/** For each column (or row) of the selection on one date: its lattice tile index and its index inside that tile. */
function latticeOf(start: number, count: number, dayStart: number, dayCount: number): { tile: number[]; local: number[] } {
  const tile: number[] = [];
  const local: number[] = [];
  for (let i = 0; i < count; i++) {
    const g = start + i;
    const t = Math.floor(g / TILE_SIDE);
    tile.push(t);
    // a tile's cells are clipped to the date's window: its local origin is where the clipped tile starts
    local.push(g - clipTile(t, dayStart, dayCount)[0]);
  }
  return { tile, local };
}

interface RowParts {
  /** per selected column: its longitude text */
  lon: string[];
  /** per selected row: its latitude text */
  lat: string[];
  cols: { tile: number[]; local: number[] };
  rows: { tile: number[]; local: number[] };
}

/**
 * The text pieces of one date's rows. Only the day window's origin changes them (tile-local indices), so
 * the dates of one answer, which almost always share it, share one set.
 */
function rowPartsFor(window: Window): (day: DayCells) => RowParts {
  const [c0, r0, w, h] = window;
  const lon = Array.from({ length: w }, (_, i) => String(colToLon(c0 + i)));
  const lat = Array.from({ length: h }, (_, i) => String(rowToLat(r0 + i)));
  let last: { col: number; row: number; parts: RowParts } | null = null;
  return (day) => {
    const [col, row, width, height] = day.window;
    if (last?.col !== col || last.row !== row) last = { col, row, parts: { lon, lat, cols: latticeOf(c0, w, col, width), rows: latticeOf(r0, h, row, height) } };
    return last.parts;
  };
}

/**
 * The text parts of one answer's rows, written into one working buffer that every answer reuses (rows are
 * written synchronously): a part is a view, with no buffer of its own to allocate or collect.
 */
class PartArena {
  private buffer = new Uint8Array(1 << 16);
  private used = 0;

  reset(): void {
    this.used = 0;
  }

  part(text: string): Uint8Array {
    if (this.used + text.length > this.buffer.length) {
      this.buffer = new Uint8Array(Math.max(this.buffer.length * 2, text.length)); // earlier parts keep the old one
      this.used = 0;
    }
    const at = this.used;
    for (let i = 0; i < text.length; i++) this.buffer[at + i] = text.charCodeAt(i);
    this.used += text.length;
    return this.buffer.subarray(at, this.used);
  }
}

const arena = new PartArena();

/**
 * Rows as bytes, from parts made once per answer (a longitude, a latitude, a column) or per date (a date with a
 * longitude, a tile with its row) and per value (cached): a row is six copies, with no string or object made
 * for it.
 */
function writeRows(out: ByteSink, window: Window, days: DayCells[], csv: boolean): void {
  const [, , w, h] = window;
  const partsOf = rowPartsFor(window);
  const values = csv ? CSV_VALUE : JSON_VALUE;
  arena.reset();
  const comma = arena.part(",");
  const latParts = (p: RowParts) => p.lat.map((lat) => arena.part(csv ? `${lat}","${QUERY_VARIABLE}",` : `,"latitude":${lat},"variable":"${QUERY_VARIABLE}","value":`));
  let mid: Uint8Array[] = [];
  let colEnd: Uint8Array[] = [];
  let partsSeen: RowParts | null = null;
  let first = true;
  for (const day of days) {
    const { cells } = day;
    const p = partsOf(day);
    if (p !== partsSeen) {
      partsSeen = p;
      mid = latParts(p);
      colEnd = p.cols.local.map((c) => arena.part(csv ? `","${c}"\r\n` : `,"col":${c}}`));
    }
    const headLon = p.lon.map((lon) => (csv ? `"${day.date}","${lon}","` : `{"date":"${day.date}","longitude":${lon}`));
    // a date's head serves each of its rows, a tail each cell of its tile in a row: made into bytes once when used
    // again, else written as text (a point's rows share nothing, and the arena would copy each part once more)
    const headParts = h > 1 ? headLon.map((text) => arena.part(text)) : null;
    for (let r = 0; r < h; r++) {
      const tails: (Uint8Array | string)[] = [];
      for (let c = 0; c < w; c++) {
        const tc = p.cols.tile[c];
        let tail = tails[tc];
        if (tail === undefined) {
          const tile = tileId(day.date, p.rows.tile[r], tc);
          const text = csv ? `,"${QUERY_UNIT}","${tile}","${p.rows.local[r]}` : `,"unit":"${QUERY_UNIT}","tile":"${tile}","row":${p.rows.local[r]}`;
          tail = tails[tc] = w > 1 ? arena.part(text) : text;
        }
        if (!csv && !first) out.put(comma);
        first = false;
        if (headParts) out.put(headParts[c]);
        else out.text(headLon[c]);
        out.put(mid[r]);
        out.put(values.of(cells[r * w + c]));
        if (typeof tail === "string") out.text(tail);
        else out.put(tail);
        out.put(colEnd[c]);
      }
    }
  }
}

/** The `data` array of a JSON query answer (docs/contract.md §3.5): fields in the contract's order. */
export function writeJsonRows(out: ByteSink, window: Window, days: DayCells[]): void {
  out.text("[");
  writeRows(out, window, days, false);
  out.text("]");
}

/**
 * CSV rows (docs/contract.md §3): unquoted header, every non-null field double-quoted, a null value an empty unquoted
 * field, CRLF after every line including the last. No field of ours can hold a quote, so none is doubled.
 */
export function writeCsvRows(out: ByteSink, window: Window, days: DayCells[]): void {
  out.text(`${CSV_HEADER}\r\n`);
  writeRows(out, window, days, true);
}
