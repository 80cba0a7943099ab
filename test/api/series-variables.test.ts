// Every SILO variable on the routes beside the contract, over the demo dist (which publishes DEMO_VARIABLES, pan
// evaporation and FAO56 reference evapotranspiration among them): the catalog lists every variable published with its
// first date, a period before a variable's first date is a 422 naming it (the series route, and the direct query's
// pointer to it), an APSIM file takes pan evaporation as its evap column, a variable without a column is a 400, and
// docs/clients.md's water balance example prints what the series route answers.

import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { VARIABLES, findVariable } from "../../format/variables.js";
import { DEMO_VARIABLES } from "../../pipeline/ingest/demo.js";
import { checkFirstDates } from "../../api/series/select.js";
import { docBlock } from "../docs/doc-blocks.js";
import { assertError, buildDemoDist, post, request, requestFor, withServer } from "../support/server-fixture.js";

const BASE = "http://127.0.0.1:8080";
const pandasPython = ["python3", "/usr/bin/python3"].find((p) => spawnSync(p, ["-c", "import pandas"]).status === 0);
/** Toowoomba's cell, on land in the demo's mask. */
const PLACE = "lat=-27.5&lon=151.9";

const routes = suite("series: every variable");

routes("series - the catalog lists every variable the demo publishes, each with SILO's first date of it", async () => {
  const dist = await buildDemoDist();
  await withServer(dist, async (s) => {
    const page = (await request(s, "/api/v1/datasets?limit=100")).json();
    const silo = page.datasets.filter((d: { dataset_key: string }) => d.dataset_key.startsWith("silo-"));
    assert.equal(
      silo.map((d: { dataset_key: string }) => d.dataset_key).sort(),
      DEMO_VARIABLES.map((v) => v.datasetKey).sort(),
    );
    assert.ok(DEMO_VARIABLES.some((v) => v.silo === "evap_pan") && DEMO_VARIABLES.some((v) => v.silo === "et_short_crop"));
    for (const d of silo) {
      const v = VARIABLES.find((x) => x.datasetKey === d.dataset_key)!;
      assert.equal([d.metadata.variable.name, d.metadata.variable.silo_name, d.metadata.variable.first_date], [v.name, v.silo, v.firstDate]);
    }
    assert.is(silo.find((d: { dataset_key: string }) => d.dataset_key === "silo-evap_pan").metadata.variable.first_date, "1970-01-01");
  });
});

routes("series - a period starting before a variable's first date is a 422 naming the date to start from", async () => {
  const dist = await buildDemoDist();
  await withServer(dist, async (s) => {
    const before = assertError(await request(s, `/api/v1/series?${PLACE}&variables=daily_rain,evap_pan&start=1969-12-31&end=2003-01-31`), 422, "coverage_unavailable");
    assert.is(before.message, "pan_evaporation (evap_pan) starts on 1970-01-01: SILO has no value before it; give start=1970-01-01 or later.");
    const end = assertError(await request(s, `/api/v1/series?${PLACE}&variables=mslp&end=1956-12-31`), 422, "coverage_unavailable");
    assert.is(end.message, "air_pressure_at_mean_sea_level (mslp) starts on 1957-01-01: SILO has no value before it; give start=1957-01-01 or later, and an end on or after it.");
    // rain starts in 1889: the same period of rain alone is a matter of what is published, not of SILO's first
    // date, so it is answered for its published part
    const rain = await request(s, `/api/v1/series?${PLACE}&variables=daily_rain&start=1969-12-31&end=2003-01-31`);
    assert.is(rain.status, 200, rain.text);
    assert.is(rain.headers["service-period"], "2003-01-01/2003-01-31");
    // from the first date on, the same call answers what is published
    assert.is((await request(s, `/api/v1/series?${PLACE}&variables=evap_pan&start=2003-01-01&end=2003-01-02`)).status, 200);
    // the direct query's pointer to the series route asks from the first date
    const query = requestFor({ col: 800, row: 350, width: 1, height: 1 }, "1969-12-20", "1970-01-10", { variables: ["pan_evaporation"] });
    const issueOf = (body: { issues: { path: unknown[]; message: string }[] }) => body.issues.find((i) => JSON.stringify(i.path) === '["variables",0]')!.message;
    const refused = assertError(await post(s, "/api/v1/data/query", query), 422, "invalid_request");
    assert.match(issueOf(refused), "start=1970-01-01&end=1970-01-10&variables=pan_evaporation");
    const early = assertError(await post(s, "/api/v1/data/query", { ...query, period: { start: "1969-12-01", end: "1969-12-10" } }), 422, "invalid_request");
    assert.match(issueOf(early), "GET /api/v1/series answers pan_evaporation from 1970-01-01, SILO's first date of it; no date of 1969-12-01..1969-12-10 has a value");
  });
});

