// Tests fetchSilo against a real local HTTP server scripted per path: success, 404, truncation, 5xx/429 retries, HTML,
// resume; files held asked for again with their ETag (or Last-Modified) and downloaded again only when the bucket
// rewrote them, daily GeoTIFFs and annual NetCDF files alike; a lock file without validators; and real nginx.

import { MAX_TEMP, VARIABLES } from "../../format/variables.js";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, truncate, utimes, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import os from "node:os";
import path from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { FetchError } from "../../pipeline/errors.js";
import { fetchSilo, parseVariables, parseYears, type FetchOptions, type FetchReport } from "../../pipeline/ingest/fetch.js";
import { DEFAULT_SILO_ANNUAL_BASE_URL, DEFAULT_SILO_BASE_URL, SOURCES_LOCK } from "../../pipeline/ingest/fetch-engine.js";
import { LOCK_FILE, type LockEntry } from "../../pipeline/ingest/silo-lock.js";
import { startNginx } from "../support/nginx.js";

const PREFIX = "/silo/daily";
const ANNUAL_PREFIX = "/silo/annual";
/** The bucket's folder of a variable: <prefix>/<var>/<file>; a file of another variable there is not found. */
function stripVariable(url: string): string {
  const m = /^([a-z_]+)\/(.*\.([a-z_]+)\.(tif|nc))$/.exec(url);
  return m && m[1] === m[3] ? m[2] : url;
}
const HTML_PAGE = "<!DOCTYPE html><html><body>Service temporarily unavailable</body></html>";

type Behaviour =
  | { kind: "ok" }
  | { kind: "missing" }
  | { kind: "truncate" } // Content-Length 4000, 1000 bytes, socket destroyed
  | { kind: "truncate-chunked" } // no Content-Length, 1000 bytes, socket destroyed
  | { kind: "status"; status: number; retryAfter?: string }
  | { kind: "html" };

interface SiloServer {
  baseUrl: string;
  annualBaseUrl: string;
  /** the bucket's version of each year's file (1 unless set): a new version has new bytes and a new ETag */
  annualVersion: Map<string, number>;
  /** the bucket's version of each daily file (1 unless set): rewritten in place, the same size, other bytes, new validators */
  dailyVersion: Map<string, number>;
  /** which validators daily files are served with (default both, as S3 does; nginx gives both too) */
  validators: "both" | "etag" | "last-modified" | "none";
  /** conditional requests (If-None-Match or If-Modified-Since) received, by path */
  conditional: Map<string, number>;
  /** the status of every answer to a daily file, by path */
  statuses: Map<string, number[]>;
  // path (relative to the base URL) -> behaviours served in order; the last one repeats; unscripted paths are "ok".
  script: Map<string, Behaviour[]>;
  counts: Map<string, number>;
  delayMs: number;
  maxInFlight: () => number;
  totalRequests: () => number;
  close: () => Promise<void>;
}

// A few KB starting with a little-endian TIFF header, different in length and content for every date; a later version
// of a date (the bucket rewrote it) has the same length and other bytes, as SILO's rewrites often do.
function makeTiff(date: string, version = 1): Buffer {
  const seed = Number(date.replaceAll("-", "")) % 251;
  const body = Buffer.alloc(3000 + (seed % 40) * 17);
  for (let i = 0; i < body.length; i++) body[i] = (i * 7 + seed + (version - 1) * 13) & 0xff;
  body.write("II*\0", 0, "latin1");
  return body;
}

/** The validators of a daily file's version: an ETag naming it, and a Last-Modified a day later for each version. */
function dailyValidators(silo: SiloServer, relPath: string, version: number): Record<string, string> {
  const etag = `"${relPath.replace(/\W/g, "")}-v${version}"`;
  const lastModified = new Date(Date.UTC(2024, 0, 1) + version * 86_400_000).toUTCString();
  return { ...(silo.validators === "both" || silo.validators === "etag" ? { etag } : {}), ...(silo.validators === "both" || silo.validators === "last-modified" ? { "last-modified": lastModified } : {}) };
}

/** Whether a GET's conditions hold for the copy the bucket has: If-None-Match first (RFC 9110 §13.2.2), else If-Modified-Since. */
function isNotModified(req: IncomingMessage, validators: Record<string, string>): boolean {
  const etag = req.headers["if-none-match"];
  if (etag !== undefined) return validators.etag !== undefined && etag === validators.etag;
  const since = req.headers["if-modified-since"];
  return since !== undefined && validators["last-modified"] !== undefined && Date.parse(since) >= Date.parse(validators["last-modified"]);
}

// A NetCDF-4 (HDF5) signature and a body that depends on the year and the bucket's version of the file.
function makeNc(year: string, version: number): Buffer {
  const body = Buffer.alloc(5000 + Number(year) % 50 + version * 13);
  for (let i = 0; i < body.length; i++) body[i] = (i * 11 + Number(year) + version * 3) & 0xff;
  Buffer.from([0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a]).copy(body);
  return body;
}

function dateToPath(date: string): string {
  return `${date.slice(0, 4)}/${date.replaceAll("-", "")}.max_temp.tif`;
}

function hashBytes(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}

