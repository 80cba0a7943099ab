// The pipeline's one downloader (pipeline/download.ts) against a real local HTTP server scripted per path:
// what make fetch's and make sync's own tests do not reach: stalls, redirects, encoded bodies taken as stored or
// decoded, conditional requests, an expected size and sha256, progress taken back, the backoff's jitter.

import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliCompressSync, gzipSync } from "node:zlib";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { type DownloadConfig, DownloadError, type DownloadTarget, type FileSignature, download } from "../../pipeline/download.js";

const WORK = mkdtempSync(join(tmpdir(), "download-test-"));
process.on("exit", () => rmSync(WORK, { recursive: true, force: true }));
let folders = 0;
const freshDir = () => join(WORK, String(++folders));

/** 20 kB that compress well, and the little-endian TIFF header a signature check looks for. */
const FILE = Buffer.concat([Buffer.from("II*\0", "latin1"), Buffer.from("0123456789abcdef".repeat(1280))]);
const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
const EXPECT = { size: FILE.length, sha256: sha256(FILE) };
const TIFF: FileSignature = { kind: "GeoTIFF", length: 4, matches: (head) => head.length >= 4 && head.subarray(0, 4).equals(FILE.subarray(0, 4)) };

/** One answer of the scripted host: it writes the response (or leaves the request hanging). */
type Step = (req: IncomingMessage, res: ServerResponse) => void;

interface Host {
  url: string;
  /** path -> steps served in order; the last one repeats */
  script: Map<string, Step[]>;
  asked: string[];
  close(): Promise<void>;
}

