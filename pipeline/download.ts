// The pipeline's one HTTP downloader (make fetch's SILO files, make sync's dist files): a URL into a file, streamed and
// hashed as it arrives, received under a temporary name and renamed into place only when whole and as expected;
// transient trouble (network, a stall, truncation, 429, 5xx) retried with exponential backoff and jitter, honouring a
// numeric Retry-After; an answer that will not change (404 or another 4xx, bytes that are not the file asked for) never.
//
// node:http rather than fetch: fetch decodes any Content-Encoding and cannot be told not to, and static hosts label
// stored brotli copies (objects/../*.json.br, docs/format.md §1) with `Content-Encoding: br` (sirv does; S3 does when
// uploaded so), so fetch would hand over other bytes than the file's. Identity is asked for; a body that comes encoded
// anyway is taken as it came when that is the file expected, else decoded.

import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, open, rename, rm } from "node:fs/promises";
import http, { STATUS_CODES } from "node:http";
import https from "node:https";
import { basename, dirname, join } from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { describeError } from "./errors.js";

/** the longest wait between attempts, whatever a Retry-After asks */
export const RETRY_AFTER_CAP_MS = 30_000;
/** A connection that sends nothing for this long is taken as dropped, so one hung socket cannot stall a run forever. */
const STALL_MS = 60_000;
const MAX_REDIRECTS = 5;

/** The kind of file the first bytes must show: a 200 that is an HTML error page is refused at once. */
export interface FileSignature {
  kind: string;
  /** bytes the check needs */
  length: number;
  matches: (head: Buffer) => boolean;
}

export interface DownloadTarget {
  url: string;
  /** where it goes */
  file: string;
  /** the name retry lines give it (default: the URL) */
  label?: string;
  /** validators of the copy already held: asked for conditionally, and a 304 answers `unchanged` */
  held?: { etag?: string; lastModified?: string };
  /** the size and sha256 the bytes must have (a verified manifest's): anything else is refused, never placed */
  expect?: { size: number; sha256: string };
  head?: FileSignature;
  /** what a 404 means here, said after it */
  notFound?: string;
}

export interface DownloadConfig {
  /** attempts after the first for transient trouble, waiting backoffMs, then twice that, and so on */
  retries: number;
  backoffMs: number;
  /** a folder for files being received (on the target's filesystem, so placing one is a rename); default: `<file>.part` */
  tempDir?: string;
  /** how long a connection may send nothing (default 60 s) */
  stallMs?: number;
  /** body bytes as they arrive (progress); negative when a failed attempt's bytes are taken back */
  onBytes?: (n: number) => void;
  /** a line for each retry */
  log?: (line: string) => void;
}

/** One attempt's outcome: the file placed, with its validators, or the copy held found unchanged. */
type Outcome = { unchanged: true } | { unchanged: false; bytes: number; sha256: string; etag?: string; lastModified?: string };
/** `attempts`: the requests it took (redirects not counted) */
export type Downloaded = Outcome & { attempts: number };

/**
 * Why a download failed: `unexpected` bytes are not the file asked for (its first bytes, size or sha256, or an
 * encoding that does not decode); `local` is trouble writing it here.
 */
export type DownloadFailure = "network" | "stalled" | "truncated" | "status" | "unexpected" | "local";

export class DownloadError extends Error {
  readonly failure: DownloadFailure;
  /** the HTTP status of a `status` failure */
  readonly status?: number;
  readonly retryAfterMs?: number;
  readonly attempts: number;

  constructor(message: string, failure: DownloadFailure, options: { status?: number; retryAfterMs?: number; attempts?: number } = {}) {
    super(message);
    this.name = "DownloadError";
    this.failure = failure;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.attempts = options.attempts ?? 1;
  }

  /** transient trouble, worth another attempt */
  get retryable(): boolean {
    if (this.failure === "status") return this.status! === 429 || this.status! >= 500;
    return this.failure === "network" || this.failure === "stalled" || this.failure === "truncated";
  }

