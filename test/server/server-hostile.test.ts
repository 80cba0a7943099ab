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
import { useFixture, fixture } from "../support/server-fixture.js";
import { BATCH, BATCHES, DOCUMENTED_METHODS, type HostileRequest, SEED, STATUSES, requestArb } from "../support/hostile-requests.js";
import { openApiValidator } from "../support/openapi-validator.js";
import { isSitePath } from "../../server/site.js";

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
let server: Server;
hostile.before(async () => {
  await useFixture();
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
