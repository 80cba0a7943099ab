// HTTP manners around an Answer: CORS, caching, ETag/304, content coding, digests, HEAD, and reading a bounded body.

import type { IncomingMessage, ServerResponse } from "node:http";
import { promisify } from "node:util";
import zlib from "node:zlib";
import { type Answer, CACHE_CONTROL, formatEtag, hexToDigestHeader } from "../api/answer.js";
import { HttpError } from "../api/errors.js";
import { payloadTooLarge } from "../api/request.js";
import { LIMITS } from "../schemas/contract.js";
import { sha256Hex } from "../schemas/hash.js";


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
const compressed = new WeakMap<Answer, Map<Coding, { payload: Uint8Array; digest: string }>>();

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

/** Sends an Answer: every response of the server goes through here. */
export async function sendAnswer(req: IncomingMessage, res: ServerResponse, answer: Answer): Promise<void> {
  const headers: Record<string, string | number> = {
    "Content-Type": answer.type,
    "Cache-Control": CACHE_CONTROL[answer.cache],
    ...answer.headers,
  };
  const compressible = answer.body.byteLength > MIN_COMPRESS_BYTES;
  if (compressible) headers["Vary"] = "Accept-Encoding";
  const coding = compressible ? selectCoding(req.headers["accept-encoding"]) : null;

  if (answer.etag && answer.sha256) {
    headers["ETag"] = formatEtag(answer.sha256, coding);
    if (answer.status === 200 && isNotModified(req.headers["if-none-match"], answer.sha256)) {
      delete headers["Content-Type"];
      res.writeHead(304, headers);
      res.end();
      return;
    }
  }

  let payload = answer.body;
  let digest: string;
  if (coding) {
    let forms = compressed.get(answer);
    if (!forms) compressed.set(answer, (forms = new Map()));
    let hit = forms.get(coding);
    if (!hit) {
      const bytes = await compress(answer.body, coding);
      hit = { payload: bytes, digest: hexToDigestHeader(sha256Hex(bytes)) };
      forms.set(coding, hit);
    }
    ({ payload, digest } = hit);
    headers["Content-Encoding"] = coding;
  } else {
    digest = hexToDigestHeader((answer.sha256 ??= sha256Hex(answer.body)));
  }
  // RFC 9530: the digest of the content as sent, after any content coding; a HEAD sends no content, so it
  // names the representation a GET would send instead
  headers[req.method === "HEAD" ? "Repr-Digest" : "Content-Digest"] = digest;
  headers["Content-Length"] = payload.byteLength;
  res.writeHead(answer.status, headers);
  res.end(req.method === "HEAD" ? undefined : payload);
}

/**
 * A request body of at most LIMITS.maxRequestBytes: 413 before reading when Content-Length is over the bound,
 * and as soon as the count passes it (the rest is never read); 400 when the body ends early.
 */
export async function readBody(req: IncomingMessage): Promise<Uint8Array> {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > LIMITS.maxRequestBytes) throw payloadTooLarge();
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
