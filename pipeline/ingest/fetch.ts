// Mirrors SILO files of any variables from the public bucket into a local folder, resumable through silo.lock.json:
// daily GeoTIFFs (FROM..TO), and annual NetCDF files (YEARS), which SILO rewrites while a year is recent: a recorded annual
// file is asked for again with its ETag, and fetched again only when the bucket's copy changed.

import { createHash } from "node:crypto";

import { mkdir, open, readFile, rename, rm, stat } from "node:fs/promises";
import { STATUS_CODES } from "node:http";
import path from "node:path";
import { isCalendarDate, listDates } from "../../format/dates.js";
import { type Variable, VARIABLES, findVariable } from "../../format/variables.js";
import { dateToMemberPath, SILO, yearToMemberPath } from "../../sources/silo.js";
import { AttemptError, RETRY_AFTER_CAP_MS, describeFetchError, runConcurrently } from "../operations/download.js";
import { PublishError, describeError } from "../errors.js";
import { hashFile, writeFileAtomic } from "../operations/files.js";
import { formatBytes } from "../progress.js";

export interface FetchOptions {
  /** daily files from..to (dates) */
  from?: string;
  to?: string;
  /** annual files: "1889-2025", "2003", "2003,2005-2007" */
  years?: string;
  /** the variables to fetch (default: every variable of format/variables.ts) */
  variables?: Variable[];
  folder: string;
  baseUrl?: string;
  annualBaseUrl?: string;
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
  /** the bucket's validators of an annual file, to ask whether it changed since */
  etag?: string;
  last_modified?: string;
}

export interface LockFile {
  files: LockEntry[]; // sorted by path
}

// docs/contract.md §6.1: one file per day and variable under <base>/<var>/<YYYY>/<YYYYMMDD>.<var>.tif, one per
// year under <annual base>/<var>/<YYYY>.<var>.nc.
export const DEFAULT_SILO_BASE_URL = SILO.dailyBaseUrl;
export const DEFAULT_SILO_ANNUAL_BASE_URL = SILO.annualBaseUrl;
/** The first year SILO's gridded archive holds. */
const FIRST_YEAR = 1889;
export const LOCK_FILE = "silo.lock.json";

const STAGE = "fetch";
const LOCK_SAVE_MS = 2000;
// A connection that sends nothing for this long is treated as dropped, so one hung socket cannot stall the run forever.
const STALL_MS = 60_000;

/** One file to fetch: a day's GeoTIFF or a year's NetCDF file of one variable. */
interface FetchItem {
  /** the variable and the date or the year, for messages */
  key: string;
  relPath: string;
  url: string;
  annual: boolean;
}

interface FetchConfig {
  items: FetchItem[];
  folder: string;
  concurrency: number;
  retries: number;
  backoffMs: number;
  log: (line: string) => void;
}

interface DayFailure {
  key: string;
  url: string;
  reason: string;
}

// One failed HTTP attempt; `retryable` separates transient trouble (network, truncation, 5xx, 429) from answers.
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

export async function fetchSilo(options: FetchOptions): Promise<FetchReport> {
  const config = toFetchConfig(options);
  await mkdir(config.folder, { recursive: true });
  const lockPath = path.join(config.folder, LOCK_FILE);
  const lock = new LockWriter(lockPath, await readLock(lockPath));
  const report: FetchReport = { downloaded: [], skipped: [], bytes: 0 };
  const failures: DayFailure[] = [];
  try {
    // only a failed lock write escapes fetchItem: without it resume is unsafe, so no new file is taken
    await runConcurrently(config.items, config.concurrency, (item) => fetchItem(item, config, lock, report, failures));
    if (report.downloaded.length > 0) await lock.save(true);
  } catch (err) {
    throw new PublishError(lockPath, STAGE, `cannot write the lock file (${describeError(err)}); check the folder is writable, then re-run`);
  }
  if (failures.length > 0) {
    failures.sort((a, b) => a.key.localeCompare(b.key));
    const lines = failures.map((f) => `  ${f.key} ${f.url}: ${f.reason}`);
    const what = config.items[0]?.annual ? "years" : "days";
    throw new PublishError(
      config.folder,
      STAGE,
      `${failures.length} of ${config.items.length} ${what} failed to download; completed files and their lock entries are kept, re-run to resume:\n${lines.join("\n")}`,
    );
  }
  return { downloaded: report.downloaded.sort(), skipped: report.skipped.sort(), bytes: report.bytes };
}

