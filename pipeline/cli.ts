// Entry point of the pipeline commands (publish, fetch, update, verify, prune, sync, upgrade, demo, demo-day, defaults):
// parses flags, prints, exits non-zero on error.

import { DIST_FORMAT } from "../format/objects.js";
import { readFile } from "node:fs/promises";
import { type ParseArgsConfig, parseArgs } from "node:util";
import { writeDemo } from "./ingest/demo.js";
import { ArgumentError, PipelineError, PruneError } from "./errors.js";
import { fetchSilo, parseVariables } from "./ingest/fetch.js";
import { describeUpdate, update } from "./commands/update.js";
import { createProgress, formatBytes, formatSeconds } from "./progress.js";
import type { LockOptions } from "./files/lock-file.js";
import { DEFAULTS, MAKE_DEFAULTS } from "./defaults.js";
import { prune } from "./commands/prune.js";
import { publishNextDemoDay } from "./commands/demo-day.js";
import { publish, type PublishOptions } from "./publish/publish.js";
import { sync } from "./commands/sync.js";
import { verifyDist } from "./commands/verify.js";
import { upgrade } from "./commands/upgrade.js";
import { VARIABLES } from "../format/variables.js";

const USAGE = `usage:
  tsx pipeline/cli.ts publish [--sources DIR] [--dist DIR] [--variables V,..] [--extend] [--allow-gaps] [--prefer daily|annual] [--rehash] [--threads N]
      (no --sources: generate and publish the bundled demo)
  tsx pipeline/cli.ts fetch --from YYYY-MM-DD --to YYYY-MM-DD [--variables V,..] [--sources DIR]      daily GeoTIFFs
  tsx pipeline/cli.ts fetch --years YYYY[-YYYY][,YYYY...] [--variables V,..] [--sources DIR]          annual NetCDF files
  tsx pipeline/cli.ts update --to YYYY-MM-DD [--variables V,..] [--sources DIR] [--dist DIR] [--revision-days N] [--extend] [--prefer daily|annual]
      the nightly routine: new days and each variable's revision window fetched, the completed variables published
  tsx pipeline/cli.ts verify [--dist DIR]
  tsx pipeline/cli.ts upgrade [--dist DIR]                        a climate-dist-3 dist rewritten as climate-dist-4, in place
  tsx pipeline/cli.ts prune [--dist DIR] [--keep-days N] [--keep-file FILE] [--grace-hours H] [--drop-versions 0|1] [--dry-run]
  tsx pipeline/cli.ts sync --from URL [--dist DIR] [--prune 0|1] [--grace-hours H] [--concurrency N]
  tsx pipeline/cli.ts demo [--sources DIR]
  tsx pipeline/cli.ts demo-day [--sources DIR] [--dist DIR]     the next generated day of every demo variable, published
  tsx pipeline/cli.ts defaults                                    each make variable's default (make help prints them)
  publish, fetch, update, demo-day, prune, sync and upgrade also take [--lock-wait SECONDS] (default ${DEFAULTS.lockWaitSec}) [--local-lock]`;

type PublishFlags = Pick<PublishOptions, "extend" | "allowGaps" | "prefer" | "rehash" | "lock" | "variables" | "threads">;

async function runPublish(sources: string | undefined, dist: string, flags: PublishFlags): Promise<void> {
  const progress = createProgress();
  if (!sources) {
    progress.line(`generating the demo grids into ${DEFAULTS.demoSources} (skipped when already there)`);
    await writeDemo(DEFAULTS.demoSources, (l) => progress.status(l, l));
  }
  const s = await publish({ sources: sources || DEFAULTS.demoSources, dist, progress, ...flags });
  if (s.added.length === 0) {
    console.log(`nothing to publish: ${dist} already holds ${s.unchanged.map((d) => d.id).join(", ")} (${formatSeconds(s.ms)})`);
    return;
  }
  const lines = [
    `published into ${dist} in ${formatSeconds(s.ms)}`,
    ...s.added.map((d) => `  + ${d.id}  ${d.period_start}..${d.period_end}  ${d.access_level}  ${d.title}`),
    ...s.unchanged.map((d) => `  = ${d.id}  (already published)`),
    `  days ${s.days} (decoded ${s.decoded}, reused ${s.reused})  source files read ${s.filesRead}  tiles ${s.tiles}  observations ${s.observations}`,
    `  series spans built ${s.series.built}, revised ${s.series.revised} (${formatBytes(s.series.bytesWritten)}), reused ${s.series.reused}`,
    `  objects written ${s.objectsWritten} (${formatBytes(s.bytesWritten)}: day pieces ${formatBytes(s.dayBytesWritten)}, series ${formatBytes(s.series.bytesWritten)}, index and catalog ${formatBytes(s.bytesWritten - s.dayBytesWritten - s.series.bytesWritten)})`,
  ];
  console.log(lines.join("\n"));
}

