// The five-variable rows of `make bench` alone (BENCH_ONLY=variables node_modules/.bin/tsx bench/run.ts, after `make
// build/publish-probe.js`): their inputs made once in .cache/bench, then the year, the season and the long archive.
// BENCH_ONLY=variables-year, variables-season or variables-long (comma-separated) runs some of them.

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BENCH_CACHE, YEAR_CACHE, listDays, makeFullGridDays, makeSiloLikeWindowDays } from "./sources.js";
import { benchVariableLong } from "./variable-long.js";
import { makeFullGridVariableDays, makeSmallVariableDays } from "./variable-sources.js";
import { type VariablesContext, benchVariableSeason, benchVariableYear } from "./variables-bench.js";

/** The rows `only` names; returns the number of goals not met. */
export async function benchVariablesAlone(only: string): Promise<number> {
  const wanted = (row: string) => only === "variables" || only.split(",").includes(`variables-${row}`);
  const work = await mkdtemp(join(tmpdir(), "bench-variables-"));
  let failures = 0;
  const ctx: VariablesContext = {
    work,
    say: (line = "") => console.log(line),
    log: (line) => process.stderr.write(`${line}\n`),
    figures: {},
    fail: (why) => {
      failures++;
      console.log(`  !! ${why}: a goal is not met`);
    },
  };
  try {
    const season = listDays("2003-01-01", 385);
    const yearCache = YEAR_CACHE;
    if (wanted("year") || wanted("season")) {
      await makeFullGridDays(yearCache, season, ctx.log);
      await makeFullGridVariableDays(yearCache, season, ctx.log);
    }
    ctx.say(`make bench (five-variable rows: ${only}) on ${new Date().toISOString().slice(0, 16)}Z`);
    if (wanted("year")) await benchVariableYear(ctx, yearCache, season.slice(0, 365));
    if (wanted("season")) await benchVariableSeason(ctx, yearCache, season, 349);
    if (wanted("long")) {
      const long = listDays("1950-01-01", Number(process.env.BENCH_LONG_DAYS ?? 20_000) + 1);
      const longCache = join(BENCH_CACHE, "long-silo-like");
      await makeSiloLikeWindowDays(longCache, long, [400, 300, 8, 8], ctx.log);
      await makeSmallVariableDays(longCache, long, [400, 300, 8, 8], ctx.log);
      await benchVariableLong(ctx, longCache, long, 1024);
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  console.log(JSON.stringify({ ...Object.fromEntries(Object.entries(ctx.figures).map(([k, v]) => [k, Math.round(v * 100) / 100])), failures }));
  return failures;
}
