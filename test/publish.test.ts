// Publish pipeline: determinism, no-op republish, fail-closed cases, verify, full-grid GDAL COGs with a leap day.

import { execFile, execFileSync } from "node:child_process";
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { type CatalogFile, type RasterIndex, cellsPath, indexPath, sha256Hex, tilePath } from "../schemas/dist.js";
import { GRID, type Window, colToLon, rowToLat } from "../schemas/grid.js";
import { float32ToShortest } from "../schemas/numbers.js";
import { PublishError } from "../pipeline/errors.js";
import { DistWriter } from "../pipeline/files.js";
import { writeSiloTiff } from "../pipeline/geotiff.js";
import { publish } from "../pipeline/publish.js";
import { makeDemoDay, makeLandMask } from "../pipeline/demo.js";

const run = promisify(execFile);
const quiet = { log: () => {} };
const FIXTURES = new URL("./fixtures/", import.meta.url).pathname;

/** value of a cell on day d: one decimal, distinct per cell and day, NaN on a diagonal band ("ocean") */
function cellValue(col: number, row: number, day: number): number {
  if ((col + row) % 7 === 0) return NaN;
  return Math.fround(Math.round(100 + (col % 50) * 3 + (row % 30) * 2 + day * 10) / 10);
}

async function makeSources(dir: string, dates: string[], window: Window): Promise<void> {
  for (const [d, date] of dates.entries()) {
    const [c0, r0, w, h] = window;
    const values = new Float32Array(w * h);
    for (let r = 0; r < h; r++) for (let c = 0; c < w; c++) values[r * w + c] = cellValue(c0 + c, r0 + r, d);
    await writeSiloTiff(join(dir, date.slice(0, 4), `${date.replaceAll("-", "")}.max_temp.tif`), window, values);
  }
}

async function listTree(root: string, dir = root): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await listTree(root, p)));
    else out.push(relative(root, p));
  }
  return out.sort();
}

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run("node_modules/.bin/tsx", ["pipeline/cli.ts", ...args]);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const WINDOW: Window = [250, 250, 12, 9]; // crosses lattice column 256 and row 256: four tiles a day
const DATES = ["2004-02-28", "2004-02-29", "2004-03-01"];

const publishing = suite("publish");
let work = "";
let sources = "";

publishing.before(async () => {
  work = await mkdtemp(join(tmpdir(), "publish-test-"));
  sources = join(work, "sources");
  await makeSources(sources, DATES, WINDOW);
});
publishing.after(async () => {
  await rm(work, { recursive: true, force: true });
});

