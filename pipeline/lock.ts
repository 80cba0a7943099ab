// One writer at a time per dist: a publish, a prune and a sync all write objects and catalog.json, so two would race.

import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { PublishError } from "./errors.js";

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Takes the dist's lock (a lock left by a killed process is taken over); returns its release. */
export async function lockDist(dist: string, what: "publish" | "prune" | "sync"): Promise<() => Promise<void>> {
  const file = join(dist, ".publish.lock");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(file, String(process.pid), { flag: "wx" });
      return () => rm(file, { force: true });
    } catch (err) {
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
