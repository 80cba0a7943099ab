// silo.lock.json: what make fetch and make update recorded of each file they placed in a sources folder (its URL,
// bytes, sha256 and the bucket's validators, ETag and Last-Modified, to ask later whether the bucket rewrote it).
// The publish checks every fetched file against it (ingest/provenance.ts).

import { readFile } from "node:fs/promises";
import { FetchError, describeError } from "../errors.js";
import { writeFileAtomic } from "../files/write.js";

export const LOCK_FILE = "silo.lock.json";

export interface LockEntry {
  path: string;
  url: string;
  bytes: number;
  sha256: string;
  /** the bucket's validators of the copy held, to ask whether it changed since (If-None-Match, If-Modified-Since) */
  etag?: string;
  last_modified?: string;
}

export interface LockFile {
  files: LockEntry[]; // sorted by path
}

/** The entries of a sources folder's lock file by path; none when there is no lock file yet. */
export async function readLock(lockPath: string): Promise<Map<string, LockEntry>> {
  let text: string;
  try {
    text = await readFile(lockPath, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return new Map();
    throw new FetchError(lockPath, "fetch", `cannot read the lock file: ${describeError(err)}`);
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
    throw new FetchError(lockPath, "fetch", "is not a SILO lock file ({files: [{path, url, bytes, sha256}]}); delete it to download everything again");
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

/**
 * Atomic, so a crash mid-write leaves the previous lock, never half a file; `durable` flushes it first (an update's
 * commit relies on it before it moves files).
 */
export async function writeLock(lockPath: string, lock: Map<string, LockEntry>, durable = false): Promise<void> {
  const files = [...lock.values()]
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map(({ path, url, bytes, sha256, etag, last_modified }) => ({ path, url, bytes, sha256, ...(etag ? { etag } : {}), ...(last_modified ? { last_modified } : {}) }));
  const body: LockFile = { files };
  await writeFileAtomic(lockPath, `${JSON.stringify(body, null, 2)}\n`, durable);
}
