// A night's downloads of each variable, held apart in SOURCES/.update/<variable>/ and moved into the sources folder only
// once every file of the variable's night has come, so no publish ever sees a variable half updated. A variable's
// commit is written down (commit.json, flushed) before its first move, so a run killed between two moves is finished by
// the next make update or make fetch; a variable's folder without a commit (a night killed or failed while fetching)
// is removed, and the next night asks for those files again (its lock entries still name the old copies).

import { mkdir, readdir, readFile, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Variable } from "../../format/variables.js";
import { UpdateError, describeError } from "../errors.js";
import { writeFileAtomic } from "../files/write.js";
import { LOCK_FILE, type LockEntry, readLock, writeLock } from "./silo-lock.js";

/** The folder of a sources folder that holds the nights' downloads; publish's discovery never looks inside it. */
export const STAGING_DIR = ".update";
const COMMIT_FILE = "commit.json";

/** What one variable's night changes in the sources folder: lock entries to record, staged files to move into place. */
export interface Commit {
  entries: LockEntry[];
  /** member paths of the staged files, moved in this order */
  moves: string[];
}

/** Where a variable's night holds its downloads. */
export function stagingFolder(folder: string, variable: Variable): string {
  return join(folder, STAGING_DIR, variable.silo);
}

/** Where a staged download of one file goes (the member path under the variable's staging folder). */
export function stagedPath(folder: string, variable: Variable, memberPath: string): string {
  return join(stagingFolder(folder, variable), ...memberPath.split("/"));
}

/** Removes the staging folder once every variable's night is committed or dropped (it is empty then). */
export async function removeStaging(folder: string): Promise<void> {
  await rm(join(folder, STAGING_DIR), { recursive: true, force: true });
}

/** Drops a variable's downloads of this night: its fetch did not complete, and nothing of it may reach the folder. */
export async function discardStaged(folder: string, variable: Variable): Promise<void> {
  await rm(stagingFolder(folder, variable), { recursive: true, force: true });
}

/**
 * Moves a variable's completed night into the sources folder: the commit written down first, then the lock file
 * (so a file not moved yet differs from it and a publish refuses it rather than publish half a variable), then the
 * moves. `onMove` hears each move (tests kill the process there).
 */
export async function commitStaged(folder: string, variable: Variable, commit: Commit, onMove?: (memberPath: string) => void): Promise<void> {
  const dir = stagingFolder(folder, variable);
  await writeFileAtomic(join(dir, COMMIT_FILE), `${JSON.stringify(commit)}\n`, true);
  await finishCommit(folder, dir, commit, onMove);
}

async function finishCommit(folder: string, dir: string, commit: Commit, onMove?: (memberPath: string) => void): Promise<void> {
  const lockPath = join(folder, LOCK_FILE);
  const entries = await readLock(lockPath);
  for (const entry of commit.entries) entries.set(entry.path, entry);
  await writeLock(lockPath, entries, true);
  for (const memberPath of commit.moves) {
    const target = join(folder, ...memberPath.split("/"));
    await mkdir(dirname(target), { recursive: true });
    try {
      await rename(join(dir, ...memberPath.split("/")), target);
    } catch (err) {
      // moved already by the run this one finishes
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw new UpdateError(target, "update", `cannot move the night's download into place: ${describeError(err)}; free the folder and run make update again`);
    }
    onMove?.(memberPath);
  }
  await rm(dir, { recursive: true, force: true });
}

async function readCommit(dir: string): Promise<Commit | null> {
  const text = await readFile(join(dir, COMMIT_FILE), "utf8").catch(() => null);
  if (text === null) return null;
  try {
    const commit = JSON.parse(text) as Commit;
    if (Array.isArray(commit.entries) && Array.isArray(commit.moves)) return commit;
  } catch {
    // written atomically: a commit that does not parse was never ours to finish
  }
  throw new UpdateError(join(dir, COMMIT_FILE), "update", `is not an update's commit; delete ${dir} and run make update again`);
}

/**
 * What an earlier run left in the staging folder, made right before anything else touches the sources folder (the
 * caller holds its lock): a written commit is finished, anything else removed. Returns a line for each variable.
 */
export async function finishStaged(folder: string): Promise<string[]> {
  const root = join(folder, STAGING_DIR);
  const lines: string[] = [];
  for (const name of (await readdir(root).catch(() => [] as string[])).sort()) {
    const dir = join(root, name);
    const commit = await readCommit(dir);
    if (commit) {
      await finishCommit(folder, dir, commit);
      lines.push(`${name}: finished moving the ${commit.moves.length} files of an update stopped while moving them`);
    } else {
      await rm(dir, { recursive: true, force: true });
      lines.push(`${name}: removed the downloads of an update stopped before its fetch completed (asked for again tonight)`);
    }
  }
  await rm(root, { recursive: true, force: true });
  return lines;
}