async function runUpgrade(dist: string, lock: LockOptions, graceHours: number): Promise<number> {
  const r = await upgrade(dist, createProgress(), { lock, graceMs: graceHours * 3_600_000 });
  if (r.from === DIST_FORMAT) {
    console.log(`${dist} is already ${DIST_FORMAT}: nothing to upgrade`);
    return 0;
  }
  console.log(`upgraded ${dist} from ${r.from} to ${DIST_FORMAT} in ${formatSeconds(r.ms)}: ${r.versions} versions, ${r.objectsWritten} objects written (${formatBytes(r.bytesWritten)})`);
  if (r.waiting.files > 0) console.log(`  the ${r.waiting.files} old objects (${formatBytes(r.waiting.bytes)}) are no longer reached: make prune DIST=${dist} deletes them after ${r.waiting.firstDueAt}`);
  return 0;
}

async function runVerify(dist: string): Promise<number> {
  const progress = createProgress();
  const report = await verifyDist(dist, (text) => progress.status(text));
  progress.done();
  for (const p of report.problems) console.error(`FAIL ${p}`);
  for (const v of report.versions) {
    const what = `${v.days} days, ${v.objects} objects checked, ${v.shared} shared with versions above`;
    if (v.problems.length === 0) console.log(`ok   ${v.id}  (${what})`);
    else for (const p of v.problems) console.error(`FAIL ${v.id}: ${p}`);
  }
  for (const u of report.unlisted) console.error(`note ${u}: in no publish manifest (left by an interrupted publish?)`);
  if (report.pruned.length > 0) console.log(`note ${report.pruned.length} files unreachable since a prune wait for its grace period (make prune deletes them then)`);
  const failed = report.problems.length + report.versions.filter((v) => v.problems.length > 0).length;
  const summary = `${dist}: ${report.files} files (${formatBytes(report.bytes)}) in ${report.manifests} publish manifests, ${report.versions.length} versions`;
  if (failed > 0) {
    console.error(`${summary}: ${failed} problem${failed === 1 ? "" : "s"}`);
    return 1;
  }
  console.log(`${summary}: all verified`);
  return 0;
}

/** A whole number of at least `min` from a flag, else a usage error naming the flag. */
function readCount(flag: string, text: string, min: number): number {
  const n = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || n < min) throw new ArgumentError(`--${flag}`, "arguments", `${JSON.stringify(text)} is not a number of at least ${min}`);
  return n;
}

/** How a writer waits for another (LOCK_WAIT seconds), and whether a lock that stays on this host will do (LOCAL_LOCK). */
function readLockFlags(flags: Record<string, string | boolean | undefined>): LockOptions {
  return { waitSec: readCount("lock-wait", flags["lock-wait"] as string, 0), localLock: flags["local-lock"] === true };
}

async function runPrune(dist: string, flags: Record<string, string | boolean | undefined>): Promise<number> {
  const keepFile = flags["keep-file"] as string | undefined;
  const keepIds = keepFile
    ? new Set((await readFile(keepFile, "utf8").catch(() => { throw new PruneError(keepFile, "prune", "cannot read the keep file (one version id a line)"); })).split(/\s+/).filter(Boolean))
    : new Set<string>();
  const rule = { keepDays: readCount("keep-days", flags["keep-days"] as string, 0), keepIds, dropVersions: flags["drop-versions"] !== "0" };
  const graceMs = readCount("grace-hours", flags["grace-hours"] as string, 0) * 3_600_000;
  const dryRun = flags["dry-run"] === true;
  const r = await prune({ dist, rule, graceMs, dryRun, lock: { ...readLockFlags(flags), log: (line) => console.error(line) } });
  const [leave, dropped, deleted] = dryRun ? ["would leave", "would be dropped", "would be deleted"] : ["leaves", "dropped", "deleted"];
  for (const d of r.dropped) console.log(`  - ${d.id}  published ${d.published_at}  (${leave} the catalog)`);
  console.log(`${dist}: ${r.kept.length} versions kept, ${r.dropped.length} ${dropped}; ${r.deleted.files} unreachable files (${formatBytes(r.deleted.bytes)}) ${deleted}`);
  if (r.waiting.files > 0) console.log(`  ${r.waiting.files} unreachable files (${formatBytes(r.waiting.bytes)}) wait for the grace period: run make prune again after ${r.waiting.firstDueAt}`);
  return 0;
}

