// Bench phases of the series tier: a season of daily publishes across a month close and a year close (the daily
// recipe: the grown folder, a new process each), then make prune with its default rule; and what a cold mirror
// client reads for one place over a month, over a year with its close, and over thirty years.

import { join } from "node:path";
import { createMirrorClient } from "../client/index.js";
import { startMirrorServer } from "../client/mirror-server.js";
import { makeDataRequest } from "../api/query/request.js";
import { dateToDayNumber, dayNumberToDate } from "../format/dates.js";
import { colToLon, rowToLat } from "../format/grid.js";
import { formatBytes } from "../pipeline/progress.js";
import { prune } from "../pipeline/commands/prune.js";
import { publish } from "../pipeline/publish/publish.js";
import { linkFolder, runProbe, sizeOfTree } from "./tools.js";
import { MAX_TEMP, type Variable } from "../format/variables.js";

type Say = (line?: string) => void;
const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const DAY_MS = 86_400_000;

/** One daily publish of a season: its wall time, bytes written (of them series), and what `onDay` counted after it. */
export interface SeasonDay {
  date: string;
  wallMs: number;
  bytes: number;
  series: number;
  counted: number;
}

/**
 * From the first `base` days of `variables` (linked from `cache` into `folder`), one day at a time through the rest,
 * each publish in a new process; each stamped as published on its own day (before now), so the retention rule sees
 * a season of daily versions. `onDay` measures something after each daily publish.
 */
export async function runSeason(folder: string, dist: string, cache: string, dates: string[], base: number, variables: readonly Variable[], onDay: (date: string) => Promise<number> = async () => 0): Promise<SeasonDay[]> {
  await linkFolder(folder, cache, dates.slice(0, base), variables);
  const daily = dates.length - base;
  const publishedOn = (k: number) => new Date(Date.now() - (daily - k) * DAY_MS);
  await publish({ sources: folder, dist, observations: false, log: () => {}, publishedAt: publishedOn(-1).toISOString().replace(/\.\d{3}Z$/, "Z") });
  const runs: SeasonDay[] = [];
  for (let k = 0; k < daily; k++) {
    const date = dates[base + k];
    await linkFolder(folder, cache, [date], variables);
    const run = runProbe(folder, dist, false, 0, { SOURCE_DATE_EPOCH: String(Math.floor(publishedOn(k).getTime() / 1000)) });
    if (run.added !== variables.length) throw new Error(`the season's publish of ${date} added ${run.added} versions, not ${variables.length}`);
    runs.push({ date, wallMs: run.wallMs, bytes: run.bytesWritten, series: run.seriesBytesWritten, counted: await onDay(date) });
  }
  return runs;
}

/** A season of max_temp from the first `base` days, then make prune with its default rule; returns the dist. */
export async function appendSeason(work: string, cache: string, dates: string[], base: number, say: Say, figures: Record<string, number>): Promise<string> {
  const dist = join(work, "dist-season");
  // what a cold mirror client reads for the month up to the new day, on each day of the season
  const coldReads = async (date: string) => {
    const cold: Record<string, number> = {};
    await measureMirrorReads(dist, [{ name: "", key: "cold", goal: "", read: pointQuery(500, 300, addDays(date, -30), date) }], () => {}, cold);
    return cold.cold_requests;
  };
  const runs = (await runSeason(join(work, "season"), dist, cache, dates, base, [MAX_TEMP], coldReads)).map((r) => ({ ...r, coldReads: r.counted }));
  const daily = runs.length;
  const worst = runs.reduce((a, b) => (b.wallMs > a.wallMs ? b : a));
  const mostReads = runs.reduce((a, b) => (b.coldReads > a.coldReads ? b : a));
  const meanBytes = runs.reduce((n, r) => n + r.bytes, 0) / runs.length;
  const before = await sizeOfTree(dist);
  const pruned = await prune({ dist, rule: { keepDays: 30, keepIds: new Set(), dropVersions: true }, graceMs: 0 });
  const after = await sizeOfTree(dist);
  Object.assign(figures, {
    season_worst_publish_s: worst.wallMs / 1000,
    season_mean_bytes_per_day: meanBytes,
    season_dist_bytes_per_day_pruned: after / dates.length,
    mirror_point_31_daily_worst_requests: mostReads.coldReads,
  });
  say();
  say(`an append season: ${base} full-grid days, then one a day for ${daily} days (${dates[base]} .. ${dates[dates.length - 1]}, a month and a year close), each a new process (start-up included)`);
  say(`  slowest daily publish                       ${fmt(worst.wallMs / 1000, 2)} s on ${worst.date}  (goal <= 8 s)`);
  say(`  median daily publish                        ${fmt(median(runs.map((r) => r.wallMs)) / 1000, 2)} s`);
  say(`  bytes written per day, mean                 ${formatBytes(meanBytes)} (series ${formatBytes(runs.reduce((n, r) => n + r.series, 0) / runs.length)})  (goal <= 2.5 MB)`);
  say(`  largest day                                 ${formatBytes(Math.max(...runs.map((r) => r.bytes)))} on ${runs.reduce((a, b) => (b.bytes > a.bytes ? b : a)).date}`);
  say(`  ${"cold mirror, a cell's newest 31 days".padEnd(44)}at most ${mostReads.coldReads} requests (${mostReads.date}), median ${median(runs.map((r) => r.coldReads))}  (goal <= 10)`);
  say(`  make prune (default rule: KEEP_DAYS=30)     ${pruned.dropped.length} of ${pruned.kept.length + pruned.dropped.length} versions dropped, ${formatBytes(before - after)} deleted`);
  say(`  dist per full-grid day after the prune      ${formatBytes(after / dates.length)}, everything counted  (goal <= 0.8 MB)`);
  return dist;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

interface ReadCase {
  name: string;
  key: string;
  goal: string;
  read: (client: ReturnType<typeof createMirrorClient>) => Promise<unknown>;
}

/** HTTP requests and bytes a cold mirror client reads (a new client per case), over `make mirror`'s static host. */
export async function measureMirrorReads(dist: string, cases: ReadCase[], say: Say, figures: Record<string, number>): Promise<void> {
  const mirror = await startMirrorServer({ dist });
  try {
    for (const c of cases) {
      const client = createMirrorClient({ baseUrl: mirror.url });
      await c.read(client);
      const { requests, bytes } = client.stats();
      figures[`${c.key}_requests`] = requests;
      figures[`${c.key}_bytes`] = bytes;
      say(`  ${c.name.padEnd(58)} ${fmt(requests).padStart(6)} requests ${formatBytes(bytes).padStart(9)}  (goal ${c.goal})`);
    }
  } finally {
    await mirror.close();
  }
}

/** A point query over first..last at a global cell. */
export function pointQuery(col: number, row: number, first: string, last: string): ReadCase["read"] {
  return async (client) => {
    const answer = await client.answer({ method: "POST", path: "/api/v1/data/query", body: makeDataRequest([col, row, 1, 1], first, last) });
    if (answer.status !== 200) throw new Error(`${first}..${last}: HTTP ${answer.status} ${answer.text()}`);
  };
}

/** client.series of a global cell over first..last: one call of the series route, CSV. */
export function seriesRead(col: number, row: number, first: string, last: string): ReadCase["read"] {
  return (client) => client.series({ lat: rowToLat(row), lon: colToLon(col), start: first, end: last });
}

export const addDays = (date: string, days: number) => dayNumberToDate(dateToDayNumber(date) + days);

export type { ReadCase };
