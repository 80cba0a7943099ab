// Bench row of issue 44's revision night: a night of SILO-like revisions against a night that only adds a day, on an
// archive of a 200 x 160 window of SILO-like maximum temperature (bench/silo-like.ts). The revision night adds the
// same day and rewrites nine of the last 90 files, each with two local patches of 3 to 12 cells' radius (a cell moves
// 0.5 to 2.5 degC, as a late station's report moves SILO's surface near it). Each night is published in a new process
// onto a copy of the same base, the two in turn, three rounds (this machine is shared and noisy): the medians of what
// each wrote and took, and their ratios (goals: at most 3x the bytes, 1.5x the time).
//
// Runs alone: BENCH_ONLY=revision-night node_modules/.bin/tsx bench/run.ts.

import { cp, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Window } from "../format/grid.js";
import { MAX_TEMP } from "../format/variables.js";
import { makeLandMask } from "../pipeline/ingest/demo.js";
import { writeSiloTiff } from "../pipeline/ingest/geotiff.js";
import { formatBytes } from "../pipeline/progress.js";
import { dateToMemberPath } from "../sources/silo.js";
import { random } from "./revisions.js";
import { makeSiloLikeMaxTemp } from "./silo-like.js";
import { BENCH_CACHE, listDays, makeSiloLikeWindowDays } from "./sources.js";
import { linkFolder, runProbe } from "./tools.js";

type Say = (line?: string) => void;
const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** Inland eastern Australia, all land: 200 x 160 cells. */
const WINDOW: Window = [440, 240, 200, 160];
/** 400 days: a closed year and a little more, the last one the night's new day. */
const DAYS = listDays("2003-01-01", 401);
const NEW_DAY = DAYS[DAYS.length - 1];
const ROUNDS = 3;

export interface RevisionNightContext {
  work: string;
  say: Say;
  log: (line: string) => void;
  figures: Record<string, number>;
  fail: (why: string) => void;
}

/** Nine of the last 90 files rewritten in `folder` (links replaced by files), each with two patches of 3 to 12 cells' radius. */
async function rewriteRecent(folder: string, round: number): Promise<void> {
  const next = random(4400 + round);
  const recent = DAYS.slice(-91, -1);
  const chosen = new Set<string>();
  while (chosen.size < 9) chosen.add(recent[Math.floor(next() * recent.length)]);
  const mask = makeLandMask();
  const [, , w, h] = WINDOW;
  for (const date of chosen) {
    const values = makeSiloLikeMaxTemp(date, mask, WINDOW);
    for (let patch = 0; patch < 2; patch++) {
      const radius = 3 + Math.floor(next() * 10);
      const [cx, cy] = [radius + Math.floor(next() * (w - 2 * radius)), radius + Math.floor(next() * (h - 2 * radius))];
      const shift = (0.5 + next() * 2) * (next() < 0.5 ? -1 : 1);
      for (let y = cy - radius; y <= cy + radius; y++) {
        for (let x = cx - radius; x <= cx + radius; x++) {
          const d = Math.hypot(x - cx, y - cy);
          if (d <= radius) values[y * w + x] = Math.fround(Math.round((values[y * w + x] + shift * (1 - d / (radius + 1))) * 10) / 10);
        }
      }
    }
    const file = join(folder, dateToMemberPath(date, MAX_TEMP));
    await rm(file, { force: true });
    await writeSiloTiff(file, WINDOW, values);
  }
}

/** The nights, each onto its own copy of the base: bytes written and time, medians of the rounds. */
export async function benchRevisionNight(ctx: RevisionNightContext): Promise<void> {
  const cache = join(BENCH_CACHE, "revision-night");
  await makeSiloLikeWindowDays(cache, DAYS, WINDOW, ctx.log);
  const base = join(ctx.work, "night-base");
  const folder = await linkFolder(join(ctx.work, "night-sources"), cache, DAYS.slice(0, -1));
  ctx.log(`publishing the base: ${DAYS.length - 1} days of a 200 x 160 window`);
  runProbe(folder, base);
  const results = { append: { bytes: [] as number[], ms: [] as number[], parts: [] as string[] }, revision: { bytes: [] as number[], ms: [] as number[], parts: [] as string[] } };
  for (let round = 0; round < ROUNDS; round++) {
    for (const kind of ["append", "revision"] as const) {
      const dist = join(ctx.work, `night-${kind}`);
      await rm(dist, { recursive: true, force: true });
      await cp(base, dist, { recursive: true });
      const night = await linkFolder(join(ctx.work, `night-${kind}-sources`), cache, [...DAYS.slice(-91, -1), NEW_DAY]);
      if (kind === "revision") await rewriteRecent(night, round);
      const r = runProbe(night, dist, true);
      results[kind].bytes.push(r.bytesWritten);
      results[kind].ms.push(r.wallMs);
      results[kind].parts.push(`day pieces ${formatBytes(r.dayBytesWritten)}, series ${formatBytes(r.seriesBytesWritten)}, index and catalog ${formatBytes(r.bytesWritten - r.dayBytesWritten - r.seriesBytesWritten)}`);
      await rm(night, { recursive: true, force: true });
    }
  }
  const [aBytes, rBytes, aMs, rMs] = [median(results.append.bytes), median(results.revision.bytes), median(results.append.ms), median(results.revision.ms)];
  Object.assign(ctx.figures, { night_append_bytes: aBytes, night_revision_bytes: rBytes, night_bytes_ratio: rBytes / aBytes, night_append_s: aMs / 1000, night_revision_s: rMs / 1000, night_time_ratio: rMs / aMs });
  ctx.say();
  ctx.say(`a revision night on a 200 x 160 window of SILO-like max_temp (${DAYS.length - 1} days): 9 of the last 90 files rewritten, two patches each of 3 to 12 cells' radius, beside a night that only adds the day (medians of ${ROUNDS}, in turn, a new process each)`);
  ctx.say(`  append-only night   ${formatBytes(aBytes)} written, ${fmt(aMs / 1000, 2)} s   (the last round: ${results.append.parts.at(-1)})`);
  ctx.say(`  revision night      ${formatBytes(rBytes)} written, ${fmt(rMs / 1000, 2)} s   ratio ${fmt(rBytes / aBytes, 2)} in bytes (goal <= 3), ${fmt(rMs / aMs, 2)} in time (goal <= 1.5)   (the last round: ${results.revision.parts.at(-1)})`);
  if (rBytes / aBytes > 3) ctx.fail(`a revision night wrote ${fmt(rBytes / aBytes, 2)} times an append-only night's bytes (goal <= 3)`);
  if (rMs / aMs > 1.5) ctx.fail(`a revision night took ${fmt(rMs / aMs, 2)} times an append-only night's time (goal <= 1.5)`);
}
