// What a route's check and handler are given: the request, the one catalog snapshot it is answered from, and the few
// things of the service they may use. A leaf: it imports nothing of the routes or the service that builds it.

import type { Archive } from "../format/archive.js";
import type { Snapshot } from "../format/snapshot.js";
import type { Platform } from "../format/storage.js";
import type { Answer, AnswerOptions, AnswerStream } from "./answer.js";

export interface ApiRequest {
  method: string;
  /** path without the query string, percent-encoded as sent */
  path: string;
  query: URLSearchParams;
  /**
   * the query as sent, after `?`, still percent-encoded: a DAP2 constraint is not form data (`time,lat,lon` has no `=`).
   * Absent (a mirror client's request): its `query` says the same.
   */
  rawQuery?: string;
  contentType?: string;
  /** the Cookie header: OPeNDAP's newest alias keeps a client's session on one version with it (api/dap/answers.ts) */
  cookie?: string;
  /** scheme://host of this request, for the absolute links of capabilities */
  baseUrl: string;
  /**
   * Reads the request body; called only for routes that take one (the service owns that rule, and checks the
   * size bound on what it returns). A reader may reject early with 413 payload_too_large.
   */
  readBody?: () => Promise<Uint8Array | null>;
  /**
   * Runs the work of a computed answer (never a cached or cheap one) when the transport gives it a turn; it may
   * refuse with a 503 service_unavailable HttpError instead (the server's load shedding). Absent: runs at once.
   */
  admit?: <T>(work: () => Promise<T>) => Promise<T>;
}

export interface Context {
  readonly request: ApiRequest;
  readonly query: URLSearchParams;
  readonly params: Record<string, string>;
  /** the body, for routes that take one (null otherwise) */
  readonly body: Uint8Array | null;
  readonly snapshot: Snapshot;
  readonly archive: Archive;
  readonly platform: Platform;
  /** health `environment` (docs/contract.md §4.5) */
  readonly environment: string;
  /**
   * One of the route's bounds by name (RouteSpec.bounds: a 413's body, the values of a series call), as the service
   * was given it (tests scale bounds down) or the route's own default.
   */
  bound(name: string): number;
  openApiText(): string;
  /** Throws 503 service_unavailable when version `id` failed verification in this catalog (docs/contract.md §4.6). */
  assertAvailable(id: string): void;
  answer(body: string | Uint8Array, options: AnswerOptions): Promise<Answer>;
  /** An answer whose body is streamed as it is written (api/answer.ts makeStreamAnswer). */
  streamAnswer(stream: AnswerStream, options: AnswerOptions): Promise<Answer>;
}
