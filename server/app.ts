// The polka app: the interface's route table registered on polka, every answer computed by the shared service
// (api/) from the dist on local disk, sent with HTTP manners; catalog.json watched so a publish goes live.

import { unwatchFile, watchFile } from "node:fs";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import polka, { type NextHandler, type Request } from "polka";
import type { Answer } from "../api/answer.js";
import { LocalStorage, nodePlatform } from "../api/local.js";
import { type RouteSpec, allowOf, findRoute, groupByPath } from "../api/routes.js";
import { type ApiRequest, Service } from "../api/service.js";
import { LIMITS } from "../schemas/contract.js";
import { CATALOG_FILE } from "../schemas/layout.js";
import { EXPOSED_HEADERS, readBody, sendAnswer } from "./http.js";

export interface AppOptions {
  dist: string;
  /** one request line per request on stderr (default true) */
  log?: boolean;
  /** health `environment` (decisions.md 4: SERVICE_ENVIRONMENT, default demo) */
  environment?: string;
  /** where verification failures are reported (default stderr) */
  warn?: (message: string) => void;
  /** how often catalog.json is checked for a new publish (default 500 ms) */
  watchMs?: number;
  /** bytes of verified objects and decoded blocks kept in memory, and of computed answers */
  cacheBytes?: number;
  answerCacheBytes?: number;
}

export interface App {
  server: http.Server;
  service: Service;
  /** closes the listening socket and open connections, and stops watching the catalog */
  close(): Promise<void>;
}

const readFirst = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/** Absolute base URL of this request, for capabilities links (interface.md 2.10: links are URIs). */
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

function toApiRequest(req: Request, body: Uint8Array | null): ApiRequest {
  const at = req.url.indexOf("?");
  return {
    method: req.method ?? "GET",
    path: req.path,
    query: new URLSearchParams(at < 0 ? "" : req.url.slice(at + 1)),
    contentType: req.headers["content-type"],
    body,
    baseUrl: findBaseUrl(req),
  };
}

/** Reads the catalog before listening: a dist that cannot be served stops the start with a message (style.md). */
export async function createApp(options: AppOptions): Promise<App> {
  const service = new Service({
    storage: new LocalStorage(options.dist),
    platform: nodePlatform,
    environment: options.environment,
    warn: options.warn,
    cacheBytes: options.cacheBytes,
    answerCacheBytes: options.answerCacheBytes,
  });
  await service.snapshot();
  const logRequests = options.log ?? true;

  async function send(req: Request, res: ServerResponse, answer: Promise<Answer>): Promise<void> {
    try {
      await sendAnswer(req, res, await answer);
    } catch (err) {
      console.error(`${req.method} ${req.url}: could not send the answer`, err);
      res.destroy();
    }
  }

  async function handle(registered: RouteSpec, req: Request, res: ServerResponse): Promise<void> {
    // polka also matches a trailing slash, another case and raw escapes; the interface's own matcher decides,
    // as it does for the mirror client, so both answer every path alike
    const found = findRoute(req.method ?? "GET", req.path);
    if (!found || !("route" in found) || found.route !== registered) return send(req, res, service.answer(toApiRequest(req, null)));
    const route = found.route;
    let body: Uint8Array | null = null;
    if (route.readsBody) {
      try {
        body = await readBody(req);
      } catch (err) {
        return send(req, res, service.answerError(err, toApiRequest(req, null)));
      }
    } else if (route.method === "POST") {
      // a body nobody reads: answer without draining it, and close rather than read what may follow
      const streamed = req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > LIMITS.maxRequestBytes;
      if (streamed) res.setHeader("Connection", "close");
    }
    await send(req, res, service.answerRoute(route, found.params, toApiRequest(req, body)));
  }

  const app = polka({
    // handlers never throw (the service answers every failure), so only what escapes polka itself lands here
    onError: (err, req, res) => void send(req, res, service.answerError(err instanceof Error ? err : new Error(String(err)), toApiRequest(req, null))),
    onNoMatch: (req, res) => void send(req, res, service.answer(toApiRequest(req, null))),
  });

  app.use((req, res, next) => {
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
  });

  for (const [path, routes] of groupByPath()) {
    const allow = allowOf(routes);
    for (const route of routes) app.add(route.method, path, (req, res) => handle(route, req, res));
    app.options(path, (_req, res) => {
      // CORS preflight (Fetch standard): a read-only API, any origin, JSON bodies, conditional GETs.
      res.writeHead(204, {
        Allow: allow,
        "Access-Control-Allow-Methods": allow,
        "Access-Control-Allow-Headers": path === "/api/v1/data/requests" ? "Content-Type, Authorization" : "Content-Type, If-None-Match",
        "Access-Control-Max-Age": "86400",
        "Cache-Control": "public, max-age=86400",
        "Content-Length": "0",
      });
      res.end();
    });
    app.all(path, (req, res) => send(req, res, service.answer(toApiRequest(req, null))));
  }

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
