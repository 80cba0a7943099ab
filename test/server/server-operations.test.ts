// Running the server for real: the graceful stop on SIGTERM/SIGINT (a real process), load shedding with fair turns
// and Retry-After, cheap and cached answers while busy, and the timeouts that keep slow clients from holding it.

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { rm } from "node:fs";
import { open as openFile } from "node:fs/promises";
import net from "node:net";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { Archive } from "../../format/archive.js";
import { LocalStorage, nodePlatform } from "../../format/local.js";
import { objectPath } from "../../format/objects.js";
import { openVersion } from "../../format/versions.js";
import { Admission, LOOP_TURN_MS } from "../../server/admission.js";
import { DEFAULT_LIMITS } from "../../server/settings.js";
import { DATES_A, type Served, assertError, copyDist, post, request, requestFor, withServer, useFixture, fixture } from "../support/server-fixture.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A data request of version A over a small box on one date (each date a different, uncached answer). */
const queryA = (date: string, extra: Record<string, unknown> = {}) => requestFor({ col: 250, row: 250, width: 3, height: 3 }, date, date, extra);

interface Raw {
  socket: net.Socket;
  /** everything received so far */
  text(): string;
  closed: Promise<number>;
}

/** A raw TCP connection to the server: bytes written as the test says, everything received kept. */
function connect(port: number): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    const opened = Date.now();
    const closed = new Promise<number>((done) => socket.on("close", () => done(Date.now() - opened)));
    socket.on("data", (c) => chunks.push(c));
    socket.on("error", () => {});
    socket.once("connect", () => resolve({ socket, text: () => Buffer.concat(chunks).toString("utf8"), closed }));
    socket.once("error", reject);
  });
}

/** Waits until `check` holds (polling), or fails naming `what`. */
async function until(what: string, check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) assert.unreachable(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

const QUERY_BODY = JSON.stringify(queryA(DATES_A[3]));
const postHead = (length: number) => `POST /api/v1/data/query HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

// ---------------------------------------------------------------------------------------------------------------

interface ServerProcess {
  child: ChildProcess;
  port: number;
  stderr(): string;
  exit: Promise<{ code: number | null; atMs: number }>;
}

/**
 * `server/main.ts` in its own process, as `make serve` runs it (the environment sets its limits): node itself with
 * tsx as its loader, so a signal reaches the server (tsx's CLI relays one within 30 ms or kills the server and exits
 * 130, which a busy machine missed).
 */
async function startProcess(dist: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "server/main.ts"], { env: { ...process.env, DIST: dist, PORT: "0", LOG: "0", ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout!.on("data", (c) => (out += c));
  child.stderr!.on("data", (c) => (err += c));
  const exit = new Promise<{ code: number | null; atMs: number }>((resolve) => child.on("exit", (code) => resolve({ code, atMs: Date.now() })));
  await until("the server to listen", () => /at http:\/\/127\.0\.0\.1:(\d+)/.test(out) || child.exitCode !== null, 30_000);
  const port = Number(/at http:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1]);
  assert.ok(port > 0, `the server did not start: ${err}`);
  return { child, port, stderr: () => err, exit };
}

const stop = suite("graceful stop");
stop.before(useFixture);

stop("stop - SIGTERM: through the drain window new connections are answered with Connection: close; then idle keep-alive connections close, the begun request is answered, new connections are refused, exit 0", async () => {
  const server = await startProcess(fixture.dist, { DRAIN_WINDOW_MS: "400" });
  try {
    const idle = await connect(server.port);
    idle.socket.write("GET /api/health HTTP/1.1\r\nHost: test\r\n\r\n");
    await until("the health answer", () => idle.text().includes("\r\n\r\n{"));
    // a request whose headers are in (begun) and whose body is half sent when the signal comes
    const begun = await connect(server.port);
    begun.socket.write(postHead(Buffer.byteLength(QUERY_BODY)) + QUERY_BODY.slice(0, 40));
    await sleep(300);
    const signalled = Date.now();
    server.child.kill("SIGTERM");
    await until("the stop logged", () => /SIGTERM: stopping/.test(server.stderr()));
    const early = await connect(server.port);
    early.socket.write("GET /api/health HTTP/1.1\r\nHost: test\r\n\r\n");
    await early.closed;
    assert.match(early.text(), /^HTTP\/1\.1 200 OK\r\n/, "a connection made in the window is answered");
    assert.match(early.text(), /\r\nConnection: close\r\n/i);
    await idle.closed;
    assert.ok(Date.now() - signalled >= 400, `the idle keep-alive connection closed ${Date.now() - signalled} ms after the signal, at the window's end`);
    begun.socket.write(QUERY_BODY.slice(40));
    await begun.closed;
    assert.match(begun.text(), /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(begun.text(), /\r\nConnection: close\r\n/i);
    assert.ok(begun.text().includes('"rowCount":9'), begun.text().slice(0, 400));
    // the listener closes once quiet: a connection made before then waits, and is answered
    for (;;) {
      const late = await connect(server.port).catch((err: NodeJS.ErrnoException) => err);
      if (late instanceof Error) {
        assert.is(late.code, "ECONNREFUSED");
        break;
      }
      late.socket.write("GET /api/health HTTP/1.1\r\nHost: test\r\n\r\n");
      await late.closed;
      assert.match(late.text(), /^HTTP\/1\.1 200 OK\r\n/, "a connection made before the listener closed is answered");
      assert.match(late.text(), /\r\nConnection: close\r\n/i);
      await sleep(100);
    }
    const { code, atMs } = await server.exit;
    assert.is(code, 0, server.stderr());
    assert.ok(atMs - signalled < 5000, `${atMs - signalled} ms`);
    assert.match(server.stderr(), /SIGTERM: stopping; answering 400 ms more with Connection: close, then no new connections; 1 begun requests finishing/);
    assert.match(server.stderr(), /stopped: every begun request answered/);
  } finally {
    server.child.kill("SIGKILL");
  }
});