async function startSilo(): Promise<SiloServer> {
  const script = new Map<string, Behaviour[]>();
  const counts = new Map<string, number>();
  let inFlight = 0;
  let maxInFlight = 0;
  const silo: SiloServer = {
    baseUrl: "",
    annualBaseUrl: "",
    annualVersion: new Map(),
    dailyVersion: new Map(),
    validators: "both",
    conditional: new Map(),
    statuses: new Map(),
    script,
    counts,
    delayMs: 0,
    maxInFlight: () => maxInFlight,
    totalRequests: () => [...counts.values()].reduce((a, b) => a + b, 0),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer(async (req, res) => {
    const url = req.url ?? "";
    if (url.startsWith(`${ANNUAL_PREFIX}/`)) return serveAnnual(silo, stripVariable(url.slice(ANNUAL_PREFIX.length + 1)), req, res);
    const relPath = url.startsWith(`${PREFIX}/`) ? stripVariable(url.slice(PREFIX.length + 1)) : url;
    const seen = counts.get(relPath) ?? 0;
    counts.set(relPath, seen + 1);
    res.on("finish", () => silo.statuses.set(relPath, [...(silo.statuses.get(relPath) ?? []), res.statusCode]));
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.on("close", () => inFlight--);
    if (silo.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, silo.delayMs));
    const match = /^\d{4}\/(\d{4})(\d{2})(\d{2})\.[a-z_]+\.tif$/.exec(relPath);
    const steps = script.get(relPath) ?? [{ kind: "ok" }];
    const step = steps[Math.min(seen, steps.length - 1)];
    if (!match || step.kind === "missing") {
      res.writeHead(404, { "content-type": "application/xml" }).end("<Error><Code>NoSuchKey</Code></Error>");
      return;
    }
    const version = silo.dailyVersion.get(relPath) ?? 1;
    const body = makeTiff(`${match[1]}-${match[2]}-${match[3]}`, version);
    const validators = dailyValidators(silo, relPath, version);
    switch (step.kind) {
      case "ok":
        if (req.headers["if-none-match"] !== undefined || req.headers["if-modified-since"] !== undefined) silo.conditional.set(relPath, (silo.conditional.get(relPath) ?? 0) + 1);
        if (isNotModified(req, validators)) {
          res.writeHead(304, validators).end();
          return;
        }
        res.writeHead(200, { "content-type": "image/tiff", "content-length": String(body.length), ...validators }).end(body);
        return;
      case "truncate":
        res.writeHead(200, { "content-type": "image/tiff", "content-length": "4000" });
        res.write(body.subarray(0, 1000), () => dropLater(res.socket));
        return;
      case "truncate-chunked":
        res.writeHead(200, { "content-type": "image/tiff" });
        res.write(body.subarray(0, 1000), () => dropLater(res.socket));
        return;
      case "status": {
        const headers: Record<string, string> = { "content-type": "text/plain" };
        if (step.retryAfter !== undefined) headers["retry-after"] = step.retryAfter;
        res.writeHead(step.status, headers).end("try later");
        return;
      }
      case "html":
        res.writeHead(200, { "content-type": "text/html", "content-length": String(Buffer.byteLength(HTML_PAGE)) }).end(HTML_PAGE);
        return;
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  silo.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}${PREFIX}`;
  silo.annualBaseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}${ANNUAL_PREFIX}`;
  return silo;
}

/** An annual file as S3 serves one: an ETag, and 304 to a request whose If-None-Match is that ETag. */
function serveAnnual(silo: SiloServer, relPath: string, req: IncomingMessage, res: ServerResponse): void {
  const key = `annual/${relPath}`;
  const seen = silo.counts.get(key) ?? 0;
  silo.counts.set(key, seen + 1);
  const match = /^(\d{4})\.[a-z_]+\.nc$/.exec(relPath);
  const steps = silo.script.get(key) ?? [{ kind: "ok" }];
  const step = steps[Math.min(seen, steps.length - 1)];
  if (!match || step.kind === "missing") {
    res.writeHead(404, { "content-type": "application/xml" }).end("<Error><Code>NoSuchKey</Code></Error>");
    return;
  }
  if (step.kind === "html") {
    res.writeHead(200, { "content-type": "text/html", "content-length": String(Buffer.byteLength(HTML_PAGE)) }).end(HTML_PAGE);
    return;
  }
  const version = silo.annualVersion.get(match[1]) ?? 1;
  const etag = `"${match[1]}-v${version}"`;
  if (req.headers["if-none-match"] !== undefined) silo.conditional.set(key, (silo.conditional.get(key) ?? 0) + 1);
  if (req.headers["if-none-match"] === etag) {
    res.writeHead(304, { etag }).end();
    return;
  }
  const body = makeNc(match[1], version);
  res.writeHead(200, { "content-type": "application/x-netcdf", "content-length": String(body.length), etag }).end(body);
}

// The pause lets the client read the 1000 bytes first: fetch discards chunks still queued when the stream errors.
// 30 ms was too short on a busy machine (make test runs files side by side): the client read 0 bytes in 1 of 8 runs
// beside two busy cores.
function dropLater(socket: Socket | null): void {
  setTimeout(() => socket?.destroy(), 300);
}

// Runs `body` with a fresh server and temp folder, and always closes and removes both.
async function runWithSilo(body: (silo: SiloServer, folder: string) => Promise<void>): Promise<void> {
  const silo = await startSilo();
  const folder = await mkdtemp(path.join(os.tmpdir(), "silo-fetch-"));
  try {
    await body(silo, folder);
  } finally {
    await silo.close();
    await rm(folder, { recursive: true, force: true });
  }
}

async function listFiles(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(folder, path.join(entry.parentPath ?? entry.path, entry.name)).split(path.sep).join("/"))
    .sort();
}

/** The lock entry of a daily file as the bucket serves it now: its sha256 and its validators. */
function expectEntry(silo: SiloServer, date: string, version = 1): LockEntry {
  const bytes = makeTiff(date, version);
  const { etag, "last-modified": lastModified } = dailyValidators(silo, dateToPath(date), version);
  const validators = { ...(etag ? { etag } : {}), ...(lastModified ? { last_modified: lastModified } : {}) };
  return { path: dateToPath(date), url: `${silo.baseUrl}/max_temp/${dateToPath(date)}`, bytes: bytes.length, sha256: hashBytes(bytes), ...validators };
}

/** What a folder holds after a fetch: its files, the lock file and the folder's lock, in listing order. */
const inFolder = (paths: string[]) => [...paths, LOCK_FILE, SOURCES_LOCK.name].sort();

async function readLock(folder: string): Promise<unknown> {
  return JSON.parse(await readFile(path.join(folder, LOCK_FILE), "utf8"));
}

async function assertDaysOnDisk(folder: string, dates: string[]): Promise<void> {
  for (const date of dates) {
    const bytes = await readFile(path.join(folder, dateToPath(date)));
    assert.ok(bytes.equals(makeTiff(date)), `${dateToPath(date)} has the served bytes`);
  }
}

async function catchError(promise: Promise<unknown>): Promise<FetchError> {
  try {
    await promise;
  } catch (err) {
    assert.instance(err, FetchError);
    return err as FetchError;
  }
  assert.unreachable("expected fetchSilo to throw a FetchError");
  throw new Error("unreachable");
}

function readCounts(silo: SiloServer, dates: string[]): number[] {
  return dates.map((date) => silo.counts.get(dateToPath(date)) ?? 0);
}

function makeOptions(silo: SiloServer, folder: string, extra: Partial<FetchOptions>): FetchOptions {
  return { from: "2003-01-01", to: "2003-01-01", variables: [MAX_TEMP], folder, baseUrl: silo.baseUrl, backoffMs: 5, ...extra };
}

const measureTiff = (date: string) => makeTiff(date).length;
const addUp = (values: number[]) => values.reduce((a, b) => a + b, 0);

// ---------------------------------------------------------------------------------------------------------------

const download = suite("fetch - download");

download("fetch - default base URL is the SILO bucket of docs/contract.md §6.1", () => {
  assert.is(DEFAULT_SILO_BASE_URL, "https://s3-ap-southeast-2.amazonaws.com/silo-open-data/Official/daily");
});

download("fetch - mirrors every day across a year boundary into the bucket's folders with an exact lock file", async () => {
  await runWithSilo(async (silo, folder) => {
    const dates = ["2003-12-30", "2003-12-31", "2004-01-01", "2004-01-02"];
    const lines: string[] = [];
    const report = await fetchSilo(makeOptions(silo, folder, { from: dates[0], to: dates[3], log: (line) => lines.push(line) }));

    assert.equal(report, {
      added: dates.map(dateToPath),
      revised: [],
      unchanged: [],
      downloads: 4,
      bytes: addUp(dates.map(measureTiff)),
    } satisfies FetchReport);
    assert.equal(await listFiles(folder), inFolder(dates.map(dateToPath)));
    await assertDaysOnDisk(folder, dates);
    assert.equal(await readLock(folder), { files: dates.map((date) => expectEntry(silo, date)) });
    assert.equal(readCounts(silo, dates), [1, 1, 1, 1]);
    assert.equal(
      lines.sort(),
      dates.map((date) => `fetched ${dateToPath(date)} ${(measureTiff(date) / 1000).toFixed(1)} kB`),
    );
  });
});

download("fetch - writes the lock after the first file, then at most every 2 s, and once at the end (never once per file)", async () => {
  await runWithSilo(async (silo, folder) => {
    const entriesWhenLogged: number[] = [];
    await fetchSilo(
      makeOptions(silo, folder, {
        from: "2003-03-01",
        to: "2003-03-03",
        concurrency: 1,
        log: () => {
          const lock = JSON.parse(readFileSync(path.join(folder, LOCK_FILE), "utf8")) as { files: unknown[] };
          entriesWhenLogged.push(lock.files.length);
        },
      }),
    );
    // a long run would otherwise rewrite a lock of n entries n times; a file fetched after the last write is
    // simply fetched again on resume
    assert.equal(entriesWhenLogged, [1, 1, 1]);
    const lock = JSON.parse(readFileSync(path.join(folder, LOCK_FILE), "utf8")) as { files: unknown[] };
    assert.is(lock.files.length, 3);
  });
});

download("fetch - requests the leap days 2004-02-29 and 2000-02-29", async () => {
  await runWithSilo(async (silo, folder) => {
    await fetchSilo(makeOptions(silo, folder, { from: "2004-02-28", to: "2004-03-01" }));
    await fetchSilo(makeOptions(silo, folder, { from: "2000-02-29", to: "2000-02-29" }));
    assert.equal([...silo.counts.keys()].sort(), [
      "2000/20000229.max_temp.tif",
      "2004/20040228.max_temp.tif",
      "2004/20040229.max_temp.tif",
      "2004/20040301.max_temp.tif",
    ]);
    await assertDaysOnDisk(folder, ["2000-02-29", "2004-02-28", "2004-02-29", "2004-03-01"]);
  });
});

download("fetch - bounds concurrency (default 4, or as given)", async () => {
  await runWithSilo(async (silo, folder) => {
    silo.delayMs = 40;
    await fetchSilo(makeOptions(silo, folder, { from: "2003-05-01", to: "2003-05-10" }));
    assert.is(silo.maxInFlight(), 4);
  });
  await runWithSilo(async (silo, folder) => {
    silo.delayMs = 40;
    await fetchSilo(makeOptions(silo, folder, { from: "2003-05-01", to: "2003-05-10", concurrency: 2 }));
    assert.is(silo.maxInFlight(), 2);
  });
});

download("fetch - SILO_BASE_URL overrides the default and the baseUrl option overrides SILO_BASE_URL; without VARIABLES every variable comes", async () => {
  const saved = process.env.SILO_BASE_URL;
  try {
    await runWithSilo(async (silo, folder) => {
      process.env.SILO_BASE_URL = silo.baseUrl;
      await fetchSilo({ from: "2003-01-01", to: "2003-01-01", folder });
      const bytes = makeTiff("2003-01-01");
      // every variable of format/variables.ts, in the lock's path order
      const entries = VARIABLES.map((v) => v.silo).sort().map((v) => ({
        path: `2003/20030101.${v}.tif`,
        url: `${silo.baseUrl}/${v}/2003/20030101.${v}.tif`,
        bytes: bytes.length,
        sha256: hashBytes(bytes),
        etag: dailyValidators(silo, `2003/20030101.${v}.tif`, 1).etag,
        last_modified: "Tue, 02 Jan 2024 00:00:00 GMT",
      }));
      assert.equal(await readLock(folder), { files: entries });
    });
    await runWithSilo(async (silo, folder) => {
      // Port 9 on loopback refuses connections: a request sent there would fail the run.
      process.env.SILO_BASE_URL = "http://127.0.0.1:9/nowhere";
      await fetchSilo(makeOptions(silo, folder, { retries: 0 }));
      assert.equal(readCounts(silo, ["2003-01-01"]), [1]);
    });
  } finally {
    if (saved === undefined) delete process.env.SILO_BASE_URL;
    else process.env.SILO_BASE_URL = saved;
  }
});

download.run();

// ---------------------------------------------------------------------------------------------------------------

const failures = suite("fetch - failures");

failures("fetch - lists every failed day with URL and reason, keeps the completed files, retries only what is transient", async () => {
  await runWithSilo(async (silo, folder) => {
    const dates = ["2003-01-01", "2003-01-02", "2003-01-03", "2003-01-04", "2003-01-05", "2003-01-06"];
    silo.script.set(dateToPath("2003-01-02"), [{ kind: "missing" }]);
    silo.script.set(dateToPath("2003-01-03"), [{ kind: "truncate" }]);
    silo.script.set(dateToPath("2003-01-04"), [{ kind: "status", status: 503 }, { kind: "ok" }]);
    silo.script.set(dateToPath("2003-01-05"), [{ kind: "html" }]);
    const lines: string[] = [];
    const err = await catchError(fetchSilo(makeOptions(silo, folder, { from: dates[0], to: dates[5], log: (line) => lines.push(line) })));

    const url = (date: string) => `${silo.baseUrl}/max_temp/${dateToPath(date)}`;
    assert.is(err.stage, "fetch");
    assert.is(err.file, folder);
    assert.is(
      err.message,
      `${folder}: 3 of 6 days failed to download; completed files and their lock entries are kept, re-run to resume:\n` +
        `  max_temp 2003-01-02 ${url("2003-01-02")}: 404 Not Found (no such day of max_temp in the bucket)\n` +
        `  max_temp 2003-01-03 ${url("2003-01-03")}: truncated: 1000 of 4000 bytes after 5 attempts\n` +
        `  max_temp 2003-01-05 ${url("2003-01-05")}: ${url("2003-01-05")} is not a GeoTIFF (starts with "<!DOCTYPE html><html><body>Servi"; an HTML error page?) [fetch]`,
    );
    // 404 and HTML are answers, not hiccups: one request each. Truncation: retries + 1. 503 then 200: two.
    assert.equal(readCounts(silo, dates), [1, 1, 5, 2, 1, 1]);
    const kept = ["2003-01-01", "2003-01-04", "2003-01-06"];
    assert.equal(await listFiles(folder), inFolder(kept.map(dateToPath)));
    await assertDaysOnDisk(folder, kept);
    assert.equal(await readLock(folder), { files: kept.map((date) => expectEntry(silo, date)) });
    assert.ok(lines.includes(`failed ${dateToPath("2003-01-02")}: 404 Not Found (no such day of max_temp in the bucket)`));
    assert.is(lines.filter((line) => line.startsWith(`retry ${dateToPath("2003-01-03")} `)).length, 4);
    assert.is(lines.filter((line) => line.startsWith(`retry ${dateToPath("2003-01-04")} `)).length, 1);

    // The bucket recovers: a re-run downloads only the rest; what it finished costs a 304 each.
    silo.script.clear();
    const report = await fetchSilo(makeOptions(silo, folder, { from: dates[0], to: dates[5] }));
    assert.equal(report, {
      added: ["2003-01-02", "2003-01-03", "2003-01-05"].map(dateToPath),
      revised: [],
      unchanged: kept.map(dateToPath),
      downloads: 3,
      bytes: addUp(["2003-01-02", "2003-01-03", "2003-01-05"].map(measureTiff)),
    });
    assert.equal(readCounts(silo, dates), [2, 2, 6, 3, 2, 2]);
    assert.equal(kept.map((date) => silo.statuses.get(dateToPath(date))!.at(-1)), [304, 304, 304]);
    assert.equal(await readLock(folder), { files: dates.map((date) => expectEntry(silo, date)) });
  });
});

failures("fetch - gives up on a persistent 503 after retries + 1 attempts", async () => {
  await runWithSilo(async (silo, folder) => {
    silo.script.set(dateToPath("2003-01-01"), [{ kind: "status", status: 503 }]);
    const err = await catchError(fetchSilo(makeOptions(silo, folder, { retries: 2 })));
    assert.is(
      err.reason,
      `1 of 1 days failed to download; completed files and their lock entries are kept, re-run to resume:\n` +
        `  max_temp 2003-01-01 ${silo.baseUrl}/max_temp/2003/20030101.max_temp.tif: 503 Service Unavailable after 3 attempts`,
    );
    assert.equal(readCounts(silo, ["2003-01-01"]), [3]);
    assert.equal(await listFiles(folder), [SOURCES_LOCK.name]);
  });
});

failures("fetch - does not retry other 4xx answers", async () => {
  await runWithSilo(async (silo, folder) => {
    silo.script.set(dateToPath("2003-01-01"), [{ kind: "status", status: 403 }]);
    const err = await catchError(fetchSilo(makeOptions(silo, folder, {})));
    assert.ok(err.reason.endsWith(`2003/20030101.max_temp.tif: 403 Forbidden`), err.reason);
    assert.equal(readCounts(silo, ["2003-01-01"]), [1]);
  });
});

failures("fetch - a body cut short without Content-Length is truncated too", async () => {
  await runWithSilo(async (silo, folder) => {
    silo.script.set(dateToPath("2003-01-01"), [{ kind: "truncate-chunked" }, { kind: "ok" }]);
    silo.script.set(dateToPath("2003-01-02"), [{ kind: "truncate-chunked" }]);
    const err = await catchError(fetchSilo(makeOptions(silo, folder, { to: "2003-01-02", retries: 1 })));
    assert.ok(
      err.reason.endsWith(`max_temp 2003-01-02 ${silo.baseUrl}/max_temp/2003/20030102.max_temp.tif: truncated: connection closed after 1000 bytes after 2 attempts`),
      err.reason,
    );
    assert.equal(readCounts(silo, ["2003-01-01", "2003-01-02"]), [2, 2]);
    assert.equal(await listFiles(folder), inFolder([dateToPath("2003-01-01")]));
    await assertDaysOnDisk(folder, ["2003-01-01"]);
  });
});

failures("fetch - honours a numeric Retry-After on 429", async () => {
  await runWithSilo(async (silo, folder) => {
    silo.script.set(dateToPath("2003-01-01"), [{ kind: "status", status: 429, retryAfter: "1" }, { kind: "ok" }]);
    const started = performance.now();
    await fetchSilo(makeOptions(silo, folder, {}));
    const elapsedMs = performance.now() - started;
    assert.ok(elapsedMs >= 990, `waited ${elapsedMs} ms, expected about 1000 (backoffMs is only 5)`);
    assert.equal(readCounts(silo, ["2003-01-01"]), [2]);
    await assertDaysOnDisk(folder, ["2003-01-01"]);
  });
});

failures("fetch - rejects invalid date arguments before any request", async () => {
  await runWithSilo(async (silo, folder) => {
    const cases: Array<[string, string, string]> = [
      ["2003-02-29", "2003-03-01", "from"], // 2003 is not a leap year
      ["1900-02-29", "1900-03-01", "from"], // divisible by 100, not by 400
      ["2004-02-30", "2004-03-01", "from"],
      ["2003-04-31", "2003-05-01", "from"],
      ["2003-13-01", "2003-12-31", "from"],
      ["2003-00-10", "2003-01-10", "from"],
      ["2003-01-00", "2003-01-10", "from"],
      ["2003-1-01", "2003-01-10", "from"],
      ["20030101", "2003-01-10", "from"],
      ["", "2003-01-10", "from"],
      ["2003-01-01", "2003-01-32", "to"],
      ["2003-01-01", "2003-01-01T00:00:00Z", "to"],
    ];
    for (const [from, to, bad] of cases) {
      const err = await catchError(fetchSilo(makeOptions(silo, folder, { from, to })));
      const value = bad === "from" ? from : to;
      assert.is(err.message, `${bad}: ${JSON.stringify(value)} is not a calendar date; give YYYY-MM-DD [fetch]`);
    }
    const order = await catchError(fetchSilo(makeOptions(silo, folder, { from: "2003-01-02", to: "2003-01-01" })));
    assert.is(order.message, "from: 2003-01-02 is after to 2003-01-01; give from <= to [fetch]");
    assert.is(silo.totalRequests(), 0);
    assert.equal(await listFiles(folder), []);
  });
});

failures.run();

// ---------------------------------------------------------------------------------------------------------------

const revalidation = suite("fetch - files SILO rewrites in place");

revalidation("fetch - a daily file the bucket rewrote at the same size is revised: downloaded, recorded with its new sha256 and validators; the rest cost a 304", async () => {
  await runWithSilo(async (silo, folder) => {
    const dates = ["2003-03-01", "2003-03-02", "2003-03-03"];
    const options = makeOptions(silo, folder, { from: dates[0], to: dates[2] });
    await fetchSilo(options);
    silo.dailyVersion.set(dateToPath("2003-03-02"), 2);
    assert.is(makeTiff("2003-03-02", 2).length, makeTiff("2003-03-02").length);
    const lines: string[] = [];
    const report = await fetchSilo({ ...options, log: (line) => lines.push(line) });
    assert.equal(report, { added: [], revised: [dateToPath("2003-03-02")], unchanged: [dateToPath("2003-03-01"), dateToPath("2003-03-03")], downloads: 1, bytes: measureTiff("2003-03-02") });
    assert.equal(dates.map((date) => silo.statuses.get(dateToPath(date))), [[200, 304], [200, 200], [200, 304]]);
    assert.equal(dates.map((date) => silo.conditional.get(dateToPath(date))), [1, 1, 1]);
    assert.ok((await readFile(path.join(folder, dateToPath("2003-03-02")))).equals(makeTiff("2003-03-02", 2)));
    assert.equal(await readLock(folder), { files: [expectEntry(silo, "2003-03-01"), expectEntry(silo, "2003-03-02", 2), expectEntry(silo, "2003-03-03")] });
    assert.ok(lines.includes(`revised ${dateToPath("2003-03-02")} ${(measureTiff("2003-03-02") / 1000).toFixed(1)} kB (the bucket rewrote it)`), lines.join("\n"));
    // asked again: nothing changed, nothing downloaded
    const third = await fetchSilo(options);
    assert.equal([third.unchanged.length, third.downloads], [3, 0]);
    assert.equal(dates.map((date) => silo.statuses.get(dateToPath(date))!.at(-1)), [304, 304, 304]);
  });
});

revalidation("fetch - a bucket giving only Last-Modified is asked with If-Modified-Since: a 304 while unchanged, a download once rewritten", async () => {
  await runWithSilo(async (silo, folder) => {
    silo.validators = "last-modified";
    const options = makeOptions(silo, folder, { from: "2003-03-01", to: "2003-03-02" });
    await fetchSilo(options);
    assert.equal(await readLock(folder), { files: [expectEntry(silo, "2003-03-01"), expectEntry(silo, "2003-03-02")] });
    assert.is(expectEntry(silo, "2003-03-01").etag, undefined);
    assert.equal((await fetchSilo(options)).unchanged, [dateToPath("2003-03-01"), dateToPath("2003-03-02")]);
    silo.dailyVersion.set(dateToPath("2003-03-01"), 2);
    const report = await fetchSilo(options);
    assert.equal([report.revised, report.unchanged, report.downloads], [[dateToPath("2003-03-01")], [dateToPath("2003-03-02")], 1]);
    assert.equal(silo.statuses.get(dateToPath("2003-03-01")), [200, 304, 200]);
    assert.equal(silo.conditional.get(dateToPath("2003-03-01")), 2);
    assert.equal(await readLock(folder), { files: [expectEntry(silo, "2003-03-01", 2), expectEntry(silo, "2003-03-02")] });
  });
});

revalidation("fetch - a lock file written before validators were recorded: each file is downloaded once, unchanged by its sha256, and its validators recorded; then a 304", async () => {
  await runWithSilo(async (silo, folder) => {
    const dates = ["2003-03-01", "2003-03-02"];
    const options = makeOptions(silo, folder, { from: dates[0], to: dates[1] });
    await fetchSilo(options);
    const old = { files: dates.map((date) => ({ ...expectEntry(silo, date), etag: undefined, last_modified: undefined })) };
    await writeFile(path.join(folder, LOCK_FILE), JSON.stringify(old));
    const lines: string[] = [];
    const report = await fetchSilo({ ...options, log: (line) => lines.push(line) });
    assert.equal(report, { added: [], revised: [], unchanged: dates.map(dateToPath), downloads: 2, bytes: addUp(dates.map(measureTiff)) });
    assert.equal(dates.map((date) => silo.conditional.get(dateToPath(date)) ?? 0), [0, 0]);
    assert.equal(lines.sort(), dates.map((date) => `unchanged ${dateToPath(date)} (downloaded again: the same sha256; its validators are recorded)`));
    assert.equal(await readLock(folder), { files: dates.map((date) => expectEntry(silo, date)) });
    await fetchSilo(options);
    assert.equal(dates.map((date) => silo.statuses.get(dateToPath(date))), [[200, 200, 304], [200, 200, 304]]);
  });
});

revalidation("fetch - a bucket giving no validators at all: a held file is downloaded each time, and unchanged while its sha256 is", async () => {
  await runWithSilo(async (silo, folder) => {
    silo.validators = "none";
    const options = makeOptions(silo, folder, {});
    await fetchSilo(options);
    const again = await fetchSilo(options);
    assert.equal(again, { added: [], revised: [], unchanged: [dateToPath("2003-01-01")], downloads: 1, bytes: measureTiff("2003-01-01") });
    assert.equal(silo.statuses.get(dateToPath("2003-01-01")), [200, 200]);
    assert.equal(await readLock(folder), { files: [expectEntry(silo, "2003-01-01")] });
  });
});

revalidation("fetch - from nginx (ETag and Last-Modified of its own): a file rewritten in place at the same size is revised, the others cost a 304", async () => {
  const root = await mkdtemp(path.join(os.tmpdir(), "silo-nginx-"));
  const folder = await mkdtemp(path.join(os.tmpdir(), "silo-fetch-"));
  const dates = ["2003-03-01", "2003-03-02", "2003-03-03"];
  const served = (date: string) => path.join(root, "max_temp", dateToPath(date));
  for (const date of dates) {
    await mkdir(path.dirname(served(date)), { recursive: true });
    await writeFile(served(date), makeTiff(date));
  }
  const nginx = await startNginx(root);
  try {
    const options: FetchOptions = { from: dates[0], to: dates[2], variables: [MAX_TEMP], folder, baseUrl: nginx.url, backoffMs: 5 };
    await fetchSilo(options);
    const lock = (await readLock(folder)) as { files: LockEntry[] };
    assert.ok(lock.files.every((f) => /^"[0-9a-f]+-[0-9a-f]+"$/.test(f.etag ?? "") && Number.isFinite(Date.parse(f.last_modified ?? ""))), JSON.stringify(lock));
    // nginx's ETag is the modification time and size: a rewrite at the same size a second later changes it
    await writeFile(served("2003-03-02"), makeTiff("2003-03-02", 2));
    await utimes(served("2003-03-02"), new Date(Date.UTC(2025, 0, 2)), new Date(Date.UTC(2025, 0, 2)));
    const report = await fetchSilo(options);
    assert.equal([report.revised, report.unchanged, report.downloads], [[dateToPath("2003-03-02")], [dateToPath("2003-03-01"), dateToPath("2003-03-03")], 1]);
    assert.ok((await readFile(path.join(folder, dateToPath("2003-03-02")))).equals(makeTiff("2003-03-02", 2)));
    const statuses = (await nginx.requests()).map((line) => line.split(" ").slice(1, 3).join(" "));
    assert.equal(statuses.slice(3).sort(), dates.map((date) => `/max_temp/${dateToPath(date)} ${date === "2003-03-02" ? 200 : 304}`));
  } finally {
    await nginx.stop();
    await rm(root, { recursive: true, force: true });
    await rm(folder, { recursive: true, force: true });
  }
});

revalidation.run();

// ---------------------------------------------------------------------------------------------------------------

const resume = suite("fetch - resume");

resume("fetch - asks for intact files with their ETag (a 304 each), and downloads corrupted or unrecorded ones again", async () => {
  await runWithSilo(async (silo, folder) => {
    const dates = ["2003-07-01", "2003-07-02", "2003-07-03", "2003-07-04"];
    const options = makeOptions(silo, folder, { from: dates[0], to: dates[3] });
    await fetchSilo(options);
    const lock = await readLock(folder);

    const lines: string[] = [];
    const second = await fetchSilo({ ...options, log: (line) => lines.push(line) });
    assert.equal(second, { added: [], revised: [], unchanged: dates.map(dateToPath), downloads: 0, bytes: 0 });
    assert.equal(readCounts(silo, dates), [2, 2, 2, 2]);
    assert.equal(dates.map((date) => silo.statuses.get(dateToPath(date))), [[200, 304], [200, 304], [200, 304], [200, 304]]);
    assert.equal(lines.sort(), dates.map((date) => `unchanged ${dateToPath(date)} (304 Not Modified)`));

    // Same size, different bytes; cut short; and a stale .part from a killed run: the bucket's copy is unchanged, so
    // the two damaged ones are downloaded without conditions and count as unchanged; the .part is removed.
    const flipped = makeTiff("2003-07-01");
    flipped[100] ^= 0xff;
    await writeFile(path.join(folder, dateToPath("2003-07-01")), flipped);
    await truncate(path.join(folder, dateToPath("2003-07-02")), 500);
    await writeFile(path.join(folder, `${dateToPath("2003-07-03")}.part`), "half");
    const third = await fetchSilo(options);
    assert.equal(third, { added: [], revised: [], unchanged: dates.map(dateToPath), downloads: 2, bytes: measureTiff("2003-07-01") + measureTiff("2003-07-02") });
    assert.equal(dates.map((date) => silo.statuses.get(dateToPath(date))!.at(-1)), [200, 200, 304, 304]);
    assert.equal([silo.conditional.get(dateToPath("2003-07-01")), silo.conditional.get(dateToPath("2003-07-03"))], [1, 2]);
    await assertDaysOnDisk(folder, dates);
    assert.equal(await readLock(folder), lock);

    // A file on disk the lock does not vouch for is not trusted: downloaded without conditions, and new to the lock.
    const lockPath = path.join(folder, LOCK_FILE);
    const trimmed = { files: (lock as { files: LockEntry[] }).files.filter((entry) => entry.path !== dateToPath("2003-07-04")) };
    await writeFile(lockPath, JSON.stringify(trimmed));
    const fourth = await fetchSilo(options);
    assert.equal([fourth.added, fourth.unchanged.length, fourth.downloads], [[dateToPath("2003-07-04")], 3, 1]);
    assert.equal(readCounts(silo, dates), [4, 4, 4, 4]);
    assert.equal(await readLock(folder), lock);
    assert.equal(await listFiles(folder), inFolder(dates.map(dateToPath)));
  });
});

resume("fetch - refuses a lock file it cannot read", async () => {
  await runWithSilo(async (silo, folder) => {
    await writeFile(path.join(folder, LOCK_FILE), "{not json");
    const err = await catchError(fetchSilo(makeOptions(silo, folder, {})));
    assert.is(err.file, path.join(folder, LOCK_FILE));
    assert.match(err.reason, "delete it to download everything again");
    assert.is(silo.totalRequests(), 0);
  });
});

resume.run();

// ---------------------------------------------------------------------------------------------------------------

const annual = suite("fetch - annual files");

annual("fetch - VARIABLES: each variable's files from its own folder of the bucket, into one folder and one lock file", async () => {
  await runWithSilo(async (silo, folder) => {
    const variables = parseVariables("daily_rain, air_temperature_min,daily_rain");
    assert.equal(variables.map((v) => v.silo), ["daily_rain", "min_temp"]);
    await fetchSilo({ years: "2003", variables, folder, annualBaseUrl: silo.annualBaseUrl, backoffMs: 5 });
    assert.equal(await listFiles(folder), inFolder(["2003.daily_rain.nc", "2003.min_temp.nc"]));
    const lock = (await readLock(folder)) as { files: LockEntry[] };
    assert.equal(lock.files.map((f) => f.url), ["daily_rain", "min_temp"].map((v) => `${silo.annualBaseUrl}/${v}/2003.${v}.nc`));
    for (const bad of ["monthly_rain", "", " , "]) {
      let err: unknown;
      try {
        parseVariables(bad);
      } catch (e) {
        err = e;
      }
      assert.instance(err, FetchError, bad);
      assert.match((err as FetchError).reason, /max_temp, min_temp, daily_rain, radiation, vp/);
    }
  });
});

const annualEntry = (silo: SiloServer, year: string, version = 1): LockEntry => {
  const bytes = makeNc(year, version);
  return { path: `${year}.max_temp.nc`, url: `${silo.annualBaseUrl}/max_temp/${year}.max_temp.nc`, bytes: bytes.length, sha256: hashBytes(bytes), etag: `"${year}-v${version}"` };
};

annual("fetch - the default annual base URL is the bucket's Official/annual of docs/contract.md §6.1", () => {
  assert.is(DEFAULT_SILO_ANNUAL_BASE_URL, "https://s3-ap-southeast-2.amazonaws.com/silo-open-data/Official/annual");
});

annual("fetch - YEARS fetches YYYY.max_temp.nc files into the same lock file, with their ETag; daily files beside them stay", async () => {
  await runWithSilo(async (silo, folder) => {
    await fetchSilo(makeOptions(silo, folder, { from: "2003-12-31", to: "2003-12-31" }));
    const lines: string[] = [];
    const report = await fetchSilo({ years: "2002-2003", folder, annualBaseUrl: silo.annualBaseUrl, variables: [MAX_TEMP], backoffMs: 5, log: (l) => lines.push(l) });
    assert.equal(report, { added: ["2002.max_temp.nc", "2003.max_temp.nc"], revised: [], unchanged: [], downloads: 2, bytes: makeNc("2002", 1).length + makeNc("2003", 1).length });
    assert.equal(await listFiles(folder), inFolder(["2002.max_temp.nc", "2003.max_temp.nc", dateToPath("2003-12-31")]));
    assert.ok((await readFile(path.join(folder, "2003.max_temp.nc"))).equals(makeNc("2003", 1)));
    assert.equal(await readLock(folder), { files: [annualEntry(silo, "2002"), annualEntry(silo, "2003"), expectEntry(silo, "2003-12-31")] });
    assert.equal(lines.sort(), [`fetched 2002.max_temp.nc ${(makeNc("2002", 1).length / 1000).toFixed(1)} kB`, `fetched 2003.max_temp.nc ${(makeNc("2003", 1).length / 1000).toFixed(1)} kB`]);
  });
});

annual("fetch - again: an unchanged year is a 304; a year SILO rewrote is revised: fetched again and recorded with its new sha256", async () => {
  await runWithSilo(async (silo, folder) => {
    const options = { years: "2002-2003", folder, annualBaseUrl: silo.annualBaseUrl, variables: [MAX_TEMP], backoffMs: 5 };
    await fetchSilo(options);
    silo.annualVersion.set("2003", 2);
    const lines: string[] = [];
    const report = await fetchSilo({ ...options, log: (l) => lines.push(l) });
    assert.equal(report, { added: [], revised: ["2003.max_temp.nc"], unchanged: ["2002.max_temp.nc"], downloads: 1, bytes: makeNc("2003", 2).length });
    assert.equal([silo.counts.get("annual/2002.max_temp.nc"), silo.counts.get("annual/2003.max_temp.nc")], [2, 2]);
    assert.equal([silo.conditional.get("annual/2002.max_temp.nc"), silo.conditional.get("annual/2003.max_temp.nc")], [1, 1]);
    assert.ok(lines.includes("unchanged 2002.max_temp.nc (304 Not Modified)"), lines.join("\n"));
    assert.ok(lines.includes(`revised 2003.max_temp.nc ${(makeNc("2003", 2).length / 1000).toFixed(1)} kB (the bucket rewrote it)`), lines.join("\n"));
    assert.ok((await readFile(path.join(folder, "2003.max_temp.nc"))).equals(makeNc("2003", 2)));
    assert.equal(await readLock(folder), { files: [annualEntry(silo, "2002"), annualEntry(silo, "2003", 2)] });
    // a local copy that no longer matches its recorded sha256 is fetched without asking
    await truncate(path.join(folder, "2002.max_temp.nc"), 100);
    await fetchSilo(options);
    assert.equal([silo.conditional.get("annual/2002.max_temp.nc"), silo.counts.get("annual/2002.max_temp.nc")], [1, 3]);
    assert.ok((await readFile(path.join(folder, "2002.max_temp.nc"))).equals(makeNc("2002", 1)));
  });
});

annual("fetch - a missing year, and a 200 that is not a NetCDF-4 file, are failures that name the year and the reason", async () => {
  await runWithSilo(async (silo, folder) => {
    silo.script.set("annual/2001.max_temp.nc", [{ kind: "missing" }]);
    silo.script.set("annual/2002.max_temp.nc", [{ kind: "html" }]);
    const err = await catchError(fetchSilo({ years: "2001,2002,2003", folder, annualBaseUrl: silo.annualBaseUrl, variables: [MAX_TEMP], backoffMs: 5 }));
    const url = (year: string) => `${silo.annualBaseUrl}/max_temp/${year}.max_temp.nc`;
    assert.is(
      err.reason,
      "2 of 3 years failed to download; completed files and their lock entries are kept, re-run to resume:\n" +
        `  max_temp 2001 ${url("2001")}: 404 Not Found (no such year of max_temp in the bucket)\n` +
        `  max_temp 2002 ${url("2002")}: ${url("2002")} is not a NetCDF-4 (HDF5) file (starts with "<!DOCTYPE html><html><body>Servi"; an HTML error page?)`,
    );
    assert.equal(await listFiles(folder), inFolder(["2003.max_temp.nc"]));
  });
});

annual("fetch - YEARS is whole years from 1889 to this year: ranges and lists, each once, ascending; anything else is refused", async () => {
  const thisYear = new Date().getUTCFullYear();
  assert.equal(parseYears("2003"), [2003]);
  assert.equal(parseYears("2005-2007, 2003,2006"), [2003, 2005, 2006, 2007]);
  assert.is(parseYears(`1889-${thisYear}`).length, thisYear - 1889 + 1);
  for (const bad of ["1888", `${thisYear + 1}`, "2007-2005", "03", "2003-", "abc", ""]) {
    let err: unknown;
    try {
      parseYears(bad);
    } catch (e) {
      err = e;
    }
    assert.instance(err, FetchError, bad);
    assert.match((err as FetchError).reason, /is not a year or range of years in 1889\.\./);
  }
  await runWithSilo(async (silo, folder) => {
    const both = await catchError(fetchSilo({ years: "2003", from: "2003-01-01", to: "2003-01-01", folder, annualBaseUrl: silo.annualBaseUrl, variables: [MAX_TEMP] }));
    assert.is(both.reason, "give either FROM and TO (daily files) or YEARS (annual files), not both");
    assert.is(silo.totalRequests(), 0);
  });
});

annual.run();
