// Server test fixture: a small dist published by the real pipeline from generated SILO-window GeoTIFFs, plus an HTTP client.

import { cp, open, readFile } from "node:fs/promises";
import http from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import * as assert from "uvu/assert";
import type { Coverage } from "../../format/coverage.js";
import { publish } from "../../pipeline/publish/publish.js";
import { writeDemo } from "../../pipeline/ingest/demo.js";
import { Archive } from "../../format/archive.js";
import { Snapshot } from "../../format/snapshot.js";
import { type RasterView, openVersion } from "../../format/versions.js";
import { LocalStorage, nodePlatform } from "../../format/local.js";
import { type Ref, objectPath } from "../../format/objects.js";
import type { DayHeader } from "../../format/day-piece.js";
import type { DayEntry, YearPage } from "../../format/version-index.js";
import type { StoredEntry } from "../../format/entries.js";
import { GroupLattice, type SeriesSpan, SpanLayout, groupEntry } from "../../format/series.js";
import { addToCatalog, updateCandidates, writeCatalog } from "../../pipeline/store/catalog.js";
import { ObjectStore } from "../../pipeline/store/objects.js";
import { makeDataRequest } from "../../api/query/request.js";
import type { RouteTable } from "../../api/routes.js";
import { sha256Hex } from "../../format/hash.js";
import type { Dataset } from "../../format/records.js";
import type { Window } from "../../format/grid.js";
import { toIssues, validatorFor } from "../../schemas/validate.js";
import { type App, type AppOptions, createApp } from "../../server/app.js";
import { preparedFixtures } from "./fixture-cache.js";
import { makeWorkDir, writeSiloDays } from "./helpers.js";
import { startNginx } from "./nginx.js";
import { openApiValidator } from "./openapi-validator.js";

/** Version A: cols 200..320, rows 200..320 crosses lattice column 256 and row 256, so four tiles a day. */
export const WINDOW_A: Window = [200, 200, 121, 121];
/** 2004-02-01 .. 2004-03-04: 33 days, with 28 and 29 February and 1 March, enough for 31- and 32-day periods. */
export const DATES_A = listDates("2004-02-01", 33);
/** Versions B and C (same published_at, so id order decides): a small window in tile r0-c1 on three days. */
export const WINDOW_B: Window = [300, 200, 11, 11];
export const DATES_B = ["2004-02-28", "2004-02-29", "2004-03-01"];
export const VALUE_B = 50;
export const VALUE_C = 51;

export const PUBLISHED_A = "2024-01-01T00:00:00Z";
export const PUBLISHED_BC = "2024-02-01T00:00:00Z";
export const PUBLISHED_PAID = "2024-03-01T00:00:00Z";

function listDates(first: string, count: number): string[] {
  const start = Date.parse(`${first}T00:00:00Z`);
  return Array.from({ length: count }, (_, i) => new Date(start + i * 86_400_000).toISOString().slice(0, 10));
}

/** Ocean in version A: the bottom-right corner block and one cell at the lattice corner, on every day. */
export function isOceanA(col: number, row: number): boolean {
  return (col >= 310 && row >= 310) || (col === 255 && row === 255);
}

/**
 * The value of a cell of version A on day index `day`: at most 4 decimals and 6 significant digits, so its
 * float32 reads back as exactly this decimal; distinct for every cell of a day. null for ocean.
 */
export function valueA(col: number, row: number, day: number): number | null {
  if (isOceanA(col, row)) return null;
  return Number((day + (col - 200) / 10 + (row - 200) / 10000).toFixed(4));
}

export interface Fixture {
  /** a folder of this process's own, for copies and scratch files (the dist may be shared: never write into it) */
  root: string;
  dist: string;
  /** every catalog record (restricted included), in id order */
  records: Dataset[];
  a: Dataset;
  b: Dataset;
  c: Dataset;
  paid: Dataset;
  restricted: Dataset;
  noaa: Dataset;
}

