// Every SILO daily variable (18) in one sources folder (annual NetCDF files for 2003, daily GeoTIFFs for 2004): each
// becomes its own dataset and version chain, every cell equal to GDAL's reading of its source files, served by every contract
// route with its own unit; a revision of one variable makes no version of another; bad files stop the whole publish.

import { spawnSync } from "node:child_process";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { CATALOG_FILE } from "../../format/objects.js";
import { type Window, GRID } from "../../format/grid.js";
import { float32ToShortest } from "../../format/number-text.js";
import { VARIABLES } from "../../format/variables.js";
import { listDates } from "../../format/dates.js";
import { PublishError } from "../../pipeline/errors.js";
import { makeDemoVariables, makeLandMask } from "../../pipeline/ingest/demo.js";
import { writeSiloTiff } from "../../pipeline/ingest/geotiff.js";
import { verifyDist } from "../../pipeline/commands/verify.js";
import { publish } from "../../pipeline/publish/publish.js";
import { dateToMemberPath, yearToMemberPath } from "../../sources/silo.js";
import { makeWorkDir } from "../support/helpers.js";
import { assertSchema, request, withServer } from "../support/server-fixture.js";

const PYTHON = "/usr/bin/python3";
const MAKE_NETCDF = new URL("../fixtures/make-netcdf-fixtures.py", import.meta.url).pathname;
/** Arnhem Land and the Top End in January: monsoon rain, land and sea, inside tile r0-c1 of the lattice. */
const WINDOW: Window = [400, 40, 40, 30];
const TILE = "r0-c1";
const DATES_2003 = listDates("2003-12-20", "2003-12-31");
const DATES_2004 = listDates("2004-01-01", "2004-01-10");
const DATES = [...DATES_2003, ...DATES_2004];

const root = makeWorkDir("variables-test");
const sources = join(root, "sources");
const dist = join(root, "dist");
const log = () => {};

/** The demo generator's variables (every one) over WINDOW for each date, as GeoTIFFs under dir (YYYY/YYYYMMDD.<var>.tif). */
async function writeWindowDays(dir: string, dates: string[]): Promise<void> {
  const mask = makeLandMask();
  const [c0, r0, w, h] = WINDOW;
  for (const date of dates) {
    const days = makeDemoVariables(date, mask);
    for (const v of VARIABLES) {
      const full = days.get(v.silo)!;
      const cells = new Float32Array(w * h);
      for (let r = 0; r < h; r++) cells.set(full.subarray((r0 + r) * GRID.width + c0, (r0 + r) * GRID.width + c0 + w), r * w);
      await writeSiloTiff(join(dir, dateToMemberPath(date, v)), WINDOW, cells);
    }
  }
}

function run(args: string[], input?: string): string {
  const out = spawnSync(PYTHON, args, { encoding: "utf8", maxBuffer: 256 << 20, input });
  if (out.status !== 0) throw new Error(`python3 ${args[0] === "-c" ? "-c <script>" : args[0]} failed (status ${out.status}, signal ${out.signal}, ${out.error}): ${out.stderr}`);
  return out.stdout;
}

// GDAL reads each source: an annual file's bands (stored tenths and the file's fill), a GeoTIFF's float32 cells
const GDAL_READ = `
import json, sys
from osgeo import gdal
gdal.UseExceptions()
out = {}
for path in sys.argv[1:]:
    name = path.rsplit("/", 1)[-1]
    if name.endswith(".nc"):
        var = name.split(".")[1]
        ds = gdal.Open('NETCDF:"%s":%s' % (path, var))
        bands = []
        for n in range(1, ds.RasterCount + 1):
            band = ds.GetRasterBand(n)
            fill = band.GetNoDataValue()
            bands.append([None if v == fill else ("t", int(v)) for v in band.ReadAsArray().flatten().tolist()])
        out[name] = bands
    else:
        ds = gdal.Open(path)  # kept: a band outliving its dataset crashes GDAL's Python bindings
        band = ds.GetRasterBand(1)
        nodata = band.GetNoDataValue()
        out[name] = [[None if v == nodata else ("f", v) for v in band.ReadAsArray().astype("float64").flatten().tolist()]]
print(json.dumps(out))
`;

