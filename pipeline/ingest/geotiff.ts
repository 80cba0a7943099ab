// Reads and writes SILO-grid GeoTIFFs: the one module that touches the geotiff library, so an upgrade of it is
// checked in one place.

import { readFile } from "node:fs/promises";
import { inflateSync } from "node:zlib";
import { addDecoder, BaseDecoder, fromArrayBuffer } from "geotiff";
import type { GeoTIFFImage, ImageFileDirectory } from "geotiff";
import { CELL_SIZE_DEG, colToEdgeLon, GRID, isInsideGrid, round9, rowToEdgeLat } from "../../format/grid.js";
import type { Window } from "../../format/grid.js";
import { PublishError, describeError } from "../errors.js";
import { writeFileAtomic } from "../files/write.js";
import { LEGACY_OCEAN, type Packing, type RawCells, toSiloValues } from "./silo-values.js";
import { encodeGeoTiff } from "./tiff-writer.js";

export interface DecodedGrid {
  file: string;
  window: Window;
  /** row-major over window, NaN = missing */
  values: Float32Array;
  /** count of NaN cells */
  missing: number;
}

const STAGE = "decode";
const WRITE_NODATA = -32767;
const GRID_TOLERANCE_DEG = 1e-9;
const EPSG_WGS84 = 4326;
const TIFF_COMPRESSION_DEFLATE = [8, 32946];
const TIFF_COMPRESSION_LZW = 5;

// What a decoder needs to know about one strip or tile; the fields geotiff's own parameter function
// gives (its predictor step reads them), plus the most bytes a block can hold.
interface BlockParameters {
  tileWidth: number;
  tileHeight: number;
  planarConfiguration: number;
  bitsPerSample: number[];
  predictor: number;
  maxBytes: number;
}

async function readBlockParameters(dir: ImageFileDirectory): Promise<BlockParameters> {
  const tiled = !dir.hasTag("StripOffsets");
  const imageWidth = Number(await dir.loadValue("ImageWidth"));
  const imageHeight = Number(await dir.loadValue("ImageLength"));
  const tileWidth = tiled ? Number(await dir.loadValue("TileWidth")) : imageWidth;
  const tileHeight = tiled ? Number(await dir.loadValue("TileLength")) : Number(await dir.loadValue("RowsPerStrip")) || imageHeight;
  const planarConfiguration = Number(await dir.loadValue("PlanarConfiguration")) || 1;
  const bitsPerSample = Array.from((await dir.loadValue("BitsPerSample")) ?? [], Number);
  const bitsPerBlockPixel = planarConfiguration === 2 ? Math.max(0, ...bitsPerSample) : bitsPerSample.reduce((a, b) => a + b, 0);
  // RowsPerStrip may be 2^32-1 ("one strip"), so a strip never holds more rows than the image
  const blockRows = tiled ? tileHeight : Math.min(tileHeight, imageHeight);
  return {
    tileWidth,
    tileHeight,
    planarConfiguration,
    bitsPerSample,
    predictor: Number(await dir.loadValue("Predictor")) || 1,
    maxBytes: Math.max(1, Math.ceil((tileWidth * blockRows * bitsPerBlockPixel) / 8)),
  };
}

// node:zlib inflates a full SILO grid in about 37 ms where geotiff's bundled pako takes 54 ms
// (measured on this project's machines); the predictor step stays geotiff's, so the bytes that come out are the same.
// The output cap turns a stream that would inflate without end into an error; it leaves room above the
// block size because libtiff ignores surplus bytes after a block, and so does geotiff.
class ZlibDeflateDecoder extends BaseDecoder {
  override decodeBlock(buffer: ArrayBufferLike): ArrayBufferLike {
    const { maxBytes } = this.parameters as unknown as BlockParameters;
    const out = inflateSync(new Uint8Array(buffer), { maxOutputLength: 2 * maxBytes + 1024 });
    // small results may share Node's buffer pool; the predictor rewrites the block in place, so give it its own
    return out.byteOffset === 0 && out.byteLength === out.buffer.byteLength
      ? out.buffer
      : out.buffer.slice(out.byteOffset, out.byteOffset + out.byteLength);
  }
}

