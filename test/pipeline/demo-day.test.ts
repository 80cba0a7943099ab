// The daily routine on the demo (make demo-day): the next generated day of every variable, published onto a dist a
// running server picks up without a restart; a publish that adds nothing leaves the dist exactly as it was.

import { cp, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { Window } from "../../format/grid.js";
import { sha256Hex } from "../../format/hash.js";
import { MAX_TEMP } from "../../format/variables.js";
import { DEMO_VARIABLES } from "../../pipeline/ingest/demo.js";
import { writeSiloTiff } from "../../pipeline/ingest/geotiff.js";
import { dateToMemberPath } from "../../sources/silo.js";
import { verifyDist } from "../../pipeline/commands/verify.js";
import { publishNextDemoDay } from "../../pipeline/commands/demo-day.js";
import { publish } from "../../pipeline/publish/publish.js";
import { quietProgress } from "../support/helpers.js";
import { buildDemoDist, request, withServer } from "../support/server-fixture.js";
import { SOURCE_CACHE_DIR } from "../../pipeline/publish/source-cache.js";

const quiet = quietProgress;

/** The dist's files, the publish's memories of its sources folders aside (writer-only, written by every publish). */
async function listTree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length + 1)).filter((f) => !f.startsWith(`${SOURCE_CACHE_DIR}/`)).sort();
}

/** A copy of the shared demo dist and the sources it was published from. */
async function copyDemo(): Promise<{ root: string; dist: string; sources: string }> {
  const demo = await buildDemoDist();
  const root = await mkdtemp(join(tmpdir(), "demo-day-"));
  await cp(demo, join(root, "dist"), { recursive: true });
  await cp(join(demo, "..", "sources"), join(root, "sources"), { recursive: true });
  return { root, dist: join(root, "dist"), sources: join(root, "sources") };
}

const daily = suite("demo daily routine");

daily("demo-day - publishes 2003-02-01 and then 2003-02-02 of every demo variable, generated, served without a restart", async () => {
  const { root, dist, sources } = await copyDemo();
  try {
    await withServer(dist, async (served) => {
      const first = await publishNextDemoDay(sources, dist, quiet);
      assert.is(first.date, "2003-02-01");
      assert.equal(first.summary.added.map((d) => [d.dataset_key, d.period_end, d.metadata.synthetic]), DEMO_VARIABLES.map((v) => [v.datasetKey, "2003-02-01", true]));
      assert.is(first.summary.decoded, DEMO_VARIABLES.length);
      for (const d of first.summary.added) assert.match(d.title, /^GENERATED DEMO on the SILO grid: /);
      // the server reads catalog.json again within its poll interval, without a restart
      let catalog: { datasets: { id: string }[] } = { datasets: [] };
      for (let tries = 0; tries < 50 && !catalog.datasets.some((d) => d.id === first.summary.added[0].id); tries++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        catalog = (await request(served, "/api/v1/datasets?limit=1000")).json();
      }
      assert.ok(catalog.datasets.some((d) => d.id === first.summary.added[0].id), "the new version is served");
      const second = await publishNextDemoDay(sources, dist, quiet);
      assert.is(second.date, "2003-02-02");
      assert.equal(second.summary.added.map((d) => d.period_end), DEMO_VARIABLES.map(() => "2003-02-02"));
    });
    const report = await verifyDist(dist);
    assert.equal([report.problems, report.unlisted], [[], []]);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

daily("demo-day - a publish that adds nothing writes nothing, whatever it had to compute first", async () => {
  const root = await mkdtemp(join(tmpdir(), "demo-nothing-"));
  try {
    const [generated, supplied, dist] = ["generated", "supplied", "dist"].map((d) => join(root, d));
    const window: Window = [300, 200, 4, 4];
    const files: { path: string; sha256: string }[] = [];
    for (const date of ["2003-01-01", "2003-01-02"]) {
      const path = dateToMemberPath(date, MAX_TEMP);
      await writeSiloTiff(join(generated, path), window, new Float32Array(16).fill(date.endsWith("1") ? 21.5 : 22.5));
      files.push({ path, sha256: sha256Hex(await readFile(join(generated, path))) });
    }
    await writeFile(join(generated, "demo.json"), JSON.stringify({ generator: "test", generatorVersion: "test", seed: 1, files }));
    await publish({ sources: generated, dist, log: () => {}, observations: false });
    const before = await listTree(dist);
    const again = await publish({ sources: generated, dist, log: () => {}, observations: false });
    assert.equal([again.added, again.objectsWritten, again.bytesWritten], [[], 0, 0]);
    assert.equal(await listTree(dist), before);
    // the same cells from a folder that says nothing of where they came from: an index with other provenance is
    // computed, its version id is one the dist holds, and what was computed is taken back
    await cp(generated, supplied, { recursive: true, filter: (src) => !src.endsWith("demo.json") });
    const relabelled = await publish({ sources: supplied, dist, log: () => {}, observations: false });
    assert.equal([relabelled.added, relabelled.unchanged.length], [[], 1]);
    assert.equal(await listTree(dist), before);
    const report = await verifyDist(dist);
    assert.equal([report.problems, report.unlisted], [[], []]);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

daily.run();
