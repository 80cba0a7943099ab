// Whole files over HTTP into a dist, each checked against the size and sha256 a verified manifest gives before it is
// placed: streamed to a temporary file on the dist's filesystem (so placing it is one rename), hashed as it arrives,
// retried on transient trouble (network, truncation, 429, 5xx, honouring Retry-After), never on an answer that will
// not change (404, bytes that are not what the manifest says).
//
// node:http rather than fetch: fetch decodes any Content-Encoding, and static hosts label stored brotli copies
// (objects/../*.json.br, docs/format.md §1) with `Content-Encoding: br` (sirv does; S3 does when uploaded so), so
// fetch would hand over other bytes than the file's. Identity is asked for; a host that compresses anyway is decoded.

import { createHash } from "node:crypto";
import http from "node:http";
import https from "node:https";
import { mkdir, open, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";
import { describeError } from "../errors.js";

export interface DownloadTarget {
  url: string;
  /** where it goes */
  file: string;
  size: number;
  sha256: string;
}

export interface DownloadConfig {
  /** a folder on the dist's filesystem for files being received */
  tempDir: string;
  retries: number;
  backoffMs: number;
  /** body bytes as they arrive (progress); negative when a failed attempt's bytes are taken back */
  onBytes: (n: number) => void;
  /** a line for each retry */
  log: (line: string) => void;
}

/** the longest wait between attempts, whatever a Retry-After asks */
export const RETRY_AFTER_CAP_MS = 30_000;
/** A connection that sends nothing for this long is taken as dropped, so one hung socket cannot stall a sync. */
const STALL_MS = 60_000;
const MAX_REDIRECTS = 5;

/** One failed attempt: `retryable` separates transient trouble from answers that will not change. */
export class AttemptError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "AttemptError";
  }
}

/** Runs `work` on every item, `concurrency` at a time; the first failure stops new items and is rethrown. */
export async function runConcurrently<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { err: unknown } | null = null;
  const worker = async () => {
    while (!failure && next < items.length) {
      const item = items[next++];
      await work(item).catch((err) => (failure ??= { err }));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  if (failure) throw (failure as { err: unknown }).err;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Downloads `target`, verified, into place; returns the HTTP requests it took. Rejects with a final AttemptError. */
export async function downloadVerified(target: DownloadTarget, config: DownloadConfig): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      await downloadOnce(target, config);
      return attempt;
    } catch (err) {
      const retryable = err instanceof AttemptError && err.retryable;
      if (!retryable || attempt > config.retries) {
        const reason = describeError(err);
        throw new AttemptError(attempt > 1 ? `${reason} (after ${attempt} attempts)` : reason, false);
      }
      // exponential from the base with up to 20% jitter, so concurrent downloads hitting one 503 spread out
      const delayMs = err.retryAfterMs ?? Math.min(RETRY_AFTER_CAP_MS, Math.round(config.backoffMs * 2 ** (attempt - 1) * (1 + Math.random() * 0.2)));
      config.log(`retry ${target.url} in ${delayMs} ms: ${err.message} (attempt ${attempt} of ${config.retries + 1})`);
      await sleep(delayMs);
    }
  }
}

/** The answer to a GET of `url` (redirects followed), or an AttemptError saying why there is none to read. */
async function get(url: string, redirects = 0): Promise<http.IncomingMessage> {
  const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const request = (url.startsWith("https:") ? https : http).get(url, { headers: { "accept-encoding": "identity" }, timeout: STALL_MS }, resolve);
    request.once("timeout", () => request.destroy(new AttemptError(`no data for ${STALL_MS / 1000} s`, true)));
    request.once("error", (err) => reject(err instanceof AttemptError ? err : new AttemptError(`cannot be read (${describeFetchError(err)})`, true)));
  });
  const status = response.statusCode ?? 0;
  const location = response.headers.location;
  if (status >= 300 && status < 400 && location && redirects < MAX_REDIRECTS) {
    response.resume();
    return get(new URL(location, url).href, redirects + 1);
  }
  if (status === 200) return response;
  response.resume();
  if (status === 404 || status === 410) throw new AttemptError(`missing on the host (HTTP ${status})`, false);
  const retryable = status === 429 || status >= 500;
  const after = response.headers["retry-after"];
  const retryAfterMs = retryable && after && /^\s*\d+(\.\d+)?\s*$/.test(after) ? Math.min(RETRY_AFTER_CAP_MS, Number(after) * 1000) : undefined;
  throw new AttemptError(`HTTP ${status}`, retryable, retryAfterMs);
}

