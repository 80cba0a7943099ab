// Grid, tile lattice, number and cursor arithmetic at the extremes (table-driven, round trips).

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { isCalendarDate, listDates } from "../../format/dates.js";
import { decodeOffsetCursor as decodeAsync, encodeOffsetCursor as encodeAsync } from "../../api/cursors.js";
import { nodePlatform } from "../../format/local.js";
import { versionId } from "../../format/records.js";

const encodeCursor = (id: string, kind: "layers" | "observations", offset: number) => encodeAsync(nodePlatform, id, kind, offset);
const decodeCursor = (id: string, kind: "layers" | "observations", cursor: string) => decodeAsync(nodePlatform, id, kind, cursor);
import { GRID, bboxToWindow, colToEdgeLon, findTile, colToLon, parseTileId, rowToEdgeLat, rowToLat, tileId, windowBbox, windowToTiles, windowTransform } from "../../format/grid.js";
import { float32ToJson, float32ToShortest } from "../../format/number-text.js";
import { writeTile } from "../../api/listings/pages.js";
import { tenthsValue } from "../../format/cells.js";

const grid = suite("grid");

grid("grid - centres and edges come from integer indices, exactly", () => {
  assert.is(colToLon(0), 112);
  assert.is(colToLon(840), 154);
  assert.is(colToLon(606), 142.3);
  assert.is(colToLon(607), 142.35);
  assert.is(colToEdgeLon(607), 142.325);
  assert.is(rowToLat(0), -10);
  assert.is(rowToLat(680), -44);
  assert.is(rowToLat(399), -29.95);
  assert.is(colToEdgeLon(0), 111.975);
  assert.is(colToEdgeLon(GRID.width), 154.025);
  assert.is(rowToEdgeLat(0), -9.975);
  assert.is(rowToEdgeLat(GRID.height), -44.025);
  for (let c = 0; c < GRID.width; c++) assert.is(String(colToLon(c)).length <= 7, true, `col ${c}: ${colToLon(c)}`);
  for (let r = 0; r < GRID.height; r++) assert.is(String(rowToLat(r)).length <= 7, true, `row ${r}: ${rowToLat(r)}`);
});

grid("grid - the full grid cuts into 12 lattice tiles, edge tiles clipped", () => {
  const parts = windowToTiles([0, 0, GRID.width, GRID.height]);
  assert.is(parts.length, 12);
  assert.equal(parts.map((s) => s.window[2]).slice(0, 4), [256, 256, 256, 73]);
  assert.equal(parts.map((s) => s.window[3]).filter((_, i) => i % 4 === 0), [256, 256, 169]);
  const corner = parts[11];
  assert.equal([corner.tileRow, corner.tileCol, ...corner.window], [2, 3, 768, 512, 73, 169]);
  assert.equal(windowBbox(corner.window), [150.375, -44.025, 154.025, -35.575]);
  assert.equal(windowTransform(768, 512), [0.05, 0, 150.375, 0, -0.05, -35.575]);
  assert.equal(windowBbox(parts[0].window), [111.975, -22.775, 124.775, -9.975]);
  assert.equal(windowTransform(0, 0), [0.05, 0, 111.975, 0, -0.05, -9.975]);
});

grid("grid - a window's tile part keeps its lattice position; tiles of different windows line up", () => {
  assert.equal(windowToTiles([250, 250, 10, 10]).map((s) => [s.tileRow, s.tileCol, ...s.window]), [
    [0, 0, 250, 250, 6, 6],
    [0, 1, 256, 250, 4, 6],
    [1, 0, 250, 256, 6, 4],
    [1, 1, 256, 256, 4, 4],
  ]);
  assert.equal(windowToTiles([0, 0, 256, 256]).length, 1);
  assert.equal(windowToTiles([840, 680, 1, 1]).map((s) => [s.tileRow, s.tileCol, ...s.window]), [[2, 3, 840, 680, 1, 1]]);
  const part = findTile([250, 0, 20, 20], 0, 1)!;
  assert.equal([part.tileRow, part.tileCol, ...part.window], [0, 1, 256, 0, 14, 20]);
  assert.is(findTile([250, 0, 20, 20], 1, 1), null);
});

grid("grid - bbox selection: west/south inclusive, east/north exclusive, on rounded centres", () => {
  const cases: [string, [number, number, number, number], number[] | null][] = [
    ["box on exact cell edges", [colToEdgeLon(10), rowToEdgeLat(20), colToEdgeLon(12), rowToEdgeLat(10)], [10, 10, 2, 10]],
    ["box on exact centres", [colToLon(10), rowToLat(20), colToLon(12), rowToLat(10)], [10, 11, 2, 10]],
    ["box between centres", [142.31, -30.04, 142.34, -30.01], null],
    ["one centre on west/south edges", [142.35, -30, 142.36, -29.99], [607, 400, 1, 1]],
    ["centre on east edge is out", [142.34, -30, 142.35, -29.99], null],
    ["centre on north edge is out", [142.34, -30.01, 142.36, -30], null],
    ["whole world", [-180, -90, 180, 90], [0, 0, 841, 681]],
    ["north-west corner cell", [112, -10, 112.001, -9.999], [0, 0, 1, 1]],
    ["south-east corner cell", [154, -44, 154.001, -43.999], [840, 680, 1, 1]],
    ["east of the grid", [154.01, -30, 160, -20], null],
    ["north of the grid", [130, -9.99, 140, 0], null],
    ["south of the grid", [130, -60, 140, -44.001], null],
  ];
  for (const [name, bbox, expected] of cases) assert.equal(bboxToWindow(bbox), expected, name);
});

