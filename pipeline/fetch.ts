// Mirrors SILO daily max_temp GeoTIFFs from the public bucket into a local folder, resumable through silo.lock.json.

import { createHash } from "node:crypto";

import { mkdir, open, readFile, rename, rm, stat } from "node:fs/promises";
import { STATUS_CODES } from "node:http";
import path from "node:path";
import { isCalendarDate, listDates } from "../format/dates.js";
import { dateToMemberPath, SILO_TMAX } from "../sources/silo.js";
import { PublishError, describeError } from "./errors.js";
import { hashFile, writeFileAtomic } from "./files.js";
import { formatBytes } from "./progress.js";

export interface FetchOptions {
  from: string;
  to: string;
  folder: string;
  baseUrl?: string;
  concurrency?: number;
  retries?: number;
  backoffMs?: number;
  log?: (line: string) => void;
}

export interface FetchReport {
  downloaded: string[];
  skipped: string[];
  bytes: number;
}

export interface LockEntry {
  path: string;
  url: string;
  bytes: number;
  sha256: string;
}

export interface LockFile {
  files: LockEntry[]; // sorted by path
}

// docs/contract.md §6.1: one file per day under <base>/<YYYY>/<YYYYMMDD>.max_temp.tif.
export const DEFAULT_SILO_BASE_URL = SILO_TMAX.baseUrl;
export const LOCK_FILE = "silo.lock.json";

const STAGE = "fetch";
const LOCK_SAVE_MS = 2000;
const RETRY_AFTER_CAP_MS = 30_000;
// A connection that sends nothing for this long is treated as dropped, so one hung socket cannot stall the run forever.
const STALL_MS = 60_000;

interface FetchConfig {
  dates: string[];
  folder: string;
  baseUrl: string;
  concurrency: number;
  retries: number;
  backoffMs: number;
  log: (line: string) => void;
}

interface DayFailure {
  date: string;
  url: string;
  reason: string;
}

// One failed HTTP attempt; `retryable` separates transient trouble (network, truncation, 5xx, 429) from answers.
class AttemptError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = "AttemptError";
  }
}

/**
 * The lock file, written as downloads complete: chained so concurrent completions never interleave, each write
 * carrying the whole current state, at most one every LOCK_SAVE_MS (and one at the end): rewriting it after every
 * file would cost the square of the number of days. A file downloaded after the last write is fetched again on resume.
 */
class LockWriter {
  private queue: Promise<void> = Promise.resolve();
  private lastSave = 0;

  constructor(
    private readonly path: string,
    readonly entries: Map<string, LockEntry>,
  ) {}

  save(force = false): Promise<void> {
    if (!force && Date.now() - this.lastSave < LOCK_SAVE_MS) return Promise.resolve();
    this.lastSave = Date.now();
    const write = this.queue.then(() => writeLock(this.path, this.entries));
    this.queue = write.catch(() => undefined);
    return write;
  }
}

