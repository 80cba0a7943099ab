// `make prune`: the one command that removes published data (docs/contract.md §5: nothing a pin refers to
// disappears without a maintainer's explicit command). Two steps, as Icechunk expires snapshots and then
// collects garbage:
//
// 1. Expire: versions the retention rule does not keep leave the catalog. catalog.json is swapped for one
//    whose catalog tree holds the kept versions and whose publish manifest starts a new chain listing exactly
//    the files they reach; nothing is deleted yet, so a reader holding the previous catalog never finds a hole.
// 2. Collect: files under objects/ that the current catalog does not reach are recorded with the time they were
//    first found unreachable (.prune-pending.json), and deleted by a later prune once the grace period has
//    passed since then. Anything reachable again (republished meanwhile) is never deleted.

import { readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Archive } from "../../format/archive.js";
import { type CatalogLeaf, type Manifest } from "../../format/catalog.js";
import { lineageOf } from "../../format/entries.js";
import { CATALOG_FILE, type FileEntry, type Ref, objectPath } from "../../format/objects.js";
import type { Dataset } from "../../format/records.js";
import type { Snapshot } from "../../format/snapshot.js";
import type { MonthPage, YearPage } from "../../format/version-index.js";
import { openVersion } from "../../format/versions.js";
import { addToCatalog, readPublished, updateCandidates, writeCatalog } from "../store/catalog.js";
import { PruneError } from "../errors.js";
import { ObjectStore } from "../store/objects.js";
import { hashFile } from "../files/write.js";
import { type Pending, readPending, writePending } from "../store/pending.js";
import type { LockOptions } from "../files/lock-file.js";
import { lockDist } from "../store/lock.js";
import { DEFAULTS } from "../defaults.js";

const HOUR_MS = 3_600_000;

/** The retention rule (docs/publishing.md "Pruning"): what a maintainer states; every other version is dropped. */
export interface RetentionRule {
  /** keep every version published in the last `keepDays` days (KEEP_DAYS) */
  keepDays: number;
  /** ids kept whatever their age (a keep file, one id a line) */
  keepIds: Set<string>;
  /** false: drop no version, only collect what the catalog does not reach (a mirror following its origin) */
  dropVersions: boolean;
}

export interface PruneOptions {
  dist: string;
  rule: RetentionRule;
  /** unreachable files are deleted this long after they were first found unreachable (default: GRACE_HOURS's, pipeline/defaults.ts) */
  graceMs?: number;
  /** report only: change nothing */
  dryRun?: boolean;
  now?: Date;
  /** how long to wait for another writer of the dist (default: refuse at once), and where to say so */
  lock?: LockOptions;
}

export interface PruneReport {
  kept: Dataset[];
  dropped: Dataset[];
  /** files deleted now */
  deleted: { files: number; bytes: number };
  /** unreachable files waiting for their grace period, and when the first of them may go */
  waiting: { files: number; bytes: number; firstDueAt: string | null };
}

/**
 * Versions kept by the rule: the newest of each dataset, those published in the last keepDays days, the last
 * one of each calendar month (per dataset), and the listed ids.
 */
export function selectKept(records: Dataset[], rule: RetentionRule, now: Date): Set<string> {
  if (!rule.dropVersions) return new Set(records.map((r) => r.id));
  const kept = new Set<string>();
  const since = new Date(now.getTime() - rule.keepDays * 24 * HOUR_MS).toISOString();
  const newestBy = new Map<string, Dataset>();
  const newer = (a: Dataset, b: Dataset | undefined) => !b || (a.published_at ?? "") > (b.published_at ?? "") || ((a.published_at ?? "") === (b.published_at ?? "") && a.id < b.id);
  for (const r of records) {
    const published = r.published_at ?? "";
    if (published >= since || rule.keepIds.has(r.id)) kept.add(r.id);
    for (const key of [r.dataset_key, `${r.dataset_key} ${published.slice(0, 7)}`]) if (newer(r, newestBy.get(key))) newestBy.set(key, r);
  }
  for (const r of newestBy.values()) kept.add(r.id);
  return kept;
}

async function listRecords(snapshot: Snapshot): Promise<Dataset[]> {
  const root = await snapshot.root();
  const out: Dataset[] = [];
  for (const leaf of root.leaves) out.push(...(await snapshot.archive.readJson<CatalogLeaf>(leaf.ref)).datasets);
  return out;
}

/** Paths of every object the records reach: index trees down to day and series pieces, observation chunks. */
export async function reachFrom(archive: Archive, records: Dataset[]): Promise<Set<string>> {
  const reached = new Set<string>();
  const json = (ref: Ref) => {
    const path = objectPath(ref.sha256, "json");
    const fresh = !reached.has(path);
    reached.add(path);
    reached.add(`${path}.br`);
    return fresh;
  };
  for (const record of records) {
    if (!json(record.metadata.index)) continue;
    const view = await openVersion(archive, record);
    if (view.kind === "observation") {
      view.index.chunks.forEach(json);
      continue;
    }
    // a revised span or day reaches every piece of its lineage: a block or chunk lives while a kept version reaches it
    for (const span of view.index.series) {
      for (const piece of lineageOf(span)) reached.add(objectPath(piece.sha256, "ser"));
      if (!Array.isArray(span.sources)) json(span.sources);
    }
    for (const year of view.index.years) {
      if (!json(year.ref)) continue;
      for (const month of (await archive.readJson<YearPage>(year.ref)).months) {
        if (!json(month.ref)) continue;
        for (const day of (await archive.readJson<MonthPage>(month.ref)).days) for (const piece of lineageOf(day)) reached.add(objectPath(piece.sha256, "day"));
      }
    }
  }
  return reached;
}

