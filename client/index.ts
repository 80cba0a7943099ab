// The mirror client: every route of the interface answered from a mirror's static dist (HTTP range requests),
// byte for byte as the server answers it, by the same core (api/). Runs in browsers and in Node >= 20.
//
// Only web platform APIs here and below (fetch, WebCrypto, DecompressionStream): no node:* import, which
// test/client/mirror.test.ts checks by bundling this file for the browser.

import { type Answer, JSON_TYPE, answerHeaders, answerSha256, joinParts } from "../api/answer.js";
import { ROUTES } from "../api/interface.js";
import type { RouteTable } from "../api/routes.js";
import { Service } from "../api/service.js";
import { CatalogError } from "../format/archive.js";
import { candidatesOf } from "../format/catalog.js";
import { type Dataset, QUERY_VARIABLE } from "../format/records.js";
import { IntegrityError, StorageError, fromUtf8, utf8 } from "../format/storage.js";
import { type Fetch, HttpStorage, type TransferStats } from "../format/http-storage.js";
import { type DateDiff, type DateSide, diffVersions } from "./diff.js";
import { type SeriesFormat, seriesPath } from "../api/series/face.js";
import { type SeriesOptions, planSeries } from "./series.js";
import { webPlatform } from "./platform.js";

export { CatalogError, IntegrityError, StorageError };
export type { DateDiff, DateSide, Fetch, SeriesFormat, SeriesOptions, TransferStats };

/**
 * A call of GET /api/v1/series, as the route takes it: places (the i-th latitude with the i-th longitude) or a box,
 * over a period.
 */
export interface SeriesCall {
  lat?: number | number[];
  lon?: number | number[];
  /** a box instead of places: west, south, east, north in decimal degrees (every cell whose centre lies inside) */
  bbox?: [number, number, number, number];
  /** inclusive; default the whole period every asked variable holds */
  start?: string;
  end?: string;
  /** API or SILO names (default air_temperature_max) */
  variables?: string | string[];
  /**
   * csv (default), json, met or netcdf (a box or one place as one NetCDF file); each format's bound on values is the
   * server's, or MirrorClientOptions.bounds by its option name (seriesMaxValues; seriesNetcdfMaxValues for netcdf)
   */
  format?: SeriesFormat;
  /** pins, one per variable */
  datasetVersion?: string | string[];
}

const listOf = <T>(x: T | T[] | undefined): T[] | undefined => (x === undefined ? undefined : Array.isArray(x) ? x : [x]);

export interface MirrorClientOptions {
  /** where the dist is served: the folder that holds catalog.json (https://cdn.example/climate/) */
  baseUrl: string;
  /**
   * scheme://host[/path] the capabilities links point at (default: baseUrl without its trailing "/"); the
   * server uses the origin it was asked on, so a client standing in for a server passes that server's origin
   */
  linksBaseUrl?: string;
  /** bytes of verified pieces and decoded blocks kept in memory (default 64 MiB); computed answers get a quarter more */
  cacheBytes?: number;
  /** health `environment`, as the server's SERVICE_ENVIRONMENT (default demo) */
  environment?: string;
  /** the fetch to read the mirror with (default globalThis.fetch) */
  fetch?: Fetch;
  /** catalog.json is read again at most this often (default 60000: the max-age a mirror serves it with) */
  catalogTtlMs?: number;
  /** where catalog reload failures are reported (default: nowhere; the previous catalog keeps answering) */
  warn?: (message: string) => void;
  /** the routes' bounds by name, as the server's (RouteSpec.bounds; default each route's own: tests scale them down) */
  bounds?: Record<string, number>;
  /** the routes answered (default the interface's, as the server's; a test adds a series format of its own) */
  routes?: RouteTable;
}

export interface MirrorRequest {
  /** default GET */
  method?: string;
  /** the route path as a server would be asked it, percent-encoded; may carry "?query" */
  path: string;
  /** query parameters besides (or instead of) those in `path` */
  query?: URLSearchParams | Record<string, string> | string;
  /** request body: bytes, text, or a value sent as JSON */
  body?: Uint8Array | string | object | null;
  /** Content-Type of the body (default application/json for a value body; none otherwise) */
  contentType?: string;
}

export interface MirrorAnswer {
  status: number;
  /**
   * What the server sends for the same request without Accept-Encoding, minus transport (Content-Length, Vary,
   * CORS, Connection): Content-Type, Cache-Control, ETag (when the answer has one), Content-Digest,
   * Service-Dataset-Version, Service-Request-SHA256, Link, Allow; Location on a 302 (the Zarr view's latest).
   */
  headers: Record<string, string>;
  body: Uint8Array;
  text(): string;
  json<T = unknown>(): T;
}

