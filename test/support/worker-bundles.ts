// The pipeline's worker threads built as JavaScript for make test (PIPELINE_WORKERS, read by pipeline/pool.ts): every
// pipeline/**/*-worker.ts bundled from this checkout as `make install` bundles them, into .cache/test-workers/.

import { readdirSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join, resolve } from "node:path";
import { build } from "esbuild";

const ROOT = resolve(import.meta.dirname, "../..");

/** Builds the worker entries afresh; returns their folder, for PIPELINE_WORKERS. */
export async function bundleWorkers(root = ROOT): Promise<string> {
  const out = join(root, ".cache", "test-workers");
  await rm(out, { recursive: true, force: true });
  const entries = readdirSync(join(root, "pipeline"), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith("-worker.ts"))
    .map((f) => join(root, "pipeline", f));
  // the Makefile's flags: npm packages stay imports, resolved from node_modules above the bundle
  await build({ entryPoints: entries, outdir: out, outbase: root, bundle: true, platform: "node", format: "esm", target: "node20", packages: "external", logLevel: "warning" });
  return out;
}