/**
 * The fixture's recipe: versions A, B, C, paid and restricted published from generated sources into root/dist.
 * test/support/prepare-fixtures.ts runs it once per `make test`; a file run alone runs it through buildFixture.
 */
export async function publishFixture(root: string): Promise<void> {
  const dist = join(root, "dist");
  const sourcesA = join(root, "sources-a");
  const sourcesB = join(root, "sources-b");
  const sourcesC = join(root, "sources-c");
  await writeSiloDays(sourcesA, DATES_A, WINDOW_A, (col, row, _date, day) => valueA(col, row, day));
  await writeSiloDays(sourcesB, DATES_B, WINDOW_B, () => VALUE_B);
  await writeSiloDays(sourcesC, DATES_B, WINDOW_B, () => VALUE_C);
  const log = () => {};
  await publish({ sources: sourcesA, dist, log, publishedAt: PUBLISHED_A });
  await publish({ sources: sourcesB, dist, log, publishedAt: PUBLISHED_BC, datasetKey: "silo-tmax-b", observations: false });
  await publish({ sources: sourcesC, dist, log, publishedAt: PUBLISHED_BC, datasetKey: "silo-tmax-c", observations: false });
  await publish({ sources: sourcesA, dist, log, publishedAt: PUBLISHED_PAID, datasetKey: "silo-tmax-paid", accessLevel: "paid", observations: false });
  await publish({
    sources: sourcesA,
    dist,
    log,
    publishedAt: PUBLISHED_PAID,
    datasetKey: "silo-tmax-restricted",
    accessLevel: "restricted",
    observations: false,
  });
}

/**
 * When the demo dist of the tests was published: fixed, so every answer about it is the same on every run (the
 * OpenAPI document's examples are recorded from it, test/support/openapi-examples.ts). `make demo` publishes the same
 * versions, ids and values, at the time it runs.
 */
export const PUBLISHED_DEMO = "2003-02-01T00:00:00Z";

/** The demo's recipe: the generated sources (root/sources) published into root/dist. */
export async function publishDemo(root: string): Promise<void> {
  await writeDemo(join(root, "sources"));
  await publish({ sources: join(root, "sources"), dist: join(root, "dist"), log: () => {}, publishedAt: PUBLISHED_DEMO });
}

let building: Promise<Fixture> | null = null;

/**
 * One published dist shared by every server suite: the one `make test` prepared (shared by every process, read-only:
 * copyDist before changing it), else published here once per process. `root` is this process's own folder.
 */
export function buildFixture(): Promise<Fixture> {
  building ??= (async () => {
    const root = makeWorkDir("server-test");
    const prepared = preparedFixtures();
    const dist = prepared ? join(prepared, "fixture", "dist") : join(root, "dist");
    if (!prepared) await publishFixture(root);
    const records = await readRecords(dist);
    const byKey = (key: string) => {
      const found = records.find((d) => d.dataset_key === key);
      if (!found) throw new Error(`fixture: no ${key} version in the catalog`);
      return found;
    };
    return {
      root,
      dist,
      records,
      a: byKey("silo-tmax"),
      b: byKey("silo-tmax-b"),
      c: byKey("silo-tmax-c"),
      paid: byKey("silo-tmax-paid"),
      restricted: byKey("silo-tmax-restricted"),
      noaa: byKey("noaa-weather"),
    };
  })();
  return building;
}

/** The shared fixture and its version A's id, as every suite's tests see them once useFixture has run. */
export let fixture: Fixture;
export let A: string;

/**
 * A suite's `before` hook (`suite.before(useFixture)`, or awaited first in a longer one): builds or reuses the shared
 * dist and sets `fixture` and `A`, which the suites import (an import of a `let` follows its assignments).
 */
export async function useFixture(): Promise<void> {
  fixture = await buildFixture();
  A = fixture.a.id;
}

let buildingDemo: Promise<string> | null = null;

/**
 * The demo dist (the whole SILO grid, 2003-01-01..31, five variables), its sources beside it (../sources): the one
 * `make test` prepared (read-only: copy it before changing it), else published once per process; its folder.
 */
