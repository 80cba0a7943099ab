// Entry point of the pipeline commands (publish, fetch, verify, demo): parses flags, prints, exits non-zero on error.

import { parseArgs } from "node:util";
import { readPublished } from "./catalog.js";
import { writeDemo } from "./demo.js";
import { PublishError } from "./errors.js";
import { fetchSilo } from "./fetch.js";
import { createProgress, formatBytes, formatSeconds } from "./progress.js";
import { publish } from "./publish.js";
import { verifyDist } from "./verify.js";

export const DEMO_SOURCES = ".cache/demo";

const USAGE = `usage:
  tsx pipeline/cli.ts publish [--sources DIR] [--dist DIR]   (no --sources: generate and publish the bundled demo)
  tsx pipeline/cli.ts fetch --from YYYY-MM-DD --to YYYY-MM-DD [--sources DIR]
  tsx pipeline/cli.ts verify [--dist DIR]
  tsx pipeline/cli.ts demo [--sources DIR]`;

async function runPublish(sources: string | undefined, dist: string): Promise<void> {
  const progress = createProgress();
  if (!sources) {
    progress.line(`generating the demo grids into ${DEMO_SOURCES} (skipped when already there)`);
    await writeDemo(DEMO_SOURCES, (l) => progress.status(l, l));
  }
  const s = await publish({ sources: sources || DEMO_SOURCES, dist, progress });
  const state = await readPublished(dist);
  const distBytes = state ? state.manifest.files.reduce((n, f) => n + f.size, 0) : 0;
  if (s.added.length === 0) {
    console.log(`nothing to publish: ${dist} already holds ${s.unchanged.map((d) => d.id).join(", ")} (${formatSeconds(s.ms)})`);
    return;
  }
  const lines = [
    `published into ${dist} in ${formatSeconds(s.ms)}`,
    ...s.added.map((d) => `  + ${d.id}  ${d.period_start}..${d.period_end}  ${d.access_level}  ${d.title}`),
    ...s.unchanged.map((d) => `  = ${d.id}  (already published)`),
    `  days ${s.days}  tiles ${s.tiles}  cells ${s.cells}  missing cells ${s.missingCells}  observations ${s.observations}`,
    `  files written ${s.filesWritten} (${formatBytes(s.bytesWritten)})  dist now ${state?.catalog.datasets.length ?? 0} versions, ${state?.manifest.files.length ?? 0} files, ${formatBytes(distBytes)}`,
  ];
  console.log(lines.join("\n"));
}

async function runVerify(dist: string): Promise<number> {
  const progress = createProgress();
  const report = await verifyDist(dist, (done, total) => progress.status(`verified ${done}/${total} files`));
  progress.done();
  for (const p of report.problems) console.error(`FAIL ${p}`);
  for (const u of report.unlisted) console.error(`note ${u}: not in the manifest (left by an interrupted publish?)`);
  if (report.problems.length) {
    console.error(`${dist}: ${report.problems.length} of ${report.files} files differ or are missing`);
    return 1;
  }
  console.log(`${dist}: all ${report.files} files match the manifest (${formatBytes(report.bytes)})`);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { sources: { type: "string" }, dist: { type: "string", default: "dist" }, from: { type: "string" }, to: { type: "string" } },
  });
  const command = positionals[0];
  switch (command) {
    case "publish":
      await runPublish(values.sources, values.dist!);
      return 0;
    case "verify":
      return runVerify(values.dist!);
    case "demo": {
      const written = await writeDemo(values.sources || DEMO_SOURCES, (l) => console.log(l));
      console.log(`${written.length} demo files in ${values.sources || DEMO_SOURCES}`);
      return 0;
    }
    case "fetch": {
      if (!values.from || !values.to) throw new PublishError("make fetch", "arguments", "FROM=YYYY-MM-DD and TO=YYYY-MM-DD are required");
      const folder = values.sources || ".cache/silo";
      const report = await fetchSilo({ from: values.from, to: values.to, folder, log: (l) => console.log(l) });
      console.log(`fetched ${report.downloaded.length}, skipped ${report.skipped.length} (${formatBytes(report.bytes)}) into ${folder}; publish with: make publish SOURCES=${folder}`);
      return 0;
    }
    default:
      console.error(USAGE);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    if (err instanceof PublishError) console.error(`error: ${err.message}`);
    else console.error(err);
    process.exit(1);
  },
);