/** Runs `work` on every item, `concurrency` at a time; the first error `work` throws stops new items and is rethrown. */
async function runConcurrently<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let fatal: { err: unknown } | null = null;
  const worker = async () => {
    while (!fatal && next < items.length) {
      const item = items[next++];
      await work(item).catch((err) => (fatal ??= { err }));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  if (fatal) throw (fatal as { err: unknown }).err;
}

export async function fetchSilo(options: FetchOptions): Promise<FetchReport> {
  const config = toFetchConfig(options);
  await mkdir(config.folder, { recursive: true });
  const lockPath = path.join(config.folder, LOCK_FILE);
  const lock = new LockWriter(lockPath, await readLock(lockPath));
  const report: FetchReport = { downloaded: [], skipped: [], bytes: 0 };
  const failures: DayFailure[] = [];
  try {
    // only a failed lock write escapes fetchDay: without it resume is unsafe, so no new day is taken
    await runConcurrently(config.dates, config.concurrency, (date) => fetchDay(date, config, lock, report, failures));
    if (report.downloaded.length > 0) await lock.save(true);
  } catch (err) {
    throw new PublishError(lockPath, STAGE, `cannot write the lock file (${describeError(err)}); check the folder is writable, then re-run`);
  }
  if (failures.length > 0) {
    failures.sort((a, b) => a.date.localeCompare(b.date));
    const lines = failures.map((f) => `  ${f.date} ${f.url}: ${f.reason}`);
    throw new PublishError(
      config.folder,
      STAGE,
      `${failures.length} of ${config.dates.length} days failed to download; completed files and their lock entries are kept, re-run to resume:\n${lines.join("\n")}`,
    );
  }
  return { downloaded: report.downloaded.sort(), skipped: report.skipped.sort(), bytes: report.bytes };
}

/** One day: skipped when the lock and the file agree, else downloaded (with retries) and recorded in the lock. */
async function fetchDay(date: string, config: FetchConfig, lock: LockWriter, report: FetchReport, failures: DayFailure[]): Promise<void> {
  const relPath = dateToMemberPath(date);
  const url = `${config.baseUrl}/${relPath}`;
  const dest = path.join(config.folder, ...relPath.split("/"));
  let result: { bytes: number; sha256: string };
  try {
    const entry = lock.entries.get(relPath);
    if (entry && (await isIntact(dest, entry))) {
      // A killed run may have left a partial download beside the good file.
      await rm(`${dest}.part`, { force: true });
      report.skipped.push(relPath);
      config.log(`skipped ${relPath} (already present, sha256 ok)`);
      return;
    }
    await mkdir(path.dirname(dest), { recursive: true });
    result = await downloadWithRetries(url, dest, relPath, config);
  } catch (err) {
    const reason = describeError(err);
    failures.push({ date, url, reason });
    config.log(`failed ${relPath}: ${reason}`);
    return;
  }
  lock.entries.set(relPath, { path: relPath, url, bytes: result.bytes, sha256: result.sha256 });
  await lock.save();
  report.downloaded.push(relPath);
  report.bytes += result.bytes;
  config.log(`fetched ${relPath} ${formatBytes(result.bytes)}`);
}

function toFetchConfig(options: FetchOptions): FetchConfig {
  const from = parseDate("from", options.from);
  const to = parseDate("to", options.to);
  if (from > to) {
    throw new PublishError("from", STAGE, `${options.from} is after to ${options.to}; give from <= to`);
  }
  if (typeof options.folder !== "string" || options.folder === "") {
    throw new PublishError("folder", STAGE, "missing; give the folder the SILO files are mirrored into");
  }
  const baseUrl = options.baseUrl ?? (process.env.SILO_BASE_URL || DEFAULT_SILO_BASE_URL);
  if (!isHttpUrl(baseUrl)) {
    const name = options.baseUrl === undefined ? "SILO_BASE_URL" : "baseUrl";
    throw new PublishError(name, STAGE, `${JSON.stringify(baseUrl)} is not an http(s) URL`);
  }
  const concurrency = options.concurrency ?? 4;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new PublishError("concurrency", STAGE, `${concurrency} is not a whole number >= 1`);
  }
  const retries = options.retries ?? 4;
  if (!Number.isInteger(retries) || retries < 0) {
    throw new PublishError("retries", STAGE, `${retries} is not a whole number >= 0`);
  }
  const backoffMs = options.backoffMs ?? 500;
  if (!Number.isFinite(backoffMs) || backoffMs < 0) {
    throw new PublishError("backoffMs", STAGE, `${backoffMs} is not a number of milliseconds >= 0`);
  }
  return {
    dates: listDates(from, to),
    folder: options.folder,
    baseUrl: baseUrl.replace(/\/+$/, ""),
    concurrency,
    retries,
    backoffMs,
    log: options.log ?? (() => undefined),
  };
}