// geotiff's LZW decoder loops without end on some corrupt codes (a code past its 4093-entry table),
// growing an array until V8 aborts the whole process; a one-bit flip in a strip was enough. This is the
// same TIFF LZW (MSB-first codes, early change, as libtiff writes it) with every code checked and the
// output capped at the block size, so a corrupt block is an error that readSiloTiff reports.
class BoundedLzwDecoder extends BaseDecoder {
  override decodeBlock(buffer: ArrayBufferLike): ArrayBufferLike {
    const { maxBytes } = this.parameters as unknown as BlockParameters;
    return decodeLzw(new Uint8Array(buffer), maxBytes).buffer;
  }
}

const LZW_CLEAR = 256;
const LZW_EOI = 257;
const LZW_FIRST_FREE = 258;
const LZW_TABLE_SIZE = 4096;

function decodeLzw(input: Uint8Array, maxBytes: number): Uint8Array {
  const prefix = new Uint16Array(LZW_TABLE_SIZE);
  const suffix = new Uint8Array(LZW_TABLE_SIZE);
  const first = new Uint8Array(LZW_TABLE_SIZE);
  const length = new Uint16Array(LZW_TABLE_SIZE);
  for (let i = 0; i < 256; i++) {
    suffix[i] = i;
    first[i] = i;
    length[i] = 1;
  }
  const out = new Uint8Array(maxBytes);
  const totalBits = input.length * 8;
  let pos = 0;
  let bitPos = 0;
  let width = 9;
  let next = LZW_FIRST_FREE;
  let old = -1;
  while (pos < maxBytes && bitPos + width <= totalBits) {
    const byte = bitPos >>> 3;
    const chunk = (input[byte] << 16) | ((input[byte + 1] ?? 0) << 8) | (input[byte + 2] ?? 0);
    const code = (chunk >>> (24 - (bitPos & 7) - width)) & ((1 << width) - 1);
    bitPos += width;
    if (code === LZW_EOI) break;
    if (code === LZW_CLEAR) {
      width = 9;
      next = LZW_FIRST_FREE;
      old = -1;
      continue;
    }
    let entry: number;
    if (code < 256 || (code >= LZW_FIRST_FREE && code < next)) {
      entry = code;
      if (old >= 0 && next < LZW_TABLE_SIZE) addLzwEntry(old, first[code]);
    } else if (code === next && old >= 0 && next < LZW_TABLE_SIZE) {
      // the code being defined right now: old's string plus old's first byte
      addLzwEntry(old, first[old]);
      entry = code;
    } else {
      throw new Error(`corrupt LZW stream: code ${code} with ${next} table entries`);
    }
    const end = pos + length[entry];
    for (let c = entry, at = end - 1; at >= pos; c = prefix[c], at--) {
      if (at < maxBytes) out[at] = suffix[c];
    }
    pos = Math.min(end, maxBytes);
    old = entry;
    if (next + 1 >= 1 << width && width < 12) width++;
  }
  return pos === maxBytes ? out : out.slice(0, pos);

  function addLzwEntry(base: number, byte: number): void {
    prefix[next] = base;
    suffix[next] = byte;
    first[next] = first[base];
    length[next] = length[base] + 1;
    next++;
  }
}

addDecoder(TIFF_COMPRESSION_DEFLATE, () => Promise.resolve(ZlibDeflateDecoder), readBlockParameters, false);
addDecoder(TIFF_COMPRESSION_LZW, () => Promise.resolve(BoundedLzwDecoder), readBlockParameters, false);

/** Decodes image 0 of a SILO-grid GeoTIFF into its global window, missing cells as NaN; throws PublishError. */
export async function readSiloTiff(file: string, plausible: readonly [number, number]): Promise<DecodedGrid> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    throw new PublishError(file, "read", `cannot read the file (${describeError(err)})`);
  }
  return decodeSiloTiff(file, bytes, plausible);
}

