// The polka app: every route of interface.md 4.1-4.10 answered from a verified dist/, with one error handler.

import { readSync } from "node:fs";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import polka, { type NextHandler, type Request } from "polka";
import { API_VERSION, LIMITS, QUERY_DATA_CLASS, QUERY_SOURCE, QUERY_UNIT, QUERY_VARIABLE, SPATIAL_SELECTION } from "../schemas/contract.js";
import { PAGE_SIZE, decodeCursor, encodeCursor, sha256Hex, type ListKind } from "../schemas/dist.js";
import { windowTransform } from "../schemas/grid.js";
import { float32ToShortest } from "../schemas/numbers.js";
import { HttpError, INTERNAL_ERROR_BODY, errorToBody, type Issue } from "./errors.js";
import { CSV_TYPE, EXPOSED_HEADERS, JSON_TYPE, assertResponseSize, readJsonBody, sendBytes, sendJson } from "./http.js";
import { buildOpenApi } from "./openapi.js";
import {
  checkRequest,
  hashRequest,
  listSelectionTiles,
  readSelectionRows,
  reasonToError,
  resolveRequest,
  rowsToCsv,
  rowsToJson,
} from "./query.js";
import { Store, type VersionEntry } from "./store.js";

export interface AppOptions {
  dist: string;
  /** one request line per request on stderr (default true) */
  log?: boolean;
  /** health `environment` (decisions.md 4: SERVICE_ENVIRONMENT, default demo) */
  environment?: string;
  /** where verification failures are reported (default stderr) */
  warn?: (message: string) => void;
}

export interface App {
  server: http.Server;
  store: Store;
  /** closes the listening socket, open connections and the kept-open cell files */
  close(): Promise<void>;
}

type Handler = (req: Request, res: ServerResponse) => Promise<void>;
type Method = "GET" | "POST";

interface Route {
  path: string;
  methods: Partial<Record<Method, Handler>>;
}

const VERSION_ID = /^[a-zA-Z0-9_-]{1,128}$/;

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

function rejectParameter(name: string, code: string, message: string): HttpError {
  return new HttpError("invalid_parameters", `Query parameter ${name} ${message}.`, [{ code, path: [name], message }]);
}

/** One value of a query parameter; a repeated parameter is ambiguous and rejected. */
function readParam(req: Request, name: string): string | undefined {
  const value = (req.query as Record<string, string | string[] | undefined>)[name];
  if (Array.isArray(value)) throw rejectParameter(name, "repeated", "is given more than once");
  return value;
}

function checkVersionId(id: string): void {
  if (!VERSION_ID.test(id)) {
    throw new HttpError("invalid_parameters", "The dataset id must match ^[a-zA-Z0-9_-]{1,128}$.", [
      { code: "pattern", path: ["id"], message: "must match ^[a-zA-Z0-9_-]{1,128}$" },
    ]);
  }
}

interface PageConfig {
  limit: number;
  after: string | null;
  tile: string | null;
}

/** limit 1..1000 (default 100), after <= 256 chars, tile <= 128 chars (interface.md 4.7.1, 4.8, 8). */
function readPageParams(req: Request, withTile: boolean): PageConfig {
  const limitSpec = readParam(req, "limit");
  let limit: number = LIMITS.defaultPageLimit;
  if (limitSpec !== undefined) {
    if (!/^[0-9]{1,7}$/.test(limitSpec)) throw rejectParameter("limit", "type", "must be an integer from 1 to 1000");
    limit = Number(limitSpec);
    if (limit < 1 || limit > LIMITS.maxPageLimit) throw rejectParameter("limit", "out_of_range", "must be an integer from 1 to 1000");
  }
  const after = readParam(req, "after") ?? null;
  if (after !== null && after.length > LIMITS.maxCursorLength) {
    throw rejectParameter("after", "length", `must be at most ${LIMITS.maxCursorLength} characters`);
  }
  const tile = withTile ? (readParam(req, "tile") ?? null) : null;
  if (tile !== null && tile.length > 128) throw rejectParameter("tile", "length", "must be at most 128 characters");
  return { limit, after, tile };
}

/** A non-negative integer query parameter of sample (interface.md 4.9); missing or malformed is 400. */
function readCellIndex(req: Request, name: string): number {
  const spec = readParam(req, name);
  if (spec === undefined || spec === "") throw rejectParameter(name, "required", "is required");
  if (!/^[0-9]+$/.test(spec)) throw rejectParameter(name, "type", "must be a non-negative integer");
  return Number(spec);
}

