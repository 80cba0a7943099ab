// The SILO 0.05 degree grid and its fixed 256-cell tile lattice: integer arithmetic shared by pipeline and server,
// and the one rule from a longitude and latitude to the cell that holds it (lonLatToCell).
//
// All coordinates come from integer cell indices in thousandths of a degree, then one division and a
// 9-decimal rounding (docs/contract.md §2, §6.1); nothing accumulates floating point, so 142.325 stays 142.325.

export const GRID = {
  crs: "EPSG:4326",
  width: 841, // global columns 0..840
  height: 681, // global rows 0..680
  cellMilliDeg: 50,
  westEdgeMilliDeg: 111975, // west edge of column 0
  northEdgeMilliDeg: -9975, // north edge of row 0
} as const;

export const CELL_SIZE_DEG = GRID.cellMilliDeg / 1000;

/** The grid's CRS, EPSG:4326, as the WKT 1 text GDAL and CF's `crs_wkt` read (every file and view that names it). */
export const WGS84_WKT =
  'GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563,AUTHORITY["EPSG","7030"]],AUTHORITY["EPSG","6326"]],' +
  'PRIMEM["Greenwich",0,AUTHORITY["EPSG","8901"]],UNIT["degree",0.0174532925199433,AUTHORITY["EPSG","9122"]],' +
  'AXIS["Latitude",NORTH],AXIS["Longitude",EAST],AUTHORITY["EPSG","4326"]]';
export const TILE_SIDE = 256;

/** A rectangle of global cells: [col, row, width, height]. */
export type Window = [number, number, number, number];

export function round9(x: number): number {
  const r = Math.round(x * 1e9) / 1e9;
  return Object.is(r, -0) ? 0 : r;
}

export function colToEdgeLon(col: number): number {
  return round9((GRID.westEdgeMilliDeg + GRID.cellMilliDeg * col) / 1000);
}
export function rowToEdgeLat(row: number): number {
  return round9((GRID.northEdgeMilliDeg - GRID.cellMilliDeg * row) / 1000);
}
export function colToLon(col: number): number {
  return round9((GRID.westEdgeMilliDeg + GRID.cellMilliDeg * col + GRID.cellMilliDeg / 2) / 1000);
}
export function rowToLat(row: number): number {
  return round9((GRID.northEdgeMilliDeg - GRID.cellMilliDeg * row - GRID.cellMilliDeg / 2) / 1000);
}

/** A degree in nano-degrees: points are placed in integers of the contract's ninth decimal (docs/contract.md §2). */
const NANO_PER_DEG = 1e9;
const NANO_PER_MILLI = 1e6;
const CELL_NANO = GRID.cellMilliDeg * NANO_PER_MILLI;

/**
 * The SILO cell whose area holds a point: the one rule from a longitude and latitude to a cell (docs/contract.md §8.2,
 * docs/contract.md §8.2), for the series route, the mirror client, the explorer's click and the Zarr view's docs. On an
 * edge between two cells, the one to the east or north, as SILO rounds a point to its grid; on the grid's outer edge,
 * the cell inside it; null outside the grid. In integer nano-degrees: floating division lands on the wrong side of an
 * edge ((142.325 - 111.975) / 0.05 is 606.9999999999999), and a point given with nine decimals is exact there.
 */
export function lonLatToCell(lon: number, lat: number): { col: number; row: number } | null {
  if (!Number.isFinite(lon) || !Number.isFinite(lat)) return null;
  const east = Math.round(lon * NANO_PER_DEG) - GRID.westEdgeMilliDeg * NANO_PER_MILLI; // east of the grid's west edge
  const south = GRID.northEdgeMilliDeg * NANO_PER_MILLI - Math.round(lat * NANO_PER_DEG); // south of its north edge
  if (east < 0 || east > GRID.width * CELL_NANO || south < 0 || south > GRID.height * CELL_NANO) return null;
  // whole cells to the point (exact: both are integers far below 2^53); on an edge east is the cell that starts
  // there, north the cell that ends there
  const col = (east - (east % CELL_NANO)) / CELL_NANO;
  const row = (south - (south % CELL_NANO)) / CELL_NANO - (south % CELL_NANO === 0 ? 1 : 0);
  return { col: Math.min(col, GRID.width - 1), row: Math.max(row, 0) };
}