async function runSync(dist: string, flags: Record<string, string | boolean | undefined>): Promise<number> {
  const from = flags.from as string | undefined;
  if (!from) throw new ArgumentError("make sync", "arguments", "FROM=<url of the folder holding the dist's catalog.json> is required");
  const progress = createProgress();
  const r = await sync({
    from,
    dist,
    progress,
    prune: flags.prune !== "0",
    graceMs: readCount("grace-hours", flags["grace-hours"] as string, 0) * 3_600_000,
    concurrency: readCount("concurrency", flags.concurrency as string, 1),
    lock: readLockFlags(flags),
  });
  progress.done();
  const traffic = `${r.requests} requests, ${formatBytes(r.bytes)} received, ${formatSeconds(r.ms)}`;
  if (!r.changed) {
    console.log(`${dist} is up to date with ${from}: nothing to download (${traffic})`);
    return 0;
  }
  console.log(`synced ${dist} from ${from}: ${r.downloaded.length} files placed (${formatBytes(r.downloaded.reduce((n, f) => n + f.size, 0))}), ${r.held} already here, ${r.manifests} publish manifests read, catalog.json replaced last (${traffic})`);
  if (r.newChain) console.log(`  the origin was pruned: its manifest chain starts again`);
  if (r.pruned) console.log(`  collect step (make prune DROP_VERSIONS=0): ${r.pruned.deleted.files} files deleted, ${r.pruned.waiting.files} unreachable files wait for the grace period${r.pruned.waiting.firstDueAt ? ` (first due ${r.pruned.waiting.firstDueAt})` : ""}`);
  return 0;
}

async function runFetch(flags: Record<string, string | boolean | undefined>): Promise<number> {
  const { years, from, to, sources } = flags as Record<string, string | undefined>;
  if (!years && (!from || !to)) {
    throw new ArgumentError("make fetch", "arguments", "FROM=YYYY-MM-DD and TO=YYYY-MM-DD (daily files), or YEARS=YYYY-YYYY (annual files), are required");
  }
  const folder = sources || DEFAULTS.siloSources;
  const range = years ? { years } : { from, to };
  const variables = flags.variables ? parseVariables(flags.variables as string) : undefined;
  const lock = { ...readLockFlags(flags), log: (line: string) => console.error(line) };
  const r = await fetchSilo({ ...range, variables, folder, lock, log: (l) => console.log(l) });
  console.log(`fetched into ${folder}: ${r.added.length} new, ${r.revised.length} revised, ${r.unchanged.length} unchanged (${r.downloads} files downloaded, ${formatBytes(r.bytes)}); publish with: make publish SOURCES=${folder}`);
  return 0;
}

/** make update: the night's summary on stdout; each variable not published, or a failed publish, on stderr and in the exit code. */
async function runUpdate(flags: Record<string, string | boolean | undefined>): Promise<number> {
  const to = flags.to as string | undefined;
  if (!to) throw new ArgumentError("make update", "arguments", "TO=YYYY-MM-DD is required: the last date of the night (from cron: TO=$(date -d yesterday +%F))");
  const days = flags["revision-days"] as string | undefined;
  const summary = await update({
    to,
    variables: flags.variables ? parseVariables(flags.variables as string) : undefined,
    sources: (flags.sources as string | undefined) || DEFAULTS.siloSources,
    dist: flags.dist as string,
    revisionDays: days ? readCount("revision-days", days, 0) : undefined,
    extend: flags.extend === true,
    prefer: parsePrefer(flags.prefer as string | undefined),
    lock: readLockFlags(flags),
  });
  const { lines, errors } = describeUpdate(summary);
  console.log(lines.join("\n"));
  for (const error of errors) console.error(`error: ${error}`);
  return errors.length > 0 ? 1 : 0;
}

