// One writer at a time per dist: a publish, a prune and a sync all write objects and catalog.json, so two would race.
// The lock is flock(2) on dist/.publish.lock (files/lock-file.ts), refused where it would not reach other hosts'
// writers (files/lock-reach.ts). Whoever takes the lock first makes right what a killed publish left (its journal), so
// every writer starts from a dist exactly as some publish completed it.

import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { CATALOG_FILE } from "../../format/objects.js";
import { sha256Hex } from "../../format/hash.js";
import { isNoSpace, noSpaceError, recoverJournal } from "./journal.js";
import { type FolderLock, type LockOptions, lockFolder } from "../files/lock-file.js";

/** The lock of every writer of a dist (publish, prune, sync, upgrade). */
export const DIST_LOCK: FolderLock = { name: ".publish.lock", noun: "dist", elsewhere: "publish into a local folder and copy it there" };

/**
 * Takes the dist's lock (waiting up to `options.waitSec` for another writer), then recovers a killed publish's
 * journal (`onRecovered` hears what was done); returns the lock's release.
 */
export async function lockDist(
  dist: string,
  what: "publish" | "prune" | "sync" | "upgrade",
  onRecovered: (line: string) => void = () => {},
  options: LockOptions = {},
): Promise<() => Promise<void>> {
  let release: () => Promise<void>;
  try {
    release = await lockFolder(dist, DIST_LOCK, what, options);
  } catch (err) {
    if (isNoSpace(err)) throw await noSpaceError(dist, join(dist, DIST_LOCK.name), "lock", { written: 0, failing: 4096, remaining: 0 });
    throw err;
  }
  try {
    const catalog = await readFile(join(dist, CATALOG_FILE)).catch(() => null);
    const recovered = await recoverJournal(dist, catalog && sha256Hex(catalog));
    if (recovered) onRecovered(recovered);
    return release;
  } catch (err) {
    await release();
    throw err;
  }
}
