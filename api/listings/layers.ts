// GET layers: tile metadata pages, one tile with its cells, one cell (docs/contract.md §1.1, §4.3).
// Tiles are rendered from the shared day pieces; their ids and bytes do not depend on how cells are stored.

import { GRID, type TilePart, findTile, parseTileId, windowToTiles, windowTransform } from "../../format/grid.js";
import { float32ToJson } from "../../format/number-text.js";
import type { DayEntry } from "../../format/version-index.js";
import type { RasterView, VersionView } from "../../format/versions.js";
import type { Answer } from "../answer.js";
import type { Context } from "../context.js";
import { encodeOffsetCursor, readOffset } from "../cursors.js";
import { notFound, openData, toImmutableRecord } from "../records.js";
import { describeTile, writePage, writeTile } from "./pages.js";
import type { LayersParams, SampleParams } from "./parameters.js";

const FEWER = "ask for fewer items with a smaller limit, then follow nextCursor";
/** A tile and a cell are not paged (they take no limit): a part of a tile is asked another way. */
const WHOLE_TILE = "a tile is not paged: ask its cells a box at a time with POST /api/v1/data/query, or one at a time with GET /api/v1/layers/{id}/sample";

/** Where a tile id lies in a version, by arithmetic on its day's window; null when the version has no such tile. */
async function locateTile(view: VersionView, id: string): Promise<{ view: RasterView; day: DayEntry; part: TilePart } | null> {
  const parsed = parseTileId(id);
  if (!parsed || view.kind !== "raster") return null;
  const day = await view.findDay(parsed.date);
  const part = day ? findTile(day.window, parsed.tileRow, parsed.tileCol) : null;
  return day && part ? { view, day, part } : null;
}

export async function answerLayers(ctx: Context, page: LayersParams): Promise<Answer> {
  const tile = page.tile ?? null;
  const view = await openData(ctx, ctx.params.id);
  const id = view.record.id;
  if (tile !== null) {
    const located = await locateTile(view, tile);
    if (!located) throw notFound(`Tile ${tile} of ${id}`);
    // a whole tile, answered (and cached) whole: its blocks are read for it alone
    const cells = await located.view.readCodesOrCells(located.day, located.part.window, "once");
    return ctx.answer(writeTile(id, located.view.index, located.day.date, located.part, cells), { cache: "immutable", bounded: WHOLE_TILE });
  }
  const count = view.kind === "raster" ? view.index.tiles : 0;
  const offset = await readOffset(ctx.platform, id, "layers", page.after ?? null, count);
  const end = Math.min(offset + page.limit, count);
  const tiles = view.kind === "raster" ? await listTiles(view, offset, end - offset) : [];
  const nextCursor = end < count ? await encodeOffsetCursor(ctx.platform, id, "layers", end) : null;
  const body = writePage({ dataset: JSON.stringify(toImmutableRecord(view.record)), tiles: `[${tiles.join(",")}]` }, nextCursor);
  return ctx.answer(body, { cache: "immutable", bounded: FEWER });
}

/** JSON of `count` tile metadata items from layer item `offset`: date by date, lattice order within a date. */
async function listTiles(view: RasterView, offset: number, count: number): Promise<string[]> {
  const out: string[] = [];
  for await (const { day, skip } of view.daysFromTile(offset)) {
    for (const part of windowToTiles(day.window).slice(skip)) {
      if (out.length === count) return out;
      out.push(JSON.stringify(describeTile(view.index, day.date, part)));
    }
    if (out.length === count) return out;
  }
  return out;
}

export async function answerSample(ctx: Context, { tile, row, col }: SampleParams): Promise<Answer> {
  const view = await openData(ctx, ctx.params.id);
  const located = await locateTile(view, tile);
  if (!located) throw notFound(`Tile ${tile} of ${view.record.id}`);
  const [tileCol, tileRow, width, height] = located.part.window;
  if (row >= height || col >= width) throw notFound(`Cell row ${row}, col ${col} of tile ${tile} (${height} rows x ${width} cols)`);
  const [value] = await located.view.readCells(located.day, [tileCol + col, tileRow + row, 1, 1]);
  const body =
    `{"datasetVersion":${JSON.stringify(view.record.id)},"tile":${JSON.stringify(tile)},"row":${row},"col":${col},` +
    `"value":${float32ToJson(value)},"unit":${JSON.stringify(located.view.index.unit)},"variable":${JSON.stringify(located.view.index.variable)},"date":"${located.day.date}",` +
    `"crs":"${GRID.crs}","transform":${JSON.stringify(windowTransform(tileCol, tileRow))}}`;
  return ctx.answer(body, { cache: "immutable", bounded: WHOLE_TILE });
}
