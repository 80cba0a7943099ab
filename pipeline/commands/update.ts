// make update, the nightly routine for cron: for each variable, the new days up to TO and its revision window (the
// recent days SILO may still rewrite, asked for again with conditional requests) fetched into a staging folder and
// moved into the sources folder only whole; then one publish of the variables whose fetch completed. A variable that
// did not complete is named, left exactly as it was, and caught up by the next night (docs/contract.md §5;
// docs/publishing.md "The nightly routine").

import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { dateToDayNumber, dayNumberToDate, isCalendarDate, listDates } from "../../format/dates.js";
import { type Variable, VARIABLES } from "../../format/variables.js";
import { SILO } from "../../sources/silo.js";
import { PublishError, UpdateError, describeError } from "../errors.js";
import { FetchEngine, type FetchFailure, type FetchItem, type FetchTuning, type Fetched, type HeldSources, describeFailures } from "../ingest/fetch-engine.js";
import { type Commit, commitStaged, discardStaged, removeStaging, stagedPath } from "../ingest/staging.js";
import type { LockOptions } from "../files/lock-file.js";
import { createProgress, formatBytes, formatSeconds, type Progress } from "../progress.js";
import { publish, type PublishOptions, type PublishSummary } from "../publish/publish.js";


const STAGE = "update";

export interface UpdateOptions {
  /** the last date of the night (YYYY-MM-DD): new days are fetched up to it, and each revision window ends on it */
  to: string;
  /** default: every variable of format/variables.ts */
  variables?: Variable[];
  sources: string;
  dist: string;
  /** the revision window of every variable, in days (default: each one's Variable.revisionDays) */
  revisionDays?: number;
  /** publish onto the newest version of each variable (a folder keeping only recent files) */
  extend?: boolean;
  /** the form that wins a date held both as a daily file and in an annual file with different cells */
  prefer?: PublishOptions["prefer"];
  baseUrl?: string;
  annualBaseUrl?: string;
  tuning?: Partial<FetchTuning>;
  /** how long to wait for another fetch or update of the sources folder, and for another writer of the dist */
  lock?: LockOptions;
  progress?: Progress;
  /** more options of the publish (tests: no observation table, no explorer) */
  publish?: Partial<PublishOptions>;
  /** told of each staged file moved into the sources folder (tests kill the process there) */
  onMove?: (variable: Variable, memberPath: string) => void;
}

/** One variable's night. */
export interface VariableNight {
  variable: Variable;
  /** the dates asked for: the new days and the revision window; null when there were none */
  first: string | null;
  last: string;
  /** the first day of its revision window */
  revisionFirst: string;
  /** the folder held no file of it: only the revision window was fetched */
  heldNone: boolean;
  /** member paths: files the folder did not hold, and held files the bucket had rewritten */
  added: string[];
  revised: string[];
  unchanged: number;
  failures: FetchFailure[];
  downloads: number;
  bytes: number;
  /** why it is not published tonight, or null */
  failed: string | null;
}

export interface UpdateSummary {
  to: string;
  sources: string;
  dist: string;
  /** what an earlier run left in the staging folder, made right */
  recovered: string[];
  nights: VariableNight[];
  /** the publish of the completed variables; null when none completed or it failed */
  published: PublishSummary | null;
  /** a publish failure that names no one variable (the dist lock, a full disk) */
  publishError: string | null;
  ms: number;
}

interface UpdateConfig {
  to: string;
  variables: readonly Variable[];
  sources: string;
  dist: string;
  revisionDays: number | null;
  engine: FetchEngine;
  options: UpdateOptions;
  progress: Progress;
}

/** The night: the sources folder's lock, what a killed run left made right, every variable fetched, the completed published. */
export async function update(options: UpdateOptions): Promise<UpdateSummary> {
  const started = Date.now();
  const config = toUpdateConfig(options);
  const locked = await config.engine.hold(config.sources, "update", { ...options.lock, log: (line) => config.progress.line(line) });
  try {
    for (const line of locked.recovered) config.progress.line(line);
    const { nights, held } = await fetchNights(config, locked);
    const { published, publishError } = await publishCompleted(config, nights, held);
    return { to: config.to, sources: config.sources, dist: config.dist, recovered: locked.recovered, nights, published, publishError, ms: Date.now() - started };
  } finally {
    config.progress.done();
    await locked.release();
  }
}

