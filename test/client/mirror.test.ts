// The mirror client: every route answered from a static mirror byte for byte as the server answers it over the same
// dist; damaged pieces are errors naming the piece, never a wrong body; the command; the browser bundle.

import { execFile } from "node:child_process";
import { readFile, rm, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { deflateRawSync } from "node:zlib";
import { build } from "esbuild";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { encodeOffsetCursor } from "../../api/cursors.js";
import { nodePlatform } from "../../format/local.js";
import { ROUTES } from "../../api/interface.js";
import { findRoute } from "../../api/routes.js";
import { AnswerError, type MirrorAnswer, type MirrorClient, type MirrorClientOptions, createMirrorClient } from "../../client/index.js";
import { type MirrorServer, startMirrorServer } from "../../client/mirror-server.js";
import { webPlatform } from "../../client/platform.js";
import type { CatalogRoot } from "../../format/catalog.js";
import { objectPath } from "../../format/objects.js";
import { childArgs } from "../support/child-bundles.js";
import {
  type Answer,
  type Served,
  copyDist,
  editRecords,
  request,
  requestFor,
  withServer,
  findSeriesChunk,
  exchange,
  flipByte,
  post,
  useFixture,
  fixture,
  A,
  openSnapshot,
  findDayPiece,
  findPages,
} from "../support/server-fixture.js";
import { colToEdgeLon, colToLon, rowToEdgeLat, rowToLat } from "../../format/grid.js";

const run = promisify(execFile);

/** Serves `dist` as `make mirror` does, on a free port, for the duration of `fn`. */
async function withMirror<T>(dist: string, fn: (mirror: MirrorServer) => Promise<T>): Promise<T> {
  const mirror = await startMirrorServer({ dist });
  try {
    return await fn(mirror);
  } finally {
    await mirror.close();
  }
}

/**
 * A client of `mirror`. Capabilities links are absolute URLs of the origin a request was sent to; a client's
 * requests are sent to no origin, so its links use linksBaseUrl (default: the mirror's URL). The identity tests pass
 * the server's origin, so even capabilities must be byte-identical rather than equal after rewriting hosts.
 */
function clientOf(mirror: MirrorServer, served?: Served, options: Partial<MirrorClientOptions> = {}): MirrorClient {
  return createMirrorClient({ baseUrl: mirror.url, linksBaseUrl: served?.url, ...options });
}

// ---------------------------------------------------------------------------------------------------------------
// Identity: a broad table of requests, each asked of the server (identity coding) and of the client.

interface Case {
  name: string;
  method?: string;
  /** the path with its query; a function when it needs something only the server can say first (a cursor) */
  path: string | ((served: Served) => Promise<string>);
  body?: string | Buffer | object;
  contentType?: string;
  /** the status the server answers: a case that stops exercising what it names fails */
  status: number;
}

/** Headers of an answer besides transport (Content-Length, Vary, CORS, Connection). */
const ANSWER_HEADERS = ["Content-Type", "Cache-Control", "ETag", "Content-Digest", "Repr-Digest", "Service-Dataset-Version", "Service-Request-SHA256", "Service-Period", "Link", "Allow", "Location"];
/** OPeNDAP's own: what each answer is, the server's protocol, and the newest alias's session cookie (docs/contract.md §8.6) */
ANSWER_HEADERS.push("Content-Description", "XDODS-Server", "XOPeNDAP-Server", "XDAP", "Set-Cookie");

const json = "application/json";
const cell = (col: number, row: number) => ({ col, row, width: 1, height: 1 });
const between = () => {
  const body = requestFor(cell(250, 250), "2004-02-01", "2004-02-01");
  const [w, , , n] = body.region.bbox as number[];
  body.region.bbox = [w + 0.001, n - 0.02, w + 0.02, n - 0.001]; // between cell centres: none inside
  return body;
};

async function nextCursorOf(served: Served, path: string): Promise<string> {
  const answer = await request(served, expand(path));
  assert.is(answer.status, 200, `${path}: ${answer.text.slice(0, 200)}`);
  const cursor = answer.json().nextCursor;
  assert.type(cursor, "string", `${path} has a next page`);
  return encodeURIComponent(cursor);
}

function buildCases(): Case[] {
  const tileA = "20040201-r0-c0"; // cols 200..255, rows 200..255: holds the ocean cell at the lattice corner
  const q = "/api/v1/data/query";
  const big = JSON.stringify(requestFor(cell(250, 250), "2004-02-01", "2004-02-01")).replace(/}$/, `,"pad":"${"x".repeat(17000)}"}`);
  return [
    // meta, unknown routes, methods
    { name: "health", path: "/api/health", status: 200 },
    { name: "health (HEAD)", method: "HEAD", path: "/api/health", status: 200 },
    { name: "capabilities", path: "/api/v1/capabilities", status: 200 },
    { name: "openapi", path: "/api/v1/openapi.json", status: 200 },
    { name: "unknown route", path: "/api/v2/anything?x=1", status: 404 },
    { name: "unknown route with a doubled slash", path: "//api/health", status: 404 },
    { name: "a trailing slash is another path", path: "/api/v1/datasets/", status: 404 },
    { name: "paths are case-sensitive", path: "/API/Health", status: 404 },
    // still the route: an id that is not UTF-8 once decoded breaks the id pattern (docs/contract.md §1.2)
    { name: "a malformed escape in an id", path: "/api/v1/datasets/%zz", status: 400 },
    { name: "a trailing slash after sample", path: `/api/v1/layers/${A}/sample/?tile=20040301-r1-c1&row=1&col=1`, status: 404 },
    { name: "a wrong method on a trailing-slash path", method: "DELETE", path: "/api/v1/datasets/", status: 404 },
    { name: "wrong method on health", method: "DELETE", path: "/api/health", status: 405 },
    { name: "POST on a GET route, with a body", method: "POST", path: "/api/v1/datasets", body: "{}", contentType: json, status: 405 },
    { name: "GET on query", path: q, status: 405 },
    { name: "PUT on validate", method: "PUT", path: "/api/v1/data/validate", body: "{}", contentType: json, status: 405 },
    { name: "GET on the acquisition route", path: "/api/v1/data/requests", status: 405 },
    // catalog
    { name: "catalog", path: "/api/v1/datasets", status: 200 },
    { name: "catalog (HEAD)", method: "HEAD", path: "/api/v1/datasets", status: 200 },
    { name: "catalog page of 2", path: "/api/v1/datasets?limit=2", status: 200 },
    { name: "catalog second page", path: async (s) => `/api/v1/datasets?limit=2&after=${await nextCursorOf(s, "/api/v1/datasets?limit=2")}`, status: 200 },
    { name: "catalog limit 0", path: "/api/v1/datasets?limit=0", status: 400 },
    { name: "catalog limit 1001", path: "/api/v1/datasets?limit=1001", status: 400 },
    { name: "catalog limit not a number", path: "/api/v1/datasets?limit=ten", status: 400 },
    { name: "catalog limit repeated", path: "/api/v1/datasets?limit=1&limit=2", status: 400 },
    { name: "catalog cursor not issued here", path: "/api/v1/datasets?after=silo-tmax.000000000000", status: 400 },
    { name: "catalog cursor garbage", path: "/api/v1/datasets?after=%E2%9C%93", status: 400 },
    // inspect
    { name: "inspect A", path: `/api/v1/datasets/{A}`, status: 200 },
    { name: "inspect A (HEAD)", method: "HEAD", path: `/api/v1/datasets/{A}`, status: 200 },
    { name: "revisions of A", path: `/api/v1/datasets/{A}/revisions`, status: 200 },
    { name: "revisions of A against B (another dataset)", path: `/api/v1/datasets/{A}/revisions?against={B}`, status: 400 },
    { name: "revisions of the observation table", path: `/api/v1/datasets/{NOAA}/revisions`, status: 400 },
    { name: "inspect paid (listed and inspectable)", path: `/api/v1/datasets/{PAID}`, status: 200 },
    { name: "inspect observations", path: `/api/v1/datasets/{NOAA}`, status: 200 },
    { name: "inspect restricted", path: `/api/v1/datasets/{RESTRICTED}`, status: 404 },
    { name: "inspect an unknown well-formed id", path: async () => `/api/v1/datasets/${A.slice(0, -16)}0000000000000000`, status: 404 },
    { name: "inspect a bad id", path: "/api/v1/datasets/not.an.id", status: 400 },
    { name: "inspect an id with an encoded slash", path: "/api/v1/datasets/a%2Fb", status: 400 },
    // observations
    { name: "observations", path: `/api/v1/datasets/{NOAA}/observations`, status: 200 },
    { name: "observations page of 5", path: `/api/v1/datasets/{NOAA}/observations?limit=5`, status: 200 },
    {
      name: "observations next page",
      path: async (s) => `/api/v1/datasets/{NOAA}/observations?limit=5&after=${await nextCursorOf(s, `/api/v1/datasets/{NOAA}/observations?limit=5`)}`,
      status: 200,
    },
    {
      name: "observations last page",
      path: async () => `/api/v1/datasets/{NOAA}/observations?after=${await encodeOffsetCursor(nodePlatform, fixture.noaa.id, "observations", (fixture.noaa.metadata.observations as number) - 3)}`,
      status: 200,
    },
    { name: "observations 1000 (response bound)", path: `/api/v1/datasets/{NOAA}/observations?limit=1000`, status: 200 },
    { name: "observations bad cursor", path: `/api/v1/datasets/{NOAA}/observations?after=5-000000000000`, status: 400 },
    { name: "observations of a paid version", path: `/api/v1/datasets/{PAID}/observations`, status: 404 },
    { name: "observations of a raster version", path: `/api/v1/datasets/{A}/observations`, status: 200 },
    { name: "observations of a restricted version", path: `/api/v1/datasets/{RESTRICTED}/observations`, status: 404 },
    // layers pages and tiles
    { name: "layers", path: `/api/v1/layers/{A}`, status: 200 },
    { name: "layers page of 3", path: `/api/v1/layers/{A}?limit=3`, status: 200 },
    { name: "layers next page", path: async (s) => `/api/v1/layers/{A}?limit=3&after=${await nextCursorOf(s, `/api/v1/layers/{A}?limit=3`)}`, status: 200 },
    { name: "layers last page", path: async () => `/api/v1/layers/{A}?after=${await encodeOffsetCursor(nodePlatform, A, "layers", 33 * 4 - 2)}`, status: 200 },
    { name: "layers cursor of another version", path: async () => `/api/v1/layers/{A}?after=${await encodeOffsetCursor(nodePlatform, fixture.b.id, "layers", 1)}`, status: 400 },
    { name: "layers limit 0", path: `/api/v1/layers/{A}?limit=0`, status: 400 },
    { name: "layers of B", path: `/api/v1/layers/{B}`, status: 200 },
    { name: "layers of observations", path: `/api/v1/layers/{NOAA}`, status: 200 },
    { name: "layers of paid", path: `/api/v1/layers/{PAID}`, status: 404 },
    { name: "layers of restricted", path: `/api/v1/layers/{RESTRICTED}`, status: 404 },
    { name: "tile with the corner ocean cell", path: `/api/v1/layers/{A}?tile=${tileA}`, status: 200 },
    { name: "tile (HEAD)", method: "HEAD", path: `/api/v1/layers/{A}?tile=${tileA}`, status: 200 },
    { name: "narrow tile across the lattice column", path: `/api/v1/layers/{A}?tile=20040229-r0-c1`, status: 200 },
    { name: "tile with the ocean block", path: `/api/v1/layers/{A}?tile=20040304-r1-c1`, status: 200 },
    { name: "tile of B", path: `/api/v1/layers/{B}?tile=20040229-r0-c1`, status: 200 },
    { name: "tile of C", path: `/api/v1/layers/{C}?tile=20040301-r0-c1`, status: 200 },
    { name: "tile off the window", path: `/api/v1/layers/{A}?tile=20040201-r2-c2`, status: 404 },
    { name: "tile on a date not published", path: `/api/v1/layers/{A}?tile=20050101-r0-c0`, status: 404 },
    { name: "tile of B outside its window", path: `/api/v1/layers/{B}?tile=20040229-r0-c0`, status: 404 },
    { name: "tile id malformed", path: `/api/v1/layers/{A}?tile=r0-c0`, status: 404 },
    { name: "tile of an observation version", path: `/api/v1/layers/{NOAA}?tile=${tileA}`, status: 404 },
    // sample
    { name: "sample", path: `/api/v1/layers/{A}/sample?tile=${tileA}&row=0&col=0`, status: 200 },
    { name: "sample the ocean corner", path: `/api/v1/layers/{A}/sample?tile=${tileA}&row=55&col=55`, status: 200 },
    { name: "sample the ocean block", path: `/api/v1/layers/{A}/sample?tile=20040215-r1-c1&row=60&col=60`, status: 200 },
    { name: "sample across the lattice", path: `/api/v1/layers/{A}/sample?tile=20040215-r1-c0&row=0&col=55`, status: 200 },
    { name: "sample row out of range", path: `/api/v1/layers/{A}/sample?tile=${tileA}&row=56&col=0`, status: 404 },
    { name: "sample col out of range", path: `/api/v1/layers/{A}/sample?tile=20040201-r0-c1&row=0&col=65`, status: 404 },
    { name: "sample negative row", path: `/api/v1/layers/{A}/sample?tile=${tileA}&row=-1&col=0`, status: 400 },
    { name: "sample row not a number", path: `/api/v1/layers/{A}/sample?tile=${tileA}&row=a&col=0`, status: 400 },
    { name: "sample without col", path: `/api/v1/layers/{A}/sample?tile=${tileA}&row=0`, status: 400 },
    { name: "sample without tile", path: `/api/v1/layers/{A}/sample?row=0&col=0`, status: 400 },
    { name: "sample of an unknown tile", path: `/api/v1/layers/{A}/sample?tile=20050101-r0-c0&row=0&col=0`, status: 404 },
    { name: "sample of paid", path: `/api/v1/layers/{PAID}/sample?tile=${tileA}&row=0&col=0`, status: 404 },
    // validate
    { name: "validate", method: "POST", path: "/api/v1/data/validate", body: requestFor(cell(250, 250), "2004-02-01", "2004-02-01"), status: 200 },
    { name: "validate with charset", method: "POST", path: "/api/v1/data/validate", body: requestFor(cell(250, 250), "2004-02-01", "2004-02-01"), contentType: "application/json; charset=utf-8", status: 200 },
    { name: "validate with an extra field", method: "POST", path: "/api/v1/data/validate", body: requestFor(cell(250, 250), "2004-02-01", "2004-02-01", { colour: "red" }), status: 422 },
    { name: "validate bbox order", method: "POST", path: "/api/v1/data/validate", body: { ...requestFor(cell(250, 250), "2004-02-01", "2004-02-01"), region: { bbox: [130, -30, 120, -20], crs: "EPSG:4326" } }, status: 422 },
    { name: "validate period order", method: "POST", path: "/api/v1/data/validate", body: requestFor(cell(250, 250), "2004-02-02", "2004-02-01"), status: 422 },
    { name: "validate a calendar date that does not exist", method: "POST", path: "/api/v1/data/validate", body: requestFor(cell(250, 250), "2003-02-29", "2003-02-29"), status: 422 },
    { name: "validate not an object", method: "POST", path: "/api/v1/data/validate", body: "[1,2]", contentType: json, status: 422 },
    { name: "validate malformed JSON", method: "POST", path: "/api/v1/data/validate", body: '{"variables":', contentType: json, status: 400 },
    { name: "validate empty body", method: "POST", path: "/api/v1/data/validate", body: "", contentType: json, status: 400 },
    { name: "validate not UTF-8", method: "POST", path: "/api/v1/data/validate", body: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), contentType: json, status: 400 },
    { name: "validate text/plain", method: "POST", path: "/api/v1/data/validate", body: "{}", contentType: "text/plain", status: 415 },
    { name: "validate without a content type", method: "POST", path: "/api/v1/data/validate", body: "{}", status: 415 },
    { name: "validate body over 16,384 bytes", method: "POST", path: "/api/v1/data/validate", body: big, contentType: json, status: 413 },
    { name: "validate body over the bound, text/plain", method: "POST", path: "/api/v1/data/validate", body: big, contentType: "text/plain", status: 413 },
    // resolve
    { name: "resolve across tile edges", method: "POST", path: "/api/v1/data/resolve", body: requestFor({ col: 250, row: 250, width: 12, height: 12 }, "2004-02-01", "2004-02-02"), status: 200 },
    { name: "resolve to B", method: "POST", path: "/api/v1/data/resolve", body: requestFor({ col: 302, row: 202, width: 3, height: 3 }, "2004-02-28", "2004-03-01"), status: 200 },
    { name: "resolve coverage unavailable", method: "POST", path: "/api/v1/data/resolve", body: requestFor(cell(250, 250), "2005-01-01", "2005-01-01"), status: 200 },
    { name: "resolve too large", method: "POST", path: "/api/v1/data/resolve", body: requestFor({ col: 200, row: 200, width: 121, height: 91 }, "2004-02-01", "2004-02-01"), status: 200 },
    { name: "resolve 10,000 rows as JSON (over the byte bound)", method: "POST", path: "/api/v1/data/resolve", body: requestFor({ col: 205, row: 205, width: 100, height: 100 }, "2004-02-03", "2004-02-03"), status: 200 },
    { name: "resolve no cell centres", method: "POST", path: "/api/v1/data/resolve", body: between(), status: 200 },
    { name: "resolve invalid", method: "POST", path: "/api/v1/data/resolve", body: { variables: ["rain"] }, status: 422 },
    { name: "resolve wrong content type", method: "POST", path: "/api/v1/data/resolve", body: "{}", contentType: "application/x-www-form-urlencoded", status: 415 },
    // query
    { name: "query 1 cell x 31 days", method: "POST", path: q, body: requestFor(cell(300, 300), "2004-02-01", "2004-03-02"), status: 200 },
    { name: "query 1 cell x 31 days, CSV", method: "POST", path: q, body: requestFor(cell(300, 300), "2004-02-01", "2004-03-02", { format: "csv" }), status: 200 },
    { name: "query across four tiles with the ocean corner", method: "POST", path: q, body: requestFor({ col: 250, row: 250, width: 12, height: 12 }, "2004-02-28", "2004-03-01"), status: 200 },
    { name: "query across four tiles, CSV", method: "POST", path: q, body: requestFor({ col: 250, row: 250, width: 12, height: 12 }, "2004-02-28", "2004-03-01", { format: "csv" }), status: 200 },
    { name: "query the ocean block (nulls)", method: "POST", path: q, body: requestFor({ col: 305, row: 305, width: 16, height: 16 }, "2004-02-10", "2004-02-10"), status: 200 },
    { name: "query the ocean block, CSV (empty values)", method: "POST", path: q, body: requestFor({ col: 305, row: 305, width: 16, height: 16 }, "2004-02-10", "2004-02-10", { format: "csv" }), status: 200 },
    { name: "query a box not on cell edges", method: "POST", path: q, body: { ...requestFor(cell(250, 250), "2004-02-05", "2004-02-05"), region: { bbox: [124.51, -20.12, 124.63, -19.98], crs: "EPSG:4326" } }, status: 200 },
    { name: "query answered by B (newest)", method: "POST", path: q, body: requestFor({ col: 302, row: 202, width: 2, height: 2 }, "2004-02-29", "2004-02-29"), status: 200 },
    { name: "query pinned to C", method: "POST", path: q, body: requestFor({ col: 302, row: 202, width: 2, height: 2 }, "2004-02-29", "2004-02-29", { dataset_version: "{C}" }), status: 200 },
    { name: "query 10,000 rows, CSV", method: "POST", path: q, body: requestFor({ col: 205, row: 205, width: 100, height: 100 }, "2004-02-03", "2004-02-03", { format: "csv" }), status: 200 },
    { name: "query 10,000 rows as JSON: 413 with plan", method: "POST", path: q, body: requestFor({ col: 205, row: 205, width: 100, height: 100 }, "2004-02-03", "2004-02-03"), status: 413 },
    { name: "query over 10,000 cells: 413 with plan", method: "POST", path: q, body: requestFor({ col: 200, row: 200, width: 121, height: 91 }, "2004-02-01", "2004-02-01"), status: 413 },
    { name: "query 32 days", method: "POST", path: q, body: requestFor(cell(300, 300), "2004-02-01", "2004-03-03"), status: 422 },
    { name: "query no cell centres", method: "POST", path: q, body: between(), status: 422 },
    { name: "query dates not published", method: "POST", path: q, body: requestFor(cell(250, 250), "2005-01-01", "2005-01-01"), status: 422 },
    { name: "query past the last date", method: "POST", path: q, body: requestFor(cell(250, 250), "2004-03-04", "2004-03-06"), status: 422 },
    { name: "query outside every grid", method: "POST", path: q, body: { ...requestFor(cell(250, 250), "2004-02-01", "2004-02-01"), region: { bbox: [5, 45, 15, 55], crs: "EPSG:4326" } }, status: 422 },
    { name: "query pinned to paid", method: "POST", path: q, body: requestFor(cell(250, 250), "2004-02-01", "2004-02-01", { dataset_version: "{PAID}" }), status: 422 },
    { name: "query pinned to an unknown version", method: "POST", path: q, body: requestFor(cell(250, 250), "2004-02-01", "2004-02-01", { dataset_version: "silo-tmax-nope" }), status: 422 },
    { name: "query malformed JSON", method: "POST", path: q, body: "{,}", contentType: json, status: 400 },
    { name: "query text/csv", method: "POST", path: q, body: "a,b", contentType: "text/csv", status: 415 },
    { name: "query body over the bound", method: "POST", path: q, body: big, contentType: json, status: 413 },
    // series
    { name: "series, one place over the whole period, CSV", path: "/api/v1/series?lat=-23&lon=124.5", status: 200 },
    { name: "series (HEAD)", method: "HEAD", path: "/api/v1/series?lat=-23&lon=124.5", status: 200 },
    { name: "series, three places with an ocean cell, JSON", path: "/api/v1/series?lat=-25.6,-23,-20.25&lon=127.6,124.5,127.25&start=2004-02-27&end=2004-03-02&format=json", status: 200 },
    { name: "series answered by B (newest)", path: "/api/v1/series?lat=-20.25&lon=127.25", status: 200 },
    { name: "series pinned to C, dated (immutable)", path: "/api/v1/series?lat=-20.25&lon=127.25&start=2004-02-28&end=2004-03-01&dataset_version={C}", status: 200 },
    { name: "series by SILO name, JSON", path: "/api/v1/series?lat=-23&lon=124.5&variables=max_temp&format=json&start=2004-02-28&end=2004-03-01", status: 200 },
    { name: "series outside the grid", path: "/api/v1/series?lat=-50&lon=124.5", status: 400 },
    { name: "series with an unknown variable", path: "/api/v1/series?lat=-23&lon=124.5&variables=rain", status: 400 },
    { name: "series met with one variable", path: "/api/v1/series?lat=-23&lon=124.5&format=met&variables=max_temp", status: 400 },
    { name: "series met by default (APSIM's variables, radiation not published)", path: "/api/v1/series?lat=-23&lon=124.5&format=met", status: 422 },
    { name: "series of a variable not published", path: "/api/v1/series?lat=-23&lon=124.5&variables=min_temp", status: 422 },
    { name: "series of a period past what is published (its published part)", path: "/api/v1/series?lat=-23&lon=124.5&start=2004-01-01&end=2004-02-10", status: 200 },
    { name: "series of a period not published", path: "/api/v1/series?lat=-23&lon=124.5&start=2003-01-01&end=2003-02-10", status: 422 },
    { name: "series of a box, CSV", path: "/api/v1/series?bbox=124.475,-23.175,124.675,-22.975&start=2004-02-27&end=2004-03-02", status: 200 },
    { name: "series of a box with the ocean, NetCDF", path: "/api/v1/series?bbox=127.375,-25.575,127.575,-25.425&format=netcdf", status: 200 },
    { name: "series of a box, NetCDF (HEAD)", method: "HEAD", path: "/api/v1/series?bbox=127.375,-25.575,127.575,-25.425&format=netcdf", status: 200 },
    { name: "series of a box with no cell centre", path: "/api/v1/series?bbox=124.51,-23.02,124.52,-23.01", status: 400 },
    { name: "series pinned to an unknown version", path: "/api/v1/series?lat=-23&lon=124.5&dataset_version=silo-tmax-nope", status: 422 },
    { name: "series on POST", method: "POST", path: "/api/v1/series?lat=-23&lon=124.5", body: "{}", contentType: json, status: 405 },
    // acquisition
    { name: "acquisition", method: "POST", path: "/api/v1/data/requests", body: requestFor(cell(250, 250), "2004-02-01", "2004-02-01"), status: 503 },
    { name: "acquisition without a body", method: "POST", path: "/api/v1/data/requests", status: 503 },
    { name: "acquisition with a body it never reads", method: "POST", path: "/api/v1/data/requests", body: "not json", contentType: "text/plain", status: 503 },
    // the Zarr view: its metadata, redirects and 404s byte for byte (a chunk's zlib bytes are the platform's: test/api/zarr.test.ts)
    { name: "zarr consolidated metadata", path: "/zarr/v2/{A}/maps/.zmetadata", status: 200 },
    { name: "zarr consolidated metadata (HEAD)", method: "HEAD", path: "/zarr/v2/{A}/series/.zmetadata", status: 200 },
    { name: "zarr array metadata", path: "/zarr/v2/{A}/series/air_temperature_max/.zarray", status: 200 },
    { name: "zarr scalar chunk", path: "/zarr/v2/{A}/maps/crs/0", status: 200 },
    { name: "zarr latest, a group key", path: "/zarr/v2/latest/silo-tmax/maps/.zmetadata", status: 302 },
    { name: "zarr latest, a chunk", path: "/zarr/v2/latest/silo-tmax/series/air_temperature_max/0.50.50", status: 302 },
    { name: "zarr chunk of no held cell", path: "/zarr/v2/{A}/maps/air_temperature_max/0.2.3", status: 404 },
    { name: "zarr of an observation version", path: "/zarr/v2/{NOAA}/maps/.zmetadata", status: 404 },
    // OPeNDAP: its texts, values, DAP2 errors and the newest alias byte for byte
    { name: "opendap dds", path: "/opendap/{A}.dds", status: 200 },
    { name: "opendap das", path: "/opendap/{A}.das", status: 200 },
    { name: "opendap dods of a grid's hyperslab", path: "/opendap/{A}.dods?air_temperature_max[0:2:6][250:260][195:205],time[3]", status: 200 },
    { name: "opendap dods of a place over every date", path: "/opendap/{A}.dods?air_temperature_max.air_temperature_max%5B0%3A32%5D%5B300%5D%5B300%5D", status: 200 },
    { name: "opendap index past the end", path: "/opendap/{A}.dods?time[0:33]", status: 400 },
    { name: "opendap of an observation version", path: "/opendap/{NOAA}.das", status: 404 },
    { name: "opendap latest", path: "/opendap/latest/silo-tmax.dds?time", status: 302 },
  ];
}

