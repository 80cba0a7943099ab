// The polka app: HTTP transport around the interface's one entry point (api/service.ts Service.handle), which
// computes every answer from the dist, on local disk or at a URL (a static host, a CDN); catalog.json watched so
// a publish goes live. The landing page, the explorer and the files it reads come from server/site.ts.

import { readFileSync, unwatchFile, watchFile } from "node:fs";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import polka, { type NextHandler, type Request } from "polka";
import { type Answer, JSON_TYPE, makeAnswer } from "../api/answer.js";
import type { ApiRequest } from "../api/context.js";
import { INTERNAL_ERROR_BODY, statusOf } from "../api/errors.js";
import { CORS_HEADERS } from "../api/cors.js";
import { ROUTES } from "../api/interface.js";
import type { RouteTable } from "../api/routes.js";
import { Service } from "../api/service.js";
import { HttpStorage } from "../format/http-storage.js";
import { LocalStorage, nodePlatform } from "../format/local.js";
import { CATALOG_FILE } from "../format/objects.js";
import type { Storage } from "../format/storage.js";
import { Admission, type AdmissionStats } from "./admission.js";
import { Connections, type DrainResult, MAX_HEADER_BYTES, answerClientError } from "./connections.js";
import { type BodyState, discardBody, readBody, sendAnswer } from "./http.js";
import { DEFAULT_LIMITS, SERVE_DEFAULTS, type ServeConfig, type ServeLimits, isDistUrl } from "./settings.js";
import { type Site, answerSite } from "./site.js";

export interface AppOptions {
  /** a folder, or the http(s) URL of a dist on a static host (read with range requests) */
  dist: string;
  /** one request line per request on stderr (default true), or to this function (a test reading what was asked) */
  log?: boolean | ((line: string) => void);
  /** health `environment` (docs/contract.md §4.5: SERVICE_ENVIRONMENT, default demo) */
  environment?: string;
  /** where verification failures are reported (default stderr) */
  warn?: (message: string) => void;
  /** how often catalog.json is checked for a new publish (default 500 ms on disk, 5,000 ms at a URL) */
  watchMs?: number;
  /** bytes of verified objects and decoded blocks kept in memory, and of computed answers */
  cacheBytes?: number;
  answerCacheBytes?: number;
  /** where a folder's files are read (default SERVE_DEFAULTS.reads: on this thread, from the page cache) */
  reads?: ServeConfig["reads"];
  /**
   * the routes' bounds by name (RouteSpec.bounds: a 413's body, a series call's values, a .dods answer's values), over
   * each route's own default; tests scale them down
   */
  bounds?: Record<string, number>;
  /** the routes answered (default the interface's, api/interface.ts ROUTES; a test adds a series format of its own) */
  routes?: RouteTable;
  /** load shedding, fairness and timeouts (default DEFAULT_LIMITS) */
  limits?: Partial<ServeLimits>;
}

export interface App {
  server: http.Server;
  service: Service;
  /** computed answers at work and waiting, 503s so far, and requests begun and not yet answered */
  stats(): AdmissionStats & { inFlight: number };
  /**
   * The graceful stop (server/connections.ts drain): the drain window's answers with `Connection: close`, then no new
   * connections, every begun request answered, idle keep-alive connections closed, within the drain timeout; then what
   * is left is cut off and counted.
   */
  drain(): Promise<DrainResult>;
  /** closes the listening socket and open connections at once, and stops watching the catalog */
  close(): Promise<void>;
}

/** What a streamed answer that does not say (AnswerStream.heldBytes) holds while it is sent: a part or two of 1 MiB. */
const STREAM_HELD_BYTES = 2 << 20;

const readFirst = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/** Absolute base URL of this request, for capabilities links (docs/contract.md §1.2: links are URIs). */
function findBaseUrl(req: IncomingMessage): string {
  const host = readFirst(req.headers.host);
  const proto = readFirst(req.headers["x-forwarded-proto"]) === "https" ? "https" : "http";
  // A Host header that is not a plain host[:port] is not echoed into links.
  const safeHost = host && /^[A-Za-z0-9.-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$/.test(host) ? host : null;
  if (safeHost) return `${proto}://${safeHost}`;
  const address = req.socket.localAddress ?? "127.0.0.1";
  const shown = address.includes(":") ? `[${address}]` : address;
  return `${proto}://${shown}:${req.socket.localPort}`;
}

function toApiRequest(req: Request, readBody?: ApiRequest["readBody"]): ApiRequest {
  const at = req.url.indexOf("?");
  return {
    method: req.method ?? "GET",
    path: req.path,
    query: new URLSearchParams(at < 0 ? "" : req.url.slice(at + 1)),
    rawQuery: at < 0 ? "" : req.url.slice(at + 1),
    contentType: req.headers["content-type"],
    cookie: req.headers.cookie,
    baseUrl: findBaseUrl(req),
    readBody,
  };
}

/** CORS on every answer (api/cors.ts; a preflight is the service's, from the route table), one log line per request. */
function transportHeaders(log: ((line: string) => void) | null) {
  return (req: Request, res: ServerResponse, next: NextHandler) => {
    const started = process.hrtime.bigint();
    for (const [name, value] of Object.entries(CORS_HEADERS)) res.setHeader(name, value);
    if (log) {
      const path = req.path;
      res.on("finish", () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        const bytes = res.getHeader("Content-Length") ?? 0;
        log(`${req.method} ${path} ${res.statusCode} ${bytes} ${ms.toFixed(1)}ms`);
      });
    }
    next();
  };
}

