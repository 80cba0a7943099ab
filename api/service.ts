// The interface, computed: a request (method, path, query, body) -> an Answer, from a dist behind a Storage.
// The server and the mirror client both run exactly this; only where the bytes come from differs.

import type { Dataset } from "../schemas/layout.js";
import { type Answer, makeAnswer } from "./answer.js";
import { LruCache } from "./cache.js";
import { Archive, type ArchiveOptions, CatalogError, Snapshot, type VersionView, openVersion } from "./archive.js";
import { HttpError, INTERNAL_ERROR_BODY, errorToBody } from "./errors.js";
import { buildOpenApi } from "./openapi.js";
import { checkVersionId } from "./params.js";
import { isVisible } from "./records.js";
import { type RouteSpec, findRoute } from "./routes.js";
import { IntegrityError, type Platform, type Storage, StorageError } from "./storage.js";

export interface ServiceOptions extends ArchiveOptions {
  storage: Storage;
  platform: Platform;
  /** health `environment` (decisions.md 4: SERVICE_ENVIRONMENT, default demo) */
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
}

export interface ApiRequest {
  method: string;
  /** path without the query string, percent-encoded as sent */
  path: string;
  query: URLSearchParams;
  contentType?: string;
  body?: Uint8Array | null;
  /** scheme://host of this request, for the absolute links of capabilities */
  baseUrl: string;
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
   * popular tile, costs a lookup. Server errors are never kept.
   */
  private readonly answers: LruCache<Answer>;
  private readonly warn: (message: string) => void;
  private readonly throwUnverified: boolean;
  private openApi: string | null = null;

  constructor(options: ServiceOptions) {
    this.archive = new Archive(options.storage, options.platform, options);
    this.environment = options.environment ?? "demo";
    this.warn = options.warn ?? ((m) => console.error(m));
    this.throwUnverified = options.onUnverified === "throw";
    this.answers = new LruCache(options.answerCacheBytes ?? 8 << 20);
  }

  get platform(): Platform {
    return this.archive.platform;
  }

  /** The OpenAPI document, built once on first use. */
  openApiText(): string {
    return (this.openApi ??= JSON.stringify(buildOpenApi()));
  }

