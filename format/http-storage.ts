// The interface's Storage over HTTP: a mirror's dist files by URL, day pieces by range requests (any static host or CDN).
// Only fetch (browsers, Node >= 20): the mirror client reads a mirror through it, and make sync reads its origin.

import { type Storage, StorageError } from "./storage.js";
import { CATALOG_FILE } from "./objects.js";

export interface TransferStats {
  /** HTTP requests sent */
  requests: number;
  /** response body bytes received */
  bytes: number;
}

export type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

/** A base URL that ends in "/", so dist paths resolve below it (https://cdn/climate -> https://cdn/climate/). */
export function toBaseUrl(url: string): string {
  const parsed = new URL(url);
  parsed.search = "";
  parsed.hash = "";
  if (!parsed.pathname.endsWith("/")) parsed.pathname += "/";
  return parsed.href;
}

const CONTENT_RANGE = /^bytes (\d+)-(\d+)\/(\d+|\*)$/;

export class HttpStorage implements Storage {
  readonly baseUrl: string;
  readonly stats: TransferStats = { requests: 0, bytes: 0 };
  private readonly fetch: Fetch;

  constructor(baseUrl: string, fetchImpl?: Fetch) {
    this.baseUrl = toBaseUrl(baseUrl);
    // called as a plain function: a browser's fetch throws "Illegal invocation" when called as another object's method
    const send = fetchImpl ?? globalThis.fetch;
    this.fetch = (input, init) => send(input, init);
  }

  describe(path: string): string {
    return this.baseUrl + path;
  }

  async read(path: string, offset?: number, length?: number): Promise<Uint8Array> {
    const url = this.describe(path);
    const ranged = offset !== undefined;
    if (ranged && (length ?? 0) <= 0) return new Uint8Array(0);
    const headers: Record<string, string> = {};
    if (ranged) headers.Range = `bytes=${offset}-${offset + (length ?? 0) - 1}`;
    // catalog.json is the one mutable file: revalidate it every time (objects never change; any cache may keep them)
    const init: RequestInit = { headers, cache: path === CATALOG_FILE ? "no-cache" : "default" };
    let response: Response;
    let body: Uint8Array;
    this.stats.requests++;
    try {
      response = await this.fetch(url, init);
      body = new Uint8Array(await response.arrayBuffer());
    } catch (err) {
      throw new StorageError(path, false, `${url}: cannot be read (${describeFetchError(err)})`);
    }
    this.stats.bytes += body.byteLength;
    if (response.status === 404 || response.status === 410) throw new StorageError(path, true, `${url}: missing (HTTP ${response.status})`);
    if (!ranged) {
      if (response.status !== 200) throw new StorageError(path, false, `${url}: cannot be read (HTTP ${response.status})`);
      return body;
    }
    const end = offset + (length ?? 0);
    // 416: the file is shorter than the range asked for (truncated); the caller's size check names the piece
    if (response.status === 416) return new Uint8Array(0);
    if (response.status === 200) return body.subarray(offset, end); // a host that ignores Range sends the whole file
    if (response.status !== 206) throw new StorageError(path, false, `${url}: cannot be read (HTTP ${response.status})`);
    const range = CONTENT_RANGE.exec(response.headers.get("Content-Range") ?? "");
    // Without a readable Content-Range (a cross-origin host that does not expose it) the body is taken as the range asked.
    const start = range ? Number(range[1]) : offset;
    if (start > offset) throw new StorageError(path, false, `${url}: answered bytes from ${start}, not ${offset}`);
    // Some hosts send more than asked (sirv answers "bytes=0-0" with the whole file): keep only what was asked.
    return body.subarray(offset - start, end - start);
  }
}

function describeFetchError(err: unknown): string {
  const error = err as Error & { cause?: { message?: string; code?: string } };
  const cause = error?.cause?.code ?? error?.cause?.message;
  return cause ? `${error.message}: ${cause}` : String(error?.message ?? err);
}