publishing("publish - two publishes into two folders are byte-identical but for the catalog's publish time", async () => {
  const a = await publish({ sources, dist: join(work, "a"), ...quiet, publishedAt: "2026-01-01T00:00:00Z" });
  const b = await publish({ sources, dist: join(work, "b"), ...quiet, publishedAt: "2026-02-02T00:00:00Z" });
  assert.equal(a.added.map((d) => d.id), b.added.map((d) => d.id));
  assert.is(a.added[0].id, `silo-tmax-20040228-20040301-${a.added[0].content_sha256.slice(0, 16)}`);
  assert.is(a.tiles, 12);
  assert.is(a.days, 3);
  assert.is(a.cells, 3 * 12 * 9);
  const files = await listTree(join(work, "a"));
  assert.equal(files, await listTree(join(work, "b")));
  for (const f of files.filter((f) => f !== "catalog.json")) {
    assert.ok((await readFile(join(work, "a", f))).equals(await readFile(join(work, "b", f))), f);
  }
  const catalogA = JSON.parse(await readFile(join(work, "a", "catalog.json"), "utf8")) as CatalogFile;
  assert.equal(catalogA.datasets.map((d) => d.published_at), ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z"]);
});

publishing("publish - tile files hold the source cells as shortest float32 decimals, nulls for missing", async () => {
  const dist = join(work, "a");
  const catalog = JSON.parse(await readFile(join(dist, "catalog.json"), "utf8")) as CatalogFile;
  const raster = catalog.datasets.find((d) => d.dataset_key === "silo-tmax")!;
  const index = JSON.parse(await readFile(join(dist, indexPath(raster.id)), "utf8")) as RasterIndex;
  assert.equal(index.dates.map((d) => [d.date, ...d.window, d.offset]), [
    ["2004-02-28", 250, 250, 12, 9, 0],
    ["2004-02-29", 250, 250, 12, 9, 432],
    ["2004-03-01", 250, 250, 12, 9, 864],
  ]);
  const text = await readFile(join(dist, tilePath(raster.id, "20040229-r0-c1")), "utf8");
  const body = JSON.parse(text);
  const tile = body.tile;
  assert.is(body.datasetVersion, raster.id);
  assert.equal([tile.width, tile.height, ...tile.source_window], [6, 6, 256, 250, 6, 6]);
  assert.equal(tile.transform, [0.05, 0, 124.775, 0, -0.05, -22.475]);
  assert.equal(tile.bbox, [124.775, -22.775, 125.075, -22.475]);
  for (let r = 0; r < 6; r++) {
    for (let c = 0; c < 6; c++) {
      assert.is(tile.cells[r * 6 + c], float32ToShortest(cellValue(256 + c, 250 + r, 1)), `cell ${r},${c}`);
    }
  }
  assert.ok(text.includes('"cells":[null,') || text.includes(",null,"));
  assert.not.ok(/\d\.\d{5,}/.test(text.split('"cells"')[1]), "no long float32 artefacts in cells");
  const cells = new Float32Array((await readFile(join(dist, cellsPath(raster.id)))).buffer.slice(0));
  assert.is(cells.length, 3 * 108);
  assert.is(cells[108 + 0 * 12 + 6], cellValue(256, 250, 1));
  assert.is(raster.metadata.synthetic, false);
  assert.is(raster.license, "CC-BY-4.0");
  assert.is(raster.source_manifest[1].url, "https://s3-ap-southeast-2.amazonaws.com/silo-open-data/Official/daily/max_temp/2004/20040229.max_temp.tif");
  assert.is(raster.source_manifest[1].sha256, sha256Hex(await readFile(join(sources, "2004", "20040229.max_temp.tif"))));
  const obs = catalog.datasets.find((d) => d.dataset_key === "noaa-weather")!;
  assert.equal(obs.variables, { precipitation_amount: "mm", air_temperature_max: "degC", air_temperature_min: "degC", wind_speed: "km/h" });
  assert.is(obs.metadata.observations, 11688);
  const first = JSON.parse(await readFile(join(dist, `versions/${obs.id}/observations/first.json`), "utf8"));
  assert.equal(first.observations[0], {
    id: "new-york-2012-01-01-air_temperature_max", dataset_version_id: obs.id, variable: "air_temperature_max", value: 10,
    unit: "degC", observed_on: "2012-01-01", period_label: null, entity_id: "new-york",
    dimensions: { location: "New York", weather: "rain" }, quality_flags: [],
  });
});

publishing("publish - publishing the same sources again is a no-op that says so", async () => {
  const dist = join(work, "a");
  const before = await readFile(join(dist, "catalog.json"));
  const second = await publish({ sources, dist, ...quiet });
  assert.is(second.added.length, 0);
  assert.is(second.unchanged.length, 2);
  assert.is(second.filesWritten, 0);
  assert.ok(before.equals(await readFile(join(dist, "catalog.json"))));
  const out = await cli(["publish", "--sources", sources, "--dist", dist]);
  assert.is(out.code, 0);
  assert.match(out.stdout, /nothing to publish: .* already holds silo-tmax-20040228-20040301-/);
});

const badCases: [string, string][] = [
  ["bad-crs.tif", "EPSG"],
  ["bad-origin.tif", "not on the SILO 0.05 degree grid"],
  ["bad-bands.tif", "band"],
  ["bad-truncated.tif", "truncated or corrupt"],
  ["bad-implausible.tif", "75.5"],
];
for (const [fixture, reason] of badCases) {
  publishing(`publish - ${fixture} stops the publish, names file and reason, leaves the previous dist intact`, async () => {
    const dist = join(work, "a");
    const catalogBefore = await readFile(join(dist, "catalog.json"));
    const bad = join(work, `bad-${fixture}`);
    await makeSources(bad, ["2004-03-02"], WINDOW);
    await copyFile(join(FIXTURES, fixture), join(bad, "20040303.max_temp.tif"));
    const out = await cli(["publish", "--sources", bad, "--dist", dist]);
    assert.is(out.code, 1);
    assert.match(out.stderr, /error: .*20040303\.max_temp\.tif/);
    assert.ok(out.stderr.includes(reason), out.stderr);
    assert.ok(catalogBefore.equals(await readFile(join(dist, "catalog.json"))));
    const verify = await cli(["verify", "--dist", dist]);
    assert.is(verify.code, 0, verify.stderr);
    assert.not.ok((await readdir(dist)).includes(".staging"));
  });
}

publishing("publish - sources with no SILO files, or an impossible date, stop with a message", async () => {
  const empty = join(work, "empty");
  await mkdir(empty, { recursive: true });
  let out = await cli(["publish", "--sources", empty, "--dist", join(work, "c")]);
  assert.is(out.code, 1);
  assert.match(out.stderr, /no SILO daily max_temp files/);
  const wrongDay = join(work, "wrong-day");
  await makeSources(wrongDay, ["2003-02-28"], WINDOW);
  await copyFile(join(wrongDay, "2003", "20030228.max_temp.tif"), join(wrongDay, "20030229.max_temp.tif"));
  out = await cli(["publish", "--sources", wrongDay, "--dist", join(work, "c")]);
  assert.is(out.code, 1);
  assert.match(out.stderr, /20030229\.max_temp\.tif: 2003-02-29 is not a calendar date/);
});

publishing("publish - an immutable name never receives different bytes", async () => {
  const writer = new DistWriter(join(work, "w"));
  await writer.write("versions/x/a.json", "one");
  await writer.write("versions/x/a.json", "one");
  try {
    await writer.write("versions/x/a.json", "two");
    assert.unreachable("should have thrown");
  } catch (err) {
    assert.instance(err, PublishError);
    assert.match((err as Error).message, /versions\/x\/a\.json: file conflict/);
  }
  assert.is(await readFile(join(work, "w", "versions/x/a.json"), "utf8"), "one");
});

publishing("publish - one publish at a time per dist; a lock left by a killed publish is taken over", async () => {
  const dist = join(work, "a");
  await writeFile(join(dist, ".publish.lock"), String(process.pid));
  try {
    await publish({ sources, dist, ...quiet });
    assert.unreachable("should have thrown");
  } catch (err) {
    assert.match((err as Error).message, new RegExp(`another publish \\(pid ${process.pid}\\) is writing this dist`));
  }
  await writeFile(join(dist, ".publish.lock"), "2147483646");
  const s = await publish({ sources, dist, ...quiet });
  assert.is(s.unchanged.length, 2);
  assert.not.ok((await readdir(dist)).includes(".publish.lock"));
});

publishing("verify - catches a flipped byte and a missing file, naming each", async () => {
  const dist = join(work, "b");
  assert.is((await cli(["verify", "--dist", dist])).code, 0);
  const catalog = JSON.parse(await readFile(join(dist, "catalog.json"), "utf8")) as CatalogFile;
  const raster = catalog.datasets.find((d) => d.dataset_key === "silo-tmax")!;
  const flipped = tilePath(raster.id, "20040228-r1-c1");
  const bytes = await readFile(join(dist, flipped));
  bytes[100] ^= 1;
  await writeFile(join(dist, flipped), bytes);
  const missing = cellsPath(raster.id);
  await rm(join(dist, missing));
  const out = await cli(["verify", "--dist", dist]);
  assert.is(out.code, 1);
  assert.ok(out.stderr.includes(`FAIL ${flipped}: sha256`), out.stderr);
  assert.ok(out.stderr.includes(`FAIL ${missing}: missing`), out.stderr);
  assert.match(out.stderr, /2 of \d+ files differ or are missing/);
});

publishing.run();

const fullGrid = suite("full grid");

fullGrid("publish - full-grid GDAL COGs (DEFLATE + floating-point predictor) for any dates, 29 February included", async () => {
  const dir = await mkdtemp(join(tmpdir(), "fullgrid-"));
  try {
    const mask = makeLandMask();
    const days = ["2004-02-28", "2004-02-29"];
    const values = days.map((d) => makeDemoDay(d.replace("2004-02", "2003-01"), mask));
    for (const [i, date] of days.entries()) {
      const plain = join(dir, `plain-${i}.tif`);
      await writeSiloTiff(plain, [0, 0, GRID.width, GRID.height], values[i]);
      await mkdir(join(dir, "src", "2004"), { recursive: true });
      execFileSync("gdal_translate", ["-q", "-of", "COG", "-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=FLOATING_POINT", plain,
        join(dir, "src", "2004", `${date.replaceAll("-", "")}.max_temp.tif`)]);
    }
    const s = await publish({ sources: join(dir, "src"), dist: join(dir, "dist"), observations: false, ...quiet });
    assert.is(s.tiles, 24);
    const id = s.added[0].id;
    assert.match(id, /^silo-tmax-20040228-20040229-[0-9a-f]{16}$/);
    const tile = JSON.parse(await readFile(join(dir, "dist", tilePath(id, "20040229-r1-c2")), "utf8")).tile;
    assert.equal(tile.source_window, [512, 256, 256, 256]);
    let compared = 0;
    for (let r = 0; r < 256; r += 5) {
      for (let c = 0; c < 256; c += 3) {
        const v = values[1][(256 + r) * GRID.width + 512 + c];
        assert.is(tile.cells[r * 256 + c], float32ToShortest(v), `cell ${r},${c} at ${colToLon(512 + c)},${rowToLat(256 + r)}`);
        compared++;
      }
    }
    assert.ok(compared > 4000);
    assert.is(s.missingCells, values.reduce((n, v) => n + v.filter(Number.isNaN).length, 0));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

fullGrid.run();