export async function createApp(options: AppOptions): Promise<App> {
  const store = await Store.open(options.dist, options.warn);
  const logRequests = options.log ?? true;
  const environment = options.environment ?? "demo";
  const catalogSha256 = sha256Hex(store.catalogBody);
  const openApiBody = Buffer.from(JSON.stringify(buildOpenApi()));
  const openApiSha256 = sha256Hex(openApiBody);

  const notFound = (what: string) => new HttpError("not_found", `${what} is not published here; GET /api/v1/datasets lists what is.`);

  /** A version whose data may be read: published, demo, not restricted (interface.md 3.1); 503 if unverified. */
  function findDataVersion(id: string): VersionEntry {
    checkVersionId(id);
    const v = store.versions.get(id);
    if (!v || v.record.access_level !== "demo") throw notFound(`Dataset version ${id}`);
    store.assertAvailable(v);
    if (!v.index) throw new HttpError("service_unavailable", `Dataset version ${id} is temporarily unavailable.`);
    return v;
  }

  async function sendPage(req: Request, res: ServerResponse, kind: ListKind, v: VersionEntry, page: PageConfig): Promise<void> {
    const count = store.countItems(v, kind);
    let offset = 0;
    if (page.after !== null) {
      const decoded = decodeCursor(v.id, kind, page.after);
      // Cursors are only issued for offsets inside the list (decisions.md 4), so anything else was not ours.
      if (decoded === null || decoded >= count) {
        throw rejectParameter("after", "invalid_cursor", "is not a cursor this server issued for this list");
      }
      offset = decoded;
    }
    if (page.limit === PAGE_SIZE && offset % PAGE_SIZE === 0) {
      // The published page file is exactly this answer: send its verified bytes as they are.
      const file = await store.readPage(v, kind, offset);
      await sendBytes(req, res, file.bytes, { type: JSON_TYPE, cache: "immutable", etagHex: file.sha256, bounded: true });
      return;
    }
    const end = Math.min(offset + page.limit, count);
    const items: unknown[] = [];
    let first: Record<string, unknown> | null = null;
    const lastPage = Math.max(offset, end - 1);
    for (let start = offset - (offset % PAGE_SIZE); start <= lastPage; start += PAGE_SIZE) {
      const file = await store.readPage(v, kind, start);
      const parsed = JSON.parse(file.bytes.toString("utf8")) as Record<string, unknown>;
      first ??= parsed;
      const list = parsed[kind === "layers" ? "tiles" : "observations"] as unknown[];
      items.push(...list.slice(Math.max(0, offset - start), Math.max(0, end - start)));
    }
    const nextCursor = end < count ? encodeCursor(v.id, kind, end) : null;
    const body =
      kind === "layers"
        ? { dataset: first!.dataset, tiles: items, nextCursor }
        : { datasetVersion: v.id, observations: items, nextCursor };
    const bytes = Buffer.from(JSON.stringify(body));
    await sendBytes(req, res, bytes, { type: JSON_TYPE, cache: "immutable", etagHex: sha256Hex(bytes), bounded: true });
  }

  const health: Handler = (req, res) =>
    sendJson(
      req,
      res,
      {
        service: "service-api",
        status: "ok",
        scope: "process",
        environment,
        paymentMode: "test",
        capabilities: { requestValidation: true, acquisition: false, payments: false },
      },
      { cache: "no-store" },
    );

  const capabilities: Handler = async (req, res) => {
    const base = findBaseUrl(req);
    const body = Buffer.from(
      JSON.stringify({
        apiVersion: API_VERSION,
        features: {
          validate: true,
          resolve: true,
          query: true,
          csv: true,
          observations: true,
          layers: true,
          sample: true,
          acquisition: false,
          payments: false,
        },
        query: {
          sources: [QUERY_SOURCE],
          variables: [QUERY_VARIABLE],
          dataClasses: [QUERY_DATA_CLASS],
          crs: ["EPSG:4326"],
          temporalResolutions: ["daily"],
          spatialResolutions: ["native"],
          units: { [QUERY_VARIABLE]: [QUERY_UNIT] },
          formats: ["json", "csv"],
          defaultFormat: "json",
          delivery: "inline",
          missingPolicy: "preserve",
          access: "public_demo",
          limits: { ...LIMITS },
          spatialSelection: SPATIAL_SELECTION,
        },
        links: {
          self: `${base}/api/v1/capabilities`,
          health: `${base}/api/health`,
          datasets: `${base}/api/v1/datasets`,
          validate: `${base}/api/v1/data/validate`,
          resolve: `${base}/api/v1/data/resolve`,
          query: `${base}/api/v1/data/query`,
          requests: `${base}/api/v1/data/requests`,
          openapi: `${base}/api/v1/openapi.json`,
        },
      }),
    );
    await sendBytes(req, res, body, { type: JSON_TYPE, cache: "short", etagHex: sha256Hex(body) });
  };

  const openapi: Handler = (req, res) =>
    sendBytes(req, res, openApiBody, { type: JSON_TYPE, cache: "short", etagHex: openApiSha256 });

  const catalog: Handler = (req, res) =>
    sendBytes(req, res, store.catalogBody, { type: JSON_TYPE, cache: "short", etagHex: catalogSha256, bounded: true });

  const inspect: Handler = async (req, res) => {
    const id = req.params.id;
    checkVersionId(id);
    // Paid versions are listed and inspectable; only their data is withheld (decisions.md 4).
    const v = store.versions.get(id);
    if (!v) throw notFound(`Dataset version ${id}`);
    store.assertAvailable(v);
    if (!v.datasetBody || !v.datasetSha256) throw new HttpError("service_unavailable", `Dataset version ${id} is temporarily unavailable.`);
    await sendBytes(req, res, v.datasetBody, { type: JSON_TYPE, cache: "immutable", etagHex: v.datasetSha256, bounded: true });
  };

  const observations: Handler = async (req, res) => {
    checkVersionId(req.params.id);
    const page = readPageParams(req, false);
    await sendPage(req, res, "observations", findDataVersion(req.params.id), page);
  };

  const layers: Handler = async (req, res) => {
    checkVersionId(req.params.id);
    const page = readPageParams(req, true);
    const v = findDataVersion(req.params.id);
    if (page.tile === null) return sendPage(req, res, "layers", v, page);
    const located = v.index?.kind === "raster" ? store.locateTile(v, page.tile) : null;
    if (!located) throw notFound(`Tile ${page.tile} of ${v.id}`);
    const file = await store.readTile(v, page.tile);
    await sendBytes(req, res, file.bytes, { type: JSON_TYPE, cache: "immutable", etagHex: file.sha256, bounded: true });
  };

  const sample: Handler = async (req, res) => {
    checkVersionId(req.params.id);
    const tile = readParam(req, "tile");
    if (tile === undefined || tile === "") throw rejectParameter("tile", "required", "is required");
    if (tile.length > 128) throw rejectParameter("tile", "length", "must be at most 128 characters");
    const row = readCellIndex(req, "row");
    const col = readCellIndex(req, "col");
    const v = findDataVersion(req.params.id);
    const located = v.index?.kind === "raster" ? store.locateTile(v, tile) : null;
    if (!located) throw notFound(`Tile ${tile} of ${v.id}`);
    const [tileCol, tileRow, width, height] = located.slot.window;
    if (row >= height || col >= width) throw notFound(`Cell row ${row}, col ${col} of tile ${tile} (${height} rows x ${width} cols)`);
    const fd = await store.cellsFd(v);
    const [dateCol, dateRow, dateWidth] = located.date.window;
    const position = located.date.offset + ((tileRow + row - dateRow) * dateWidth + (tileCol + col - dateCol)) * 4;
    const cell = Buffer.alloc(4);
    if (readSync(fd, cell, 0, 4, position) !== 4) throw new Error(`cells of ${v.id} end early at byte ${position}`);
    const index = v.index as Extract<typeof v.index, { kind: "raster" }>;
    const body = Buffer.from(
      JSON.stringify({
        datasetVersion: v.id,
        tile,
        row,
        col,
        value: float32ToShortest(cell.readFloatLE(0)),
        unit: index.unit,
        variable: index.variable,
        date: located.date.date,
        crs: index.crs,
        transform: windowTransform(tileCol, tileRow),
      }),
    );
    await sendBytes(req, res, body, { type: JSON_TYPE, cache: "immutable", etagHex: sha256Hex(body), bounded: true });
  };

  const validate: Handler = async (req, res) => {
    const config = checkRequest(await readJsonBody(req));
    await sendJson(
      req,
      res,
      {
        valid: true,
        request: config,
        coverageVerified: false,
        acquisitionEnabled: false,
        message:
          "The request matches the contract. This is not a coverage guarantee, quote or purchase: POST it to /api/v1/data/resolve to check coverage, then to /api/v1/data/query for the data.",
      },
      { cache: "no-store" },
    );
  };

  const resolve: Handler = async (req, res) => {
    const config = checkRequest(await readJsonBody(req));
    const resolved = resolveRequest(store, config);
    const body = resolved.available
      ? {
          available: true,
          reason: "available",
          selection: {
            datasetVersion: resolved.selection.version.id,
            tileIds: listSelectionTiles(resolved.selection),
            rowCount: resolved.selection.rowCount,
          },
          acquisitionEnabled: false,
        }
      : { available: false, reason: resolved.reason, selection: null, acquisitionEnabled: false };
    await sendJson(req, res, body, { cache: "no-store" });
  };

  const query: Handler = async (req, res) => {
    const config = checkRequest(await readJsonBody(req));
    const resolved = resolveRequest(store, config);
    if (!resolved.available) throw reasonToError(resolved.reason);
    const selection = resolved.selection;
    const requestSha256 = hashRequest(config);
    const rows = await readSelectionRows(store, selection);
    const text = config.format === "csv" ? rowsToCsv(rows) : rowsToJson(selection, rows, requestSha256);
    const body = Buffer.from(text);
    assertResponseSize(body.length, "narrow the box or shorten the period");
    await sendBytes(req, res, body, {
      type: config.format === "csv" ? CSV_TYPE : JSON_TYPE,
      cache: "no-store",
      digest: true,
      headers: {
        "Service-Dataset-Version": selection.version.id,
        "Service-Request-SHA256": requestSha256,
        Link: `</api/v1/datasets/${selection.version.id}>; rel="describedby"`,
      },
    });
  };

  const requests: Handler = async (req) => {
    // Never reads the body (decisions.md 4); a large or streamed one is cut off rather than drained.
    const declared = Number(req.headers["content-length"] ?? 0);
    const streamed = req.headers["transfer-encoding"] !== undefined;
    throw new HttpError(
      "acquisition_not_ready",
      "Acquisition is not enabled: this route never charges or queues work. POST the same data request to /api/v1/data/query for published demo data.",
      undefined,
      streamed || declared > LIMITS.maxRequestBytes ? { Connection: "close" } : {},
    );
  };

  const routes: Route[] = [
    { path: "/api/health", methods: { GET: health } },
    { path: "/api/v1/capabilities", methods: { GET: capabilities } },
    { path: "/api/v1/openapi.json", methods: { GET: openapi } },
    { path: "/api/v1/datasets", methods: { GET: catalog } },
    { path: "/api/v1/datasets/:id", methods: { GET: inspect } },
    { path: "/api/v1/datasets/:id/observations", methods: { GET: observations } },
    { path: "/api/v1/layers/:id", methods: { GET: layers } },
    { path: "/api/v1/layers/:id/sample", methods: { GET: sample } },
    { path: "/api/v1/data/validate", methods: { POST: validate } },
    { path: "/api/v1/data/resolve", methods: { POST: resolve } },
    { path: "/api/v1/data/query", methods: { POST: query } },
    { path: "/api/v1/data/requests", methods: { POST: requests } },
  ];

  async function sendError(req: IncomingMessage, res: ServerResponse, err: unknown): Promise<void> {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    let status: number;
    let body: object;
    let headers: Record<string, string> = {};
    if (err instanceof HttpError) {
      status = err.status;
      body = errorToBody(err);
      headers = err.headers;
    } else {
      // Unexpected: logged with its stack, answered without a word about it (style.md, Errors).
      console.error(`${req.method} ${req.url}: unexpected error`, err);
      status = 500;
      body = INTERNAL_ERROR_BODY;
    }
    try {
      await sendBytes(req, res, Buffer.from(JSON.stringify(body)), { status, type: JSON_TYPE, cache: "no-store", headers });
    } catch (sendErr) {
      console.error(`${req.method} ${req.url}: could not send the error response`, sendErr);
      res.destroy();
    }
  }

  const app = polka({
    onError: (err, req, res) => {
      // polka reports an unmatched route as {status: 404} with no message
      const known = err instanceof HttpError || err instanceof Error ? err : null;
      void sendError(req, res, known ?? new HttpError("not_found", `No route ${req.method} ${req.path}.`));
    },
    onNoMatch: (req, res) => {
      void sendError(req, res, new HttpError("not_found", `No route ${req.method} ${req.path}; GET /api/v1/openapi.json describes every route.`));
    },
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

  for (const route of routes) {
    const methods = Object.keys(route.methods) as Method[];
    const allow = [...methods.flatMap((m) => (m === "GET" ? ["GET", "HEAD"] : [m])), "OPTIONS"].join(", ");
    for (const method of methods) {
      const handler = route.methods[method]!;
      app.add(method, route.path, (req, res) => handler(req, res));
    }
    app.options(route.path, (_req, res) => {
      // CORS preflight (Fetch standard): simple read-only API, any origin, JSON bodies.
      res.writeHead(204, {
        Allow: allow,
        "Access-Control-Allow-Methods": allow,
        "Access-Control-Allow-Headers": route.path === "/api/v1/data/requests" ? "Content-Type, Authorization" : "Content-Type",
        "Access-Control-Max-Age": "86400",
        "Cache-Control": "public, max-age=86400",
        "Content-Length": "0",
      });
      res.end();
    });
    app.all(route.path, (req) => {
      throw new HttpError("method_not_allowed", `${req.method} is not allowed on ${req.path}; allowed: ${allow}.`, undefined, { Allow: allow });
    });
  }

  // polka supplies its own error-routing `next` only when none is passed in.
  const server = http.createServer((req, res) => app.handler(req as Request, res, undefined as unknown as NextHandler));
  return {
    server,
    store,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await store.close();
    },
  };
}