function toUpdateConfig(options: UpdateOptions): UpdateConfig {
  const to = options.to;
  if (typeof to !== "string" || !isCalendarDate(to)) throw new UpdateError("TO", STAGE, `${JSON.stringify(to)} is not a calendar date; give YYYY-MM-DD`);
  for (const [name, value] of [["SOURCES", options.sources], ["DIST", options.dist]]) {
    if (typeof value !== "string" || value === "") throw new UpdateError(name!, STAGE, "missing; give the folder (make update SOURCES=... DIST=...)");
  }
  const days = options.revisionDays;
  if (days !== undefined && !(Number.isInteger(days) && days >= 0)) {
    throw new UpdateError("REVISION_DAYS", STAGE, `${days} is not a whole number of days >= 0; leave it out for SILO's own revision windows`);
  }
  if (options.variables !== undefined && options.variables.length === 0) {
    throw new UpdateError("VARIABLES", STAGE, `none given; give some of ${VARIABLES.map((v) => v.silo).join(", ")}, or leave it out for all of them`);
  }
  const engine = new FetchEngine({ baseUrl: options.baseUrl, annualBaseUrl: options.annualBaseUrl, tuning: options.tuning });
  const progress = options.progress ?? createProgress();
  return { to, variables: options.variables ?? VARIABLES, sources: options.sources, dist: options.dist, revisionDays: days ?? null, engine, options, progress };
}

/** What the folder holds of each variable (SILO name): its newest date, and the years of its annual files. */
interface Held {
  newest: string;
  years: Set<number>;
}

/**
 * The folder's SILO files by variable, as publish finds them (flat or in YYYY/ folders). An annual file counts as its
 * whole year: new days are fetched from the year after it (a year still open is fetched as daily files anyway, over
 * the revision window, and the annual file is asked for again).
 */
async function listHeld(folder: string): Promise<Map<string, Held>> {
  const held = new Map<string, Held>();
  const note = (silo: string, newest: string, year: number | null) => {
    const h = held.get(silo) ?? { newest, years: new Set<number>() };
    if (newest > h.newest) h.newest = newest;
    if (year !== null) h.years.add(year);
    held.set(silo, h);
  };
  const top = await readdir(folder);
  const names = [...top, ...(await Promise.all(top.filter((n) => /^\d{4}$/.test(n)).map((n) => readdir(join(folder, n)).catch(() => [] as string[])))).flat()];
  for (const name of names) {
    const day = SILO.dailyFileName.exec(name);
    const year = SILO.annualFileName.exec(name);
    if (day) note(day[4], `${day[1]}-${day[2]}-${day[3]}`, null);
    else if (year) note(year[2], `${year[1]}-12-31`, Number(year[1]));
  }
  return held;
}

const addDays = (date: string, days: number) => dayNumberToDate(dateToDayNumber(date) + days);

interface NightPlan {
  variable: Variable;
  items: FetchItem[];
  first: string | null;
  revisionFirst: string;
  heldNone: boolean;
}

/**
 * A variable's files for the night: every day from the first new one (the day after the newest held; with none held,
 * none) or the first of its revision window, whichever is earlier, to TO; and the annual files it holds of years its
 * revision window touches (SILO rewrites those too).
 */
function planNight(variable: Variable, held: Held | undefined, config: UpdateConfig): NightPlan {
  const days = config.revisionDays ?? variable.revisionDays;
  let revisionFirst = addDays(config.to, 1 - days);
  // no revision window reaches before the variable's first date (1889-01-01, or later for evap_pan and mslp)
  if (revisionFirst < variable.firstDate) revisionFirst = variable.firstDate;
  const afterNewest = held ? addDays(held.newest, 1) : revisionFirst;
  const first = afterNewest < revisionFirst ? afterNewest : revisionFirst;
  const dates = first <= config.to ? listDates(first, config.to) : [];
  const items = dates.map((date) => config.engine.day(variable, date));
  const years = [...(held?.years ?? [])].filter((y) => days > 0 && y >= Number(revisionFirst.slice(0, 4)) && y <= Number(config.to.slice(0, 4))).sort();
  items.push(...years.map((y) => config.engine.year(variable, y)));
  return { variable, items, first: dates.length > 0 ? first : null, revisionFirst, heldNone: held === undefined };
}