/** GDAL's value of each cell as the shortest float32 decimal (tenths of a packed file unpacked as SILO does), or null. */
function readWithGdal(files: string[]): Map<string, (number | null)[][]> {
  const raw = JSON.parse(run(["-c", GDAL_READ, ...files])) as Record<string, ([string, number] | null)[][]>;
  const out = new Map<string, (number | null)[][]>();
  for (const [name, bands] of Object.entries(raw)) {
    out.set(name, bands.map((cells) => cells.map((c) => (c === null ? null : float32ToShortest(Math.fround(c[0] === "t" ? c[1] / 10 : c[1]))))));
  }
  return out;
}

// make-netcdf-fixtures.py's from-tiffs (GeoTIFF days as one packed annual file) of every variable in one interpreter:
// eighteen processes each spent a third of a second of CPU importing netCDF4, numpy and GDAL
const FROM_TIFFS = `
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("make_netcdf_fixtures", sys.argv[1])
fixtures = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fixtures)
for path, year, tiffs in json.load(sys.stdin):
    fixtures.make_from_tiffs(path, year, tiffs)
`;

/** What the setup publish said. */
const setupLines: string[] = [];
const setup = (async () => {
  // 2003 as SILO's annual files (made from the days' GeoTIFFs by netCDF4), 2004 as daily GeoTIFFs: any mix
  const staging = join(root, "staging");
  await writeWindowDays(staging, DATES_2003);
  await writeWindowDays(sources, DATES_2004);
  const annual = VARIABLES.map((v) => [join(sources, yearToMemberPath(2003, v)), 2003, DATES_2003.map((d) => join(staging, dateToMemberPath(d, v)))]);
  run(["-c", FROM_TIFFS, MAKE_NETCDF], JSON.stringify(annual));
  await new Promise((resolve) => setTimeout(resolve, 2100)); // files this young are read again by the next publish
  const summary = await publish({ sources, dist, log: (line: string) => setupLines.push(line), observations: false, publishedAt: "2026-11-25T00:00:00Z" });
  return summary;
})();

const published = suite("every variable");

published("variables - one folder of annual files and GeoTIFFs gives eighteen datasets, each with its variable's record", async () => {
  const summary = await setup;
  // a backfill says how long the whole publish has left after each variable but the last
  const left = setupLines.filter((l) => l.includes("variables published"));
  assert.equal(left.map((l) => l.replace(/: .*/, "")), Array.from({ length: 17 }, (_, i) => `${i + 1} of 18 variables published`));
  for (const line of left) assert.match(line, /: \d+\.\d days\/s, (\d+s|\d+m\d\ds) left$/);
  assert.is(VARIABLES.length, 18);
  assert.equal(summary.added.map((d) => d.dataset_key), [
    "silo-tmax", "silo-tmin", "silo-rain", "silo-radiation", "silo-vp", "silo-vp_deficit", "silo-evap_pan", "silo-evap_syn", "silo-evap_comb", "silo-evap_morton_lake",
    "silo-rh_tmax", "silo-rh_tmin", "silo-et_short_crop", "silo-et_tall_crop", "silo-et_morton_actual", "silo-et_morton_potential", "silo-et_morton_wet", "silo-mslp",
  ]);
  assert.equal([summary.days, summary.decoded, summary.filesRead], [18 * 22, 18 * 22, 18 * 11]);
  for (const [i, record] of summary.added.entries()) {
    const v = VARIABLES[i];
    assert.equal(record.variables, { [v.name]: v.unit });
    assert.equal([record.period_start, record.period_end], ["2003-12-20", "2004-01-10"]);
    assert.equal(record.metadata.variable, {
      name: v.name,
      silo_name: v.silo,
      unit: v.unit,
      plausible_range: [...v.plausible],
      standard_name: v.standardName,
      cell_methods: v.cellMethods,
      observed: v.observed,
      first_date: v.firstDate,
    });
    assert.is(record.title, `SILO ${v.label} (files supplied by the maintainer)`);
    assertSchema("dataset.schema.json", record);
  }
  assert.equal((await verifyDist(dist)).problems, []);
  const pointer = JSON.parse(await readFile(join(dist, CATALOG_FILE), "utf8"));
  assert.equal(pointer.candidates.map((c: { id: string }) => c.id).sort(), summary.added.map((d) => d.id).sort());
});

