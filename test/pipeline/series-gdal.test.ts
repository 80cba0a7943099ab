// The series route against GDAL: seven variables (the first of format/variables.ts: the five of an APSIM file, the
// vapour pressure deficit and pan evaporation) at 30 places over 408 days across two year closes, every month close
// and 29 February, published from GeoTIFFs (each variable its own dataset), answer exactly what GDAL reads from those
// files, variable by variable, cell by cell and day by day (the float32 bits of every value; missing where GDAL reads
// the nodata value), as CSV and as JSON; the APSIM file of a place, and the mirror client's bytes of all of it.

import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { dateToDayNumber, listDates } from "../../format/dates.js";
import type { Window } from "../../format/grid.js";
import { publish } from "../../pipeline/publish/publish.js";
import { type Variable, VARIABLES as ALL_VARIABLES } from "../../format/variables.js";
import { writeSiloTiff } from "../../pipeline/ingest/geotiff.js";
import { dateToMemberPath } from "../../sources/silo.js";
import { assertError, request, withServer } from "../support/server-fixture.js";
import { createMirrorClient } from "../../client/index.js";
import { startMirrorServer } from "../../client/mirror-server.js";

const PYTHON = "/usr/bin/python3";
/** The variables published here: every variable reads through the same code, and seven keep the test's time. */
const VARIABLES = ALL_VARIABLES.slice(0, 7);
const WORK = mkdtempSync(join(tmpdir(), "series-gdal-"));
process.on("exit", () => rmSync(WORK, { recursive: true, force: true }));

/** 6 x 5 cells across a chunk edge; 2003-11-25 .. 2005-01-05: a closed 2003 tail, the leap year 2004, an open month. */
const WINDOW: Window = [398, 300, 6, 5];
const DATES = listDates("2003-11-25", "2005-01-05");

/** A cell missing on every date (the ocean), and the column whose cells miss a value now and then. */
const OCEAN = [WINDOW[0] + 5, WINDOW[1] + 4];
const GAPPY_COL = WINDOW[0];

/**
 * Tenths mostly, within each variable's plausible range (negatives where it allows them), a value tenths cannot hold
 * now and then; one cell is ocean, and one column misses values on a diagonal band that differs by variable.
 */
function valueOf(v: number, col: number, row: number, day: number): number {
  if ((col === OCEAN[0] && row === OCEAN[1]) || (col === GAPPY_COL && (col + 2 * row + day + v) % 11 === 0)) return NaN;
  const [low, high] = VARIABLES[v].plausible;
  if ((col * 7 + day + v) % 97 === 0) return Math.fround(Math.max(low, 0) + 1.123456 + day / 1000);
  const span = Math.min(high - low, 70) * 10;
  return Math.fround(low + (((dateToDayNumber(DATES[day]) * 13 + col * 7 + row * 3 + v * 31) % span) / 10));
}

async function writeVariable(folder: string, v: number, variable: Variable): Promise<string[]> {
  const [c0, r0, w, h] = WINDOW;
  const files: string[] = [];
  for (const [day, date] of DATES.entries()) {
    const values = new Float32Array(w * h);
    for (let r = 0; r < h; r++) for (let c = 0; c < w; c++) values[r * w + c] = valueOf(v, c0 + c, r0 + r, day);
    const file = join(folder, dateToMemberPath(date, variable));
    await writeSiloTiff(file, WINDOW, values);
    files.push(file);
  }
  return files;
}

// GDAL reads each day's file: the band as float32, and its nodata value
const READ_WITH_GDAL = `
import sys, struct
from osgeo import gdal
gdal.UseExceptions()
for path in sys.stdin.read().split():
    ds = gdal.Open(path)
    band = ds.GetRasterBand(1)
    raw = band.ReadRaster(0, 0, ds.RasterXSize, ds.RasterYSize, buf_type=gdal.GDT_Float32)
    print(path, band.GetNoDataValue(), raw.hex())
`;

interface GdalDay {
  nodata: number;
  /** float32 bits of each cell, row-major over the window */
  bits: Uint32Array;
}