/**
 * One file: a daily file is skipped when the lock and the file agree; an annual file that agrees is asked for again
 * with its recorded ETag (SILO rewrites recent years) and skipped when unchanged. Anything else is downloaded (with
 * retries) and recorded in the lock.
 */
async function fetchItem(item: FetchItem, config: FetchConfig, lock: LockWriter, report: FetchReport, failures: DayFailure[]): Promise<void> {
  const { relPath, url } = item;
  const dest = path.join(config.folder, ...relPath.split("/"));
  let result: Downloaded | "unchanged";
  try {
    const entry = lock.entries.get(relPath);
    const intact = entry !== undefined && (await isIntact(dest, entry));
    // A killed run may have left a partial download beside the good file.
    if (intact) await rm(`${dest}.part`, { force: true });
    if (intact && !(item.annual && (entry.etag || entry.last_modified))) {
      report.skipped.push(relPath);
      config.log(`skipped ${relPath} (already present, sha256 ok)`);
      return;
    }
    await mkdir(path.dirname(dest), { recursive: true });
    result = await downloadWithRetries(item, dest, config, intact ? entry : undefined);
  } catch (err) {
    const reason = describeError(err);
    failures.push({ key: item.key, url, reason });
    config.log(`failed ${relPath}: ${reason}`);
    return;
  }
  if (result === "unchanged") {
    report.skipped.push(relPath);
    config.log(`skipped ${relPath} (unchanged in the bucket, sha256 ok)`);
    return;
  }
  const validators = item.annual ? { ...(result.etag ? { etag: result.etag } : {}), ...(result.lastModified ? { last_modified: result.lastModified } : {}) } : {};
  lock.entries.set(relPath, { path: relPath, url, bytes: result.bytes, sha256: result.sha256, ...validators });
  await lock.save();
  report.downloaded.push(relPath);
  report.bytes += result.bytes;
  config.log(`fetched ${relPath} ${formatBytes(result.bytes)}`);
}

