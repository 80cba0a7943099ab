// HTTP manners shared by every route: sending bytes with CORS, caching, ETag/304, compression, and reading a JSON body.

import type { IncomingMessage, ServerResponse } from "node:http";
import { promisify } from "node:util";
import zlib from "node:zlib";
import { LIMITS } from "../schemas/contract.js";
import { sha256Hex } from "../schemas/dist.js";
import { HttpError } from "./errors.js";

export type CachePolicy = "immutable" | "short" | "no-store";

const CACHE_CONTROL: Record<CachePolicy, string> = {
  // A dataset version never changes (decisions.md 5), so anything about one may be kept for a year.
  immutable: "public, max-age=31536000, immutable",
  // The catalog gains versions when a publish replaces catalog.json; clients see it within a minute.
  short: "public, max-age=60",
  "no-store": "no-store",
};

export const JSON_TYPE = "application/json; charset=utf-8";
export const CSV_TYPE = "text/csv; charset=utf-8";

/** Headers a browser script may read besides the CORS-safelisted ones (the query's provenance headers). */
export const EXPOSED_HEADERS = [
  "Content-Digest",
  "Repr-Digest",
  "Service-Dataset-Version",
  "Service-Request-SHA256",
  "Link",
  "ETag",
  "Allow",
].join(", ");

// Below this size compression costs more than it saves.
const MIN_COMPRESS_BYTES = 1024;

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

type Encoding = "br" | "gzip";

export interface SendOptions {
  status?: number;
  type: string;
  cache: CachePolicy;
  /** hex digest the ETag is made from (a file's manifest sha256 or the body's); omit for no ETag */
  etagHex?: string;
  headers?: Record<string, string>;
  /** data answers are bounded at 1 MB (interface.md 8); error bodies and the OpenAPI document are not */
  bounded?: boolean;
  /** add Content-Digest (bytes on the wire) and Repr-Digest (the uncompressed body), as query answers do */
  digest?: boolean;
}

/**
 * Compressed copies of immutable bodies, bounded by total bytes so memory does not grow with what was
 * requested (insertion-ordered Map used as an LRU).
 */
class CompressedCache {
  private readonly entries = new Map<string, Buffer>();
  private bytes = 0;
  constructor(private readonly maxBytes: number) {}

  get(key: string): Buffer | undefined {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
    }
    return hit;
  }

  set(key: string, value: Buffer): void {
    if (value.length > this.maxBytes / 8) return;
    this.entries.set(key, value);
    this.bytes += value.length;
    for (const [k, v] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= v.length;
    }
  }
}

const compressedCache = new CompressedCache(16 * 1024 * 1024);

/** The encoding to use for this request: brotli first, then gzip, honouring q=0 (RFC 9110 12.5.3). */
export function selectEncoding(acceptEncoding: string | undefined): Encoding | null {
  if (!acceptEncoding) return null;
  const q = new Map<string, number>();
  for (const part of acceptEncoding.split(",")) {
    const [name, ...params] = part.trim().toLowerCase().split(";");
    if (!name) continue;
    let weight = 1;
    for (const p of params) {
      const m = /^\s*q=([0-9.]+)\s*$/.exec(p);
      if (m) weight = Number(m[1]);
    }
    q.set(name, weight);
  }
  const weightOf = (name: string) => q.get(name) ?? q.get("*") ?? 0;
  if (weightOf("br") > 0) return "br";
  if (weightOf("gzip") > 0) return "gzip";
  return null;
}

async function compressBody(body: Buffer, encoding: Encoding): Promise<Buffer> {
  return encoding === "br"
    ? brotli(body, {
        // Quality 5 keeps a 1 MB query body near gzip's speed while staying smaller (query bodies are built per request).
        params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.length },
      })
    : gzip(body);
}

function formatEtag(hex: string, encoding: Encoding | null): string {
  // Each encoding is a different representation, so it gets its own strong validator (RFC 9110 8.8.3).
  return `"${hex.slice(0, 32)}${encoding ? `-${encoding}` : ""}"`;
}

/** If-None-Match matches any representation of the same content (weak comparison, RFC 9110 13.1.2). */
function isNotModified(header: string | undefined, hex: string): boolean {
  if (!header) return false;
  const base = hex.slice(0, 32);
  for (const raw of header.split(",")) {
    const tag = raw.trim().replace(/^W\//, "");
    if (tag === "*") return true;
    const m = /^"([^"]*)"$/.exec(tag);
    if (m && m[1].replace(/-(br|gzip)$/, "") === base) return true;
  }
  return false;
}

export function isHead(req: IncomingMessage): boolean {
  return req.method === "HEAD";
}