/** Cases are written before the fixture exists (uvu registers tests on load): `{A}` and the like stand for its ids. */
function expand(text: string): string {
  const ids: Record<string, string> = { A, B: fixture.b.id, C: fixture.c.id, PAID: fixture.paid.id, RESTRICTED: fixture.restricted.id, NOAA: fixture.noaa.id };
  return text.replace(/\{(A|B|C|PAID|RESTRICTED|NOAA)\}/g, (_, name: string) => ids[name]);
}

function bodyOf(c: Case): { bytes?: Buffer; contentType?: string } {
  if (c.body === undefined) return { contentType: c.contentType };
  if (Buffer.isBuffer(c.body)) return { bytes: c.body, contentType: c.contentType };
  if (typeof c.body === "string") return { bytes: Buffer.from(expand(c.body)), contentType: c.contentType };
  return { bytes: Buffer.from(expand(JSON.stringify(c.body))), contentType: c.contentType ?? json };
}

const pathOf = async (c: Case, served: Served) => expand(typeof c.path === "string" ? c.path : await c.path(served));

/** Asks the server (no Accept-Encoding: the identity answer) and the client the same request; returns both. */
async function askBoth(served: Served, client: MirrorClient, c: Case): Promise<{ server: Answer; client: MirrorAnswer; path: string }> {
  const path = await pathOf(c, served);
  const method = c.method ?? "GET";
  const { bytes, contentType } = bodyOf(c);
  const server = await request(served, path, { method, body: bytes, headers: contentType ? { "Content-Type": contentType } : {} });
  const answer = await client.answer({ method, path, body: bytes, contentType });
  return { server, client: answer, path };
}