function toFetchConfig(options: FetchOptions): FetchConfig {
  if (typeof options.folder !== "string" || options.folder === "") {
    throw new PublishError("folder", STAGE, "missing; give the folder the SILO files are mirrored into");
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
  const items = options.years !== undefined ? listYearItems(options) : listDayItems(options);
  return { items, folder: options.folder, concurrency, retries, backoffMs, log: options.log ?? (() => undefined) };
}

function listDayItems(options: FetchOptions): FetchItem[] {
  const from = parseDate("from", options.from);
  const to = parseDate("to", options.to);
  if (from > to) {
    throw new PublishError("from", STAGE, `${options.from} is after to ${options.to}; give from <= to`);
  }
  const baseUrl = checkBaseUrl(options.baseUrl, "SILO_BASE_URL", "baseUrl", DEFAULT_SILO_BASE_URL);
  const dates = listDates(from, to);
  return listVariables(options).flatMap((v) =>
    dates.map((date) => ({ key: `${v.silo} ${date}`, relPath: dateToMemberPath(date, v), url: `${baseUrl}/${v.silo}/${dateToMemberPath(date, v)}`, annual: false })),
  );
}

function listYearItems(options: FetchOptions): FetchItem[] {
  if (options.from !== undefined || options.to !== undefined) {
    throw new PublishError("years", STAGE, "give either FROM and TO (daily files) or YEARS (annual files), not both");
  }
  const baseUrl = checkBaseUrl(options.annualBaseUrl, "SILO_ANNUAL_BASE_URL", "annualBaseUrl", DEFAULT_SILO_ANNUAL_BASE_URL);
  const years = parseYears(options.years!);
  return listVariables(options).flatMap((v) =>
    years.map((year) => ({ key: `${v.silo} ${year}`, relPath: yearToMemberPath(year, v), url: `${baseUrl}/${v.silo}/${yearToMemberPath(year, v)}`, annual: true })),
  );
}

function listVariables(options: FetchOptions): readonly Variable[] {
  if (options.variables !== undefined && options.variables.length === 0) {
    throw new PublishError("variables", STAGE, `none given; give some of ${VARIABLES.map((v) => v.silo).join(", ")}, comma-separated (VARIABLES=max_temp,daily_rain)`);
  }
  return options.variables ?? VARIABLES;
}

/** "max_temp,daily_rain" (SILO or API names) -> the variables, each once, in the order given; unknown names stop. */
export function parseVariables(spec: string): Variable[] {
  const out: Variable[] = [];
  for (const name of spec.split(",").map((n) => n.trim()).filter(Boolean)) {
    const variable = findVariable(name);
    if (!variable) throw new PublishError("VARIABLES", STAGE, `"${name}" is not a SILO variable this archive publishes; known: ${VARIABLES.map((v) => v.silo).join(", ")}`);
    if (!out.includes(variable)) out.push(variable);
  }
  return listVariables({ folder: "", variables: out }) as Variable[];
}

function checkBaseUrl(given: string | undefined, variable: string, option: string, fallback: string): string {
  const baseUrl = given ?? (process.env[variable] || fallback);
  if (!isHttpUrl(baseUrl)) {
    throw new PublishError(given === undefined ? variable : option, STAGE, `${JSON.stringify(baseUrl)} is not an http(s) URL`);
  }
  return baseUrl.replace(/\/+$/, "");
}

/** "1889-2025", "2003", "2003,2005-2007": whole years from 1889 to the current one, each once, ascending. */
export function parseYears(spec: string): number[] {
  const last = new Date().getUTCFullYear();
  const years = new Set<number>();
  for (const part of spec.split(",")) {
    const m = /^\s*(\d{4})(?:\s*-\s*(\d{4}))?\s*$/.exec(part);
    const [first, end] = m ? [Number(m[1]), Number(m[2] ?? m[1])] : [NaN, NaN];
    if (!m || first > end || first < FIRST_YEAR || end > last) {
      throw new PublishError("years", STAGE, `${JSON.stringify(part.trim())} is not a year or range of years in ${FIRST_YEAR}..${last}; give YEARS=1889-${last}, YEARS=2003 or YEARS=2003,2005-2007`);
    }
    for (let y = first; y <= end; y++) years.add(y);
  }
  return [...years].sort((a, b) => a - b);
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
    /^[0-9a-f]{64}$/.test(entry.sha256) &&
    (entry.etag === undefined || typeof entry.etag === "string") &&
    (entry.last_modified === undefined || typeof entry.last_modified === "string")
  );
}