/** Data answers are bounded at 1,000,000 bytes (interface.md 8); `advice` tells the client how to ask for less. */
export function assertResponseSize(bytes: number, advice: string): void {
  if (bytes > LIMITS.maxResponseBytes) {
    throw new HttpError(
      "response_too_large",
      `The response would be ${bytes} bytes, over the ${LIMITS.maxResponseBytes}-byte bound; ${advice}.`,
    );
  }
}

/** Sends one complete body with the contract's headers; every answer of the server goes through here. */
export async function sendBytes(req: IncomingMessage, res: ServerResponse, body: Buffer, options: SendOptions): Promise<void> {
  if (options.bounded) assertResponseSize(body.length, "ask for fewer items with a smaller limit");
  const headers: Record<string, string | number> = {
    "Content-Type": options.type,
    "Cache-Control": CACHE_CONTROL[options.cache],
    ...options.headers,
  };
  const compressible = body.length > MIN_COMPRESS_BYTES;
  if (compressible) headers["Vary"] = "Accept-Encoding";
  const encoding = compressible ? selectEncoding(req.headers["accept-encoding"]) : null;

  if (options.etagHex) {
    headers["ETag"] = formatEtag(options.etagHex, encoding);
    if (isNotModified(req.headers["if-none-match"], options.etagHex)) {
      delete headers["Content-Type"];
      res.writeHead(304, headers);
      res.end();
      return;
    }
  }

  let payload = body;
  if (encoding) {
    const key = options.cache === "immutable" && options.etagHex ? `${options.etagHex}:${encoding}` : null;
    const cached = key ? compressedCache.get(key) : undefined;
    payload = cached ?? (await compressBody(body, encoding));
    if (key && !cached) compressedCache.set(key, payload);
    headers["Content-Encoding"] = encoding;
  }
  if (options.digest) {
    // Content-Digest covers the bytes on the wire, after any content coding (RFC 9530 2); Repr-Digest the
    // uncompressed body, which is what a client sees after its HTTP library decompresses.
    headers["Content-Digest"] = formatDigest(payload);
    headers["Repr-Digest"] = formatDigest(body);
  }
  headers["Content-Length"] = payload.length;
  res.writeHead(options.status ?? 200, headers);
  res.end(isHead(req) ? undefined : payload);
}

export async function sendJson(req: IncomingMessage, res: ServerResponse, value: unknown, options: Omit<SendOptions, "type">): Promise<void> {
  await sendBytes(req, res, Buffer.from(JSON.stringify(value)), { ...options, type: JSON_TYPE });
}

export function hashBase64(data: Uint8Array): string {
  return Buffer.from(sha256Hex(data), "hex").toString("base64");
}

/** The digest header value of a body: `sha-256=:<base64>:` (RFC 9530). */
export function formatDigest(data: Uint8Array): string {
  return `sha-256=:${hashBase64(data)}:`;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** `application/json`, with or without parameters such as charset (decisions.md 4). */
export function isJsonContentType(header: string | undefined): boolean {
  return (header ?? "").split(";")[0].trim().toLowerCase() === "application/json";
}

/**
 * Reads a JSON body of at most LIMITS.maxRequestBytes: 415 on another media type, 413 before reading when
 * Content-Length is over the bound and again as soon as the count passes it (the rest is never read),
 * 400 malformed_json on empty, non-UTF-8 or unparseable bodies (decisions.md 4).
 */
export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  if (!isJsonContentType(req.headers["content-type"])) {
    throw new HttpError("unsupported_media_type", "Content-Type must be application/json.");
  }
  const tooLarge = () =>
    new HttpError(
      "payload_too_large",
      `The request body is over ${LIMITS.maxRequestBytes} bytes.`,
      undefined,
      // the unread rest of the body is not wanted: close instead of draining it
      { Connection: "close" },
    );
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > LIMITS.maxRequestBytes) throw tooLarge();

  const chunks: Buffer[] = [];
  let total = 0;
  await new Promise<void>((resolve, reject) => {
    const cleanup = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
    };
    const onData = (chunk: Buffer) => {
      total += chunk.length;
      if (total > LIMITS.maxRequestBytes) {
        cleanup();
        req.pause();
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve();
    };
    const onError = (err: Error) => {
      cleanup();
      reject(new HttpError("malformed_json", `The request body could not be read: ${err.message}`));
    };
    const onClose = () => {
      cleanup();
      reject(new HttpError("malformed_json", "The request body ended before it was complete."));
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("close", onClose);
  });

  const bytes = Buffer.concat(chunks, total);
  if (bytes.length === 0) throw new HttpError("malformed_json", "The request body is empty; send a JSON data request.");
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new HttpError("malformed_json", "The request body is not valid UTF-8.");
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new HttpError("malformed_json", `The request body is not valid JSON: ${(err as Error).message}`);
  }
}
