// Every example of the README and docs/*.md runs in the tests: each fenced block is claimed by the test that runs it
// (test/docs/doc-blocks.ts docBlock), or is no example (```text: output samples, tables, diagrams). README's own blocks run
// here as written: `make demo` in a checkout holding the demo, then its curl, pandas and R lines against that server.

import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { cp } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { checkRequest } from "../../api/query/request.js";
import { describeSeriesCall } from "../../api/series/hint.js";
import { validatorFor } from "../../schemas/validate.js";
import { NOT_AN_EXAMPLE, REPO, docBlock, findBlocks, listDocBlocks, localize, readClaims } from "./doc-blocks.js";
import { freePort, makeCheckout, READER_ENV, runBash, startUntilAnswered } from "./doc-run.js";
import { freshDirs, makeWorkDir } from "../support/helpers.js";
import { buildDemoDist } from "../support/server-fixture.js";

const run = promisify(execFile);
const fresh = freshDirs(makeWorkDir("docs-examples"));
const where = (b: { file: string; line: number }) => `${b.file}:${b.line}`;

const registry = suite("docs: every block");

registry("docs - every code block is claimed by a test that runs it, or is ```text; every claim names one block", () => {
  const blocks = listDocBlocks();
  assert.ok(blocks.length >= 50, `${blocks.length} blocks`);
  const untagged = blocks.filter((b) => b.lang === "");
  assert.equal(untagged.map(where), [], "tag every block: its language, or text for an output sample, a table or a diagram");
  const { claims, unreadable } = readClaims();
  assert.equal(unreadable, [], "docBlock takes two string literals, so a claim can be read here");
  const claimed = new Set<string>();
  for (const claim of claims) {
    const found = findBlocks(claim.file, claim.match);
    assert.is(found.length, 1, `${claim.by}: the claim of ${claim.file} ${JSON.stringify(claim.match)} finds ${found.length} blocks`);
    claimed.add(where(found[0]));
  }
  const unclaimed = blocks.filter((b) => b.lang !== NOT_AN_EXAMPLE && !claimed.has(where(b)));
  assert.equal(unclaimed.map((b) => `${where(b)} ${b.lang}: ${b.text.split("\n")[0]}`), [], "run these blocks in a test (docBlock), or tag them text if they are no example");
});

