// `make sync` (docs/mirrors.md "What make sync does"): makes or updates a local mirror from any static host holding a dist (the origin,
// another mirror, a CDN): the remote catalog.json, then its publish manifests back to the one the local copy already
// has (docs/format.md §3), then only the files it lacks, each downloaded and checked against the sha256 its verified
// manifest gives before it is placed, and catalog.json replaced last. A remote prune (a manifest chain that starts
// again) reaches the mirror only once its new catalog is in place, through the collect step of make prune
// (docs/publishing.md "What make prune does"), whose grace period keeps every file a reader of the previous catalog still needs.

import { mkdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { Archive, CatalogError } from "../../format/archive.js";
import type { Manifest } from "../../format/catalog.js";
import { HttpStorage } from "../../format/http-storage.js";
import { nodePlatform } from "../../format/local.js";
import { CATALOG_FILE, type FileEntry, type Ref, objectPath, parseObjectPath } from "../../format/objects.js";
import { IntegrityError, StorageError } from "../../format/storage.js";
import { toIssues, validatorFor } from "../../schemas/validate.js";
import { readPublished } from "../store/catalog.js";
import { type DownloadConfig, DownloadError, download, runConcurrently } from "../download.js";
import { SyncError, describeError } from "../errors.js";
import { writeFileAtomic } from "../files/write.js";
import type { LockOptions } from "../files/lock-file.js";
import { lockDist } from "../store/lock.js";
import { type Progress, formatBytes, formatTransfer } from "../progress.js";
import { PENDING_FILE } from "../store/pending.js";
import { type PruneReport, pruneLocked } from "./prune.js";
import { DEFAULTS } from "../defaults.js";

/** Files being received live here (on the dist's filesystem, so placing one is a rename); emptied by every sync. */
export const SYNC_TEMP_DIR = ".sync";
const STAGE = "sync";
const HOUR_MS = 3_600_000;

export interface SyncOptions {
  /** where the remote dist is served: the folder holding its catalog.json */
  from: string;
  dist: string;
  /** files downloaded at once (default: pipeline/defaults.ts) */
  concurrency?: number;
  /** attempts after the first for network trouble, truncation, 429 and 5xx (default 4), backing off from backoffMs (500) */
  retries?: number;
  backoffMs?: number;
  /**
   * run make prune's collect step (DROP_VERSIONS=0) once the new catalog is in place, when it starts a new manifest
   * chain (a prune upstream) or files wait for deletion (default true)
   */
  prune?: boolean;
  /** the collect step's grace period (default: GRACE_HOURS's, pipeline/defaults.ts) */
  graceMs?: number;
  now?: Date;
  progress?: Progress;
  /** how long to wait for another writer of the dist (default: refuse at once) */
  lock?: LockOptions;
}

export interface SyncReport {
  /** false: the local catalog.json already was the remote one, and nothing was read but it */
  changed: boolean;
  /** the remote catalog.json's sha256 */
  catalogSha256: string;
  /** publish manifests read from the remote (those newer than the local copy's) */
  manifests: number;
  /** files placed: what the manifests listed and the mirror lacked, and the manifests themselves */
  downloaded: FileEntry[];
  /** files the manifests listed that the mirror already held */
  held: number;
  /** the remote's manifest chain does not reach the local copy's: it was pruned (or is another dist) */
  newChain: boolean;
  /** the collect step's report, when it ran */
  pruned: PruneReport | null;
  /** HTTP requests sent and body bytes received */
  requests: number;
  bytes: number;
  ms: number;
}

interface SyncConfig extends Required<Omit<SyncOptions, "now" | "progress">> {
  now?: Date;
  progress: Progress;
}

const quiet: Progress = { line: () => {}, status: () => {}, done: () => {} };

function toSyncConfig(options: SyncOptions): SyncConfig {
  let url: URL | null = null;
  try {
    url = new URL(options.from);
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new SyncError(String(options.from), STAGE, "is not an http(s) URL; give FROM=<url of the folder holding catalog.json>");
  }
  return {
    from: options.from,
    dist: options.dist,
    concurrency: options.concurrency ?? DEFAULTS.syncConcurrency,
    retries: options.retries ?? 4,
    backoffMs: options.backoffMs ?? 500,
    prune: options.prune ?? true,
    graceMs: options.graceMs ?? DEFAULTS.graceHours * HOUR_MS,
    now: options.now,
    progress: options.progress ?? quiet,
    lock: options.lock ?? {},
  };
}

export async function sync(options: SyncOptions): Promise<SyncReport> {
  const config = toSyncConfig(options);
  await mkdir(config.dist, { recursive: true });
  const unlock = await lockDist(config.dist, "sync", undefined, { log: (line) => config.progress.line(line), ...config.lock });
  try {
    return await syncLocked(config);
  } finally {
    config.progress.done();
    await unlock();
  }
}

/** The remote catalog.json, schema-checked, with its exact bytes (the mirror's catalog.json will be these). */
async function readRemotePointer(remote: Archive): Promise<Awaited<ReturnType<Archive["readPointer"]>>> {
  try {
    return await remote.readPointer();
  } catch (err) {
    if (!(err instanceof CatalogError)) throw err;
    throw new SyncError(remote.storage.describe(CATALOG_FILE), STAGE, `cannot be synced from (${err.message}); check FROM names the folder that holds the dist's catalog.json`);
  }
}

/** The local catalog.json's sha256 and newest manifest; null for an empty folder or a catalog.json that cannot be read. */
async function readLocalHead(config: SyncConfig): Promise<{ sha256: string; manifest: Ref } | null> {
  try {
    const local = await readPublished(config.dist);
    return local && { sha256: local.sha256, manifest: local.pointer.manifest };
  } catch (err) {
    config.progress.line(`${describeError(err)}: it will be replaced by the remote one once every file it names is here`);
    return null;
  }
}

/** A remote read that failed: its URL, what was wrong, and that nothing of this sync was placed. */
function remoteFailure(err: unknown, dist: string): unknown {
  const unchanged = `nothing was placed and ${join(dist, CATALOG_FILE)} is unchanged`;
  if (err instanceof IntegrityError) return new SyncError(err.path, STAGE, `${err.reason}: the host serves a damaged or tampered copy; ${unchanged}; sync from the origin or another mirror`);
  if (err instanceof StorageError) return new SyncError(err.path, STAGE, `${err.message}; ${unchanged}; sync again later`);
  return err;
}

/** A listed path must be a file of a dist (docs/format.md §1): an object under the name of its hash (format/objects.ts). */
function checkListed(entry: FileEntry, manifestUrl: string): void {
  const object = parseObjectPath(entry.path);
  if (object && (object.kind === "json.br" || object.sha256 === entry.sha256)) return;
  throw new SyncError(manifestUrl, STAGE, `lists ${JSON.stringify(entry.path)}, which is no file of a dist (docs/format.md §1): nothing of it is written`);
}

interface Chain {
  /** the manifests newer than the local copy's, newest first, with their verified bytes */
  manifests: { ref: Ref; bytes: Uint8Array }[];
  /** every file they list, by path, as the newest of them lists it */
  files: Map<string, FileEntry>;
  /** the walk met the local copy's newest manifest (else the remote chain starts anew: a prune upstream) */
  reachedLocal: boolean;
}

/** The remote manifests from the newest back to the local copy's (or to the chain's start), each verified. */
async function readChain(remote: Archive, newest: Ref, localHead: Ref | null, progress: Progress): Promise<Chain> {
  const chain: Chain = { manifests: [], files: new Map(), reachedLocal: false };
  const check = validatorFor("dist-manifest.schema.json");
  for (let ref: Ref | null = newest; ref; ) {
    if (localHead && ref.sha256 === localHead.sha256) {
      chain.reachedLocal = true;
      break;
    }
    const url = remote.storage.describe(objectPath(ref.sha256, "json"));
    const bytes = await remote.readObject(ref, "json");
    let manifest: Manifest;
    try {
      manifest = JSON.parse(Buffer.from(bytes).toString("utf8")) as Manifest;
    } catch (err) {
      throw new SyncError(url, STAGE, `is not JSON (${describeError(err)})`);
    }
    if (!check(manifest)) throw new SyncError(url, STAGE, `is not a publish manifest (${toIssues(check.errors, manifest).slice(0, 2).map((i) => i.message).join("; ")})`);
    for (const entry of manifest.files) {
      checkListed(entry, url);
      if (!chain.files.has(entry.path)) chain.files.set(entry.path, entry);
    }
    chain.manifests.push({ ref, bytes });
    progress.status(`sync: read ${chain.manifests.length} publish manifests, ${chain.files.size} files listed`);
    ref = manifest.previous;
  }
  return chain;
}

/**
 * The listed files the mirror lacks. An object is held when a file of its size is at its name: objects are named by
 * their hash and only ever placed whole and verified (make verify rehashes them).
 */
async function selectMissing(dist: string, files: Iterable<FileEntry>): Promise<{ missing: FileEntry[]; held: number }> {
  const list = [...files];
  const missing: FileEntry[] = [];
  await runConcurrently(list, 64, async (entry) => {
    const file = join(dist, entry.path);
    const found = await stat(file).catch(() => null);
    const held = found?.isFile() && found.size === entry.size;
    if (!held) missing.push(entry);
  });
  missing.sort((a, b) => (a.path < b.path ? -1 : 1));
  return { missing, held: list.length - missing.length };
}

/** Progress of the downloads: files, bytes, rate and time left; a plain line every 5 s off a terminal. */
class TransferProgress {
  private readonly started = Date.now();
  private bytes = 0;
  private files = 0;
  private shownAt = 0;
  private lineAt = Date.now();

  constructor(
    private readonly progress: Progress,
    private readonly totalFiles: number,
    private readonly totalBytes: number,
  ) {}

  add(bytes: number, files = 0): void {
    this.bytes += bytes;
    this.files += files;
    const now = Date.now();
    const last = this.files === this.totalFiles && files > 0;
    if (!last && now - this.shownAt < 100) return;
    this.shownAt = now;
    const text = `sync ${this.files}/${this.totalFiles} files, ${formatTransfer(this.bytes, this.totalBytes, now - this.started)}`;
    const plain = last || now - this.lineAt >= 5000;
    if (plain) this.lineAt = now;
    this.progress.status(text, plain ? text : undefined);
  }
}

/** Downloads every missing file, `concurrency` at a time, each verified before it is placed; returns the requests sent. */
async function downloadAll(config: SyncConfig, baseUrl: string, missing: FileEntry[]): Promise<number> {
  const progress = new TransferProgress(config.progress, missing.length, missing.reduce((n, f) => n + f.size, 0));
  const tempDir = join(config.dist, SYNC_TEMP_DIR);
  const receiving: DownloadConfig = { tempDir, retries: config.retries, backoffMs: config.backoffMs, onBytes: (n) => progress.add(n), log: (line) => config.progress.line(line) };
  let requests = 0;
  await runConcurrently(missing, config.concurrency, async (entry) => {
    const url = baseUrl + entry.path;
    try {
      const target = { url, file: join(config.dist, entry.path), expect: { size: entry.size, sha256: entry.sha256 }, notFound: "the host does not hold it" };
      const { attempts } = await download(target, receiving);
      requests += attempts; // not `requests += await ...`: that reads requests before the wait, losing concurrent counts
    } catch (err) {
      const tampered = err instanceof DownloadError && err.failure === "unexpected" ? ": the host serves a damaged or tampered copy; it was not placed" : "";
      throw new SyncError(url, STAGE, `${describeError(err)}${tampered}; ${join(config.dist, CATALOG_FILE)} is unchanged; sync again later, or from the origin or another mirror`);
    }
    progress.add(0, 1);
  });
  return requests;
}

/** Writes the manifests the mirror lacks (their bytes verified against their Refs when read). */
async function placeManifests(dist: string, manifests: Chain["manifests"]): Promise<FileEntry[]> {
  const placed: FileEntry[] = [];
  for (const { ref, bytes } of manifests) {
    const path = objectPath(ref.sha256, "json");
    const found = await stat(join(dist, path)).catch(() => null);
    if (found?.size === ref.size) continue;
    await writeFileAtomic(join(dist, path), bytes);
    placed.push({ path, size: ref.size, sha256: ref.sha256 });
  }
  return placed;
}

async function syncLocked(config: SyncConfig): Promise<SyncReport> {
  const started = Date.now();
  const storage = new HttpStorage(config.from);
  const remote = new Archive(storage, nodePlatform, { cacheBytes: 16 << 20 });
  const { bytes: catalogBytes, sha256, pointer } = await readRemotePointer(remote);
  const local = await readLocalHead(config);
  const report: SyncReport = { changed: false, catalogSha256: sha256, manifests: 0, downloaded: [], held: 0, newChain: false, pruned: null, requests: 0, bytes: 0, ms: 0 };
  let requests = 0;
  let downloadedBytes = 0;
  if (local?.sha256 !== sha256) {
    const tempDir = join(config.dist, SYNC_TEMP_DIR);
    await rm(tempDir, { recursive: true, force: true }); // what a killed sync was receiving
    await mkdir(tempDir, { recursive: true });
    const chain = await readChain(remote, pointer.manifest, local?.manifest ?? null, config.progress).catch((err) => Promise.reject(remoteFailure(err, config.dist)));
    const { missing, held } = await selectMissing(config.dist, chain.files.values());
    config.progress.line(`sync: ${chain.manifests.length} new publish manifests list ${chain.files.size} files: ${missing.length} to download (${formatBytes(missing.reduce((n, f) => n + f.size, 0))}), ${held} already here`);
    requests += await downloadAll(config, storage.baseUrl, missing);
    downloadedBytes = missing.reduce((n, f) => n + f.size, 0);
    report.downloaded = [...missing, ...(await placeManifests(config.dist, chain.manifests))];
    // durable: every file it names is in place; the new catalog must be on disk before it replaces the old
    await writeFileAtomic(join(config.dist, CATALOG_FILE), catalogBytes, true);
    await rm(tempDir, { recursive: true, force: true });
    Object.assign(report, { changed: true, manifests: chain.manifests.length, held, newChain: local !== null && !chain.reachedLocal });
  }
  const pending = await stat(join(config.dist, PENDING_FILE)).then(() => true, () => false);
  if (config.prune && report.changed && (report.newChain || pending)) {
    const rule = { keepDays: 0, keepIds: new Set<string>(), dropVersions: false };
    report.pruned = await pruneLocked({ dist: config.dist, rule, graceMs: config.graceMs, now: config.now });
  }
  report.requests = storage.stats.requests + requests;
  report.bytes = storage.stats.bytes + downloadedBytes;
  report.ms = Date.now() - started;
  return report;
}
