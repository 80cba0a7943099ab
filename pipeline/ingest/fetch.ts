// Mirrors SILO files of any variables from the public bucket into a local folder, recorded in silo.lock.json: daily
// GeoTIFFs (FROM..TO) and annual NetCDF files (YEARS). SILO rewrites recent files in place every night, sometimes at the
// same size, so a file already held is asked for again with a conditional request (its recorded ETag, else its
// Last-Modified): a 304 costs no download, a rewritten file is downloaded, checked by its first bytes and recorded. Each
// file comes through the pipeline's one downloader (pipeline/download.ts: retries, stall watch, .part file); make fetch
// and make update of one sources folder take turns on its lock (SOURCES/.sources.lock).

import { mkdir, rm, stat } from "node:fs/promises";
import path from "node:path";
import { isCalendarDate, listDates } from "../../format/dates.js";
import { type Variable, VARIABLES, findVariable } from "../../format/variables.js";
import { dateToMemberPath, SILO, yearToMemberPath } from "../../sources/silo.js";
import { type FileSignature, download, runConcurrently } from "../download.js";
import { FetchError, describeError } from "../errors.js";
import { hashFile } from "../files/write.js";
import { type FolderLock, type LockOptions, lockFolder } from "../files/lock-file.js";
import { formatBytes } from "../progress.js";
import { LOCK_FILE, type LockEntry, readLock, writeLock } from "./silo-lock.js";
import { finishStaged } from "./staging.js";

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
  /** how long a connection may send nothing (default: the downloader's 60 s) */
  stallMs?: number;
  log?: (line: string) => void;
  /** how long to wait for another fetch or update of the folder (default: refuse at once) */
  lock?: LockOptions;
}

/** What a fetch did, by member path: each file asked for is in exactly one of added, revised and unchanged. */
export interface FetchReport {
  /** files the folder did not hold */
  added: string[];
  /** files the folder held that the bucket had rewritten: downloaded again */
  revised: string[];
  /** files the folder held as the bucket has them (a 304, or the same bytes) */
  unchanged: string[];
  /** files downloaded (added, revised, and held files asked for without validators) and their bytes */
  downloads: number;
  bytes: number;
}

// docs/contract.md §6.1: one file per day and variable under <base>/<var>/<YYYY>/<YYYYMMDD>.<var>.tif, one per
// year under <annual base>/<var>/<YYYY>.<var>.nc.
export const DEFAULT_SILO_BASE_URL = SILO.dailyBaseUrl;
export const DEFAULT_SILO_ANNUAL_BASE_URL = SILO.annualBaseUrl;
/** The first year SILO's gridded archive holds. */
const FIRST_YEAR = 1889;
/** The sources folder's lock (flock, as the dist's): one make fetch or make update of a folder at a time. */
export const SOURCES_LOCK: FolderLock = { name: ".sources.lock", noun: "sources folder", elsewhere: "fetch into a local folder and copy it there" };

const STAGE = "fetch";
const LOCK_SAVE_MS = 2000;

/** One file to fetch: a day's GeoTIFF or a year's NetCDF file of one variable. */
export interface FetchItem {
  variable: Variable;
  /** the variable and the date or the year, for messages */
  key: string;
  relPath: string;
  url: string;
  annual: boolean;
}

/** How many at once, how hard each is tried (the downloader's retries and stall watch). */
export interface FetchTuning {
  concurrency: number;
  retries: number;
  backoffMs: number;
  stallMs?: number;
}

/** A run over a sources folder: what it holds, where a download lands, and who hears of each file. */
export interface FetchRun extends FetchTuning {
  folder: string;
  /** the lock file's entries: the files the folder holds, with their sha256 and validators */
  entries: Map<string, LockEntry>;
  /** where an item's download goes: its place in the folder (make fetch) or a staging folder (make update) */
  landing: (item: FetchItem) => string;
  log: (line: string) => void;
  /** told of each file fetched, before its line is logged; a rejection stops the run (make fetch's lock writes) */
  onFetched?: (fetched: Fetched) => Promise<void>;
}

/** One file asked for and answered. */
export interface Fetched {
  item: FetchItem;
  /** added: the folder did not hold it; revised: it held other bytes; unchanged: it held the bucket's bytes */
  outcome: "added" | "revised" | "unchanged";
  /** the lock entry to record (sha256 and the bucket's validators), or null when nothing changes (a 304) */
  entry: LockEntry | null;
  /** a download that landed outside the folder and is still to be moved into place, or null */
  landed: string | null;
  downloaded: boolean;
  /** bytes downloaded */
  bytes: number;
}