export function buildDemoDist(): Promise<string> {
  buildingDemo ??= (async () => {
    const prepared = preparedFixtures();
    if (prepared) return join(prepared, "demo", "dist");
    const root = makeWorkDir("demo-dist");
    await publishDemo(root);
    return join(root, "dist");
  })();
  return buildingDemo;
}

let copies = 0;

/** Flips every bit of one byte of a file in place (same size): damage a check must catch. */
export async function flipByte(file: string, position: number): Promise<void> {
  const handle = await open(file, "r+");
  try {
    const byte = Buffer.alloc(1);
    const { bytesRead } = await handle.read(byte, 0, 1, position);
    assert.is(bytesRead, 1, `${file} has a byte at ${position}`);
    byte[0] ^= 0xff;
    await handle.write(byte, 0, 1, position);
  } finally {
    await handle.close();
  }
}

/** A private copy of the fixture's dist, for tests that damage or edit files. */
export async function copyDist(fixture: Fixture): Promise<string> {
  const dist = join(fixture.root, `copy-${++copies}`);
  await cp(fixture.dist, dist, { recursive: true });
  return dist;
}

/** A dist's current catalog, read with the archive API (its own cache, nothing shared with a server). */
export async function openSnapshot(dist: string): Promise<Snapshot> {
  const archive = new Archive(new LocalStorage(dist), nodePlatform);
  const { pointer, sha256 } = await archive.readPointer();
  return new Snapshot(archive, pointer, sha256);
}

/** A raster version of a dist, opened as the server opens it. */
export async function openRaster(dist: string, record: Dataset): Promise<RasterView> {
  const view = await openVersion((await openSnapshot(dist)).archive, record);
  if (view.kind !== "raster") throw new Error(`${record.id} is not a raster version`);
  return view;
}

/** The day entry of `date` in `record`, its verified block directory, and its day piece: the path in the dist, the file on disk. */
export async function findDayPiece(dist: string, record: Dataset, date: string): Promise<{ day: DayEntry; header: DayHeader; path: string; file: string }> {
  const view = await openRaster(dist, record);
  const day = await view.findDay(date);
  if (!day) throw new Error(`${record.id} holds no ${date}`);
  const path = objectPath(day.piece.sha256, "day");
  return { day, header: await view.archive.readHeader(day), path, file: join(dist, path) };
}

/** The refs of a raster version's year page and month page holding `month` (YYYY-MM). */
export async function findPages(dist: string, record: Dataset, month: string): Promise<{ year: Ref; month: Ref }> {
  const view = await openRaster(dist, record);
  const year = view.index.years.find((y) => y.key === month.slice(0, 4))!;
  const page = await view.archive.readJson<YearPage>(year.ref);
  return { year: year.ref, month: page.months.find((m) => m.key === month)!.ref };
}

/** Every record of a dist's catalog tree, in id order. */
export async function readRecords(dist: string): Promise<Dataset[]> {
  const snapshot = await openSnapshot(dist);
  try {
    return (await snapshot.listRecords(null, 1e9, () => true)).records;
  } finally {
    snapshot.archive.storage.close?.();
  }
}

/** Rewrites the catalog of a dist copy with edited records, as a publish would write it (a new tree and pointer). */
export async function editRecords(dist: string, edit: (records: Dataset[]) => void): Promise<void> {
  const snapshot = await openSnapshot(dist);
  const records = (await snapshot.listRecords(null, 1e9, () => true)).records.map((r) => structuredClone(r));
  // coverage as read before the edit: an edit may point a record at an index this reader refuses
  const coverage = new Map<string, Coverage>();
  for (const record of records) {
    const view = await openVersion(snapshot.archive, record);
    if (view.kind === "raster") coverage.set(record.id, view.index.coverage);
  }
  edit(records);
  const store = new ObjectStore(dist);
  const root = await addToCatalog(store, null, records);
  const fresh = records.filter((r) => coverage.has(r.id)).map((record) => ({ record, coverage: coverage.get(record.id)! }));
  await writeCatalog(store, dist, snapshot.pointer.manifest, { catalog: root, candidates: updateCandidates([], fresh), explorer: snapshot.pointer.explorer ?? null });
}

