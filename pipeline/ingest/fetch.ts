// make fetch: SILO files of any variables mirrored from the public bucket into a local folder, recorded in
// silo.lock.json as each comes: daily GeoTIFFs (FROM..TO) and annual NetCDF files (YEARS), through the fetch engine
// make update shares (fetch-engine.ts: conditional requests, the sources folder's lock).

import path from "node:path";
import { isCalendarDate, listDates } from "../../format/dates.js";
import { type Variable, VARIABLES, findVariable } from "../../format/variables.js";
import { FetchError, describeError } from "../errors.js";
import type { LockOptions } from "../files/lock-file.js";
import { FetchEngine, type FetchItem, type Fetched, type HeldSources, describeFailures } from "./fetch-engine.js";
import { LOCK_FILE, type LockEntry, writeLock } from "./silo-lock.js";

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

/** The first year SILO's gridded archive holds. */
const FIRST_YEAR = 1889;
const STAGE = "fetch";
const LOCK_SAVE_MS = 2000;

interface FetchConfig {
  engine: FetchEngine;
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
  const sources = await config.engine.hold(config.folder, "fetch", options.lock);
  try {
    for (const line of sources.recovered) config.log(line);
    return await fetchInPlace(config, sources);
  } finally {
    await sources.release();
  }
}

async function fetchInPlace(config: FetchConfig, sources: HeldSources): Promise<FetchReport> {
  const lockPath = path.join(config.folder, LOCK_FILE);
  const lock = new LockWriter(lockPath, sources.entries);
  const place = (item: FetchItem) => path.join(config.folder, ...item.relPath.split("/"));
  let recorded = false;
  const record = async ({ item, entry }: Fetched) => {
    if (!entry) return;
    lock.entries.set(item.relPath, entry);
    recorded = true;
    await lock.save();
  };
  let outcome: Awaited<ReturnType<FetchEngine["fetch"]>>;
  try {
    // only a failed lock write escapes the engine's fetch: without it resume is unsafe, so no new file is taken
    outcome = await config.engine.fetch(config.items, sources, { place, log: config.log, onFetched: record });
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

function toReport(fetched: Fetched[]): FetchReport {
  const pick = (outcome: Fetched["outcome"]) => fetched.filter((f) => f.outcome === outcome).map((f) => f.item.relPath).sort();
  const downloaded = fetched.filter((f) => f.downloaded);
  return { added: pick("added"), revised: pick("revised"), unchanged: pick("unchanged"), downloads: downloaded.length, bytes: downloaded.reduce((n, f) => n + f.bytes, 0) };
}

function toFetchConfig(options: FetchOptions): FetchConfig {
  if (typeof options.folder !== "string" || options.folder === "") {
    throw new FetchError("folder", STAGE, "missing; give the folder the SILO files are mirrored into");
  }
  const { baseUrl, annualBaseUrl, concurrency, retries, backoffMs, stallMs } = options;
  const engine = new FetchEngine({ baseUrl, annualBaseUrl, tuning: { concurrency, retries, backoffMs, stallMs } });
  const log = options.log ?? (() => undefined);
  const items = options.years !== undefined ? listYearItems(options, engine) : listDayItems(options, engine);
  // a variable SILO starts later (evap_pan, mslp) has no file before its first date: never asked for, and said so
  for (const v of listVariables(options)) {
    const asked = options.years !== undefined ? `${parseYears(options.years)[0]}-01-01` : parseDate("from", options.from);
    if (asked < v.firstDate) log(`${v.silo} starts on ${v.firstDate} (SILO's first date of it): nothing before it is asked for`);
  }
  return { engine, items, folder: options.folder, log };
}

function listDayItems(options: FetchOptions, engine: FetchEngine): FetchItem[] {
  const from = parseDate("from", options.from);
  const to = parseDate("to", options.to);
  if (from > to) {
    throw new FetchError("from", STAGE, `${options.from} is after to ${options.to}; give from <= to`);
  }
  const dates = listDates(from, to);
  return listVariables(options).flatMap((v) => dates.filter((date) => date >= v.firstDate).map((date) => engine.day(v, date)));
}

function listYearItems(options: FetchOptions, engine: FetchEngine): FetchItem[] {
  if (options.from !== undefined || options.to !== undefined) {
    throw new FetchError("years", STAGE, "give either FROM and TO (daily files) or YEARS (annual files), not both");
  }
  const years = parseYears(options.years!);
  return listVariables(options).flatMap((v) => years.filter((year) => `${year}-12-31` >= v.firstDate).map((year) => engine.year(v, year)));
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
