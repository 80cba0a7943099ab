// One writer at a time per dist: a publish, a prune and a sync all write objects and catalog.json, so two would race.
// The lock is flock(2) on dist/.publish.lock (lock-file.ts), refused where it would not reach other hosts'
// writers (lock-reach.ts). Whoever takes the lock first makes right what a killed publish left (its journal), so
// every writer starts from a dist exactly as some publish completed it.

import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { CATALOG_FILE } from "../../format/objects.js";
import { sha256Hex } from "../../format/hash.js";
import { isNoSpace, noSpaceError, recoverJournal } from "./journal.js";
import { LOCK_FILE, takeLockFile } from "./lock-file.js";
import { checkLockReach } from "./lock-reach.js";

export interface LockOptions {
  /** seconds to wait for another writer before refusing; 0 (when not given) refuses at once: the commands give LOCK_WAIT (pipeline/defaults.ts) */
  waitSec?: number;
  /** take a lock that holds on this host only: this host is the only writer of a folder whose locks stay local */
  localLock?: boolean;
  /** told that this writer waits for another, and when it took the lock */
  log?: (line: string) => void;
}

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
  const file = join(dist, LOCK_FILE);
  await checkLockReach(dist, file, options.localLock ?? false);
  let release: () => Promise<void>;
  try {
    release = await takeLockFile(file, what, { waitSec: options.waitSec ?? 0, onWait: options.log ?? (() => {}) });
  } catch (err) {
    if (isNoSpace(err)) throw await noSpaceError(dist, file, "lock", { written: 0, failing: 4096, remaining: 0 });
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
