// Publish helpers of the bench: a maintainer's folder made of links to cached inputs, and a publish in its own
// process (bench/publish-probe.ts) with its wall time, peak memory and summary.

import { execFileSync } from "node:child_process";
import { mkdir, symlink } from "node:fs/promises";
import { join, resolve } from "node:path";
import { dateToMemberPath } from "../sources/silo.js";

/** A folder of links to some of the cached source files: a maintainer's folder without copying 250 MB. */
export async function linkFolder(folder: string, cache: string, dates: string[]): Promise<string> {
  for (const date of dates) {
    const target = join(folder, dateToMemberPath(date));
    await mkdir(join(target, ".."), { recursive: true });
    await symlink(resolve(cache, dateToMemberPath(date)), target);
  }
  return folder;
}

export type ProbeResult = Record<string, number> & { id: string; wallMs: number };

/** One publish in a new process (start-up included), under an open-file limit when given; flags: --extend, --rehash. */
export function runProbe(sources: string, dist: string, flags: string[] = [], openFiles = 0): ProbeResult {
  const command = `${openFiles ? `ulimit -n ${openFiles} && ` : ""}exec node_modules/.bin/tsx bench/publish-probe.ts "${sources}" "${dist}" ${flags.join(" ")}`;
  const started = performance.now();
  const out = execFileSync("bash", ["-c", command], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 1 << 20 });
  return { ...JSON.parse(out.trim().split("\n").pop()!), wallMs: performance.now() - started };
}