stop("stop - the drain timeout cuts off what is left, counts it and exits 1", async () => {
  const server = await startProcess(fixture.dist, { DRAIN_TIMEOUT_MS: "400", BODY_TIMEOUT_MS: "60000" });
  try {
    const stalled = await connect(server.port);
    stalled.socket.write(postHead(Buffer.byteLength(QUERY_BODY)) + QUERY_BODY.slice(0, 10));
    await sleep(300);
    const signalled = Date.now();
    server.child.kill("SIGINT");
    const { code, atMs } = await server.exit;
    await stalled.closed;
    assert.is(code, 1);
    assert.ok(atMs - signalled >= 400 && atMs - signalled < 3000, `${atMs - signalled} ms`);
    assert.is(stalled.text(), "", "no answer: the request was cut off");
    assert.match(server.stderr(), /the drain timeout cut off 1 begun requests/);
  } finally {
    server.child.kill("SIGKILL");
  }
});

stop("stop - a second signal exits at once", async () => {
  const server = await startProcess(fixture.dist, { BODY_TIMEOUT_MS: "60000" });
  try {
    const stalled = await connect(server.port);
    stalled.socket.write(postHead(Buffer.byteLength(QUERY_BODY)) + QUERY_BODY.slice(0, 10));
    await sleep(300);
    server.child.kill("SIGTERM");
    await sleep(200);
    const second = Date.now();
    server.child.kill("SIGTERM");
    const { code, atMs } = await server.exit;
    assert.is(code, 1);
    assert.ok(atMs - second < 1000, `${atMs - second} ms after the second signal`);
    assert.match(server.stderr(), /SIGTERM again: exiting now, 1 begun requests cut off/);
  } finally {
    server.child.kill("SIGKILL");
  }
});

