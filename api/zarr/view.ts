// The Zarr v2 view of a raster version (docs/contract.md §8.3, docs/clients.md "Zarr"): its keys and their metadata. Two
// groups per version, `maps` (one day by one 256 x 256 tile) and `series` (many days by a few cells), over the
// whole SILO grid and the version's first..last dates. Nothing is stored for it: every key is computed from the
// version's verified index and pieces (chunk bytes: api/zarr/chunks.ts).

import { GRID, TILE_SIDE, WGS84_WKT } from "../../format/grid.js";
import { COORDINATE_CF_ATTRIBUTES, variableCfAttributes } from "../cf.js";
import type { Variable } from "../../format/variables.js";
import type { Context } from "../context.js";
import { type GridCube, openCube } from "../cube.js";
import { HttpError } from "../errors.js";

export const ZARR_GROUPS = ["maps", "series"] as const;
export type ZarrGroup = (typeof ZARR_GROUPS)[number];

/** A chunk's extent: days along time, cells along each side (lat and lon). */
export interface ChunkShape {
  days: number;
  side: number;
}

/**
 * Chunks per group. maps: one day by one tile of the day pieces' lattice, so the full grid is 12 chunks a day.
 * series: 1,024 days by 4 x 4 cells, measured by bench/zarr.ts (docs/clients.md): a point over 30 years in 11
 * or 12 chunks, a 1-degree box over a year in 25 to 72, each about 64 kB of float32 before zlib.
 */
export const CHUNK_SHAPES: Record<ZarrGroup, ChunkShape> = {
  maps: { days: 1, side: TILE_SIDE },
  series: { days: 1024, side: 4 },
};

/** numcodecs' zlib, which GDAL 3.6, zarr-python and zarrita all read; level 1 measured by bench/zarr.ts. */
export const ZARR_COMPRESSOR = { id: "zlib", level: 1 } as const;

/** How an array's chunks are stored: numcodecs' zlib, or as they are (Zarr v2's `"compressor": null`). */
export type ZarrCompressor = typeof ZARR_COMPRESSOR | null;

/** One array of a group: shape, chunks, dtype and fill value (its .zarray), and its attributes. */
export interface ZarrArray {
  shape: number[];
  chunks: number[];
  dtype: "<f4" | "<f8" | "<i4";
  fill: number | "NaN" | null;
  attrs: Record<string, unknown>;
  compressor: ZarrCompressor;
}

export function zarrNotFound(what: string): HttpError {
  return new HttpError({ kind: "not_found", message: `${what} is not a key of this Zarr view; open /zarr/v2/<version id>/maps or /series with consolidated metadata and read the keys it lists (docs/clients.md).` });
}

/** The cube of a published demo raster version, or 404 (the Zarr view answers 404 for every unknown key). */
export const openZarrVersion = (ctx: Context, id: string): Promise<GridCube> => openCube(ctx, id, zarrNotFound);

/** CF attributes of the variable's array; `_CRS` is how GDAL before 3.9 finds the CRS (it ignores grid_mapping). */
function variableAttrs(variable: Variable): Record<string, unknown> {
  return { _ARRAY_DIMENSIONS: ["time", "lat", "lon"], ...variableCfAttributes(variable), _CRS: { url: "http://www.opengis.net/def/crs/EPSG/0/4326", wkt: WGS84_WKT } };
}

const COORDINATE_ATTRS = {
  time: { _ARRAY_DIMENSIONS: ["time"], ...COORDINATE_CF_ATTRIBUTES.time },
  lat: { _ARRAY_DIMENSIONS: ["lat"], ...COORDINATE_CF_ATTRIBUTES.lat },
  lon: { _ARRAY_DIMENSIONS: ["lon"], ...COORDINATE_CF_ATTRIBUTES.lon },
  crs: { _ARRAY_DIMENSIONS: [], ...COORDINATE_CF_ATTRIBUTES.crs },
};

/**
 * How each group's variable chunks are stored. maps: as they are (`null`), 256 kB of float32 a chunk: deflating it
 * at level 1 took most of a chunk's server time (3.4 ms a chunk, 0.04 of a static file's rate; issue 35,
 * docs/performance.md "Zarr maps chunks"), and no codec every reader decodes was cheaper (zstd, lz4 and blosc through
 * numcodecs' WebAssembly: slower than zlib here). series: zlib level 1, a chunk is 64 kB and deflates in 0.2 ms.
 */
export const VARIABLE_COMPRESSOR: Record<ZarrGroup, ZarrCompressor> = { maps: null, series: ZARR_COMPRESSOR };

