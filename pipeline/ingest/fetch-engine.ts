// The fetch engine make fetch and make update share: the bucket's files of any variable, day or year, asked for into a
// sources folder held under its lock (SOURCES/.sources.lock, one command at a time), after what a killed update left
// is made right. SILO rewrites recent files in place every night, sometimes at the same size, so a file already held is
// asked for again with a conditional request (its recorded ETag, else its Last-Modified): a 304 costs no download, a
// rewritten file is downloaded, checked by its first bytes and recorded. Each file comes through the pipeline's one
// downloader (pipeline/download.ts: retries, stall watch, .part file).

import { mkdir, rm, stat } from "node:fs/promises";
import path from "node:path";
import type { Variable } from "../../format/variables.js";
import { dateToMemberPath, SILO, yearToMemberPath } from "../../sources/silo.js";
import { type FileSignature, download, runConcurrently } from "../download.js";
import { FetchError, describeError } from "../errors.js";
import { type FolderLock, type LockOptions, lockFolder } from "../files/lock-file.js";
import { hashFile } from "../files/write.js";
import { formatBytes } from "../progress.js";
import { LOCK_FILE, type LockEntry, readLock } from "./silo-lock.js";
import { finishStaged } from "./staging.js";

// docs/contract.md §6.1: one file per day and variable under <base>/<var>/<YYYY>/<YYYYMMDD>.<var>.tif, one per
// year under <annual base>/<var>/<YYYY>.<var>.nc.
export const DEFAULT_SILO_BASE_URL = SILO.dailyBaseUrl;
export const DEFAULT_SILO_ANNUAL_BASE_URL = SILO.annualBaseUrl;
/** The sources folder's lock (flock, as the dist's): one make fetch or make update of a folder at a time. */
export const SOURCES_LOCK: FolderLock = { name: ".sources.lock", noun: "sources folder", elsewhere: "fetch into a local folder and copy it there" };

const STAGE = "fetch";

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

/** Where a command's downloads land, and who hears of each file. */
export interface Landing {
  /** where an item's download goes: its place in the folder (make fetch) or a staging folder (make update) */
  place: (item: FetchItem) => string;
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

/** One file asked for that did not come, and why. */
export interface FetchFailure {
  item: FetchItem;
  reason: string;
}

/** Where to fetch from and how hard: the bucket's folders (each the option, else its environment variable, else SILO's). */
export interface FetchSpec {
  baseUrl?: string;
  annualBaseUrl?: string;
  tuning?: Partial<FetchTuning>;
}

/** A sources folder held under its lock for one command, and what it holds. */
export interface HeldSources {
  folder: string;
  /** the lock file's entries: the files the folder holds, with their sha256 and validators */
  entries: Map<string, LockEntry>;
  /** what a killed update had left, made right before anything else (a line each) */
  recovered: string[];
  release: () => Promise<void>;
}

/**
 * The fetch engine of make fetch and make update: the bucket's files of any day or year (each folder's URL checked
 * when first asked for), and a sources folder held while they are fetched into it.
 */
export class FetchEngine {
  readonly tuning: FetchTuning;
  private dailyUrl: string | null = null;
  private annualUrl: string | null = null;

  /** The tuning is checked at once; a folder's URL when a file of it is first asked for. */
  constructor(private readonly spec: FetchSpec) {
    this.tuning = toFetchTuning(spec.tuning ?? {});
  }

  /** A day's GeoTIFF of a variable, in the bucket's daily folder. */
  day(variable: Variable, date: string): FetchItem {
    this.dailyUrl ??= checkBaseUrl(this.spec.baseUrl, "SILO_BASE_URL", "baseUrl", DEFAULT_SILO_BASE_URL);
    const relPath = dateToMemberPath(date, variable);
    return { variable, key: `${variable.silo} ${date}`, relPath, url: `${this.dailyUrl}/${variable.silo}/${relPath}`, annual: false };
  }

  /** A year's NetCDF file of a variable, in the bucket's annual folder. */
  year(variable: Variable, year: number): FetchItem {
    this.annualUrl ??= checkBaseUrl(this.spec.annualBaseUrl, "SILO_ANNUAL_BASE_URL", "annualBaseUrl", DEFAULT_SILO_ANNUAL_BASE_URL);
    const relPath = yearToMemberPath(year, variable);
    return { variable, key: `${variable.silo} ${year}`, relPath, url: `${this.annualUrl}/${variable.silo}/${relPath}`, annual: true };
  }

