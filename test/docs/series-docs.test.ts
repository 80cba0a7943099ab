// docs/clients.md's series section stays true: its curl lines answer from a live demo server what they say (the CSV's
// 31 rows and values, the JSON's two places over 16 days and its dataSha256, the APSIM file's constants and rows; the
// demo publishes all five variables), its Python example (standard library) prints the demo's place over the whole
// published period, the pandas line reads the same rows with their dtypes when pandas is installed, and the R line's
// URL answers the CSV read.csv reads.

import { execFile, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
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

docs("docs - the series section's curl lines answer what they say (CSV, JSON, an APSIM file: rows, values, places), its Python example runs, pandas reads the CSV with its dtypes", async () => {
  const dist = await buildDemoDist();
  await withServer(dist, async (s) => {
    const curls = [docBlock("docs/clients.md", "curl -s \"$B/api/v1/series?lat=-23.7&lon=133.87\""), docBlock("docs/clients.md", "format=met\" > place.met")];
    // each curl says its status and media type on stderr, whatever the line does with the body
    const script = curls.join("\n").replaceAll(BASE, s.url).replaceAll("curl -s", "curl -s -w '%{stderr}%{http_code} %{content_type}\\n'");
    const work = mkdtempSync(join(tmpdir(), "series-docs-"));
    const { stdout, stderr, met } = await promisify(execFile)("bash", ["-e", "-c", script], { cwd: work, timeout: 60_000 })
      .then(({ stdout, stderr }) => ({ stdout, stderr, met: readFileSync(join(work, "place.met"), "utf8") }))
      .finally(() => rmSync(work, { recursive: true, force: true }));
    const answers = stderr.trim().split("\n");
    assert.is(answers.length, 3, stderr);
    assert.equal(answers, ["200 text/csv; charset=utf-8", "200 application/json; charset=utf-8", "200 text/plain; charset=utf-8"]);
    // the whole published period at one place as CSV, then two places over 16 days as JSON, printed one after the other
    const split = stdout.indexOf('{"manifest"');
    const [header, ...rows] = stdout.slice(0, split).trim().split("\n");
    assert.is(header, "longitude,latitude,date,air_temperature_max");
    assert.is(rows.length, 31);
    assert.equal(rows.map((r) => r.split(",")[2]), Array.from({ length: 31 }, (_, d) => `2003-01-${String(d + 1).padStart(2, "0")}`));
    const csv = (await request(s, "/api/v1/series?lat=-23.7&lon=133.87")).text.split("\n");
    assert.equal(rows, csv.slice(1, -1), "the server's values");
    for (const r of rows) assert.ok(Number.isFinite(Number(r.split(",")[3])) && r.startsWith("133.85,-23.7,"), r);
    const json = JSON.parse(stdout.slice(split));
    assert.is(json.data.dates.length, 16);
    assert.equal([json.data.dates[0], json.data.dates[15]], ["2003-01-05", "2003-01-20"]);
    assert.equal(json.data.places.map((p: { longitude: number; latitude: number }) => [p.longitude, p.latitude]), [[133.85, -23.7], [153, -27.5]]);
    assert.equal(json.data.places[0].values.air_temperature_max, rows.slice(4, 20).map((r) => Number(r.split(",")[3])));
    assert.is(json.manifest.dataSha256, createHash("sha256").update(JSON.stringify(json.data)).digest("hex"));
    // the APSIM file: its constants, columns and 31 rows of numbers; tav and amp over the demo's one whole month
    const lines = met.split("\n");
    assert.is(lines[0], "[weather.met.weather]");
    assert.equal(lines.filter((l) => l.includes("=")).map((l) => l.split(" = ")[0]), ["latitude", "longitude", "tav", "amp"]);
    assert.match(met, /\ntav = \d+\.\d\d \(oC\)/);
    assert.match(met, "\n!tav and amp: the place's published record holds no whole calendar year; over its 1 whole month (2003-01):");
    const at = lines.indexOf("year day radn maxt mint rain");
    const days = lines.slice(at + 2, -1).map((l) => l.split(" ").map(Number));
    assert.is(days.length, 31);
    assert.ok(days.every((d, i) => d.length === 6 && d[0] === 2003 && d[1] === i + 1 && d.every(Number.isFinite)));

    const [stdlib, pandas] = [docBlock("docs/clients.md", "import csv, io, urllib.request"), docBlock("docs/clients.md", "import pandas as pd; df = pd.read_csv(")];
    // asynchronously: the server answers from this very process
    const python = (code: string, interpreter = "python3") => promisify(execFile)(interpreter, ["-c", code], { encoding: "utf8", timeout: 60_000 });
    const run = await python(stdlib.replaceAll(BASE, s.url));
    const first = csv[1].split(",");
    assert.is(run.stdout, `31 ${first[2]} ${first[3]}\n`, "the whole published period: the demo's 31 days");
    if (pandasPython) {
      const read = await python(`${pandas.replaceAll(BASE, s.url)}\nprint(len(df), df["date"].iloc[0].date(), df.columns.tolist(), df.dtypes.astype(str).tolist(), df["air_temperature_max"].sum())`, pandasPython);
      const sum = rows.reduce((t, r) => t + Number(r.split(",")[3]), 0);
      const [count, date, ...rest] = read.stdout.trim().split(" ");
      assert.equal([count, date], ["31", "2003-01-01"]);
      assert.match(rest.join(" "), "['longitude', 'latitude', 'date', 'air_temperature_max'] ['float64', 'float64', 'datetime64[ns]', 'float64']");
      assert.ok(Math.abs(Number(rest.at(-1)) - sum) < 1e-6, `pandas' sum ${rest.at(-1)} against ${sum}`);
    } else console.log("  (pandas is not installed here: the pandas line was not run)");
    const r = docBlock("docs/clients.md", "d <- read.csv(");
    const url = /read\.csv\("([^"]+)"\)/.exec(r)![1].replace(BASE, s.url);
    const answer = await fetch(url);
    assert.is(answer.status, 200);
    assert.is(answer.headers.get("content-type"), "text/csv; charset=utf-8");
    assert.is(await answer.text(), csv.join("\n"), "the rows read.csv reads (docs-clients.test.ts runs it in R)");
  });
});

docs.run();
