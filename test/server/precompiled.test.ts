// The validators compiled at build time (schemas/precompile.ts, loaded by server/precompiled.ts): the same verdict and
// the same issues as ajv compiling the schema at run time, and taken only when built from these schema files.

import { spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { CATALOG_FILE } from "../../format/objects.js";
import { schemaFilesSha256 } from "../../schemas/fingerprint.js";
import { PRECOMPILED_IDS, precompiledModule } from "../../schemas/precompile.js";
import { type ValidateFunction, makeAjv, toIssues, validatorFor } from "../../schemas/validate.js";
import { loadPrecompiledValidators } from "../../server/precompiled.js";
import { freePort } from "../support/nginx.js";
import { buildDemoDist } from "../support/server-fixture.js";

const test = suite("precompiled validators");
const ID = "dist-catalog-pointer.schema.json";
// beside the real one, in build/, where the module's require() finds node_modules as it does there
const BUILD = fileURLToPath(new URL("../../build/", import.meta.url));
const written: string[] = [];

async function writeModule(text: string): Promise<URL> {
  mkdirSync(BUILD, { recursive: true });
  const file = join(BUILD, `test-validators-${process.pid}-${written.length}.js`);
  written.push(file);
  await writeFile(file, text);
  return new URL(`file://${file}`);
}

/** ajv compiling the schema at run time, as validatorFor does without a precompiled module. */
const compiled = (id: string): ValidateFunction => makeAjv().getSchema(id)!;

test.after(async () => {
  for (const file of written) await rm(file, { force: true });
});

test("the start's schemas are the ones precompiled", () => {
  assert.equal(PRECOMPILED_IDS, [ID]);
});

test("a module that was not built is absent; one built from other schema files is stale and not used", async () => {
  assert.is(await loadPrecompiledValidators(new URL(`file://${join(BUILD, "no-such-validators.js")}`)), "absent");
  const text = precompiledModule().replace(/schemaFilesSha256 = "[0-9a-f]{64}"/, `schemaFilesSha256 = "${"0".repeat(64)}"`);
  const url = await writeModule(text);
  assert.is(await loadPrecompiledValidators(url), "stale");
  const stale = ((await import(url.href)) as { validators: Record<string, ValidateFunction> }).validators[ID];
  assert.is.not(validatorFor(ID), stale);
});

test("a module built from these files is used, and judges a catalog.json as ajv's own compilation does", async () => {
  const url = await writeModule(precompiledModule());
  assert.is(await loadPrecompiledValidators(url), "used");
  const precompiled = validatorFor(ID);
  assert.is(precompiled, ((await import(url.href)) as { validators: Record<string, ValidateFunction> }).validators[ID]);
  const runtime = compiled(ID);
  const pointer = JSON.parse(await readFile(join(await buildDemoDist(), CATALOG_FILE), "utf8"));
  const broken: [string, (p: any) => void][] = [
    ["as published", () => {}],
    ["without catalog", (p) => delete p.catalog],
    ["another format", (p) => (p.format = "climate-dist-2")],
    ["a candidate's id not a version id", (p) => (p.candidates[0].id = "not a version id")],
    ["a candidate's record without its license and a gap of one date", (p) => (delete p.candidates[0].record.license, p.candidates[0].coverage.gaps.push(["2003-01-02"]))],
    ["an unknown member", (p) => (p.extra = 1)],
  ];
  for (const [what, edit] of broken) {
    const value = structuredClone(pointer);
    edit(value);
    const [a, b] = [precompiled(structuredClone(value)), runtime(structuredClone(value))];
    assert.is(a, b, what);
    assert.equal(toIssues(precompiled.errors, value, ID), toIssues(runtime.errors, value, ID), what);
    assert.is(a, what === "as published", what);
  }
  precompiled({ ...pointer, catalog: undefined });
  assert.equal(toIssues(precompiled.errors, { ...pointer, catalog: undefined }, ID).map(({ code, path }) => ({ code, path })), [{ code: "required", path: ["catalog"] }]);
});

test("the built server takes the module make install built beside it: it says nothing of it at start", async () => {
  const dist = await buildDemoDist();
  const port = await freePort();
  const server = spawn(process.execPath, [join(BUILD, "server.js")], { env: { ...process.env, DIST: dist, PORT: String(port), HOST: "127.0.0.1", LOG: "0" } });
  let stderr = "";
  server.stderr.on("data", (chunk) => (stderr += chunk));
  try {
    let status = 0;
    for (let i = 0; i < 200 && status !== 200; i++) {
      status = await fetch(`http://127.0.0.1:${port}/api/health`).then((r) => r.status, () => 0);
      if (status !== 200) await new Promise((r) => setTimeout(r, 50));
    }
    assert.is(status, 200);
    assert.is(stderr, "");
    const built = ((await import(new URL("validators.js", `file://${BUILD}`).href)) as { schemaFilesSha256: string }).schemaFilesSha256;
    assert.is(built, schemaFilesSha256());
  } finally {
    server.kill("SIGKILL");
  }
});

test.run();