grid("grid - every column and row round-trips through a one-cell box", () => {
  for (let c = 0; c < GRID.width; c++) {
    assert.equal(bboxToWindow([colToLon(c), -30, colToEdgeLon(c + 1), -29.96]), [c, 400, 1, 1], `col ${c}`);
  }
  for (let r = 0; r < GRID.height; r++) {
    assert.equal(bboxToWindow([130, rowToLat(r), 130.01, rowToEdgeLat(r)]), [360, r, 1, 1], `row ${r}`);
  }
});

grid("grid - tile ids sort in date, lattice row, lattice column order and parse back", () => {
  assert.is(tileId("2004-02-29", 2, 3), "20040229-r2-c3");
  assert.equal(parseTileId("20040229-r2-c3"), { date: "2004-02-29", tileRow: 2, tileCol: 3 });
  assert.is(parseTileId("20040229-r2-c"), null);
  assert.is(parseTileId("x20040229-r2-c3"), null);
  const ids = windowToTiles([0, 0, 841, 681]).map((s) => tileId("2003-01-01", s.tileRow, s.tileCol));
  assert.equal([...ids].sort(), ids);
});

grid.run();

const numbers = suite("numbers");

numbers("numbers - float32 cells serialize as their shortest round-tripping decimal", () => {
  const cases: [number, string][] = [
    [24.2, "24.2"], [-3276.8, "-3276.8"], [0.1, "0.1"], [45.7, "45.7"], [-19.9, "-19.9"], [0, "0"], [60, "60"],
    [1e-7, "1e-7"], [16777217, "16777216"], [3.4028234663852886e38, "3.4028235e+38"], [NaN, "null"],
  ];
  for (const [value, text] of cases) assert.is(float32ToJson(Math.fround(value)), text, String(value));
  assert.is(JSON.stringify(float32ToShortest(Math.fround(24.2))), "24.2");
});

numbers("numbers - a tile written from tenths codes is byte for byte the tile written from their float32 cells", () => {
  const part = findTile([0, 0, GRID.width, GRID.height], 1, 2)!;
  assert.is(part.window[2] * part.window[3], 65536);
  // every code once (the missing code included), in a scattered order
  const codes = new Int16Array(65536);
  for (let i = 0; i < 65536; i++) codes[i] = ((i * 40503) & 0xffff) - 32768;
  const cells = Float32Array.from(codes, tenthsValue);
  const fromCodes = Buffer.from(writeTile("v", { variable: "air_temperature_max", unit: "degC" }, "2003-01-01", part, codes)).toString();
  assert.is(fromCodes, Buffer.from(writeTile("v", { variable: "air_temperature_max", unit: "degC" }, "2003-01-01", part, cells)).toString());
  const values: (number | null)[] = JSON.parse(fromCodes).tile.cells;
  assert.is(values.length, 65536);
  assert.is(values.filter((v) => v === null).length, 1);
  assert.is(values[codes.indexOf(-32767)], -3276.7);
  assert.is(values[codes.indexOf(32767)], 3276.7);
  assert.is(values[codes.indexOf(-1)], -0.1);
  assert.is(values[codes.indexOf(240)], 24);
});

numbers("numbers - shortest decimals round-trip and are minimal for many float32 values", () => {
  let seed = 7;
  const bits = new Uint32Array(1);
  const f = new Float32Array(bits.buffer);
  for (let i = 0; i < 20000; i++) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    bits[0] = seed;
    const v = f[0];
    if (!Number.isFinite(v)) continue;
    const s = float32ToShortest(v)!;
    assert.is(Math.fround(s), v);
    const digits = s.toExponential().split("e")[0].replace(/[-.]/g, "").length;
    if (digits > 1) assert.is.not(Math.fround(Number(v.toPrecision(digits - 1))), v);
  }
});

numbers.run();

const cursors = suite("cursors");

cursors("cursors - issued cursors decode; edited, foreign and malformed ones do not", async () => {
  const c = await encodeCursor("v1", "layers", 200);
  assert.ok(/^200-[0-9a-f]{12}$/.test(c));
  assert.is(await decodeCursor("v1", "layers", c), 200);
  assert.is(await decodeCursor("v2", "layers", c), null);
  assert.is(await decodeCursor("v1", "observations", c), null);
  assert.is(await decodeCursor("v1", "layers", c.replace("200", "300")), null);
  assert.is(await decodeCursor("v1", "layers", "0-000000000000"), null);
  assert.is(await decodeCursor("v1", "layers", "abc"), null);
  assert.is(versionId("silo-tmax", "2003-01-01", "2003-01-31", "e165b22947cfbbc5ffff"), "silo-tmax-20030101-20030131-e165b22947cfbbc5");
});

cursors.run();

const dates = suite("dates");

dates("dates - calendar validity follows leap-year rules; ranges are inclusive across month and year ends", () => {
  const cases: [string, boolean][] = [
    ["2004-02-29", true], ["2000-02-29", true], ["2003-02-29", false], ["1900-02-29", false], ["2003-04-31", false],
    ["2003-12-31", true], ["2003-13-01", false], ["2003-00-10", false], ["2003-1-01", false], ["0099-01-01", true],
  ];
  for (const [date, valid] of cases) assert.is(isCalendarDate(date), valid, date);
  assert.equal(listDates("2004-02-27", "2004-03-01"), ["2004-02-27", "2004-02-28", "2004-02-29", "2004-03-01"]);
  assert.equal(listDates("2003-12-31", "2004-01-01"), ["2003-12-31", "2004-01-01"]);
  assert.equal(listDates("2003-01-02", "2003-01-01"), []);
  assert.is(listDates("2003-01-01", "2003-12-31").length, 365);
});

dates.run();