/** readSiloTiff on bytes already read (the publish hashes and decodes one read). */
export async function decodeSiloTiff(file: string, bytes: Buffer, plausible: readonly [number, number]): Promise<DecodedGrid> {
  const fail = (reason: string): never => {
    throw new PublishError(file, STAGE, reason);
  };
  const buffer = toOwnArrayBuffer(bytes);

  let image: GeoTIFFImage;
  try {
    const tiff = await fromArrayBuffer(buffer);
    // image 0 is full resolution; a COG's overviews follow it as further images
    image = await tiff.getImage(0);
  } catch (err) {
    return fail(corruptReason(describeError(err)));
  }

  checkByteOrder(bytes, image, fail);
  const { window, packing } = await checkGrid(image, fail);
  await checkBlocksPresent(image, buffer.byteLength, fail);

  let raw: RawCells;
  try {
    raw = (await image.readRasters({ samples: [0], interleave: true })) as unknown as RawCells;
  } catch (err) {
    return fail(corruptReason(`cannot decode the raster: ${describeError(err)}`));
  }
  if (!ArrayBuffer.isView(raw) || raw.length !== window[2] * window[3]) {
    return fail(corruptReason(`decoded ${raw.length} cells, expected ${window[2] * window[3]}`));
  }
  const { values, missing } = toSiloValues(raw, window, packing, false, plausible, fail);
  return { file, window, values, missing };
}

/** Writes a window of float32 cells as a single-band EPSG:4326 GeoTIFF (NaN as -32767, DEFLATE strips), atomically. */
export async function writeSiloTiff(file: string, window: Window, values: Float32Array): Promise<void> {
  const [col, row, width, height] = window;
  if (!isInsideGrid(window) || !window.every(Number.isInteger)) {
    throw new PublishError(file, "encode", `window [${window.join(", ")}] is not inside the ${GRID.width} x ${GRID.height} SILO grid`);
  }
  if (values.length !== width * height) {
    throw new PublishError(file, "encode", `${values.length} values do not fill a ${width} x ${height} window`);
  }
  const cells = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    // readSiloTiff would turn these into missing: refuse them rather than lose a value silently
    if (v === WRITE_NODATA || v === LEGACY_OCEAN || v === Infinity || v === -Infinity) {
      throw new PublishError(file, "encode", `cell ${i} holds ${v}, which reads back as missing; write NaN for a missing cell`);
    }
    cells[i] = Number.isNaN(v) ? WRITE_NODATA : v;
  }
  const tiff = encodeGeoTiff({
    width,
    height,
    values: cells,
    west: colToEdgeLon(col),
    north: rowToEdgeLat(row),
    cellSizeDeg: CELL_SIZE_DEG,
    nodata: String(WRITE_NODATA),
  });
  await writeFileAtomic(file, tiff);
}

type Fail = (reason: string) => never;

/** Checks the bands, CRS and georeferencing against the SILO grid; returns the global window and how samples become values. */
async function checkGrid(image: GeoTIFFImage, fail: Fail): Promise<{ window: Window; packing: Packing }> {
  const sample = await checkSamples(image, fail);
  let geoKeys: Record<string, unknown> | null;
  try {
    geoKeys = image.getGeoKeys() as Record<string, unknown> | null;
  } catch (err) {
    return fail(corruptReason(`unreadable GeoKeyDirectory: ${describeError(err)}`));
  }
  checkCrs(geoKeys, fail);
  const window = locateWindow(image, await readAffine(image, geoKeys, fail), fail);
  let nodata: number | null;
  try {
    nodata = image.getGDALNoData();
  } catch (err) {
    return fail(corruptReason(`unreadable GDAL_NODATA tag: ${describeError(err)}`));
  }
  const { scale, offset } = await readScaleOffset(image, fail);
  // a float32 sample holds the float32 nearest the declared nodata; other sample types hold it exactly
  const missing = nodata === null ? [] : [sample === "3/32" ? Math.fround(nodata) : nodata];
  return { window, packing: { scale, offset, missing } };
}