export interface FetchFailure {
  item: FetchItem;
  reason: string;
}

interface FetchConfig extends FetchTuning {
  items: FetchItem[];
  folder: string;
  log: (line: string) => void;
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

/** make fetch: every item into its place in the folder, under the folder's lock, after what a killed update left is made right. */
export async function fetchSilo(options: FetchOptions): Promise<FetchReport> {
  const config = toFetchConfig(options);
  await mkdir(config.folder, { recursive: true });
  const release = await lockSources(config.folder, "fetch", options.lock);
  try {
    for (const line of await finishStaged(config.folder)) config.log(line);
    return await fetchInPlace(config);
  } finally {
    await release();
  }
}

async function fetchInPlace(config: FetchConfig): Promise<FetchReport> {
  const lockPath = path.join(config.folder, LOCK_FILE);
  const lock = new LockWriter(lockPath, await readLock(lockPath));
  const landing = (item: FetchItem) => path.join(config.folder, ...item.relPath.split("/"));
  let recorded = false;
  const record = async ({ item, entry }: Fetched) => {
    if (!entry) return;
    lock.entries.set(item.relPath, entry);
    recorded = true;
    await lock.save();
  };
  let outcome: Awaited<ReturnType<typeof fetchFiles>>;
  try {
    // only a failed lock write escapes fetchFiles: without it resume is unsafe, so no new file is taken
    outcome = await fetchFiles(config.items, { ...config, entries: lock.entries, landing, onFetched: record });
    if (recorded) await lock.save(true);
  } catch (err) {
    throw new FetchError(lockPath, STAGE, `cannot write the lock file (${describeError(err)}); check the folder is writable, then re-run`);
  }
  const { fetched, failures } = outcome;
  if (failures.length > 0) {
    const lines = describeFailures(failures).map((line) => `  ${line}`);
    const what = config.items[0]?.annual ? "years" : "days";
    throw new FetchError(
      config.folder,
      STAGE,
      `${failures.length} of ${config.items.length} ${what} failed to download; completed files and their lock entries are kept, re-run to resume:\n${lines.join("\n")}`,
    );
  }
  return toReport(fetched);
}

/** "max_temp 2003-01-02 <url>: <reason>" for each failure, in key order. */
export function describeFailures(failures: FetchFailure[]): string[] {
  return [...failures].sort((a, b) => a.item.key.localeCompare(b.item.key)).map((f) => `${f.item.key} ${f.item.url}: ${f.reason}`);
}

export function toReport(fetched: Fetched[]): FetchReport {
  const pick = (outcome: Fetched["outcome"]) => fetched.filter((f) => f.outcome === outcome).map((f) => f.item.relPath).sort();
  const downloaded = fetched.filter((f) => f.downloaded);
  return { added: pick("added"), revised: pick("revised"), unchanged: pick("unchanged"), downloads: downloaded.length, bytes: downloaded.reduce((n, f) => n + f.bytes, 0) };
}

/** Every item asked for, `concurrency` at a time: what came, and what failed (each with its reason). */
export async function fetchFiles(items: FetchItem[], run: FetchRun): Promise<{ fetched: Fetched[]; failures: FetchFailure[] }> {
  const fetched: Fetched[] = [];
  const failures: FetchFailure[] = [];
  await runConcurrently(items, run.concurrency, async (item) => {
    let done: Fetched;
    try {
      done = await fetchOne(item, run);
    } catch (err) {
      const reason = describeError(err);
      failures.push({ item, reason });
      run.log(`failed ${item.relPath}: ${reason}`);
      return;
    }
    fetched.push(done);
    await run.onFetched?.(done);
    run.log(describeFetched(done));
  });
  return { fetched, failures };
}

function describeFetched({ item, outcome, downloaded, bytes }: Fetched): string {
  if (outcome === "added") return `fetched ${item.relPath} ${formatBytes(bytes)}`;
  if (outcome === "revised") return `revised ${item.relPath} ${formatBytes(bytes)} (the bucket rewrote it)`;
  return downloaded ? `unchanged ${item.relPath} (downloaded again: the same sha256; its validators are recorded)` : `unchanged ${item.relPath} (304 Not Modified)`;
}

/**
 * One file. One held intact is asked for with its validators (a 304 is unchanged); one held without validators (a lock
 * file written before they were recorded) or not intact is downloaded whole, and unchanged when its sha256 is the one
 * recorded. A download that lands outside the folder and holds the very bytes held is dropped there.
 */
async function fetchOne(item: FetchItem, run: FetchRun): Promise<Fetched> {
  const dest = path.join(run.folder, ...item.relPath.split("/"));
  const held = run.entries.get(item.relPath);
  const intact = held !== undefined && (await isIntact(dest, held));
  // A killed run may have left a partial download beside the good file.
  if (intact) await rm(`${dest}.part`, { force: true });
  const landing = run.landing(item);
  const notFound = `no such ${item.annual ? "year" : "day"} of ${item.variable.silo} in the bucket`;
  const head = item.annual ? HDF5_SIGNATURE : TIFF_SIGNATURE;
  const conditions = intact ? toConditions(held) : undefined;
  const result = await download({ url: item.url, file: landing, label: item.relPath, held: conditions, head, notFound }, { retries: run.retries, backoffMs: run.backoffMs, stallMs: run.stallMs, log: run.log });
  if (result.unchanged) return { item, outcome: "unchanged", entry: null, landed: null, downloaded: false, bytes: 0 };
  const validators = { ...(result.etag ? { etag: result.etag } : {}), ...(result.lastModified ? { last_modified: result.lastModified } : {}) };
  const entry: LockEntry = { path: item.relPath, url: item.url, bytes: result.bytes, sha256: result.sha256, ...validators };
  const outcome = held === undefined ? "added" : held.sha256 === result.sha256 ? "unchanged" : "revised";
  const fetched: Fetched = { item, outcome, entry, landed: landing === dest ? null : landing, downloaded: true, bytes: result.bytes };
  if (fetched.landed !== null && outcome === "unchanged" && intact) {
    await rm(landing, { force: true });
    return { ...fetched, landed: null };
  }
  return fetched;
}

/** The conditional request for a copy held: If-None-Match with its ETag, else If-Modified-Since with its Last-Modified. */
function toConditions(held: LockEntry): { etag?: string; lastModified?: string } | undefined {
  if (held.etag) return { etag: held.etag };
  if (held.last_modified) return { lastModified: held.last_modified };
  return undefined;
}

/** Takes the sources folder's lock for a fetch or an update (the dist's kind of lock, on a file of its own), waiting as `options` allows. */
export function lockSources(folder: string, writer: "fetch" | "update", options: LockOptions = {}): Promise<() => Promise<void>> {
  return lockFolder(folder, SOURCES_LOCK, writer, options);
}

/** The tuning of a fetch, checked: 4 at once, 4 retries from 500 ms, unless given. */
export function toFetchTuning(options: Partial<FetchTuning>): FetchTuning {
  const concurrency = options.concurrency ?? 4;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new FetchError("concurrency", STAGE, `${concurrency} is not a whole number >= 1`);
  }
  const retries = options.retries ?? 4;
  if (!Number.isInteger(retries) || retries < 0) {
    throw new FetchError("retries", STAGE, `${retries} is not a whole number >= 0`);
  }
  const backoffMs = options.backoffMs ?? 500;
  if (!Number.isFinite(backoffMs) || backoffMs < 0) {
    throw new FetchError("backoffMs", STAGE, `${backoffMs} is not a number of milliseconds >= 0`);
  }
  const stallMs = options.stallMs;
  if (stallMs !== undefined && !(Number.isFinite(stallMs) && stallMs > 0)) {
    throw new FetchError("stallMs", STAGE, `${stallMs} is not a number of milliseconds > 0`);
  }
  return { concurrency, retries, backoffMs, stallMs };
}