function assertSameAnswer(server: Answer, client: MirrorAnswer, what: string): void {
  assert.is(client.status, server.status, `${what}: status`);
  assert.ok(Buffer.from(client.body).equals(server.bytes), `${what}: body bytes differ\nserver: ${server.text.slice(0, 300)}\nclient: ${Buffer.from(client.body).toString().slice(0, 300)}`);
  const onServer = (name: string) => [server.headers[name.toLowerCase()]].flat().join(", ") || undefined;
  for (const name of ANSWER_HEADERS) assert.is(client.headers[name], onServer(name), `${what}: ${name}`);
  for (const name of Object.keys(client.headers)) assert.ok(ANSWER_HEADERS.includes(name), `${what}: the client adds ${name}`);
}

const identity = suite("identity");
let served: Served;
let mirror: MirrorServer;
let client: MirrorClient;
let stopServer: () => Promise<unknown>;

identity.before(async () => {
  await useFixture();
  // withServer closes the app in its finally: hold it open until `after`
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  await new Promise<void>((ready, fail) => {
    const running = withServer(fixture.dist, async (s) => {
      served = s;
      ready();
      await held;
    });
    running.catch(fail);
    stopServer = () => (release(), running);
  });
  mirror = await startMirrorServer({ dist: fixture.dist });
  client = clientOf(mirror, served);
});