  /** The catalog every new request is answered from; read on first use. */
  snapshot(): Promise<Snapshot> {
    if (!this.current) {
      this.current = this.loadSnapshot();
      this.current.catch(() => (this.current = null));
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
      this.warn(`catalog not reloaded: ${(err as Error).message}`);
      return false;
    }
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

  markFailed(id: string, reason: string): void {
    if (!this.failures.has(id)) this.warn(`dataset ${id} is unavailable: ${reason}`);
    this.failures.set(id, reason);
  }

  assertAvailable(id: string): void {
    if (this.failures.has(id)) {
      throw new HttpError(
        "service_unavailable",
        `Dataset version ${id} is temporarily unavailable: its files could not be verified. Retry later with exponential backoff.`,
      );
    }
  }

  /** The answer to a request: its route's, or 404 for an unknown path, or 405 naming what is allowed there. */
  answer(request: ApiRequest): Promise<Answer> {
    const found = findRoute(request.method, request.path);
    if (!found) {
      return this.answerError(new HttpError("not_found", `No route ${request.method} ${request.path}; GET /api/v1/openapi.json describes every route.`), request);
    }
    if ("allow" in found) {
      const err = new HttpError("method_not_allowed", `${request.method} is not allowed on ${request.path}; ${found.hint}`, undefined, { Allow: found.allow });
      return this.answerError(err, request);
    }
    return this.answerRoute(found.route, found.params, request);
  }

  async answerRoute(route: RouteSpec, params: Record<string, string>, request: ApiRequest): Promise<Answer> {
    const ctx = new Context(this, request, params);
    try {
      const key = await this.answerKey(route, request, await ctx.snapshot());
      const hit = this.answers.get(key);
      // an answer computed before its version failed verification is not served after (decisions.md 4)
      if (hit && !this.failures.has(hit.headers["Service-Dataset-Version"] ?? ctx.params.id ?? "")) return hit;
      const answer = await route.handle(ctx);
      // counted twice: the server keeps an answer's compressed forms with it
      if (answer.status < 500) this.answers.set(key, answer, answer.body.byteLength * 2 + 512);
      return answer;
    } catch (err) {
      return this.errorAnswer(err, ctx);
    }
  }

  /**
   * What makes an answer: the catalog it is read from, the route, the request's query, body and media type,
   * and (capabilities only) the base URL of its links. Two requests with the same key get the same bytes.
   */
  private async answerKey(route: RouteSpec, request: ApiRequest, snapshot: Snapshot): Promise<string> {
    const body = request.body && request.body.byteLength > 0 ? await this.platform.sha256Hex(request.body) : "";
    const base = route.operationId === "getCapabilities" ? request.baseUrl : "";
    return `${snapshot.sha256} ${route.operationId} ${request.path}?${request.query.toString()} ${request.contentType ?? ""} ${body} ${base}`;
  }

  /** The answer to a failure outside any route (a body over the bound, an unknown path). */
  answerError(err: unknown, request: ApiRequest): Promise<Answer> {
    return this.errorAnswer(err, new Context(this, request, {}));
  }

  private async errorAnswer(err: unknown, ctx: Context): Promise<Answer> {
    let failure = err;
    if (err instanceof IntegrityError || err instanceof StorageError) {
      if (this.throwUnverified) throw err;
      // Bytes that fail their hash, or are gone, are never served: the version answers 503 (decisions.md 4).
      if (ctx.versionId) this.markFailed(ctx.versionId, err.message);
      else this.warn(err.message);
      failure = new HttpError("service_unavailable", `${ctx.versionId ? `Dataset version ${ctx.versionId}` : "The catalog"} is temporarily unavailable: its files could not be verified. Retry later with exponential backoff.`);
    } else if (err instanceof CatalogError) {
      if (this.throwUnverified) throw err;
      this.warn(err.message);
      failure = new HttpError("service_unavailable", "The catalog of this service cannot be read; retry later with exponential backoff.");
    }
    if (failure instanceof HttpError) {
      return makeAnswer(this.platform, JSON.stringify(errorToBody(failure)), { status: failure.status, cache: "no-store", headers: failure.headers });
    }
    // Unexpected: reported with its stack, answered without a word about it (style.md, Errors).
    this.warn(`${ctx.request.method} ${ctx.request.path}: unexpected error: ${(err as Error)?.stack ?? String(err)}`);
    return makeAnswer(this.platform, JSON.stringify(INTERNAL_ERROR_BODY), { status: 500, cache: "no-store" });
  }
}

/** One request being answered: its route parameters, and the one snapshot it is answered from. */
export class Context {
  /** the version whose data this request reads, once known: a verification failure marks it */
  versionId: string | null = null;
  private snapshotPromise: Promise<Snapshot> | null = null;

  constructor(
    readonly service: Service,
    readonly request: ApiRequest,
    readonly params: Record<string, string>,
  ) {}

  get archive(): Archive {
    return this.service.archive;
  }

  get platform(): Platform {
    return this.service.platform;
  }

  get query(): URLSearchParams {
    return this.request.query;
  }

  snapshot(): Promise<Snapshot> {
    return (this.snapshotPromise ??= this.service.snapshot());
  }

  notFound(what: string): HttpError {
    return new HttpError("not_found", `${what} is not published here; GET /api/v1/datasets lists what is.`);
  }

  /** A visible version's catalog record (paid included: listed and inspectable), else 404. */
  async findRecord(id: string): Promise<Dataset> {
    checkVersionId(id);
    const record = await (await this.snapshot()).findRecord(id);
    if (!record || !isVisible(record)) throw this.notFound(`Dataset version ${id}`);
    this.versionId = id;
    this.service.assertAvailable(id);
    return record;
  }

  /** A version whose data may be read: published, demo, not restricted (interface.md 3.1), verified so far. */
  async openData(id: string): Promise<VersionView> {
    const record = await this.findRecord(id);
    if (record.access_level !== "demo") throw this.notFound(`Dataset version ${id}`);
    return openVersion(this.archive, record);
  }

  async answer(body: string | Uint8Array, options: Parameters<typeof makeAnswer>[2]): Promise<Answer> {
    return makeAnswer(this.platform, body, options);
  }
}

export type { RouteSpec };
