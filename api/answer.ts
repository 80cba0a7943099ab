// An answer of the interface before HTTP: status, bytes, media type, cache policy and contract headers.
// The server adds transport (compression, ETag/304, CORS); the mirror client returns it as it is.

import { giveBackBody, isLentBody } from "./bytes.js";
import { LIMITS } from "./contract.js";
import { HttpError } from "./errors.js";
import { type Platform, utf8 } from "../format/storage.js";

export type CachePolicy = "immutable" | "short" | "no-store";

export const CACHE_CONTROL: Record<CachePolicy, string> = {
  // A dataset version never changes (docs/contract.md §5), so anything about one may be kept for a year.
  immutable: "public, max-age=31536000, immutable",
  // The catalog gains versions when a publish replaces catalog.json; clients see it within a minute.
  short: "public, max-age=60",
  "no-store": "no-store",
};

export const JSON_TYPE = "application/json; charset=utf-8";
export const CSV_TYPE = "text/csv; charset=utf-8";
/** Bytes already compressed by their own codec (Zarr chunks): sent as they are, never content-coded again. */
export const BINARY_TYPE = "application/octet-stream";

/**
 * The body of an answer too large to hold (the series route's NetCDF files): written again, part by part, each time it
 * is opened, its length known before its first byte. The answer's body is then empty and its sha256 that of these bytes.
 */
export interface AnswerStream {
  byteLength: number;
  open(): AsyncIterable<Uint8Array>;
  /** the most memory it holds while it is written (its largest part and that part's bytes): a transport bounds the sum */
  heldBytes?: number;
}

export interface Answer {
  status: number;
  type: string;
  cache: CachePolicy;
  body: Uint8Array;
  /** a body streamed as it is written, instead of `body` (never content-coded, never a range) */
  stream?: AnswerStream;
  /**
   * sha256 hex of body, when known: the ETag and the identity Content-Digest come from it. Answers with an
   * ETag always carry it; others (POST answers) are hashed only if sent uncompressed (answerSha256).
   */
  sha256: string | null;
  /** whether the answer has a validator (GET answers about immutable or slowly changing things) */
  etag: boolean;
  /** contract headers: Service-Dataset-Version, Service-Request-SHA256, Link, Allow */
  headers: Record<string, string>;
  /** a byte range of it may be asked for (Range: the Zarr view's immutable keys) */
  ranges?: boolean;
  /**
   * content-coded when the client asks for it: every answer but BINARY_TYPE's by default (a Zarr chunk's own codec
   * compressed it already); binary values no codec compressed (OPeNDAP's XDR) say true
   */
  compressible?: boolean;
  /**
   * Gives the body's memory back for reuse (a Zarr maps chunk's 256 kB, a sink's working buffer): the sender calls it
   * once the client has every byte. An answer kept for other requests keeps its own copy instead (keepBody), so a
   * body anything may still read is never given back.
   */
  recycle?: () => void;
}

export interface AnswerOptions {
  status?: number;
  type?: string;
  cache: CachePolicy;
  etag?: boolean;
  headers?: Record<string, string>;
  /** data answers are bounded at 1 MB (docs/contract.md §3.3); `bounded` says how to ask for less */
  bounded?: string;
  ranges?: boolean;
  compressible?: boolean;
}

/** Data answers are bounded at 1,000,000 bytes (docs/contract.md §3.3); `advice` tells the client how to ask for less. */
export function assertResponseSize(bytes: number, advice: string, members?: string[]): void {
  if (bytes > LIMITS.maxResponseBytes) {
    throw new HttpError({ kind: "response_too_large", message: `The response would be ${bytes} bytes, over the ${LIMITS.maxResponseBytes}-byte bound; ${advice}.`, members });
  }
}

