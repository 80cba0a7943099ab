// The generated hostile requests of the server's hostile suites (fast-check, fixed seed): random and mutated data
// requests, series calls, bodies, headers, methods, paths, percent-escapes, cursors, tile ids, huge and negative
// numbers, duplicate and prototype keys, invalid UTF-8, deep nesting. Shared by test/server/server-hostile.test.ts
// (the answers are contract answers) and test/api/error-messages.test.ts (every 4xx message says what to send instead).

import fc from "fast-check";
import { SERIES_PARAMETERS } from "../../api/series/params.js";
import { DATES_A, type Fixture, WINDOW_A, WINDOW_B, requestFor } from "./server-fixture.js";

export const SEED = Number(process.env.HOSTILE_SEED ?? 20261123);
export const BATCHES = 200;
export const BATCH = 50;
/** Statuses of the contract (docs/contract.md §4.2), besides 200: never anything else, never a 500. */
export const STATUSES = new Set([200, 204, 304, 400, 404, 405, 413, 415, 422, 503]);
/** Methods the OpenAPI document describes on every path; others (WebDAV and the like) answer 404 or 405 too. */
export const DOCUMENTED_METHODS = new Set(["GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"]);

export interface HostileRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  chunked?: boolean;
}

// ---------------------------------------------------------------------------------------------------------------
// Arbitraries

