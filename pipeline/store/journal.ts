// The publish journal: everything a publish creates in a dist, written down before it does so
// (dist/.publish.journal), so a publish that fails (a full disk) takes it all back, and one that was killed is
// taken back, or finished, by the next publish. With it, a failed publish leaves the dist exactly as it was.

import { appendFile, readFile, readdir, rm, rmdir, stat, statfs, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { CATALOG_FILE } from "../../format/objects.js";
import { StoreError } from "../errors.js";
import { formatBytes } from "../progress.js";

export const JOURNAL_FILE = ".publish.journal";
// a publish only creates files (objects, and catalog.json swapped in last): nothing else of its data is ever replaced
// (after the swap it replaces its memory of the sources, a writer-only file: a swap too, for its temporary file)
type Entry = { start: string | null } | { created: string } | { dir: string } | { swap: string };

/** Whether a write failed for want of space (a full disk, or a quota). */
export function isNoSpace(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException)?.code;
  return code === "ENOSPC" || code === "EDQUOT";
}

/** Every temporary file writeFileAtomic may have left for `target` (`<name>.<pid>.<random>.tmp`). */
async function removeTemps(target: string): Promise<void> {
  const name = basename(target);
  const entries = await readdir(dirname(target)).catch(() => [] as string[]);
  await Promise.all(entries.filter((e) => e.startsWith(`${name}.`) && e.endsWith(".tmp")).map((e) => rm(join(dirname(target), e), { force: true })));
}

/** Undoes the entries of a publish that did not commit, newest first: its files removed, its new folders too. */
async function undo(dist: string, entries: Entry[]): Promise<number> {
  let undone = 0;
  for (const entry of [...entries].reverse()) {
    if ("created" in entry || "swap" in entry) {
      const path = join(dist, "created" in entry ? entry.created : entry.swap);
      await removeTemps(path);
      if ("created" in entry && (await stat(path).catch(() => null))) undone++;
      if ("created" in entry) await rm(path, { force: true });
    } else if ("dir" in entry) {
      await rmdir(join(dist, entry.dir)).catch(() => undefined); // only when empty
    }
  }
  return undone;
}

function parseEntries(text: string): Entry[] {
  const entries: Entry[] = [];
  for (const line of text.split("\n")) {
    try {
      entries.push(JSON.parse(line) as Entry);
    } catch {
      // a line cut short by the kill: its file was never started
    }
  }
  return entries;
}

/**
 * What a killed publish left, made right (the start of every publish, under its lock): a journal whose
 * publish never replaced catalog.json is undone; one whose publish did is closed.
 * `catalogSha256` is the sha256 of the catalog.json now in place (null: none). Returns a line for the log, or null.
 */
export async function recoverJournal(dist: string, catalogSha256: string | null): Promise<string | null> {
  const file = join(dist, JOURNAL_FILE);
  const text = await readFile(file, "utf8").catch(() => null);
  if (text === null) return null;
  const entries = parseEntries(text);
  const start = entries[0] && "start" in entries[0] ? entries[0].start : undefined;
  let line: string;
  // no start entry: the publish was killed between creating the journal and writing its first line, before any step
  if (start === undefined || start === catalogSha256) {
    const undone = await undo(dist, entries);
    line = `cleaned up after an interrupted publish: ${undone} files it had written removed`;
  } else {
    await undo(dist, entries.filter((e) => "swap" in e)); // its temporary catalog.json, if any
    line = "an interrupted publish had already replaced catalog.json: its journal is closed";
  }
  await rm(file, { force: true });
  return line;
}

/**
 * The journal of the running publish. Each step is written to the journal file before it happens; the same
 * steps are kept in memory, so a publish that fails undoes them even when the journal itself could not be written.
 */
export class PublishJournal {
  private readonly entries: Entry[] = [];
  private readonly file: string;

  private constructor(readonly dist: string) {
    this.file = join(dist, JOURNAL_FILE);
  }

  static async open(dist: string, catalogSha256: string | null): Promise<PublishJournal> {
    const journal = new PublishJournal(dist);
    const first: Entry = { start: catalogSha256 };
    journal.entries.push(first);
    await writeFile(journal.file, `${JSON.stringify(first)}\n`, { flag: "wx" });
    return journal;
  }

  private async note(entry: Entry): Promise<void> {
    this.entries.push(entry);
    await appendFile(this.file, `${JSON.stringify(entry)}\n`);
  }

  /** A file (or folder) this publish is about to create, by its path in the dist. */
  created(path: string): Promise<void> {
    return this.note({ created: path });
  }

  createdDir(path: string): Promise<void> {
    return this.note({ dir: path });
  }

  /** catalog.json (or a writer-only file) is about to be replaced: its temporary file may be left if this publish dies. */
  swapping(path = CATALOG_FILE): Promise<void> {
    return this.note({ swap: path });
  }

  /** The new catalog.json is in place: the journal goes. */
  async commit(): Promise<void> {
    await rm(this.file, { force: true });
  }

  /** The publish failed before its catalog.json: everything it did is undone, and the dist is as it was. */
  async rollback(): Promise<void> {
    await undo(this.dist, this.entries);
    await rm(this.file, { force: true });
  }
}

/** What a publish has written and still means to, for the message of a full disk. */
export interface SpaceNeed {
  /** bytes this publish wrote before the disk filled (removed again by the rollback) */
  written: number;
  /** the write that failed */
  failing: number;
  /** an estimate of what was still to come after it */
  remaining: number;
}

/** Room kept for what follows any stage: index pages, the catalog tree, the manifest, catalog.json. */
const LATER_STAGES_BYTES = 1 << 20;

/** The error of a full disk: the file, the stage, and how much space the publish needs and where. */
export async function noSpaceError(dist: string, file: string, stage: string, need: SpaceNeed): Promise<StoreError> {
  const fs = await statfs(dist).catch(() => null);
  const free = fs ? fs.bavail * fs.bsize : 0;
  const needed = need.written + need.failing + need.remaining + LATER_STAGES_BYTES;
  const more = Math.max(need.failing, needed - free - need.written);
  return new StoreError(
    file,
    stage,
    `no space left on device: this publish needs about ${formatBytes(needed)} in ${dist} (${formatBytes(free)} free; the ${formatBytes(need.written)} it had written ` +
      `are removed again, and nothing of this run is kept); free at least ${formatBytes(more)} more there and publish again`,
  );
}