/**
 * Every variable's files fetched at once into its staging folder; each variable's night then moved in whole, or
 * dropped. Also what the folder held before the night (listed once: the publish's choice follows from it and the nights).
 */
async function fetchNights(config: UpdateConfig, locked: HeldSources): Promise<{ nights: VariableNight[]; held: Map<string, Held> }> {
  const { sources, progress } = config;
  const before = await listHeld(sources);
  const plans = config.variables.map((v) => planNight(v, before.get(v.silo), config));
  const place = (item: FetchItem) => stagedPath(sources, item.variable, item.relPath);
  // a line for each file that changes something, none for the hundreds unchanged
  const log = (line: string) => (line.startsWith("unchanged ") ? undefined : progress.line(line));
  const { fetched, failures } = await config.engine.fetch(plans.flatMap((p) => p.items), locked, { place, log });
  const nights: VariableNight[] = [];
  for (const plan of plans) {
    const mine = fetched.filter((f) => f.item.variable === plan.variable);
    const failed = failures.filter((f) => f.item.variable === plan.variable);
    if (failed.length > 0) await discardStaged(sources, plan.variable);
    else await commitNight(config, plan.variable, mine);
    nights.push(toNight(plan, config, mine, failed));
  }
  await removeStaging(sources);
  return { nights, held: before };
}

/**
 * A completed variable's lock entries and staged files into the sources folder (staging.ts: a kill mid-way is finished
 * by the next run). The lock file goes first, then the new days, newest first, then the rewritten files: a folder left
 * between two moves has a gap before the new days it holds, or a file that differs from the lock file, and a publish
 * refuses it rather than publish the variable half updated.
 */
async function commitNight(config: UpdateConfig, variable: Variable, fetched: Fetched[]): Promise<void> {
  const landed = fetched.filter((f) => f.landed !== null);
  const added = landed.filter((f) => f.outcome === "added").map((f) => f.item.relPath).sort().reverse();
  const commit: Commit = {
    entries: fetched.flatMap((f) => (f.entry ? [f.entry] : [])),
    moves: [...added, ...landed.filter((f) => f.outcome !== "added").map((f) => f.item.relPath).sort()],
  };
  if (commit.entries.length === 0 && commit.moves.length === 0) return discardStaged(config.sources, variable);
  await commitStaged(config.sources, variable, commit, (memberPath) => config.options.onMove?.(variable, memberPath));
}

function toNight(plan: NightPlan, config: UpdateConfig, fetched: Fetched[], failures: FetchFailure[]): VariableNight {
  const paths = (outcome: Fetched["outcome"]) => fetched.filter((f) => f.outcome === outcome).map((f) => f.item.relPath).sort();
  const downloaded = fetched.filter((f) => f.downloaded);
  return {
    variable: plan.variable,
    first: plan.first,
    last: config.to,
    revisionFirst: plan.revisionFirst,
    heldNone: plan.heldNone,
    added: paths("added"),
    revised: paths("revised"),
    unchanged: fetched.filter((f) => f.outcome === "unchanged").length,
    failures,
    downloads: downloaded.length,
    bytes: downloaded.reduce((n, f) => n + f.bytes, 0),
    failed: failures.length > 0 ? `${failures.length} of its ${count(plan.items.length, "file")} failed to download` : null,
  };
}

/**
 * One publish of the variables whose fetch completed (the dist's lock is the publish's). A file the publish refuses
 * stops its variable alone: it is named, and the others are published without it.
 */
async function publishCompleted(
  config: UpdateConfig,
  nights: VariableNight[],
  heldBefore: Map<string, Held>,
): Promise<{ published: PublishSummary | null; publishError: string | null }> {
  // a variable the folder holds no file of (none held, none added tonight: REVISION_DAYS=0) has nothing to publish
  const holds = (n: VariableNight) => heldBefore.has(n.variable.silo) || n.added.length > 0;
  let variables = nights.filter((n) => n.failed === null && holds(n)).map((n) => n.variable);
  while (variables.length > 0) {
    try {
      const { extend, prefer, lock } = config.options;
      const options = { ...config.options.publish, sources: config.sources, dist: config.dist, variables, extend, prefer, lock, progress: config.progress };
      return { published: await publish(options), publishError: null };
    } catch (err) {
      const refused = err instanceof PublishError && err.variable !== null && variables.includes(err.variable) ? err.variable : null;
      if (!refused) return { published: null, publishError: describeError(err) };
      nights.find((n) => n.variable === refused)!.failed = `the publish refused its files: ${describeError(err)}`;
      config.progress.line(`${refused.silo}: the publish refused one of its files; publishing the other variables without it`);
      variables = variables.filter((v) => v !== refused);
    }
  }
  return { published: null, publishError: null };
}