/** Text a hostile client puts anywhere: huge and negative numbers, prototype keys, escapes, odd unicode. */
const nasty = fc.oneof(
  fc.constantFrom("", " ", "0", "-1", "-0", "1e309", "-1e309", "9".repeat(400), "1.5", "0x10", "NaN", "Infinity", "null", "true", "[]", "{}"),
  fc.constantFrom("__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "..", "../..", "%00", "%", "%ZZ", "%E0%A4%A", "%C0%AF", "%FF%FE"),
  fc.constantFrom("20040201-r0-c1", "20040201-r1-c1", "20040228-r0-c1", "2004-02-01", "YYYYMMDD-r0-c0", "20040201-r-1-c0", "20040231-r0-c0", "99999999-r9-c9"),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.integer().map(String),
  fc.double().map(String),
  fc.string({ minLength: 200, maxLength: 320, unit: fc.constantFrom("a", "Z", "0", "-", "_", ".") }),
);

const percentEncode = (text: string) => encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
/** A path or query piece as it may travel: encoded, or raw where the characters allow it (escapes left as written). */
const pathPiece = fc.oneof(nasty.map(percentEncode), nasty.filter((t) => /^[\x21-\x7e]*$/.test(t) && !/[?#]/.test(t)));

function idsOf(fixture: Fixture) {
  return fc.oneof(fc.constantFrom(fixture.a.id, fixture.b.id, fixture.noaa.id, fixture.paid.id, fixture.restricted.id), pathPiece);
}

const ROUTES = ["/api/health", "/api/v1/capabilities", "/api/v1/openapi.json", "/api/v1/datasets", "/api/v1/datasets/{id}", "/api/v1/datasets/{id}/observations", "/api/v1/layers/{id}", "/api/v1/layers/{id}/sample", "/api/v1/data/validate", "/api/v1/data/resolve", "/api/v1/data/query", "/api/v1/data/requests", "/api/v1/series"];
const PARAMS = ["limit", "after", "tile", "row", "col", "__proto__", "constructor", "x", "lat", "lon"];
/** The series route's parameters, as their one schema declares them. */
const SERIES_PARAMS = Object.keys(SERIES_PARAMETERS.properties);

/** Series calls: a valid place and period, with parameters added, repeated, emptied and bent (lists, dates, names, pins). */
function seriesPathArb(fixture: Fixture) {
  const value = fc.oneof(
    pathPiece,
    fc.constantFrom("-23", "124.5", "-23,-24", "124.5,125", "-23,", ",124.5", "-20.25", "127.25", "-50", "200", "-0", "+124.5", ".5", "1e309", "NaN", "0x10"),
    fc.constantFrom("2004-02-01", "2004-03-04", "2004-02-29", "2004-02-30", "2003-12-31", "2004-3-1", "2004-02-01T00:00:00Z", ""),
    fc.constantFrom("max_temp", "air_temperature_max", "max_temp,air_temperature_max", "min_temp", "radiation,max_temp,min_temp,daily_rain", "vp,rain", "csv", "json", "met", "CSV"),
    fc.constantFrom(fixture.a.id, fixture.b.id, `${fixture.b.id},${fixture.c.id}`, fixture.noaa.id, fixture.paid.id, fixture.restricted.id),
    fc.integer({ min: 1, max: 120 }).map((n) => Array.from({ length: n }, (_, i) => (-20 - (i % 121) * 0.05).toFixed(3)).join(",")),
  );
  const pairs = fc.array(fc.tuple(fc.constantFrom(...SERIES_PARAMS, "x", "__proto__"), value), { maxLength: 5 });
  return fc.tuple(fc.boolean(), pairs).map(([base, extra]) => `/api/v1/series?${[...(base ? [["lat", "-23"], ["lon", "124.5"]] : []), ...extra].map(([k, v]) => `${k}=${v}`).join("&")}`);
}

function pathArb(fixture: Fixture) {
  const query = fc.array(fc.tuple(fc.constantFrom(...PARAMS), pathPiece), { maxLength: 5 }).map((pairs) => (pairs.length ? `?${pairs.map(([k, v]) => `${k}=${v}`).join("&")}` : ""));
  const route = fc.tuple(fc.constantFrom(...ROUTES), idsOf(fixture), query).map(([r, id, q]) => r.replace("{id}", id) + q);
  const mutated = fc.tuple(route, fc.constantFrom("/", "//", "/..", "/%2e%2e", "?", "?&&", "#x", "/x")).map(([p, tail]) => p.replace(/(\?|$)/, `${tail}$1`));
  const garbage = fc.array(pathPiece, { minLength: 1, maxLength: 4 }).map((parts) => `/${parts.join("/")}`);
  return fc.oneof({ arbitrary: route, weight: 6 }, { arbitrary: seriesPathArb(fixture), weight: 2 }, { arbitrary: mutated, weight: 2 }, { arbitrary: garbage, weight: 1 });
}

/** A valid data request of the fixture, as a base for mutations. */
function validRequests(fixture: Fixture) {
  return fc.constantFrom(
    requestFor({ col: 250, row: 250, width: 3, height: 3 }, DATES_A[2], DATES_A[5]),
    requestFor({ col: 200, row: 200, width: 121, height: 121 }, DATES_A[0], DATES_A[30], { format: "csv" }),
    requestFor({ col: WINDOW_B[0], row: WINDOW_B[1], width: 2, height: 2 }, "2004-02-28", "2004-03-01", { dataset_version: fixture.b.id }),
    requestFor({ col: WINDOW_A[0], row: WINDOW_A[1], width: 5, height: 1 }, DATES_A[0], DATES_A[0], { dataset_version: fixture.paid.id }),
  );
}

/** A value to put anywhere in a JSON body: the hostile numbers, strings, nesting and prototype keys. */
const jsonValue = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(1e308, -1e308, -0, 0.1, 1e-320, Number.MAX_SAFE_INTEGER + 2, -180.0000001, 90.0000001, 841, -1),
  nasty,
  fc.constant({ __proto__: { polluted: true } }),
  fc.constant(JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"x": 1}}}')),
);

/** Mutations of a valid request: fields removed, replaced, added, nested; its dates and box bent. */
function mutatedBody(fixture: Fixture) {
  const keys = ["variables", "region", "period", "temporal_resolution", "spatial_resolution", "units", "data_class", "missing_policy", "source_preference", "format", "dataset_version", "__proto__", "constructor", "extra"];
  const edit = fc.oneof(
    fc.tuple(fc.constantFrom(...keys), jsonValue).map(([k, v]) => (r: any) => void (r[k] = v)),
    fc.constantFrom(...keys).map((k) => (r: any) => void delete r[k]),
    fc.tuple(fc.integer({ min: 0, max: 4 }), jsonValue).map(([i, v]) => (r: any) => void (r.region && typeof r.region === "object" && (r.region.bbox = [...(r.region.bbox ?? [])].fill(v, i, i + 1)))),
    fc.tuple(fc.constantFrom("start", "end"), fc.constantFrom("2004-02-30", "2004-13-01", "+002004-02-01", "2004-02-01T00:00:00Z", "2004-2-1", "0000-00-00", "2003-12-31", "2004-03-05")).map(([k, v]) => (r: any) => void (r.period && typeof r.period === "object" && (r.period[k] = v))),
  );
  return fc.tuple(validRequests(fixture), fc.array(edit, { maxLength: 3 })).map(([valid, edits]) => {
    const r = structuredClone(valid) as any;
    for (const e of edits) e(r);
    return Buffer.from(JSON.stringify(r));
  });
}

/** Bodies beyond one JSON value: duplicate keys, deep nesting, invalid UTF-8, truncation, oversize, emptiness. */
function oddBody(fixture: Fixture) {
  return fc.oneof(
    validRequests(fixture).map((r) => Buffer.from(JSON.stringify(r).replace('"format"', '"format":"xml","format"').replace("{", '{"variables":[],'))),
    fc.integer({ min: 1, max: 20_000 }).map((depth) => Buffer.from("[".repeat(depth) + "]".repeat(depth))),
    fc.integer({ min: 1, max: 5_000 }).map((depth) => Buffer.from('{"a":'.repeat(depth) + "1" + "}".repeat(depth))),
    fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
    fc.constantFrom(Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d]), Buffer.from([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), Buffer.from("\ud800", "utf8"), Buffer.alloc(0)),
    validRequests(fixture).chain((r) => fc.nat({ max: JSON.stringify(r).length }).map((n) => Buffer.from(JSON.stringify(r).slice(0, n)))),
    fc.integer({ min: 16_000, max: 40_000 }).map((n) => Buffer.from(`{"x":"${"y".repeat(n)}"}`)),
    fc.jsonValue({ maxDepth: 4 }).map((v) => Buffer.from(JSON.stringify(v) ?? "null")),
  );
}