// A calendar date checked by arithmetic, so 2003-02-29 fails instead of rolling into March.
function parseDate(name: string, value: unknown): string {
  if (typeof value === "string" && isCalendarDate(value)) return value;
  throw new PublishError(name, STAGE, `${JSON.stringify(value)} is not a calendar date; give YYYY-MM-DD`);
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

async function readLock(lockPath: string): Promise<Map<string, LockEntry>> {
  let text: string;
  try {
    text = await readFile(lockPath, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return new Map();
    throw new PublishError(lockPath, STAGE, `cannot read the lock file: ${describeError(err)}`);
  }
  const entries = new Map<string, LockEntry>();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const files = (parsed as Partial<LockFile> | undefined)?.files;
  if (!Array.isArray(files) || !files.every(isLockEntry)) {
    throw new PublishError(lockPath, STAGE, "is not a SILO lock file ({files: [{path, url, bytes, sha256}]}); delete it to download everything again");
  }
  for (const entry of files) entries.set(entry.path, entry);
  return entries;
}

function isLockEntry(value: unknown): value is LockEntry {
  const entry = value as LockEntry;
  return (
    typeof entry === "object" &&
    entry !== null &&
    typeof entry.path === "string" &&
    typeof entry.url === "string" &&
    Number.isInteger(entry.bytes) &&
    typeof entry.sha256 === "string" &&
    /^[0-9a-f]{64}$/.test(entry.sha256)
  );
}

// Atomic, so a crash mid-write leaves the previous lock, never half a file.
async function writeLock(lockPath: string, lock: Map<string, LockEntry>): Promise<void> {
  const files = [...lock.values()]
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map(({ path, url, bytes, sha256 }) => ({ path, url, bytes, sha256 }));
  const body: LockFile = { files };
  await writeFileAtomic(lockPath, `${JSON.stringify(body, null, 2)}\n`);
}

async function isIntact(file: string, entry: LockEntry): Promise<boolean> {
  try {
    const info = await stat(file);
    if (!info.isFile() || info.size !== entry.bytes) return false;
    return (await hashFile(file)) === entry.sha256;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw err;
  }
}

async function downloadWithRetries(
  url: string,
  dest: string,
  relPath: string,
  config: FetchConfig,
): Promise<{ bytes: number; sha256: string }> {
  const attempts = config.retries + 1;
  for (let attempt = 1; ; attempt++) {
    try {
      return await downloadOnce(url, dest);
    } catch (err) {
      const retryable = err instanceof AttemptError && err.retryable;
      if (!retryable || attempt === attempts) {
        const reason = describeError(err);
        throw new AttemptError(attempt > 1 ? `${reason} after ${attempt} attempts` : reason, false);
      }
      const delayMs = err.retryAfterMs ?? computeBackoffMs(config.backoffMs, attempt);
      config.log(`retry ${relPath} in ${delayMs} ms: ${err.message} (attempt ${attempt} of ${attempts})`);
      await sleep(delayMs);
    }
  }
}

// Exponential from the base with up to 20% random jitter, so parallel workers hitting the same 503 spread out.
function computeBackoffMs(baseMs: number, attempt: number): number {
  const delayMs = baseMs * 2 ** (attempt - 1);
  return Math.min(RETRY_AFTER_CAP_MS, Math.round(delayMs * (1 + Math.random() * 0.2)));
}

/** Aborts a download when nothing arrives for STALL_MS; every chunk received starts the wait again. */
class StallWatch {
  readonly controller = new AbortController();
  stalled = false;
  private timer = this.start();

  private start(): NodeJS.Timeout {
    return setTimeout(() => ((this.stalled = true), this.controller.abort()), STALL_MS);
  }

  reset(): void {
    clearTimeout(this.timer);
    this.timer = this.start();
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}

async function downloadOnce(url: string, dest: string): Promise<{ bytes: number; sha256: string }> {
  const watch = new StallWatch();
  const partPath = `${dest}.part`;
  let complete = false;
  try {
    let response: Response;
    try {
      // identity: Content-Length must count the bytes we store, not a compressed transfer.
      response = await fetch(url, { signal: watch.controller.signal, headers: { "accept-encoding": "identity" } });
    } catch (err) {
      throw new AttemptError(watch.stalled ? `stalled: no response for ${STALL_MS / 1000} s` : `network error: ${describeFetchError(err)}`, true);
    }
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw toStatusError(response);
    }
    const expected = readContentLength(response);
    const { received, sha256 } = await streamToFile(response, partPath, url, expected, watch);
    if (expected !== undefined && received !== expected) {
      throw new AttemptError(`truncated: ${received} of ${expected} bytes`, true);
    }
    await rename(partPath, dest);
    complete = true;
    return { bytes: received, sha256 };
  } finally {
    watch.stop();
    if (!complete) await rm(partPath, { force: true });
  }
}

/** The response body into `partPath`, hashed as it arrives; refused as soon as its first bytes are not a TIFF. */
async function streamToFile(response: Response, partPath: string, url: string, expected: number | undefined, watch: StallWatch): Promise<{ received: number; sha256: string }> {
  const reader = response.body?.getReader();
  const handle = await open(partPath, "w");
  const hash = createHash("sha256");
  let received = 0;
  let head = Buffer.alloc(0);
  try {
    while (reader) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch {
        if (watch.stalled) throw new AttemptError(`stalled: no data for ${STALL_MS / 1000} s after ${received} bytes`, true);
        const truncated = expected === undefined ? `truncated: connection closed after ${received} bytes` : `truncated: ${received} of ${expected} bytes`;
        throw new AttemptError(truncated, true);
      }
      if (chunk.done) break;
      watch.reset();
      if (head.length < 4) {
        head = Buffer.concat([head, chunk.value]).subarray(0, 32);
        if (head.length >= 4 && !isTiffHeader(head)) {
          await reader.cancel().catch(() => undefined);
          throw makeNotTiffError(url, head);
        }
      }
      await handle.write(chunk.value);
      hash.update(chunk.value);
      received += chunk.value.length;
    }
  } finally {
    await handle.close();
  }
  if (!isTiffHeader(head)) throw makeNotTiffError(url, head);
  return { received, sha256: hash.digest("hex") };
}

function toStatusError(response: Response): AttemptError {
  const status = response.status;
  const statusText = STATUS_CODES[status] ?? response.statusText;
  if (status === 404) return new AttemptError("404 Not Found (no such day in the bucket)", false);
  const retryable = status === 429 || status >= 500;
  const retryAfterMs = retryable ? parseRetryAfterMs(response.headers.get("retry-after")) : undefined;
  return new AttemptError(`${status} ${statusText}`.trim(), retryable, retryAfterMs);
}

// Only the delay-seconds form is honoured; an HTTP-date falls back to our own backoff.
function parseRetryAfterMs(value: string | null): number | undefined {
  if (value === null || !/^\s*\d+(\.\d+)?\s*$/.test(value)) return undefined;
  return Math.min(RETRY_AFTER_CAP_MS, Math.round(Number(value) * 1000));
}

// A length only binds when the body arrives unencoded; with a Content-Encoding it counts compressed bytes.
function readContentLength(response: Response): number | undefined {
  const encoding = response.headers.get("content-encoding");
  if (encoding !== null && encoding.trim().toLowerCase() !== "identity") return undefined;
  const value = response.headers.get("content-length");
  return value !== null && /^\d+$/.test(value.trim()) ? Number(value) : undefined;
}

// Little-endian TIFF, big-endian TIFF, little-endian BigTIFF.
function isTiffHeader(head: Buffer): boolean {
  if (head.length < 4) return false;
  const [a, b, c, d] = head;
  return (
    (a === 0x49 && b === 0x49 && c === 0x2a && d === 0x00) ||
    (a === 0x4d && b === 0x4d && c === 0x00 && d === 0x2a) ||
    (a === 0x49 && b === 0x49 && c === 0x2b && d === 0x00)
  );
}

// Not retried: a 200 that is not a TIFF (typically an HTML error page from a proxy) will not fix itself.
function makeNotTiffError(url: string, head: Buffer): AttemptError {
  return new AttemptError(`${url} is not a GeoTIFF (starts with ${JSON.stringify(head.toString("latin1"))}; an HTML error page?)`, false);
}

function describeFetchError(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? describeError(err);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