export async function makeAnswer(platform: Platform, body: string | Uint8Array, options: AnswerOptions): Promise<Answer> {
  const bytes = typeof body === "string" ? utf8(body) : body;
  if (options.bounded) assertResponseSize(bytes.byteLength, options.bounded);
  return {
    status: options.status ?? 200,
    type: options.type ?? JSON_TYPE,
    cache: options.cache,
    body: bytes,
    sha256: (options.etag ?? options.cache !== "no-store") ? await platform.sha256Hex(bytes) : null,
    etag: options.etag ?? options.cache !== "no-store",
    headers: options.headers ?? {},
    ...(options.ranges ? { ranges: true } : {}),
    ...(options.compressible !== undefined ? { compressible: options.compressible } : {}),
    ...(isLentBody(bytes) ? { recycle: () => giveBackBody(bytes) } : {}),
  };
}

/** Before an answer is kept for other requests: its body in memory of its own, exactly its bytes, and nothing to give back. */
export function keepBody(answer: Answer): void {
  if (!answer.recycle) return;
  const recycle = answer.recycle;
  answer.body = answer.body.slice();
  answer.recycle = undefined;
  recycle();
}

/**
 * The answer of a streamed body: its digest taken first by writing it once and keeping none of it (two passes: the
 * Content-Digest and ETag precede the first byte sent, and memory holds one part at a time, however long the answer).
 */
export async function makeStreamAnswer(platform: Platform, stream: AnswerStream, options: AnswerOptions): Promise<Answer> {
  const sha256 = platform.sha256Parts ? await platform.sha256Parts(stream.open()) : await platform.sha256Hex(await joinParts(stream));
  return {
    status: options.status ?? 200,
    type: options.type ?? JSON_TYPE,
    cache: options.cache,
    body: new Uint8Array(0),
    stream,
    sha256,
    etag: options.etag ?? options.cache !== "no-store",
    headers: options.headers ?? {},
  };
}

/** A streamed body's bytes in one array (the mirror client's answers, which it returns whole). */
export async function joinParts(stream: AnswerStream): Promise<Uint8Array> {
  const out = new Uint8Array(stream.byteLength);
  let at = 0;
  for await (const part of stream.open()) {
    out.set(part, at);
    at += part.byteLength;
  }
  if (at !== stream.byteLength) throw new Error(`a streamed answer gave ${at} of its ${stream.byteLength} bytes`);
  return out;
}

/** The answer's body hash, computed once when first needed. */
export async function answerSha256(platform: Platform, answer: Answer): Promise<string> {
  return (answer.sha256 ??= await platform.sha256Hex(answer.body));
}

/** `sha-256=:<base64>:` (RFC 9530) from a hex digest. */
function hexToDigestHeader(hex: string): string {
  let binary = "";
  for (let i = 0; i < hex.length; i += 2) binary += String.fromCharCode(parseInt(hex.slice(i, i + 2), 16));
  return `sha-256=:${btoa(binary)}:`;
}

/**
 * The headers of an answer as sent in `coding` (null: as it is), whose sent bytes hash to `sentSha256`: media
 * type, caching, the contract's headers, the ETag when it has one, the content coding and the digest
 * (docs/contract.md §4.4). The server adds transport to these; the mirror client returns exactly these.
 */
export function answerHeaders(answer: Answer, sentSha256: string, coding: string | null, head: boolean): Record<string, string> {
  const headers: Record<string, string> = { "Content-Type": answer.type, "Cache-Control": CACHE_CONTROL[answer.cache], ...answer.headers };
  if (answer.etag && answer.sha256) headers.ETag = formatEtag(answer.sha256, coding);
  if (coding) headers["Content-Encoding"] = coding;
  // RFC 9530: the digest of the content as sent, after any content coding; a HEAD sends no content, so its
  // digest names the representation a GET would send
  headers[head ? "Repr-Digest" : "Content-Digest"] = hexToDigestHeader(sentSha256);
  return headers;
}

/** A strong ETag from the body's hash; each content coding is its own representation (RFC 9110 8.8.3). */
function formatEtag(hex: string, coding: string | null = null): string {
  return `"${hex.slice(0, 32)}${coding ? `-${coding}` : ""}"`;
}