/** What became of one fresh connection of a client loop. */
interface Attempt {
  /** when the client began connecting (Date.now()) */
  openedAt: number;
  /** a whole answer; the kernel refused the connection; reset or closed before a whole answer */
  outcome: "answered" | "refused" | "reset" | "cut";
  status?: number;
  /** the answer said `Connection: close` and the server closed the connection after it */
  closes?: boolean;
  detail: string;
}

/**
 * One request on a fresh connection, read to the end of its answer (Content-Length), then to the server's close
 * when the answer says `Connection: close`; a keep-alive answer's connection is closed by the client.
 */
function attempt(port: number, payload: string): Promise<Attempt> {
  return new Promise((resolve) => {
    const openedAt = Date.now();
    const socket = net.connect(port, "127.0.0.1");
    let received = Buffer.alloc(0);
    let connected = false;
    let whole: { status: number; closes: boolean } | null = null;
    let settled = false;
    const settle = (a: Omit<Attempt, "openedAt">) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      resolve({ openedAt, ...a });
    };
    socket.once("connect", () => {
      connected = true;
      socket.write(payload);
    });
    socket.on("data", (chunk) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf("\r\n\r\n");
      if (end < 0 || whole) return;
      const head = received.subarray(0, end).toString("latin1");
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? NaN);
      if (received.length - end - 4 < length) return;
      whole = { status: Number(head.slice(9, 12)), closes: /\r\nconnection: *close/i.test(head) };
      if (!whole.closes) settle({ outcome: "answered", ...whole, detail: head.split("\r\n")[0] });
    });
    socket.on("error", (err: NodeJS.ErrnoException) => {
      if (!connected && err.code === "ECONNREFUSED") settle({ outcome: "refused", detail: err.code });
      else if (!whole) settle({ outcome: "reset", detail: `${err.code}: ${received.length} bytes came` });
    });
    // the server's close: after a whole answer that said so, the clean end; before one, an answer lost
    socket.on("close", () => settle(whole ? { outcome: "answered", ...whole, detail: "closed by the server" } : { outcome: "cut", detail: `closed after ${received.length} bytes` }));
  });
}

stop("stop - clients connecting in a loop through SIGTERM: each connection gets a whole answer (Connection: close once stopping) or, after the drain window, is refused; none is reset", async () => {
  const windowMs = DEFAULT_LIMITS.drainWindowMs;
  const server = await startProcess(fixture.dist);
  const attempts: Attempt[] = [];
  let exited = false;
  const exit = server.exit.then((e) => ((exited = true), e));
  // fresh connections: four loops ask for health, two for computed answers (reads and work on the event loop, each new)
  const health = "GET /api/health HTTP/1.1\r\nHost: test\r\n\r\n";
  let n = 0;
  const query = () => {
    const i = n++;
    const body = JSON.stringify(requestFor({ col: 200 + (i % 40), row: 200 + (i % 37), width: 20, height: 20 }, DATES_A[i % 30], DATES_A[(i % 30) + 3]));
    return postHead(Buffer.byteLength(body)) + body;
  };
  const loop = async (computed: boolean) => {
    while (!exited) attempts.push(await attempt(server.port, computed ? query() : health));
  };
  try {
    const loops = [false, true, false, false, true, false].map(loop);
    await until("answers before the stop", () => attempts.filter((a) => a.outcome === "answered").length >= 12, 30_000);
    const signalled = Date.now();
    server.child.kill("SIGTERM");
    await until("the stop logged", () => /SIGTERM: stopping/.test(server.stderr()));
    // the server writes that line before it answers anything else: every connection opened from now on is one of the stop's
    const logged = Date.now();
    const { code } = await exit;
    await Promise.all(loops);
    const count = (outcome: Attempt["outcome"]) => attempts.filter((a) => a.outcome === outcome).length;
    const summary = `${attempts.length} connections: ${count("answered")} answered, ${count("refused")} refused, ${count("reset")} reset, ${count("cut")} cut`;
    const lost = attempts.filter((a) => a.outcome === "reset" || a.outcome === "cut");
    assert.equal(lost.map((a) => `${a.outcome}, opened ${a.openedAt - signalled} ms after the signal: ${a.detail}`), [], summary);
    const answered = attempts.filter((a) => a.outcome === "answered");
    assert.equal(answered.filter((a) => a.status !== 200 && !(a.status === 503 && a.closes)).map((a) => a.detail), [], "every answer 200, or 503 with Connection: close");
    const stopping = answered.filter((a) => a.openedAt >= logged);
    assert.ok(stopping.length >= 3, `connections opened in the drain window are answered: ${summary}, ${stopping.length} of them after the stop`);
    assert.ok(stopping.every((a) => a.closes), "every answer once stopping says Connection: close, and the server closes the connection");
    const refused = attempts.filter((a) => a.outcome === "refused");
    assert.ok(refused.length > 0, `the listener closed: ${summary}`);
    assert.ok(refused[0].openedAt - signalled >= windowMs - 5, `the first refusal ${refused[0].openedAt - signalled} ms after the signal, inside the ${windowMs} ms window`);
    assert.is(code, 0, server.stderr());
    assert.match(server.stderr(), /stopped: every begun request answered/);
  } finally {
    server.child.kill("SIGKILL");
  }
});

