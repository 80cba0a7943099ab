// The place rule, table-driven: one cell for a longitude and latitude (format/grid.ts lonLatToCell) for points inside
// cells, on every edge and corner, on the grid's outer edges and just outside, the same from the series route over
// HTTP, the mirror client (its series call and its 31-day queries), the explorer's pointer and docs/clients.md's Python.

import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { AnswerError, createMirrorClient } from "../../client/index.js";
import { startMirrorServer } from "../../client/mirror-server.js";
import { planSeries } from "../../client/series.js";
import { pointerToCell } from "../../explorer/pointer.js";
import { GRID, bboxToWindow, colToLon, lonLatToCell, rowToLat } from "../../format/grid.js";
import { docBlock } from "../docs/doc-blocks.js";
import { buildDemoDist, request, withServer } from "../support/server-fixture.js";

type Cell = { col: number; row: number } | null;

/**
 * Points and their cells. Column edges lie at 111.975 + 0.05k, row edges at -9.975 - 0.05k: on a column edge the
 * cell east of it, on a row edge the cell north of it; the grid's outer edges hold the cells inside them.
 */
const TABLE: [number, number, Cell, string][] = [
  [133.85, -23.7, { col: 437, row: 274 }, "a centre"],
  [133.86, -23.71, { col: 437, row: 274 }, "inside, off the centre"],
  [133.8251, -23.7249, { col: 437, row: 274 }, "inside, near its north-west corner"],
  [133.8749, -23.6751, { col: 437, row: 274 }, "inside, near its south-east corner"],
  [133.825, -23.7, { col: 437, row: 274 }, "its west edge: the cell east of it"],
  [133.875, -23.7, { col: 438, row: 274 }, "its east edge: the next cell east"],
  [133.85, -23.675, { col: 437, row: 273 }, "its north edge: the cell north of it"],
  [133.85, -23.725, { col: 437, row: 274 }, "its south edge: this cell, north of it (the mirror's old rule gave row 275)"],
  [133.825, -23.675, { col: 437, row: 273 }, "its north-west corner: east and north"],
  [133.875, -23.675, { col: 438, row: 273 }, "its north-east corner"],
  [133.825, -23.725, { col: 437, row: 274 }, "its south-west corner"],
  [133.875, -23.725, { col: 438, row: 274 }, "its south-east corner"],
  [133.825000001, -23.7, { col: 437, row: 274 }, "a nano-degree east of an edge"],
  [133.824999999, -23.7, { col: 436, row: 274 }, "a nano-degree west of an edge"],
  [133.85, -23.724999999, { col: 437, row: 274 }, "a nano-degree north of an edge"],
  [133.85, -23.725000001, { col: 437, row: 275 }, "a nano-degree south of an edge"],
  [142.325, -20, { col: 607, row: 200 }, "an edge floating division puts west of itself (606.9999999999999)"],
  [111.975, -23.7, { col: 0, row: 274 }, "the grid's west edge"],
  [154.025, -23.7, { col: 840, row: 274 }, "the grid's east edge: the cell inside"],
  [133.85, -9.975, { col: 437, row: 0 }, "the grid's north edge"],
  [133.85, -44.025, { col: 437, row: 680 }, "the grid's south edge: the cell inside"],
  [111.975, -9.975, { col: 0, row: 0 }, "the grid's north-west corner"],
  [154.025, -9.975, { col: 840, row: 0 }, "its north-east corner"],
  [111.975, -44.025, { col: 0, row: 680 }, "its south-west corner"],
  [154.025, -44.025, { col: 840, row: 680 }, "its south-east corner"],
  [111.975000001, -9.975000001, { col: 0, row: 0 }, "just inside the north-west corner"],
  [154.024999999, -44.024999999, { col: 840, row: 680 }, "just inside the south-east corner"],
  [111.974999999, -23.7, null, "just west of the grid"],
  [154.025000001, -23.7, null, "just east of the grid"],
  [133.85, -9.974999999, null, "just north of the grid"],
  [133.85, -44.025000001, null, "just south of the grid"],
  [111.97, -9.97, null, "outside its north-west corner"],
  [154.03, -44.03, null, "outside its south-east corner"],
];

const DAY = "2003-01-01";
const describe = (lon: number, lat: number, what: string) => `${lon}, ${lat} (${what})`;