function readWithGdal(files: string[]): Map<string, GdalDay> {
  const run = spawnSync(PYTHON, ["-c", READ_WITH_GDAL], { input: files.join("\n"), encoding: "utf8", maxBuffer: 64 << 20 });
  if (run.status !== 0) throw new Error(`GDAL could not read the sources (bash test/support/ensure-gdal.sh installs it): ${run.stderr}`);
  const out = new Map<string, GdalDay>();
  for (const line of run.stdout.trim().split("\n")) {
    const [path, nodata, hex] = line.split(" ");
    out.set(path, { nodata: Number(nodata), bits: new Uint32Array(new Uint8Array(Buffer.from(hex, "hex")).buffer) });
  }
  return out;
}

const f32bits = (v: number) => new Uint32Array(Float32Array.of(v).buffer)[0];

const gdal = suite("series against GDAL");
const sources = join(WORK, "sources");
const dist = join(WORK, "dist");
/** each variable's files, date by date */
let files: string[][];

gdal.before(async () => {
  files = await Promise.all(VARIABLES.map((variable, v) => writeVariable(sources, v, variable)));
  await publish({ sources, dist, observations: false, explorer: false, log: () => {} });
});

gdal("series - seven variables at 30 places x 408 days across year and month seams: every value is GDAL's reading of its source file, as CSV and JSON", async () => {
  const read = readWithGdal(files.flat());
  const [c0, r0, w, h] = WINDOW;
  const cells: [number, number][] = [];
  for (let r = r0; r < r0 + h; r++) for (let c = c0; c < c0 + w; c++) cells.push([c, r]);
  const lats = cells.map(([, r]) => Number((-10 - 0.05 * r).toFixed(9)));
  const lons = cells.map(([c]) => Number((112 + 0.05 * c).toFixed(9)));
  // asked by SILO names, in another order than format/variables.ts
  const order = [2, 0, 6, 4, 1, 5, 3];
  await withServer(dist, async (s) => {
    const query = `lat=${lats.join(",")}&lon=${lons.join(",")}&variables=${order.map((v) => VARIABLES[v].silo).join(",")}`;
    const csv = await request(s, `/api/v1/series?${query}`);
    assert.is(csv.status, 200, csv.text.slice(0, 500));
    const [header, ...lines] = csv.text.split("\n").slice(0, -1);
    assert.is(header, `longitude,latitude,date,${order.map((v) => VARIABLES[v].name).join(",")}`);
    assert.is(lines.length, cells.length * DATES.length);
    assert.is(String(csv.headers["service-dataset-version"]).split(",").length, order.length);
    const json = (await request(s, `/api/v1/series?${query}&format=json`)).json();
    assert.equal(json.data.dates, DATES);
    let compared = 0;
    let missing = 0;
    cells.forEach(([col, row], p) => {
      DATES.forEach((date, d) => {
        const [lon, lat, day, ...texts] = lines[p * DATES.length + d].split(",");
        assert.equal([Number(lon), Number(lat), day], [lons[p], lats[p], date]);
        order.forEach((v, k) => {
          const source = read.get(files[v][d])!;
          const bits = source.bits[(row - r0) * w + (col - c0)];
          const gdalMissing = bits === f32bits(source.nodata);
          const fromJson = json.data.places[p].values[VARIABLES[v].name][d];
          assert.is(texts[k] === "", gdalMissing, `${VARIABLES[v].silo} ${date} ${col},${row}: missing in one reading only`);
          assert.is(fromJson === null, gdalMissing);
          if (gdalMissing) return void missing++;
          assert.is(f32bits(Number(texts[k])), bits, `${VARIABLES[v].silo} ${date} ${col},${row}: ${texts[k]} against GDAL's ${new Float32Array(Uint32Array.of(bits).buffer)[0]}`);
          assert.is(f32bits(fromJson), bits);
          compared++;
        });
      });
    });
    assert.is(compared + missing, order.length * 30 * 408);
    assert.ok(missing > 2000 && compared > 55_000, `${compared} values compared, ${missing} missing`);
  });
});

