// Raster stage: SILO day files -> one version's cells.f32, tile files, layer pages, index and Dataset record.
//
// Pass 1 decodes each day once into a staging cells.f32 and hashes the content; the version id comes from
// that hash. Pass 2 cuts tile files from cells.f32 itself, so tiles and the server's cell reads share one source.

import { createHash } from "node:crypto";
import { mkdir, open } from "node:fs/promises";
import { join } from "node:path";
import stableStringify from "fast-json-stable-stringify";
import { type Dataset, type RasterDate, type RasterIndex, type SourceEntry, cellsPath, datasetPath, indexPath, sha256Hex, tilePath, versionId } from "../schemas/dist.js";
import { GRID, TILE_SIDE, type TileSlot, type Window, tileId, windowBbox, windowToTiles, windowTransform } from "../schemas/grid.js";
import { float32ToShortest } from "../schemas/numbers.js";
import { assertValid } from "../schemas/validate.js";
import { SILO_TMAX } from "../sources/silo.js";
import type { SiloFile } from "./discover.js";
import { type DistWriter, hashFile, tempNameFor } from "./files.js";
import { readSiloTiff } from "./geotiff.js";
import { writePages } from "./pages.js";
import { formatBytes, type Progress } from "./progress.js";

export const RASTER_TRANSFORM_VERSION = "silo-tiles-v1";

export interface RasterLabels {
  datasetKey: string;
  accessLevel: Dataset["access_level"];
  synthetic: boolean;
  title: string;
  license: string;
  attribution: string;
  metadata: Record<string, unknown>;
  sourceEntry: (file: SiloFile, sha256: string) => SourceEntry;
}

export interface RasterSummary {
  dataset: Dataset;
  days: number;
  tiles: number;
  cells: number;
  missingCells: number;
}

interface TileMetadata {
  id: string;
  variable: string;
  unit: string;
  observed_on: string;
  width: number;
  height: number;
  crs: string;
  transform: number[];
  bbox: number[];
}

function describeTile(date: string, slot: TileSlot): TileMetadata {
  const [col, row, width, height] = slot.window;
  return {
    id: tileId(date, slot.tileRow, slot.tileCol),
    variable: SILO_TMAX.variable,
    unit: SILO_TMAX.unit,
    observed_on: date,
    width,
    height,
    crs: GRID.crs,
    transform: windowTransform(col, row),
    bbox: windowBbox(slot.window),
  };
}

/** The cells of `inner` out of a row-major block covering `outer`. */
function sliceBlock(block: Float32Array, outer: Window, inner: Window): Float32Array {
  const [col, row, width, height] = inner;
  const out = new Float32Array(width * height);
  for (let r = 0; r < height; r++) {
    const start = (row - outer[1] + r) * outer[2] + (col - outer[0]);
    out.set(block.subarray(start, start + width), r * width);
  }
  return out;
}

/** One NaN bit pattern for every missing cell, so equal content always hashes equal. */
function canonicalizeMissing(values: Float32Array): number {
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  let missing = 0;
  for (let i = 0; i < values.length; i++) {
    if (Number.isNaN(values[i])) {
      bits[i] = 0x7fc00000;
      missing++;
    }
  }
  return missing;
}

function unionWindow(windows: Window[]): Window {
  let c0 = Infinity, r0 = Infinity, c1 = -Infinity, r1 = -Infinity;
  for (const [c, r, w, h] of windows) {
    c0 = Math.min(c0, c);
    r0 = Math.min(r0, r);
    c1 = Math.max(c1, c + w);
    r1 = Math.max(r1, r + h);
  }
  return [c0, r0, c1 - c0, r1 - r0];
}

