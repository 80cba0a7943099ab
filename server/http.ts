// HTTP manners around an Answer: CORS, caching, ETag/304, content coding, digests, HEAD, and reading a bounded body.

import type { IncomingMessage, ServerResponse } from "node:http";
import { promisify } from "node:util";
import zlib from "node:zlib";
import { type Answer, BINARY_TYPE, JSON_TYPE, answerHeaders } from "../api/answer.js";
import { HttpError, errorToBody, payloadTooLarge } from "../api/errors.js";
import { LIMITS } from "../api/contract.js";
import { sha256Hex } from "../format/hash.js";
import { parseRange } from "./ranges.js";


// Below this size compression costs more than it saves.
const MIN_COMPRESS_BYTES = 1024;

type Coding = "br" | "gzip";

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

/**
 * Compressed forms of an answer, with their digests, kept with the answer itself: the service's answer cache
 * bounds how many answers live, and a repeated request costs no compression.
 */
const compressed = new WeakMap<Answer, Map<Coding, { payload: Uint8Array; sha256: string }>>();

/** The coding to use for this request: brotli first, then gzip, honouring q=0 (RFC 9110 12.5.3). */
export function selectCoding(acceptEncoding: string | undefined): Coding | null {
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

/**
 * Every answer is built per request (tiles too are rendered from day pieces), so the fastest levels: compressing
 * never costs more than building. The compressed form is kept with the answer, so a repeated one costs nothing.
 */
function compress(body: Uint8Array, coding: Coding): Promise<Uint8Array> {
  return coding === "br"
    ? brotli(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength } })
    : gzip(body, { level: 1 });
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

/** The bytes to send for an answer in `coding`, with their sha256; compressed forms are kept with the answer. */
async function encodeAnswer(answer: Answer, coding: Coding | null): Promise<{ payload: Uint8Array; sha256: string }> {
  if (!coding) return { payload: answer.body, sha256: (answer.sha256 ??= sha256Hex(answer.body)) };
  let forms = compressed.get(answer);
  if (!forms) compressed.set(answer, (forms = new Map()));
  let hit = forms.get(coding);
  if (!hit) {
    const payload = await compress(answer.body, coding);
    hit = { payload, sha256: sha256Hex(payload) };
    forms.set(coding, hit);
  }
  return hit;
}

/**
 * What became of a request's body: read to its end, never read (the route takes none), cut off at the size
 * bound or ended early, or stalled (nothing came within the body timeout).
 */
export type BodyState = "read" | "unread" | "failed" | "stalled";

/** Bytes of a body left unread that are read and dropped so the answer reaches the client (RFC 9112 §9.6). */
const DISCARD_MAX_BYTES = 1 << 20;

/** Whether the request carries a body the server has not read to its end. */
function hasUnreadBody(req: IncomingMessage, body: BodyState): boolean {
  return body !== "read" && (req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0);
}

/**
 * Close the connection after the answer: the body stalled (nothing more is coming), or it is declared far
 * over the bound (not worth reading to drop it).
 */
function closesConnection(req: IncomingMessage, body: BodyState): boolean {
  return body === "stalled" || (hasUnreadBody(req, body) && Number(req.headers["content-length"] ?? 0) > LIMITS.maxRequestBytes + DISCARD_MAX_BYTES);
}

/**
 * The rest of a body the answer does not need (a route that takes none, or one cut off at the bound) is read and
 * dropped, at most DISCARD_MAX_BYTES within `timeoutMs`, so the client that is still sending it receives its
 * answer: closing a connection with unread bytes makes the kernel reset it, and the answer is lost with it.
 * Beyond those bounds the connection is closed.
 */
export function discardBody(req: IncomingMessage, body: BodyState, timeoutMs: number): void {
  if (!hasUnreadBody(req, body) || closesConnection(req, body) || req.complete) return;
  let dropped = 0;
  const stop = () => req.socket.destroy();
  const timer = setTimeout(stop, timeoutMs);
  timer.unref();
  req.on("data", (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DISCARD_MAX_BYTES) stop();
  });
  req.once("end", () => clearTimeout(timer));
  req.once("close", () => clearTimeout(timer));
  req.resume();
}

