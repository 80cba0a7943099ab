// HTTP manners around an Answer: CORS, caching, ETag/304, content coding, digests, HEAD, and reading a bounded body.

import type { IncomingMessage, ServerResponse } from "node:http";
import { promisify } from "node:util";
import zlib from "node:zlib";
import { type Answer, answerHeaders } from "../api/answer.js";
import { HttpError } from "../api/errors.js";
import { payloadTooLarge } from "../api/request.js";
import { LIMITS } from "../api/contract.js";
import { sha256Hex } from "../format/hash.js";


/** Headers a browser script may read besides the CORS-safelisted ones (the provenance headers among them). */
export const EXPOSED_HEADERS = ["Content-Digest", "Repr-Digest", "Service-Dataset-Version", "Service-Request-SHA256", "Link", "ETag", "Allow"].join(", ");

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

/** What became of a request's body: read to its end, never read (the route takes none), or cut off (413, stalled). */
export type BodyState = "read" | "unread" | "failed";

/**
 * A request whose body was not read to its end and may be long (streamed, or declared over the bound), or whose
 * reading failed: close the connection after the answer rather than drain what may follow.
 */
function leavesBodyUnread(req: IncomingMessage, body: BodyState): boolean {
  if (body === "failed") return true;
  return body === "unread" && (req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > LIMITS.maxRequestBytes);
}

/** Sends an Answer: every response of the server goes through here. */
export async function sendAnswer(req: IncomingMessage, res: ServerResponse, answer: Answer, body: BodyState): Promise<void> {
  const compressible = answer.body.byteLength > MIN_COMPRESS_BYTES;
  const coding = compressible ? selectCoding(req.headers["accept-encoding"]) : null;
  const transport: Record<string, string | number> = compressible ? { Vary: "Accept-Encoding" } : {};
  if (leavesBodyUnread(req, body)) transport.Connection = "close";
  if (answer.etag && answer.sha256 && answer.status === 200 && isNotModified(req.headers["if-none-match"], answer.sha256)) {
    const { "Content-Type": _type, "Content-Digest": _digest, "Content-Encoding": _coding, ...headers } = answerHeaders(answer, answer.sha256, coding, false);
    res.writeHead(304, { ...headers, ...transport });
    res.end();
    return;
  }
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
      reject(new HttpError("malformed_json", `The request body did not arrive within ${timeoutMs / 1000} s (${total} bytes came); the connection is closed.`));
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
  return Buffer.concat(chunks, total);
}
