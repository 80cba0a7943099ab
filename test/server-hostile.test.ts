// Hostile input at scale: at least 10,000 generated requests (fast-check, fixed seed) against the server in its own
// process: random and mutated data requests, series calls, bodies, headers, methods, paths, percent-escapes, cursors, tile ids,
// huge and negative numbers, duplicate and prototype keys, invalid UTF-8, deep nesting; then raw bytes the HTTP
// parser must refuse. Every answer has a contract status and a contract error body, matches the OpenAPI document,
// and is never a 500; the server keeps serving and its memory stays bounded.

import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import fc from "fast-check";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { DATES_A, type Fixture, WINDOW_A, WINDOW_B, buildFixture, requestFor } from "./server-fixture.js";
import { openApiValidator } from "./openapi-validator.js";
import { isSitePath } from "../server/site.js";

const SEED = Number(process.env.HOSTILE_SEED ?? 20261123);
const BATCHES = 200;
const BATCH = 50;
/** Statuses of the contract (docs/contract.md §4.2), besides 200: never anything else, never a 500. */
const STATUSES = new Set([200, 204, 304, 400, 404, 405, 413, 415, 422, 503]);
/** Methods the OpenAPI document describes on every path; others (WebDAV and the like) answer 404 or 405 too. */
const DOCUMENTED_METHODS = new Set(["GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"]);