/** Every array of a group, by name: the variable's (named by its API name), then the coordinates. */
export function describeArrays(zv: GridCube, group: ZarrGroup, shape = CHUNK_SHAPES[group]): Map<string, ZarrArray> {
  const { width, height } = GRID;
  const zlib = ZARR_COMPRESSOR;
  return new Map<string, ZarrArray>([
    [zv.variable.name, { shape: [zv.days, height, width], chunks: [shape.days, shape.side, shape.side], dtype: "<f4", fill: "NaN", attrs: variableAttrs(zv.variable), compressor: VARIABLE_COMPRESSOR[group] }],
    ["time", { shape: [zv.days], chunks: [zv.days], dtype: "<i4", fill: null, attrs: COORDINATE_ATTRS.time, compressor: zlib }],
    ["lat", { shape: [height], chunks: [height], dtype: "<f8", fill: "NaN", attrs: COORDINATE_ATTRS.lat, compressor: zlib }],
    ["lon", { shape: [width], chunks: [width], dtype: "<f8", fill: "NaN", attrs: COORDINATE_ATTRS.lon, compressor: zlib }],
    // a scalar, its attributes the point (CF grid mapping); its one chunk, key "0", is 0, uncompressed
    ["crs", { shape: [], chunks: [], dtype: "<i4", fill: null, attrs: COORDINATE_ATTRS.crs, compressor: null }],
  ]);
}

/** The .zarray document of an array. */
export function zarrayOf(array: ZarrArray): Record<string, unknown> {
  return { chunks: array.chunks, compressor: array.compressor, dtype: array.dtype, fill_value: array.fill, filters: null, order: "C", shape: array.shape, zarr_format: 2 };
}

/** The group's attributes: CF conventions and the version's provenance (its record says the rest). */
function groupAttrs(zv: GridCube, group: ZarrGroup): Record<string, unknown> {
  const record = zv.view.record;
  const { gaps } = zv.view.index.coverage;
  return {
    Conventions: "CF-1.8",
    title: record.title,
    source: record.attribution,
    license: record.license,
    dataset_version: record.id,
    content_sha256: record.content_sha256,
    references: `/api/v1/datasets/${record.id}`,
    chunking: group === "maps" ? "one day by one 256 x 256 tile" : `${CHUNK_SHAPES.series.days} days by ${CHUNK_SHAPES.series.side} x ${CHUNK_SHAPES.series.side} cells`,
    comment: gaps.length > 0 ? `Dates not held (gaps) read as NaN: ${gaps.map(([a, b]) => (a === b ? a : `${a}..${b}`)).join(", ")}.` : "Every date from the first to the last is held.",
  };
}

/** The JSON document of a group-level key (.zgroup, .zattrs, .zmetadata), or null for any other key. */
export function groupDocument(zv: GridCube, group: ZarrGroup, key: string): Record<string, unknown> | null {
  if (key === ".zgroup") return { zarr_format: 2 };
  if (key === ".zattrs") return groupAttrs(zv, group);
  if (key !== ".zmetadata") return null;
  const metadata: Record<string, unknown> = { ".zattrs": groupAttrs(zv, group), ".zgroup": { zarr_format: 2 } };
  for (const [name, array] of describeArrays(zv, group)) {
    metadata[`${name}/.zarray`] = zarrayOf(array);
    metadata[`${name}/.zattrs`] = array.attrs;
  }
  return { metadata, zarr_consolidated_format: 1 };
}

const INDEX = "(?:0|[1-9][0-9]{0,8})";
const CHUNK_KEY = [new RegExp(`^${INDEX}$`), new RegExp(`^${INDEX}\\.${INDEX}\\.${INDEX}$`)];
/**
 * The chunk indices a key names for an array (3, 1 or 0 dimensions), or null: decimal indices without
 * leading zeros, joined by "." (Zarr v2's default separator), each inside the array's chunk grid.
 */
export function parseChunkKey(array: ZarrArray, key: string): number[] | null {
  if (array.shape.length === 0) return key === "0" ? [0] : null; // a scalar's one chunk is "0" (zarr-python's key)
  const pattern = array.shape.length === 1 ? CHUNK_KEY[0] : array.shape.length === 3 ? CHUNK_KEY[1] : null;
  if (!pattern?.test(key)) return null;
  const index = key.split(".").map(Number);
  return index.every((n, d) => n < Math.ceil(array.shape[d] / array.chunks[d])) ? index : null;
}

/** Whether a key has the form of one of a group's keys (for a redirect, which never reads the version). */
export function isZarrKeyShape(group: string, array: string | null, key: string): boolean {
  if (!(ZARR_GROUPS as readonly string[]).includes(group)) return false;
  if (array === null) return [".zgroup", ".zattrs", ".zmetadata"].includes(key);
  if (!/^[a-z_]{1,64}$/.test(array)) return false;
  return key === ".zarray" || key === ".zattrs" || CHUNK_KEY.some((p) => p.test(key));
}