const contentTypes = fc.constantFrom("application/json", "APPLICATION/JSON; charset=utf-8", "application/json;charset=latin1", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx", "", "*/*");
const encodings = fc.constantFrom("gzip", "br", "gzip, br", "br;q=0, gzip;q=0", "identity;q=0, *;q=0", "*", "deflate", "x;q=abc", "gzip;q=1e9");
const METHODS = ["GET", "GET", "GET", "HEAD", "POST", "POST", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE", "PROPFIND", "MKCOL", "PURGE", "SEARCH", "LOCK"];

export function requestArb(fixture: Fixture): fc.Arbitrary<HostileRequest> {
  const headers = fc.record(
    {
      "Content-Type": contentTypes,
      "Accept-Encoding": encodings,
      "If-None-Match": fc.oneof(pathPiece, fc.constantFrom("*", '"abc"', 'W/"x", "y"')),
      "X-Forwarded-For": fc.constantFrom("10.0.0.1", "not an address", "1.2.3.4, 5.6.7.8"),
      "X-Forwarded-Proto": fc.constantFrom("https", "gopher"),
      Origin: fc.constantFrom("https://example.org", "null"),
    },
    { requiredKeys: [] },
  );
  const body = fc.oneof({ arbitrary: mutatedBody(fixture), weight: 3 }, { arbitrary: oddBody(fixture), weight: 2 });
  const anything = fc.record({ method: fc.constantFrom(...METHODS), path: pathArb(fixture), headers, body: fc.option(body, { nil: undefined, freq: 4 }), chunked: fc.boolean() });
  // half are data requests as a client of the contract sends them (POST, JSON), with mutated or odd bodies
  const dataPath = fc.tuple(fc.constantFrom("/api/v1/data/validate", "/api/v1/data/resolve", "/api/v1/data/query", "/api/v1/data/requests"), fc.constantFrom("", "", "", "?x=1", "?format=csv"));
  const data = fc.record({ method: fc.constant("POST"), path: dataPath.map(([p, q]) => p + q), headers, body, chunked: fc.boolean() }).map((r) => {
    if (!("Content-Type" in r.headers) || r.headers["Content-Type"] === "text/plain") r.headers["Content-Type"] = "application/json";
    return r;
  });
  return fc.oneof(anything, data).map((r) => {
    if (r.method === "GET" || r.method === "HEAD") delete r.body;
    return r;
  });
}

// ---------------------------------------------------------------------------------------------------------------
// The Zarr view: unknown versions and keys, chunk indices out of range, malformed and huge, dots and
// percent-encoded traversal, odd Range headers

const zarrNasty = fc.constantFrom("", ".", "..", "%2e", "%2e%2e", "%2e%2e%2f", "..%2f..%2f", "%2F", "%00", "%", "%ZZ", "%C0%AF", "__proto__", "constructor", "-1", "1e3", "0x1", "01", "9".repeat(40), "%20", "+", ".zarray.gmac", ".zmetadata/", "0.0.0.0", "0..0", ".0.0", "0.0.");
const zarrIndex = fc.oneof(fc.nat({ max: 40 }).map(String), fc.constantFrom("-1", "00", "4294967296", "99999999999", "1.5", "NaN"));
const chunkKey = fc.oneof(fc.tuple(zarrIndex, zarrIndex, zarrIndex).map((t) => t.join(".")), zarrIndex, zarrNasty);

export function zarrPathArb(f: Fixture): fc.Arbitrary<string> {
  const id = fc.oneof(fc.constantFrom(f.a.id, f.b.id, f.noaa.id, f.paid.id, f.restricted.id, "latest"), zarrNasty);
  const group = fc.oneof(fc.constantFrom("maps", "series"), zarrNasty);
  const array = fc.oneof(fc.constantFrom("air_temperature_max", "time", "lat", "lon", "crs", "silo-tmax", "maps"), zarrNasty);
  const key = fc.oneof(fc.constantFrom(".zmetadata", ".zgroup", ".zattrs", ".zarray"), chunkKey);
  // keys of version A that mostly exist: metadata, coordinates, chunks near its window (rows and cols 0..3 of maps)
  const held = fc.oneof(
    fc.constantFrom("maps/.zmetadata", "series/.zattrs", "maps/time/0", "series/lat/0", "maps/crs/0", "maps/air_temperature_max/.zarray"),
    fc.tuple(fc.nat({ max: 40 }), fc.nat({ max: 3 }), fc.nat({ max: 4 })).map(([t, r, c]) => `maps/air_temperature_max/${t}.${r}.${c}`),
    fc.tuple(fc.nat({ max: 1 }), fc.integer({ min: 45, max: 85 }), fc.integer({ min: 45, max: 85 })).map(([t, r, c]) => `series/air_temperature_max/${t}.${r}.${c}`),
  );
  return fc.oneof(
    { arbitrary: held.map((key) => `/zarr/v2/${f.a.id}/${key}`), weight: 3 },
    fc.tuple(id, group, key).map((p) => `/zarr/v2/${p.join("/")}`),
    fc.tuple(id, group, array, key).map((p) => `/zarr/v2/${p.join("/")}`),
    fc.tuple(fc.oneof(fc.constantFrom("silo-tmax", "silo-tmax-b"), zarrNasty), group, array, key).map((p) => `/zarr/v2/latest/${p.join("/")}`),
    fc.array(fc.oneof(zarrNasty, key), { minLength: 1, maxLength: 7 }).map((p) => `/zarr/${p.join("/")}`),
  );
}

export const zarrRangeArb = fc.oneof(fc.constant(undefined), fc.constantFrom("bytes=0-0", "bytes=-1", "bytes=5-", "bytes=0-1,3-4", "bytes=9-1", "bytes=999999999-", "bytes=-0", "items=0-1", "bytes=abc", `bytes=${"9".repeat(30)}-`));
export const zarrMethodArb = fc.constantFrom("GET", "GET", "GET", "HEAD", "POST", "DELETE", "OPTIONS");