/** The client a request counts against: the peer's address, or a trusted proxy's header (its last entry). */
function clientOf(req: IncomingMessage, header: string | null): string {
  const named = header ? readFirst(req.headers[header]) : undefined;
  const last = named?.split(",").pop()?.trim();
  return last || req.socket.remoteAddress || "unknown";
}

/** One line on stderr at most every 10 s while the server sheds load: how many 503s, how busy. */
function watchShedding(admission: Admission, log: (line: string) => void): ReturnType<typeof setInterval> {
  let reported = 0;
  const timer = setInterval(() => {
    const { active, queued, shed } = admission.stats();
    if (shed > reported) log(`busy: ${shed - reported} requests answered 503 in the last 10 s (${active} answers at work, ${queued} waiting)`);
    reported = shed;
  }, 10_000);
  timer.unref();
  return timer;
}

/** The HTTP server and its bounds on slow clients (docs/operating.md "Limits and settings"). */
function createHttpServer(limits: ServeLimits, handler: http.RequestListener, connections: () => Connections): http.Server {
  const server = http.createServer(
    {
      headersTimeout: limits.headersMs,
      requestTimeout: limits.headersMs + limits.bodyMs,
      keepAliveTimeout: limits.idleMs,
      // timeouts are checked this often (Node's default, 30 s, would let a stalled client wait that long)
      connectionsCheckingInterval: Math.min(1000, limits.headersMs),
      // answered by the app instead, with the contract's error body (Node's own 400 has none)
      requireHostHeader: false,
      // a request line of many places must reach the series route, whose 400 names its limit (100 places)
      maxHeaderSize: MAX_HEADER_BYTES,
    },
    handler,
  );
  // a connection where nothing moves either way (a client that stopped reading its answer) is closed
  server.timeout = limits.sendMs;
  server.on("clientError", (err: NodeJS.ErrnoException, socket) => answerClientError(connections(), err, socket));
  return server;
}

/**
 * The handler of every request the app routes: the service's answer, computed answers in a turn of the
 * client's (load shedding), bodies read within the body timeout.
 */
function answerWith(service: Service, site: Site, admission: Admission, limits: ServeLimits, connections: Connections) {
  return async (req: Request, res: ServerResponse): Promise<void> => {
    if (await answerSite(site, req, res, req.path, "unread")) {
      discardBody(req, "unread", limits.bodyMs);
      return;
    }
    let body: BodyState = "unread";
    const readRequestBody = () =>
      readBody(req, limits.bodyMs).then(
        (bytes) => ((body = "read"), bytes),
        (err) => ((body = err.stalled ? "stalled" : "failed"), Promise.reject(err)),
      );
    const request = toApiRequest(req, readRequestBody);
    request.admit = (work) => admission.run(clientOf(req, limits.clientHeader), work);
    const answer = req.httpVersion === "1.1" && req.headers.host === undefined ? await refuseHostless() : await service.handle(request);
    discardBody(req, body, limits.bodyMs);
    // its bytes stay held until the client has them (or leaves): their sum bounds the work started meanwhile
    res.once("close", admission.hold(answer.stream ? Math.min(answer.stream.byteLength, answer.stream.heldBytes ?? STREAM_HELD_BYTES) : answer.body.byteLength));
    // 'finish': every byte handed to the socket (a client that leaves before never gives the body back)
    if (answer.recycle) res.once("finish", answer.recycle);
    await sendAnswer(req, res, answer, body).catch((err) => {
      console.error(`${req.method} ${req.url}: could not send the answer`, err);
      res.destroy();
    });
    if (answer.status === 503 && answer.headers["Retry-After"]) connections.pause(req.socket, limits.shedPauseMs);
  };
}