/** The make variables' defaults, one `NAME  default` line each: what make help prints under the targets. */
function describeDefaults(): string[] {
  const rows = new Map<string, string[]>();
  for (const { variable, value, note } of MAKE_DEFAULTS) rows.set(variable, [...(rows.get(variable) ?? []), note ? `${value} (${note})` : value]);
  const windows = new Map<number, string[]>();
  for (const v of VARIABLES) windows.set(v.revisionDays, [...(windows.get(v.revisionDays) ?? []), v.silo]);
  rows.set("REVISION_DAYS", [...windows].map(([days, names]) => `${days} (${names.join(", ")})`));
  return [...rows].map(([name, values]) => `${name.padEnd(15)}${values.join(", ")}`);
}

const flag = (on: boolean) => (on ? "1" : "0");

/** Every flag of every command (parseArgs options); a default is pipeline/defaults.ts's. */
const FLAGS = {
  sources: { type: "string" },
  dist: { type: "string", default: DEFAULTS.dist },
  from: { type: "string" },
  to: { type: "string" },
  years: { type: "string" },
  variables: { type: "string" },
  extend: { type: "boolean", default: false },
  "allow-gaps": { type: "boolean", default: false },
  prefer: { type: "string" },
  rehash: { type: "boolean", default: false },
  threads: { type: "string" },
  "keep-days": { type: "string", default: String(DEFAULTS.keepDays) },
  "keep-file": { type: "string" },
  "grace-hours": { type: "string", default: String(DEFAULTS.graceHours) },
  "drop-versions": { type: "string", default: flag(DEFAULTS.dropVersions) },
  "dry-run": { type: "boolean", default: false },
  prune: { type: "string", default: flag(DEFAULTS.prune) },
  concurrency: { type: "string", default: String(DEFAULTS.syncConcurrency) },
  "lock-wait": { type: "string", default: String(DEFAULTS.lockWaitSec) },
  "local-lock": { type: "boolean", default: false },
  "revision-days": { type: "string" },
} satisfies ParseArgsConfig["options"];

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, options: FLAGS });
  const command = positionals[0];
  switch (command) {
    case "publish":
      await runPublish(values.sources, values.dist!, {
        extend: values.extend,
        allowGaps: values["allow-gaps"],
        prefer: parsePrefer(values.prefer),
        rehash: values.rehash,
        lock: readLockFlags(values),
        variables: values.variables ? parseVariables(values.variables) : undefined,
        threads: values.threads === undefined ? undefined : Math.floor(readCount("threads", values.threads, 1)),
      });
      return 0;
    case "verify":
      return runVerify(values.dist!);
    case "upgrade":
      return runUpgrade(values.dist!, readLockFlags(values), readCount("grace-hours", values["grace-hours"] as string, 0));
    case "prune":
      return runPrune(values.dist!, values);
    case "sync":
      return runSync(values.dist!, values);
    case "demo": {
      const written = await writeDemo(values.sources || DEFAULTS.demoSources, (l) => console.log(l));
      console.log(`${written.length} demo files in ${values.sources || DEFAULTS.demoSources}`);
      return 0;
    }
    case "fetch":
      return runFetch(values);
    case "update":
      return runUpdate(values);
    case "defaults":
      console.log(describeDefaults().join("\n"));
      return 0;
    case "demo-day": {
      const progress = createProgress();
      const { date, summary } = await publishNextDemoDay(values.sources || DEFAULTS.demoSources, values.dist!, progress, readLockFlags(values));
      progress.done();
      console.log(`published ${date} onto ${values.dist} in ${formatSeconds(summary.ms)}: ${summary.added.map((d) => d.id).join(", ")}`);
      return 0;
    }
    default:
      console.error(USAGE);
      return 2;
  }
}

function parsePrefer(value: string | undefined): PublishOptions["prefer"] {
  if (value === undefined || value === "") return undefined;
  if (value === "daily" || value === "annual") return value;
  throw new ArgumentError("PREFER", "arguments", `"${value}" is neither daily nor annual: the form that wins a date held in both forms with different cells`);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    // A PipelineError of any kind names the file, the stage and what to do; anything else is a bug, reported the same way.
    if (err instanceof PipelineError) console.error(`error: ${err.message}`);
    else if (process.env.DEBUG) console.error(err);
    else console.error(`error: unexpected failure: ${(err as Error)?.message ?? String(err)} (run with DEBUG=1 for the stack)`);
    process.exit(1);
  },
);
