// What a route handler is given: the request, the one catalog snapshot it is answered from, and the few things
// of the service it may use. A leaf: it imports nothing of the handlers or the service that builds it.

import type { Archive } from "../format/archive.js";
import type { Snapshot } from "../format/snapshot.js";
import type { Platform } from "../format/storage.js";
import type { Answer, AnswerOptions } from "./answer.js";

export interface ApiRequest {
  method: string;
  /** path without the query string, percent-encoded as sent */
  path: string;
  query: URLSearchParams;
  contentType?: string;
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
  /** the bound of a 413's body, plan included (docs/contract.md §3.3: 1,000,000 bytes; tests scale it down) */
  readonly planBytes: number;
  /** the bound on values of a series call (api/series-params.ts MAX_SERIES_VALUES; tests scale it down) */
  readonly seriesMaxValues: number;
  openApiText(): string;
  /** Throws 503 service_unavailable when version `id` failed verification in this catalog (docs/contract.md §4.6). */
  assertAvailable(id: string): void;
  answer(body: string | Uint8Array, options: AnswerOptions): Promise<Answer>;
}
