// Helpers of the bench phases: folders of links to cached sources, a publish in its own process, sizes on disk.

import { MAX_TEMP } from "../format/variables.js";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir, stat, symlink } from "node:fs/promises";
import { join, resolve } from "node:path";
import { dateToMemberPath } from "../sources/silo.js";

export async function sizeOfTree(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? await sizeOfTree(path) : (await stat(path)).size;
  }
  return total;
}

/** A folder of links to some of the cached source files: a maintainer's folder without copying 250 MB. */
export async function linkFolder(folder: string, cache: string, dates: string[]): Promise<string> {
  for (const date of dates) {
    const target = join(folder, dateToMemberPath(date, MAX_TEMP));
    await mkdir(join(target, ".."), { recursive: true });
    await symlink(resolve(cache, dateToMemberPath(date, MAX_TEMP)), target);
  }
  return folder;
}

const PROBE_JS = "build/publish-probe.js";

/**
 * One publish in a new process (start-up included), built as `make publish` runs it (build/publish-probe.js, made
 * by `make bench`); `flags`: more publish-probe flags (--rehash).
 */
export function runProbe(sources: string, dist: string, extend = false, openFiles = 0, env: Record<string, string> = {}, flags: string[] = []): Record<string, number> & { id: string } {
  if (!existsSync(PROBE_JS)) throw new Error(`${PROBE_JS} is missing: \`make build/publish-probe.js\` builds it (\`make bench\` does)`);
  const command = `${openFiles ? `ulimit -n ${openFiles} && ` : ""}exec node ${PROBE_JS} "${sources}" "${dist}"${extend ? " --extend" : ""} ${flags.join(" ")}`;
  const started = performance.now();
  const out = execFileSync("bash", ["-c", command], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 20, env: { ...process.env, ...env } });
  return { ...JSON.parse(out.trim().split("\n").pop()!), wallMs: performance.now() - started };
}

/** What the operations phases (bench/operations.ts, bench/soak.ts) are given. */
export interface OperationsContext {
  /** a published year of full-grid days, 2003-01-01..2003-12-31 (copied where a phase writes into it) */
  dist: string;
  /** a folder holding 2004-01-01 alone, for the live publish (EXTEND) */
  nextDay: string;
  year: string[];
  work: string;
  say: (line?: string) => void;
  log: (line: string) => void;
  figures: Record<string, number>;
  fail: (why: string) => void;
}