export async function publishRaster(files: SiloFile[], labels: RasterLabels, writer: DistWriter, progress: Progress): Promise<RasterSummary> {
  const started = Date.now();
  const staging = join(writer.root, ".staging");
  await mkdir(staging, { recursive: true });
  const tempCells = tempNameFor(join(staging, "cells.f32"));
  const cellsFile = await open(tempCells, "w");
  const cellsHash = createHash("sha256");
  const dates: RasterDate[] = [];
  const contentLines: string[] = [];
  const sources: SourceEntry[] = [];
  let offset = 0;
  let cells = 0;
  let missingCells = 0;
  try {
    for (const [i, file] of files.entries()) {
      const grid = await readSiloTiff(file.path, SILO_TMAX.plausible);
      missingCells += canonicalizeMissing(grid.values);
      cells += grid.values.length;
      const bytes = new Uint8Array(grid.values.buffer, grid.values.byteOffset, grid.values.byteLength);
      await cellsFile.write(bytes, 0, bytes.byteLength, offset);
      cellsHash.update(bytes);
      dates.push({ date: file.date, window: grid.window, offset });
      offset += bytes.byteLength;
      for (const slot of windowToTiles(grid.window)) {
        const tileCells = sliceBlock(grid.values, grid.window, slot.window);
        const cellsSha256 = sha256Hex(new Uint8Array(tileCells.buffer));
        contentLines.push(stableStringify({ ...describeTile(file.date, slot), source_window: slot.window, cells_sha256: cellsSha256 }));
      }
      sources.push(labels.sourceEntry(file, await hashFile(file.path)));
      progress.status(
        `decoded ${i + 1}/${files.length} files  ${formatBytes(offset)}  ${((Date.now() - started) / 1000).toFixed(1)} s`,
        `decoded ${file.memberPath}  window ${grid.window.join(",")}  missing ${grid.missing}`,
      );
    }
  } finally {
    await cellsFile.close();
  }

  // content_sha256: the transform version and every tile's metadata and cell bytes, canonically (decisions.md 5).
  const contentSha256 = sha256Hex(`${RASTER_TRANSFORM_VERSION}\n${contentLines.join("\n")}\n`);
  const first = files[0].date;
  const last = files[files.length - 1].date;
  const id = versionId(labels.datasetKey, first, last, contentSha256);

  const tiles: TileMetadata[] = [];
  const reader = await open(tempCells, "r");
  try {
    for (const [i, day] of dates.entries()) {
      const [, , width, height] = day.window;
      const block = new Float32Array(width * height);
      await reader.read(new Uint8Array(block.buffer), 0, block.byteLength, day.offset);
      for (const slot of windowToTiles(day.window)) {
        const meta = describeTile(day.date, slot);
        const values = Array.from(sliceBlock(block, day.window, slot.window), float32ToShortest);
        const body = { datasetVersion: id, tile: { ...meta, dataset_version_id: id, source_window: slot.window, cells: values } };
        assertValid("tile-response.schema.json", body, tilePath(id, meta.id));
        await writer.write(tilePath(id, meta.id), JSON.stringify(body));
        tiles.push(meta);
      }
      progress.status(`tiles ${tiles.length} written (${i + 1}/${dates.length} days)  ${formatBytes(writer.bytes)}`);
    }
  } finally {
    await reader.close();
  }
  await writer.adopt(cellsPath(id), tempCells, cellsHash.digest("hex"));

  const dataset: Dataset = {
    id,
    dataset_key: labels.datasetKey,
    title: labels.title,
    content_sha256: contentSha256,
    source_manifest: sources,
    transform_version: RASTER_TRANSFORM_VERSION,
    data_class: SILO_TMAX.dataClass,
    variables: { [SILO_TMAX.variable]: SILO_TMAX.unit },
    temporal_resolution: SILO_TMAX.temporalResolution,
    spatial_support: { ...SILO_TMAX.spatialSupport },
    bbox: windowBbox(unionWindow(dates.map((d) => d.window))),
    period_start: first,
    period_end: last,
    license: labels.license,
    attribution: labels.attribution,
    access_level: labels.accessLevel,
    metadata: {
      source: SILO_TMAX.source,
      synthetic: labels.synthetic,
      ...labels.metadata,
      days: dates.length,
      tiles: tiles.length,
      cells,
      missing_cells: missingCells,
      tile_side: TILE_SIDE,
    },
  };
  assertValid("dataset.schema.json", dataset, datasetPath(id));
  await writer.write(datasetPath(id), JSON.stringify({ dataset }));

  const index: RasterIndex = {
    kind: "raster",
    variable: SILO_TMAX.variable,
    unit: SILO_TMAX.unit,
    crs: GRID.crs,
    tileSide: TILE_SIDE,
    tileCount: tiles.length,
    dates,
  };
  assertValid("dist-index.schema.json", index, indexPath(id));
  await writer.write(indexPath(id), JSON.stringify(index));
  await writePages(writer, id, "layers", tiles, (items, nextCursor) => ({ dataset, tiles: items, nextCursor }), "layers-page.schema.json");
  await writePages(writer, id, "observations", [], (items, nextCursor) => ({ datasetVersion: id, observations: items, nextCursor }), "observations-page.schema.json");
  return { dataset, days: dates.length, tiles: tiles.length, cells, missingCells };
}