  /** the final error after `attempts` attempts */
  after(attempts: number): DownloadError {
    const message = attempts > 1 ? `${this.message} after ${attempts} attempts` : this.message;
    return new DownloadError(message, this.failure, { status: this.status, attempts });
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

/** Downloads `target` into place (or finds it unchanged); rejects with the last attempt's DownloadError. */
export async function download(target: DownloadTarget, config: DownloadConfig): Promise<Downloaded> {
  for (let attempt = 1; ; attempt++) {
    try {
      return { ...(await downloadOnce(target, config)), attempts: attempt };
    } catch (err) {
      const error = err instanceof DownloadError ? err : new DownloadError(describeError(err), "local");
      if (!error.retryable || attempt > config.retries) throw error.after(attempt);
      // exponential from the base with up to 20% jitter, so concurrent downloads hitting one 503 spread out
      const delayMs = error.retryAfterMs ?? Math.min(RETRY_AFTER_CAP_MS, Math.round(config.backoffMs * 2 ** (attempt - 1) * (1 + Math.random() * 0.2)));
      config.log?.(`retry ${target.label ?? target.url} in ${delayMs} ms: ${error.message} (attempt ${attempt} of ${config.retries + 1})`);
      await sleep(delayMs);
    }
  }
}

interface Received {
  bytes: number;
  sha256: string;
}

async function downloadOnce(target: DownloadTarget, config: DownloadConfig): Promise<Outcome> {
  const temp = config.tempDir ? join(config.tempDir, `${basename(target.file)}.${Math.random().toString(36).slice(2, 10)}.part`) : `${target.file}.part`;
  let counted = 0;
  const onBytes = (n: number) => ((counted += n), config.onBytes?.(n));
  let placed = false;
  try {
    const answer = await get(target, config.stallMs ?? STALL_MS);
    if (answer === "unchanged") return { unchanged: true };
    const { response } = answer;
    const encoding = (response.headers["content-encoding"] ?? "identity").trim().toLowerCase();
    await mkdir(dirname(temp), { recursive: true });
    let got = await receive(answer, temp, target, encoding === "identity", onBytes);
    if (encoding !== "identity" && !isExpected(target, got)) {
      const decoded = await decodeFile(temp, encoding, target);
      onBytes(decoded.bytes - got.bytes);
      got = decoded;
    }
    if (target.expect && !isExpected(target, got)) throw new DownloadError(`does not match its sha256 ${target.expect.sha256} (${target.expect.size} bytes)`, "unexpected");
    await mkdir(dirname(target.file), { recursive: true });
    await rename(temp, target.file);
    placed = true;
    return { unchanged: false, ...got, etag: response.headers.etag, lastModified: response.headers["last-modified"] };
  } finally {
    if (!placed) {
      config.onBytes?.(-counted); // progress counts what is placed: an attempt that failed starts again from 0
      await rm(temp, { force: true });
    }
  }
}

const isExpected = (target: DownloadTarget, got: Received) => target.expect !== undefined && got.bytes === target.expect.size && got.sha256 === target.expect.sha256;

/** a 200's answer; `stalled`: the connection was dropped for sending nothing for `stallMs` */
type Answer = { response: http.IncomingMessage; stallMs: number; stalled: () => boolean } | "unchanged";

/** The 200 answer to a GET of the target (redirects followed), "unchanged" for a 304 to a conditional one, or why there is none. */
async function get(target: DownloadTarget, stallMs: number, url = target.url, redirects = 0): Promise<Answer> {
  const headers: Record<string, string> = { "accept-encoding": "identity" };
  if (target.held?.etag) headers["if-none-match"] = target.held.etag;
  if (target.held?.lastModified) headers["if-modified-since"] = target.held.lastModified;
  let stalled = false;
  const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const request = (url.startsWith("https:") ? https : http).get(url, { headers, timeout: stallMs }, resolve);
    // the socket's idle timeout: before the answer and between any two chunks of its body
    request.on("timeout", () => ((stalled = true), request.destroy(new DownloadError(`stalled: no response for ${stallMs / 1000} s`, "stalled"))));
    request.on("error", (err) => reject(err instanceof DownloadError ? err : new DownloadError(`network error: ${describeNetworkError(err)}`, "network")));
  });
  const status = response.statusCode ?? 0;
  const location = response.headers.location;
  if (status === 200) return { response, stallMs, stalled: () => stalled };
  response.resume();
  if (status >= 300 && status < 400 && status !== 304 && location && redirects < MAX_REDIRECTS) return get(target, stallMs, new URL(location, url).href, redirects + 1);
  if (status === 304 && (headers["if-none-match"] ?? headers["if-modified-since"]) !== undefined) return "unchanged";
  throw toStatusError(status, response.headers["retry-after"], target.notFound);
}

function toStatusError(status: number, retryAfter: string | undefined, notFound: string | undefined): DownloadError {
  const text = `${status} ${STATUS_CODES[status] ?? ""}`.trim();
  const message = status === 404 && notFound ? `${text} (${notFound})` : text;
  // Only the delay-seconds form is honoured; an HTTP-date falls back to our own backoff.
  const seconds = retryAfter !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(retryAfter) ? Number(retryAfter) : undefined;
  const retryable = status === 429 || status >= 500;
  const retryAfterMs = retryable && seconds !== undefined ? Math.min(RETRY_AFTER_CAP_MS, Math.round(seconds * 1000)) : undefined;
  return new DownloadError(message, "status", { status, retryAfterMs });
}

/**
 * Bytes taken in: counted and hashed; their first bytes checked against the kind of file expected as soon as there
 * are enough, and refused as soon as they pass `maxBytes`.
 */
