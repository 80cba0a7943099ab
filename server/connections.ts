// The server's connections over its life: requests begun and not yet answered, a graceful stop (stop accepting,
// finish what was begun, close idle keep-alive connections), and the answer to a request the HTTP parser cannot
// read (a contract error body, then the connection closed).

import { STATUS_CODES } from "node:http";
import type http from "node:http";
import net from "node:net";
import type { ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { JSON_TYPE } from "../api/answer.js";
import { statusOf } from "../api/errors.js";
import { sha256Hex } from "../format/hash.js";

export interface DrainResult {
  /** milliseconds from the stop to the last begun request answered, or to the timeout */
  ms: number;
  /** begun requests cut off at the timeout (0 when everything was answered) */
  cut: number;
}

/**
 * Requests begun (their headers read) and not yet answered or abandoned, and the graceful stop. While stopping,
 * every answer carries `Connection: close`, and connections that fall idle are closed as they do.
 */
export class Connections {
  private readonly open = new Set<ServerResponse>();
  private readonly busy = new WeakSet<Duplex>();
  private onEmpty: (() => void) | null = null;
  private stopping = false;

  constructor(private readonly server: http.Server) {}

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
      if (this.open.size === 0) this.onEmpty?.();
    });
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
   * Stops accepting, lets every begun request finish (at most `timeoutMs`), closes idle keep-alive connections
   * meanwhile, then cuts off whatever is left.
   */
  async drain(timeoutMs: number): Promise<DrainResult> {
    const started = performance.now();
    this.stopping = true;
    for (const res of this.open) if (!res.headersSent) res.setHeader("Connection", "close");
    // stop accepting, leaving the connections to us: http.Server.close would also close idle ones at once, and a
    // paused connection (idle to Node) may hold a request in the kernel that would be reset unread; resumed, it is
    // read, answered and closed. Idle connections are closed from the first sweep, 50 ms on.
    net.Server.prototype.close.call(this.server);
    for (const resume of [...this.paused.values()]) resume();
    // a keep-alive connection whose answer was already under way falls idle after it: closed within 50 ms
    const sweep = setInterval(() => this.server.closeIdleConnections(), 50);
    try {
      const drained = await new Promise<boolean>((resolve) => {
        if (this.open.size === 0) return resolve(true);
        const timer = setTimeout(() => resolve(false), timeoutMs);
        this.onEmpty = () => {
          clearTimeout(timer);
          resolve(true);
        };
      });
      const cut = drained ? 0 : this.open.size;
      if (!drained) this.server.closeAllConnections();
      return { ms: performance.now() - started, cut };
    } finally {
      clearInterval(sweep);
      this.onEmpty = null;
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