export interface Served {
  app: App;
  url: string;
  port: number;
  /** the routes the app answers, when not the interface's: its answers are checked against their document */
  routes?: RouteTable;
}

/**
 * GETs `paths` pipelined on one connection that is not read until `meanwhile` has run: answers larger than the
 * kernel's socket buffers take (4 MB here) wait in the server's queue while `meanwhile` asks for others, so an answer
 * whose memory is given back before it was sent arrives changed. The responses in order, each its head and body.
 */
export async function pipelinedUnread(served: Served, paths: string[], meanwhile: () => Promise<unknown>): Promise<{ head: string; body: Buffer }[]> {
  const socket = connect(served.port, "127.0.0.1");
  socket.pause();
  socket.write(paths.map((path) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`).join(""));
  await new Promise((resolve) => setTimeout(resolve, 200));
  await meanwhile();
  const received: Buffer[] = [];
  /** The responses whole so far: each its head and the Content-Length bytes after it. */
  const parse = (all: Buffer) => {
    const responses: { head: string; body: Buffer }[] = [];
    for (let at = 0, end; (end = all.indexOf("\r\n\r\n", at)) >= 0; ) {
      const head = all.subarray(at, end).toString("latin1");
      const length = Number(/\r\nContent-Length: (\d+)/i.exec(head)![1]);
      if (all.length < end + 4 + length) break;
      responses.push({ head, body: all.subarray(end + 4, end + 4 + length) });
      at = end + 4 + length;
    }
    return responses;
  };
  const responses = await new Promise<{ head: string; body: Buffer }[]>((resolve) => {
    socket.on("data", (data: Buffer) => {
      received.push(data);
      const whole = parse(Buffer.concat(received));
      if (whole.length === paths.length) resolve(whole);
    });
    socket.resume();
  });
  socket.destroy();
  return responses;
}

/** Starts the real app on an ephemeral port, runs `fn`, and always closes it. */
export async function withServer<T>(
  dist: string,
  fn: (served: Served) => Promise<T>,
  options: Partial<AppOptions> = {},
): Promise<T> {
  // functional tests are not about load shedding: no wait for a turn gives up (a test of shedding sets its limits)
  const limits = { queue: 10_000, queuePerClient: 10_000, queueMs: 600_000, ...options.limits };
  // SERVER_DIST=nginx: the same suites against a server over the dist served by nginx (make serve DIST=<url>)
  const host = process.env.SERVER_DIST === "nginx" ? await startNginx(dist) : null;
  try {
    const warn = options.warn ?? (() => {});
    // warnings name the dist's URL where they would name its folder: the suites' expected texts name the folder
    const where = host ? { dist: host.url, watchMs: options.watchMs ?? 100, warn: (m: string) => warn(m.replaceAll(host.url, `${dist}/`).replaceAll(": missing (HTTP 404)", ": missing")) } : { dist, warn };
    const app = await createApp({ ...options, ...where, limits, log: options.log ?? false });
    await new Promise<void>((resolve) => app.server.listen(0, "127.0.0.1", resolve));
    const address = app.server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    try {
      return await fn({ app, url: `http://127.0.0.1:${port}`, port, routes: options.routes });
    } finally {
      await app.close();
    }
  } finally {
    await host?.stop();
  }
}

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  bytes: Buffer;
  text: string;
  json: () => any;
}

export interface RequestSpec {
  method?: string;
  headers?: Record<string, string | number>;
  body?: string | Buffer;
  /** send the body in chunks without Content-Length */
  chunked?: boolean;
}

/**
 * One real HTTP exchange with node:http (no automatic decompression: the bytes are the bytes on the wire). Every
 * answer is checked against the served OpenAPI document: status, headers, media type and body.
 */