// Atomic, so a crash mid-write leaves the previous lock, never half a file.
async function writeLock(lockPath: string, lock: Map<string, LockEntry>): Promise<void> {
  const files = [...lock.values()]
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map(({ path, url, bytes, sha256, etag, last_modified }) => ({ path, url, bytes, sha256, ...(etag ? { etag } : {}), ...(last_modified ? { last_modified } : {}) }));
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

interface Downloaded {
  bytes: number;
  sha256: string;
  etag?: string;
  lastModified?: string;
}

/** The item's file, or "unchanged" when the bucket says its copy is still the `recorded` one. */
async function downloadWithRetries(item: FetchItem, dest: string, config: FetchConfig, recorded?: LockEntry): Promise<Downloaded | "unchanged"> {
  const attempts = config.retries + 1;
  const relPath = item.relPath;
  for (let attempt = 1; ; attempt++) {
    try {
      return await downloadOnce(item, dest, recorded);
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

async function downloadOnce(item: FetchItem, dest: string, recorded?: LockEntry): Promise<Downloaded | "unchanged"> {
  const watch = new StallWatch();
  const partPath = `${dest}.part`;
  let complete = false;
  try {
    let response: Response;
    // identity: Content-Length must count the bytes we store, not a compressed transfer.
    const headers: Record<string, string> = { "accept-encoding": "identity" };
    if (recorded?.etag) headers["if-none-match"] = recorded.etag;
    if (recorded?.last_modified) headers["if-modified-since"] = recorded.last_modified;
    try {
      response = await fetch(item.url, { signal: watch.controller.signal, headers });
    } catch (err) {
      throw new AttemptError(watch.stalled ? `stalled: no response for ${STALL_MS / 1000} s` : `network error: ${describeFetchError(err)}`, true);
    }
    if (response.status === 304 && recorded) {
      await response.body?.cancel().catch(() => undefined);
      return "unchanged";
    }
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw toStatusError(response, item);
    }
    const expected = readContentLength(response);
    const { received, sha256 } = await streamToFile(response, partPath, item, expected, watch);
    if (expected !== undefined && received !== expected) {
      throw new AttemptError(`truncated: ${received} of ${expected} bytes`, true);
    }
    await rename(partPath, dest);
    complete = true;
    return { bytes: received, sha256, etag: response.headers.get("etag") ?? undefined, lastModified: response.headers.get("last-modified") ?? undefined };
  } finally {
    watch.stop();
    if (!complete) await rm(partPath, { force: true });
  }
}

/** The response body into `partPath`, hashed as it arrives; refused as soon as its first bytes are not the file kind expected. */
async function streamToFile(response: Response, partPath: string, item: FetchItem, expected: number | undefined, watch: StallWatch): Promise<{ received: number; sha256: string }> {
  const signature = item.annual ? HDF5_SIGNATURE : TIFF_SIGNATURE;
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
      if (head.length < signature.length) {
        head = Buffer.concat([head, chunk.value]).subarray(0, 32);
        if (head.length >= signature.length && !signature.matches(head)) {
          await reader.cancel().catch(() => undefined);
          throw makeWrongKindError(item, head);
        }
      }
      await handle.write(chunk.value);
      hash.update(chunk.value);
      received += chunk.value.length;
    }
  } finally {
    await handle.close();
  }
  if (!signature.matches(head)) throw makeWrongKindError(item, head);
  return { received, sha256: hash.digest("hex") };
}

function toStatusError(response: Response, item: FetchItem): AttemptError {
  const status = response.status;
  const statusText = STATUS_CODES[status] ?? response.statusText;
  if (status === 404) return new AttemptError(`404 Not Found (no such ${item.annual ? "year" : "day"} of ${item.key.split(" ")[0]} in the bucket)`, false);
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

interface Signature {
  length: number;
  kind: string;
  matches: (head: Buffer) => boolean;
}

// Little-endian TIFF, big-endian TIFF, little-endian BigTIFF.
const TIFF_SIGNATURE: Signature = {
  length: 4,
  kind: "GeoTIFF",
  matches: (head) => {
    if (head.length < 4) return false;
    const [a, b, c, d] = head;
    return (
      (a === 0x49 && b === 0x49 && c === 0x2a && d === 0x00) ||
      (a === 0x4d && b === 0x4d && c === 0x00 && d === 0x2a) ||
      (a === 0x49 && b === 0x49 && c === 0x2b && d === 0x00)
    );
  },
};

// A NetCDF-4 file is HDF5: its superblock signature opens the file.
const HDF5_MAGIC = Buffer.from([0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a]);
const HDF5_SIGNATURE: Signature = { length: 8, kind: "NetCDF-4 (HDF5) file", matches: (head) => head.length >= 8 && head.subarray(0, 8).equals(HDF5_MAGIC) };

// Not retried: a 200 that is not the file kind asked for (typically an HTML error page from a proxy) will not fix itself.
function makeWrongKindError(item: FetchItem, head: Buffer): AttemptError {
  const kind = item.annual ? HDF5_SIGNATURE.kind : TIFF_SIGNATURE.kind;
  return new AttemptError(`${item.url} is not a ${kind} (starts with ${JSON.stringify(head.toString("latin1"))}; an HTML error page?)`, false);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
