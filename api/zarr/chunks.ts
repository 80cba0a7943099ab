// Chunk values of the Zarr view (api/zarr/view.ts): C-order little-endian arrays computed from a version's verified
// pieces, never stored. A maps chunk is one tile of one day piece (its blocks are one contiguous range); a series
// chunk is read from the series spans its days lie in (docs/format.md §7). Null: the version holds no cell of the
// chunk (answered 404, which Zarr readers take as the fill value, NaN).

import { holdsDate } from "../../format/coverage.js";
import { dateToDayNumber, dayNumberToDate } from "../../format/dates.js";
import { GRID, type Window, intersectWindows } from "../../format/grid.js";
import type { SeriesSpan } from "../../format/series.js";
import { sliceSpans } from "../tiers.js";
import { type GridCube, latAxis, lonAxis, timeAxis } from "../cube.js";
import { type ChunkShape, type ZarrGroup, CHUNK_SHAPES } from "./view.js";

const GRID_WINDOW: Window = [0, 0, GRID.width, GRID.height];

const isEmpty = (w: Window) => w[2] === 0 || w[3] === 0;

/** The cells of a chunk's square [col, row, side, side] inside the grid and the version's cells. */
function chunkCells(zv: GridCube, row: number, col: number, side: number): Window {
  return intersectWindows(intersectWindows([col * side, row * side, side, side], GRID_WINDOW), zv.view.index.coverage.windowAny);
}

/** Copies a row-major `area` of cells into a chunk of `side` x `side` cells whose first cell is (col0, row0), at day `day`. */
function placeCells(out: Float32Array, cells: Float32Array, area: Window, col0: number, row0: number, side: number, day: number): void {
  const [ac, ar, aw, ah] = area;
  for (let r = 0; r < ah; r++) {
    const at = day * side * side + (ar + r - row0) * side + (ac - col0);
    out.set(cells.subarray(r * aw, (r + 1) * aw), at);
  }
}

/**
 * The buffers of maps chunks already sent, for the next ones (at most 16, 4 MB): a fresh 256 kB a chunk, freed by the
 * collector once its answer was sent, cost a mark-compact every few dozen chunks (docs/performance-history.md "the maps chunk's memory").
 */
const MAPS_BYTES = CHUNK_SHAPES.maps.side * CHUNK_SHAPES.maps.side * 4;
const sentMapsBuffers: ArrayBuffer[] = [];

/** Gives a maps chunk's memory back once nothing reads it (its answer sent, and not kept). */
export function recycleMapsChunk(bytes: Uint8Array): void {
  const buffer = bytes.buffer as ArrayBuffer;
  if (buffer.byteLength === MAPS_BYTES && sentMapsBuffers.length < 16 && !sentMapsBuffers.includes(buffer)) sentMapsBuffers.push(buffer);
}

/** A maps chunk: the cells of tile (row, col) on date index `t`, NaN where the day holds none. */
async function readMapsChunk(zv: GridCube, t: number, row: number, col: number): Promise<Float32Array | null> {
  const side = CHUNK_SHAPES.maps.side;
  const date = dayNumberToDate(zv.firstDay + t);
  const cells = chunkCells(zv, row, col, side);
  if (isEmpty(cells) || !holdsDate(zv.view.index.coverage, date)) return null;
  const day = await zv.view.findDay(date);
  const area = day ? intersectWindows(cells, day.window) : cells;
  if (!day || isEmpty(area)) return null;
  // a whole tile's cells overwrite every value (of a buffer used before too): no pass of NaN over its 256 kB first
  const out = new Float32Array(sentMapsBuffers.pop() ?? new ArrayBuffer(MAPS_BYTES));
  if (area[2] !== side || area[3] !== side) out.fill(NaN);
  // straight into the chunk, a row every `side` cells: no array of the area's own, no copy; a whole tile's blocks read once
  await zv.view.readCells(day, area, { out, at: (area[1] - row * side) * side + (area[0] - col * side), stride: side }, "once");
  return out;
}

/** Fills a series chunk from the spans over its days; false when none of them holds a cell of it. */
async function fillFromSpans(zv: GridCube, spans: SeriesSpan[], out: Float32Array, cells: Window, d0: number, d1: number, shape: ChunkShape, row: number, col: number): Promise<boolean> {
  const reads = sliceSpans(spans, d0, d1).flatMap(({ span, from, to }) => {
    const area = intersectWindows(cells, span.window);
    if (isEmpty(area)) return [];
    const at = dateToDayNumber(span.first) + from - d0;
    return [zv.view.readSeries(span, area, from, to).then((days) => ({ days, area, at }))];
  });
  for (const { days, area, at } of await Promise.all(reads)) {
    days.forEach((dayCells, i) => placeCells(out, dayCells, area, col * shape.side, row * shape.side, shape.side, at + i));
  }
  return reads.length > 0;
}

/** A series chunk: `shape.days` days from date index t x days, by the cells of square (row, col); NaN where not held. */
export async function readSeriesChunk(zv: GridCube, shape: ChunkShape, t: number, row: number, col: number): Promise<Float32Array | null> {
  const cells = chunkCells(zv, row, col, shape.side);
  const d0 = zv.firstDay + t * shape.days;
  const d1 = Math.min(d0 + shape.days, zv.firstDay + zv.days);
  if (isEmpty(cells)) return null;
  const out = new Float32Array(shape.days * shape.side * shape.side).fill(NaN);
  return (await fillFromSpans(zv, zv.view.index.series, out, cells, d0, d1, shape, row, col)) ? out : null;
}

/** The values of chunk `index` of array `name` of a group, as its bytes; null when the version holds none of them. */
export async function readChunkBytes(zv: GridCube, group: ZarrGroup, name: string, index: number[]): Promise<Uint8Array | null> {
  const bytes = (values: Float32Array | Float64Array | Int32Array | null) => (values ? new Uint8Array(values.buffer, values.byteOffset, values.byteLength) : null);
  if (name === "time") return bytes(timeAxis(zv));
  if (name === "lat") return bytes(latAxis());
  if (name === "lon") return bytes(lonAxis());
  if (name === "crs") return bytes(new Int32Array(1));
  if (name !== zv.variable.name) return null;
  const [t, row, col] = index;
  return bytes(group === "maps" ? await readMapsChunk(zv, t, row, col) : await readSeriesChunk(zv, CHUNK_SHAPES.series, t, row, col));
}
