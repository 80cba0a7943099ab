// The bytes of every data answer: query rows as JSON and CSV, tiles, tile metadata and samples.
//
// Rows are written straight from the cells: every repeated piece of text (a value, a coordinate, a tile id
// with its row, the fixed keys) is made once and concatenated, never a per-row object. Numbers follow
// decisions.md 2 (shortest float32 decimals, coordinates rounded to 9 decimals); CSV follows decisions.md 3.

import { QUERY_UNIT, QUERY_VARIABLE } from "../schemas/contract.js";
import { GRID, TILE_SIDE, type TileSlot, type Window, colToLon, rowToLat, tileId, windowBbox, windowTransform } from "../schemas/grid.js";
import type { DayEntry } from "../schemas/layout.js";
import { float32ToShortest } from "../schemas/numbers.js";

export const CSV_HEADER = "date,longitude,latitude,variable,value,unit,tile,row,col";

const encoder = new TextEncoder();

/**
 * UTF-8 bytes written as text arrives: short pieces gather in a string and are encoded into one growing
 * buffer every 16 K characters, so a 1 MB answer is encoded once, in cache-sized runs, never as one huge rope.
 */
export class ByteSink {
  private buffer: Uint8Array;
  private length = 0;
  private pending = "";

  constructor(capacity = 1 << 16) {
    this.buffer = new Uint8Array(capacity);
  }

  text(piece: string): void {
    this.pending += piece;
    if (this.pending.length > 16384) this.flush();
  }

  /** Where the next byte will go (after flushing what is pending). */
  get offset(): number {
    this.flush();
    return this.length;
  }

  private flush(): void {
    if (this.pending === "") return;
    const need = this.length + this.pending.length * 3;
    if (need > this.buffer.length) {
      const grown = new Uint8Array(Math.max(need, this.buffer.length * 2));
      grown.set(this.buffer.subarray(0, this.length));
      this.buffer = grown;
    }
    this.length += encoder.encodeInto(this.pending, this.buffer.subarray(this.length)).written;
    this.pending = "";
  }

  /** Overwrites ASCII text already written at `at` (a placeholder of the same length). */
  patch(at: number, ascii: string): void {
    this.flush();
    for (let i = 0; i < ascii.length; i++) this.buffer[at + i] = ascii.charCodeAt(i);
  }

  /** The bytes written; copied to their own buffer when the spare room would double what an answer holds. */
  bytes(): Uint8Array {
    this.flush();
    const written = this.buffer.subarray(0, this.length);
    return this.buffer.length > 2 * this.length + 4096 ? written.slice() : written;
  }
}

const valueText = new Map<number, string>();

/** JSON text of a float32 cell: its shortest decimal, or null for missing. */
export function cellToJson(v: number): string {
  if (v !== v) return "null";
  let text = valueText.get(v);
  if (text === undefined) {
    text = String(float32ToShortest(v));
    // SILO values cluster on one decimal, so this stays a few thousand entries
    if (valueText.size < 1 << 16) valueText.set(v, text);
  }
  return text;
}

/** One date's cells of a selection: the rows of the answer for that date. */
export interface DayCells {
  day: DayEntry;
  /** row-major over the selection window */
  cells: Float32Array;
}