stop.run();

// ---------------------------------------------------------------------------------------------------------------

const turns = suite("turns for computed answers (Admission)");

/** A piece of work the test ends when it wants. */
function held(): { work: () => Promise<string>; end: (value: string) => void } {
  let end!: (value: string) => void;
  const done = new Promise<string>((resolve) => (end = resolve));
  return { work: () => done, end };
}

turns("admission - at most `active` at work, at most `queue` waiting, the rest refused at once with Retry-After", async () => {
  const admission = new Admission({ active: 2, queue: 2, queuePerClient: 2, queueMs: 60_000, retryAfterS: 3 });
  const jobs = Array.from({ length: 5 }, () => held());
  const runs = jobs.map((j, i) => admission.run(`client-${i % 2}`, j.work).catch((err) => err));
  assert.equal(admission.stats(), { active: 2, queued: 2, held: 0, shed: 1 });
  const refused = await runs[4];
  assert.is(refused.kind, "service_unavailable");
  assert.equal(refused.headers, { "Retry-After": "3" });
  assert.match(refused.message, /^The server is busy: its 2 turns for computed answers are taken and 2 requests wait already\. Retry after 3 s/);
  jobs.forEach((j, i) => j.end(`done ${i}`));
  assert.equal(await Promise.all(runs.slice(0, 4)), ["done 0", "done 1", "done 2", "done 3"]);
  assert.equal(admission.stats(), { active: 0, queued: 0, held: 0, shed: 1 });
});

turns("admission - a freed turn goes to the next client in rotation, not to the client with the longest line", async () => {
  const admission = new Admission({ active: 1, queue: 10, queuePerClient: 10, queueMs: 60_000, retryAfterS: 1 });
  const order: string[] = [];
  const first = held();
  const running = admission.run("a", first.work);
  const queued = ["a1", "a2", "a3", "b1", "c1", "b2"].map((name) => admission.run(name[0], async () => void order.push(name)));
  first.end("x");
  await running;
  await Promise.all(queued);
  assert.equal(order, ["a1", "b1", "c1", "a2", "b2", "a3"]);
});

turns("admission - a freed turn starts after the event loop has polled, so a chain of quick answers never holds one turn", async () => {
  const admission = new Admission({ active: 1, queue: 10, queuePerClient: 10, queueMs: 60_000, retryAfterS: 1 });
  const order: string[] = [];
  const first = held();
  const running = admission.run("a", first.work);
  const queued = ["b", "c"].map((name) => admission.run(name, async () => void order.push(name)));
  // stands for I/O waiting in the loop (a health request): it is served before the next answer starts
  setImmediate(() => order.push("poll"));
  first.end("x");
  await running;
  await Promise.all(queued);
  assert.equal(order, ["poll", "b", "c"]);
});