identity.after(async () => {
  await mirror?.close();
  await stopServer?.();
});

const cases = buildCases();

for (const c of cases) {
  identity(`identity - ${c.method ?? "GET"} ${c.name}: the client answers byte for byte as the server`, async () => {
    const both = await askBoth(served, client, c);
    assert.is(both.server.status, c.status, `${c.name}: the server's status (${both.server.text.slice(0, 200)})`);
    assertSameAnswer(both.server, both.client, `${c.method ?? "GET"} ${both.path}`);
  });
}

identity("identity - a second client, and the same requests again from cache, answer the same bytes", async () => {
  const again = clientOf(mirror, served, { cacheBytes: 256 << 10 }); // small: evictions happen along the way
  for (const c of cases.filter((x) => typeof x.path === "string")) {
    const first = await askBoth(served, again, c);
    assertSameAnswer(first.server, first.client, `cold ${c.name}`);
    const repeated = await again.answer({ method: c.method, path: first.path, body: bodyOf(c).bytes, contentType: bodyOf(c).contentType });
    assertSameAnswer(first.server, repeated, `warm ${c.name}`);
  }
});

identity("identity - a host that ignores Range (answers 200 with the whole file) gives the same answers", async () => {
  const noRanges = clientOf(mirror, served, {
    fetch: (url, init) => fetch(url, { ...init, headers: {} }),
  });
  for (const c of cases.filter((x) => x.name.startsWith("query") || x.name.startsWith("tile") || x.name.startsWith("sample"))) {
    const both = await askBoth(served, noRanges, c);
    assertSameAnswer(both.server, both.client, c.name);
  }
  assert.ok(noRanges.stats().requests > 0);
});

identity("identity - the table asks every route of the route table and meets every status the interface answers", () => {
  const asked = new Set<string>();
  for (const c of cases) {
    if (typeof c.path !== "string") continue;
    const found = findRoute(ROUTES, c.method ?? "GET", expand(c.path).split("?")[0]);
    if (found && "route" in found) asked.add(`${found.route.method} ${found.route.path}`);
  }
  for (const route of ROUTES) assert.ok(asked.has(`${route.method} ${route.path}`), `no case asks ${route.method} ${route.path}`);
  const statuses = new Set(cases.map((c) => c.status));
  for (const status of [200, 400, 404, 405, 413, 415, 422, 503]) assert.ok(statuses.has(status), `no case answers ${status}`);
});

