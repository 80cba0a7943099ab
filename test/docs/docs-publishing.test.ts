// docs/publishing.md's make commands run as written in a checkout of their own: make fetch against a local stand-in for
// SILO's bucket (SILO_BASE_URL, SILO_ANNUAL_BASE_URL), then make publish, make update, verify and prune; only the
// backfill's years are fewer.

import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { VARIABLES } from "../../format/variables.js";
import { docBlock, localize } from "./doc-blocks.js";
import { makeCheckout, READER_ENV, runBash } from "./doc-run.js";
import { freshDirs, makeWorkDir } from "../support/helpers.js";
import { readRecords } from "../support/server-fixture.js";
import { type SiloBucket, startSiloBucket } from "../support/silo-bucket.js";

const fresh = freshDirs(makeWorkDir("docs-publishing"));
let bucket: SiloBucket;
/** The environment make's fetch reads the bucket's address from (docs/publishing.md, the variables table). */
const siloEnv = () => ({ SILO_BASE_URL: bucket.dailyBaseUrl, SILO_ANNUAL_BASE_URL: bucket.annualBaseUrl });

/** Each dataset's newest version in a dist's catalog, as "first..last". */
function newestCoverage(dist: string): Record<string, string> {
  const catalog = JSON.parse(readFileSync(join(dist, "catalog.json"), "utf8"));
  const newest: Record<string, string> = {};
  for (const c of catalog.candidates) newest[c.record.dataset_key] ??= `${c.coverage.first}..${c.coverage.last}`;
  return newest;
}

/** Every variable's newest coverage: `range`, or `daily` for those the folder holds no annual file of. */
const allVariables = (range: string, daily: string, annual: string[]) => Object.fromEntries(VARIABLES.map((v) => [v.datasetKey, annual.includes(v.silo) ? range : daily]));
const withoutNoaa = (coverage: Record<string, string>) => Object.fromEntries(Object.entries(coverage).filter(([k]) => k !== "noaa-weather").sort());

const publishing = suite("docs: publishing.md");
publishing.before(async () => {
  bucket = await startSiloBucket(fresh("bucket"));
});
publishing.after(() => bucket.close());

publishing("publishing.md - fetching daily and annual files, publishing and verifying run as written", async () => {
  const checkout = makeCheckout(fresh("checkout"));
  const { stdout } = await runBash(docBlock("docs/publishing.md", "make fetch YEARS=2023 VARIABLES="), { cwd: checkout, env: { ...READER_ENV, ...siloEnv() } });
  assert.match(stdout, new RegExp(`^dist: \\d+ files .* ${VARIABLES.length + 1} versions: all verified$`, "m"));
  // the annual files of four variables and the daily files of every variable, one version each
  assert.equal(withoutNoaa(newestCoverage(join(checkout, "dist"))), allVariables("2023-01-01..2024-01-05", "2024-01-01..2024-01-05", ["max_temp", "min_temp", "daily_rain", "radiation"]));
  assert.ok(bucket.requests.includes("/annual/radiation/2023.radiation.nc") && bucket.requests.includes("/daily/vp/2024/20240105.vp.tif"));
});

// The backfill fetches 1889-2025: 685 annual files, 50,000 days a variable, hours of publishing. Here the same block
// fetches the last of those years only; every other word of it, and the daily routine after it, runs as written, for
// six of the variables (VARIABLES in the reader's environment, as make takes it): all 18 over a year and a night
// take minutes on a shared machine, and the first test fetches and publishes every variable.
const ROUTINE = ["max_temp", "min_temp", "daily_rain", "radiation", "vp", "evap_pan"];
publishing("publishing.md - the backfill from annual files (its last year), the daily routine and pruning run as written", async () => {
  const checkout = makeCheckout(fresh("checkout"));
  const env = { ...READER_ENV, ...siloEnv(), VARIABLES: ROUTINE.join(",") };
  const routine = VARIABLES.filter((v) => ROUTINE.includes(v.silo));
  const coverage = (range: string) => Object.fromEntries(routine.map((v) => [v.datasetKey, range]));
  await runBash(localize(docBlock("docs/publishing.md", "make fetch YEARS=1889-2025"), { "YEARS=1889-2025": "YEARS=2025" }), { cwd: checkout, env });
  assert.equal(withoutNoaa(newestCoverage(join(checkout, "dist"))), coverage("2025-01-01..2026-11-22"));
  const nightly = await runBash(docBlock("docs/publishing.md", "make update TO=2026-11-23"), { cwd: checkout, env });
  assert.equal(withoutNoaa(newestCoverage(join(checkout, "dist"))), coverage("2025-01-01..2026-11-23"));
  // the new day, and each revision window asked for again: 304s for the daily files held (and rain's annual file of
  // 2025), rain's days of 2025 inside its period fetched as daily files beside the annual file (the same cells)
  const rows = nightly.stdout.split("\n").filter((l) => /^ {2}[a-z_]+ +\d{4}-/.test(l)).map((l) => l.trim().split(/\s+/).slice(0, 6).join(" "));
  assert.equal(rows, routine.map((v) => (v.silo === "daily_rain" ? "daily_rain 2025-11-23..2026-11-23 40 0 327 0" : `${v.silo} 2026-05-18..2026-11-23 1 0 189 0`)), nightly.stdout);
  assert.match(nightly.stdout, /^ {2}published 6 versions into dist \(\d+ days decoded, .* written\): silo-tmax-20250101-20261123-/m);
  // keep.txt is the reader's list of versions to keep: here the first backfill's maximum temperature
  const first = (await readRecords(join(checkout, "dist"))).find((d) => d.id.startsWith("silo-tmax-20250101-20261122-"))!.id;
  await writeFile(join(checkout, "keep.txt"), `${first}\n`);
  const pruned = await runBash(docBlock("docs/publishing.md", "make prune DRY_RUN=1"), { cwd: checkout, env });
  // three publishes of each variable (the backfill, this year, the night) and the observation table
  assert.match(pruned.stdout, /^dist: 19 versions kept, 0 would be dropped; .*\n(.*\n)*dist: 19 versions kept, 0 dropped/m, pruned.stdout);
});

publishing.run();