turns("admission - after LOOP_TURN_MS of work in one turn of the event loop, new work waits for the next turn, though turns are free", async () => {
  const admission = new Admission({ active: 4, queue: 10, queuePerClient: 10, queueMs: 60_000, retryAfterS: 1 });
  const order: string[] = [];
  // answers that never wait for a read: each runs to its end as soon as it starts
  const busy = (name: string) => async () => {
    const end = performance.now() + LOOP_TURN_MS + 2;
    while (performance.now() < end);
    order.push(name);
  };
  // stands for I/O waiting in the loop (a health request)
  setImmediate(() => order.push("poll"));
  await Promise.all(["a", "b", "c"].map((name) => admission.run(name, busy(name))));
  assert.equal(order.slice(0, 2), ["a", "poll"]);
  assert.equal([...order].sort(), ["a", "b", "c", "poll"]);
  assert.equal(admission.stats(), { active: 0, queued: 0, held: 0, shed: 0 });
  // a quiet loop: work starts at once
  const t = await admission.run("d", async () => "now");
  assert.is(t, "now");
});

turns("admission - one client's line is bounded; a wait longer than queueMs is refused", async () => {
  const admission = new Admission({ active: 1, queue: 10, queuePerClient: 2, queueMs: 50, retryAfterS: 1 });
  const first = held();
  const running = admission.run("a", first.work);
  const waits = [admission.run("a", async () => 1), admission.run("a", async () => 2)].map((p) => p.catch((err) => err));
  const third = await admission.run("a", async () => 3).catch((err) => err);
  assert.match(third.message, /this client already has 2 requests waiting for a turn/);
  const other = admission.run("b", async () => 4).catch((err) => err);
  const [w1, w2, w3] = await Promise.all([...waits, other]);
  for (const w of [w1, w2, w3]) assert.match(w.message, /no turn for this computed answer came within 50 ms/);
  first.end("x");
  assert.is(await running, "x");
  assert.equal(admission.stats(), { active: 0, queued: 0, held: 0, shed: 4 });
});

turns("admission - while the answers being sent hold more than sendBytes, computed work waits; a release starts it", async () => {
  const admission = new Admission({ active: 2, queue: 10, queuePerClient: 10, queueMs: 60_000, retryAfterS: 1, sendBytes: 1000 });
  const releaseBig = admission.hold(1500);
  const order: string[] = [];
  const waiting = ["a", "b"].map((name) => admission.run(name, async () => void order.push(name)));
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(order, [], "no work starts while 1,500 bytes are held against a room of 1,000");
  assert.equal(admission.stats(), { active: 0, queued: 2, held: 1500, shed: 0 });
  const releaseSmall = admission.hold(10);
  releaseBig();
  releaseBig(); // a second release of the same answer counts nothing
  await Promise.all(waiting);
  assert.equal(order, ["a", "b"]);
  releaseSmall();
  assert.equal(admission.stats(), { active: 0, queued: 0, held: 0, shed: 0 });
  const late = new Admission({ active: 1, queue: 10, queuePerClient: 10, queueMs: 30, retryAfterS: 1, sendBytes: 0 });
  const release = late.hold(1);
  assert.match((await late.run("c", async () => "never").catch((err) => err)).message, /no turn for this computed answer came within 30 ms/);
  release();
  assert.is(await late.run("c", async () => "now"), "now");
});

turns.run();

// ---------------------------------------------------------------------------------------------------------------

const shedding = suite("load shedding over HTTP");
shedding.before(useFixture);

/**
 * A private dist whose version B day piece is a named pipe: a read of it waits (its open waits for a writer) until the test
 * opens the pipe, so a query of B holds its turn exactly as long as the test wants. Opening the pipe lets the
 * read fail, and that query ends (503: its version cannot be read). The server reads on libuv's threadpool
 * (READS=threadpool, as for a dist that waits for its disk): read on its own thread, the pipe would hold the whole
 * event loop, which is what READS=sync trades for speed (docs/operating.md).
 */
