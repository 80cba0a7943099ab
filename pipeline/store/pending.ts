// The dist's pending list (.prune-pending.json, docs/publishing.md "What make prune does"): files a prune found
// unreachable, with when it first found each. make prune writes it; a publish that writes one of them again lists it
// in its own manifest, and make verify counts them apart, so every writer and verify read it here.

import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../files/write.js";

export const PENDING_FILE = ".prune-pending.json";

export interface Pending {
  /** path -> when it was first found unreachable (ISO) */
  since: Record<string, string>;
}

/** The pending list; none yet is an empty one. */
export async function readPending(dist: string): Promise<Pending> {
  return JSON.parse(await readFile(join(dist, PENDING_FILE), "utf8").catch(() => '{"since":{}}')) as Pending;
}

/** Files a prune found unreachable and will delete after its grace period (a publish that uses one lists it again). */
export async function readUnreachable(dist: string): Promise<Set<string>> {
  return new Set(Object.keys((await readPending(dist)).since));
}

/** Replaces the pending list; an empty one is no file at all. */
export async function writePending(dist: string, pending: Pending): Promise<void> {
  const file = join(dist, PENDING_FILE);
  if (Object.keys(pending.since).length > 0) await writeFileAtomic(file, `${JSON.stringify(pending, null, 1)}\n`);
  else await rm(file, { force: true });
}