/** The summary a night prints (stdout), and its errors (stderr; any makes the exit non-zero). */
export function describeUpdate(summary: UpdateSummary): { lines: string[]; errors: string[] } {
  const { nights } = summary;
  const downloads = nights.reduce((n, v) => n + v.downloads, 0);
  const bytes = nights.reduce((n, v) => n + v.bytes, 0);
  const width = Math.max(8, ...nights.map((n) => n.variable.silo.length));
  const row = (cells: (string | number)[]) => `  ${String(cells[0]).padEnd(width)}  ${String(cells[1]).padEnd(22)}  ${cells.slice(2, 6).map((c, i) => String(c).padStart([3, 7, 9, 6][i])).join("  ")}${cells[6] ? `  ${cells[6]}` : ""}`;
  const lines = [
    `update of ${summary.sources} to ${summary.to}: ${count(downloads, "file")} downloaded (${formatBytes(bytes)})`,
    row(["variable", "dates asked for", "new", "revised", "unchanged", "failed"]),
  ];
  for (const night of nights) {
    const period = night.first === null ? "none" : `${night.first}..${night.last}`;
    lines.push(row([night.variable.silo, period, night.added.length, night.revised.length, night.unchanged, night.failures.length, night.failed ? `not published tonight: ${night.failed}` : ""]));
    for (const line of describeFailures(night.failures)) lines.push(`      ${line}`);
    if (night.heldNone) lines.push(`      ${describeBackfill(night, summary.sources)}`);
  }
  lines.push(`  ${describePublished(summary)}`);
  lines.push(`  total ${formatSeconds(summary.ms)}`);
  const errors = nights.flatMap((n) =>
    n.failed ? [`${summary.sources}: ${n.variable.silo} not published tonight: ${n.failed}; the dist keeps its last version, and the next make update catches up [update]`] : [],
  );
  if (summary.publishError) errors.push(summary.publishError);
  return { lines, errors };
}

function describePublished({ published, publishError, dist, nights }: UpdateSummary): string {
  if (publishError) return `nothing published: the publish failed (below)`;
  if (!published && nights.every((n) => n.failed)) return `nothing published: no variable completed its night`;
  if (!published) return `nothing to publish: the folder holds no file of ${nights.filter((n) => !n.failed).map((n) => n.variable.silo).join(", ")}`;
  if (published.added.length === 0) return `nothing new to publish: ${dist} already holds ${published.unchanged.map((d) => d.id).join(", ")}`;
  const ids = published.added.map((d) => d.id).join(", ");
  return `published ${count(published.added.length, "version")} into ${dist} (${count(published.decoded, "day")} decoded, ${formatBytes(published.bytesWritten)} written): ${ids}`;
}

const count = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;

/** What to run for the days before a revision window, for a variable the folder held none of. */
function describeBackfill(night: VariableNight, sources: string): string {
  const year = Number(night.revisionFirst.slice(0, 4));
  const firstYear = Number(night.variable.firstDate.slice(0, 4));
  const commands = [
    ...(year > firstYear ? [`make fetch YEARS=${firstYear}-${year - 1} VARIABLES=${night.variable.silo} SOURCES=${sources}`] : []),
    ...(night.revisionFirst > `${year}-01-01` ? [`make fetch FROM=${year}-01-01 TO=${addDays(night.revisionFirst, -1)} VARIABLES=${night.variable.silo} SOURCES=${sources}`] : []),
  ];
  const what = `the folder held no ${night.variable.silo} file, so only its revision window from ${night.revisionFirst} was fetched`;
  return commands.length === 0 ? what : `${what}; backfill the days before it with ${commands.join(" and ")}; the next make update publishes them`;
}