identity("identity - a CORS preflight is the route table's, on the server and the client alike", async () => {
  for (const path of ["/api/v1/datasets", "/api/v1/data/query", "/api/v1/data/requests", `/zarr/v2/${A}/maps/.zmetadata`]) {
    const onServer = await exchange(served, path, { method: "OPTIONS" });
    const onClient = await client.answer({ method: "OPTIONS", path });
    assert.is(onServer.status, 204, path);
    assert.is(onClient.status, 204, path);
    for (const name of ["Allow", "Access-Control-Allow-Methods", "Access-Control-Allow-Headers", "Access-Control-Max-Age"]) {
      assert.is(onClient.headers[name], onServer.headers[name.toLowerCase()], `${path} ${name}`);
    }
  }
  const zarr = await client.answer({ method: "OPTIONS", path: `/zarr/v2/${A}/maps/.zmetadata` });
  assert.is(zarr.headers["Access-Control-Allow-Headers"], "Range, If-Range, If-None-Match");
});

identity("identity - the client reads with range requests: a one-cell day reads the piece's header and one block, not the piece", async () => {
  const asked: { url: string; range: string | null }[] = [];
  const fresh = clientOf(mirror, served, {
    fetch: (url, init) => {
      asked.push({ url, range: new Headers(init?.headers).get("Range") });
      return fetch(url, init);
    },
  });
  const body = requestFor(cell(300, 300), "2004-02-01", "2004-02-01");
  const answer = await fresh.answer({ method: "POST", path: "/api/v1/data/query", body });
  assert.is(answer.status, 200, answer.text());
  const piece = await findDayPiece(fixture.dist, fixture.a, "2004-02-01");
  const reads = asked.filter((a) => a.url.endsWith(piece.path));
  assert.equal(reads.map((r) => r.range), [`bytes=0-${piece.day.header.size - 1}`, reads[1]?.range], "the header, then one range");
  const [, from, to] = /^bytes=(\d+)-(\d+)$/.exec(String(reads[1].range))!.map(Number);
  const block = piece.header.blocks.find((b) => b.offset === from)!;
  assert.ok(block, "the second range starts at a block");
  assert.is(to - from + 1, block.length, "and holds exactly that block");
  assert.ok(asked.every((a) => a.range !== null || !a.url.endsWith(".day")), "no day piece is read whole");
  assert.is(fresh.stats().requests, asked.length);
  const warm = fresh.stats();
  await fresh.answer({ method: "POST", path: "/api/v1/data/query", body });
  assert.equal(fresh.stats(), warm, "a repeated request reads nothing");
});

identity.run();

// ---------------------------------------------------------------------------------------------------------------
// Damaged mirrors: the piece is named, no body is given.

/** The client's answer must be a rejection whose message names `piece` (objects/..): never an answer. */
async function assertRejectsNaming(client: MirrorClient, request: Parameters<MirrorClient["answer"]>[0], piece: string): Promise<string> {
  const outcome = await client.answer(request).then(
    (answer) => `answered HTTP ${answer.status}: ${answer.text().slice(0, 200)}`,
    (err: unknown) => err,
  );
  assert.instance(outcome, Error, `${request.method ?? "GET"} ${request.path} must reject, but ${String(outcome)}`);
  const message = (outcome as Error).message;
  assert.ok(message.includes(piece), `${message} names ${piece}`);
  return message;
}

/** The pristine server's answer to `request` equals the client's on the damaged mirror. */
async function assertAnswersAsServer(served: Served, client: MirrorClient, c: Case): Promise<void> {
  const both = await askBoth(served, client, c);
  assert.is(both.server.status, c.status, c.name);
  assertSameAnswer(both.server, both.client, c.name);
}

const queryCase = (name: string, body: object, status = 200): Case => ({ name, method: "POST", path: "/api/v1/data/query", body, status });
const dayQuery = (date: string) => requestFor({ col: 300, row: 300, width: 2, height: 2 }, date, date);

const damage = suite("damage");
damage.before(useFixture);

damage("damage - a flipped byte inside a block: queries and tiles of that block reject naming the piece; other days answer", async () => {
  const dist = await copyDist(fixture);
  const { header, path } = await findDayPiece(dist, fixture.a, "2004-02-10");
  // a byte in the middle of every stored block of the day: whatever a request reads of it is damaged
  const stored = header.blocks.filter((entry) => entry.length > 0);
  assert.ok(stored.length > 0);
  for (const entry of stored) await flipByte(join(dist, path), entry.offset + Math.floor(entry.length / 2));
  await withServer(fixture.dist, async (pristine) =>
    withMirror(dist, async (m) => {
      const damaged = clientOf(m, pristine);
      const message = await assertRejectsNaming(damaged, { method: "POST", path: "/api/v1/data/query", body: dayQuery("2004-02-10") }, path);
      assert.match(message, /block \d+ does not match its sha256/);
      await assertRejectsNaming(damaged, { path: `/api/v1/layers/${A}?tile=20040210-r0-c0` }, path);
      await assertRejectsNaming(damaged, { path: `/api/v1/layers/${A}/sample?tile=20040210-r1-c1&row=0&col=0` }, path);
      // asked again it rejects again (failures are not kept)
      await assertRejectsNaming(damaged, { method: "POST", path: "/api/v1/data/query", body: dayQuery("2004-02-10") }, path);
      // a period of one cell reads the series tier, which holds its own copy of the day: it answers as the server
      await assertAnswersAsServer(pristine, damaged, queryCase("a period through the damaged day", requestFor(cell(300, 300), "2004-02-01", "2004-03-02")));
      await assertAnswersAsServer(pristine, damaged, queryCase("another day", dayQuery("2004-02-11")));
      await assertAnswersAsServer(pristine, damaged, { name: "another day's tile", path: `/api/v1/layers/${A}?tile=20040211-r1-c1`, status: 200 });
      await assertAnswersAsServer(pristine, damaged, { name: "catalog", path: "/api/v1/datasets", status: 200 });
      // the day's tile list comes from the month page, not the piece
      await assertAnswersAsServer(pristine, damaged, { name: "layers page", path: `/api/v1/layers/${A}?limit=200`, status: 200 });
    }),
  );
});

damage("damage - a flipped byte in a series chunk or its group directory: the period rejects naming the series piece; one date answers", async () => {
  for (const part of ["chunk", "group"] as const) {
    const dist = await copyDist(fixture);
    const found = await findSeriesChunk(dist, fixture.a, "2004-02-10", 300, 300);
    await flipByte(found.file, part === "chunk" ? found.chunk.offset + Math.floor(found.chunk.length / 2) : found.entriesAt + 20);
    await withServer(fixture.dist, async (pristine) =>
      withMirror(dist, async (m) => {
        const damaged = clientOf(m, pristine);
        const period = requestFor(cell(300, 300), "2004-02-01", "2004-03-02");
        const message = await assertRejectsNaming(damaged, { method: "POST", path: "/api/v1/data/query", body: period }, found.path);
        assert.match(message, part === "chunk" ? /chunk \d+\/\d+ does not match its sha256/ : /group \d+ does not prove against its root/);
        await assertAnswersAsServer(pristine, damaged, queryCase("one date reads its day piece", dayQuery("2004-02-10")));
      }),
    );
  }
});