/** The cell of a series answer's one place, from the cell centre it names. */
function cellOfAnswer(json: { manifest: { places: { longitude: number; latitude: number }[] } }): Cell {
  const [{ longitude, latitude }] = json.manifest.places;
  return lonLatToCell(longitude, latitude);
}

const place = suite("the place rule");

place("place - the rule itself: every case of the table, and each cell's centre and edges for a whole row and column", () => {
  for (const [lon, lat, cell, what] of TABLE) assert.equal(lonLatToCell(lon, lat), cell, describe(lon, lat, what));
  // every cell's centre is its own cell, its west and north edges too, its east and south edges the next cells'
  for (let col = 0; col < GRID.width; col++) {
    assert.equal(lonLatToCell(colToLon(col), -20), { col, row: 200 });
    assert.equal(lonLatToCell(colToLon(col) - 0.025, -20)!.col, col, `west edge of column ${col}`);
    assert.equal(lonLatToCell(colToLon(col) + 0.025, -20)!.col, Math.min(col + 1, GRID.width - 1), `east edge of column ${col}`);
  }
  for (let row = 0; row < GRID.height; row++) {
    assert.equal(lonLatToCell(130, rowToLat(row)), { col: 360, row });
    assert.equal(lonLatToCell(130, rowToLat(row) + 0.025)!.row, Math.max(row - 1, 0), `north edge of row ${row}`);
    assert.equal(lonLatToCell(130, rowToLat(row) - 0.025)!.row, row, `south edge of row ${row}`);
  }
});

place("place - the series route over HTTP, the mirror client's series call and 31-day queries, the explorer and the docs' Python give the same cells", async () => {
  const dist = await buildDemoDist();
  const mirror = await startMirrorServer({ dist });
  const client = createMirrorClient({ baseUrl: mirror.url });
  try {
    await withServer(dist, async (served) => {
      for (const [lon, lat, cell, what] of TABLE) {
        const where = describe(lon, lat, what);
        const answer = await request(served, `/api/v1/series?lat=${lat}&lon=${lon}&start=${DAY}&end=${DAY}&format=json`);
        if (cell) {
          assert.is(answer.status, 200, `${where}: ${answer.text}`);
          assert.equal(cellOfAnswer(answer.json()), cell, `the server: ${where}`);
        } else {
          assert.is(answer.status, 400, where);
          assert.equal(answer.json().issues[0].code, "out_of_range", where);
        }
        const mirrored = await client.series({ lat, lon, start: DAY, end: DAY, format: "json" }).catch((err: unknown) => err);
        if (cell) assert.equal(cellOfAnswer((mirrored as { json(): never }).json()), cell, `the mirror client: ${where}`);
        else assert.is((mirrored as AnswerError).status, 400, `the mirror client: ${where}`);
        const queries = (() => {
          try {
            return planSeries([[lon, lat]], DAY, DAY, "json", undefined) as { region: { bbox: [number, number, number, number] } }[];
          } catch {
            return null;
          }
        })();
        const window = queries && bboxToWindow(queries[0].region.bbox);
        assert.equal(window ? { col: window[0], row: window[1] } : null, cell, `the mirror client's 31-day queries: ${where}`);
        // the explorer's map pictures the grid a pixel a cell: a pointer at the point's place on it
        const x = (lon * 1000 - GRID.westEdgeMilliDeg) / (GRID.width * GRID.cellMilliDeg);
        const y = (GRID.northEdgeMilliDeg - lat * 1000) / (GRID.height * GRID.cellMilliDeg);
        assert.equal(pointerToCell(x, y), cell, `the explorer: ${where}`);
      }
    });
  } finally {
    await mirror.close();
  }
});

place("place - docs/clients.md's silo_cell (the Zarr view's cell of a place) agrees with every case of the table", async () => {
  const points = JSON.stringify(TABLE.map(([lon, lat]) => [lon, lat]));
  const script = `${docBlock("docs/clients.md", "def silo_cell(lon, lat):")}\nimport json\nprint(json.dumps([silo_cell(lon, lat) for lon, lat in json.loads(${JSON.stringify(points)})]))\n`;
  const { stdout } = await promisify(execFile)("python3", ["-c", script], { encoding: "utf8" });
  const cells = JSON.parse(stdout.trim().split("\n").pop()!) as ([number, number] | null)[];
  TABLE.forEach(([lon, lat, cell, what], i) => assert.equal(cells[i] && { col: cells[i]![0], row: cells[i]![1] }, cell, `the docs: ${describe(lon, lat, what)}`));
});

place.run();