function toFetchConfig(options: FetchOptions): FetchConfig {
  if (typeof options.folder !== "string" || options.folder === "") {
    throw new FetchError("folder", STAGE, "missing; give the folder the SILO files are mirrored into");
  }
  const tuning = toFetchTuning(options);
  const log = options.log ?? (() => undefined);
  const items = options.years !== undefined ? listYearItems(options) : listDayItems(options);
  // a variable SILO starts later (evap_pan, mslp) has no file before its first date: never asked for, and said so
  for (const v of listVariables(options)) {
    const asked = options.years !== undefined ? `${parseYears(options.years)[0]}-01-01` : parseDate("from", options.from);
    if (asked < v.firstDate) log(`${v.silo} starts on ${v.firstDate} (SILO's first date of it): nothing before it is asked for`);
  }
  return { ...tuning, items, folder: options.folder, log };
}

function listDayItems(options: FetchOptions): FetchItem[] {
  const from = parseDate("from", options.from);
  const to = parseDate("to", options.to);
  if (from > to) {
    throw new FetchError("from", STAGE, `${options.from} is after to ${options.to}; give from <= to`);
  }
  const baseUrl = dailyBaseUrl(options.baseUrl);
  const dates = listDates(from, to);
  return listVariables(options).flatMap((v) => dates.filter((date) => date >= v.firstDate).map((date) => toDayItem(v, date, baseUrl)));
}

