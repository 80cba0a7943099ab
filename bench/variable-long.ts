// `make bench`, the five-variable rows of the long archive (issue 25): one more day onto thousands of small-window
// days of max_temp alone and of the five variables, through `make publish` as a maintainer runs it each day, beside
// REHASH=1 (every file read again: the walk a daily publish made before it remembered its sources).

import { cp, rm } from "node:fs/promises";
import { join } from "node:path";
import { MAX_TEMP, type Variable } from "../format/variables.js";
import { FIVE_VARIABLES as VARIABLES } from "./variable-sources.js";
import { type MakePublishRun, ensureBuilt, runMakePublish } from "./make-publish.js";
import { linkFolder } from "./tools.js";
import type { VariablesContext } from "./variables-bench.js";

/** The goal of issue 25: one more day through make publish, seconds a variable, whatever the archive's length. */
const DAY_GOAL_S = 2;

const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

interface GrownArchive {
  variables: readonly Variable[];
  first: MakePublishRun;
  remembered: MakePublishRun;
  rehash: MakePublishRun;
}

/** `long` but its last day, of `variables`, published by make publish; then its last day added, remembering and with REHASH=1. */
async function growLongArchive(ctx: VariablesContext, cache: string, long: string[], variables: readonly Variable[], openFiles: number): Promise<GrownArchive> {
  const name = variables.length === 1 ? "one" : "five";
  const folder = await linkFolder(join(ctx.work, `long-variables-${name}`), cache, long.slice(0, -1), variables);
  const [dist, rehashDist] = [join(ctx.work, `dist-long-variables-${name}`), join(ctx.work, `dist-long-variables-${name}-rehash`)];
  ctx.log(`publishing ${long.length - 1} small-window days of ${variables.map((v) => v.silo).join(", ")} through make publish`);
  const first = runMakePublish(folder, dist, { openFiles });
  await cp(dist, rehashDist, { recursive: true });
  await linkFolder(folder, cache, long.slice(-1), variables);
  const remembered = runMakePublish(folder, dist, { openFiles });
  const rehash = runMakePublish(folder, rehashDist, { openFiles, rehash: true });
  await rm(dist, { recursive: true, force: true });
  await rm(rehashDist, { recursive: true, force: true });
  if (remembered.added !== variables.length) throw new Error(`one more day of ${name} variables added ${remembered.added} versions`);
  if (remembered.ids.join() !== rehash.ids.join()) throw new Error(`one more day published ${remembered.ids.join(", ")} remembering hashes, ${rehash.ids.join(", ")} with REHASH=1`);
  return { variables, first, remembered, rehash };
}

/** Both archives (`long`: the days, the last one added by the measured publish), and their rows. */
export async function benchVariableLong(ctx: VariablesContext, cache: string, long: string[], openFiles: number): Promise<void> {
  ensureBuilt();
  const grown = [await growLongArchive(ctx, cache, long, [MAX_TEMP], openFiles), await growLongArchive(ctx, cache, long, VARIABLES, openFiles)];
  ctx.say();
  ctx.say(`one more day onto a long archive of ${fmt(long.length - 1)} small-window days (8 x 8 cells) through make publish, a new make process each, open files limited to ${fmt(openFiles)}`);
  for (const { variables, first, remembered, rehash } of grown) {
    const key = variables.length === 1 ? "one" : "five";
    const perVariableS = remembered.wallMs / 1000 / variables.length;
    Object.assign(ctx.figures, {
      [`variables_long_${key}_publish_s`]: first.wallMs / 1000,
      [`variables_long_${key}_publish_peak_mb`]: first.peakMb,
      [`variables_long_${key}_day_s`]: remembered.wallMs / 1000,
      [`variables_long_${key}_day_rehash_s`]: rehash.wallMs / 1000,
      [`variables_long_${key}_day_s_per_variable`]: perVariableS,
    });
    ctx.say(`  ${variables.length === 1 ? "max_temp alone" : "five variables"}: ${fmt(first.days)} files published in ${fmt(first.wallMs / 1000, 1)} s, peak memory ${fmt(first.peakMb)} MB`);
    ctx.say(`    one more day, REHASH=1 (baseline)         ${fmt(rehash.wallMs / 1000, 2)} s, ${fmt(rehash.filesRead)} files read`);
    ctx.say(`    one more day, remembered hashes           ${fmt(remembered.wallMs / 1000, 2)} s, ${fmt(remembered.filesRead)} files read, decoded ${remembered.decoded}, peak memory ${fmt(remembered.peakMb)} MB   ratio ${fmt(remembered.wallMs / rehash.wallMs, 2)}; ${fmt(perVariableS, 2)} s a variable  (goal <= ${DAY_GOAL_S} s a variable)`);
    if (perVariableS > DAY_GOAL_S) ctx.fail(`one more day onto the long archive of ${variables.length === 1 ? "max_temp" : "five variables"} through make publish`);
  }
}
