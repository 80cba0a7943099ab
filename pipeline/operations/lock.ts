// One writer at a time per dist: a publish, a prune and a sync all write objects and catalog.json, so two would race.
// Whoever takes the lock first makes right what a killed publish left (its journal), so every writer starts from
// a dist exactly as some publish completed it.

import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { CATALOG_FILE } from "../../format/objects.js";
import { sha256Hex } from "../../format/hash.js";
import { PublishError } from "../errors.js";
import { isNoSpace, noSpaceError, recoverJournal } from "./journal.js";

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Takes the dist's lock (a lock left by a killed process is taken over), then recovers a killed publish's journal
 * (`onRecovered` hears what was done); returns the lock's release.
 */
export async function lockDist(dist: string, what: "publish" | "prune" | "sync", onRecovered: (line: string) => void = () => {}): Promise<() => Promise<void>> {
  const release = await takeLock(dist, what);
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

async function takeLock(dist: string, what: string): Promise<() => Promise<void>> {
  const file = join(dist, ".publish.lock");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(file, String(process.pid), { flag: "wx" });
      return () => rm(file, { force: true });
    } catch (err) {
      if (isNoSpace(err)) {
        await rm(file, { force: true }); // created, but its pid could not be written
        throw await noSpaceError(dist, file, "lock", { written: 0, failing: 16, remaining: 0 });
      }
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const holder = Number(await readFile(file, "utf8").catch(() => ""));
      if (holder && isRunning(holder)) {
        throw new PublishError(file, "lock", `another publish, prune or sync (pid ${holder}) is writing this dist; wait for it to finish, then ${what} again`);
      }
      await rm(file, { force: true }); // left by a publish that was killed
    }
  }
  throw new PublishError(file, "lock", "cannot take the publish lock");
}