export async function request(served: Served, path: string, spec: RequestSpec = {}): Promise<Answer> {
  const method = spec.method ?? (spec.body !== undefined ? "POST" : "GET");
  const answer = await exchange(served, path, spec, method);
  const problems = (await openApiValidator(served.routes)).check({ method, path, ...answer });
  if (problems.length > 0) assert.unreachable(`the answer is not the documented one:\n${problems.join("\n")}`);
  return answer;
}

/**
 * The CSV answers of a 413's plan, each asked and checked 200, joined as a client joins them (the first header line
 * only); `check` sees each part's path first.
 */
export async function followCsvPlan(served: Served, plan: string[], check: (part: string) => void = () => {}): Promise<string> {
  let text = "";
  for (const part of plan) {
    check(part);
    const answer = await request(served, part);
    assert.is(answer.status, 200, `${part}: ${answer.text}`);
    text += text === "" ? answer.text : answer.text.slice(answer.text.indexOf("\n") + 1);
  }
  return text;
}

/** One real HTTP exchange, not checked against the OpenAPI document (the landing page, the explorer, dist files). */
export function exchange(served: Served, path: string, spec: RequestSpec = {}, method = spec.method ?? "GET"): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = spec.body === undefined ? undefined : Buffer.isBuffer(spec.body) ? spec.body : Buffer.from(spec.body);
    const headers: Record<string, string | number> = { ...spec.headers };
    if (body !== undefined && !spec.chunked) headers["Content-Length"] ??= body.length;
    const req = http.request(
      { host: "127.0.0.1", port: served.port, path, method, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const bytes = Buffer.concat(chunks);
          const text = bytes.toString("utf8");
          resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes, text, json: () => JSON.parse(text) });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    if (body !== undefined && spec.chunked) {
      for (let i = 0; i < body.length; i += 4096) req.write(body.subarray(i, i + 4096));
      req.end();
    } else req.end(body);
  });
}

export function post(served: Served, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return request(served, path, {
    method: "POST",
    body: typeof body === "string" ? body : JSON.stringify(body),
    headers: { "Content-Type": "application/json", ...headers },
  });
}

/** Fails with the contract issues when `value` does not match schema `id`. */
export function assertSchema(id: string, value: unknown): void {
  const validate = validatorFor(id);
  if (!validate(value)) assert.unreachable(`${id}: ${JSON.stringify(toIssues(validate.errors, value))}`);
}

/** Asserts an error answer: status, `error` code, section 7 body shape. */
export function assertError(answer: Answer, status: number, error: string): any {
  assert.is(answer.status, status, `status of ${answer.text}`);
  assert.match(String(answer.headers["content-type"]), /^application\/json/);
  const body = answer.json();
  assertSchema("error.schema.json", body);
  assert.is(body.error, error);
  assert.type(body.message, "string");
  assert.is(answer.headers["access-control-allow-origin"], "*");
  return body;
}

/** A valid data request over a box given in global cell indices (edges exactly on cell edges). */
export function requestFor(cells: { col: number; row: number; width: number; height: number }, start: string, end: string, extra: Record<string, unknown> = {}) {
  return makeDataRequest([cells.col, cells.row, cells.width, cells.height], start, end, extra);
}

export interface Cells {
  col: number;
  row: number;
  width: number;
  height: number;
}

export interface QueryRow {
  date: string;
  longitude: number;
  latitude: number;
  variable: string;
  value: number | null;
  unit: string;
  tile: string;
  row: number;
  col: number;
}

/**
 * Expected query rows of a published window, computed here without the server's modules: date, then north to
 * south, then west to east; tile = lattice tile clipped to the window, row/col local to it.
 */
