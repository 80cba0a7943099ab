// A test's child process started from JavaScript built first: its TypeScript entry bundled as the Makefile bundles
// build/cli.js (npm packages stay imports), into the folder of the pipeline's threads that make test built
// (PIPELINE_WORKERS, test/support/worker-bundles.ts), so the threads a publish starts sit beside it, as build/cli.js's
// sit beside it. Under tsx each start of a publish spent about 1.5 s of CPU on the loader and the pipeline's modules;
// a test that starts 21 of them spent half a minute of CPU before any of them published.

import { mkdirSync, rmSync, symlinkSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { build } from "esbuild";

/**
 * `entry` built as PIPELINE_WORKERS/<folder>/<name>-<pid>.js (folder: where the threads it starts are built, such as
 * "pipeline/publish"), and the path to start it by: a link beside it named as the entry's file (<pid>/<name>.ts), so
 * a command line still names the entry's file (a lock records its holder's; node runs what the link points to). Both
 * go when this process exits. Null when no threads were built (a file run alone, under tsx): start the entry under
 * tsx then. The entry must name no file by import.meta.url but the threads it starts.
 */
export async function bundleChild(entry: string, folder: string): Promise<string | null> {
  const workers = process.env.PIPELINE_WORKERS;
  if (!workers) return null;
  const name = basename(entry);
  const outfile = join(workers, folder, `${name.replace(/\.[cm]?ts$/, "")}-${process.pid}.js`);
  const link = join(workers, folder, String(process.pid), name);
  await build({ entryPoints: [entry], outfile, bundle: true, platform: "node", format: "esm", target: "node20", packages: "external", logLevel: "warning" });
  mkdirSync(dirname(link), { recursive: true });
  rmSync(link, { force: true });
  symlinkSync(outfile, link);
  process.once("exit", () => {
    rmSync(dirname(link), { recursive: true, force: true });
    rmSync(outfile, { force: true });
  });
  return link;
}

/** The argv after node that starts `entry`: its bundle when there is one, else the entry under tsx. */
export async function childArgs(entry: string, folder: string): Promise<string[]> {
  const bundled = await bundleChild(entry, folder);
  return bundled ? [bundled] : ["--import", "tsx", entry];
}