async function startHost(): Promise<Host> {
  const host: Host = { url: "", script: new Map(), asked: [], close: async () => {} };
  const server = createServer((req, res) => {
    const path = req.url ?? "";
    const seen = host.asked.filter((p) => p === path).length;
    host.asked.push(path);
    const steps = host.script.get(path) ?? [(_q, r) => void r.writeHead(404).end()];
    steps[Math.min(seen, steps.length - 1)](req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  host.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  host.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return host;
}

const ok =
  (body: Buffer, headers: Record<string, string> = {}): Step =>
  (_req, res) =>
    void res.writeHead(200, { "content-length": String(body.length), ...headers }).end(body);
const status =
  (code: number, headers: Record<string, string> = {}): Step =>
  (_req, res) =>
    void res.writeHead(code, headers).end("no");

async function withHost(body: (host: Host, dir: string) => Promise<void>): Promise<void> {
  const host = await startHost();
  try {
    await body(host, freshDir());
  } finally {
    await host.close();
  }
}

/** Rejects unless `promise` fails with a DownloadError; returns it. */
async function failure(promise: Promise<unknown>): Promise<DownloadError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  assert.instance(err, DownloadError);
  return err as DownloadError;
}

const listTree = async (dir: string) => (await readdir(dir, { recursive: true }).catch(() => [] as string[])).sort();
const quick: DownloadConfig = { retries: 2, backoffMs: 5 };

// ---------------------------------------------------------------------------------------------------------------

const transfer = suite("download - transfer");

transfer("download - a file into place through <file>.part: its size, sha256 and validators; a redirect is followed", async () => {
  await withHost(async (host, dir) => {
    host.script.set("/a", [(_q, r) => void r.writeHead(302, { location: "/b" }).end()]);
    host.script.set("/b", [ok(FILE, { etag: '"v1"', "last-modified": "Tue, 01 Apr 2025 00:00:00 GMT" })]);
    const got = await download({ url: `${host.url}/a`, file: join(dir, "x", "f.tif"), head: TIFF }, quick);
    assert.equal(got, { unchanged: false, bytes: FILE.length, sha256: EXPECT.sha256, etag: '"v1"', lastModified: "Tue, 01 Apr 2025 00:00:00 GMT", attempts: 1 });
    assert.ok((await readFile(join(dir, "x", "f.tif"))).equals(FILE));
    assert.equal(await listTree(dir), ["x", "x/f.tif"]);
    assert.equal(host.asked, ["/a", "/b"]);
  });
});

transfer("download - more than 5 redirects is an answer, not retried", async () => {
  await withHost(async (host, dir) => {
    host.script.set("/loop", [(_q, r) => void r.writeHead(302, { location: "/loop" }).end()]);
    const err = await failure(download({ url: `${host.url}/loop`, file: join(dir, "f") }, quick));
    assert.equal([err.message, err.failure, err.status, err.attempts], ["302 Found", "status", 302, 1]);
    assert.is(host.asked.length, 6);
  });
});

transfer("download - a conditional request: 304 is unchanged and the file is left alone; a 304 never asked for is an error", async () => {
  await withHost(async (host, dir) => {
    host.script.set("/f", [(req, res) => void (req.headers["if-none-match"] === '"v1"' && req.headers["if-modified-since"] === "then" ? res.writeHead(304).end() : res.writeHead(500).end())]);
    const target: DownloadTarget = { url: `${host.url}/f`, file: join(dir, "f"), held: { etag: '"v1"', lastModified: "then" } };
    assert.equal(await download(target, quick), { unchanged: true, attempts: 1 });
    assert.equal(await listTree(dir), []);
    host.script.set("/g", [status(304)]);
    const err = await failure(download({ url: `${host.url}/g`, file: join(dir, "g") }, quick));
    assert.equal([err.message, err.attempts], ["304 Not Modified", 1]);
  });
});

transfer.run();

// ---------------------------------------------------------------------------------------------------------------

const trouble = suite("download - trouble");

trouble("download - a host that sends nothing is dropped after stallMs and tried again: before the answer and mid-body", async () => {
  await withHost(async (host, dir) => {
    const hang: Step = () => {};
    const halfThenHang: Step = (_q, res) => void res.writeHead(200, { "content-length": String(FILE.length) }).write(FILE.subarray(0, 1000));
    host.script.set("/silent", [hang, ok(FILE)]);
    host.script.set("/half", [halfThenHang]);
    const lines: string[] = [];
    const config = { ...quick, stallMs: 500, log: (l: string) => lines.push(l) };
    const got = await download({ url: `${host.url}/silent`, file: join(dir, "s") }, config);
    assert.equal([got.unchanged, got.attempts], [false, 2]);
    assert.match(lines[0], /^retry http:\/\/127\.0\.0\.1:\d+\/silent in \d+ ms: stalled: no response for 0\.5 s \(attempt 1 of 3\)$/);
    const err = await failure(download({ url: `${host.url}/half`, file: join(dir, "h") }, { ...config, retries: 1 }));
    assert.equal([err.message, err.failure, err.attempts], ["stalled: no data for 0.5 s after 1000 bytes after 2 attempts", "stalled", 2]);
    assert.equal(await listTree(dir), ["s"]);
  });
});

trouble("download - 5xx and 429 are retried with exponential backoff and up to 20% jitter; 404, 410 and 403 are not", async () => {
  await withHost(async (host, dir) => {
    host.script.set("/busy", [status(503)]);
    const lines: string[] = [];
    const err = await failure(download({ url: `${host.url}/busy`, file: join(dir, "b"), label: "busy" }, { retries: 3, backoffMs: 40, log: (l) => lines.push(l) }));
    assert.equal([err.message, err.status, err.attempts], ["503 Service Unavailable after 4 attempts", 503, 4]);
    const delays = lines.map((l) => Number(/^retry busy in (\d+) ms: 503 Service Unavailable \(attempt \d of 4\)$/.exec(l)?.[1]));
    assert.is(delays.length, 3);
    delays.forEach((ms, i) => assert.ok(ms >= 40 * 2 ** i && ms <= 48 * 2 ** i, `delay ${i + 1}: ${ms} ms`));
    for (const [code, text] of [
      [404, "404 Not Found (the host does not hold it)"],
      [410, "410 Gone"],
      [403, "403 Forbidden"],
    ] as const) {
      host.script.set(`/${code}`, [status(code)]);
      const answer = await failure(download({ url: `${host.url}/${code}`, file: join(dir, "x"), notFound: "the host does not hold it" }, quick));
      assert.equal([answer.message, answer.retryable, answer.attempts], [text, false, 1]);
    }
    assert.equal(host.asked.filter((p) => p !== "/busy"), ["/404", "/410", "/403"]);
  });
});

trouble("download - an expected size and sha256: a longer body is refused as soon as it passes, other bytes once whole; neither retried nor placed", async () => {
  await withHost(async (host, dir) => {
    const longer = Buffer.concat([FILE, Buffer.from("more")]);
    const other = Buffer.from(FILE);
    other[100] ^= 0xff;
    host.script.set("/longer", [ok(longer)]);
    host.script.set("/other", [ok(other)]);
    const temp = join(dir, ".temp");
    const a = await failure(download({ url: `${host.url}/longer`, file: join(dir, "a"), expect: EXPECT }, { ...quick, tempDir: temp }));
    assert.equal([a.message, a.failure], [`does not match its sha256 ${EXPECT.sha256}: longer than its ${FILE.length} bytes`, "unexpected"]);
    const b = await failure(download({ url: `${host.url}/other`, file: join(dir, "b"), expect: EXPECT }, { ...quick, tempDir: temp }));
    assert.equal([b.message, b.failure], [`does not match its sha256 ${EXPECT.sha256} (${FILE.length} bytes)`, "unexpected"]);
    assert.equal(host.asked, ["/longer", "/other"]);
    assert.equal(await listTree(dir), [".temp"]);
  });
});

trouble("download - progress counts what is placed: a truncated attempt's bytes are taken back", async () => {
  await withHost(async (host, dir) => {
    const cut: Step = (_q, res) => {
      res.writeHead(200, { "content-length": String(FILE.length) });
      res.write(FILE.subarray(0, 5000), () => setTimeout(() => res.socket?.destroy(), 30));
    };
    host.script.set("/f", [cut, ok(FILE)]);
    let progress = 0;
    const lines: string[] = [];
    await download({ url: `${host.url}/f`, file: join(dir, "f"), expect: EXPECT }, { ...quick, tempDir: join(dir, ".temp"), onBytes: (n) => (progress += n), log: (l) => lines.push(l) });
    assert.is(progress, FILE.length);
    assert.match(lines[0], new RegExp(`: truncated: 5000 of ${FILE.length} bytes \\(attempt 1 of 3\\)$`));
  });
});

trouble.run();

// ---------------------------------------------------------------------------------------------------------------

const encoded = suite("download - encoded bodies");

encoded("download - a body a host compressed on the way is decoded, and its first bytes checked after decoding", async () => {
  await withHost(async (host, dir) => {
    host.script.set("/gz", [ok(gzipSync(FILE), { "content-encoding": "gzip" })]);
    host.script.set("/html", [ok(gzipSync(Buffer.from("<!DOCTYPE html><html>busy</html>")), { "content-encoding": "gzip" })]);
    const got = await download({ url: `${host.url}/gz`, file: join(dir, "f"), head: TIFF }, quick);
    assert.equal([got.unchanged, !got.unchanged && got.sha256], [false, EXPECT.sha256]);
    assert.ok((await readFile(join(dir, "f"))).equals(FILE));
    const err = await failure(download({ url: `${host.url}/html`, file: join(dir, "h"), head: TIFF }, quick));
    assert.equal([err.message, err.failure], [`${host.url}/html is not a GeoTIFF (starts with "<!DOCTYPE html><html>busy</html>"; an HTML error page?)`, "unexpected"]);
    assert.equal(await listTree(dir), ["f"]);
  });
});

encoded("download - a stored .br copy labelled Content-Encoding br is taken as stored when that is the file expected; else decoded", async () => {
  await withHost(async (host, dir) => {
    const stored = brotliCompressSync(FILE);
    host.script.set("/f.br", [ok(stored, { "content-encoding": "br" })]);
    const asStored = await download({ url: `${host.url}/f.br`, file: join(dir, "f.br"), expect: { size: stored.length, sha256: sha256(stored) } }, { ...quick, tempDir: join(dir, ".t") });
    assert.equal([asStored.unchanged, !asStored.unchanged && asStored.bytes], [false, stored.length]);
    assert.ok((await readFile(join(dir, "f.br"))).equals(stored));
    const decoded = await download({ url: `${host.url}/f.br`, file: join(dir, "f"), expect: EXPECT }, { ...quick, tempDir: join(dir, ".t") });
    assert.equal([decoded.unchanged, !decoded.unchanged && decoded.bytes], [false, FILE.length]);
    assert.ok((await readFile(join(dir, "f"))).equals(FILE));
    assert.equal(await listTree(join(dir, ".t")), []);
  });
});

encoded("download - a body that does not decode as its Content-Encoding says, or in an encoding not known, is refused and not retried", async () => {
  await withHost(async (host, dir) => {
    host.script.set("/bad", [ok(Buffer.from("not gzip at all"), { "content-encoding": "gzip" })]);
    host.script.set("/zstd", [ok(FILE, { "content-encoding": "zstd" })]);
    const bad = await failure(download({ url: `${host.url}/bad`, file: join(dir, "b") }, quick));
    assert.equal([bad.failure, bad.attempts], ["unexpected", 1]);
    assert.match(bad.message, /^came with Content-Encoding gzip but does not decode \(/);
    const zstd = await failure(download({ url: `${host.url}/zstd`, file: join(dir, "z") }, quick));
    assert.is(zstd.message, "came with Content-Encoding zstd, which is not one this downloader decodes");
    assert.equal(await listTree(dir), []);
  });
});

encoded.run();
