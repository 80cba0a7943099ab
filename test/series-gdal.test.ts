// The series route against GDAL: a place over 408 days across two year closes, every month close and 29 February,
// published from GeoTIFFs, answers exactly what GDAL reads from those files, cell by cell and day by day (the float32
// bits of every value; missing where GDAL reads the nodata value), as CSV and as JSON.

import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { dateToDayNumber, listDates } from "../format/dates.js";
import type { Window } from "../format/grid.js";
import { publish } from "../pipeline/publish/publish.js";
import { dateToMemberPath } from "../sources/silo.js";
import { request, withServer, writeSources } from "./server-fixture.js";

const PYTHON = "/usr/bin/python3";
const WORK = mkdtempSync(join(tmpdir(), "series-gdal-"));
process.on("exit", () => rmSync(WORK, { recursive: true, force: true }));

/** 6 x 5 cells across a chunk edge; 2003-11-25 .. 2005-01-05: a closed 2003 tail, the leap year 2004, an open month. */
const WINDOW: Window = [398, 300, 6, 5];
const DATES = listDates("2003-11-25", "2005-01-05");

/** Tenths mostly, a value tenths cannot hold now and then, negatives, and a missing diagonal band. */
function valueOf(col: number, row: number, day: number): number | null {
  if ((col + 2 * row + day) % 11 === 0) return null;
  if ((col * 7 + day) % 97 === 0) return Math.fround(21.123456 + day / 1000);
  return Math.fround((((dateToDayNumber(DATES[day]) * 13 + col * 7 + row * 3) % 700) - 150) / 10);
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
  if (run.status !== 0) throw new Error(`GDAL could not read the sources (bash test/ensure-gdal.sh installs it): ${run.stderr}`);
  const out = new Map<string, GdalDay>();
  for (const line of run.stdout.trim().split("\n")) {
    const [path, nodata, hex] = line.split(" ");
    out.set(path, { nodata: Number(nodata), bits: new Uint32Array(new Uint8Array(Buffer.from(hex, "hex")).buffer) });
  }
  return out;
}

const f32bits = (v: number) => new Uint32Array(Float32Array.of(v).buffer)[0];

const gdal = suite("series against GDAL");

gdal("series - 30 places x 408 days across year and month seams: every value is GDAL's reading of its source file, as CSV and JSON", async () => {
  const sources = join(WORK, "sources");
  const dist = join(WORK, "dist");
  await writeSources(sources, DATES, WINDOW, valueOf);
  await publish({ sources, dist, observations: false, explorer: false, log: () => {} });
  const read = readWithGdal(DATES.map((d) => join(sources, dateToMemberPath(d))));
  const [c0, r0, w, h] = WINDOW;
  const cells: [number, number][] = [];
  for (let r = r0; r < r0 + h; r++) for (let c = c0; c < c0 + w; c++) cells.push([c, r]);
  const lats = cells.map(([, r]) => Number((-10 - 0.05 * r).toFixed(9)));
  const lons = cells.map(([c]) => Number((112 + 0.05 * c).toFixed(9)));
  await withServer(dist, async (s) => {
    const query = `lat=${lats.join(",")}&lon=${lons.join(",")}`;
    const csv = await request(s, `/api/v1/series?${query}`);
    assert.is(csv.status, 200, csv.text.slice(0, 500));
    const lines = csv.text.split("\n").slice(1, -1);
    assert.is(lines.length, cells.length * DATES.length);
    const json = (await request(s, `/api/v1/series?${query}&format=json`)).json();
    assert.equal(json.data.dates, DATES);
    let compared = 0;
    let missing = 0;
    cells.forEach(([col, row], p) => {
      const values = json.data.places[p].values.air_temperature_max;
      DATES.forEach((date, d) => {
        const [lon, lat, day, text] = lines[p * DATES.length + d].split(",");
        assert.equal([Number(lon), Number(lat), day], [lons[p], lats[p], date]);
        const source = read.get(join(sources, dateToMemberPath(date)))!;
        const bits = source.bits[(row - r0) * w + (col - c0)];
        const gdalMissing = bits === f32bits(source.nodata);
        assert.is(text === "", gdalMissing, `${date} ${col},${row}: missing in one reading only`);
        assert.is(values[d] === null, gdalMissing);
        if (gdalMissing) return void missing++;
        assert.is(f32bits(Number(text)), bits, `${date} ${col},${row}: ${text} against GDAL's ${new Float32Array(Uint32Array.of(bits).buffer)[0]}`);
        assert.is(f32bits(values[d]), bits);
        compared++;
      });
    });
    assert.is(compared + missing, 30 * 408);
    assert.ok(missing > 1000 && compared > 10_000, `${compared} values compared, ${missing} missing`);
  });
});

gdal.run();
