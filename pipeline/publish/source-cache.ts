// The publish's memory of a sources folder: the size, times and sha256 of each file it read (and the days inside each
// annual file), and which index pages each variable's years and months became. A daily publish then reads only new and
// changed files and takes the base version's untouched years and months whole, so its cost does not grow with the
// archive. `REHASH=1` (publish --rehash) trusts none of it.
//
// It lives in the dist, beside the lock and the journal (DIST/.publish-cache/<sha256 of the folder's real path>.json,
// never served: format/objects.ts isReaderFile), not in the folder: a publish never writes into the folder it reads (a
// read-only or shared mirror of SILO's bucket), the pages it remembers are this dist's, and the dist's lock keeps two
// publishes from writing it at once. A folder remembered elsewhere before costs one publish that hashes every file.

import { type Stats, realpathSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { sha256Hex } from "../../format/hash.js";
import type { SourceEntry } from "../../format/records.js";
import type { IndexNode } from "../../format/version-index.js";
import type { SiloFile } from "../ingest/discover.js";
import { describeError } from "../errors.js";
import type { ObjectStore } from "../store/objects.js";

/** The dist's folder of the publish's memories, one file per sources folder. */
export const SOURCE_CACHE_DIR = ".publish-cache";
const CACHE_FORMAT = 3;
/**
 * A file whose modification or change time is this close to the moment it was looked at may change again within
 * the same clock tick (coarse filesystem clocks tick once a second or two), unseen by its times: it is not
 * remembered, and is read again by the next publish.
 */
const RACY_MS = 2000;

/** What identifies a file's bytes without reading them: any write changes the size or the change time. */
interface Stamp {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
}

/**
 * What the publish knows of a file's bytes: their sha256, for an annual file the date of each time index, and for a
 * daily file the cells it decoded to (so a file SILO rewrote with the same cells is not decoded night after night).
 */
export interface KnownFile {
  sha256: string;
  dates?: string[];
  cells?: string;
}

/**
 * One remembered file, as a tuple to keep the file small (50,000 of them are read and written by every publish):
 * size, mtimeMs, ctimeMs, ino, sha256, for an annual file its dates as ranges of consecutive days [first, count],
 * and for a daily file the cells it decoded to (window and cells sha256).
 */
type CachedFile = [number, number, number, number, string, ([string, number][] | null)?, string?];

interface CachedNode {
  /** the sha256 of the folder's source entries for the node (see nodeFingerprints) */
  fingerprint: string;
  /** the sha256 of the year or month page they became */
  page: string;
}

interface CacheBody {
  format: number;
  /** the sources folder remembered (its real path): a file found under another folder's name is not trusted */
  folder: string;
  files: Record<string, CachedFile>;
  /** by `<variable> <YYYY or YYYY-MM>`: each variable's files make versions of their own */
  nodes: Record<string, CachedNode>;
}

/** A node key: the variable (SILO name) and the year or month. Keys of caches written before variables had none. */
const NODE_KEY = /^[a-z][a-z0-9_]* \d{4}(-\d{2})?$/;

export class SourceCache {
  /** member paths of the files this publish read (hashed, inspected or decoded) */
  readonly read = new Set<string>();

  private constructor(
    /** the sources folder's real path */
    private readonly folder: string,
    /** the memory's path in the dist */
    private readonly file: string,
    private readonly stamps: Map<string, Stamp & { lookedAtMs: number }>,
    private files: Record<string, CachedFile>,
    private nodes: Record<string, CachedNode>,
    /** the memory as read (null: none): an unchanged memory is not written again */
    private readonly loaded: string | null,
  ) {}

  /**
   * Stats every file of `folder` (following links) and loads what a previous publish into `dist` remembered of it,
   * unless `rehash`.
   */
  static async open(dist: string, folder: string, files: SiloFile[], rehash: boolean): Promise<SourceCache> {
    const stamps = new Map<string, Stamp & { lookedAtMs: number }>();
    // one synchronous stat after another: 20,000 of them take a tenth of the time their promises would (nothing
    // else waits on this thread during a publish)
    for (const f of files) {
      const s = statOrNull(f.path);
      if (s) stamps.set(f.memberPath, { size: s.size, mtimeMs: s.mtimeMs, ctimeMs: s.ctimeMs, ino: s.ino, lookedAtMs: Date.now() });
    }
    const real = realFolder(folder);
    const file = sourceCachePath(dist, real);
    const text = rehash ? null : await readFile(file, "utf8").catch(() => null);
    const body = text === null ? null : parseCache(text, real);
    return new SourceCache(real, file, stamps, body?.files ?? {}, body?.nodes ?? {}, body ? text : null);
  }

  /** The sha256 (and dates) of a file whose size and times are those a previous publish remembered; else null. */
  known(file: SiloFile): KnownFile | null {
    const now = this.stamps.get(file.memberPath);
    const cached = this.files[file.memberPath];
    if (!now || !Array.isArray(cached) || !isSameStamp(now, cached)) return null;
    const [, , , , sha256, dates, cells] = cached;
    return { sha256, ...(dates ? { dates: expandRanges(dates) } : {}), ...(cells ? { cells } : {}) };
  }

  /** Remembers what a read of the file found (unless its times are too fresh to vouch for the bytes). */
  remember(file: SiloFile, known: KnownFile): void {
    this.read.add(file.memberPath);
    const stamp = this.stamps.get(file.memberPath);
    if (!stamp || stamp.lookedAtMs - Math.max(stamp.mtimeMs, stamp.ctimeMs) < RACY_MS) return;
    const { size, mtimeMs, ctimeMs, ino } = stamp;
    const cached: CachedFile = [size, mtimeMs, ctimeMs, ino, known.sha256];
    if (known.dates) cached.push(compressRanges(known.dates));
    else if (known.cells) cached.push(null, known.cells);
    this.files[file.memberPath] = cached;
  }

  /**
   * Whether the base version's node for a year or month holds exactly what the folder's files of that variable
   * (`scope`) and node make: the folder's fingerprint is the one a previous publish turned into that very page.
   */
  isUnchanged(scope: string, key: string, fingerprint: string | undefined, baseNode: IndexNode): boolean {
    const cached = this.nodes[`${scope} ${key}`];
    return fingerprint !== undefined && cached?.fingerprint === fingerprint && cached.page === baseNode.ref.sha256;
  }

  /**
   * After a publish: which page each year and month of the folder became in the new version. A year kept whole
   * keeps its months' entries; the others' months are those the publish wrote into their year pages (`monthsOf`,
   * kept from the writing: nothing is read back from the dist).
   */
  recordNodes(scope: string, years: IndexNode[], fingerprints: Map<string, string>, monthsOf: ReadonlyMap<string, IndexNode[]>): void {
    const prefix = `${scope} `;
    const nodes: Record<string, CachedNode> = {};
    // this variable's months as remembered, by year: a year kept whole keeps them without a scan of every node
    const monthsByYear = new Map<string, { key: string; page: string }[]>();
    for (const [key, node] of Object.entries(this.nodes)) {
      if (!NODE_KEY.test(key)) continue;
      if (!key.startsWith(prefix)) nodes[key] = node;
      else if (key.length === prefix.length + 7) {
        const month = key.slice(prefix.length);
        if (fingerprints.get(month) === node.fingerprint) monthsByYear.set(month.slice(0, 4), [...(monthsByYear.get(month.slice(0, 4)) ?? []), { key: month, page: node.page }]);
      }
    }
    for (const year of years) {
      const fingerprint = fingerprints.get(year.key);
      if (!fingerprint) continue;
      const kept = this.isUnchanged(scope, year.key, fingerprint, year);
      nodes[prefix + year.key] = { fingerprint, page: year.ref.sha256 };
      // a year not kept is one whose page this publish wrote: its months are the ones written into it
      const months = kept ? (monthsByYear.get(year.key) ?? []) : (monthsOf.get(year.key) ?? []).map((m) => ({ key: m.key, page: m.ref.sha256 }));
      for (const { key, page } of months) {
        const monthFingerprint = fingerprints.get(key);
        if (monthFingerprint) nodes[prefix + key] = { fingerprint: monthFingerprint, page };
      }
    }
    this.nodes = nodes;
  }

  /**
   * Writes what this publish learned (files no longer in the folder are forgotten) into the dist, through the store's
   * journal so a kill leaves no temporary file. It never fails the publish: a memory that cannot be written only costs
   * the next publish a re-read, said in the returned line.
   */
  async save(store: ObjectStore): Promise<string | null> {
    const files = Object.fromEntries(Object.entries(this.files).filter(([path]) => this.stamps.has(path)).sort(([a], [b]) => (a < b ? -1 : 1)));
    const body: CacheBody = { format: CACHE_FORMAT, folder: this.folder, files, nodes: this.nodes };
    const text = `${JSON.stringify(body)}\n`;
    if (text === this.loaded) return null; // nothing learned: a publish of an unchanged folder writes nothing
    try {
      await store.replaceWriterFile(join(SOURCE_CACHE_DIR, basename(this.file)), text);
      return null;
    } catch (err) {
      return `cannot write ${this.file} (${describeError(err)}): the next publish reads and hashes every file again`;
    }
  }
}

/** A file's stat, or null when it cannot be had (the file is then read and hashed as if new). */
function statOrNull(path: string): Stats | null {
  try {
    return statSync(path, { throwIfNoEntry: false }) ?? null;
  } catch {
    return null;
  }
}

/** A sources folder's real path (links followed), so one folder has one memory however it is named. */
function realFolder(folder: string): string {
  try {
    return realpathSync(folder);
  } catch {
    return resolve(folder);
  }
}

/** Where the publish's memory of `folder` lives in `dist`: named by the sha256 of the folder's real path. */
export function sourceCachePath(dist: string, folder: string): string {
  return join(dist, SOURCE_CACHE_DIR, `${sha256Hex(realFolder(folder))}.json`);
}

function parseCache(text: string, folder: string): CacheBody | null {
  try {
    const body = JSON.parse(text) as CacheBody;
    // anything unexpected is forgotten, never trusted: the cost is one full read
    const usable = body.format === CACHE_FORMAT && body.folder === folder && typeof body.files === "object" && typeof body.nodes === "object";
    return usable ? body : null;
  } catch {
    return null;
  }
}

function isSameStamp(a: Stamp, [size, mtimeMs, ctimeMs, ino]: CachedFile): boolean {
  return a.size === size && a.mtimeMs === mtimeMs && a.ctimeMs === ctimeMs && a.ino === ino;
}

function compressRanges(dates: string[]): [string, number][] {
  const ranges: [string, number][] = [];
  let previous = NaN;
  for (const date of dates) {
    const day = Date.parse(date) / 86_400_000;
    if (day === previous + 1) ranges[ranges.length - 1][1]++;
    else ranges.push([date, 1]);
    previous = day;
  }
  return ranges;
}

function expandRanges(ranges: [string, number][]): string[] {
  return ranges.flatMap(([first, count]) => Array.from({ length: count }, (_, i) => new Date(Date.parse(first) + i * 86_400_000).toISOString().slice(0, 10)));
}

/** A day of a node (a year or month of the folder) and the source entries a publish would record for it. */
export interface NodeDay {
  date: string;
  entries: (SourceEntry | null)[];
}

/**
 * The fingerprint of each year (YYYY) and month (YYYY-MM) of the folder: the sha256 of its dates and of the
 * source entries they would get (which name each file's sha256), after `salt` (the transform and the both-forms
 * rule). Absent for a node holding a file not hashed yet (null entry).
 */
export function nodeFingerprints(days: NodeDay[], salt: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const length of [4, 7]) {
    const groups = new Map<string, NodeDay[]>();
    for (const day of days) {
      const key = day.date.slice(0, length);
      const group = groups.get(key);
      if (group) group.push(day);
      else groups.set(key, [day]);
    }
    for (const [key, group] of groups) {
      if (group.some((d) => d.entries.includes(null))) continue;
      out.set(key, sha256Hex(`${salt}\n${group.map((d) => `${d.date} ${JSON.stringify(d.entries)}`).join("\n")}`));
    }
  }
  return out;
}
