// Resolve and query at the size bounds (docs/contract.md §3), and 413 plans followed to the end over real HTTP: every
// planned request answers within every limit, and their rows, concatenated in order, are the rows asked for.

import { rmSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { type Window, bboxToWindow } from "../../format/grid.js";
import { listDates } from "../../format/dates.js";
import { publish } from "../../pipeline/publish/publish.js";
import { writeSiloDays } from "../support/helpers.js";
import {
  CSV_HEADER_LINE,
  type Cells,
  DATES_A,
  type Fixture,
  type QueryRow,
  type Served,
  WINDOW_A,
  assertError,
  buildDemoDist,
  buildFixture,
  expectCsv,
  expectRows,
  post,
  readRecords,
  requestFor,
  rowToCsv,
  valueA,
  withServer,
} from "../support/server-fixture.js";

const MAX_BYTES = 1_000_000;
const MAX_ROWS = 10_000;

/**
 * Version L: values with six significant digits around -0.00001 ("-0.0000123456"), so a CSV row is about 106
 * bytes and a CSV answer passes 1,000,000 bytes within 10,000 rows. With version A's values (about 95 bytes a
 * CSV row) the 10,000-row bound always comes first, so CSV's byte bound needs values this long.
 */
const WINDOW_L: Window = [300, 300, 121, 121];
const DATES_L = ["2004-02-01", "2004-02-02"];

function valueL(col: number, row: number, day: number): number {
  const k = (col * 7919 + row * 104_729 + day * 31) % 900_000;
  return -Number(`0.0000${100_000 + k}`);
}

interface Version {
  id: string;
  window: Window;
  dates: string[];
  valueOf: (col: number, row: number, day: number) => number | null;
  dist: string;
}

let A: Version;
let L: Version;
let publishingL: Promise<Version> | null = null;

/** Version L in a dist of its own (the shared fixture's catalog stays as the other suites expect it). */
function publishL(): Promise<Version> {
  publishingL ??= (async () => {
    const root = await mkdtemp(join(tmpdir(), "server-plans-"));
    process.on("exit", () => rmSync(root, { recursive: true, force: true }));
    const sources = join(root, "sources");
    const dist = join(root, "dist");
    await writeSiloDays(sources, DATES_L, WINDOW_L, (col, row, _date, day) => valueL(col, row, day));
    await publish({ sources, dist, log: () => {}, publishedAt: "2024-01-01T00:00:00Z", observations: false });
    const [record] = await readRecords(dist);
    return { id: record.id, window: WINDOW_L, dates: DATES_L, valueOf: valueL, dist };
  })();
  return publishingL;
}

async function useVersions(): Promise<void> {
  const fixture: Fixture = await buildFixture();
  A = { id: fixture.a.id, window: WINDOW_A, dates: DATES_A, valueOf: valueA, dist: fixture.dist };
  L = await publishL();
}

/** A data request over global cells in a format. */
function requestOf(cells: Cells, dates: string[], format: "json" | "csv"): Record<string, any> {
  return requestFor(cells, dates[0], dates[dates.length - 1], { format });
}

const rowsOf = (v: Version, cells: Cells, dates: string[]): QueryRow[] => expectRows(v.window, v.dates, v.valueOf, cells, dates);

/** Bytes of each cell's row (JSON with its separating comma, or a CSV line) over a version's window on one date, as 2-D prefix sums. */
function prefixSums(v: Version, date: string, format: "json" | "csv"): number[][] {
  const [c0, r0, w, h] = v.window;
  const sums = Array.from({ length: h + 1 }, () => new Array<number>(w + 1).fill(0));
  for (let r = 0; r < h; r++) {
    for (let c = 0; c < w; c++) {
      const [row] = rowsOf(v, { col: c0 + c, row: r0 + r, width: 1, height: 1 }, [date]);
      const bytes = format === "json" ? JSON.stringify(row).length + 1 : rowToCsv(row).length;
      sums[r + 1][c + 1] = bytes + sums[r][c + 1] + sums[r + 1][c] - sums[r][c];
    }
  }
  return sums;
}

interface Box {
  cells: Cells;
  rows: number;
  bytes: number;
}

/** The boxes of the window, on one date, whose answers come closest under and over the byte bound (at most 10,000 rows). */
function findBoundary(v: Version, date: string, format: "json" | "csv", overhead: number): { under: Box; over: Box } {
  const sums = prefixSums(v, date, format);
  const [c0, r0, w, h] = v.window;
  // JSON: the manifest, "[", rows with commas, "]" (no comma after the last row); CSV: header and lines
  const sizeOf = (x: number, y: number, width: number, height: number) =>
    overhead + sums[y + height][x + width] - sums[y][x + width] - sums[y + height][x] + sums[y][x] + (format === "json" ? 1 : 0);
  let under: Box | null = null;
  let over: Box | null = null;
  for (let height = 1; height <= h; height++) {
    for (let width = 1; width <= w; width++) {
      const rows = width * height;
      // 1,000 rows at least, so a JSON manifest's rowCount has the 4 digits of the probe's
      if (rows > MAX_ROWS || rows < 1000 || Math.abs(sizeOf(0, 0, width, height) - MAX_BYTES) > MAX_BYTES / 20) continue;
      for (let y = 0; y + height <= h; y++) {
        for (let x = 0; x + width <= w; x++) {
          const bytes = sizeOf(x, y, width, height);
          if (bytes <= MAX_BYTES ? under && bytes <= under.bytes : over && bytes >= over.bytes) continue;
          const box = { cells: { col: c0 + x, row: r0 + y, width, height }, rows, bytes };
          if (bytes <= MAX_BYTES) under = box;
          else over = box;
        }
      }
    }
  }
  if (!under || !over) throw new Error(`no ${format} boundary in ${v.id} on ${date}`);
  return { under, over };
}

async function resolveOf(served: Served, body: unknown): Promise<any> {
  const answer = await post(served, "/api/v1/data/resolve", body);
  assert.is(answer.status, 200, answer.text);
  return answer.json();
}

/** Resolve and query of one box agree: available and 200 of exactly `bytes`, or request_too_large and 413 saying `bytes`. */
async function assertAgree(served: Served, v: Version, box: Box, date: string, format: "json" | "csv"): Promise<void> {
  const body = requestOf(box.cells, [date], format);
  const resolution = await resolveOf(served, body);
  const answer = await post(served, "/api/v1/data/query", body);
  const where = `${format} ${box.cells.width} x ${box.cells.height} = ${box.rows} rows, ${box.bytes} bytes`;
  if (box.bytes <= MAX_BYTES) {
    assert.is(resolution.available, true, where);
    assert.is(resolution.reason, "available", where);
    assert.is(resolution.selection.rowCount, box.rows, where);
    assert.is(resolution.selection.datasetVersion, v.id, where);
    assert.is(answer.status, 200, `${where}: ${answer.text.slice(0, 300)}`);
    assert.is(answer.bytes.length, box.bytes, where);
  } else {
    assert.equal(resolution, { available: false, reason: "request_too_large", selection: null, acquisitionEnabled: false }, where);
    const error = assertError(answer, 413, "response_too_large");
    assert.ok(error.message.includes(`would be ${box.bytes} bytes`), `${where}: ${error.message}`);
    assert.ok(Array.isArray(error.plan) && error.plan.length >= 2, where);
  }
}

const bounds = suite("resolve and query at the size bounds");
bounds.before(useVersions);

bounds("bounds - JSON: the boxes just under and just over 1,000,000 bytes, resolve and query agree", async () => {
  const date = "2004-02-10";
  await withServer(A.dist, async (served) => {
    // what a JSON answer holds besides its data array, from one 1,000-row answer (the manifest has a 4-digit rowCount)
    const probe = { col: 200, row: 200, width: 10, height: 100 };
    const sample = await post(served, "/api/v1/data/query", requestOf(probe, [date], "json"));
    assert.is(sample.status, 200, sample.text.slice(0, 300));
    const manifestBytes = sample.bytes.length - JSON.stringify(rowsOf(A, probe, [date])).length;
    const { under, over } = findBoundary(A, date, "json", manifestBytes);
    assert.ok(MAX_BYTES - under.bytes < 100 && over.bytes - MAX_BYTES < 100, `not just around the bound: ${under.bytes}, ${over.bytes}`);
    await assertAgree(served, A, under, date, "json");
    await assertAgree(served, A, over, date, "json");
  });
});

bounds("bounds - CSV: the boxes just under and just over 1,000,000 bytes, resolve and query agree", async () => {
  const date = DATES_L[1];
  const { under, over } = findBoundary(L, date, "csv", CSV_HEADER_LINE.length);
  assert.ok(MAX_BYTES - under.bytes < 100 && over.bytes - MAX_BYTES < 100, `not just around the bound: ${under.bytes}, ${over.bytes}`);
  await withServer(L.dist, async (served) => {
    await assertAgree(served, L, under, date, "csv");
    await assertAgree(served, L, over, date, "csv");
    // the rows themselves, byte for byte
    const answer = await post(served, "/api/v1/data/query", requestOf(under.cells, [date], "csv"));
    assert.is(answer.text, expectCsv(rowsOf(L, under.cells, [date])));
  });
});

bounds("bounds - CSV on short values: 10,000 rows stay under 1,000,000 bytes, so the row bound decides", async () => {
  await withServer(A.dist, async (served) => {
    const most = requestOf({ col: 200, row: 200, width: 100, height: 100 }, ["2004-02-20"], "csv");
    assert.is((await resolveOf(served, most)).selection.rowCount, MAX_ROWS);
    const answer = await post(served, "/api/v1/data/query", most);
    assert.is(answer.status, 200);
    assert.ok(answer.bytes.length < MAX_BYTES, `${answer.bytes.length}`);
    // 41 x 61 cells x 4 days = 10,004 rows
    const more = requestOf({ col: 200, row: 200, width: 41, height: 61 }, DATES_A.slice(0, 4), "csv");
    assert.equal(await resolveOf(served, more), { available: false, reason: "request_too_large", selection: null, acquisitionEnabled: false });
    const error = assertError(await post(served, "/api/v1/data/query", more), 413, "request_too_large");
    assert.ok(error.plan.length >= 2);
  });
});

bounds.run();

// ---------------------------------------------------------------------------------------------------------------

interface PlanCase {
  name: string;
  version: () => Version;
  cells: Cells;
  dates: () => string[];
  format: "json" | "csv";
  error: "request_too_large" | "response_too_large";
  /** whether some date must be split into latitude bands (else the plan is ranges of whole dates) */
  bands: boolean;
}

const CASES: PlanCase[] = [
  {
    name: "request_too_large over 10,000 rows, split by dates, CSV",
    version: () => A,
    cells: { col: 200, row: 200, width: 60, height: 60 },
    dates: () => DATES_A.slice(0, 10),
    format: "csv",
    error: "request_too_large",
    bands: false,
  },
  {
    name: "request_too_large on one day, split into latitude bands, CSV",
    version: () => A,
    cells: { col: 200, row: 200, width: 121, height: 121 },
    dates: () => ["2004-02-29"],
    format: "csv",
    error: "request_too_large",
    bands: true,
  },
  {
    name: "request_too_large over several days, each in bands, JSON",
    version: () => A,
    cells: { col: 200, row: 200, width: 121, height: 121 },
    dates: () => DATES_A.slice(27, 30),
    format: "json",
    error: "request_too_large",
    bands: true,
  },
  {
    name: "response_too_large, split by dates, JSON",
    version: () => A,
    cells: { col: 230, row: 240, width: 50, height: 50 },
    dates: () => DATES_A.slice(5, 8),
    format: "json",
    error: "response_too_large",
    bands: false,
  },
  {
    name: "response_too_large on one day, split into bands, JSON",
    version: () => A,
    cells: { col: 205, row: 205, width: 100, height: 100 },
    dates: () => ["2004-03-01"],
    format: "json",
    error: "response_too_large",
    bands: true,
  },
  {
    name: "response_too_large, split by dates, CSV",
    version: () => L,
    cells: { col: 300, row: 300, width: 70, height: 70 },
    dates: () => DATES_L,
    format: "csv",
    error: "response_too_large",
    bands: false,
  },
  {
    name: "response_too_large on one day, split into bands, CSV",
    version: () => L,
    cells: { col: 300, row: 300, width: 100, height: 100 },
    dates: () => [DATES_L[0]],
    format: "csv",
    error: "response_too_large",
    bands: true,
  },
];

/** The rows of CSV answers concatenated in order, the first header kept once. */
function concatCsv(texts: string[]): string {
  return CSV_HEADER_LINE + texts.map((t) => t.slice(CSV_HEADER_LINE.length)).join("");
}

const plans = suite("413 plans followed to the end");
plans.before(useVersions);

for (const c of CASES) {
  plans(`plans - ${c.name}`, async () => {
    const v = c.version();
    const dates = c.dates();
    const original = requestOf(c.cells, dates, c.format);
    const expected = rowsOf(v, c.cells, dates);
    await withServer(v.dist, async (served) => {
      assert.equal(await resolveOf(served, original), { available: false, reason: "request_too_large", selection: null, acquisitionEnabled: false });
      const error = assertError(await post(served, "/api/v1/data/query", original), 413, c.error);
      assert.match(error.message, /plan/);
      const plan: Record<string, any>[] = error.plan;
      assert.ok(plan.length >= 2, `${plan.length} parts`);

      // complete bodies: the original's fields and format, pinned, only the box and the period narrowed
      for (const part of plan) {
        const { region, period, dataset_version, ...rest } = part;
        const { region: _r, period: _p, ...same } = original;
        assert.equal(rest, same);
        assert.is(dataset_version, v.id);
        assert.is(region.crs, "EPSG:4326");
      }
      const split = plan.some((p) => p.period.start === p.period.end && JSON.stringify(p.region.bbox) !== JSON.stringify(original.region.bbox));
      assert.is(split, c.bands, "latitude bands only when one date is too much");

      const texts: string[] = [];
      const data: QueryRow[] = [];
      for (const part of plan) {
        const resolution = await resolveOf(served, part);
        assert.is(resolution.available, true, JSON.stringify(part));
        assert.ok(resolution.selection.rowCount <= MAX_ROWS);
        const answer = await post(served, "/api/v1/data/query", part);
        assert.is(answer.status, 200, answer.text.slice(0, 300));
        assert.ok(answer.bytes.length <= MAX_BYTES, `${answer.bytes.length} bytes`);
        if (c.format === "csv") {
          texts.push(answer.text);
        } else {
          const result = answer.json();
          assert.is(result.manifest.datasetVersion, v.id);
          assert.is(result.manifest.rowCount, resolution.selection.rowCount);
          data.push(...result.data);
          // the same part as CSV: its rows, for the byte-for-byte comparison below
          const csv = await post(served, "/api/v1/data/query", { ...part, format: "csv" });
          assert.is(csv.status, 200);
          texts.push(csv.text);
        }
      }
      if (c.format === "json") assert.is(JSON.stringify(data), JSON.stringify(expected), "the JSON rows, in order");
      assert.is(concatCsv(texts), expectCsv(expected), "the CSV rows, in order, byte for byte");
    });
  });
}

plans.run();

// ---------------------------------------------------------------------------------------------------------------

/** The rows of a 200 query answer as CSV lines (a JSON answer's rows written as CSV). */
const csvRows = (answer: { text: string; json: () => any }, format: string) =>
  format === "csv" ? answer.text.slice(CSV_HEADER_LINE.length) : (answer.json().data as QueryRow[]).map(rowToCsv).join("");

/**
 * Follows a query to its end as a client does: a 200 gives rows; a 413 gives `plan` (each part asked in order)
 * and perhaps `planRest` (asked after the parts). Returns the rows' CSV lines and the 413 bodies met.
 */
async function followToEnd(served: Served, body: Record<string, any>, bound: number): Promise<{ lines: string; refusals: any[] }> {
  const refusals: any[] = [];
  let lines = "";
  let next: Record<string, any> | undefined = body;
  while (next) {
    const answer = await post(served, "/api/v1/data/query", next);
    if (answer.status === 200) {
      lines += csvRows(answer, body.format);
      break;
    }
    assert.ok(answer.bytes.length <= bound, `a 413 of ${answer.bytes.length} bytes, over ${bound}`);
    const error = assertError(answer, 413, next === body ? answer.json().error : "request_too_large");
    refusals.push(error);
    for (const part of error.plan) {
      const rows = await post(served, "/api/v1/data/query", part);
      assert.is(rows.status, 200, rows.text.slice(0, 300));
      lines += csvRows(rows, body.format);
    }
    if (error.planRest) {
      // the original request, pinned, from the first date the plan does not cover
      const { period, dataset_version, ...rest } = error.planRest;
      const { period: _p, dataset_version: _v, ...same } = body;
      assert.equal(rest, same);
      assert.is(period.end, body.period.end);
      assert.is(period.start > error.plan[error.plan.length - 1].period.end, true, "planRest starts after the plan's last date");
      assert.ok(typeof dataset_version === "string");
    }
    next = error.planRest;
  }
  return { lines, refusals };
}

const rest = suite("413 plans bounded by planRest");
rest.before(useVersions);

rest("planRest - whole-date ranges over a scaled-down 413 bound: plan, then planRest until absent, gives every row in order", async () => {
  const bound = 6000;
  // 71 x 71 cells: one date is one part (5,041 rows), two are over 10,000 rows; 31 parts do not fit 6,000 bytes
  const cells = { col: 230, row: 230, width: 71, height: 71 };
  const dates = DATES_A.slice(0, 31);
  await withServer(
    A.dist,
    async (served) => {
      const { lines, refusals } = await followToEnd(served, requestOf(cells, dates, "csv"), bound);
      assert.ok(refusals.length >= 3, `${refusals.length} 413s`);
      assert.ok(refusals.slice(0, -1).every((r) => r.planRest), "every 413 but the last carries planRest");
      assert.is(refusals[refusals.length - 1].planRest, undefined, "the last 413 carries no planRest");
      assert.match(refusals[0].message, /planRest asks for/);
      assert.is(CSV_HEADER_LINE + lines, expectCsv(rowsOf(A, cells, dates)));
    },
    { bounds: { planBytes: bound } },
  );
});

rest("planRest - dates split into latitude bands, JSON: each 413 within its bound, whole dates only, rows in order", async () => {
  const bound = 6000;
  const cells = { col: 200, row: 200, width: 121, height: 121 };
  const dates = DATES_A.slice(10, 14);
  await withServer(
    A.dist,
    async (served) => {
      const original = requestOf(cells, dates, "json");
      const first = assertError(await post(served, "/api/v1/data/query", original), 413, "request_too_large");
      assert.ok(first.planRest, "the first 413 carries planRest");
      // whole dates only: the plan's last date is not split between it and planRest
      const planned = new Set(first.plan.map((p: any) => p.period.start));
      assert.not.ok(planned.has(first.planRest.period.start));
      const { lines, refusals } = await followToEnd(served, original, bound);
      assert.ok(refusals.length >= 2, `${refusals.length} 413s`);
      assert.is(CSV_HEADER_LINE + lines, expectCsv(rowsOf(A, cells, dates)));
    },
    { bounds: { planBytes: bound } },
  );
});

rest("planRest - absent when the whole plan fits the 413 (the contract's bound)", async () => {
  await withServer(A.dist, async (served) => {
    const error = assertError(await post(served, "/api/v1/data/query", requestOf({ col: 200, row: 200, width: 121, height: 121 }, DATES_A.slice(0, 31), "json")), 413, "request_too_large");
    assert.is(error.planRest, undefined);
    assert.is(new Set(error.plan.map((p: any) => p.period.start)).size, 31);
  });
});

rest.run();

// ---------------------------------------------------------------------------------------------------------------

const wholeGrid = suite("413 of the whole grid over 31 days");

/** The rows a planned part selects (its box in whole cells x its dates), and its window. */
function partRows(part: any): { window: Window; days: string[] } {
  const window = bboxToWindow(part.region.bbox)!;
  return { window, days: listDates(part.period.start, part.period.end) };
}

for (const format of ["json", "csv"] as const) {
  wholeGrid(`whole grid - ${format}: every 413 under 1,000,000 bytes; plan and planRest to the end hold 17,754,351 rows in order`, async () => {
    const dist = await buildDemoDist();
    await withServer(dist, async (served) => {
      const original = requestFor({ col: 0, row: 0, width: 841, height: 681 }, "2003-01-01", "2003-01-31", { format });
      let next: any = original;
      let rows = 0;
      let refusals = 0;
      // where the rows reached: the date, then the next cell row of that date
      let at = { date: "2003-01-01", row: 0 };
      while (next) {
        const answer = await post(served, "/api/v1/data/query", next);
        assert.ok(answer.bytes.length <= MAX_BYTES, `413 number ${refusals + 1}: ${answer.bytes.length} bytes`);
        const error = assertError(answer, 413, "request_too_large");
        refusals++;
        for (const part of error.plan) {
          const { window, days } = partRows(part);
          assert.ok(window[2] * window[3] * days.length <= MAX_ROWS);
          assert.equal([window[0], window[2]], [0, 841], "whole cell rows");
          // in order: the same date continues with the next band, or a new date starts at the top
          if (days[0] !== at.date) at = { date: days[0], row: 0 };
          assert.equal([days[0], window[1]], [at.date, at.row], JSON.stringify(part));
          rows += window[2] * window[3] * days.length;
          at = window[1] + window[3] === 681 ? { date: listDates(days[days.length - 1], "2003-02-01")[1], row: 0 } : { date: days[0], row: window[1] + window[3] };
        }
        next = error.planRest;
        if (next) assert.equal([next.period.start, at.row], [at.date, 0], "planRest starts at the first date not planned");
      }
      assert.is(rows, 17_754_351);
      assert.is(at.date, "2003-02-01");
      if (format === "json") assert.ok(refusals >= 2, `${refusals} 413s`);
    });
  });
}

wholeGrid.run();