// What GDAL writes for this grid: float32 (SILO's own files), float64, and 8-, 16- or 32-bit integers, signed or
// not, usually with a scale and offset (gdal_translate -ot Int16 -scale, -a_scale 0.1). Keys: SampleFormat/bits.
const SAMPLE_TYPES = new Set(["3/32", "3/64", "1/8", "1/16", "1/32", "2/8", "2/16", "2/32"]);

/** One band of float or integer samples in an image of plausible sizes; returns "SampleFormat/BitsPerSample". */
async function checkSamples(image: GeoTIFFImage, fail: Fail): Promise<string> {
  const dir = image.getFileDirectory();
  // a damaged directory can turn any of these into arrays, zero or NaN; name it corrupt, not wrongly shaped
  const shape = [image.getWidth(), image.getHeight(), image.getTileWidth(), image.getTileHeight(), image.getSamplesPerPixel()];
  if (!shape.every((n) => Number.isInteger(n) && n > 0)) {
    fail(corruptReason(`image directory holds impossible sizes (${shape.map(String).join(", ")})`));
  }
  const bands = image.getSamplesPerPixel();
  if (bands !== 1) fail(`has ${bands} bands; a SILO file has exactly one`);
  const format = Number(((await dir.loadValue("SampleFormat")) as ArrayLike<number> | undefined)?.[0] ?? 1);
  const bits = Number(((await dir.loadValue("BitsPerSample")) as ArrayLike<number> | undefined)?.[0] ?? 0);
  if (!SAMPLE_TYPES.has(`${format}/${bits}`)) {
    fail(
      `samples are ${sampleKind(format, bits)} (SampleFormat ${format}, BitsPerSample ${bits}); ` +
        "a SILO-grid file stores float32 or float64, or 8-, 16- or 32-bit integers with a scale and offset",
    );
  }
  return `${format}/${bits}`;
}

/**
 * Band 1's scale and offset from GDAL's metadata tag, where GDAL writes them as decimal text (-a_scale, -a_offset,
 * -scale); 1 and 0 when absent.
 */
async function readScaleOffset(image: GeoTIFFImage, fail: Fail): Promise<{ scale: number; offset: number }> {
  let text: unknown;
  try {
    text = await image.getFileDirectory().loadValue("GDAL_METADATA");
  } catch (err) {
    return fail(corruptReason(`unreadable GDAL_METADATA tag: ${describeError(err)}`));
  }
  const found = { scale: 1, offset: 0 };
  for (const m of String(text ?? "").matchAll(/<Item\b([^>]*)>([^<]*)<\/Item>/g)) {
    const role = /\brole="(scale|offset)"/.exec(m[1])?.[1] as "scale" | "offset" | undefined;
    if (!role || /\bsample="(\d+)"/.exec(m[1])?.[1] !== "0") continue;
    const value = Number(m[2].trim());
    if (!Number.isFinite(value) || (role === "scale" && value === 0)) fail(`band 1 ${role} "${m[2]}" in GDAL_METADATA is not a usable number`);
    found[role] = value;
  }
  return found;
}

type Affine = { originLon: number; originLat: number; stepLon: number; stepLat: number };