/** HTTP/1.1 without Host (RFC 9112 §3.2): 400 bad_request with the contract's body, and the connection closed. */
function refuseHostless(): Promise<Answer> {
  const body = { error: "bad_request", message: "The request is not HTTP/1.1 this server can read: it has no Host header. The connection is closed." };
  return makeAnswer(nodePlatform, JSON.stringify(body), { status: statusOf("bad_request"), cache: "no-store", headers: { Connection: "close" } });
}


/** Polka around the handler: CORS and the log line on every answer, every request (preflights too) to `handle`. */
function routeWith(handle: (req: Request, res: ServerResponse) => Promise<void>, log: ((line: string) => void) | null) {
  const app = polka({
    // the service answers every failure, so only what escapes polka itself lands here: a generic 500
    onError: (err, req, res) => {
      console.error(`${req.method} ${req.url}: unexpected error`, err);
      res.writeHead(500, { "Content-Type": JSON_TYPE, "Cache-Control": "no-store" }).end(JSON.stringify(INTERNAL_ERROR_BODY));
    },
    onNoMatch: (req, res) => void handle(req, res),
  });
  app.use(transportHeaders(log));
  app.all("*", (req, res) => handle(req, res));
  return app;
}

/**
 * Calls `changed` when catalog.json may have been replaced. On disk a publish swaps it in one rename, and polling
 * its stat sees that within `watchMs` on any filesystem; at a URL it is read again every `watchMs` (the reload
 * takes it only when its bytes changed). Returns the stop.
 */
function watchCatalog(options: AppOptions, remote: boolean, changed: () => void): () => void {
  if (remote) {
    const timer = setInterval(changed, options.watchMs ?? 5000);
    timer.unref();
    return () => clearInterval(timer);
  }
  const catalogFile = join(options.dist, CATALOG_FILE);
  watchFile(catalogFile, { interval: options.watchMs ?? 500, persistent: false }, changed);
  return () => unwatchFile(catalogFile, changed);
}

/**
 * Descriptors kept open for the pieces read most recently: a quarter of the process's open-file limit (Linux's
 * /proc/self/limits), from 256 to 4,096, the rest for connections. A year of day pieces is 365 files: with 256, a
 * request for another day's tile opened and closed its file each time (a twentieth of a Zarr maps chunk's time).
 */
function openPieceFiles(): number {
  try {
    const soft = Number(/^Max open files\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"))?.[1]);
    return Number.isFinite(soft) ? Math.min(4096, Math.max(256, Math.floor(soft / 4))) : 256;
  } catch {
    return 256;
  }
}

/** Reads the catalog before listening: a dist that cannot be served stops the start with a message. */
export async function createApp(options: AppOptions): Promise<App> {
  const limits: ServeLimits = { ...DEFAULT_LIMITS, ...options.limits };
  const remote = isDistUrl(options.dist);
  const storage: Storage = remote ? new HttpStorage(options.dist) : new LocalStorage(options.dist, { maxOpenFiles: openPieceFiles(), reads: options.reads ?? SERVE_DEFAULTS.reads });
  const service = new Service({
    routes: options.routes ?? ROUTES,
    storage,
    platform: nodePlatform,
    environment: options.environment,
    warn: options.warn,
    cacheBytes: options.cacheBytes,
    answerCacheBytes: options.answerCacheBytes,
    bounds: options.bounds,
  });
  await service.snapshot();
  const admission = new Admission(limits);
  const stopWatching = watchCatalog(options, remote, () => void service.reload());
  const shedding = watchShedding(admission, (line) => process.stderr.write(`${line}\n`));
  const site: Site = { storage, platform: nodePlatform, snapshot: () => service.snapshot() };

  // requests come only once the caller listens, after `connections` and `app` exist
  const server = createHttpServer(
    limits,
    (req, res) => {
      connections.begin(res);
      // polka supplies its own error-routing `next` only when none is passed in
      app.handler(req as Request, res, undefined as unknown as NextHandler);
    },
    () => connections,
  );
  const connections = new Connections(server);
  const log = options.log ?? true;
  const app = routeWith(answerWith(service, site, admission, limits, connections), typeof log === "function" ? log : log ? (line) => process.stderr.write(`${line}\n`) : null);
  const release = () => {
    stopWatching();
    clearInterval(shedding);
    service.close();
  };
  return {
    server,
    service,
    stats: () => ({ ...admission.stats(), inFlight: connections.inFlight }),
    async drain() {
      const result = await connections.drain(limits.drainWindowMs, limits.drainMs);
      release();
      return result;
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      release();
    },
  };
}