async function distWithBlockingPiece(): Promise<{ dist: string; release: () => Promise<void> }> {
  const dist = await copyDist(fixture);
  const archive = new Archive(new LocalStorage(dist), nodePlatform);
  const view = await openVersion(archive, fixture.b);
  archive.storage.close?.();
  if (view.kind !== "raster") throw new Error("B is a raster");
  const piece = join(dist, objectPath((await view.findDay("2004-02-28"))!.piece.sha256, "day"));
  await new Promise((resolve) => rm(piece, resolve));
  execFileSync("mkfifo", [piece]);
  return { dist, release: async () => void (await (await openFile(piece, "w")).close()) };
}

const queryB = () => requestFor({ col: 300, row: 200, width: 2, height: 2 }, "2004-02-28", "2004-02-28", { dataset_version: fixture.b.id });

shedding("shedding - one turn held: the next query waits, the one after is 503 with Retry-After; health, capabilities and a cached answer come at once", async () => {
  const { dist, release } = await distWithBlockingPiece();
  await withServer(
    dist,
    async (served: Served) => {
      // the answer cache keeps an answer the second time its request is asked (api/service.ts)
      await post(served, "/api/v1/data/query", queryA(DATES_A[0]));
      const cached = await post(served, "/api/v1/data/query", queryA(DATES_A[0]));
      assert.is(cached.status, 200);
      const holder = post(served, "/api/v1/data/query", queryB());
      await until("the held turn", () => served.app.stats().active === 1);
      const waiting = post(served, "/api/v1/data/query", queryA(DATES_A[1]));
      await until("a query waiting", () => served.app.stats().queued === 1);
      const refused = await post(served, "/api/v1/data/query", queryA(DATES_A[2]));
      const body = assertError(refused, 503, "service_unavailable");
      assert.is(refused.headers["retry-after"], "1");
      assert.match(body.message, /busy: its 1 turns for computed answers are taken and 1 requests wait already/);
      assert.is(refused.headers["cache-control"], "no-store");
      // what costs nothing does not wait for a turn
      assert.is((await request(served, "/api/health")).status, 200);
      assert.is((await request(served, "/api/v1/capabilities")).status, 200);
      assert.is((await post(served, "/api/v1/data/validate", queryA(DATES_A[5]))).status, 200);
      const again = await post(served, "/api/v1/data/query", queryA(DATES_A[0]));
      assert.is(again.text, cached.text);
      // a tile page is computed too: refused while the one turn is held and one query waits
      assertError(await request(served, `/api/v1/layers/${fixture.a.id}?limit=3`), 503, "service_unavailable");
      await release();
      assertError(await holder, 503, "service_unavailable");
      assert.is((await waiting).status, 200);
    },
    { reads: "threadpool", limits: { active: 1, queue: 1, queuePerClient: 1, queueMs: 60_000 } },
  );
});

shedding("shedding - behind a trusted proxy, each X-Forwarded-For client has its own line", async () => {
  const { dist, release } = await distWithBlockingPiece();
  await withServer(
    dist,
    async (served: Served) => {
      const from = (client: string) => ({ "X-Forwarded-For": `203.0.113.9, ${client}` });
      const holder = post(served, "/api/v1/data/query", queryB());
      await until("the held turn", () => served.app.stats().active === 1);
      const a1 = post(served, "/api/v1/data/query", queryA(DATES_A[1]), from("10.0.0.1"));
      await until("a1 waiting", () => served.app.stats().queued === 1);
      const a2 = await post(served, "/api/v1/data/query", queryA(DATES_A[2]), from("10.0.0.1"));
      assert.match(assertError(a2, 503, "service_unavailable").message, /this client already has 1 requests waiting/);
      const b1 = post(served, "/api/v1/data/query", queryA(DATES_A[3]), from("10.0.0.2"));
      await until("b1 waiting", () => served.app.stats().queued === 2);
      await release();
      await holder;
      assert.equal([(await a1).status, (await b1).status], [200, 200]);
    },
    { reads: "threadpool", limits: { active: 1, queue: 8, queuePerClient: 1, queueMs: 60_000, clientHeader: "x-forwarded-for" } },
  );
});

