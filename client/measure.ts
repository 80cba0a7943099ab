// What the mirror client reads: HTTP requests and bytes for a 1-cell x 31-day JSON query, a 100 x 100-cell one-day
// CSV query, one 256 x 256 tile and one cell over the whole published period (client.series), for a cold client and
// a warm one. Boxes and dates come from the mirror's catalog.
//
//   node_modules/.bin/tsx client/measure.ts <mirror-url>      (a dist served by `make mirror`, or any static host)

import { makeDataRequest } from "../api/query/face.js";
import { GRID, type Window, bboxToWindow, colToLon, rowToLat, tileId, windowToTiles } from "../format/grid.js";
import { dateToDayNumber, dayNumberToDate } from "../format/dates.js";
import type { Dataset } from "../format/records.js";
import { type MirrorAnswer, type MirrorClient, type MirrorRequest, createMirrorClient } from "./index.js";

interface Case {
  name: string;
  request: MirrorRequest;
  /** a request the warm client has not asked, over the same version and day(s), in other blocks */
  neighbour: MirrorRequest;
}

/** The query of a window of global cells over a period, in `format`. */
function dataRequest(window: Window, start: string, end: string, format: "json" | "csv"): MirrorRequest {
  return { method: "POST", path: "/api/v1/data/query", body: makeDataRequest(window, start, end, { format }) };
}

function planCases(record: Dataset): Case[] {
  const window = record.bbox ? bboxToWindow(record.bbox) : null;
  if (!window) throw new Error(`${record.id} has no bbox on the grid`);
  const [c0, r0, w, h] = window;
  const centre = { col: c0 + Math.floor(w / 2), row: r0 + Math.floor(h / 2) };
  const first = record.period_start;
  const last31 = addDays(first, 30) <= record.period_end ? addDays(first, 30) : record.period_end;
  // the whole 256 x 256 lattice tile nearest the centre (edge tiles are narrower)
  const tiles = windowToTiles(window).filter((s) => s.window[2] === 256 && s.window[3] === 256);
  const distance = (s: (typeof tiles)[number]) => Math.abs(s.window[0] + 128 - centre.col) + Math.abs(s.window[1] + 128 - centre.row);
  tiles.sort((a, b) => distance(a) - distance(b));
  const tile = tiles[0];
  if (!tile) throw new Error(`${record.id} has no whole 256 x 256 tile`);
  const east = tiles.find((s) => s.tileRow === tile.tileRow && s.tileCol !== tile.tileCol) ?? tiles[1] ?? tile;
  const box = (col: number, row: number, side: number): Window => [Math.min(col, GRID.width - side), Math.min(row, GRID.height - side), side, side];
  const layers = (part: typeof tile) => ({ path: `/api/v1/layers/${record.id}?tile=${tileId(first, part.tileRow, part.tileCol)}` });
  return [
    {
      name: `1 cell x ${daysBetween(first, last31)} days, JSON (${first}..${last31})`,
      request: dataRequest(box(centre.col, centre.row, 1), first, last31, "json"),
      neighbour: dataRequest(box(centre.col + 64, centre.row, 1), first, last31, "json"),
    },
    {
      name: `100 x 100 cells x 1 day, CSV (${first})`,
      request: dataRequest(box(centre.col - 50, centre.row - 50, 100), first, first, "csv"),
      neighbour: dataRequest(box(centre.col + 50, centre.row - 50, 100), first, first, "csv"),
    },
    { name: `one 256 x 256 tile (${tileId(first, tile.tileRow, tile.tileCol)})`, request: layers(tile), neighbour: layers(east) },
  ];
}

const addDays = (date: string, days: number) => dayNumberToDate(dateToDayNumber(date) + days);
const daysBetween = (first: string, last: string) => dateToDayNumber(last) - dateToDayNumber(first) + 1;

async function measure(client: MirrorClient, request: MirrorRequest): Promise<{ requests: number; bytes: number; answer: MirrorAnswer }> {
  const before = client.stats();
  const answer = await client.answer(request);
  const after = client.stats();
  if (answer.status !== 200) throw new Error(`${request.method ?? "GET"} ${request.path}: HTTP ${answer.status} ${answer.text()}`);
  return { requests: after.requests - before.requests, bytes: after.bytes - before.bytes, answer };
}

async function main(url: string | undefined): Promise<void> {
  if (!url) throw new Error("usage: node_modules/.bin/tsx client/measure.ts <mirror-url>");
  const record = await createMirrorClient({ baseUrl: url }).newestVersion();
  if (!record) throw new Error("the mirror's catalog has no public demo raster version to query");
  const rows: string[][] = [["request", "client", "HTTP requests", "bytes read", "answer bytes"]];
  for (const c of planCases(record)) {
    // a fresh client per case: cold means nothing read yet, catalog.json included
    const client = createMirrorClient({ baseUrl: url });
    const cold = await measure(client, c.request);
    const warm = await measure(client, c.request);
    const neighbour = await measure(client, c.neighbour);
    const size = String(cold.answer.body.byteLength);
    rows.push([c.name, "cold", String(cold.requests), String(cold.bytes), size]);
    rows.push(["", "warm, same request", String(warm.requests), String(warm.bytes), size]);
    rows.push(["", "warm, next blocks east", String(neighbour.requests), String(neighbour.bytes), String(neighbour.answer.body.byteLength)]);
  }
  rows.push(...(await measureSeries(url, record)));
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  process.stdout.write(`mirror ${url}\nversion ${record.id}\n\n`);
  for (const row of rows) process.stdout.write(`${row.map((cell, i) => (i >= 2 ? cell.padStart(widths[i]) : cell.padEnd(widths[i]))).join("  ")}\n`);
}

/** One cell over the whole published period in one call of the series route (client.series). */
async function measureSeries(url: string, record: Dataset): Promise<string[][]> {
  const window = bboxToWindow(record.bbox!)!;
  const centre = (dx: number) => ({ lon: colToLon(window[0] + Math.floor(window[2] / 2) + dx), lat: rowToLat(window[1] + Math.floor(window[3] / 2)) });
  const client = createMirrorClient({ baseUrl: url });
  const name = `1 cell, ${record.period_start}..${record.period_end}, CSV (client.series)`;
  const rows: string[][] = [];
  for (const [label, place] of [["cold", centre(0)], ["warm, same cell", centre(0)], ["warm, next chunk east", centre(64)]] as const) {
    const before = client.stats();
    const answer = await client.series({ ...place, start: record.period_start, end: record.period_end, datasetVersion: record.id });
    const after = client.stats();
    rows.push([rows.length ? "" : name, label, String(after.requests - before.requests), String(after.bytes - before.bytes), String(answer.body.byteLength)]);
  }
  return rows;
}

main(process.argv[2]).catch((err) => {
  process.stderr.write(`measure: ${(err as Error).message}\n`);
  process.exitCode = 1;
});
