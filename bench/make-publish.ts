// One `make publish` as a maintainer runs it, for the bench: a new make process (its install check, node's start-up,
// the observation table's check and the progress lines included), timed, its summary lines read back.

import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface MakePublishRun {
  wallMs: number;
  /** the largest resident set of make's processes (GNU time's %M: the node publish) */
  peakMb: number;
  /** ids of the versions it added, as its summary lists them */
  ids: string[];
  added: number;
  days: number;
  decoded: number;
  reused: number;
  filesRead: number;
}

const SUMMARY = /days (\d+) \(decoded (\d+), reused (\d+)\)\s+source files read (\d+)/;

/** Brings the built pipeline up to date first (untimed), as `make bench` does before any row. */
export function ensureBuilt(): void {
  execFileSync("make", ["--no-print-directory", "-s", "install"], { stdio: ["ignore", "ignore", "inherit"] });
}

/** `make publish SOURCES=<sources> DIST=<dist>` (REHASH=1 when asked) under `ulimit -n openFiles`; stops on a publish that adds nothing. */
export function runMakePublish(sources: string, dist: string, options: { rehash?: boolean; openFiles?: number } = {}): MakePublishRun {
  const scratch = mkdtempSync(join(tmpdir(), "bench-make-"));
  const timeFile = join(scratch, "time");
  const vars = [`SOURCES=${sources}`, `DIST=${dist}`, ...(options.rehash ? ["REHASH=1"] : [])].map((v) => `'${v}'`).join(" ");
  const command = `${options.openFiles ? `ulimit -n ${options.openFiles} && ` : ""}exec /usr/bin/time -f %M -o '${timeFile}' make --no-print-directory publish ${vars}`;
  try {
    const started = performance.now();
    let out: string;
    try {
      out = execFileSync("bash", ["-c", command], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 16 << 20 });
    } catch (err) {
      const { stdout, stderr } = err as { stdout?: string; stderr?: string };
      throw new Error(`make publish SOURCES=${sources} DIST=${dist} failed: ${String(stderr ?? "").trim().split("\n").slice(-5).join(" | ")} ${stdout ?? ""}`);
    }
    const wallMs = performance.now() - started;
    const summary = SUMMARY.exec(out);
    if (!summary) throw new Error(`make publish SOURCES=${sources} DIST=${dist} published nothing: ${out.trim()}`);
    const [days, decoded, reused, filesRead] = summary.slice(1).map(Number);
    const ids = out.split("\n").flatMap((line) => (line.startsWith("  + ") ? [line.slice(4).split(" ")[0]] : []));
    return { wallMs, peakMb: Number(readFileSync(timeFile, "utf8").trim().split("\n").pop()) / 1024, ids, added: ids.length, days, decoded, reused, filesRead };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