/** tav and amp of a .met file's rows as APSIM's Weather component reads and computes them (ApsimX Weather.cs). */
function apsimTavAmp(rows: string[][], maxtAt: number, mintAt: number): { tav: number; amp: number } {
  const first = Number(rows[0][0]);
  const years = Number(rows[rows.length - 1][0]) - first + 1;
  const sums = Array.from({ length: years }, () => new Array(12).fill(0));
  const days = Array.from({ length: years }, () => new Array(12).fill(0));
  for (const row of rows) {
    const [year, doy] = [Number(row[0]), Number(row[1])];
    const month = new Date(Date.UTC(year, 0, doy)).getUTCMonth();
    sums[year - first][month] += (Number(row[maxtAt]) + Number(row[mintAt])) * 0.5;
    days[year - first][month]++;
  }
  let tav = 0;
  let amp = 0;
  for (let y = 0; y < years; y++) {
    const means = sums[y].map((sum, m) => sum / days[y][m]).filter((_, m) => days[y][m] !== 0);
    tav += means.reduce((a, b) => a + b, 0) / 12.0;
    amp += Math.max(-999, ...means) - Math.min(999, ...means);
  }
  return { tav: tav / years, amp: amp / years };
}

gdal("series - met: an APSIM weather file of a place over 408 days, its rows the CSV's values, tav and amp as APSIM computes them over its whole year; vp when asked", async () => {
  const [col, row] = [WINDOW[0] + 2, WINDOW[1] + 1];
  const [lat, lon] = [Number((-10 - 0.05 * row).toFixed(9)), Number((112 + 0.05 * col).toFixed(9))];
  await withServer(dist, async (s) => {
    for (const withVp of [false, true]) {
      const variables = `radiation,max_temp,min_temp,daily_rain${withVp ? ",vp" : ""}`;
      const met = await request(s, `/api/v1/series?lat=${lat}&lon=${lon}&variables=${variables}&format=met`);
      assert.is(met.status, 200, met.text.slice(0, 400));
      assert.is(met.headers["content-type"], "text/plain; charset=utf-8");
      const lines = met.text.split("\n");
      assert.is(lines[0], "[weather.met.weather]");
      const at = lines.indexOf(`year day radn maxt mint rain${withVp ? " vp" : ""}`);
      assert.ok(at > 0, met.text.slice(0, 800));
      assert.is(lines[at + 1], `() () (MJ/m2) (oC) (oC) (mm)${withVp ? " (hPa)" : ""}`);
      const constants = Object.fromEntries(lines.slice(0, at).filter((l) => l.includes("=")).map((l) => [l.split("=")[0].trim(), l.split("=")[1].trim()]));
      assert.equal(Object.keys(constants), ["latitude", "longitude", "tav", "amp"]);
      assert.is(constants.latitude, `${lat.toFixed(2)} (DECIMAL DEGREES)`);
      assert.is(constants.longitude, `${lon.toFixed(2)} (DECIMAL DEGREES)`);
      const rows = lines.slice(at + 2, -1).map((l) => l.split(" "));
      assert.is(rows.length, DATES.length);
      assert.equal([rows[0][0], rows[0][1], rows[36][1], rows[37][0], rows[37][1], rows.at(-1)![0], rows.at(-1)![1]], ["2003", "329", "365", "2004", "1", "2005", "5"]);
      // the file holds 2004 whole (and parts of 2003 and 2005): tav and amp describe 2004 alone (api/series/climate.ts)
      const { tav, amp } = apsimTavAmp(rows.filter((r) => r[0] === "2004"), 3, 4);
      assert.ok(lines.includes("!tav and amp: over the whole calendar years 2004 (1 year) of this file, as APSIM's Weather component computes them (ApsimX Weather.cs: the mean of (maxt + mint) / 2 of each month, a year's tav their sum over 12 and its amp their range, averaged over the years)"));
      assert.is(constants.tav, `${tav.toFixed(2)} (oC) ! annual average ambient temperature`);
      assert.is(constants.amp, `${amp.toFixed(2)} (oC) ! annual amplitude in mean monthly temperature`);
      // the same values as the CSV of the same variables, in APSIM's column order
      const csv = (await request(s, `/api/v1/series?lat=${lat}&lon=${lon}&variables=${variables}`)).text.split("\n").slice(1, -1).map((l) => l.split(",").slice(3));
      assert.equal(rows.map((r) => r.slice(2)), csv);
      assert.is(met.headers["service-dataset-version"], (await request(s, `/api/v1/series?lat=${lat}&lon=${lon}&variables=${variables}&start=2004-01-01&end=2004-01-01`)).headers["service-dataset-version"]);
    }
  });
});