/** A computed answer that is not a 200, from a helper that only returns 200 bodies. */
export class AnswerError extends Error {
  constructor(readonly answer: MirrorAnswer) {
    super(`HTTP ${answer.status}: ${describeErrorBody(answer)}`);
    this.name = "AnswerError";
  }

  get status(): number {
    return this.answer.status;
  }
}

function describeErrorBody(answer: MirrorAnswer): string {
  try {
    const body = answer.json<{ error?: string; message?: string }>();
    return body.message ? `${body.error}: ${body.message}` : answer.text();
  } catch {
    return answer.text();
  }
}

const EMPTY = new Uint8Array(0);

function toBody(body: MirrorRequest["body"]): Uint8Array | null {
  if (body === undefined || body === null) return null;
  if (body instanceof Uint8Array) return body;
  if (typeof body === "string") return utf8(body);
  return utf8(JSON.stringify(body));
}

function toQuery(path: string, extra: MirrorRequest["query"]): { path: string; query: URLSearchParams } {
  const at = path.indexOf("?");
  const query = new URLSearchParams(at < 0 ? "" : path.slice(at + 1));
  if (extra !== undefined) {
    for (const [name, value] of new URLSearchParams(extra as ConstructorParameters<typeof URLSearchParams>[0])) query.append(name, value);
  }
  return { path: at < 0 ? path : path.slice(0, at), query };
}

export class MirrorClient {
  readonly service: Service;
  readonly storage: HttpStorage;
  private readonly linksBaseUrl: string;
  private readonly catalogTtlMs: number;
  /** when catalog.json was last asked for (0: never) */
  private catalogReadAt = 0;

  constructor(options: MirrorClientOptions) {
    this.storage = new HttpStorage(options.baseUrl, options.fetch);
    this.linksBaseUrl = (options.linksBaseUrl ?? this.storage.baseUrl).replace(/\/+$/, "");
    this.catalogTtlMs = options.catalogTtlMs ?? 60_000;
    const cacheBytes = options.cacheBytes ?? 64 << 20;
    this.service = new Service({
      routes: options.routes ?? ROUTES,
      storage: this.storage,
      platform: webPlatform,
      environment: options.environment,
      warn: options.warn ?? (() => {}),
      // a damaged mirror is the caller's to know: a rejection naming the piece, never a 503 or a wrong body
      onUnverified: "throw",
      cacheBytes,
      answerCacheBytes: Math.max(1 << 20, cacheBytes / 4),
      bounds: options.bounds,
    });
  }

  /** HTTP requests sent to the mirror and body bytes received, since this client was made. */
  stats(): TransferStats {
    return { ...this.storage.stats };
  }

  /**
   * The answer of the interface to a request, as the server gives it over the same dist. Rejects (IntegrityError,
   * StorageError, CatalogError; each message names the piece's URL) when the mirror cannot be read or a piece fails
   * its sha256.
   */
  async answer(request: MirrorRequest): Promise<MirrorAnswer> {
    const method = (request.method ?? "GET").toUpperCase();
    const { path, query } = toQuery(request.path, request.query);
    const body = toBody(request.body);
    const contentType = request.contentType ?? (body && typeof request.body === "object" && !(request.body instanceof Uint8Array) ? JSON_TYPE : undefined);
    await this.refreshCatalog();
    const answer = await this.service.handle({ method, path, query, contentType, baseUrl: this.linksBaseUrl, readBody: async () => body });
    return this.toMirrorAnswer(answer, method === "HEAD");
  }

  /** A GET answer's body as JSON; rejects with AnswerError on any status but 200. */
  async getJson<T = unknown>(path: string): Promise<T> {
    const answer = await this.answer({ path });
    if (answer.status !== 200) throw new AnswerError(answer);
    return answer.json<T>();
  }

  /**
   * The newest version of a variable (API name; default the query route's), as a request that pins none would
   * choose it first (docs/contract.md §3.4): the first candidate of that variable in the mirror's catalog, as its
   * record; null when the mirror publishes none.
   */
  async newestVersion(variable: string = QUERY_VARIABLE): Promise<Dataset | null> {
    await this.refreshCatalog();
    const first = candidatesOf((await this.service.snapshot()).pointer, variable)[0];
    return first ? (await this.getJson<{ dataset: Dataset }>(`/api/v1/datasets/${first.id}`)).dataset : null;
  }

