// Mirrors SILO files of any variables from the public bucket into a local folder, resumable through silo.lock.json:
// daily GeoTIFFs (FROM..TO), and annual NetCDF files (YEARS), which SILO rewrites while a year is recent: a recorded annual
// file is asked for again with its ETag, and fetched again only when the bucket's copy changed. Each file comes through
// the pipeline's one downloader (operations/download.ts: retries, stall watch, .part file), checked by its first bytes.

import { mkdir, readFile, rm, stat } from "node:fs/promises";
import path from "node:path";
import { isCalendarDate, listDates } from "../../format/dates.js";
import { type Variable, VARIABLES, findVariable } from "../../format/variables.js";
import { dateToMemberPath, SILO, yearToMemberPath } from "../../sources/silo.js";
import { type Downloaded, type FileSignature, download, runConcurrently } from "../operations/download.js";
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
  let result: Downloaded;
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
    const held = intact ? { etag: entry.etag, lastModified: entry.last_modified } : undefined;
    const notFound = `no such ${item.annual ? "year" : "day"} of ${item.key.split(" ")[0]} in the bucket`;
    const signature = item.annual ? HDF5_SIGNATURE : TIFF_SIGNATURE;
    result = await download({ url, file: dest, label: relPath, held, head: signature, notFound }, { retries: config.retries, backoffMs: config.backoffMs, log: config.log });
  } catch (err) {
    const reason = describeError(err);
    failures.push({ key: item.key, url, reason });
    config.log(`failed ${relPath}: ${reason}`);
    return;
  }
  if (result.unchanged) {
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

// Little-endian TIFF, big-endian TIFF, little-endian BigTIFF.
const TIFF_SIGNATURE: FileSignature = {
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
const HDF5_SIGNATURE: FileSignature = { length: 8, kind: "NetCDF-4 (HDF5) file", matches: (head) => head.length >= 8 && head.subarray(0, 8).equals(HDF5_MAGIC) };