routes("series - the first-date rule: every variable's own date, the latest of several, nothing for a period from it", () => {
  const [pan, mslp, rain] = ["evap_pan", "mslp", "daily_rain"].map((n) => findVariable(n)!);
  assert.equal(VARIABLES.filter((v) => v.firstDate !== "1889-01-01").map((v) => [v.silo, v.firstDate]), [["evap_pan", "1970-01-01"], ["mslp", "1957-01-01"]]);
  const said = (f: () => void) => {
    try {
      f();
      return null;
    } catch (e) {
      return (e as Error).message;
    }
  };
  assert.is(said(() => checkFirstDates([pan, mslp, rain], "1970-01-01", undefined)), null);
  assert.is(said(() => checkFirstDates([rain], "1889-01-01", "1889-01-01")), null);
  assert.is(said(() => checkFirstDates([mslp, pan], undefined, undefined)), null);
  assert.is(
    said(() => checkFirstDates([mslp, pan], "1950-01-01", "2000-01-01")),
    "air_pressure_at_mean_sea_level (mslp) starts on 1957-01-01, pan_evaporation (evap_pan) starts on 1970-01-01: SILO has no value before it; give start=1970-01-01 or later.",
  );
});

routes("series - an APSIM file takes pan evaporation as its evap column, in SILO's order; a variable without a column is a 400", async () => {
  const dist = await buildDemoDist();
  await withServer(dist, async (s) => {
    const asked = "variables=vp,evap_pan,daily_rain,min_temp,max_temp,radiation&start=2003-01-01&end=2003-01-31";
    const met = await request(s, `/api/v1/series?${PLACE}&${asked}&format=met`);
    assert.is(met.status, 200, met.text);
    const lines = met.text.split("\n");
    const columns = lines.findIndex((l) => l.startsWith("year day"));
    assert.equal(lines.slice(columns, columns + 2), ["year day radn maxt mint rain evap vp", "() () (MJ/m2) (oC) (oC) (mm) (mm) (hPa)"]);
    assert.ok(lines.some((l) => l.startsWith("!evap: pan_evaporation of dataset version silo-evap_pan-20030101-20030131-")));
    // every row's values are the CSV's of the same call, column for column
    const csv = (await request(s, `/api/v1/series?${PLACE}&variables=radiation,max_temp,min_temp,daily_rain,evap_pan,vp&start=2003-01-01&end=2003-01-31`)).text.trim().split("\n").slice(1);
    const rows = lines.slice(columns + 2).filter((l) => l !== "");
    assert.is(rows.length, 31);
    rows.forEach((row, d) => {
      const [year, day, ...values] = row.split(" ");
      assert.equal([year, day], ["2003", String(d + 1)]);
      assert.equal(values, csv[d].split(",").slice(3), `2003-01-${String(d + 1).padStart(2, "0")}`);
    });
    // docs/clients.md's line writes the same file (its period: the whole published one, the demo's January)
    const work = mkdtempSync(join(tmpdir(), "series-variables-"));
    try {
      await promisify(execFile)("bash", ["-e", "-c", docBlock("docs/clients.md", "format=met\" > evap.met").replaceAll("$B", s.url)], { cwd: work, timeout: 60_000 });
      assert.is(readFileSync(join(work, "evap.met"), "utf8"), met.text);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
    const refused = assertError(await request(s, `/api/v1/series?${PLACE}&variables=radiation,max_temp,min_temp,daily_rain,et_short_crop&format=met`), 400, "invalid_parameters");
    assert.equal(refused.issues, [
      {
        code: "enum",
        path: ["variables", 4],
        message:
          "reference_evapotranspiration_short_crop (et_short_crop) has no column in an APSIM weather file (format=met), which holds radiation, max_temp, min_temp and daily_rain (evap_pan and vp may be added); leave it out (format=csv answers it), or add evap_pan (evap) and vp (vp)",
      },
    ]);
  });
});

routes("series - docs/clients.md's water balance prints the days, rain, pan evaporation and irrigation deficit the series route answers", async () => {
  const dist = await buildDemoDist();
  const block = docBlock("docs/clients.md", "forcing = df.rename(");
  await withServer(dist, async (s) => {
    const url = /url = "([^"]+)"/.exec(block)![1].replace(BASE, s.url);
    const { data } = (await request(s, `${url.slice(s.url.length)}&format=json`)).json();
    const values = data.places[0].values;
    const sum = (xs: (number | null)[]) => xs.reduce<number>((a, x) => a + (x ?? 0), 0);
    const deficit = sum(values.reference_evapotranspiration_short_crop.map((e: number | null, d: number) => (e === null || values.precipitation_amount[d] === null ? null : Math.max(0, e - values.precipitation_amount[d]))));
    const expected = [data.dates.length, sum(values.precipitation_amount), sum(values.pan_evaporation), deficit];
    assert.is(data.dates.length, 31);
    assert.ok(expected[2] > 0 && expected[3] > 0, "the demo's place evaporates");
    if (!pandasPython) {
      console.log("  (pandas is not installed here: the water balance block was not run)");
      return;
    }
    const run = await promisify(execFile)(pandasPython, ["-c", block.replaceAll(BASE, s.url)], { encoding: "utf8", timeout: 60_000 });
    const printed = run.stdout.trim().split(" ").map(Number);
    assert.is(printed[0], expected[0]);
    // sums printed to one decimal: within half a tenth of the series route's values, summed here
    printed.slice(1).forEach((x, i) => assert.ok(Math.abs(x - expected[i + 1]) <= 0.05 + 1e-9, `${run.stdout}: ${expected.join(" ")}`));
  });
});

routes.run();