  /**
   * The answers of the consecutive 31-day queries of each point (one cell: [longitude, latitude]) over
   * start..end, in order, each the very bytes the server answers it with; all pinned to one version (by default
   * the one the first query resolves to). Every series chunk is read once: later queries find it cached.
   */
  async *seriesAnswers(points: [number, number] | [number, number][], start: string, end: string, options: SeriesOptions = {}): AsyncGenerator<MirrorAnswer> {
    const list = typeof points[0] === "number" ? [points as [number, number]] : (points as [number, number][]);
    const format = options.format ?? "json";
    let version = options.datasetVersion;
    if (!version) {
      const [first] = planSeries(list.slice(0, 1), start, end, format, undefined);
      const resolved = await this.answer({ method: "POST", path: "/api/v1/data/resolve", body: first });
      version = resolved.status === 200 ? resolved.json<{ selection: { datasetVersion: string } | null }>().selection?.datasetVersion : undefined;
    }
    for (const body of planSeries(list, start, end, format, version)) {
      const answer = await this.answer({ method: "POST", path: "/api/v1/data/query", body });
      if (answer.status !== 200) throw new AnswerError(answer);
      yield answer;
    }
  }

  /**
   * GET /api/v1/series from the mirror: places or a box over any period in one answer (CSV, JSON, an APSIM file or a
   * NetCDF file), the very bytes the server answers; rejects with AnswerError on any status but 200 (a 413's plan is in
   * its answer, a 400 names what the call lacks).
   */
  async series(call: SeriesCall): Promise<MirrorAnswer> {
    const path = seriesPath({
      bbox: call.bbox,
      lats: listOf(call.lat),
      lons: listOf(call.lon),
      start: call.start,
      end: call.end,
      variables: listOf(call.variables),
      format: call.format,
      pins: listOf(call.datasetVersion),
    });
    const answer = await this.answer({ path });
    if (answer.status !== 200) throw new AnswerError(answer);
    return answer;
  }

  /** seriesAnswers collected: the answers of the 31-day queries, and (JSON) the rows of all of them in order. */
  async seriesQueries(points: [number, number] | [number, number][], start: string, end: string, options: SeriesOptions = {}): Promise<{ answers: MirrorAnswer[]; rows: unknown[] }> {
    const answers: MirrorAnswer[] = [];
    for await (const answer of this.seriesAnswers(points, start, end, options)) answers.push(answer);
    const rows = options.format === "csv" ? [] : answers.flatMap((a) => a.json<{ data: unknown[] }>().data);
    return { answers, rows };
  }

  /**
   * The dates whose cells differ between two raster versions of the mirror (added, removed or revised), with the
   * sha256 of their cells and source files on each side, in date order. Reads only the index pages of the years and
   * months the versions do not share, so the cost grows with the changes, not with the archive. Rejects with a
   * RangeError for a version the mirror does not publish, and as answer() does when a piece fails its check.
   */
  async *diffDates(oldId: string, newId: string): AsyncGenerator<DateDiff> {
    await this.refreshCatalog();
    yield* diffVersions(await this.service.snapshot(), oldId, newId);
  }

  /** diffDates collected. */
  async diff(oldId: string, newId: string): Promise<DateDiff[]> {
    const out: DateDiff[] = [];
    for await (const change of this.diffDates(oldId, newId)) out.push(change);
    return out;
  }

  /** POST /api/v1/data/query in `format` (json or csv); rejects with AnswerError on any status but 200. */
  async query(dataRequest: object, format: "json" | "csv" = "json"): Promise<MirrorAnswer> {
    const answer = await this.answer({ method: "POST", path: "/api/v1/data/query", body: { ...dataRequest, format } });
    if (answer.status !== 200) throw new AnswerError(answer);
    return answer;
  }

  /** catalog.json again once it may have changed (catalogTtlMs): a new publish is answered from within that time. */
  private async refreshCatalog(): Promise<void> {
    const now = Date.now();
    if (this.catalogReadAt === 0) {
      this.catalogReadAt = now; // the first answer reads it (Service.snapshot)
      return;
    }
    if (now - this.catalogReadAt < this.catalogTtlMs) return;
    this.catalogReadAt = now;
    await this.service.reload();
  }

  private async toMirrorAnswer(answer: Answer, head: boolean): Promise<MirrorAnswer> {
    const headers = answerHeaders(answer, await answerSha256(webPlatform, answer), null, head);
    // a streamed answer (a NetCDF file) is returned whole, as every answer of the client is
    const body = head ? EMPTY : answer.stream ? await joinParts(answer.stream) : answer.body;
    return {
      status: answer.status,
      headers,
      body,
      text: () => fromUtf8(body),
      json: <T>() => JSON.parse(fromUtf8(body)) as T,
    };
  }
}

/** A client for the mirror at `options.baseUrl`; nothing is read until the first answer. */
export function createMirrorClient(options: MirrorClientOptions): MirrorClient {
  return new MirrorClient(options);
}