/** For each column (or row) of the selection on one date: its lattice tile index and its index inside that tile. */
function latticeOf(start: number, count: number, dayStart: number): { tile: number[]; local: number[] } {
  const tile: number[] = [];
  const local: number[] = [];
  for (let i = 0; i < count; i++) {
    const g = start + i;
    const t = Math.floor(g / TILE_SIDE);
    tile.push(t);
    // a tile's cells are clipped to the date's window, so its local origin is the later of the two
    local.push(g - Math.max(dayStart, t * TILE_SIDE));
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
function rowPartsFor(window: Window): (day: DayEntry) => RowParts {
  const [c0, r0, w, h] = window;
  const lon = Array.from({ length: w }, (_, i) => String(colToLon(c0 + i)));
  const lat = Array.from({ length: h }, (_, i) => String(rowToLat(r0 + i)));
  let last: { col: number; row: number; parts: RowParts } | null = null;
  return (day) => {
    const [col, row] = day.window;
    if (last?.col !== col || last.row !== row) last = { col, row, parts: { lon, lat, cols: latticeOf(c0, w, col), rows: latticeOf(r0, h, row) } };
    return last.parts;
  };
}

/** The `data` array of a JSON query answer (interface.md 2.8): fields in the contract's order. */
export function writeJsonRows(out: ByteSink, window: Window, days: DayCells[]): void {
  const [, , w, h] = window;
  out.text("[");
  let first = true;
  const partsOf = rowPartsFor(window);
  for (const { day, cells } of days) {
    const p = partsOf(day);
    const head = `{"date":"${day.date}","longitude":`;
    const colEnd = p.cols.local.map((c) => `,"col":${c}}`);
    for (let r = 0; r < h; r++) {
      const mid = `,"latitude":${p.lat[r]},"variable":"${QUERY_VARIABLE}","value":`;
      const tails = new Map<number, string>();
      for (let c = 0; c < w; c++) {
        const tc = p.cols.tile[c];
        let tail = tails.get(tc);
        if (tail === undefined) {
          tail = `,"unit":"${QUERY_UNIT}","tile":"${tileId(day.date, p.rows.tile[r], tc)}","row":${p.rows.local[r]}`;
          tails.set(tc, tail);
        }
        out.text((first ? "" : ",") + head + p.lon[c] + mid + cellToJson(cells[r * w + c]) + tail + colEnd[c]);
        first = false;
      }
    }
  }
  out.text("]");
}

/**
 * CSV rows (decisions.md 3): unquoted header, every non-null field double-quoted, a null value an empty unquoted
 * field, CRLF after every line including the last. No field of ours can hold a quote, so none is doubled.
 */
export function writeCsvRows(out: ByteSink, window: Window, days: DayCells[]): void {
  const [, , w, h] = window;
  out.text(`${CSV_HEADER}\r\n`);
  const partsOf = rowPartsFor(window);
  for (const { day, cells } of days) {
    const p = partsOf(day);
    const head = `"${day.date}","`;
    const lon = p.lon.map((x) => `${x}","`);
    const colEnd = p.cols.local.map((c) => `","${c}"\r\n`);
    for (let r = 0; r < h; r++) {
      const mid = `${p.lat[r]}","${QUERY_VARIABLE}",`;
      const tails = new Map<number, string>();
      for (let c = 0; c < w; c++) {
        const tc = p.cols.tile[c];
        let tail = tails.get(tc);
        if (tail === undefined) {
          tail = `,"${QUERY_UNIT}","${tileId(day.date, p.rows.tile[r], tc)}","${p.rows.local[r]}`;
          tails.set(tc, tail);
        }
        const v = cells[r * w + c];
        out.text(head + lon[c] + mid + (v !== v ? "" : `"${cellToJson(v)}"`) + tail + colEnd[c]);
      }
    }
  }
}

/** Tile metadata as the layers list has it (interface.md 2.3), fields in the contract's order. */
export function describeTile(date: string, slot: TileSlot): Record<string, unknown> {
  const [col, row, width, height] = slot.window;
  return {
    id: tileId(date, slot.tileRow, slot.tileCol),
    variable: QUERY_VARIABLE,
    unit: QUERY_UNIT,
    observed_on: date,
    width,
    height,
    crs: GRID.crs,
    transform: windowTransform(col, row),
    bbox: windowBbox(slot.window),
  };
}

/** GET /api/v1/layers/{id}?tile= (interface.md 4.8): the tile with its cells, row-major. */
export function writeTile(versionId: string, date: string, slot: TileSlot, cells: Float32Array): string {
  const meta = JSON.stringify({ ...describeTile(date, slot), dataset_version_id: versionId, source_window: slot.window });
  const values = new Array<string>(cells.length);
  for (let i = 0; i < cells.length; i++) values[i] = cellToJson(cells[i]);
  return `{"datasetVersion":${JSON.stringify(versionId)},"tile":${meta.slice(0, -1)},"cells":[${values.join(",")}]}}`;
}
