// The bytes of every data answer: query rows as JSON and CSV, tiles, tile metadata and samples.
//
// Rows are written straight from the cells: every repeated piece of text (a value, a coordinate, a tile id
// with its row, the fixed keys) is made once and concatenated, never a per-row object. Numbers follow
// docs/contract.md §2 (shortest float32 decimals, coordinates rounded to 9 decimals); CSV follows docs/contract.md §3.

import { QUERY_UNIT, QUERY_VARIABLE } from "../format/records.js";
import { GRID, TILE_SIDE, type TilePart, clipTile, type Window, colToLon, rowToLat, tileId, windowBbox, windowTransform } from "../format/grid.js";
import { valueBytes, valueWords } from "../format/number-text.js";

export const CSV_HEADER = "date,longitude,latitude,variable,value,unit,tile,row,col";

const encoder = new TextEncoder();

/** The working buffer answers are written in (synchronously, one at a time), and whether a sink holds it. */
let scratch = new Uint8Array(1 << 16);
let scratchInUse = false;

/**
 * UTF-8 bytes written as text arrives: short pieces gather in a string and are encoded into one growing working
 * buffer every 16 K characters, so a 1 MB answer is encoded once, in cache-sized steps, never as one huge rope.
 * The working buffer is shared by every answer (a sink lives from its making to finish(), with no await between;
 * one made while another holds it gets its own), and finish() copies out exactly the bytes written: one
 * allocation an answer, whatever its size.
 */
export class ByteSink {
  private buffer: Uint8Array;
  private length = 0;
  private pending = "";
  private readonly shared: boolean;

  constructor() {
    this.shared = !scratchInUse;
    scratchInUse = true;
    this.buffer = this.shared ? scratch : new Uint8Array(1 << 16);
  }

  text(piece: string): void {
    this.pending += piece;
    if (this.pending.length > 16384) this.flush();
  }

  /** Bytes made once and written again and again (the parts of rows): no string, no garbage per row. */
  put(part: Uint8Array): void {
    if (this.pending !== "") this.flush();
    const n = part.length;
    if (this.length + n > this.buffer.length) this.grow(this.length + n);
    const buffer = this.buffer;
    if (n <= 24) for (let i = 0, at = this.length; i < n; i++, at++) buffer[at] = part[i];
    else buffer.set(part, this.length);
    this.length += n;
  }

  private grow(need: number): void {
    const grown = new Uint8Array(Math.max(need, this.buffer.length * 2));
    grown.set(this.buffer.subarray(0, this.length));
    this.buffer = grown;
    if (this.shared) scratch = grown;
  }

  /** Writes up to `most` bytes straight into the buffer: `write` puts them from `at` and returns where it ended. */
  write(most: number, write: (buffer: Uint8Array, at: number) => number): void {
    this.flush();
    if (this.length + most > this.buffer.length) this.grow(this.length + most);
    this.length = write(this.buffer, this.length);
  }

  /** Where the next byte will go (after flushing what is pending). */
  get offset(): number {
    this.flush();
    return this.length;
  }

  private flush(): void {
    if (this.pending === "") return;
    const need = this.length + this.pending.length * 3;
    if (need > this.buffer.length) this.grow(need);
    this.length += encoder.encodeInto(this.pending, this.buffer.subarray(this.length)).written;
    this.pending = "";
  }

  /** The bytes written, in their own exact buffer; the sink is done (its working buffer serves the next). */
  finish(): Uint8Array {
    this.flush();
    const bytes = this.buffer.slice(0, this.length);
    this.buffer = new Uint8Array(0);
    if (this.shared) scratchInUse = false;
    return bytes;
  }
}

/** Overwrites ASCII text at `at` of `bytes` (a placeholder of the same length). */
export function patchAscii(bytes: Uint8Array, at: number, ascii: string): void {
  for (let i = 0; i < ascii.length; i++) bytes[at + i] = ascii.charCodeAt(i);
}

