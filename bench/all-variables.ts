// `make bench`, the all-variables row (issue 34; alone: BENCH_ONLY=all-variables node_modules/.bin/tsx bench/run.ts):
// every SILO daily variable of format/variables.ts over the same full-grid days as max_temp alone, each publish in a
// new process as `make publish` runs it. The goal: publishing all of them costs no more than their count times one.
// The inputs are the demo generator's days of every variable, as SILO ships them (COG, DEFLATE + floating-point
// predictor), made once in .cache/bench/all-variables.

import { existsSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { MAX_TEMP, VARIABLES } from "../format/variables.js";
import { makeDemoVariables, makeLandMask } from "../pipeline/ingest/demo.js";
import { formatBytes } from "../pipeline/progress.js";
import { dateToMemberPath } from "../sources/silo.js";
import { BENCH_CACHE, createCogWriter, listDays } from "./sources.js";
import { linkFolder, runProbe, sizeOfTree } from "./tools.js";
import type { VariablesContext } from "./variables-bench.js";

/** Full-grid days: enough that a publish's start-up is a small part of max_temp's, few enough for about 2 minutes. */
const DAYS = listDays("2003-01-01", 14);
const CACHE = join(BENCH_CACHE, "all-variables");
/** The goal of issue 34: publishing every variable costs no more than their count times one. */
const RATIO_GOAL = VARIABLES.length;

const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const row = (label: string, text: string) => `  ${label.padEnd(43)} ${text}`;

/** The demo generator's days of every variable as COGs in CACHE, made once (a day's files are made together). */
async function makeAllVariableDays(log: (line: string) => void): Promise<void> {
  const missing = DAYS.filter((d) => VARIABLES.some((v) => !existsSync(join(CACHE, dateToMemberPath(d, v)))));
  if (missing.length === 0) return;
  log(`making ${missing.length} full-grid days of ${VARIABLES.length} variables as COGs in ${CACHE} (once; kept for later runs)`);
  const mask = makeLandMask();
  const scratch = join(CACHE, ".scratch");
  await mkdir(scratch, { recursive: true });
  const writer = createCogWriter(scratch);
  for (const date of missing) {
    const days = makeDemoVariables(date, mask);
    for (const v of VARIABLES) await writer.write(join(CACHE, dateToMemberPath(date, v)), days.get(v.silo)!);
  }
  await writer.finish();
  await rm(scratch, { recursive: true, force: true });
}

/** max_temp alone, then every variable, over the same days, each into a new dist by a new process. */
export async function benchAllVariables(ctx: VariablesContext): Promise<void> {
  await makeAllVariableDays(ctx.log);
  const publishOf = async (name: string, variables: typeof VARIABLES) => {
    const folder = await linkFolder(join(ctx.work, `all-variables-${name}`), CACHE, DAYS, variables);
    const dist = join(ctx.work, `dist-all-variables-${name}`);
    ctx.log(`publishing ${DAYS.length} full-grid days of ${variables.length} variable${variables.length === 1 ? "" : "s"}`);
    const run = runProbe(folder, dist);
    if (run.added !== variables.length) throw new Error(`${folder}: the publish added ${run.added} versions, not ${variables.length}`);
    const bytes = await sizeOfTree(dist);
    await rm(dist, { recursive: true, force: true });
    return { wallMs: run.wallMs, maxRssMb: run.maxRssMb, bytes };
  };
  const one = await publishOf("one", [MAX_TEMP]);
  const all = await publishOf("all", VARIABLES);
  const ratio = all.wallMs / one.wallMs;
  Object.assign(ctx.figures, { all_variables_one_s: one.wallMs / 1000, all_variables_all_s: all.wallMs / 1000, all_variables_ratio: ratio, all_variables_peak_mb: all.maxRssMb });
  ctx.say();
  ctx.say(`every SILO variable (${VARIABLES.length}): ${DAYS.length} full-grid days of daily COGs (${DAYS[0]} .. ${DAYS.at(-1)}), a new process each (start-up included)`);
  ctx.say(row(`max_temp alone, ${fmt(DAYS.length)} files (baseline)`, `${fmt(one.wallMs / 1000, 1)} s, peak memory ${fmt(one.maxRssMb)} MB, dist ${formatBytes(one.bytes)}`));
  ctx.say(
    row(
      `${VARIABLES.length} variables, ${fmt(DAYS.length * VARIABLES.length)} files`,
      `${fmt(all.wallMs / 1000, 1)} s, peak memory ${fmt(all.maxRssMb)} MB, dist ${formatBytes(all.bytes)}   ratio ${fmt(ratio, 2)}  (goal <= ${RATIO_GOAL})`,
    ),
  );
  if (ratio > RATIO_GOAL) ctx.fail(`publishing ${VARIABLES.length} variables against one`);
}
