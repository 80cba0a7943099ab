// make test's set-up step: builds the shared fixtures (server-fixture.ts: the server fixture and the demo dist) once
// into .cache/test-fixtures/<key>/, or keeps the folder an earlier run built from the same code, files unchanged.

import { existsSync } from "node:fs";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { MANIFEST_FILE, checkManifest, fixtureKey, fixturesHome, listManifest, removeOthers } from "./fixture-cache.js";
import { publishDemo, publishFixture } from "./server-fixture.js";

async function prepare(): Promise<void> {
  const key = fixtureKey();
  const folder = join(fixturesHome(), key);
  if (existsSync(folder)) {
    const problems = await checkManifest(folder);
    if (problems.length === 0) {
      console.log(`shared fixtures: ${folder} (kept: built earlier from the same code)`);
      return;
    }
    console.log(`shared fixtures: ${folder} differs from its manifest (a test wrote into it?), built again:\n  ${problems.slice(0, 20).join("\n  ")}`);
    await rm(folder, { recursive: true, force: true });
  }
  await removeOthers(key);
  // built under a temporary name and renamed: a folder named by its key is always whole
  const building = `${folder}.tmp-${process.pid}`;
  await mkdir(building, { recursive: true });
  const started = performance.now();
  await publishFixture(join(building, "fixture"));
  await publishDemo(join(building, "demo"));
  await writeFile(join(building, MANIFEST_FILE), `${JSON.stringify(await listManifest(building), null, 1)}\n`);
  // another run of the same checkout may have finished the same key first: its folder is as good, and stays
  const renamed = await rename(building, folder).then(() => true, (err: NodeJS.ErrnoException) => (err.code === "ENOTEMPTY" || err.code === "EEXIST" ? false : Promise.reject(err)));
  if (!renamed) await rm(building, { recursive: true, force: true });
  console.log(`shared fixtures: ${folder} (built in ${((performance.now() - started) / 1000).toFixed(1)} s${renamed ? "" : "; another run's, finished first, kept"})`);
}

await prepare();
