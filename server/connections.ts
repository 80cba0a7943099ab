// The server's connections over its life: requests begun and not yet answered, a graceful stop (a drain window that
// still accepts, then the listener closed once quiet, begun requests finished, idle keep-alive connections closed),
// and the answer to a request the HTTP parser cannot read (a contract error body, then the connection closed).

import { STATUS_CODES } from "node:http";
import type http from "node:http";
import net from "node:net";
import type { ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { JSON_TYPE } from "../api/answer.js";
import { statusOf } from "../api/errors.js";
import { sha256Hex } from "../format/hash.js";

export interface DrainResult {
  /** milliseconds from the stop to the last connection closed, or to the timeout */
  ms: number;
  /** begun requests cut off at the timeout (0 when everything was answered) */
  cut: number;
}

/**
 * How long nothing must happen (no connection accepted, no answer ended) before the listener closes: a client that
 * just had an answer and opens its next connection does so within this, and finds it held rather than reset.
 */
const QUIET_MS = 50;
/** The longest the listener waits for quiet after the drain window (clients that never pause): then it closes anyway. */
const HOLD_MAX_MS = 500;
/**
 * A connection that has sent nothing this long after it could be read is closed by the stop: a request would have
 * come by now (a browser's spare connection sends none). Closed sooner, a request on its way would meet a reset.
 */
const SILENT_CLOSE_MS = 1000;
/** How often the stop closes connections that fell idle, or stayed silent. */
const SWEEP_MS = 50;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/**
 * Resolves in the check phase just after the event loop has polled: whatever the kernel held by then (a connection in
 * the accept queue, a request's bytes) has been taken, so what is decided before the next poll sees it all.
 */
const afterPoll = () => new Promise((resolve) => setImmediate(resolve));

/** A listening net.Server's switch, read as each connection is accepted: the new socket is not read until resumed. */
type Pausable = { pauseOnConnect: boolean };

/**
 * Requests begun (their headers read) and not yet answered or abandoned, every connection accepted, and the
 * graceful stop. While stopping, every answer carries `Connection: close`.
 */
export class Connections {
  private readonly open = new Set<ServerResponse>();
  private readonly busy = new WeakSet<Duplex>();
  /** every connection accepted and not yet closed, with when it could first be read (its accept, or its resume) */
  private readonly sockets = new Map<Duplex, number>();
  /** connections accepted while the listener waits to close, not read until it has */
  private readonly held = new Set<Duplex>();
  /** performance.now() of the last connection accepted or answer ended: a closing listener waits for QUIET_MS of neither */
  private lastActivity = 0;
  private onSettled: (() => void) | null = null;
  private stopping = false;

  constructor(private readonly server: http.Server) {
    server.on("connection", (socket: Duplex) => {
      const now = performance.now();
      this.lastActivity = now;
      this.sockets.set(socket, now);
      if ((server as unknown as Pausable).pauseOnConnect) this.held.add(socket);
      socket.once("close", () => {
        this.sockets.delete(socket);
        this.held.delete(socket);
        this.settle();
      });
    });
  }

  get inFlight(): number {
    return this.open.size;
  }

  /** A request begins: counted until its answer is sent or its connection goes. */
  begin(res: ServerResponse): void {
    // the request's socket: a pipelined request's response has none until the answers before it are sent
    const socket = res.req.socket;
    this.open.add(res);
    this.busy.add(socket);
    if (this.stopping) res.setHeader("Connection", "close");
    res.once("close", () => {
      this.open.delete(res);
      this.busy.delete(socket);
      this.lastActivity = performance.now();
      this.settle();
    });
  }

  /** Calls the stop's waiter once no request is begun and no connection is open. */
  private settle(): void {
    if (this.open.size === 0 && this.sockets.size === 0) this.onSettled?.();
  }

  /** Connections not read for now (a 503 for load), and what reads them again. */
  private readonly paused = new Map<Duplex, () => void>();

  /**
   * After a 503 for load, the connection's next request waits in the kernel for `ms` before it is read: the
   * client was told to come back later, and one that ignores it gets its next answer later instead of keeping
   * the event loop busy with refusals (short event-loop turns keep health answers and new connections prompt).
   */
  pause(socket: Duplex, ms: number): void {
    if (ms <= 0 || socket.destroyed || this.stopping) return;
    socket.pause();
    const resume = () => {
      clearTimeout(timer);
      socket.off("close", forget);
      this.paused.delete(socket);
      socket.resume();
    };
    const forget = () => {
      clearTimeout(timer);
      this.paused.delete(socket);
    };
    // spread over half to one and a half times `ms`: connections refused together must not all come back together
    const timer = setTimeout(resume, ms * (0.5 + Math.random()));
    timer.unref();
    socket.once("close", forget);
    this.paused.set(socket, resume);
  }

  /** Whether a response is under way on this connection (nothing else may be written to it). */
  isBusy(socket: Duplex): boolean {
    return this.busy.has(socket);
  }

  /**
   * The graceful stop, at most `timeoutMs` in all. For `windowMs` the server goes on accepting and answering, every
   * answer with `Connection: close`, so keep-alive clients and load balancers move on; then the listener closes
   * (closeListener), idle keep-alive and silent connections are closed, and every begun request is answered; at the
   * timeout whatever is left is cut off. A connection the kernel accepted is never reset by the stop: closing a
   * listener resets the connections waiting in its accept queue, so it closes only when that queue is empty.
   */
  async drain(windowMs: number, timeoutMs: number): Promise<DrainResult> {
    const started = performance.now();
    const deadline = started + timeoutMs;
    this.stopping = true;
    for (const res of this.open) if (!res.headersSent) res.setHeader("Connection", "close");
    for (const resume of [...this.paused.values()]) resume();
    await sleep(Math.min(windowMs, timeoutMs));
    // idle keep-alive connections go from now on; the sweep runs just after a poll, so a request that reached the
    // kernel by then has begun and its connection is not idle
    const sweep = setInterval(() => setImmediate(() => this.closeIdle()), SWEEP_MS);
    try {
      await this.closeListener(Math.min(deadline, performance.now() + HOLD_MAX_MS));
      const settled = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), Math.max(0, deadline - performance.now()));
        this.onSettled = () => {
          clearTimeout(timer);
          resolve(true);
        };
        this.settle();
      });
      const cut = settled ? 0 : this.open.size;
      if (!settled) {
        this.server.closeAllConnections();
        for (const socket of this.sockets.keys()) socket.destroy();
      }
      return { ms: performance.now() - started, cut };
    } finally {
      clearInterval(sweep);
      this.onSettled = null;
    }
  }

  /**
   * Closes the listening socket with nothing in its accept queue: new connections are accepted but not read (held)
   * until, just after a poll, no answer is under way and QUIET_MS have passed with no connection accepted and no answer
   * ended, or until `latestAt`.
   * A client in a loop that just had its answer opens its next connection within QUIET_MS and is held, so at the close
   * no client is on its way in; then the held connections are read, answered with `Connection: close`, and closed.
   */
  private async closeListener(latestAt: number): Promise<void> {
    const server = this.server as unknown as Pausable;
    server.pauseOnConnect = true;
    for (;;) {
      await sleep(5);
      await afterPoll();
      const now = performance.now();
      if (now >= latestAt || (this.open.size === 0 && now - this.lastActivity >= QUIET_MS)) break;
    }
    // net.Server's close, not http.Server's: that one would also close idle connections at once, unswept
    net.Server.prototype.close.call(this.server);
    server.pauseOnConnect = false;
    const now = performance.now();
    for (const socket of this.held) {
      this.sockets.set(socket, now);
      socket.resume();
    }
    this.held.clear();
  }

  /** Closes idle keep-alive connections, and connections that have sent nothing for SILENT_CLOSE_MS since they could be read. */
  private closeIdle(): void {
    this.server.closeIdleConnections();
    const now = performance.now();
    for (const [socket, since] of this.sockets) {
      if (!this.held.has(socket) && (socket as net.Socket).bytesRead === 0 && now - since >= SILENT_CLOSE_MS) socket.destroy();
    }
  }
}