/**
 * The point at fractions `x` (eastward) and `y` (southward) of the whole grid's extent from its north-west corner,
 * to nine decimals: where a pointer on a picture of the grid (the explorer's map) is, so a pointer on the line between
 * two cells' pixels is exactly on their edge.
 */
export function gridFractionToLonLat(x: number, y: number): [number, number] {
  return [round9((GRID.westEdgeMilliDeg + x * GRID.width * GRID.cellMilliDeg) / 1000), round9((GRID.northEdgeMilliDeg - y * GRID.height * GRID.cellMilliDeg) / 1000)];
}

/** Affine [a,b,c,d,e,f] of a block whose top-left cell is (col, row); the contract's order (docs/contract.md §1.2). */
export function windowTransform(col: number, row: number): [number, number, number, number, number, number] {
  return [CELL_SIZE_DEG, 0, colToEdgeLon(col), 0, -CELL_SIZE_DEG, rowToEdgeLat(row)];
}

/** [west, south, east, north] edges of a window. */
export function windowBbox([col, row, width, height]: Window): [number, number, number, number] {
  return [colToEdgeLon(col), rowToEdgeLat(row + height), colToEdgeLon(col + width), rowToEdgeLat(row)];
}

export function isInsideGrid([col, row, width, height]: Window): boolean {
  return col >= 0 && row >= 0 && width > 0 && height > 0 && col + width <= GRID.width && row + height <= GRID.height;
}

export function containsWindow(outer: Window, inner: Window): boolean {
  return (
    inner[0] >= outer[0] &&
    inner[1] >= outer[1] &&
    inner[0] + inner[2] <= outer[0] + outer[2] &&
    inner[1] + inner[3] <= outer[1] + outer[3]
  );
}

const EMPTY_WINDOW: Window = [0, 0, 0, 0];

export function intersectWindows(a: Window, b: Window): Window {
  const c0 = Math.max(a[0], b[0]);
  const r0 = Math.max(a[1], b[1]);
  const c1 = Math.min(a[0] + a[2], b[0] + b[2]);
  const r1 = Math.min(a[1] + a[3], b[1] + b[3]);
  return c1 > c0 && r1 > r0 ? [c0, r0, c1 - c0, r1 - r0] : EMPTY_WINDOW;
}

export function unionWindows(a: Window, b: Window): Window {
  if (a[2] === 0 || a[3] === 0) return b;
  if (b[2] === 0 || b[3] === 0) return a;
  const c0 = Math.min(a[0], b[0]);
  const r0 = Math.min(a[1], b[1]);
  const c1 = Math.max(a[0] + a[2], b[0] + b[2]);
  const r1 = Math.max(a[1] + a[3], b[1] + b[3]);
  return [c0, r0, c1 - c0, r1 - r0];
}

/** The part of a window that falls in one lattice tile (docs/glossary.md: tile part). */
export interface TilePart {
  /** lattice position: tile row and column in units of TILE_SIDE */
  tileRow: number;
  tileCol: number;
  /** the cells of this tile that the window holds */
  window: Window;
}

/** Along one axis: the first and last lattice tile that cells [start, start + count) touch. */
function tileRange(start: number, count: number): [number, number] {
  return [Math.floor(start / TILE_SIDE), Math.floor((start + count - 1) / TILE_SIDE)];
}

/**
 * Along one axis: the cells of lattice tile `t` that a window's cells [start, start + count) hold, as [first, count].
 * A published tile is its lattice square clipped to the day's window: the one clipping rule of tiles.
 */
