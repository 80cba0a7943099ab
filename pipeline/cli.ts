// Entry point of the pipeline commands (publish, fetch, verify, demo): parses flags, prints, exits non-zero on error.

import { parseArgs } from "node:util";
import { writeDemo } from "./demo.js";
import { PublishError } from "./errors.js";
import { fetchSilo } from "./fetch.js";
import { createProgress, formatBytes, formatSeconds } from "./progress.js";
import { publish, type PublishOptions } from "./publish.js";
import { verifyDist } from "./verify.js";

export const DEMO_SOURCES = ".cache/demo";

const USAGE = `usage:
  tsx pipeline/cli.ts publish [--sources DIR] [--dist DIR] [--extend] [--allow-gaps] [--prefer daily|annual] [--rehash]
      (no --sources: generate and publish the bundled demo)
  tsx pipeline/cli.ts fetch --from YYYY-MM-DD --to YYYY-MM-DD [--sources DIR]      daily GeoTIFFs
  tsx pipeline/cli.ts fetch --years YYYY[-YYYY][,YYYY...] [--sources DIR]          annual NetCDF files
  tsx pipeline/cli.ts verify [--dist DIR]
  tsx pipeline/cli.ts demo [--sources DIR]`;

type PublishFlags = Pick<PublishOptions, "extend" | "allowGaps" | "prefer" | "rehash">;

async function runPublish(sources: string | undefined, dist: string, flags: PublishFlags): Promise<void> {
  const progress = createProgress();
  if (!sources) {
    progress.line(`generating the demo grids into ${DEMO_SOURCES} (skipped when already there)`);
    await writeDemo(DEMO_SOURCES, (l) => progress.status(l, l));
  }
  const s = await publish({ sources: sources || DEMO_SOURCES, dist, progress, ...flags });
  if (s.added.length === 0) {
    console.log(`nothing to publish: ${dist} already holds ${s.unchanged.map((d) => d.id).join(", ")} (${formatSeconds(s.ms)})`);
    return;
  }
  const lines = [
    `published into ${dist} in ${formatSeconds(s.ms)}`,
    ...s.added.map((d) => `  + ${d.id}  ${d.period_start}..${d.period_end}  ${d.access_level}  ${d.title}`),
    ...s.unchanged.map((d) => `  = ${d.id}  (already published)`),
    `  days ${s.days} (decoded ${s.decoded}, reused ${s.reused})  source files read ${s.filesRead}  tiles ${s.tiles}  observations ${s.observations}`,
    `  objects written ${s.objectsWritten} (${formatBytes(s.bytesWritten)}: day pieces ${formatBytes(s.dayBytesWritten)}, index and catalog ${formatBytes(s.bytesWritten - s.dayBytesWritten)})`,
  ];
  console.log(lines.join("\n"));
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
  const failed = report.problems.length + report.versions.filter((v) => v.problems.length > 0).length;
  const summary = `${dist}: ${report.files} files (${formatBytes(report.bytes)}) in ${report.manifests} publish manifests, ${report.versions.length} versions`;
  if (failed > 0) {
    console.error(`${summary}: ${failed} problem${failed === 1 ? "" : "s"}`);
    return 1;
  }
  console.log(`${summary}: all verified`);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      sources: { type: "string" },
      dist: { type: "string", default: "dist" },
      from: { type: "string" },
      to: { type: "string" },
      years: { type: "string" },
      extend: { type: "boolean", default: false },
      "allow-gaps": { type: "boolean", default: false },
      prefer: { type: "string" },
      rehash: { type: "boolean", default: false },
    },
  });
  const command = positionals[0];
  switch (command) {
    case "publish":
      await runPublish(values.sources, values.dist!, {
        extend: values.extend,
        allowGaps: values["allow-gaps"],
        prefer: parsePrefer(values.prefer),
        rehash: values.rehash,
      });
      return 0;
    case "verify":
      return runVerify(values.dist!);
    case "demo": {
      const written = await writeDemo(values.sources || DEMO_SOURCES, (l) => console.log(l));
      console.log(`${written.length} demo files in ${values.sources || DEMO_SOURCES}`);
      return 0;
    }
    case "fetch": {
      if (!values.years && (!values.from || !values.to)) {
        throw new PublishError("make fetch", "arguments", "FROM=YYYY-MM-DD and TO=YYYY-MM-DD (daily files), or YEARS=YYYY-YYYY (annual files), are required");
      }
      const folder = values.sources || ".cache/silo";
      const range = values.years ? { years: values.years } : { from: values.from!, to: values.to! };
      const report = await fetchSilo({ ...range, folder, log: (l) => console.log(l) });
      console.log(`fetched ${report.downloaded.length}, skipped ${report.skipped.length} (${formatBytes(report.bytes)}) into ${folder}; publish with: make publish SOURCES=${folder}`);
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
  throw new PublishError("PREFER", "arguments", `"${value}" is neither daily nor annual: the form that wins a date held in both forms with different cells`);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    // A PublishError names the file, the stage and what to do; anything else is a bug, reported the same way.
    if (err instanceof PublishError) console.error(`error: ${err.message}`);
    else if (process.env.DEBUG) console.error(err);
    else console.error(`error: unexpected failure: ${(err as Error)?.message ?? String(err)} (run with DEBUG=1 for the stack)`);
    process.exit(1);
  },
);
