// `make bench`, the five-variable rows (issue 25; alone: BENCH_ONLY=variables node_modules/.bin/tsx bench/run.ts): a
// full-grid year of max_temp, min_temp, daily_rain, radiation and vp against the same year of max_temp alone, one more
// day onto each, and what each variable costs on disk after an append season and make prune. The long archive's
// rows are bench/variable-long.ts. Every publish runs in its own process, as `make publish` runs it.

import { rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { MAX_TEMP, type Variable } from "../format/variables.js";
import { FIVE_VARIABLES as VARIABLES } from "./variable-sources.js";
import { formatBytes } from "../pipeline/progress.js";
import { prune } from "../pipeline/commands/prune.js";
import { dateToMemberPath } from "../sources/silo.js";
import { median, runSeason } from "./series.js";
import type { BenchContext } from "./sources-bench.js";
import { type PublishedYear, linkFolder, runProbe, sizeOfTree } from "./tools.js";
import { type DistBytes, measureVariableBytes } from "./variable-bytes.js";

export interface VariablesContext extends BenchContext {
  /** prints "!! <why>: a goal is not met" and counts a failure */
  fail(why: string): void;
}

/** The goal of issue 25: five variables cost no more than 5.5 times one. */
const RATIO_GOAL = 5.5;
/** The goal of issue 25: every variable after make prune, bytes per full-grid day. */
const PRUNED_GOAL_BYTES = 2_500_000;
const NEXT_DAYS = ["2004-01-01", "2004-01-02", "2004-01-03"];
const SILO_NAMES = VARIABLES.map((v) => v.silo).join(", ");

const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
/** A row: its label in a column as wide as the other rows' of make bench. */
const row = (label: string, text: string) => `  ${label.padEnd(43)} ${text}`;

/** `dates` of `variables` from `cache`, published into a new dist in a new process. */
async function publishYear(ctx: VariablesContext, cache: string, dates: string[], variables: readonly Variable[], name: string): Promise<PublishedYear> {
  const folder = await linkFolder(join(ctx.work, `variables-${name}`), cache, dates, variables);
  const dist = join(ctx.work, `dist-variables-${name}`);
  ctx.log(`publishing ${dates.length} full-grid days of ${variables.map((v) => v.silo).join(", ")}`);
  const run = runProbe(folder, dist);
  if (run.added !== variables.length) throw new Error(`${folder}: the publish added ${run.added} versions, not ${variables.length}`);
  return { folder, dist, wallMs: run.wallMs, maxRssMb: run.maxRssMb };
}

/**
 * A full-grid year of the five variables against the same year of max_temp alone (`baseline`: published by an
 * earlier row of the same run, else here first), then one more day onto each.
 */
export async function benchVariableYear(ctx: VariablesContext, cache: string, year: string[], baseline?: PublishedYear): Promise<void> {
  const one = baseline ?? (await publishYear(ctx, cache, year, [MAX_TEMP], "one"));
  const five = await publishYear(ctx, cache, year, VARIABLES, "five");
  const [oneBytes, fiveBytes] = [await sizeOfTree(one.dist), await sizeOfTree(five.dist)];
  const ratio = five.wallMs / one.wallMs;
  Object.assign(ctx.figures, {
    variables_year_one_s: one.wallMs / 1000,
    variables_year_five_s: five.wallMs / 1000,
    variables_year_ratio: ratio,
    variables_year_five_peak_mb: five.maxRssMb,
    variables_year_five_bytes_per_day: fiveBytes / year.length,
  });
  const { say } = ctx;
  say();
  say(`five variables (${SILO_NAMES}): a full-grid year of daily COGs, a new process each (start-up included)`);
  say(row(`max_temp alone, ${fmt(year.length)} files (baseline)`, `${fmt(one.wallMs / 1000, 1)} s, peak memory ${fmt(one.maxRssMb)} MB, dist ${formatBytes(oneBytes)}${baseline ? " (the sources rows' GeoTIFFs above)" : ""}`));
  say(row(`five variables, ${fmt(year.length * VARIABLES.length)} files`, `${fmt(five.wallMs / 1000, 1)} s, peak memory ${fmt(five.maxRssMb)} MB, dist ${formatBytes(fiveBytes)}   ratio ${fmt(ratio, 2)}  (goal <= ${RATIO_GOAL})`));
  if (ratio > RATIO_GOAL) ctx.fail("a full-grid year of five variables");
  await benchVariableDay(ctx, cache, one, five);
  await rm(five.dist, { recursive: true, force: true });
  if (!baseline) await rm(one.dist, { recursive: true, force: true });
}

/** One more day onto each year by the grown-folder recipe, three days in turn, the two publishes of a day side by side. */
async function benchVariableDay(ctx: VariablesContext, cache: string, one: PublishedYear, five: PublishedYear): Promise<void> {
  const runs: { one: Record<string, number>[]; five: Record<string, number>[] } = { one: [], five: [] };
  for (const day of NEXT_DAYS) {
    await linkFolder(one.folder, cache, [day]);
    runs.one.push(runProbe(one.folder, one.dist));
    await linkFolder(five.folder, cache, [day], VARIABLES);
    runs.five.push(runProbe(five.folder, five.dist));
    if (runs.one.at(-1)!.added !== 1 || runs.five.at(-1)!.added !== VARIABLES.length) throw new Error(`one more day (${day}) added ${runs.one.at(-1)!.added} and ${runs.five.at(-1)!.added} versions`);
  }
  const [oneMs, fiveMs] = [median(runs.one.map((r) => r.wallMs)), median(runs.five.map((r) => r.wallMs))];
  const [oneBytes, fiveBytes] = [median(runs.one.map((r) => r.bytesWritten)), median(runs.five.map((r) => r.bytesWritten))];
  const ratio = fiveMs / oneMs;
  Object.assign(ctx.figures, { variables_day_one_s: oneMs / 1000, variables_day_five_s: fiveMs / 1000, variables_day_ratio: ratio });
  ctx.say(`one more day onto the year, the grown folder, a new process each (median of ${NEXT_DAYS.length} days, ${NEXT_DAYS[0]} .. ${NEXT_DAYS.at(-1)}, one and five in turn)`);
  ctx.say(row("max_temp alone (baseline)", `${fmt(oneMs / 1000, 2)} s, ${formatBytes(oneBytes)} written`));
  ctx.say(row("five variables", `${fmt(fiveMs / 1000, 2)} s, ${formatBytes(fiveBytes)} written   ratio ${fmt(ratio, 2)}  (goal <= ${RATIO_GOAL})`));
  if (ratio > RATIO_GOAL) ctx.fail("one more day of five variables onto a year");
}

/** Bytes of each variable's source files of `dates` in `cache`. */
async function sourceBytes(cache: string, dates: string[]): Promise<Map<Variable, number>> {
  const out = new Map<Variable, number>();
  for (const v of VARIABLES) out.set(v, (await Promise.all(dates.map((d) => stat(join(cache, dateToMemberPath(d, v)))))).reduce((n, s) => n + s.size, 0));
  return out;
}

/**
 * An append season of the five variables (the max_temp season's recipe: `base` full-grid days, then a day at a time
 * through a month and a year close), make prune with its default rule, and the bytes each variable's kept versions
 * reach, per full-grid day. `maxTempSeason`: the max_temp season's figure of the same run, when it ran.
 */
export async function benchVariableSeason(ctx: VariablesContext, cache: string, season: string[], base: number, maxTempSeason?: number): Promise<void> {
  const dist = join(ctx.work, "dist-variables-season");
  ctx.log(`an append season of ${SILO_NAMES}`);
  const runs = await runSeason(join(ctx.work, "variables-season"), dist, cache, season, base, VARIABLES);
  const before = await sizeOfTree(dist);
  const pruned = await prune({ dist, rule: { keepDays: 30, keepIds: new Set(), dropVersions: true }, graceMs: 0 });
  const bytes = await measureVariableBytes(dist, pruned.kept, VARIABLES);
  await rm(dist, { recursive: true, force: true });
  const worst = runs.reduce((a, b) => (b.wallMs > a.wallMs ? b : a));
  ctx.figures.variables_season_median_s = median(runs.map((r) => r.wallMs)) / 1000;
  ctx.figures.variables_season_worst_s = worst.wallMs / 1000;
  ctx.say();
  ctx.say(`five variables: an append season (${base} full-grid days, then one a day for ${runs.length} days, ${season[base]} .. ${season.at(-1)}), a new process each, then make prune`);
  ctx.say(row("daily publish of five variables", `median ${fmt(median(runs.map((r) => r.wallMs)) / 1000, 2)} s, slowest ${fmt(worst.wallMs / 1000, 2)} s on ${worst.date}; written per day, mean ${formatBytes(runs.reduce((n, r) => n + r.bytes, 0) / runs.length)}`));
  ctx.say(row("make prune (default rule: KEEP_DAYS=30)", `${pruned.dropped.length} of ${pruned.kept.length + pruned.dropped.length} versions dropped, ${formatBytes(before - bytes.total)} deleted`));
  sayVariableBytes(ctx, bytes, await sourceBytes(cache, season), season.length, maxTempSeason);
}

/** The bytes row: each variable's bytes per day beside its sources', all five against the goal. */
function sayVariableBytes(ctx: VariablesContext, bytes: DistBytes, sources: Map<Variable, number>, days: number, maxTempSeason?: number): void {
  const tmax = bytes.byVariable.find((b) => b.variable === MAX_TEMP)!;
  const rain = bytes.byVariable.find((b) => b.variable.silo === "daily_rain")!;
  const [all, allSources] = [bytes.total / days, [...sources.values()].reduce((n, b) => n + b, 0) / days];
  Object.assign(ctx.figures, {
    variables_pruned_bytes_per_day: all,
    variables_pruned_other_bytes_per_day: bytes.other / days,
    variables_sources_bytes_per_day: allSources,
    ...Object.fromEntries(bytes.byVariable.map((b) => [`variables_pruned_${b.variable.silo}_bytes_per_day`, b.total / days])),
  });
  ctx.say("  dist per full-grid day after the prune: what each variable's kept versions reach (day pieces + series + index pages),");
  ctx.say("  beside its sources (SILO-format COGs) per day");
  for (const b of bytes.byVariable) {
    const versus = b === tmax ? (maxTempSeason ? `; the max_temp season above: ${formatBytes(maxTempSeason)}, everything counted` : "") : `; ${fmt(b.total / tmax.total, 2)} of max_temp`;
    const source = sources.get(b.variable)! / days;
    const parts = [b.day, b.series, b.json].map((n) => formatBytes(n / days)).join(" + ");
    ctx.say(row(`  ${b.variable.silo}`, `${formatBytes(b.total / days)}  (${parts})   sources ${formatBytes(source)}, ratio ${fmt(b.total / days / source, 2)}${versus}`));
  }
  ctx.say(row("  the rest: catalog tree, manifests, explorer", formatBytes(bytes.other / days)));
  ctx.say(row("  all five, everything counted", `${formatBytes(all)}   sources ${formatBytes(allSources)}, ratio ${fmt(all / allSources, 2)}  (goal <= ${formatBytes(PRUNED_GOAL_BYTES)}; rain below max_temp)`));
  if (all > PRUNED_GOAL_BYTES) ctx.fail("five variables' bytes per full-grid day after make prune");
  if (rain.total >= tmax.total) ctx.fail("rain costing less than maximum temperature");
}