damage("damage - a truncated day piece: blocks past the end reject naming the piece, blocks before it answer", async () => {
  const dist = await copyDist(fixture);
  const { header, path } = await findDayPiece(dist, fixture.a, "2004-02-12");
  const last = header.blocks.reduce((a, b) => (b.offset > a.offset ? b : a));
  const first = header.blocks.reduce((a, b) => (b.offset < a.offset ? b : a));
  assert.ok(last.offset > first.offset + first.length, "the piece has a block after its first");
  await truncate(join(dist, path), first.offset + first.length); // keeps the header and the first block whole
  await withServer(fixture.dist, async (pristine) =>
    withMirror(dist, async (m) => {
      const damaged = clientOf(m, pristine);
      // the whole day touches every block: the missing ones reject
      const whole = requestFor({ col: 200, row: 200, width: 100, height: 100 }, "2004-02-12", "2004-02-12", { format: "csv" });
      await assertRejectsNaming(damaged, { method: "POST", path: "/api/v1/data/query", body: whole }, path);
      await assertRejectsNaming(damaged, { path: `/api/v1/layers/${A}?tile=20040212-r1-c1` }, path);
      // truncated before the header ends: even the header rejects
      await truncate(join(dist, path), header.blocks.length); // shorter than any header
      const fresh = clientOf(m, pristine);
      const message = await assertRejectsNaming(fresh, { method: "POST", path: "/api/v1/data/query", body: dayQuery("2004-02-12") }, path);
      assert.match(message, /header does not match its sha256/);
      await assertAnswersAsServer(pristine, fresh, queryCase("another day", dayQuery("2004-02-13")));
    }),
  );
});

damage("damage - a deleted month page: that month's data rejects naming the page; the other month and the catalog answer", async () => {
  const dist = await copyDist(fixture);
  const march = (await findPages(dist, fixture.a, "2004-03")).month;
  const path = objectPath(march.sha256, "json");
  await rm(join(dist, path));
  await withServer(fixture.dist, async (pristine) =>
    withMirror(dist, async (m) => {
      const damaged = clientOf(m, pristine);
      const message = await assertRejectsNaming(damaged, { method: "POST", path: "/api/v1/data/query", body: dayQuery("2004-03-02") }, path);
      assert.match(message, /missing/);
      await assertRejectsNaming(damaged, { path: `/api/v1/layers/${A}?tile=20040302-r0-c0` }, path);
      await assertRejectsNaming(damaged, { path: `/api/v1/layers/${A}/sample?tile=20040302-r0-c0&row=1&col=1` }, path);
      await assertRejectsNaming(damaged, { path: `/api/v1/layers/${A}?limit=1000` }, path); // the full tile list reaches March
      await assertAnswersAsServer(pristine, damaged, queryCase("February", dayQuery("2004-02-20")));
      await assertAnswersAsServer(pristine, damaged, { name: "February's tiles", path: `/api/v1/layers/${A}?limit=20`, status: 200 });
      await assertAnswersAsServer(pristine, damaged, { name: "inspect A", path: `/api/v1/datasets/${A}`, status: 200 });
      await assertAnswersAsServer(pristine, damaged, { name: "catalog", path: "/api/v1/datasets", status: 200 });
    }),
  );
});

damage("damage - a corrupted catalog leaf: the catalog and records only it holds reject naming the leaf; candidates (records in catalog.json), health, capabilities, OpenAPI and unknown routes answer", async () => {
  const dist = await copyDist(fixture);
  const snapshot = await openSnapshot(dist);
  const root = await snapshot.archive.readJson<CatalogRoot>(snapshot.pointer.catalog);
  const leaf = root.leaves[0].ref;
  const path = objectPath(leaf.sha256, "json");
  await flipByte(join(dist, path), Math.floor(leaf.size / 2));
  await withServer(fixture.dist, async (pristine) =>
    withMirror(dist, async (m) => {
      const damaged = clientOf(m, pristine);
      const message = await assertRejectsNaming(damaged, { path: "/api/v1/datasets" }, path);
      assert.match(message, /does not match its sha256/);
      await assertRejectsNaming(damaged, { path: `/api/v1/datasets/${fixture.paid.id}` }, path);
      await assertAnswersAsServer(pristine, damaged, { name: "inspect a candidate", path: `/api/v1/datasets/${A}`, status: 200 });
      await assertAnswersAsServer(pristine, damaged, { name: "a tile of a candidate", path: `/api/v1/layers/${A}?tile=20040201-r0-c0`, status: 200 });
      await assertAnswersAsServer(pristine, damaged, queryCase("a query", dayQuery("2004-02-01")));
      for (const c of cases.filter((x) => ["health", "capabilities", "openapi", "unknown route", "wrong method on health", "validate", "acquisition"].includes(x.name))) {
        await assertAnswersAsServer(pristine, damaged, c);
      }
    }),
  );
});

damage("damage - an unreachable mirror and a missing catalog.json reject naming catalog.json", async () => {
  const dist = await copyDist(fixture);
  await rm(join(dist, "catalog.json"));
  await withMirror(dist, async (m) => {
    const message = await assertRejectsNaming(clientOf(m), { path: "/api/v1/datasets" }, `${m.url}catalog.json`);
    assert.match(message, /is missing; publish a dist with `make publish`/);
  });
  const closed = await startMirrorServer({ dist: fixture.dist });
  await closed.close();
  await assertRejectsNaming(clientOf(closed), { path: "/api/v1/datasets" }, `${closed.url}catalog.json`);
});

damage("damage - make mirror serves catalog.json and the files a manifest may list, nothing else of its folder", async () => {
  const dist = await copyDist(fixture);
  await writeFile(join(dist, ".publish.journal"), "{}\n");
  const pointer = JSON.parse(await readFile(join(dist, "catalog.json"), "utf8"));
  const manifest = JSON.parse(await readFile(join(dist, objectPath(pointer.manifest.sha256, "json")), "utf8"));
  const brotli = (manifest.files as { path: string }[]).find((f) => f.path.endsWith(".json.br"))!.path;
  const json = brotli.slice(0, -".br".length);
  await writeFile(join(dist, `${json}.123.abcdefgh.tmp`), "debris");
  await withMirror(dist, async (m) => {
    const status = async (path: string) => (await fetch(`${m.url}${path}`)).status;
    assert.equal(await Promise.all(["catalog.json", json, brotli, ".publish.journal", `${json}.123.abcdefgh.tmp`, "objects/", "package.json"].map(status)), [200, 200, 200, 404, 404, 404, 404]);
  });
});

damage.run();

// ---------------------------------------------------------------------------------------------------------------

const catalog = suite("catalog");
catalog.before(useFixture);

catalog("catalog - catalog.json is read again after catalogTtlMs: a new publish is answered, as the server answers it", async () => {
  const dist = await copyDist(fixture);
  await withMirror(dist, async (m) => {
    const stale = clientOf(m, undefined, { catalogTtlMs: 3_600_000 });
    const live = clientOf(m, undefined, { catalogTtlMs: 0 });
    const before = (await stale.answer({ path: "/api/v1/datasets" })).text();
    assert.is((await live.answer({ path: "/api/v1/datasets" })).text(), before);
    await editRecords(dist, (records) => {
      for (const r of records) if (r.id === fixture.b.id) r.status = "retired";
    });
    await withServer(dist, async (s) => {
      const server = await request(s, "/api/v1/datasets");
      assert.not.ok(server.text.includes(fixture.b.id), "the server no longer lists B");
      assert.is((await live.answer({ path: "/api/v1/datasets" })).text(), server.text);
      assert.is((await stale.answer({ path: "/api/v1/datasets" })).text(), before, "within its TTL a client keeps its catalog");
    });
  });
});

catalog.run();

// ---------------------------------------------------------------------------------------------------------------

const series = suite("series");
series.before(useFixture);

/** A fetch that notes each URL and Range it is asked for. */
function countingFetch(): { ranges: string[]; counting: typeof fetch } {
  const ranges: string[] = [];
  const counting: typeof fetch = (input, init) => {
    ranges.push(`${String(input)} ${(init?.headers as Record<string, string> | undefined)?.Range ?? ""}`);
    return fetch(input, init);
  };
  return { ranges, counting };
}