registry("docs - every make target and variable is documented; every example data request is a valid contract request", () => {
  const makefile = readFileSync(join(REPO, "Makefile"), "utf8");
  const pages = [...new Set(listDocBlocks().map((b) => b.file))].map((f) => readFileSync(join(REPO, f), "utf8")).join("\n");
  const targets = [...makefile.matchAll(/^([a-z-]+):.*## /gm)].map((m) => m[1]);
  assert.ok(targets.length >= 10, `targets: ${targets}`);
  for (const t of targets) assert.ok(pages.includes(`make ${t}`), `make ${t} is not in README or docs/`);
  for (const v of ["SOURCES", "DIST", "FROM", "TO", "PORT", "HOST"]) assert.ok(pages.includes(`\`${v}\``), v);
  const bodies = listDocBlocks().flatMap((b) => [...b.text.matchAll(/(?:-d|echo) '(\{[^']*\})'/g)].map((m) => m[1]));
  assert.ok(bodies.length >= 3, `found ${bodies.length} example bodies`);
  for (const body of bodies) {
    const spec = JSON.parse(body);
    assert.ok(validatorFor("data-request.schema.json")(spec), body);
    assert.is(checkRequest(spec, describeSeriesCall).region.bbox.length, 4);
  }
});

registry("docs - README and operating.md state make test's one measured time: the same count of tests, the same minutes", () => {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  const operating = readFileSync(join(REPO, "docs/operating.md"), "utf8");
  const stated = /`make test` takes about (\d+) minutes on 2 cores \((\d+) tests,/.exec(readme.replace(/\s+/g, " "));
  const measured = /\*\*How long\*\*: (\d+) tests in (\d+) min (\d+) s \(`time make test`/.exec(operating.replace(/\s+/g, " "));
  assert.ok(stated && measured, "README and operating.md each state the time");
  assert.is(stated[2], measured[1], "the count of tests");
  assert.is(Number(stated[1]), Math.round(Number(measured[2]) + Number(measured[3]) / 60), "the minutes, rounded");
});

registry.run();

const readme = suite("docs: README.md");

/** README's address for `make demo`'s server, replaced by the port the test's `make demo` serves on. */
const README_BASE = "http://127.0.0.1:8080";

/** How Python prints a float64 read from a CSV field: its shortest repr, "40.0" for "40". */
const repr = (field: string) => (/[.eE]/.test(field) ? String(Number(field)) : `${field}.0`);

readme("README - make demo serves the demo; the curl, pandas (rows, dtypes, a value) and R lines read it as written; make test is the runner", async () => {
  const demo = await buildDemoDist();
  const checkout = makeCheckout(fresh("checkout"));
  // a checkout where make demo ran before: its generated grids in .cache/demo, the demo published into dist
  await cp(join(demo, "..", "sources"), join(checkout, ".cache", "demo"), { recursive: true });
  await cp(demo, join(checkout, "dist"), { recursive: true });
  const [demoLine, testLine] = docBlock("README.md", "make demo   #").trim().split("\n");
  assert.match(demoLine, /^make demo\b/);
  const port = await freePort();
  const server = await startUntilAnswered(["bash", "-c", demoLine], `http://127.0.0.1:${port}/api/health`, { cwd: checkout, env: { ...READER_ENV, PORT: String(port) } });
  try {
    assert.match(server.output(), /^nothing to publish: dist already holds silo-tmax-/m);
    // the API reference README names, from make serve's bundled server (its Redoc script read from node_modules)
    for (const path of ["/api/v1/docs", "/api/v1/docs/redoc.standalone.js", "/docs/clients.md"]) assert.is((await fetch(`http://127.0.0.1:${port}${path}`)).status, 200, path);
    const live = (text: string) => localize(text, { [README_BASE]: `http://127.0.0.1:${port}` });
    const csv = (await runBash(live(docBlock("README.md", "curl -s \"http://127.0.0.1:8080/api/v1/series")), { cwd: checkout })).stdout.split("\n");
    assert.is(csv[0], "longitude,latitude,date,air_temperature_max,air_temperature_min,precipitation_amount,surface_downwelling_shortwave_flux_in_air,water_vapor_partial_pressure_in_air");
    assert.is(csv.length, 33, "31 days, a header and the last line end");
    const pandas = live(docBlock("README.md", "import pandas as pd"));
    const read = await run("/usr/bin/python3", ["-c", `${pandas}\nprint(len(df), df["date"].iloc[0].date(), df.columns.tolist(), df.dtypes.astype(str).tolist(), float(df["air_temperature_max"].iloc[14]))`], { timeout: 60_000 });
    const maxTemp15th = csv[15].split(",")[3];
    // the rows, their dtypes (dates parsed, values numbers, not text) and a value: the 15th day's, as the curl printed it
    assert.is(read.stdout, `31 2003-01-01 ['longitude', 'latitude', 'date', 'air_temperature_max'] ['float64', 'float64', 'datetime64[ns]', 'float64'] ${repr(maxTemp15th)}\n`);
    const terra = live(docBlock("README.md", "library(terra); day <- rast("));
    const r = await run("Rscript", ["-e", `${terra}\nwriteLines(paste(c(dim(day), format(extract(day, cbind(133.85, -23.7))[[1]])), collapse = " "))`], { timeout: 60_000 });
    assert.is(r.stdout, `681 841 1 ${maxTemp15th}\n`, "the map of 2003-01-15: time index 14");
  } finally {
    await server.stop();
  }
  // the second line is the command running this test: it is make's test target, test/run.sh
  assert.is(testLine.replace(/\s+#.*$/, ""), "make test");
  assert.is((await run("make", ["-n", "test"], { cwd: checkout, env: READER_ENV })).stdout, "bash test/run.sh\n");
});

readme.run();