interface HostileRequest {
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
const SERIES_PARAMS = ["lat", "lon", "start", "end", "variables", "format", "dataset_version"];

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

function requestArb(fixture: Fixture): fc.Arbitrary<HostileRequest> {
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
// The server in its own process, and one exchange

interface Server {
  child: ChildProcess;
  port: number;
  stderr(): string;
}

async function startServer(dist: string): Promise<Server> {
  const child = spawn(process.execPath, ["--max-semi-space-size=4", "--max-old-space-size=128", "--import", "tsx", "server/main.ts"], {
    env: { ...process.env, DIST: dist, PORT: "0", LOG: "0" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout!.on("data", (c) => (out += c));
  child.stderr!.on("data", (c) => (err += c));
  const until = Date.now() + 30_000;
  while (!/at http:\/\/127\.0\.0\.1:(\d+)/.test(out)) {
    if (Date.now() > until || child.exitCode !== null) throw new Error(`the server did not start: ${err}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return { child, port: Number(/at http:\/\/127\.0\.0\.1:(\d+)/.exec(out)![1]), stderr: () => err };
}

function rssMb(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  bytes: Buffer;
}

function exchange(agent: http.Agent, port: number, r: HostileRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...r.headers };
    // framed either way (node:http frames a body without a length for POST, PUT and PATCH only)
    if (r.body) headers[r.chunked ? "Transfer-Encoding" : "Content-Length"] = r.chunked ? "chunked" : r.body.length;
    const req = http.request({ host: "127.0.0.1", port, method: r.method, path: r.path, headers, agent, timeout: 20_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error("no answer within 20 s")));
    req.on("error", reject);
    if (r.body && r.chunked) {
      for (let i = 0; i < r.body.length; i += 1000) req.write(r.body.subarray(i, i + 1000));
      req.end();
    } else req.end(r.body);
  });
}

/** Every way an answer departs from the contract (empty when it is a contract answer). */
async function checkAnswer(r: HostileRequest, answer: Answer): Promise<string[]> {
  const where = `${r.method} ${r.path} -> ${answer.status}`;
  const problems: string[] = [];
  if (!STATUSES.has(answer.status) && !isSitePath(r.path.replace(/[?#].*$/, ""))) problems.push(`${where}: not a contract status`);
  if (answer.status >= 400 && r.method !== "HEAD") {
    let body: any = null;
    try {
      const coding = answer.headers["content-encoding"];
      const bytes = coding === "br" ? brotliDecompressSync(answer.bytes) : coding === "gzip" ? gunzipSync(answer.bytes) : answer.bytes;
      body = JSON.parse(bytes.toString("utf8"));
    } catch {
      problems.push(`${where}: the error body is not JSON`);
    }
    if (body && (typeof body.error !== "string" || typeof body.message !== "string")) problems.push(`${where}: not a contract error body`);
  }
  if (answer.status === 503 && answer.headers["retry-after"] === undefined && !answer.bytes.toString().includes("acquisition_not_ready")) {
    problems.push(`${where}: a 503 without Retry-After`);
  }
  const sitePath = r.path.replace(/[?#].*$/, "");
  if ((r.method === "GET" || r.method === "HEAD") && isSitePath(sitePath) && answer.status < 400) {
    // the landing page, the explorer and the dist's files (server/site.ts): outside the interface's document
    if (![200, 204, 206, 301, 304].includes(answer.status)) problems.push(`${where}: not a status of a static file`);
  } else if (DOCUMENTED_METHODS.has(r.method)) {
    // a fragment is no part of the resource (RFC 3986 §3.5): the server ignores it, as browsers never send it
    const path = r.path.replace(/#.*$/, "");
    problems.push(...(await openApiValidator()).check({ method: r.method, path, status: answer.status, headers: answer.headers, bytes: answer.bytes }));
  } else if (answer.status !== 404 && answer.status !== 405) problems.push(`${where}: an undocumented method answers neither 404 nor 405`);
  return problems;
}

/** Runs `jobs` with at most `n` at once. */
async function runLimited<T>(items: T[], n: number, job: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: n }, async () => {
    while (next < items.length) await job(items[next++]);
  }));
}

// ---------------------------------------------------------------------------------------------------------------

const hostile = suite("hostile input at scale");
let fixture: Fixture;
let server: Server;
hostile.before(async () => {
  fixture = await buildFixture();
  server = await startServer(fixture.dist);
});
hostile.after(() => void server?.child.kill("SIGKILL"));

hostile(`hostile - ${BATCHES * BATCH} generated requests: contract statuses and error bodies, the OpenAPI document, never a 500; memory bounded`, async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const statuses = new Map<number, number>();
  let sent = 0;
  let rssAfterWarmup = 0;
  const found: string[] = [];
  const details = await fc.check(
    fc.asyncProperty(fc.array(requestArb(fixture), { minLength: BATCH, maxLength: BATCH }), async (batch) => {
      const problems: string[] = [];
      await runLimited(batch, 8, async (r) => {
        const answer = await exchange(agent, server.port, r).catch((err) => err as Error);
        sent++;
        if (answer instanceof Error) return void problems.push(`${r.method} ${r.path}: ${answer.message}`);
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        problems.push(...(await checkAnswer(r, answer)));
      });
      if (sent === 20 * BATCH) rssAfterWarmup = rssMb(server.child.pid!);
      found.push(...problems);
      return problems.length === 0;
    }),
    { numRuns: BATCHES, seed: SEED, endOnFailure: true },
  );
  // the problems themselves (the whole counterexample would be megabytes of bodies)
  const thrown = details.failed && found.length === 0 ? String(details.errorInstance ?? "").slice(0, 2000) : "";
  if (details.failed) assert.unreachable(`seed ${SEED}, batch ${details.numRuns}:\n${found.slice(0, 12).map((p) => p.slice(0, 600)).join("\n")}${thrown}`);
  agent.destroy();
  const rss = rssMb(server.child.pid!);
  console.log(`  ${sent} requests (seed ${SEED}); statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}; server RSS ${rssAfterWarmup.toFixed(0)} MB after 1,000, ${rss.toFixed(0)} MB at the end`);
  assert.ok(sent >= 10_000, `${sent} requests`);
  assert.is(statuses.get(500), undefined);
  assert.ok(rss < 300 && rss < rssAfterWarmup + 80, `RSS ${rss} MB (after warm-up ${rssAfterWarmup} MB)`);
  assert.is(server.child.exitCode, null, "the server is still running");
  assert.not.match(server.stderr(), /unexpected error/, "no unexpected error was logged");
});

/** Raw bytes on a connection: whatever the server answers, and whether it closed the connection. */
function rawExchange(port: number, bytes: Buffer): Promise<{ text: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.end(bytes));
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => (socket.destroy(), resolve({ text: Buffer.concat(chunks).toString("latin1"), closed: false })), 15_000);
    socket.on("data", (c) => chunks.push(c));
    socket.on("error", () => {});
    socket.on("close", () => (clearTimeout(timer), resolve({ text: Buffer.concat(chunks).toString("latin1"), closed: true })));
  });
}

hostile("hostile - 500 raw byte streams: a contract answer or a 400 bad_request (JSON), the connection closed, never a hang; the server keeps serving", async () => {
  const line = fc.oneof(
    fc.uint8Array({ minLength: 1, maxLength: 200 }).map((b) => Buffer.from(b)),
    fc.tuple(fc.constantFrom("GET", "POST", "BREW", "G\u00c9T", "", "GET GET"), fc.string({ maxLength: 30 }), fc.constantFrom("HTTP/1.1", "HTTP/1.0", "HTTP/9.9", "HTTP/1.1 x", "")).map(([m, p, v]) => Buffer.from(`${m} /${p} ${v}\r\nHost: x\r\n\r\n`, "latin1")),
    fc.uint8Array({ minLength: 1, maxLength: 60 }).map((b) => Buffer.concat([Buffer.from("GET /api/health HTTP/1.1\r\nHost: x\r\nX-A: "), Buffer.from(b), Buffer.from("\r\n\r\n")])),
    fc.constantFrom("POST /api/v1/data/query HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\nzz\r\n", "POST /api/v1/data/query HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffff\r\n", "GET / HTTP/1.1\r\n\r\n", "\r\n\r\n\r\n").map((t) => Buffer.from(t)),
  );
  const inputs = fc.sample(line, { numRuns: 500, seed: SEED });
  const problems: string[] = [];
  await runLimited(inputs, 8, async (bytes) => {
    const { text, closed } = await rawExchange(server.port, bytes);
    const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1] ?? 0);
    if (!closed) problems.push(`${JSON.stringify(bytes.toString("latin1"))}: the connection was left open`);
    if (text === "") return; // closed without a word: the parser gave up on bytes that are no request
    if (!STATUSES.has(status)) problems.push(`${JSON.stringify(bytes.toString("latin1"))}: status ${status}`);
    const body = text.split("\r\n\r\n").slice(1).join("\r\n\r\n");
    if (status >= 400 && !/"error":"[a-z_]+","message":"/.test(body)) problems.push(`${JSON.stringify(bytes.toString("latin1"))}: ${JSON.stringify(text.slice(0, 200))}`);
  });
  assert.equal(problems.slice(0, 10), []);
  const health = await new Promise<number>((resolve) => http.get({ host: "127.0.0.1", port: server.port, path: "/api/health" }, (res) => (res.resume(), resolve(res.statusCode ?? 0))));
  assert.is(health, 200);
  assert.not.match(server.stderr(), /unexpected error/);
});

hostile.run();