series("series - seriesQueries: a cell over 33 days as the server's answers to the consecutive pinned 31-day queries, each series chunk read once", async () => {
  await withServer(fixture.dist, async (s) =>
    withMirror(fixture.dist, async (m) => {
      const { ranges, counting } = countingFetch();
      const client = clientOf(m, s, { fetch: counting });
      const { answers, rows } = await client.seriesQueries([colToLon(300), rowToLat(300)], "2004-02-01", "2004-03-04");
      assert.is(answers.length, 2);
      for (const [i, [first, last]] of [["2004-02-01", "2004-03-02"], ["2004-03-03", "2004-03-04"]].entries()) {
        const server = await post(s, "/api/v1/data/query", requestFor(cell(300, 300), first, last, { dataset_version: A }));
        assert.ok(Buffer.from(answers[i].body).equals(server.bytes), `${first}..${last}`);
      }
      assert.is(rows.length, 33);
      const seriesReads = ranges.filter((r) => r.includes(".ser "));
      assert.ok(seriesReads.length > 0);
      assert.is(new Set(seriesReads).size, seriesReads.length, `a series range read twice: ${seriesReads.join(" | ")}`);
      assert.not.ok(ranges.some((r) => r.includes(".day ")), "no day piece is read for a place over days");
      const before = client.stats().requests;
      await client.seriesQueries([colToLon(300), rowToLat(300)], "2004-02-01", "2004-03-04");
      assert.is(client.stats().requests, before, "asked again, nothing is read again");
    }),
  );
});

series("series - client.series: the series route's answer as the server's, reading one group and one chunk a span, no day piece and (CSV) no source list", async () => {
  await withServer(fixture.dist, async (s) =>
    withMirror(fixture.dist, async (m) => {
      const { ranges, counting } = countingFetch();
      const client = clientOf(m, s, { fetch: counting });
      const [lon, lat] = [colToLon(300), rowToLat(300)];
      const answer = await client.series({ lat, lon });
      const server = await request(s, `/api/v1/series?lat=${lat}&lon=${lon}`);
      assert.ok(Buffer.from(answer.body).equals(server.bytes));
      assert.is(answer.headers["Content-Digest"], server.headers["content-digest"]);
      assert.is(answer.headers["Service-Dataset-Version"], A);
      // A's 33 days lie in two spans (February, March's four days): a group directory and a chunk each
      const seriesReads = ranges.filter((r) => r.includes(".ser "));
      assert.is(seriesReads.length, 4, seriesReads.join(" | "));
      assert.not.ok(ranges.some((r) => r.includes(".day ")), "no day piece is read");
      const json = await client.series({ lat, lon, format: "json", start: "2004-02-28", end: "2004-03-01" });
      assert.ok(Buffer.from(json.body).equals((await request(s, `/api/v1/series?lat=${lat}&lon=${lon}&start=2004-02-28&end=2004-03-01&format=json`)).bytes));
      const refused = await client.series({ lat, lon, variables: "min_temp" }).catch((err: unknown) => err);
      assert.instance(refused, AnswerError);
      assert.is((refused as AnswerError).status, 422);
    }),
  );
});

series("series - client.series of a box: CSV and NetCDF as the server's; the NetCDF bound by its option name; neither places nor box is the server's 400", async () => {
  const bbox: [number, number, number, number] = [colToEdgeLon(300), rowToEdgeLat(303), colToEdgeLon(303), rowToEdgeLat(300)];
  const query = `bbox=${bbox.join(",")}&start=2004-02-01&end=2004-03-04`;
  await withServer(fixture.dist, async (s) =>
    withMirror(fixture.dist, async (m) => {
      const client = clientOf(m, s);
      const csv = await client.series({ bbox, start: "2004-02-01", end: "2004-03-04" });
      assert.ok(Buffer.from(csv.body).equals((await request(s, `/api/v1/series?${query}`)).bytes));
      const nc = await client.series({ bbox, start: "2004-02-01", end: "2004-03-04", format: "netcdf" });
      const server = await request(s, `/api/v1/series?${query}&format=netcdf`);
      assert.ok(Buffer.from(nc.body).equals(server.bytes));
      assert.is(nc.headers["Content-Type"], "application/x-netcdf");
      assert.is(nc.headers["Content-Digest"], server.headers["content-digest"]);
      const neither = await client.series({ start: "2004-02-01" }).catch((err: unknown) => err);
      assert.instance(neither, AnswerError);
      assert.is((neither as AnswerError).status, 400);
    }),
  );
  // 9 cells x 33 days is 297 values: over a NetCDF bound of 200, a plan of whole boxes over ranges of dates
  await withMirror(fixture.dist, async (m) => {
    const client = createMirrorClient({ baseUrl: m.url, bounds: { seriesNetcdfMaxValues: 200 } });
    const over = await client.series({ bbox, start: "2004-02-01", end: "2004-03-04", format: "netcdf" }).catch((err: unknown) => err);
    assert.instance(over, AnswerError);
    assert.is((over as AnswerError).status, 413);
    assert.is((over as AnswerError).answer.json<{ plan: string[] }>().plan.length, 2);
  });
});

series("series - a call over the bound: the mirror's 413 and its plan are the server's, and following the plan gives the call's values", async () => {
  const bound = { bounds: { seriesMaxValues: 40 } };
  const path = `/api/v1/series?lat=${rowToLat(300)},${rowToLat(250)}&lon=${colToLon(300)},${colToLon(250)}`;
  await withServer(
    fixture.dist,
    async (s) =>
      withMirror(fixture.dist, async (m) => {
        const client = clientOf(m, s, bound);
        const server = await request(s, path);
        assert.is(server.status, 413, server.text);
        const answer = await client.answer({ path });
        assertSameAnswer(server, answer, path);
        const plan: string[] = server.json().plan;
        assert.is(plan.length, 2, "a place's 33 values fit the bound of 40, two places do not: a call a place");
        let text = "";
        for (const part of plan) {
          const piece = await client.answer({ path: part });
          assert.is(piece.status, 200, piece.text());
          text += text === "" ? piece.text() : piece.text().slice(piece.text().indexOf("\n") + 1);
        }
        await withServer(fixture.dist, async (whole) => assert.is(text, (await request(whole, path)).text));
      }),
    bound,
  );
});

series.run();

const command = suite("command");
command.before(useFixture);

const root = join(import.meta.dirname, "../..");

let mirrorArgs: string[] | undefined;

/**
 * The command `npm run mirror` runs (package.json: tsx client/cli.ts), started as one node process, bundled first when
 * make test runs (test/support/child-bundles.ts): npm, tsx's relaying parent and its loader cost a second of CPU a
 * call and change nothing the command prints or exits with. The npm script itself runs as documented in
 * test/docs/docs-clients.test.ts.
 */
async function runMirror(args: string[]): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  mirrorArgs ??= await childArgs(join(root, "client/cli.ts"), "client");
  try {
    const { stdout, stderr } = await run(process.execPath, [...mirrorArgs, ...args], { cwd: root, encoding: "buffer", maxBuffer: 8 << 20 });
    return { code: 0, stdout, stderr: stderr.toString() };
  } catch (err) {
    const e = err as { code: number; stdout: Buffer; stderr: Buffer };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr.toString() };
  }
}

command("command - prints the body on stdout, HTTP status and headers on stderr, exit 0 (errors the interface answers too)", async () => {
  await withServer(fixture.dist, async (s) =>
    withMirror(fixture.dist, async (m) => {
      const health = await runMirror([m.url, "GET", "/api/health"]);
      assert.is(health.code, 0, health.stderr);
      assert.ok(health.stdout.equals((await request(s, "/api/health")).bytes));
      const lines = health.stderr.split("\n");
      const at = lines.indexOf("HTTP 200");
      assert.ok(at >= 0, health.stderr);
      assert.is(lines[at + 1], "Content-Type: application/json; charset=utf-8");
      assert.ok(lines.includes("Cache-Control: no-store"), health.stderr);
      assert.ok(lines.some((l) => l.startsWith("Content-Digest: sha-256=:")), health.stderr);

      const missing = await runMirror([m.url, "GET", `/api/v1/datasets/${fixture.restricted.id}`]);
      assert.is(missing.code, 0, missing.stderr);
      assert.ok(missing.stderr.includes("HTTP 404"), missing.stderr);
      assert.ok(missing.stdout.equals((await request(s, `/api/v1/datasets/${fixture.restricted.id}`)).bytes));

      const body = join(fixture.root, "mirror-query.json");
      await writeFile(body, JSON.stringify(requestFor(cell(300, 300), "2004-02-01", "2004-03-02", { format: "csv" })));
      const csv = await runMirror([m.url, "POST", "/api/v1/data/query", body]);
      assert.is(csv.code, 0, csv.stderr);
      assert.ok(csv.stderr.includes("Content-Type: text/csv; charset=utf-8"), csv.stderr);
      assert.ok(csv.stderr.includes(`Service-Dataset-Version: ${A}`), csv.stderr);
      const server = await request(s, "/api/v1/data/query", { method: "POST", body: await readFile(body), headers: { "Content-Type": "application/json" } });
      assert.ok(csv.stdout.equals(server.bytes));
    }),
  );
});

