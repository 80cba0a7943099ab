// The interface, computed: a request -> an Answer, from a dist behind a Storage, by a table of routes (the
// interface's: api/interface.ts). The server and the mirror client both call Service.handle; only where the bytes
// come from, and how an answer travels, differs.

import { Archive, type ArchiveOptions, CatalogError } from "../format/archive.js";
import { LruCache } from "../format/cache.js";
import { Snapshot } from "../format/snapshot.js";
import { IntegrityError, type Platform, type Storage, StorageError } from "../format/storage.js";
import { VersionReadError } from "../format/versions.js";
import { type Answer, type AnswerStream, keepBody, makeAnswer, makeStreamAnswer } from "./answer.js";
import { ByteSink } from "./bytes.js";
import type { ApiRequest, Context } from "./context.js";
import { LIMITS } from "./contract.js";
import { preflightHeaders } from "./cors.js";
import { HttpError, INTERNAL_ERROR_BODY, errorToBody, payloadTooLarge } from "./errors.js";
import { buildOpenApi } from "./openapi.js";
import { type RouteSpec, type RouteTable, findRoute } from "./routes.js";

export type { ApiRequest };

export interface ServiceOptions extends ArchiveOptions {
  /** the routes it answers (the interface's: api/interface.ts ROUTES) */
  routes: RouteTable;
  storage: Storage;
  platform: Platform;
  /** health `environment` (docs/contract.md §4.5: SERVICE_ENVIRONMENT, default demo) */
  environment?: string;
  /** where verification failures and unexpected errors are reported */
  warn?: (message: string) => void;
  /**
   * What bytes that fail verification (or cannot be read) become: a 503 answer for that version (the server),
   * or a rejection naming the piece (the mirror client, whose caller must learn the mirror is damaged).
   */
  onUnverified?: "answer-503" | "throw";
  /** bytes of computed answers kept for repeated requests (default 8 MiB) */
  answerCacheBytes?: number;
  /** bounds by name, over the routes' own defaults (RouteSpec.bounds; undefined: the default): tests scale them down */
  bounds?: Record<string, number | undefined>;
}

export class Service {
  readonly archive: Archive;
  readonly environment: string;
  private current: Promise<Snapshot> | null = null;
  private reloading: Promise<unknown> = Promise.resolve();
  /** versions whose bytes failed verification in the current snapshot: their data answers 503 */
  private readonly failures = new Map<string, string>();
  /**
   * Answers already computed, by what makes them (answerKey), bounded in bytes: a repeated request, a
   * popular tile, costs a lookup. Server errors are never kept. An answer is kept only when its key was asked
   * before (`asked`): a stream of distinct requests would otherwise fill the cache with answers nobody asks
   * again, and keep the collector busy moving them.
   */
  private readonly answers: LruCache<Answer>;
  /**
   * The keys of answers asked once, each costing what its answer would in `answers` (at least 1/8192 of it): a key
   * counts as asked before only while its answer, had it been kept, would still be there. A second ask from
   * further back (a Zarr reader's next pass over thousands of 256 kB chunks) would not have been a hit either;
   * keeping it would only turn the cache over and leave the collector old buffers to free.
   */
  private readonly asked: LruCache<true>;
  private readonly askedMinCost: number;
  private readonly warn: (message: string) => void;
  private readonly throwUnverified: boolean;
  private openApi: string | null = null;
  private readonly routes: RouteTable;
  private readonly bounds: Record<string, number | undefined>;

  constructor(options: ServiceOptions) {
    this.archive = new Archive(options.storage, options.platform, options);
    this.environment = options.environment ?? "demo";
    this.warn = options.warn ?? ((m) => console.error(m));
    this.throwUnverified = options.onUnverified === "throw";
    const answerBytes = options.answerCacheBytes ?? 8 << 20;
    this.answers = new LruCache(answerBytes);
    this.asked = new LruCache(answerBytes);
    this.askedMinCost = answerBytes / 8192;
    this.routes = options.routes;
    this.bounds = options.bounds ?? {};
  }

  get platform(): Platform {
    return this.archive.platform;
  }

  /** The catalog every new request is answered from; read on first use, tried again after a failure. */
  snapshot(): Promise<Snapshot> {
    if (!this.current) {
      const loading = this.loadSnapshot();
      this.current = loading;
      loading.catch(() => {
        if (this.current === loading) this.current = null;
      });
    }
    return this.current;
  }

  private async loadSnapshot(): Promise<Snapshot> {
    const { pointer, sha256 } = await this.archive.readPointer();
    return new Snapshot(this.archive, pointer, sha256);
  }

  /**
   * Reads catalog.json again and, when it changed, answers new requests from it (requests already running
   * finish on the snapshot they started with). A catalog that fails its checks is reported and not taken.
   */
  /** the last failed reload's warning, until a reload reads a valid catalog */
  private reloadFailure: string | null = null;