  /**
   * The sources folder held for `writer`: made if missing, its lock taken (waiting as `lock` allows), what a killed
   * update left finished (staging.ts), its lock file read. The caller releases it.
   */
  async hold(folder: string, writer: "fetch" | "update", lock: LockOptions = {}): Promise<HeldSources> {
    await mkdir(folder, { recursive: true });
    const release = await lockFolder(folder, SOURCES_LOCK, writer, lock);
    try {
      const recovered = await finishStaged(folder);
      const entries = await readLock(path.join(folder, LOCK_FILE));
      return { folder, entries, recovered, release };
    } catch (err) {
      await release();
      throw err;
    }
  }

  /** Every item asked for, `concurrency` at a time, landing where `landing` says: what came, and what failed (each with its reason). */
  async fetch(items: FetchItem[], sources: HeldSources, landing: Landing): Promise<{ fetched: Fetched[]; failures: FetchFailure[] }> {
    const fetched: Fetched[] = [];
    const failures: FetchFailure[] = [];
    await runConcurrently(items, this.tuning.concurrency, async (item) => {
      let done: Fetched;
      try {
        done = await fetchOne(item, sources, landing, this.tuning);
      } catch (err) {
        const reason = describeError(err);
        failures.push({ item, reason });
        landing.log(`failed ${item.relPath}: ${reason}`);
        return;
      }
      fetched.push(done);
      await landing.onFetched?.(done);
      landing.log(describeFetched(done));
    });
    return { fetched, failures };
  }
}

/** "max_temp 2003-01-02 <url>: <reason>" for each failure, in key order. */
export function describeFailures(failures: FetchFailure[]): string[] {
  return [...failures].sort((a, b) => a.item.key.localeCompare(b.item.key)).map((f) => `${f.item.key} ${f.item.url}: ${f.reason}`);
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
async function fetchOne(item: FetchItem, sources: HeldSources, landing: Landing, tuning: FetchTuning): Promise<Fetched> {
  const dest = path.join(sources.folder, ...item.relPath.split("/"));
  const held = sources.entries.get(item.relPath);
  const intact = held !== undefined && (await isIntact(dest, held));
  // A killed run may have left a partial download beside the good file.
  if (intact) await rm(`${dest}.part`, { force: true });
  const place = landing.place(item);
  const notFound = `no such ${item.annual ? "year" : "day"} of ${item.variable.silo} in the bucket`;
  const head = item.annual ? HDF5_SIGNATURE : TIFF_SIGNATURE;
  const conditions = intact ? toConditions(held) : undefined;
  const { retries, backoffMs, stallMs } = tuning;
  const result = await download({ url: item.url, file: place, label: item.relPath, held: conditions, head, notFound }, { retries, backoffMs, stallMs, log: landing.log });
  if (result.unchanged) return { item, outcome: "unchanged", entry: null, landed: null, downloaded: false, bytes: 0 };
  const validators = { ...(result.etag ? { etag: result.etag } : {}), ...(result.lastModified ? { last_modified: result.lastModified } : {}) };
  const entry: LockEntry = { path: item.relPath, url: item.url, bytes: result.bytes, sha256: result.sha256, ...validators };
  const outcome = held === undefined ? "added" : held.sha256 === result.sha256 ? "unchanged" : "revised";
  const fetched: Fetched = { item, outcome, entry, landed: place === dest ? null : place, downloaded: true, bytes: result.bytes };
  if (fetched.landed !== null && outcome === "unchanged" && intact) {
    await rm(place, { force: true });
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

/** The tuning of a fetch, checked: 4 at once, 4 retries from 500 ms, unless given. */
function toFetchTuning(options: Partial<FetchTuning>): FetchTuning {
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

function checkBaseUrl(given: string | undefined, variable: string, option: string, fallback: string): string {
  const baseUrl = given ?? (process.env[variable] || fallback);
  if (!isHttpUrl(baseUrl)) {
    throw new FetchError(given === undefined ? variable : option, STAGE, `${JSON.stringify(baseUrl)} is not an http(s) URL`);
  }
  return baseUrl.replace(/\/+$/, "");
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