export function clipTile(t: number, start: number, count: number): [number, number] {
  const first = Math.max(start, t * TILE_SIDE);
  return [first, Math.min(start + count, (t + 1) * TILE_SIDE) - first];
}

/** The part of a window in lattice tile (tileRow, tileCol), or null when the window holds none of its cells. */
export function findTile(window: Window, tileRow: number, tileCol: number): TilePart | null {
  const [c0, w] = clipTile(tileCol, window[0], window[2]);
  const [r0, h] = clipTile(tileRow, window[1], window[3]);
  return w > 0 && h > 0 ? { tileRow, tileCol, window: [c0, r0, w, h] } : null;
}

/** The parts of a window in each lattice tile it touches, in row-major lattice order (the order of their ids). */
export function windowToTiles(window: Window): TilePart[] {
  const [tr0, tr1] = tileRange(window[1], window[3]);
  const [tc0, tc1] = tileRange(window[0], window[2]);
  const parts: TilePart[] = [];
  for (let tr = tr0; tr <= tr1; tr++) for (let tc = tc0; tc <= tc1; tc++) parts.push(findTile(window, tr, tc)!);
  return parts;
}

/** How many lattice tiles a day window has; also what the layers list enumerates for that date. */
export function countTiles(window: Window): number {
  const [tr0, tr1] = tileRange(window[1], window[3]);
  const [tc0, tc1] = tileRange(window[0], window[2]);
  return (tr1 - tr0 + 1) * (tc1 - tc0 + 1);
}

/** Tile ids sort in (date, lattice row, lattice column) order: compact date, then single-digit lattice indices. */
export function tileId(date: string, tileRow: number, tileCol: number): string {
  // slices, not replaceAll: a query answer names a tile on every row
  return `${date.slice(0, 4)}${date.slice(5, 7)}${date.slice(8, 10)}-r${tileRow}-c${tileCol}`;
}

const TILE_ID = /^(\d{4})(\d{2})(\d{2})-r(\d)-c(\d)$/;
export function parseTileId(id: string): { date: string; tileRow: number; tileCol: number } | null {
  const m = TILE_ID.exec(id);
  return m ? { date: `${m[1]}-${m[2]}-${m[3]}`, tileRow: Number(m[4]), tileCol: Number(m[5]) } : null;
}

/**
 * Global cells whose rounded centre lies in the box, west/south inclusive and east/north exclusive
 * (docs/contract.md §3.2). Returns the window of selected cells, or null when no centre of the grid falls inside.
 */
export function bboxToWindow([west, south, east, north]: [number, number, number, number]): Window | null {
  // Start from a float estimate, then step by the exact rounded centres so edges follow the stated rule.
  let c0 = Math.max(0, Math.ceil((west * 1000 - GRID.westEdgeMilliDeg) / GRID.cellMilliDeg - 0.5) - 1);
  while (c0 < GRID.width && colToLon(c0) < west) c0++;
  let c1 = Math.min(GRID.width - 1, Math.floor((east * 1000 - GRID.westEdgeMilliDeg) / GRID.cellMilliDeg) + 1);
  while (c1 >= 0 && colToLon(c1) >= east) c1--;
  // rows run north to south: latitude falls as row grows
  let r0 = Math.max(0, Math.floor((GRID.northEdgeMilliDeg - north * 1000) / GRID.cellMilliDeg - 0.5) - 1);
  while (r0 < GRID.height && rowToLat(r0) >= north) r0++;
  let r1 = Math.min(GRID.height - 1, Math.ceil((GRID.northEdgeMilliDeg - south * 1000) / GRID.cellMilliDeg) + 1);
  while (r1 >= 0 && rowToLat(r1) < south) r1--;
  if (c0 > c1 || r0 > r1) return null;
  return [c0, r0, c1 - c0 + 1, r1 - r0 + 1];
}
