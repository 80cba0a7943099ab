// The publish's memory of its sources folder (SOURCES/.publish-cache.json): the size, times and sha256 of each
// file it read (and the days inside each annual file), and which index pages each variable's years and months
// became. A daily publish then reads only new and changed files and takes the base version's untouched years and
// months whole, so its cost does not grow with the archive. `REHASH=1` (publish --rehash) trusts none of it.

import { type Stats, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { sha256Hex } from "../../format/hash.js";
import type { SourceEntry } from "../../format/records.js";
import type { IndexNode } from "../../format/version-index.js";
import type { SiloFile } from "../ingest/discover.js";
import { describeError } from "../errors.js";
import { writeFileAtomic } from "../dist/files.js";

export const SOURCE_CACHE_FILE = ".publish-cache.json";
const CACHE_FORMAT = 2;
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
    private readonly file: string,
    private readonly stamps: Map<string, Stamp & { lookedAtMs: number }>,
    private files: Record<string, CachedFile>,
    private nodes: Record<string, CachedNode>,
  ) {}

  /** Stats every file of the folder (following links) and loads what a previous publish remembered, unless `rehash`. */
  static async open(folder: string, files: SiloFile[], rehash: boolean): Promise<SourceCache> {
    const stamps = new Map<string, Stamp & { lookedAtMs: number }>();
    // one synchronous stat after another: 20,000 of them take a tenth of the time their promises would (nothing
    // else waits on this thread during a publish)
    for (const f of files) {
      const s = statOrNull(f.path);
      if (s) stamps.set(f.memberPath, { size: s.size, mtimeMs: s.mtimeMs, ctimeMs: s.ctimeMs, ino: s.ino, lookedAtMs: Date.now() });
    }
    const file = join(folder, SOURCE_CACHE_FILE);
    const body = rehash ? null : await readCache(file);
    return new SourceCache(file, stamps, body?.files ?? {}, body?.nodes ?? {});
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
   * keeps its months' entries; the pages of the others are read (one small year page each).
   */
  async recordNodes(scope: string, years: IndexNode[], fingerprints: Map<string, string>, readMonths: (year: IndexNode) => Promise<IndexNode[]>): Promise<void> {
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
      const months = kept ? (monthsByYear.get(year.key) ?? []) : (await readMonths(year)).map((m) => ({ key: m.key, page: m.ref.sha256 }));
      for (const { key, page } of months) {
        const monthFingerprint = fingerprints.get(key);
        if (monthFingerprint) nodes[prefix + key] = { fingerprint: monthFingerprint, page };
      }
    }
    this.nodes = nodes;
  }

  /** Writes what this publish learned (files no longer in the folder are forgotten); a read-only folder only costs the next publish a re-read. */
  async save(): Promise<string | null> {
    const files = Object.fromEntries(Object.entries(this.files).filter(([path]) => this.stamps.has(path)).sort(([a], [b]) => (a < b ? -1 : 1)));
    const body: CacheBody = { format: CACHE_FORMAT, files, nodes: this.nodes };
    try {
      await writeFileAtomic(this.file, `${JSON.stringify(body)}\n`);
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

async function readCache(file: string): Promise<CacheBody | null> {
  const text = await readFile(file, "utf8").catch(() => null);
  if (text === null) return null;
  try {
    const body = JSON.parse(text) as CacheBody;
    // anything unexpected is forgotten, never trusted: the cost is one full read
    return body.format === CACHE_FORMAT && typeof body.files === "object" && typeof body.nodes === "object" ? body : null;
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