  reload(): Promise<boolean> {
    // one reload at a time, in order, so a slow earlier read never replaces a newer catalog
    const next = this.reloading.then(() => this.reloadNow());
    this.reloading = next.catch(() => false);
    return next;
  }

  private async reloadNow(): Promise<boolean> {
    let next: Snapshot;
    try {
      next = await this.loadSnapshot();
    } catch (err) {
      // said once per failure, not on every look (a URL's catalog is read again every few seconds)
      const message = `catalog not reloaded: ${(err as Error).message}`;
      if (message !== this.reloadFailure) this.warn(message);
      this.reloadFailure = message;
      return false;
    }
    this.reloadFailure = null;
    const previous = await this.current?.catch(() => null);
    if (previous?.sha256 === next.sha256) return false;
    this.current = Promise.resolve(next);
    this.failures.clear(); // a new publish may have repaired what failed
    return true;
  }

  /** Releases what the storage holds open (descriptors). */
  close(): void {
    this.archive.storage.close?.();
  }

  /**
   * The answer to a request: its route's, 404 for an unknown path, or 405 naming what is allowed there. Only a
   * route that takes a body reads it, bounded before any check (docs/contract.md §4.1).
   */
  async handle(request: ApiRequest): Promise<Answer> {
    const found = findRoute(this.routes, request.method, request.path);
    if (!found) {
      return this.errorAnswer(new HttpError({ kind: "not_found", message: `No route ${request.method} ${request.path}; GET /api/v1/openapi.json describes every route.` }), request);
    }
    if ("allow" in found && request.method === "OPTIONS") {
      // a CORS preflight: what each route on the path says a cross-origin caller may send (api/cors.ts)
      const headers = preflightHeaders(found.allow, found.routes.map((r) => r.cors));
      return makeAnswer(this.platform, "", { status: 204, cache: "no-store", etag: false, headers });
    }
    if ("allow" in found) {
      const err = new HttpError({ kind: "method_not_allowed", message: `${request.method} is not allowed on ${request.path}; ${found.hint}`, headers: { Allow: found.allow } });
      return this.errorAnswer(err, request);
    }
    let body: Uint8Array | null = null;
    try {
      if (found.route.readsBody && request.readBody) body = await request.readBody();
      if (body && body.byteLength > LIMITS.maxRequestBytes) throw payloadTooLarge();
    } catch (err) {
      return this.errorAnswer(err, request);
    }
    return this.answerRoute(found.route, found.params, request, body);
  }

  private async answerRoute(route: RouteSpec, params: Record<string, string>, request: ApiRequest, body: Uint8Array | null): Promise<Answer> {
    try {
      const snapshot = await this.snapshot();
      const key = await this.answerKey(route, request, body, snapshot);
      const hit = this.answers.get(key);
      // an answer computed before one of its versions failed verification is not served after (docs/contract.md §4.6)
      if (hit && !(hit.headers["Service-Dataset-Version"] ?? params.id ?? "").split(",").some((id) => this.failures.has(id))) return hit;
      const ctx = this.contextFor(route, request, params, body, snapshot);
      // checked before the answer waits for a turn: a bad request is answered at once, never queued nor shed
      const checked = route.check?.(ctx);
      const work = () => route.handle(ctx, checked);
      const answer = await (route.computed && request.admit ? request.admit(work) : work());
      // counted twice: the server keeps an answer's compressed forms with it. A HEAD is kept at once: its GET
      // usually follows (GDAL's /vsicurl/ asks a Zarr chunk's size first), and would compute it all again
      const cost = answer.body.byteLength * 2 + 512;
      if (answer.status < 500 && this.answers.admits(cost) && (this.asked.get(key) || request.method === "HEAD")) {
        keepBody(answer);
        this.answers.set(key, answer, cost);
      } else this.asked.set(key, true, Math.max(cost, this.askedMinCost));
      return answer;
    } catch (err) {
      return this.errorAnswer(err, request, route);
    }
  }

  private contextFor(route: RouteSpec, request: ApiRequest, params: Record<string, string>, body: Uint8Array | null, snapshot: Snapshot): Context {
    const platform = this.platform;
    const bounds = this.bounds;
    return {
      request,
      query: request.query,
      params,
      body,
      snapshot,
      archive: this.archive,
      platform,
      environment: this.environment,
      bound: (name) => {
        // a route states every bound it has (its spec carries its limits); a service given one overrides it (tests)
        if (route.bounds?.[name] === undefined) throw new Error(`${route.operationId} has no bound named ${name}`);
        return bounds[name] ?? route.bounds[name];
      },
      openApiText: () => (this.openApi ??= JSON.stringify(buildOpenApi(this.routes))),
      assertAvailable: (id) => {
        if (this.failures.has(id)) throw unavailable(`Dataset version ${id}`);
      },
      answer: (bytes, options) => makeAnswer(platform, bytes, options),
      streamAnswer: (stream, options) => makeStreamAnswer(platform, this.guardStream(stream), options),
    };
  }