async function downloadOnce(target: DownloadTarget, config: DownloadConfig): Promise<void> {
  const temp = join(config.tempDir, `${target.sha256}.${Math.random().toString(36).slice(2, 10)}.part`);
  const counted = { bytes: 0 };
  const onBytes = (n: number) => ((counted.bytes += n), config.onBytes(n));
  let placed = false;
  try {
    const response = await get(target.url);
    const encoding = (response.headers["content-encoding"] ?? "identity").trim().toLowerCase();
    const sha256 = encoding === "identity" ? await receive(response, temp, target, onBytes) : await receiveEncoded(response, encoding, temp, target, onBytes);
    if (sha256 !== target.sha256) throw new AttemptError(`does not match its sha256 ${target.sha256} (${target.size} bytes)`, false);
    await mkdir(dirname(target.file), { recursive: true });
    await rename(temp, target.file);
    placed = true;
  } finally {
    if (!placed) {
      config.onBytes(-counted.bytes); // progress counts what is placed: an attempt that failed starts again from 0
      await rm(temp, { force: true });
    }
  }
}

/** The body into `temp`, hashed as it arrives; refused as soon as it passes the size the manifest gives. */
async function receive(response: http.IncomingMessage, temp: string, target: DownloadTarget, onBytes: (n: number) => void): Promise<string> {
  const hash = createHash("sha256");
  const handle = await open(temp, "w");
  let received = 0;
  try {
    for await (const chunk of readBody(response, () => received, target)) {
      received += chunk.byteLength;
      if (received > target.size) throw new AttemptError(`does not match its sha256 ${target.sha256}: longer than its ${target.size} bytes`, false);
      hash.update(chunk);
      await handle.write(chunk);
      onBytes(chunk.byteLength);
    }
  } finally {
    response.destroy();
    await handle.close();
  }
  return received < target.size ? "" : hash.digest("hex");
}

/**
 * A body the host sent with a Content-Encoding: either the stored file itself (a .br copy labelled as brotli) or a
 * copy the host compressed on the way. Held in memory (such bodies are JSON objects), taken as it came when that
 * matches, else decoded.
 */
async function receiveEncoded(response: http.IncomingMessage, encoding: string, temp: string, target: DownloadTarget, onBytes: (n: number) => void): Promise<string> {
  const chunks: Buffer[] = [];
  let received = 0;
  try {
    for await (const chunk of readBody(response, () => received, target)) {
      received += chunk.byteLength;
      if (received > target.size + 1024 + target.size / 8) throw new AttemptError(`does not match its sha256 ${target.sha256}: longer than its ${target.size} bytes`, false);
      chunks.push(chunk);
    }
  } finally {
    response.destroy();
  }
  let body: Buffer = Buffer.concat(chunks);
  const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
  if (body.byteLength !== target.size || sha256(body) !== target.sha256) body = decode(body, encoding, target.size) ?? body;
  await writeFile(temp, body);
  onBytes(body.byteLength);
  return body.byteLength === target.size ? sha256(body) : "";
}

function decode(body: Buffer, encoding: string, size: number): Buffer | null {
  const options = { maxOutputLength: size + 1 };
  try {
    if (encoding === "br") return brotliDecompressSync(body, options);
    if (encoding === "gzip" || encoding === "x-gzip") return gunzipSync(body, options);
    if (encoding === "deflate") return inflateSync(body, options);
  } catch {
    return null; // not what it says it is: the hash check refuses it
  }
  return null;
}

/** The chunks of a body; a connection that drops or stalls mid-way is a retryable truncation. */
async function* readBody(response: http.IncomingMessage, received: () => number, target: DownloadTarget): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of response) yield chunk as Buffer;
  } catch (err) {
    if (err instanceof AttemptError) throw err;
    throw new AttemptError(`truncated: the connection closed after ${received()} of ${target.size} bytes (${describeError(err)})`, true);
  }
  if (!response.complete) throw new AttemptError(`truncated: the connection closed after ${received()} of ${target.size} bytes`, true);
}

/** The cause of a failed request, as node:http and fetch (undici) report it. */
export function describeFetchError(err: unknown): string {
  const error = err as NodeJS.ErrnoException & { cause?: { code?: string; message?: string } };
  return error.code ?? error.cause?.code ?? error.cause?.message ?? describeError(err);
}