shedding.run();

// ---------------------------------------------------------------------------------------------------------------

const slow = suite("timeouts and unreadable requests");
slow.before(useFixture);

const LIMITS = { headersMs: 300, bodyMs: 300, idleMs: 300 };

slow("timeouts - headers that stall: the connection is closed, nothing answered", async () => {
  await withServer(
    fixture.dist,
    async (served) => {
      const raw = await connect(served.port);
      raw.socket.write("GET /api/health HTTP/1.1\r\nHost: te");
      const ms = await raw.closed;
      assert.ok(ms >= 300 && ms < 3000, `${ms} ms`);
      assert.is(raw.text(), "");
    },
    { limits: LIMITS },
  );
});

slow("timeouts - a body that stalls mid-way: 400 malformed_json, then the connection is closed", async () => {
  await withServer(
    fixture.dist,
    async (served) => {
      const raw = await connect(served.port);
      raw.socket.write(postHead(Buffer.byteLength(QUERY_BODY)) + QUERY_BODY.slice(0, 50));
      const ms = await raw.closed;
      assert.ok(ms >= 300 && ms < 3000, `${ms} ms`);
      assert.match(raw.text(), /^HTTP\/1\.1 400 Bad Request\r\n/);
      assert.match(raw.text(), /\r\nConnection: close\r\n/i);
      const body = JSON.parse(raw.text().split("\r\n\r\n")[1]);
      assert.equal([body.error, body.message], ["malformed_json", "The request body did not arrive within 0.3 s (50 bytes came); the connection is closed. Send the whole body with its Content-Length, then retry."]);
    },
    { limits: LIMITS },
  );
});

slow("timeouts - an idle keep-alive connection is closed after the idle timeout", async () => {
  await withServer(
    fixture.dist,
    async (served) => {
      const raw = await connect(served.port);
      raw.socket.write("GET /api/health HTTP/1.1\r\nHost: test\r\n\r\n");
      const ms = await raw.closed;
      assert.match(raw.text(), /^HTTP\/1\.1 200 OK\r\n/);
      assert.ok(ms >= 300 && ms < 3000, `${ms} ms`);
    },
    { limits: LIMITS },
  );
});

for (const [name, text] of [
  ["a request line that is not HTTP", "HELLO WORLD\r\n\r\n"],
  ["a method the parser does not know", "BREW /api/health HTTP/1.1\r\nHost: test\r\n\r\n"],
  ["a header with a control character", "GET /api/health HTTP/1.1\r\nHost: test\r\nX-A: b\u0001c\r\n\r\n"],
  ["headers over 128 KB", `GET /api/health HTTP/1.1\r\nHost: test\r\nX-Big: ${"a".repeat(140_000)}\r\n\r\n`],
  ["a Content-Length that is not a number", "POST /api/v1/data/query HTTP/1.1\r\nHost: test\r\nContent-Length: 1x\r\n\r\n"],
]) {
  slow(`unreadable - ${name}: 400 bad_request with the contract's error body, then the connection is closed`, async () => {
    await withServer(fixture.dist, async (served) => {
      const raw = await connect(served.port);
      raw.socket.write(text);
      await raw.closed;
      const [head, body] = raw.text().split("\r\n\r\n");
      assert.match(head, /^HTTP\/1\.1 400 Bad Request\r\n/);
      assert.match(head, /\r\nConnection: close/i);
      assert.match(head, /\r\nContent-Digest: sha-256=:[A-Za-z0-9+/]{43}=:/);
      const error = JSON.parse(body);
      assert.is(error.error, "bad_request");
      assert.match(error.message, /^The request is not HTTP\/1\.1 this server can read/);
      // the server keeps serving
      assert.is((await request(served, "/api/health")).status, 200);
    });
  });
}

slow.run();