export function expectRows(
  window: Window,
  versionDates: string[],
  valueOf: (col: number, row: number, day: number) => number | null,
  cells: Cells,
  dates: string[],
): QueryRow[] {
  const [c0, r0] = window;
  const rows: QueryRow[] = [];
  for (const date of dates) {
    const day = versionDates.indexOf(date);
    for (let row = cells.row; row < cells.row + cells.height; row++) {
      for (let col = cells.col; col < cells.col + cells.width; col++) {
        const tileRow = Math.floor(row / 256);
        const tileCol = Math.floor(col / 256);
        rows.push({
          date,
          longitude: Number((112 + 0.05 * col).toFixed(9)),
          latitude: Number((-10 - 0.05 * row).toFixed(9)),
          variable: "air_temperature_max",
          value: valueOf(col, row, day),
          unit: "degC",
          tile: `${date.replaceAll("-", "")}-r${tileRow}-c${tileCol}`,
          row: row - Math.max(r0, tileRow * 256),
          col: col - Math.max(c0, tileCol * 256),
        });
      }
    }
  }
  return rows;
}

/** Expected rows of version A. */
export function expectRowsA(cells: Cells, dates: string[]): QueryRow[] {
  return expectRows(WINDOW_A, DATES_A, valueA, cells, dates);
}

/** A cell's centre, computed here from the grid's definition (112 degrees east, 10 south, 0.05 a cell), not by format/grid.ts. */
export const lonOf = (col: number) => Number((112 + 0.05 * col).toFixed(9));
export const latOf = (row: number) => Number((-10 - 0.05 * row).toFixed(9));

/** The CSV the series route answers for version A's cells (row-major) over some of its dates, from the fixture's rule. */
export function expectSeriesCsvA(cells: [number, number][], dates: string[]): string {
  let out = "longitude,latitude,date,air_temperature_max\n";
  for (const [col, row] of cells) {
    for (const date of dates) {
      const value = valueA(col, row, DATES_A.indexOf(date));
      out += `${lonOf(col)},${latOf(row)},${date},${value === null ? "" : value}\n`;
    }
  }
  return out;
}

export const CSV_HEADER_LINE = "date,longitude,latitude,variable,value,unit,tile,row,col\r\n";

/** One CSV line of a row (docs/contract.md §3: non-null fields double-quoted, null empty, CRLF). */
export function rowToCsv(r: QueryRow): string {
  const quote = (v: string | number | null) => (v === null ? "" : `"${v}"`);
  return [r.date, r.longitude, r.latitude, r.variable, r.value, r.unit, r.tile, r.row, r.col].map(quote).join(",") + "\r\n";
}

/** The CSV answer of these rows, header first. */
export function expectCsv(rows: QueryRow[]): string {
  return CSV_HEADER_LINE + rows.map(rowToCsv).join("");
}

export function sha256Base64(data: Uint8Array | string): string {
  return Buffer.from(sha256Hex(data), "hex").toString("base64");
}

/** Where a cell's data lies in the series tier of a version on a date: the span, its piece, the chunk and its group record. */
export interface SeriesChunk {
  span: SeriesSpan;
  /** the piece's path in the dist, and on disk */
  path: string;
  file: string;
  chunk: StoredEntry;
  group: number;
  position: number;
  /** the group record (Merkle path, then entries): where it starts in the piece, and its entries' first byte */
  groupAt: number;
  entriesAt: number;
}

export async function findSeriesChunk(dist: string, record: Dataset, date: string, col: number, row: number): Promise<SeriesChunk> {
  const view = await openRaster(dist, record);
  const span = view.index.series.find((s) => s.first <= date && date <= s.last);
  if (!span) throw new Error(`${record.id} has no series span holding ${date}`);
  const lattice = new GroupLattice(span.window, span.chunkSide);
  const { group, position } = lattice.locate(col, row);
  const path = objectPath(span.piece.sha256, "ser");
  const file = join(dist, path);
  // a span written whole: its one piece's record of `group` is in record `group`
  const at = SpanLayout.whole(lattice, span.root).locate(group);
  const groupAt = at.offset;
  const entriesAt = groupAt + at.depth * 32;
  const bytes = await readFile(file);
  const chunk = groupEntry(bytes.subarray(entriesAt, groupAt + at.size), position);
  return { span, path, file, chunk, group, position, groupAt, entriesAt };
}