/** Every file each manifest of the chain lists, newest entry of a path first, and the chain's manifests themselves. */
/** Every object `kept` reaches, and the explorer page catalog.json names. */
async function reachFromCatalog(snapshot: Snapshot, kept: Dataset[]): Promise<Set<string>> {
  const reached = await reachFrom(snapshot.archive, kept);
  if (snapshot.pointer.explorer) reached.add(objectPath(snapshot.pointer.explorer.sha256, "html"));
  return reached;
}

async function listManifestFiles(archive: Archive, newest: Ref): Promise<{ files: Map<string, FileEntry>; manifests: string[] }> {
  const files = new Map<string, FileEntry>();
  const manifests: string[] = [];
  for (let ref: Ref | null = newest; ref; ) {
    manifests.push(objectPath(ref.sha256, "json"));
    const manifest: Manifest = await archive.readJson<Manifest>(ref);
    for (const f of manifest.files) if (!files.has(f.path)) files.set(f.path, f);
    ref = manifest.previous;
  }
  return { files, manifests };
}

export async function prune(options: PruneOptions): Promise<PruneReport> {
  const unlock = options.dryRun ? async () => {} : await lockDist(options.dist, "prune", undefined, options.lock);
  try {
    return await pruneLocked(options);
  } finally {
    await unlock();
  }
}

/** The prune itself; the caller holds the dist lock (make sync runs the collect step under its own). */
export async function pruneLocked(options: PruneOptions): Promise<PruneReport> {
  const now = options.now ?? new Date();
  const snapshot = await readPublished(options.dist);
  if (!snapshot) throw new PruneError(join(options.dist, CATALOG_FILE), "prune", "is missing: there is nothing to prune");
  const records = await listRecords(snapshot);
  const keep = selectKept(records, options.rule, now);
  const kept = records.filter((r) => keep.has(r.id));
  const dropped = records.filter((r) => !keep.has(r.id));
  const current = dropped.length > 0 && !options.dryRun ? await expire(options.dist, snapshot, kept) : snapshot;
  const reachable = await reachFromCatalog(current, kept);
  // every manifest of the chain, not only the newest: verify and make sync walk them all
  const chain = await listManifestFiles(current.archive, current.pointer.manifest);
  for (const path of [...chain.files.keys(), ...chain.manifests]) reachable.add(path);
  const collected = await collect(options.dist, reachable, now, options.graceMs ?? DEFAULTS.graceHours * HOUR_MS, options.dryRun ?? false);
  return { kept, dropped, ...collected };
}

/** Step 1: a catalog of the kept versions, with a manifest that lists exactly the files they reach. */
async function expire(dist: string, previous: Snapshot, kept: Dataset[]): Promise<Snapshot> {
  const store = new ObjectStore(dist);
  const root = await addToCatalog(store, null, kept);
  const fresh = [];
  for (const record of kept) {
    const view = await openVersion(previous.archive, record);
    if (view.kind === "raster") fresh.push({ record, coverage: view.index.coverage });
  }
  const reached = await reachFromCatalog(previous, kept);
  const listed = (await listManifestFiles(previous.archive, previous.pointer.manifest)).files;
  // every object the kept versions and catalog.json reach, as the previous chain recorded it
  const files: FileEntry[] = [];
  for (const path of reached) {
    const entry = listed.get(path) ?? (await stat(join(dist, path)).then(async (s) => ({ path, size: s.size, sha256: await hashFile(join(dist, path)) }), () => null));
    if (entry) files.push(entry);
  }
  await writeCatalog(store, dist, null, { catalog: root, candidates: updateCandidates([], fresh), explorer: previous.pointer.explorer ?? null, kept: files });
  return (await readPublished(dist))!;
}

async function listObjectFiles(dist: string): Promise<string[]> {
  const out: string[] = [];
  for (const shard of await readdir(join(dist, "objects")).catch(() => [])) {
    for (const name of await readdir(join(dist, "objects", shard)).catch(() => [])) out.push(`objects/${shard}/${name}`);
  }
  return out;
}

/** Step 2: unreachable files wait out the grace period from when they were first found, then go. */
async function collect(dist: string, reachable: Set<string>, now: Date, graceMs: number, dryRun: boolean): Promise<Omit<PruneReport, "kept" | "dropped">> {
  const previous = await readPending(dist);
  const next: Pending = { since: {} };
  const report = { deleted: { files: 0, bytes: 0 }, waiting: { files: 0, bytes: 0, firstDueAt: null as string | null } };
  for (const path of await listObjectFiles(dist)) {
    if (reachable.has(path)) continue; // reachable again, or never unreachable: never deleted
    const since = previous.since[path] ?? now.toISOString();
    const due = new Date(new Date(since).getTime() + graceMs);
    const size = (await stat(join(dist, path))).size;
    if (due <= now) {
      if (!dryRun) await rm(join(dist, path), { force: true });
      report.deleted.files++;
      report.deleted.bytes += size;
      continue;
    }
    next.since[path] = since;
    report.waiting.files++;
    report.waiting.bytes += size;
    if (!report.waiting.firstDueAt || due.toISOString() < report.waiting.firstDueAt) report.waiting.firstDueAt = due.toISOString();
  }
  if (!dryRun) await writePending(dist, next);
  return report;
}
