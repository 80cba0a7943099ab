// The polka app: HTTP transport around the interface's one entry point (api/service.ts Service.handle), which
// computes every answer from the dist on local disk; catalog.json watched so a publish goes live.

import { unwatchFile, watchFile } from "node:fs";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import polka, { type NextHandler, type Request } from "polka";
import { JSON_TYPE } from "../api/answer.js";
import type { ApiRequest } from "../api/context.js";
import { INTERNAL_ERROR_BODY } from "../api/errors.js";
import { findRoute } from "../api/routes.js";
import { Service } from "../api/service.js";
import { LocalStorage, nodePlatform } from "../format/local.js";
import { CATALOG_FILE } from "../format/objects.js";
import { EXPOSED_HEADERS, readBody, sendAnswer } from "./http.js";

export interface AppOptions {
  dist: string;
  /** one request line per request on stderr (default true) */
  log?: boolean;
  /** health `environment` (docs/contract.md §4.5: SERVICE_ENVIRONMENT, default demo) */
  environment?: string;
  /** where verification failures are reported (default stderr) */
  warn?: (message: string) => void;
  /** how often catalog.json is checked for a new publish (default 500 ms) */
  watchMs?: number;
  /** bytes of verified objects and decoded blocks kept in memory, and of computed answers */
  cacheBytes?: number;
  answerCacheBytes?: number;
  /** the bound of a 413's body (default the contract's 1,000,000 bytes; tests scale it down) */
  planBytes?: number;
}

export interface App {
  server: http.Server;
  service: Service;
  /** closes the listening socket and open connections, and stops watching the catalog */
  close(): Promise<void>;
}

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
    contentType: req.headers["content-type"],
    baseUrl: findBaseUrl(req),
    readBody,
  };
}

/** CORS on every answer, and one log line per request. */
function transportHeaders(logRequests: boolean) {
  return (req: Request, res: ServerResponse, next: NextHandler) => {
    const started = process.hrtime.bigint();
    res.setHeader("Access-Control-Allow-Origin", "*");
    res.setHeader("Access-Control-Expose-Headers", EXPOSED_HEADERS);
    if (logRequests) {
      const path = req.path;
      res.on("finish", () => {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        const bytes = res.getHeader("Content-Length") ?? 0;
        process.stderr.write(`${req.method} ${path} ${res.statusCode} ${bytes} ${ms.toFixed(1)}ms\n`);
      });
    }
    next();
  };
}

/** CORS preflight (Fetch standard) of a route's path: a read-only API, any origin, JSON bodies, conditional GETs. */
function answerPreflight(req: Request, res: ServerResponse, next: NextHandler): void {
  const found = findRoute("OPTIONS", req.path);
  if (!found || !("allow" in found)) {
    void next();
    return;
  }
  res.writeHead(204, {
    Allow: found.allow,
    "Access-Control-Allow-Methods": found.allow,
    "Access-Control-Allow-Headers": req.path === "/api/v1/data/requests" ? "Content-Type, Authorization" : "Content-Type, If-None-Match",
    "Access-Control-Max-Age": "86400",
    "Cache-Control": "public, max-age=86400",
    "Content-Length": "0",
  });
  res.end();
}

/** Reads the catalog before listening: a dist that cannot be served stops the start with a message. */
export async function createApp(options: AppOptions): Promise<App> {
  const service = new Service({
    storage: new LocalStorage(options.dist),
    platform: nodePlatform,
    environment: options.environment,
    warn: options.warn,
    cacheBytes: options.cacheBytes,
    answerCacheBytes: options.answerCacheBytes,
    planBytes: options.planBytes,
  });
  await service.snapshot();

  async function handle(req: Request, res: ServerResponse): Promise<void> {
    let bodyRead = false;
    const answer = await service.handle(toApiRequest(req, () => readBody(req).then((body) => ((bodyRead = true), body))));
    await sendAnswer(req, res, answer, bodyRead).catch((err) => {
      console.error(`${req.method} ${req.url}: could not send the answer`, err);
      res.destroy();
    });
  }

  const app = polka({
    // the service answers every failure, so only what escapes polka itself lands here: a generic 500
    onError: (err, req, res) => {
      console.error(`${req.method} ${req.url}: unexpected error`, err);
      res.writeHead(500, { "Content-Type": JSON_TYPE, "Cache-Control": "no-store" }).end(JSON.stringify(INTERNAL_ERROR_BODY));
    },
    onNoMatch: (req, res) => void handle(req, res),
  });
  app.use(transportHeaders(options.log ?? true));
  app.options("*", answerPreflight);
  app.all("*", (req, res) => handle(req, res));

  // A publish swaps catalog.json in one rename; polling its stat sees that within watchMs on any filesystem.
  const catalogFile = join(options.dist, CATALOG_FILE);
  const onCatalogChange = () => void service.reload();
  watchFile(catalogFile, { interval: options.watchMs ?? 500, persistent: false }, onCatalogChange);

  // polka supplies its own error-routing `next` only when none is passed in.
  const server = http.createServer((req, res) => app.handler(req as Request, res, undefined as unknown as NextHandler));
  return {
    server,
    service,
    async close() {
      unwatchFile(catalogFile, onCatalogChange);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      service.close();
    },
  };
}