/** The image's global window on the SILO grid: north-up, 0.05 degree cells, origin on a grid line, inside the grid. */
function locateWindow(image: GeoTIFFImage, { originLon, originLat, stepLon, stepLat }: Affine, fail: Fail): Window {
  if (![originLon, originLat, stepLon, stepLat].every(Number.isFinite)) {
    fail(corruptReason(`georeferencing holds non-finite numbers (${originLon}, ${originLat}, ${stepLon}, ${stepLat})`));
  }
  if (stepLat >= 0) fail(`grid is not north-up (latitude step ${round9(stepLat)} per row, expected -0.05)`);
  if (Math.abs(stepLon - CELL_SIZE_DEG) > GRID_TOLERANCE_DEG || Math.abs(-stepLat - CELL_SIZE_DEG) > GRID_TOLERANCE_DEG) {
    fail(`cell size ${round9(stepLon)} x ${round9(-stepLat)} degrees is not the SILO 0.05 degree cell; is this a resampled file?`);
  }
  const col = Math.round((originLon * 1000 - GRID.westEdgeMilliDeg) / GRID.cellMilliDeg);
  if (Math.abs(originLon - colToEdgeLon(col)) > GRID_TOLERANCE_DEG) {
    fail(`origin longitude ${round9(originLon)} is not on the SILO 0.05 degree grid (111.975 + 0.05k); is this a resampled file?`);
  }
  const row = Math.round((GRID.northEdgeMilliDeg - originLat * 1000) / GRID.cellMilliDeg);
  if (Math.abs(originLat - rowToEdgeLat(row)) > GRID_TOLERANCE_DEG) {
    fail(`origin latitude ${round9(originLat)} is not on the SILO 0.05 degree grid (-9.975 - 0.05k); is this a resampled file?`);
  }
  const window: Window = [col, row, image.getWidth(), image.getHeight()];
  if (!isInsideGrid(window)) {
    fail(
      `window [${window.join(", ")}] (columns ${col}..${col + window[2] - 1}, rows ${row}..${row + window[3] - 1}) ` +
        `reaches outside the ${GRID.width} x ${GRID.height} SILO grid`,
    );
  }
  return window;
}

function checkCrs(geoKeys: Record<string, unknown> | null, fail: Fail): void {
  if (!geoKeys) fail(`has no GeoKeyDirectory, so no CRS; a SILO file is EPSG:${EPSG_WGS84}`);
  const model = geoKeys!.GTModelTypeGeoKey;
  const projected = geoKeys!.ProjectedCSTypeGeoKey;
  const geographic = geoKeys!.GeographicTypeGeoKey;
  if (model === 1 || projected !== undefined) {
    fail(`CRS is projected (EPSG:${projected ?? "unknown"}), not the SILO grid's geographic EPSG:${EPSG_WGS84}; is this a reprojected file?`);
  }
  if (model !== 2) fail(`CRS model type is ${model ?? "missing"}, not geographic (2); a SILO file is EPSG:${EPSG_WGS84}`);
  if (geographic !== EPSG_WGS84) {
    fail(`CRS is EPSG:${geographic ?? "unknown"}, not the SILO grid's EPSG:${EPSG_WGS84} (WGS 84); is this file from another source?`);
  }
}

/** The affine of cell corners from ModelTransformation, or ModelTiepoint + ModelPixelScale as GDAL reads them. */
async function readAffine(
  image: GeoTIFFImage,
  geoKeys: Record<string, unknown> | null,
  fail: Fail,
): Promise<Affine> {
  const dir = image.getFileDirectory();
  const transform = (await dir.loadValue("ModelTransformation")) as ArrayLike<number> | undefined;
  const tiepoint = (await dir.loadValue("ModelTiepoint")) as ArrayLike<number> | undefined;
  const scale = (await dir.loadValue("ModelPixelScale")) as ArrayLike<number> | undefined;
  // PixelIsPoint puts the georeference on cell centres; GDAL shifts it back half a cell, and so do we
  const half = geoKeys?.GTRasterTypeGeoKey === 2 ? 0.5 : 0;

  let affine: Affine;
  if (transform && transform.length >= 16) {
    const [a, b, , c, d, e, , f] = Array.from(transform);
    if (b !== 0 || d !== 0) {
      fail(`grid is rotated or sheared (ModelTransformation terms ${b}, ${d}); a SILO file is north-up with no rotation`);
    }
    affine = { originLon: c, originLat: f, stepLon: a, stepLat: e };
  } else if (tiepoint && tiepoint.length === 6 && scale && scale.length >= 2) {
    const [i, j, , x, y] = Array.from(tiepoint);
    affine = { originLon: x - i * scale[0], originLat: y + j * scale[1], stepLon: scale[0], stepLat: -scale[1] };
  } else if (tiepoint && tiepoint.length > 6) {
    return fail("is georeferenced by ground control points, not a regular grid; a SILO file has one origin and cell size");
  } else {
    return fail("has no georeferencing (neither ModelTransformation nor ModelTiepoint with ModelPixelScale)");
  }
  return {
    ...affine,
    originLon: affine.originLon - half * affine.stepLon,
    originLat: affine.originLat - half * affine.stepLat,
  };
}