/** The bytes of ASCII text (every row part is ASCII: digits, dates, ids and fixed keys). */
function ascii(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

/** A value in a JSON answer (null when missing), and as a CSV field (quoted; empty when missing). */
const JSON_VALUE = valueBytes("", "", "null");
const CSV_VALUE = valueBytes('"', '"', "");
/** A tile's tenths codes as JSON values each after its comma: the same text as JSON_VALUE's. */
const JSON_WORDS = valueWords(",", "null");

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
    const headLon = p.lon.map((lon) => arena.part(csv ? `"${day.date}","${lon}","` : `{"date":"${day.date}","longitude":${lon}`));
    for (let r = 0; r < h; r++) {
      const tails: Uint8Array[] = [];
      for (let c = 0; c < w; c++) {
        const tc = p.cols.tile[c];
        let tail = tails[tc];
        if (tail === undefined) {
          const tile = tileId(day.date, p.rows.tile[r], tc);
          tail = tails[tc] = arena.part(csv ? `,"${QUERY_UNIT}","${tile}","${p.rows.local[r]}` : `,"unit":"${QUERY_UNIT}","tile":"${tile}","row":${p.rows.local[r]}`);
        }
        if (!csv && !first) out.put(comma);
        first = false;
        out.put(headLon[c]);
        out.put(mid[r]);
        out.put(values.of(cells[r * w + c]));
        out.put(tail);
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

/** What a raster version's cells are: its one variable and unit (its index root says). */
export interface CellMeaning {
  variable: string;
  unit: string;
}

/** Tile metadata as the layers list has it (docs/contract.md §1.2), fields in the contract's order. */
export function describeTile(meaning: CellMeaning, date: string, part: TilePart): Record<string, unknown> {
  const [col, row, width, height] = part.window;
  return {
    id: tileId(date, part.tileRow, part.tileCol),
    variable: meaning.variable,
    unit: meaning.unit,
    observed_on: date,
    width,
    height,
    crs: GRID.crs,
    transform: windowTransform(col, row),
    bbox: windowBbox(part.window),
  };
}

/** GET /api/v1/layers/{id}?tile= (docs/contract.md §4.3): the tile with its cells, row-major. */
export function writeTile(versionId: string, meaning: CellMeaning, date: string, part: TilePart, cells: Float32Array | Int16Array): Uint8Array {
  const meta = JSON.stringify({ ...describeTile(meaning, date, part), dataset_version_id: versionId, source_window: part.window });
  const out = new ByteSink();
  out.text(`{"datasetVersion":${JSON.stringify(versionId)},"tile":${meta.slice(0, -1)},"cells":[`);
  if (cells instanceof Int16Array) out.write(cells.length * 8 + 8, (buffer, at) => writeCodesJson(cells, buffer, at));
  else {
    const comma = ascii(",");
    for (let i = 0; i < cells.length; i++) {
      if (i > 0) out.put(comma);
      out.put(JSON_VALUE.of(cells[i]));
    }
  }
  out.text("]}}");
  return out.finish();
}

/** Tenths codes as JSON values separated by commas, from `at` (the byte before it is "["); returns where they end. */
function writeCodesJson(codes: Int16Array, buffer: Uint8Array, at: number): number {
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  // every value is written with its comma; the first one's lands on the "[" before it, put back at the end
  const open = buffer[at - 1];
  const p = JSON_WORDS.putCodes(view, at - 1, codes);
  buffer[at - 1] = open;
  return codes.length === 0 ? at : p;
}

/**
 * A page of a list (docs/contract.md §4.3): its fields, already JSON text, in order, then `nextCursor`. The one
 * envelope of the catalog, observation and layer pages.
 */
export function writePage(fields: Record<string, string>, nextCursor: string | null): string {
  const parts = Object.entries(fields).map(([name, json]) => `${JSON.stringify(name)}:${json}`);
  return `{${parts.join(",")},"nextCursor":${JSON.stringify(nextCursor)}}`;
}