/**
 * The most bytes of a request line and headers read (Node's default is 16 KiB): 5,000 places in a series URL (about
 * 70 KB) are read, and answered by the route's 400 naming its limit of 100 places, not refused unread.
 */
export const MAX_HEADER_BYTES = 128 * 1024;

/**
 * What the server answers a request the HTTP parser rejects (bad request line or header, headers too large,
 * broken framing): 400 `bad_request` with the contract's error body (docs/contract.md §4.2), then the connection
 * is closed. A request that timed out, or a connection already answering or gone, is closed without a word.
 */
export function answerClientError(connections: Connections, err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === "ERR_HTTP_REQUEST_TIMEOUT" || err.code === "ECONNRESET" || !socket.writable || connections.isBusy(socket)) {
    socket.destroy();
    return;
  }
  const what =
    err.code === "HPE_HEADER_OVERFLOW"
      ? `its request line and headers are over ${MAX_HEADER_BYTES / 1024} KB (a URL that long is not a call this service answers: the series route takes at most 100 places a call, and bbox=west,south,east,north a box of cells in one parameter)`
      : `the parser stopped at ${err.code ?? "an error"}`;
  const status = statusOf("bad_request");
  const body = JSON.stringify({ error: "bad_request", message: `The request is not HTTP/1.1 this server can read: ${what}. The connection is closed.` });
  const digest = Buffer.from(sha256Hex(body), "hex").toString("base64");
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}`,
    `Content-Type: ${JSON_TYPE}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
    "Cache-Control: no-store",
    "Access-Control-Allow-Origin: *",
    `Content-Digest: sha-256=:${digest}:`,
    "Connection: close",
  ];
  socket.end(`${head.join("\r\n")}\r\n\r\n${body}`);
}