gdal("series - met refuses a place missing a value (naming the variable, the cell and the dates) and an ocean cell: 422 missing_values", async () => {
  await withServer(dist, async (s) => {
    const ask = (col: number, row: number) => request(s, `/api/v1/series?lat=${(-10 - 0.05 * row).toFixed(2)}&lon=${(112 + 0.05 * col).toFixed(2)}&variables=radiation,max_temp,min_temp,daily_rain&format=met`);
    const gappy = assertError(await ask(GAPPY_COL, WINDOW[1]), 422, "missing_values");
    assert.match(gappy.message, /misses surface_downwelling_shortwave_flux_in_air \(radn\) on \d+ dates \(2003-\d\d-\d\d, .*precipitation_amount \(rain\) on \d+ dates/);
    assert.match(gappy.message, "in 2003-11-25..2005-01-05. Ask format=csv to see every missing value");
    const ocean = assertError(await ask(OCEAN[0], OCEAN[1]), 422, "missing_values");
    assert.match(ocean.message, "it is ocean or outside SILO's land mask");
    // the same places as CSV: their missing values are empty fields
    const csv = await request(s, `/api/v1/series?lat=${(-10 - 0.05 * OCEAN[1]).toFixed(2)}&lon=${(112 + 0.05 * OCEAN[0]).toFixed(2)}&variables=max_temp,min_temp&start=2004-02-29&end=2004-02-29`);
    assert.is(csv.text, `longitude,latitude,date,air_temperature_max,air_temperature_min\n${112 + 0.05 * OCEAN[0]},${Number((-10 - 0.05 * OCEAN[1]).toFixed(9))},2004-02-29,,\n`);
  });
});

gdal("series - the mirror client answers five variables, an APSIM file and its refusal with the server's bytes and headers", async () => {
  const mirror = await startMirrorServer({ dist });
  try {
    await withServer(dist, async (s) => {
      const client = createMirrorClient({ baseUrl: mirror.url });
      const [lat, lon] = [(-10 - 0.05 * (WINDOW[1] + 2)).toFixed(2), (112 + 0.05 * (WINDOW[0] + 3)).toFixed(2)];
      const all = "max_temp,min_temp,daily_rain,radiation,vp";
      for (const query of [`lat=${lat}&lon=${lon}&variables=${all}`, `lat=${lat},${lat}&lon=${lon},${lon}&variables=${all}&format=json&start=2004-02-27&end=2004-03-02`, `lat=${lat}&lon=${lon}&variables=radiation,max_temp,min_temp,daily_rain,vp&format=met`, `lat=${(-10 - 0.05 * OCEAN[1]).toFixed(2)}&lon=${(112 + 0.05 * OCEAN[0]).toFixed(2)}&variables=radiation,max_temp,min_temp,daily_rain&format=met`]) {
        const server = await request(s, `/api/v1/series?${query}`);
        const answer = await client.answer({ path: `/api/v1/series?${query}` });
        assert.is(answer.status, server.status, query);
        assert.ok(Buffer.from(answer.body).equals(server.bytes), query);
        for (const name of ["Content-Type", "Content-Digest", "ETag", "Service-Dataset-Version", "Service-Request-SHA256", "Link"]) assert.is(answer.headers[name], server.headers[name.toLowerCase()], `${query}: ${name}`);
      }
    });
  } finally {
    await mirror.close();
  }
});

gdal.run();