/**
 * geotiff.js 3.0.5 reads a block table it loads lazily (one too long to sit beside the image directory) as
 * little-endian whatever the file's byte order: in a big-endian file the strips land anywhere. Such a file is
 * refused rather than decoded into garbage; a short table is read with the file's byte order and is fine.
 */
function checkByteOrder(bytes: Buffer, image: GeoTIFFImage, fail: Fail): void {
  if (bytes[0] !== 0x4d) return; // "II": little-endian
  const dir = image.getFileDirectory();
  // getValue throws for a table loaded lazily (its types admit only tags always loaded at once)
  const readNow = dir.getValue.bind(dir) as (tag: string) => unknown;
  for (const tag of ["StripOffsets", "StripByteCounts", "TileOffsets", "TileByteCounts"] as const) {
    if (!dir.hasTag(tag)) continue;
    try {
      readNow(tag);
    } catch {
      fail(`is a big-endian GeoTIFF whose ${tag} table the geotiff library misreads as little-endian; rewrite it little-endian (gdal_translate -co ENDIANNESS=LITTLE)`);
    }
  }
}

/** Every strip or tile must lie inside the file: a cut download otherwise decodes into garbage or a raw RangeError. */
async function checkBlocksPresent(image: GeoTIFFImage, fileBytes: number, fail: Fail): Promise<void> {
  const dir = image.getFileDirectory();
  const tiled = dir.hasTag("TileOffsets");
  const blocks = tiled
    ? Math.ceil(image.getWidth() / image.getTileWidth()) * Math.ceil(image.getHeight() / image.getTileHeight())
    : Math.ceil(image.getHeight() / image.getTileHeight());
  let offsets: ArrayLike<number | bigint> | undefined;
  let counts: ArrayLike<number | bigint> | undefined;
  try {
    offsets = (await dir.loadValue(tiled ? "TileOffsets" : "StripOffsets")) as ArrayLike<number | bigint> | undefined;
    counts = (await dir.loadValue(tiled ? "TileByteCounts" : "StripByteCounts")) as ArrayLike<number | bigint> | undefined;
  } catch (err) {
    return fail(corruptReason(`unreadable block table: ${describeError(err)}`));
  }
  if (!offsets || !counts || offsets.length < blocks || counts.length < blocks) {
    return fail(corruptReason(`the block table lists ${offsets?.length ?? 0} of the ${blocks} ${tiled ? "tiles" : "strips"}`));
  }
  for (let i = 0; i < blocks; i++) {
    const end = Number(offsets[i]) + Number(counts[i]);
    if (!(end <= fileBytes)) {
      fail(corruptReason(`${tiled ? "tile" : "strip"} ${i} needs bytes up to ${end} but the file has ${fileBytes}`));
    }
  }
}

function corruptReason(detail: string): string {
  return `truncated or corrupt GeoTIFF (${detail}); fetch or regenerate the file`;
}

function sampleKind(format: number, bits: number): string {
  if (format === 5 || format === 6) return `complex ${format === 5 ? "integers" : "floats"}`;
  const kind = format === 1 ? "uint" : format === 2 ? "int" : format === 3 ? "float" : `format-${format} `;
  return `${kind}${bits}`;
}

/** fromArrayBuffer reads the whole ArrayBuffer, so a Buffer that is a view into a larger one must be copied. */
function toOwnArrayBuffer(bytes: Buffer): ArrayBuffer {
  const { buffer, byteOffset, byteLength } = bytes;
  return byteOffset === 0 && byteLength === buffer.byteLength && buffer instanceof ArrayBuffer
    ? buffer
    : (buffer.slice(byteOffset, byteOffset + byteLength) as ArrayBuffer);
}
