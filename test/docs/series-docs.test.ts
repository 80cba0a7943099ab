// docs/clients.md's series section stays true: its curl lines answer 200 from a live demo server (the demo publishes
// all five variables, so the APSIM line too), its Python
// example (standard library) prints the demo's place over the whole published period, the pandas line reads the
// same rows when pandas is installed, and the R line's URL answers the CSV read.csv reads.

import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { docBlock } from "./doc-blocks.js";
import { buildDemoDist, request, withServer } from "../support/server-fixture.js";

const BASE = "http://127.0.0.1:8080";
/** A Python with pandas, if any: the one first on PATH, or Debian's (python3-pandas). */
const pandasPython = ["python3", "/usr/bin/python3"].find((p) => spawnSync(p, ["-c", "import pandas"]).status === 0);

const docs = suite("docs: series");

docs("docs - the series section's curl lines answer 200 (CSV, JSON and an APSIM file), its Python example runs, pandas reads the CSV", async () => {
  const dist = await buildDemoDist();
  await withServer(dist, async (s) => {
    const curls = [docBlock("docs/clients.md", "curl -s \"$B/api/v1/series?lat=-23.7&lon=133.87\""), docBlock("docs/clients.md", "format=met\" > place.met")];
    // each curl says its status and media type on stderr, whatever the line does with the body
    const script = curls.join("\n").replaceAll(BASE, s.url).replaceAll("curl -s", "curl -s -w '%{stderr}%{http_code} %{content_type}\\n'");
    const work = mkdtempSync(join(tmpdir(), "series-docs-"));
    const { stderr } = await promisify(execFile)("bash", ["-e", "-c", script], { cwd: work, timeout: 60_000 }).finally(() => rmSync(work, { recursive: true, force: true }));
    const answers = stderr.trim().split("\n");
    assert.is(answers.length, 3, stderr);
    assert.equal(answers, ["200 text/csv; charset=utf-8", "200 application/json; charset=utf-8", "200 text/plain; charset=utf-8"]);

    const [stdlib, pandas] = [docBlock("docs/clients.md", "import csv, io, urllib.request"), docBlock("docs/clients.md", "import pandas as pd; df = pd.read_csv(")];
    // asynchronously: the server answers from this very process
    const python = (code: string, interpreter = "python3") => promisify(execFile)(interpreter, ["-c", code], { encoding: "utf8", timeout: 60_000 });
    const run = await python(stdlib.replaceAll(BASE, s.url));
    const csv = (await request(s, "/api/v1/series?lat=-23.7&lon=133.87")).text.split("\n");
    const first = csv[1].split(",");
    assert.is(run.stdout, `31 ${first[2]} ${first[3]}\n`, "the whole published period: the demo's 31 days");
    if (pandasPython) {
      const read = await python(`${pandas.replaceAll(BASE, s.url)}\nprint(len(df), df["date"].iloc[0].date(), df.columns.tolist())`, pandasPython);
      assert.is(read.stdout, `31 2003-01-01 ['longitude', 'latitude', 'date', 'air_temperature_max']\n`);
    } else console.log("  (pandas is not installed here: the pandas line was not run)");
    const r = docBlock("docs/clients.md", "d <- read.csv(");
    const url = /read\.csv\("([^"]+)"\)/.exec(r)![1].replace(BASE, s.url);
    const answer = await fetch(url);
    assert.is(answer.status, 200);
    assert.is(answer.headers.get("content-type"), "text/csv; charset=utf-8");
  });
});

docs.run();
