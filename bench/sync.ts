// Bench phase of make sync (docs/mirrors.md "What make sync does"): a mirror of a 365-day full-grid dist, made by one sync from nothing,
// then one more day published at the origin (the grown folder, in its own process) and synced: bytes received and
// seconds, beside the bytes of that day's new objects (its publish manifest's files and the manifest), goal at most
// 1.5 times. The origin is served by nginx when it is installed (make test installs it), else by make mirror's host.
//
// Runs alone too: node_modules/.bin/tsx bench/sync.ts (makes the year of COGs in .cache/bench/silo-like-year once).

import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { startMirrorServer } from "../client/mirror-server.js";
import type { Manifest } from "../format/catalog.js";
import { CATALOG_FILE, type Ref, objectPath } from "../format/objects.js";
import { formatBytes } from "../pipeline/progress.js";
import { publish } from "../pipeline/publish/publish.js";
import { sync } from "../pipeline/commands/sync.js";
import { startNginx } from "../test/support/nginx.js";
import { YEAR_CACHE, listDays, makeFullGridDays } from "./sources.js";
import { linkFolder, runProbe } from "./tools.js";

type Say = (line?: string) => void;
const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** A static host over `dist`: nginx when installed, else make mirror's (sirv). */
async function serve(dist: string): Promise<{ url: string; name: string; stop(): Promise<void> }> {
  try {
    execFileSync("bash", ["-c", "command -v nginx"], { stdio: "ignore" });
    const nginx = await startNginx(dist);
    return { url: nginx.url, name: "nginx", stop: () => nginx.stop() };
  } catch {
    const mirror = await startMirrorServer({ dist });
    return { url: mirror.url, name: "make mirror (sirv)", stop: () => mirror.close() };
  }
}

/** Bytes of what the newest publish of `dist` added: its manifest's files and the manifest itself. */
async function newestPublishBytes(dist: string): Promise<{ files: number; bytes: number }> {
  const ref = (JSON.parse(await readFile(join(dist, CATALOG_FILE), "utf8")) as { manifest: Ref }).manifest;
  const manifest = JSON.parse(await readFile(join(dist, objectPath(ref.sha256, "json")), "utf8")) as Manifest;
  return { files: manifest.files.length + 1, bytes: manifest.files.reduce((n, f) => n + f.size, 0) + ref.size };
}

/**
 * The sync phase: `dates` (365 full-grid days in `cache`) published as the origin, a mirror synced from nothing,
 * then `nextDay` published upstream and synced. Figures: sync_full_*, sync_day_*.
 */
export async function benchSync(work: string, cache: string, dates: string[], nextDay: string, say: Say, figures: Record<string, number>): Promise<void> {
  const origin = join(work, "sync-origin");
  const mirror = join(work, "sync-mirror");
  const folder = await linkFolder(join(work, "sync-sources"), cache, dates);
  await publish({ sources: folder, dist: origin, observations: false, log: () => {} });
  const host = await serve(origin);
  try {
    let t = performance.now();
    const full = await sync({ from: host.url, dist: mirror });
    const fullMs = performance.now() - t;
    await linkFolder(folder, cache, [nextDay]);
    runProbe(folder, origin);
    const day = await newestPublishBytes(origin);
    t = performance.now();
    const one = await sync({ from: host.url, dist: mirror });
    const dayMs = performance.now() - t;
    const ratio = one.bytes / day.bytes;
    Object.assign(figures, {
      sync_full_s: fullMs / 1000,
      sync_full_bytes: full.bytes,
      sync_day_s: dayMs / 1000,
      sync_day_bytes: one.bytes,
      sync_day_new_object_bytes: day.bytes,
      sync_day_ratio: ratio,
    });
    say();
    say(`make sync from ${host.name} on 127.0.0.1 (every file verified against its sha256 before it is placed)`);
    say(`  a ${dates.length}-day full-grid mirror from nothing       ${fmt(fullMs / 1000, 1)} s, ${formatBytes(full.bytes)} in ${fmt(full.requests)} requests`);
    say(`  one more full-grid day                      ${fmt(dayMs / 1000, 2)} s, ${formatBytes(one.bytes)} in ${fmt(one.requests)} requests; the day's new objects ${formatBytes(day.bytes)} in ${day.files} files: ratio ${fmt(ratio, 2)}  (goal <= 1.5)`);
  } finally {
    await host.stop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const dates = listDays("2003-01-01", 365);
  const nextDay = "2004-01-01";
  const cache = YEAR_CACHE;
  await makeFullGridDays(cache, [...dates, nextDay], (line) => process.stderr.write(`${line}\n`));
  const work = await mkdtemp(join(tmpdir(), "bench-sync-"));
  const figures: Record<string, number> = {};
  try {
    await benchSync(work, cache, dates, nextDay, (line = "") => console.log(line), figures);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  console.log(JSON.stringify(Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, Math.round(v * 100) / 100]))));
}