/**
 * The body of an answer too large to hold: a stored file (a dist piece, up to tens of MB) read a part at a time as
 * it is sent. Its sha256 (the answer's) is its name; its size is known only once it is read to its end.
 */
export interface StoredBody {
  /** `length` bytes from `offset` (fewer at the end, none past it); rejects as the storage does (a missing file) */
  read(offset: number, length: number): Promise<Uint8Array>;
}

/** Bytes of a stored body read at a time: a whole series piece never sits in memory at once. */
const PART_BYTES = 1 << 20;

/** A stored body's size, by halving (a 416 must name it): about 50 one-byte reads, however large the body. */
async function measureStored(stored: StoredBody, past: number): Promise<number> {
  let [lo, hi] = [0, past]; // the size is in [lo, hi]
  while (lo < hi) {
    const mid = Math.floor((lo + hi + 1) / 2);
    if ((await stored.read(mid - 1, 1)).byteLength > 0) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The 416 of a range past the end of a body of `size` bytes: the contract's error, and `Content-Range: bytes *\/size`. */
function sendUnsatisfiable(res: ServerResponse, answer: Answer, transport: Record<string, string | number>, size: number): void {
  const message = `The answer is ${size} bytes; ask for a range inside it, or for the whole answer without Range.`;
  const error = new TextEncoder().encode(JSON.stringify(errorToBody(new HttpError({ kind: "range_not_satisfiable", message }))));
  const headers = answerHeaders({ ...answer, type: JSON_TYPE, etag: false }, sha256Hex(error), null, false);
  res.writeHead(416, { ...headers, ...transport, "Content-Range": `bytes */${size}`, "Content-Length": error.byteLength });
  res.end(error);
}

/**
 * A 206 of one byte range, or a 416, of an answer that allows ranges (identity coding), held or stored; false when the
 * request asks for none, or asks If-Range of another representation (then the whole answer is sent). A stored body's
 * 206 says `/*` for its size (RFC 9110 §14.4), which is not known without reading it to its end.
 */
async function sendRange(req: IncomingMessage, res: ServerResponse, answer: Answer, transport: Record<string, string | number>, stored?: StoredBody): Promise<boolean> {
  if (!answer.ranges || answer.status !== 200 || req.method !== "GET" || !answer.sha256) return false;
  const ifRange = req.headers["if-range"];
  if (ifRange !== undefined && !isNotModified(String(ifRange), answer.sha256)) return false;
  const size = stored ? null : answer.body.byteLength;
  const asked = req.headers.range;
  const range = parseRange(Array.isArray(asked) ? asked[0] : asked, size);
  if (range === null) return false;
  if (range === "unsatisfiable") return (sendUnsatisfiable(res, answer, transport, size!), true);
  const [first, last] = range;
  const part = stored ? await stored.read(first, last - first + 1) : answer.body.subarray(first, last + 1);
  if (part.byteLength === 0) return (sendUnsatisfiable(res, answer, transport, size ?? (await measureStored(stored!, first))), true);
  const headers = answerHeaders(answer, sha256Hex(part), null, false);
  res.writeHead(206, { ...headers, ...transport, "Content-Range": `bytes ${first}-${first + part.byteLength - 1}/${size ?? "*"}`, "Content-Length": part.byteLength });
  res.end(part);
  return true;
}

/**
 * A stored body whole, streamed a part at a time as the client takes it (no Content-Length: its size is known only
 * at its end). Its first part is read before the head, so a file the storage does not have fails before anything is sent.
 */
async function sendStored(req: IncomingMessage, res: ServerResponse, answer: Answer, transport: Record<string, string | number>, stored: StoredBody): Promise<void> {
  let at = 0;
  let bytes = await stored.read(at, PART_BYTES);
  const head = req.method === "HEAD";
  res.writeHead(answer.status, { ...answerHeaders(answer, answer.sha256!, null, head), ...transport });
  if (head) return void res.end();
  for (;;) {
    if (bytes.byteLength > 0 && !res.write(bytes)) await new Promise((resolve) => res.once("drain", resolve));
    if (bytes.byteLength < PART_BYTES || res.destroyed) break;
    at += bytes.byteLength;
    bytes = await stored.read(at, PART_BYTES);
  }
  res.end();
}

/**
 * A streamed body (the series route's NetCDF files): its exact length first, then its parts as the client takes them,
 * written again from the dist as they go; memory holds a part or two, however long the answer. A failure after the
 * head (a piece that fails its sha256) ends the connection short of Content-Length: the client sees a broken answer,
 * never a wrong byte. A client that leaves stops the writing.
 */
async function sendStream(req: IncomingMessage, res: ServerResponse, answer: Answer, transport: Record<string, string | number>): Promise<void> {
  const stream = answer.stream!;
  const head = req.method === "HEAD";
  res.writeHead(answer.status, { ...answerHeaders(answer, answer.sha256!, null, head), ...transport, "Content-Length": stream.byteLength });
  if (head) return void res.end();
  for await (const part of stream.open()) {
    if (res.destroyed) return;
    if (!res.write(part)) {
      await new Promise<void>((resolve) => {
        const done = () => (res.off("drain", done), res.off("close", done), resolve());
        res.on("drain", done);
        res.on("close", done);
      });
    }
  }
  res.end();
}

/**
 * Sends an Answer: every response of the server goes through here, with its one ETag, 304, 206 and 416. A `stored`
 * answer (a dist piece) carries its sha256 and no body: its bytes are read from `stored` as they are sent, never
 * compressed (they are DEFLATE blocks already).
 */
export async function sendAnswer(req: IncomingMessage, res: ServerResponse, answer: Answer, body: BodyState, stored?: StoredBody): Promise<void> {
  // a chunk's own codec compressed it already: content coding would spend CPU to gain nothing
  const compressible = !stored && !answer.stream && answer.body.byteLength > MIN_COMPRESS_BYTES && (answer.compressible ?? answer.type !== BINARY_TYPE);
  const coding = compressible ? selectCoding(req.headers["accept-encoding"]) : null;
  const transport: Record<string, string | number> = compressible ? { Vary: "Accept-Encoding" } : {};
  if (closesConnection(req, body)) transport.Connection = "close";
  if (answer.ranges) transport["Accept-Ranges"] = "bytes";
  if (answer.etag && answer.sha256 && answer.status === 200 && isNotModified(req.headers["if-none-match"], answer.sha256)) {
    const { "Content-Type": _type, "Content-Digest": _digest, "Content-Encoding": _coding, ...headers } = answerHeaders(answer, answer.sha256, coding, false);
    res.writeHead(304, { ...headers, ...transport });
    res.end();
    return;
  }
  if (await sendRange(req, res, answer, transport, stored)) return;
  if (stored) return sendStored(req, res, answer, transport, stored);
  if (answer.stream) return sendStream(req, res, answer, transport);
  const { payload, sha256 } = await encodeAnswer(answer, coding);
  const head = req.method === "HEAD";
  res.writeHead(answer.status, { ...answerHeaders(answer, sha256, coding, head), ...transport, "Content-Length": payload.byteLength });
  res.end(head ? undefined : payload);
}

/**
 * A request body of at most LIMITS.maxRequestBytes: 413 before reading when Content-Length is over the bound,
 * and as soon as the count passes it (the rest is never read); 400 when the body ends early, or has not all
 * arrived within `timeoutMs` (a client that stalls never holds the request open).
 */
export async function readBody(req: IncomingMessage, timeoutMs: number): Promise<Uint8Array> {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > LIMITS.maxRequestBytes) throw payloadTooLarge();
  const chunks: Buffer[] = [];
  let total = 0;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      req.pause();
      reject(Object.assign(new HttpError({ kind: "malformed_json", message: `The request body did not arrive within ${timeoutMs / 1000} s (${total} bytes came); the connection is closed. Send the whole body with its Content-Length, then retry.` }), { stalled: true }));
    }, timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
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
        reject(payloadTooLarge());
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
      reject(new HttpError({ kind: "malformed_json", message: `The request body could not be read (${err.message}); send it again, whole.` }));
    };
    const onClose = () => {
      cleanup();
      reject(new HttpError({ kind: "malformed_json", message: "The request body ended before it was complete; send it again, whole, with its Content-Length." }));
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("close", onClose);
  });
  return Buffer.concat(chunks, total);
}