  /**
   * What makes an answer: the catalog it is read from, the route, the request's query, body and media type,
   * the base URL of its links when it has absolute ones (RouteSpec.absoluteLinks), and the Cookie header when the
   * answer depends on it (RouteSpec.readsCookie). Two requests with the same key get the same bytes.
   */
  private async answerKey(route: RouteSpec, request: ApiRequest, body: Uint8Array | null, snapshot: Snapshot): Promise<string> {
    const bodyHash = body && body.byteLength > 0 ? await this.platform.sha256Hex(body) : "";
    const base = route.absoluteLinks ? request.baseUrl : "";
    const cookie = route.readsCookie ? (request.cookie ?? "") : "";
    return `${snapshot.sha256} ${route.operationId} ${request.path}?${request.query.toString()} ${request.contentType ?? ""} ${bodyHash} ${base} ${cookie}`;
  }

  private async errorAnswer(err: unknown, request: ApiRequest, route?: RouteSpec): Promise<Answer> {
    const failure = this.toHttpError(err);
    if (failure) return makeErrorAnswer(this.platform, failure, route);
    // Unexpected: reported with its stack, answered with a generic 500 that leaks nothing (docs/contract.md §4.2).
    this.warn(`${request.method} ${request.path}: unexpected error: ${(err as Error)?.stack ?? String(err)}`);
    if (route?.errorForm) return makeErrorAnswer(this.platform, new HttpError({ kind: "internal_error", message: INTERNAL_ERROR_BODY.message }), route);
    return makeAnswer(this.platform, JSON.stringify(INTERNAL_ERROR_BODY), { status: 500, cache: "no-store" });
  }

  /** A version whose bytes failed verification: 503 from now on, said once (docs/contract.md §4.6). */
  private markFailed(err: VersionReadError): void {
    if (!this.failures.has(err.versionId)) this.warn(`dataset ${err.versionId} is unavailable: ${err.cause.message}`);
    this.failures.set(err.versionId, err.cause.message);
  }

  /**
   * A streamed body that marks its version failed when a piece fails verification while it is sent: the headers are
   * gone, so that client's connection is cut short, and the next call is 503 as after any other read.
   */
  private guardStream(stream: AnswerStream): AnswerStream {
    const markFailed = (err: unknown) => err instanceof VersionReadError && !this.throwUnverified && this.markFailed(err);
    return {
      ...stream,
      open: async function* () {
        try {
          yield* stream.open();
        } catch (err) {
          markFailed(err);
          throw err;
        }
      },
    };
  }

  /** The contract error a failure is answered with; unverified bytes become 503, never data (docs/contract.md §4.6). */
  private toHttpError(err: unknown): HttpError | null {
    if (err instanceof HttpError) return err;
    if (err instanceof VersionReadError) {
      if (this.throwUnverified) throw err.cause;
      this.markFailed(err);
      return unavailable(`Dataset version ${err.versionId}`);
    }
    if (err instanceof IntegrityError || err instanceof StorageError || err instanceof CatalogError) {
      if (this.throwUnverified) throw err;
      this.warn(err.message);
      return err instanceof CatalogError
        ? new HttpError({ kind: "service_unavailable", message: "The catalog of this service cannot be read; retry later with exponential backoff." })
        : unavailable("The catalog");
    }
    return null;
  }
}

/**
 * The answer of a typed error: the contract's body (or the route's own form of it), its status and headers, never
 * cached (every error's one path).
 */
export function makeErrorAnswer(platform: Platform, err: HttpError, route?: RouteSpec): Promise<Answer> {
  if (route?.errorForm) {
    const { body, headers } = route.errorForm.render(err);
    return makeAnswer(platform, body, { status: err.status, type: route.errorForm.type, cache: "no-store", headers: { ...err.headers, ...headers } });
  }
  return makeAnswer(platform, errorToBytes(err), { status: err.status, cache: "no-store", headers: err.headers });
}

/** The error body (docs/contract.md §4.2) of a typed error as bytes, its members written as text pieces appended (a 413's plan). */
function errorToBytes(err: HttpError): string | Uint8Array {
  const text = JSON.stringify(errorToBody(err));
  if (!err.members) return text;
  const out = new ByteSink();
  out.text(text.slice(0, -1));
  for (const piece of err.members) out.text(piece);
  out.text("}");
  return out.finish();
}

function unavailable(what: string): HttpError {
  return new HttpError({ kind: "service_unavailable", message: `${what} is temporarily unavailable: its files could not be verified. Retry later with exponential backoff.` });
}