command("command - exits 2 naming the piece when a piece fails verification, and when the mirror cannot be read", async () => {
  const dist = await copyDist(fixture);
  const snapshot = await openSnapshot(dist);
  const root = await snapshot.archive.readJson<CatalogRoot>(snapshot.pointer.catalog);
  const path = objectPath(root.leaves[0].ref.sha256, "json");
  await flipByte(join(dist, path), 10);
  await withMirror(dist, async (m) => {
    const damaged = await runMirror([m.url, "GET", "/api/v1/datasets"]);
    assert.is(damaged.code, 2, damaged.stderr);
    assert.is(damaged.stdout.length, 0, "no body");
    assert.ok(damaged.stderr.includes(path), damaged.stderr);
    assert.not.ok(damaged.stderr.includes("HTTP "), damaged.stderr);
  });
  const unreachable = await runMirror(["http://127.0.0.1:9/", "GET", "/api/v1/datasets"]);
  assert.is(unreachable.code, 2, unreachable.stderr);
  assert.ok(unreachable.stderr.includes("http://127.0.0.1:9/catalog.json"), unreachable.stderr);
  const usage = await runMirror(["http://127.0.0.1:9/", "GET"]);
  assert.is(usage.code, 64, usage.stderr);
});

command("command - series answers GET /api/v1/series from the mirror: the server's bytes, CSV by default, JSON with --format", async () => {
  await withServer(fixture.dist, async (s) =>
    withMirror(fixture.dist, async (m) => {
      const [lon, lat] = [colToLon(300), rowToLat(300)];
      const out = await runMirror(["series", m.url, String(lon), String(lat), "2004-02-01", "2004-03-04"]);
      assert.is(out.code, 0, out.stderr);
      const csv = await request(s, `/api/v1/series?lat=${lat}&lon=${lon}&start=2004-02-01&end=2004-03-04`);
      assert.is(csv.status, 200, csv.text);
      assert.ok(out.stdout.equals(csv.bytes), out.stdout.toString().slice(0, 300));
      assert.is(out.stdout.toString().split("\n").length, 1 + 33 + 1, "a header, 33 days and the last line's end");
      const whole = await runMirror(["series", m.url, String(lon), String(lat), "--format", "json"]);
      assert.is(whole.code, 0, whole.stderr);
      assert.ok(whole.stdout.equals((await request(s, `/api/v1/series?lat=${lat}&lon=${lon}&format=json`)).bytes));
      const outside = await runMirror(["series", m.url, "100", "-30", "2004-02-01", "2004-02-02"]);
      assert.is(outside.code, 1);
      assert.match(outside.stderr, /outside the SILO grid/);
      const usage = await runMirror(["series", m.url, "100"]);
      assert.is(usage.code, 64, usage.stderr);
    }),
  );
});

command.run();

// ---------------------------------------------------------------------------------------------------------------

const statics = suite("mirror server");
statics.before(useFixture);

statics("mirror server - ranges, ETag, immutable objects, a minute for catalog.json, CORS for cross-origin range reads", async () => {
  await withMirror(fixture.dist, async (m) => {
    const { day, path } = await findDayPiece(fixture.dist, fixture.a, "2004-02-01");
    const ranged = await fetch(m.url + path, { headers: { Range: "bytes=4-19" } });
    assert.is(ranged.status, 206);
    assert.is(ranged.headers.get("content-range"), `bytes 4-19/${day.piece.size}`);
    assert.is((await ranged.arrayBuffer()).byteLength, 16);
    assert.is(ranged.headers.get("cache-control"), "public, max-age=31536000, immutable");
    assert.is(ranged.headers.get("access-control-allow-origin"), "*");
    assert.match(String(ranged.headers.get("access-control-expose-headers")), /Content-Range/);
    const etag = ranged.headers.get("etag");
    assert.ok(etag, "an ETag");
    assert.is((await fetch(m.url + path, { headers: { "If-None-Match": etag! } })).status, 304);
    const pointer = await fetch(`${m.url}catalog.json`);
    assert.is(pointer.status, 200);
    assert.is(pointer.headers.get("cache-control"), "public, max-age=60");
    const preflight = await fetch(m.url + path, { method: "OPTIONS", headers: { Origin: "https://example.org", "Access-Control-Request-Headers": "range" } });
    assert.is(preflight.status, 204);
    assert.match(String(preflight.headers.get("access-control-allow-headers")), /Range/);
    assert.is((await fetch(`${m.url}objects/00/nothing.json`)).status, 404);
    assert.is((await fetch(`${m.url}catalog.json`, { method: "POST" })).status, 405);
  });
});

statics.run();

// ---------------------------------------------------------------------------------------------------------------

const platform = suite("web platform");

platform("web platform - SHA-256 and raw inflate agree with node:crypto and node:zlib; inflating past the bound rejects", async () => {
  const data = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7919) % 251));
  for (const bytes of [new Uint8Array(0), Buffer.from("abc"), data]) {
    assert.is(await webPlatform.sha256Hex(bytes), await nodePlatform.sha256Hex(bytes));
  }
  const deflated = deflateRawSync(data);
  assert.ok(Buffer.from(await webPlatform.inflateRaw(deflated, data.length)).equals(data));
  assert.ok(Buffer.from(await nodePlatform.inflateRaw(deflated, data.length)).equals(data));
  for (const inflate of [webPlatform.inflateRaw, nodePlatform.inflateRaw]) {
    await inflate(deflated, data.length - 1).then(
      () => assert.unreachable("inflating past the bound must reject"),
      (err: unknown) => assert.instance(err, Error),
    );
    await inflate(Buffer.from([0xff, 0xff, 0xff, 0xff]), 1000).then(
      () => assert.unreachable("garbage must reject"),
      (err: unknown) => assert.instance(err, Error),
    );
  }
});

platform.run();

// ---------------------------------------------------------------------------------------------------------------

const bundle = suite("browser bundle");
bundle.before(useFixture);

bundle("browser bundle - client/index.ts bundles for the browser with no node: import and no Node-only module, and the bundle answers", async () => {
  const result = await build({
    entryPoints: [join(root, "client/index.ts")],
    bundle: true,
    platform: "browser",
    format: "esm",
    write: false,
    metafile: true,
    logLevel: "silent",
  });
  const inputs = Object.keys(result.metafile.inputs);
  for (const input of inputs) {
    assert.not.ok(input.startsWith("node:"), `${input} is a Node built-in`);
    assert.not.ok(/(^|\/)(api\/local|schemas\/hash|server\/|pipeline\/)/.test(input), `${input} is Node-only`);
  }
  for (const file of ["client/index.ts", "format/http-storage.ts", "client/platform.ts", "api/service.ts", "schemas/validate.ts"]) {
    assert.ok(inputs.includes(file), `the bundle holds ${file}`);
  }
  const text = result.outputFiles[0].text;
  assert.not.match(text, /["']node:[a-z]/, "no node: specifier in the bundle");
  assert.not.match(text, /\brequire\(["'](fs|crypto|zlib|path|http)["']\)/, "no require of a Node module");

  // the bundle itself, as a page would load it, uses only fetch, WebCrypto and DecompressionStream
  const file = join(fixture.root, "mirror-client.mjs");
  await writeFile(file, text);
  const bundled = (await import(pathToFileURL(file).href)) as typeof import("../../client/index.js");
  await withServer(fixture.dist, async (s) =>
    withMirror(fixture.dist, async (m) => {
      const fromBundle = bundled.createMirrorClient({ baseUrl: m.url, linksBaseUrl: s.url });
      for (const c of cases.filter((x) => ["capabilities", "tile with the corner ocean cell", "query across four tiles, CSV", "query 32 days"].includes(x.name))) {
        const both = await askBoth(s, fromBundle, c);
        assertSameAnswer(both.server, both.client, c.name);
      }
    }),
  );
});

bundle.run();