published("variables - every cell of every day of every variable is GDAL's reading of its source file", async () => {
  const summary = await setup;
  const files = VARIABLES.flatMap((v) => [join(sources, yearToMemberPath(2003, v)), ...DATES_2004.map((d) => join(sources, dateToMemberPath(d, v)))]);
  const gdal = readWithGdal(files);
  await withServer(dist, async (served) => {
    for (const [i, v] of VARIABLES.entries()) {
      const id = summary.added[i].id;
      let wet = 0;
      for (const [k, date] of DATES.entries()) {
        const expected = date < "2004" ? gdal.get(yearToMemberPath(2003, v))![k] : gdal.get(dateToMemberPath(date, v).split("/")[1])![0];
        const answer = await request(served, `/api/v1/layers/${id}?tile=${date.replaceAll("-", "")}-${TILE}`);
        assert.is(answer.status, 200, `${v.silo} ${date}`);
        const { tile } = answer.json();
        assert.equal([tile.variable, tile.unit, tile.source_window], [v.name, v.unit, WINDOW]);
        assert.equal(tile.cells, expected, `${v.silo} ${date}`);
        if (v.silo === "daily_rain") wet += tile.cells.filter((c: number | null) => c !== null && c > 0).length;
      }
      if (v.silo === "daily_rain") assert.ok(wet > 0, "some rain fell in the window");
      const sample = (await request(served, `/api/v1/layers/${id}/sample?tile=20040105-${TILE}&row=3&col=4`)).json();
      assert.equal([sample.variable, sample.unit, sample.value], [v.name, v.unit, gdal.get(dateToMemberPath("2004-01-05", v).split("/")[1])![0][3 * WINDOW[2] + 4]]);
      const inspect = (await request(served, `/api/v1/datasets/${id}`)).json();
      assert.is(inspect.dataset.metadata.variable.silo_name, v.silo);
    }
  });
});

published("variables - a revised day of one variable makes a new version of that variable alone", async () => {
  const before = await setup;
  const rain = VARIABLES.find((v) => v.silo === "daily_rain")!;
  const file = join(sources, dateToMemberPath("2004-01-03", rain));
  const cells = new Float32Array(WINDOW[2] * WINDOW[3]).fill(NaN);
  cells[0] = 12.5;
  await writeSiloTiff(file, WINDOW, cells);
  const again = await publish({ sources, dist, log, observations: false, publishedAt: "2026-11-26T00:00:00Z" });
  assert.equal(again.added.map((d) => d.dataset_key), ["silo-rain"]);
  assert.equal(again.unchanged.map((d) => d.id).sort(), before.added.filter((d) => d.dataset_key !== "silo-rain").map((d) => d.id).sort());
  assert.equal([again.decoded, again.filesRead], [1, 1]);
  assert.equal(again.added[0].metadata.changes, { added: [], revised: [["2004-01-03", "2004-01-03"]], removed: [], exact: true });
  assert.equal(again.added[0].metadata.built_from, before.added[2].id);
});

published("variables - a file of an unknown variable, or an implausible value of one variable, stops the whole publish", async () => {
  const folder = join(root, "bad");
  await mkdir(join(folder, "2004"), { recursive: true });
  await writeWindowDays(folder, ["2004-01-01"]);
  // monthly_rain is SILO's, but a monthly dataset: not a daily variable this archive publishes
  const evap = join(folder, "2004", "20040101.monthly_rain.tif");
  await writeFile(evap, await readFile(join(folder, "2004", "20040101.max_temp.tif")));
  const other = join(root, "bad-dist");
  const unknown = await publish({ sources: folder, dist: other, log, observations: false }).then(
    () => null,
    (e: unknown) => e,
  );
  assert.instance(unknown, PublishError);
  assert.is((unknown as PublishError).message, `2004/20040101.monthly_rain.tif: "monthly_rain" is not a SILO variable this archive publishes; known: ${VARIABLES.map((v) => v.silo).join(", ")}; move the file out of the folder [discover]`);
  await rm(evap);
  const rain = new Float32Array(WINDOW[2] * WINDOW[3]).fill(0);
  rain[WINDOW[2] + 2] = 1600;
  await writeSiloTiff(join(folder, "2004", "20040101.daily_rain.tif"), WINDOW, rain);
  const implausible = await publish({ sources: folder, dist: other, log, observations: false }).then(
    () => null,
    (e: unknown) => e,
  );
  assert.instance(implausible, PublishError);
  assert.is(
    (implausible as PublishError).message,
    `${join(folder, "2004", "20040101.daily_rain.tif")}: value 1600 at cell (col 402, row 41; lon 132.1, lat -12.05) is outside the plausible range 0..1500; check the source file and the variable it holds [decode]`,
  );
  // nothing of either run was published: no catalog, no object of the other variables (the free lock stays)
  assert.equal(await readdir(other).catch(() => []), [".publish.lock"]);
});

published.run();