function listYearItems(options: FetchOptions): FetchItem[] {
  if (options.from !== undefined || options.to !== undefined) {
    throw new FetchError("years", STAGE, "give either FROM and TO (daily files) or YEARS (annual files), not both");
  }
  const baseUrl = annualBaseUrl(options.annualBaseUrl);
  const years = parseYears(options.years!);
  return listVariables(options).flatMap((v) => years.filter((year) => `${year}-12-31` >= v.firstDate).map((year) => toYearItem(v, year, baseUrl)));
}

/** A day's GeoTIFF of a variable, from the bucket's daily folder at `baseUrl`. */
export function toDayItem(variable: Variable, date: string, baseUrl: string): FetchItem {
  const relPath = dateToMemberPath(date, variable);
  return { variable, key: `${variable.silo} ${date}`, relPath, url: `${baseUrl}/${variable.silo}/${relPath}`, annual: false };
}

/** A year's NetCDF file of a variable, from the bucket's annual folder at `baseUrl`. */
export function toYearItem(variable: Variable, year: number, baseUrl: string): FetchItem {
  const relPath = yearToMemberPath(year, variable);
  return { variable, key: `${variable.silo} ${year}`, relPath, url: `${baseUrl}/${variable.silo}/${relPath}`, annual: true };
}

/** The bucket's daily folder: the option, else SILO_BASE_URL, else SILO's. */
export function dailyBaseUrl(given?: string): string {
  return checkBaseUrl(given, "SILO_BASE_URL", "baseUrl", DEFAULT_SILO_BASE_URL);
}

/** The bucket's annual folder: the option, else SILO_ANNUAL_BASE_URL, else SILO's. */
export function annualBaseUrl(given?: string): string {
  return checkBaseUrl(given, "SILO_ANNUAL_BASE_URL", "annualBaseUrl", DEFAULT_SILO_ANNUAL_BASE_URL);
}

function listVariables(options: FetchOptions): readonly Variable[] {
  if (options.variables !== undefined && options.variables.length === 0) {
    throw new FetchError("variables", STAGE, `none given; give some of ${VARIABLES.map((v) => v.silo).join(", ")}, comma-separated (VARIABLES=max_temp,daily_rain)`);
  }
  return options.variables ?? VARIABLES;
}

/** "max_temp,daily_rain" (SILO or API names) -> the variables, each once, in the order given; unknown names stop. */
export function parseVariables(spec: string): Variable[] {
  const out: Variable[] = [];
  for (const name of spec.split(",").map((n) => n.trim()).filter(Boolean)) {
    const variable = findVariable(name);
    if (!variable) throw new FetchError("VARIABLES", STAGE, `"${name}" is not a SILO variable this archive publishes; known: ${VARIABLES.map((v) => v.silo).join(", ")}`);
    if (!out.includes(variable)) out.push(variable);
  }
  return listVariables({ folder: "", variables: out }) as Variable[];
}

function checkBaseUrl(given: string | undefined, variable: string, option: string, fallback: string): string {
  const baseUrl = given ?? (process.env[variable] || fallback);
  if (!isHttpUrl(baseUrl)) {
    throw new FetchError(given === undefined ? variable : option, STAGE, `${JSON.stringify(baseUrl)} is not an http(s) URL`);
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
      throw new FetchError("years", STAGE, `${JSON.stringify(part.trim())} is not a year or range of years in ${FIRST_YEAR}..${last}; give YEARS=1889-${last}, YEARS=2003 or YEARS=2003,2005-2007`);
    }
    for (let y = first; y <= end; y++) years.add(y);
  }
  return [...years].sort((a, b) => a - b);
}

// A calendar date checked by arithmetic, so 2003-02-29 fails instead of rolling into March.
function parseDate(name: string, value: unknown): string {
  if (typeof value === "string" && isCalendarDate(value)) return value;
  throw new FetchError(name, STAGE, `${JSON.stringify(value)} is not a calendar date; give YYYY-MM-DD`);
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
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
