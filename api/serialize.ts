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

function rowParts(window: Window, day: DayEntry): RowParts {
  const [c0, r0, w, h] = window;
  return {
    lon: Array.from({ length: w }, (_, i) => String(colToLon(c0 + i))),
    lat: Array.from({ length: h }, (_, i) => String(rowToLat(r0 + i))),
    cols: latticeOf(c0, w, day.window[0]),
    rows: latticeOf(r0, h, day.window[1]),
  };
}

/** The `data` array of a JSON query answer (interface.md 2.8): fields in the contract's order. */
export function writeJsonRows(window: Window, days: DayCells[]): string {
  const [, , w, h] = window;
  let out = "[";
  let first = true;
  for (const { day, cells } of days) {
    const p = rowParts(window, day);
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
        out += (first ? "" : ",") + head + p.lon[c] + mid + cellToJson(cells[r * w + c]) + tail + colEnd[c];
        first = false;
      }
    }
  }
  return `${out}]`;
}

/**
 * CSV rows (decisions.md 3): unquoted header, every non-null field double-quoted, a null value an empty unquoted
 * field, CRLF after every line including the last. No field of ours can hold a quote, so none is doubled.
 */
export function writeCsvRows(window: Window, days: DayCells[]): string {
  const [, , w, h] = window;
  let out = `${CSV_HEADER}\r\n`;
  for (const { day, cells } of days) {
    const p = rowParts(window, day);
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
        out += head + lon[c] + mid + (v !== v ? "" : `"${cellToJson(v)}"`) + tail + colEnd[c];
      }
    }
  }
  return out;
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