class Intake {
  private readonly hash = createHash("sha256");
  private head = Buffer.alloc(0);
  bytes = 0;

  constructor(
    private readonly target: DownloadTarget,
    private readonly maxBytes: number,
    private readonly signature: FileSignature | undefined,
  ) {}

  take(chunk: Buffer): void {
    this.bytes += chunk.byteLength;
    if (this.bytes > this.maxBytes) throw new DownloadError(`does not match its sha256 ${this.target.expect!.sha256}: longer than its ${this.target.expect!.size} bytes`, "unexpected");
    const signature = this.signature;
    if (signature && this.head.length < signature.length) {
      this.head = Buffer.concat([this.head, chunk]).subarray(0, 32);
      if (this.head.length >= signature.length && !signature.matches(this.head)) throw this.wrongKind();
    }
    this.hash.update(chunk);
  }

  finish(): Received {
    if (this.signature && !this.signature.matches(this.head)) throw this.wrongKind();
    return { bytes: this.bytes, sha256: this.hash.digest("hex") };
  }

  // Not retried: a 200 that is not the file kind asked for (typically an HTML error page from a proxy) will not fix itself.
  private wrongKind(): DownloadError {
    return new DownloadError(`${this.target.url} is not a ${this.signature!.kind} (starts with ${JSON.stringify(this.head.toString("latin1"))}; an HTML error page?)`, "unexpected");
  }
}

/**
 * The body as it comes into `temp`. An unencoded body is checked as it arrives (first bytes, size); an encoded one
 * may be the stored file itself (a .br copy labelled as brotli), so it may run a little over the size expected.
 */
async function receive(answer: Exclude<Answer, "unchanged">, temp: string, target: DownloadTarget, identity: boolean, onBytes: (n: number) => void): Promise<Received> {
  const { response, stallMs } = answer;
  const size = target.expect?.size;
  const maxBytes = size === undefined ? Infinity : identity ? size : size + 1024 + size / 8;
  const intake = new Intake(target, maxBytes, identity ? target.head : undefined);
  const length = response.headers["content-length"];
  const total = length !== undefined && /^\d+$/.test(length.trim()) ? Number(length) : identity ? size : undefined;
  const truncated = () => new DownloadError(total === undefined ? `truncated: connection closed after ${intake.bytes} bytes` : `truncated: ${intake.bytes} of ${total} bytes`, "truncated");
  const handle = await open(temp, "w");
  try {
    try {
      for await (const chunk of response) {
        intake.take(chunk as Buffer);
        await handle.write(chunk as Buffer);
        onBytes((chunk as Buffer).byteLength);
      }
    } catch (err) {
      if (err instanceof DownloadError) throw err;
      if (answer.stalled()) throw new DownloadError(`stalled: no data for ${stallMs / 1000} s after ${intake.bytes} bytes`, "stalled");
      throw truncated();
    }
    if (!response.complete || (total !== undefined && length !== undefined && intake.bytes !== total)) throw truncated();
  } finally {
    response.destroy();
    await handle.close();
  }
  return intake.finish();
}

const DECODERS: Record<string, () => Transform> = { br: createBrotliDecompress, gzip: createGunzip, "x-gzip": createGunzip, deflate: createInflate };

/** An encoded body received into `temp`, decoded in its place (streamed: a NetCDF file may be hundreds of MB). */
async function decodeFile(temp: string, encoding: string, target: DownloadTarget): Promise<Received> {
  const decoder = DECODERS[encoding];
  if (!decoder) throw new DownloadError(`came with Content-Encoding ${encoding}, which is not one this downloader decodes`, "unexpected");
  const intake = new Intake(target, target.expect?.size ?? Infinity, target.head);
  const decoded = `${temp}.decoded`;
  const take = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      try {
        intake.take(chunk);
        done(null, chunk);
      } catch (err) {
        done(err as Error);
      }
    },
  });
  const out = createWriteStream(decoded);
  try {
    await pipeline(createReadStream(temp), decoder(), take, out);
    await rename(decoded, temp);
  } catch (err) {
    if (err instanceof DownloadError) throw err;
    throw new DownloadError(`came with Content-Encoding ${encoding} but does not decode (${describeError(err)})`, "unexpected");
  } finally {
    // a file stream destroyed while still opening creates its file when the open completes: rm only once it closed
    if (!out.closed) await new Promise<void>((closed) => out.on("error", () => {}).once("close", () => closed()));
    await rm(decoded, { force: true });
  }
  return intake.finish();
}

/** The cause of a failed request, as node:http reports it. */
function describeNetworkError(err: unknown): string {
  const error = err as NodeJS.ErrnoException & { cause?: { code?: string; message?: string } };
  return error.code ?? error.cause?.code ?? error.cause?.message ?? describeError(err);
}
