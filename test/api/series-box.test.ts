// GET /api/v1/series with bbox= over real HTTP: a box's cells by the direct query's rule (format/grid.ts bboxToWindow)
// as CSV (cell by cell, then date) and JSON, its edge cases, its 413 with a plan whose parts each answer, and its NetCDF
// file, streamed with its length and digest, read by the field's own tools alone (ncdump, CDO, GDAL, xarray) and
// compared with the CSV of the same box. Then the series route's papercuts: a period past what is published, the
// query's suggestion followed, APSIM's default columns, swapped coordinates, 5,000 places.

import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { bboxToWindow, colToEdgeLon, colToLon, rowToEdgeLat, rowToLat } from "../../format/grid.js";
import { createMirrorClient } from "../../client/index.js";
import { startMirrorServer } from "../../client/mirror-server.js";
import { docBlock } from "../docs/doc-blocks.js";
import { makeWorkDir } from "../support/helpers.js";
import { DATES_A, assertError, assertSchema, buildDemoDist, followCsvPlan, exchange, pipelinedUnread, post, request, requestFor, sha256Base64, valueA, withServer, useFixture, fixture, expectSeriesCsvA } from "../support/server-fixture.js";

const work = makeWorkDir("series-box");
const PYTHON = "/usr/bin/python3";
const sha256 = (bytes: string | Buffer) => createHash("sha256").update(bytes).digest("hex");
const tool = (command: string, args: string[]) => execFileSync(command, args, { encoding: "utf8", maxBuffer: 64 * 2 ** 20, stdio: ["ignore", "pipe", "pipe"] });

/** Cells of a window [col, row, width, height], north to south, west to east. */
function cellsOf(c0: number, r0: number, width: number, height: number): [number, number][] {
  const cells: [number, number][] = [];
  for (let r = r0; r < r0 + height; r++) for (let c = c0; c < c0 + width; c++) cells.push([c, r]);
  return cells;
}

/** The edges of a window's cells: west, south, east, north. */
const edgesOf = (c0: number, r0: number, width: number, height: number) => [colToEdgeLon(c0), rowToEdgeLat(r0 + height), colToEdgeLon(c0 + width), rowToEdgeLat(r0)].join(",");

const FEB = DATES_A.slice(26, 31); // 2004-02-27 .. 2004-03-02: across 29 February
const PERIOD = `start=${FEB[0]}&end=${FEB[FEB.length - 1]}`;
/** 4 x 4 cells from col 250, row 260 (124.475..124.675 east, -23.175..-22.975 north) */
const BOX = edgesOf(250, 260, 4, 4);

const box = suite("series box: cells, CSV and JSON");
box.before(useFixture);

box("series box - the box's cells by the query's rule, cell by cell (north to south, west to east) then date: exact CSV bytes and headers", async () => {
  assert.equal(bboxToWindow(BOX.split(",").map(Number) as [number, number, number, number]), [250, 260, 4, 4]);
  await withServer(fixture.dist, async (s) => {
    const answer = await request(s, `/api/v1/series?bbox=${BOX}&${PERIOD}`);
    assert.is(answer.status, 200, answer.text);
    assert.is(answer.text, expectSeriesCsvA(cellsOf(250, 260, 4, 4), FEB));
    assert.is(answer.headers["content-type"], "text/csv; charset=utf-8");
    assert.is(answer.headers["service-dataset-version"], fixture.a.id);
    assert.is(answer.headers["service-period"], `${FEB[0]}/${FEB[4]}`);
    assert.is(answer.headers["content-digest"], `sha-256=:${sha256Base64(answer.bytes)}:`);
    assert.is(answer.headers["service-request-sha256"], sha256(JSON.stringify({ bbox: BOX.split(",").map(Number), end: FEB[4], format: "csv", start: FEB[0], variables: ["air_temperature_max"] })));
  });
});

box("series box - answers written in reused buffers: 24 boxes pipelined, unread while 24 others are answered, each exactly its own CSV; one kept unchanged", async () => {
  // 16 x 16 cells over every date of version A: 8,448 rows, about 320 kB a box, 7.7 MB for the 24 that wait
  const boxAt = (i: number): [number, number] => [200 + (i % 6) * 17, 200 + Math.floor(i / 6) * 13];
  const path = ([c0, r0]: [number, number]) => `/api/v1/series?bbox=${edgesOf(c0, r0, 16, 16)}&start=${DATES_A[0]}&end=${DATES_A[DATES_A.length - 1]}`;
  const expected = ([c0, r0]: [number, number]) => expectSeriesCsvA(cellsOf(c0, r0, 16, 16), DATES_A);
  await withServer(fixture.dist, async (s) => {
    // asked twice, the answer cache keeps it: its working buffer must never serve another answer
    const kept = boxAt(48);
    await request(s, path(kept));
    assert.is((await request(s, path(kept))).text, expected(kept));
    const waiting = Array.from({ length: 24 }, (_, i) => boxAt(i));
    const others = Array.from({ length: 24 }, (_, i) => boxAt(24 + i));
    const meanwhile = async () => {
      for (let i = 0; i < others.length; i += 4) {
        const batch = others.slice(i, i + 4);
        const answers = await Promise.all(batch.map((box) => request(s, path(box))));
        answers.forEach((answer, j) => assert.is(answer.text, expected(batch[j]), `box ${batch[j].join(",")}`));
      }
    };
    const responses = await pipelinedUnread(s, waiting.map(path), meanwhile);
    responses.forEach(({ head, body }, i) => {
      assert.match(head, /^HTTP\/1\.1 200 OK\r\n/);
      assert.is(/\r\nContent-Digest: (.*)/i.exec(head)![1], `sha-256=:${sha256Base64(body)}:`, `queued box ${waiting[i].join(",")}`);
      assert.is(body.toString("utf8"), expected(waiting[i]), `queued box ${waiting[i].join(",")}`);
    });
    assert.is((await request(s, path(kept))).text, expected(kept));
  });
});

box("series box - edges on cell centres: west and south take the centre, east and north leave it out; edges between cells take exactly the cells inside", async () => {
  await withServer(fixture.dist, async (s) => {
    // west on col 250's centre (in), east on col 254's (out), north on row 260's (out), south on row 264's (in)
    const centres = await request(s, `/api/v1/series?bbox=${colToLon(250)},${rowToLat(264)},${colToLon(254)},${rowToLat(260)}&${PERIOD}`);
    assert.is(centres.status, 200, centres.text);
    assert.is(centres.text, expectSeriesCsvA(cellsOf(250, 261, 4, 4), FEB));
    // a box a hair inside the edges of one cell holds its one centre
    const one = await request(s, `/api/v1/series?bbox=124.4999,-23.0001,124.5001,-22.9999&${PERIOD}`);
    assert.is(one.text, expectSeriesCsvA([[250, 260]], FEB));
  });
});

box("series box - JSON: the manifest names the box and the rule; data holds every cell's values; the same values as the CSV", async () => {
  await withServer(fixture.dist, async (s) => {
    const answer = await request(s, `/api/v1/series?bbox=${edgesOf(308, 309, 3, 2)}&${PERIOD}&format=json`);
    assert.is(answer.status, 200, answer.text);
    const body = answer.json();
    assertSchema("series-result.schema.json", body);
    const m = body.manifest;
    assert.equal([m.spatialSelection, m.bbox, m.start, m.end, m.days, m.valueCount, m.places, m.placeRule], ["cell_center_in_bbox_west_south_inclusive_east_north_exclusive", edgesOf(308, 309, 3, 2).split(",").map(Number), FEB[0], FEB[4], 5, 30, undefined, undefined]);
    assert.equal(
      body.data.places,
      cellsOf(308, 309, 3, 2).map(([col, row]) => ({ longitude: colToLon(col), latitude: rowToLat(row), values: { air_temperature_max: FEB.map((d) => valueA(col, row, DATES_A.indexOf(d))) } })),
    );
    assert.ok(body.data.places.some((p: { values: { air_temperature_max: unknown[] } }) => p.values.air_temperature_max[0] === null), "the ocean's cells are null");
    assert.is(m.dataSha256, sha256(answer.text.slice(answer.text.indexOf(',"data":') + 8, -1)));
  });
});

box("series box - refused: no centre inside, outside the grid, west east of east, south north of north, swapped, four numbers, with places: 400 naming the fault", async () => {
  const cases: [string, string, (string | number)[], RegExp][] = [
    ["bbox=124.51,-23.02,124.52,-23.01", "no_cell_centers", ["bbox"], /holds no SILO cell centre .* widen it/],
    ["bbox=100,-5,105,0", "out_of_range", ["bbox"], /is outside the SILO grid: the SILO grid spans longitude 111.975..154.025/],
    ["bbox=125,-23,124,-22", "bbox_order", ["bbox", 2], /east 124 is not east of west 125/],
    ["bbox=124,-22,125,-23", "bbox_order", ["bbox", 3], /north -23 is not north of south -22/],
    ["bbox=-23.2,124.4,-23,124.6", "swapped", ["bbox"], /looks like latitudes and longitudes swapped: .* give bbox=124.4,-23.2,124.6,-23/],
    ["bbox=124,-23,125", "length", ["bbox"], /holds 3 values; give four: bbox=west,south,east,north/],
    ["bbox=124,-95,125,-23", "out_of_range", ["bbox", 1], /outside -90..90/],
    ["bbox=124,-23,125,-22&lat=-23&lon=124", "exclusive", ["lat"], /ask for places \(lat and lon\) or for a box \(bbox\), not both/],
    ["start=2004-02-01", "required", ["lat"], /is required: .*give a box: bbox=west,south,east,north/],
  ];
  await withServer(fixture.dist, async (s) => {
    for (const [query, code, path, message] of cases) {
      const body = assertError(await request(s, `/api/v1/series?${query}`), 400, "invalid_parameters");
      assert.equal([body.issues[0].code, body.issues[0].path], [code, path], query);
      assert.match(body.issues[0].message, message, query);
    }
    // a box the grid holds but no published version does
    const none = assertError(await request(s, `/api/v1/series?bbox=140,-35,140.2,-34.8&${PERIOD}`), 422, "coverage_unavailable");
    assert.match(none.message, /version of air_temperature_max holds every cell of the box 140,-35,140.2,-34.8 \(16 cells\) on every date of 2004-02-27..2004-03-02; published: /);
  });
});

box("series box - over the bound: 413 with a plan of pinned boxes, each answering 200, whose answers in order are the call's (rows, runs of a row, a cell's dates)", async () => {
  const path = `/api/v1/series?bbox=${edgesOf(250, 260, 3, 3)}&start=2004-02-01&end=2004-03-04`;
  const whole = await withServer(fixture.dist, async (s) => (await request(s, path)).text);
  assert.is(whole, expectSeriesCsvA(cellsOf(250, 260, 3, 3), DATES_A));
  // 9 cells x 33 days: bands of two rows (200), runs of two cells (70), a cell in ranges of dates (20)
  for (const [bound, parts] of [[200, 2], [70, 6], [20, 18]] as const) {
    await withServer(
      fixture.dist,
      async (s) => {
        const refused = assertError(await request(s, path), 413, "request_too_large");
        assert.match(refused.message, `The call asks for 297 values (9 cells x 33 days x 1 variable), over the bound of ${bound} values a call.`);
        assert.is(refused.plan.length, parts, refused.plan.join("\n"));
        const text = await followCsvPlan(s, refused.plan, (part) => assert.match(part, new RegExp(`^/api/v1/series\\?bbox=[-0-9.,]+&start=.*&dataset_version=${fixture.a.id}$`)));
        assert.is(text, whole);
      },
      { bounds: { seriesMaxValues: bound } },
    );
  }
});

box("series box - a plan over the 413's byte bound: the first whole rows, then planRest for the rest of the box; followed to its end, the call's answer", async () => {
  const path = `/api/v1/series?bbox=${edgesOf(250, 260, 3, 3)}&start=2004-02-01&end=2004-03-04`;
  const whole = await withServer(fixture.dist, async (s) => (await request(s, path)).text);
  await withServer(
    fixture.dist,
    async (s) => {
      // runs of two cells (70 values): two parts a row, about 190 bytes each; 3,000 bytes hold the 2,048 of the frame,
      // one row and the call for the rest, not two rows
      const first = assertError(await request(s, path), 413, "request_too_large");
      assert.is(first.plan.length, 2, first.plan.join("\n"));
      assert.is(first.planRest, `/api/v1/series?bbox=${edgesOf(250, 261, 3, 2)}&start=2004-02-01&end=2004-03-04&variables=air_temperature_max&format=csv&dataset_version=${fixture.a.id}`);
      assert.match(
        first.message,
        "over the bound of 70 values a call. The plan holds 2 calls for the box's first part, its first 1 row of 3, each within the bound, whose answers in order hold exactly its values (CSV: keep the first header line only); planRest asks for the rest, and its 413 carries the next parts.",
      );
      let text = "";
      let next: string | undefined = path;
      let calls = 0;
      while (next) {
        const refused = assertError(await request(s, next), 413, "request_too_large");
        const part = await followCsvPlan(s, refused.plan);
        text += text === "" ? part : part.slice(part.indexOf("\n") + 1);
        next = refused.planRest;
        calls++;
      }
      assert.is(calls, 3);
      assert.is(text, whole);
    },
    { bounds: { seriesMaxValues: 70, planBytes: 3_000 } },
  );
});

box.run();

// ---------------------------------------------------------------------------------------------------------------

const netcdf = suite("series box: NetCDF read by ncdump, CDO, GDAL and xarray");

const NC_BOX = edgesOf(308, 308, 4, 3); // 4 x 3 cells, the ocean corner's among them (cols and rows from 310)
const NC_PATH = `/api/v1/series?bbox=${NC_BOX}&start=2004-02-01&end=2004-03-04&format=netcdf`;
let file: string;
let csvRows: string[][];
let ncHeaders: Record<string, unknown>;

netcdf.before(async () => {
  await useFixture();
  execFileSync("bash", [join(import.meta.dirname, "../support/ensure-netcdf-tools.sh")], { stdio: "inherit" });
  await withServer(fixture.dist, async (s) => {
    const answer = await request(s, NC_PATH);
    assert.is(answer.status, 200, answer.text);
    ncHeaders = answer.headers;
    file = join(work, "box.nc");
    writeFileSync(file, answer.bytes);
    const csv = await request(s, NC_PATH.replace("&format=netcdf", ""));
    csvRows = csv.text.trim().split("\n").slice(1).map((line) => line.split(","));
  });
});

netcdf("series netcdf - the answer: application/x-netcdf, its Content-Length and Content-Digest, an ETag; HEAD and 304 agree; no content coding", async () => {
  assert.is(ncHeaders["content-type"], "application/x-netcdf");
  await withServer(fixture.dist, async (s) => {
    const answer = await request(s, NC_PATH, { headers: { "Accept-Encoding": "gzip, br" } });
    assert.is(answer.headers["content-encoding"], undefined);
    assert.is(Number(answer.headers["content-length"]), answer.bytes.length);
    assert.is(answer.headers["content-digest"], `sha-256=:${sha256Base64(answer.bytes)}:`);
    assert.is(answer.headers.etag, `"${sha256(answer.bytes).slice(0, 32)}"`);
    assert.is(answer.headers["service-period"], "2004-02-01/2004-03-04");
    const head = await request(s, NC_PATH, { method: "HEAD" });
    assert.is(head.headers["repr-digest"], answer.headers["content-digest"]);
    assert.is(head.headers["content-length"], answer.headers["content-length"]);
    const again = await request(s, NC_PATH, { headers: { "If-None-Match": String(answer.headers.etag) } });
    assert.is(again.status, 304);
    const repeated = await request(s, NC_PATH);
    assert.ok(repeated.bytes.equals(answer.bytes), "the same call, the same bytes");
  });
});

netcdf("series netcdf - ncdump -h: time, lat and lon, the variable's CF attributes and NaN fill, and the version, hash, license and attribution", () => {
  const header = tool("ncdump", ["-h", file]);
  assert.match(header, "dimensions:\n\ttime = 33 ;\n\tlat = 3 ;\n\tlon = 4 ;");
  assert.match(header, 'float air_temperature_max(time, lat, lon) ;\n\t\tair_temperature_max:long_name = "daily maximum temperature" ;\n\t\tair_temperature_max:standard_name = "air_temperature" ;\n\t\tair_temperature_max:units = "degC" ;\n\t\tair_temperature_max:cell_methods = "time: maximum" ;\n\t\tair_temperature_max:_FillValue = NaNf ;');
  assert.match(header, ':Conventions = "CF-1.8" ;');
  assert.match(header, `:license = "${fixture.a.license}" ;`);
  assert.match(header, `:attribution = "${fixture.a.attribution}" ;`);
  assert.match(header, `:air_temperature_max_dataset_version = "${fixture.a.id}" ;`);
  assert.match(header, `:air_temperature_max_content_sha256 = "${fixture.a.content_sha256}" ;`);
  assert.is(tool("ncdump", ["-k", file]).trim(), "classic");
});

netcdf("series netcdf - cdo sinfon sees the box's lonlat grid and 33 daily steps; cdo outputtab gives every value of the CSV, nan where it is empty", () => {
  const info = tool("cdo", ["-s", "sinfon", file]);
  assert.match(info, "points=12 (4x3)");
  assert.match(info, `lon : ${colToLon(308)} to ${colToLon(311)} by 0.05 degrees_east`);
  assert.match(info, `lat : ${rowToLat(308)} to ${rowToLat(310)} by -0.05 degrees_north`);
  assert.match(info, "time : 33 steps");
  const table = tool("cdo", ["-s", "outputtab,date,lon,lat,value", file]);
  const rows = table.split("\n").filter((l) => l !== "" && !l.startsWith("#")).map((l) => l.trim().split(/\s+/));
  assert.is(rows.length, csvRows.length);
  // CSV rows are cell then date; CDO's are date then cell: compare as a set of (lon, lat, date) -> value
  const fromCsv = new Map(csvRows.map(([lon, lat, date, v]) => [`${Number(lon)} ${Number(lat)} ${date}`, v === "" ? "nan" : String(Number(v))]));
  for (const [date, lon, lat, value] of rows) assert.is(value === "nan" ? "nan" : String(Number(value)), fromCsv.get(`${Number(lon)} ${Number(lat)} ${date}`), `${date} ${lon} ${lat}`);
  assert.ok(rows.some((r) => r[3] === "nan"), "the ocean is nan");
});

netcdf("series netcdf - GDAL: the box's geotransform, EPSG:4326, a band a day; gdallocationinfo reads the CSV's values (python osgeo too)", () => {
  const name = `NETCDF:"${file}":air_temperature_max`;
  const info = JSON.parse(tool("gdalinfo", ["-json", name]));
  [colToEdgeLon(308), 0.05, 0, rowToEdgeLat(308), 0, -0.05].forEach((x, i) => assert.ok(Math.abs(info.geoTransform[i] - x) < 1e-9, `geoTransform ${info.geoTransform}`));
  assert.equal(info.size, [4, 3]);
  assert.is(info.bands.length, 33);
  assert.match(info.coordinateSystem.wkt, 'ID["EPSG",4326]');
  const csvOf = (col: number, row: number) => csvRows.filter(([lon, lat]) => Number(lon) === colToLon(col) && Number(lat) === rowToLat(row)).map(([, , , v]) => (v === "" ? "nan" : String(Math.fround(Number(v)))));
  for (const [c, r] of [[0, 0], [3, 2], [2, 1]]) {
    const read = tool("gdallocationinfo", ["-valonly", name, String(c), String(r)]).trim().split("\n").map((s) => (s === "nan" ? "nan" : String(Math.fround(Number(s)))));
    assert.equal(read, csvOf(308 + c, 308 + r), `cell ${c},${r}`);
  }
  const py = `from osgeo import gdal\nimport json\nd = gdal.Open('${name.replace(/'/g, "\\'")}')\nb = d.GetRasterBand(5).ReadAsArray()\nprint(json.dumps([[None if x != x else float(x) for x in row] for row in b.tolist()]))`;
  const band = JSON.parse(tool(PYTHON, ["-c", py]));
  const day5 = DATES_A[4];
  const expected = [0, 1, 2].map((r) => [0, 1, 2, 3].map((c) => {
    const v = csvRows.find(([lon, lat, date]) => Number(lon) === colToLon(308 + c) && Number(lat) === rowToLat(308 + r) && date === day5)![3];
    return v === "" ? null : Math.fround(Number(v));
  }));
  assert.equal(band, expected);
});

netcdf("series netcdf - xarray (netCDF4 and scipy engines): dates, cell centres, float32, NaN where the CSV is empty, every value equal", () => {
  const py = `
import json, sys
import numpy as np, xarray as xr
for engine in ("netcdf4", "scipy"):
    ds = xr.open_dataset(sys.argv[1], engine=engine)
    df = ds["air_temperature_max"].to_dataframe().reset_index()
    rows = [[float(r.lon), float(r.lat), str(r.time)[:10], None if np.isnan(r.air_temperature_max) else float(np.float32(r.air_temperature_max))] for r in df.itertuples()]
    print(json.dumps({"dtype": str(ds["air_temperature_max"].dtype), "attrs": ds.attrs["air_temperature_max_dataset_version"], "rows": sorted(rows, key=lambda r: (-r[1], r[0], r[2]))}))
`;
  const lines = tool(PYTHON, ["-c", py, file]).trim().split("\n");
  assert.is(lines.length, 2);
  const expected = csvRows.map(([lon, lat, date, v]) => [Number(lon), Number(lat), date, v === "" ? null : Math.fround(Number(v))]);
  for (const line of lines) {
    const got = JSON.parse(line);
    assert.is(got.dtype, "float32");
    assert.is(got.attrs, fixture.a.id);
    assert.equal(got.rows, expected);
  }
});

netcdf("series netcdf - one place is a 1 x 1 file; several places are a 400 that points to bbox; over the NetCDF bound a 413 whose plan of date ranges each answers", async () => {
  await withServer(
    fixture.dist,
    async (s) => {
      const one = await request(s, "/api/v1/series?lat=-23&lon=124.5&start=2004-02-01&end=2004-02-03&format=netcdf");
      assert.is(one.status, 200, one.text);
      const path = join(work, "one.nc");
      writeFileSync(path, one.bytes);
      assert.match(tool("ncdump", ["-h", path]), "time = 3 ;\n\tlat = 1 ;\n\tlon = 1 ;");
      const many = assertError(await request(s, "/api/v1/series?lat=-23,-24&lon=124.5,125&format=netcdf"), 400, "invalid_parameters");
      assert.match(many.message, /holds one place or a box: .* bbox=west,south,east,north/);
      const refused = assertError(await request(s, NC_PATH), 413, "request_too_large");
      assert.match(refused.message, "The call asks for 396 values (12 cells x 33 days x 1 variable), over the bound of 100 values a NetCDF answer.");
      assert.is(refused.plan.length, 5, refused.plan.join("\n"));
      let days = 0;
      for (const part of refused.plan as string[]) {
        assert.match(part, `bbox=${NC_BOX}&`);
        const answer = await request(s, part);
        assert.is(answer.status, 200, `${part}: ${answer.text}`);
        const partFile = join(work, `part-${days}.nc`);
        writeFileSync(partFile, answer.bytes);
        days += Number(/time = (\d+) ;/.exec(tool("ncdump", ["-h", partFile]))![1]);
      }
      assert.is(days, 33);
    },
    { bounds: { seriesNetcdfMaxValues: 100 } },
  );
});

netcdf("series netcdf - the mirror client answers the box's CSV and NetCDF with the server's very bytes and headers", async () => {
  const mirror = await startMirrorServer({ dist: fixture.dist });
  try {
    await withServer(fixture.dist, async (s) => {
      const client = createMirrorClient({ baseUrl: mirror.url, linksBaseUrl: s.url });
      for (const path of [NC_PATH, NC_PATH.replace("&format=netcdf", "&format=json"), NC_PATH.replace("&format=netcdf", "")]) {
        const served = await request(s, path);
        const answered = await client.answer({ path });
        assert.is(answered.status, 200);
        assert.ok(Buffer.from(answered.body).equals(served.bytes), path);
        for (const name of ["Content-Digest", "Service-Period", "Service-Dataset-Version", "ETag", "Content-Type"]) assert.is(answered.headers[name], served.headers[name.toLowerCase()], `${path} ${name}`);
      }
    });
  } finally {
    await mirror.close();
  }
});

netcdf.run();

// ---------------------------------------------------------------------------------------------------------------

const papercuts = suite("series route: papercuts");
papercuts.before(useFixture);

papercuts("series - a period past what is published is answered for the published part: Service-Period and the manifest's asked say so; wholly outside stays 422", async () => {
  await withServer(fixture.dist, async (s) => {
    const past = await request(s, "/api/v1/series?lat=-23&lon=124.5&start=2004-01-01&end=2004-12-31&format=json");
    assert.is(past.status, 200, past.text);
    assert.is(past.headers["service-period"], "2004-02-01/2004-03-04");
    assert.is(past.headers["cache-control"], "public, max-age=60", "a later publish may answer more of it");
    const m = past.json().manifest;
    assert.equal([m.start, m.end, m.days, m.asked], ["2004-02-01", "2004-03-04", 33, { start: "2004-01-01", end: "2004-12-31" }]);
    const csv = await request(s, "/api/v1/series?lat=-23&lon=124.5&start=2004-02-20&end=2005-01-01");
    assert.is(csv.text, expectSeriesCsvA([[250, 260]], DATES_A.slice(19)));
    assert.is(csv.headers["service-period"], "2004-02-20/2004-03-04");
    const inside = await request(s, "/api/v1/series?lat=-23&lon=124.5&start=2004-02-02&end=2004-02-03&format=json");
    assert.is(inside.json().manifest.asked, undefined, "a period inside what is published has no asked");
    for (const query of ["start=2003-01-01&end=2003-12-31", "start=2005-01-01&end=2005-02-01", "start=2005-01-01"]) {
      assertError(await request(s, `/api/v1/series?lat=-23&lon=124.5&${query}`), 422, "coverage_unavailable");
    }
  });
});

papercuts("series - the query's 422 for a long period suggests a series call that answers, past the published dates and for a large box too", async () => {
  await withServer(fixture.dist, async (s) => {
    // the period runs a month past what is published: the suggested call answers the published part
    const long = assertError(await post(s, "/api/v1/data/query", requestFor({ col: 250, row: 260, width: 2, height: 2 }, "2004-02-01", "2004-04-04", { format: "csv" })), 422, "invalid_request");
    const call = /GET (\/api\/v1\/series\?\S+)/.exec(long.issues[0].message)![1];
    const answer = await request(s, call);
    assert.is(answer.status, 200, `${call}: ${answer.text}`);
    assert.is(answer.text, expectSeriesCsvA(cellsOf(250, 260, 2, 2), DATES_A));
    // a box of 200 cells: one bbox call, not the first of two
    const big = assertError(await post(s, "/api/v1/data/query", requestFor({ col: 200, row: 200, width: 20, height: 10 }, "2004-02-01", "2004-03-04")), 422, "invalid_request");
    const boxCall = /GET (\/api\/v1\/series\?\S+)/.exec(big.issues[0].message)![1];
    assert.match(boxCall, /^\/api\/v1\/series\?bbox=/);
    const boxAnswer = await request(s, boxCall);
    assert.is(boxAnswer.status, 200, `${boxCall}: ${boxAnswer.text}`);
    assert.is(boxAnswer.json().data.places.length, 200);
  });
});

papercuts("series - swapped latitude and longitude are named as swapped, with the call that answers", async () => {
  await withServer(fixture.dist, async (s) => {
    for (const query of ["lat=124.5&lon=-23", "lat=-23,124.5&lon=124.5,-23"]) {
      const body = assertError(await request(s, `/api/v1/series?${query}`), 400, "invalid_parameters");
      assert.is(body.issues[0].code, "swapped", query);
      assert.match(body.message, /looks like latitude and longitude swapped: .* give lat=-23&lon=124.5/, query);
      const fixed = await request(s, "/api/v1/series?lat=-23&lon=124.5");
      assert.is(fixed.status, 200);
    }
  });
});

papercuts("series - 5,000 places in the URL: a 400 naming the limit of 100 places, not a header overflow", async () => {
  await withServer(fixture.dist, async (s) => {
    const lats = Array.from({ length: 5000 }, (_, i) => (-23 - (i % 100) * 0.01).toFixed(2)).join(",");
    const lons = Array.from({ length: 5000 }, (_, i) => (124.5 + Math.floor(i / 100) * 0.01).toFixed(2)).join(",");
    const answer = await exchange(s, `/api/v1/series?lat=${lats}&lon=${lons}`);
    const body = assertError(answer, 400, "invalid_parameters");
    assert.match(body.message, "Query parameter lat holds 5000 values; at most 100 places are answered a call");
  });
});

papercuts.run();

// ---------------------------------------------------------------------------------------------------------------

const demo = suite("series route on the demo: APSIM's default columns");

demo("series - the README's call with &format=met answers an APSIM file of APSIM's columns (variables= not needed)", async () => {
  await withServer(await buildDemoDist(), async (s) => {
    const answer = await request(s, "/api/v1/series?lat=-23.7&lon=133.87&format=met");
    assert.is(answer.status, 200, answer.text);
    assert.match(answer.text, /^\[weather\.met\.weather\]\n/);
    // every column APSIM reads (SILO's order: its optional evap and vp too; the demo publishes both)
    assert.match(answer.text, /\nyear +day +radn +maxt +mint +rain +evap +vp\n/);
    const asked = await request(s, "/api/v1/series?lat=-23.7&lon=133.87&format=met&variables=radiation,max_temp,min_temp,daily_rain,evap_pan,vp");
    assert.is(answer.text, asked.text, "the same file as APSIM's variables asked by name");
  });
});

demo("series - the query's 422 for another variable names a series call that answers it (followed on the demo, which publishes it)", async () => {
  await withServer(await buildDemoDist(), async (s) => {
    const other = assertError(await post(s, "/api/v1/data/query", { ...requestFor({ col: 437, row: 274, width: 2, height: 1 }, "2003-01-01", "2003-01-03"), variables: ["air_temperature_min"] }), 422, "invalid_request");
    const issue = other.issues.find((i: { path: unknown[] }) => i.path[0] === "variables");
    const call = /GET (\/api\/v1\/series\?\S+)/.exec(issue.message)![1];
    const answer = await request(s, call);
    assert.is(answer.status, 200, `${call}: ${answer.text}`);
    assert.equal(answer.json().data.places.map((p: { longitude: number; latitude: number }) => [p.longitude, p.latitude]), [[133.85, -23.7], [133.9, -23.7]]);
  });
});

demo("docs - clients.md's box over years runs as written: curl and CDO, pandas and R each read the box the CSV answers", async () => {
  await withServer(await buildDemoDist(), async (s) => {
    const live = (text: string) => text.replaceAll("http://127.0.0.1:8080", s.url);
    const url = "/api/v1/series?bbox=133.8,-23.8,134,-23.6&start=1990-01-01&end=2019-12-31&variables=max_temp,daily_rain";
    const csv = await request(s, url);
    assert.is(csv.headers["service-period"], "2003-01-01/2003-01-31", "the demo's month: the published part of thirty years");
    const rows = csv.text.trim().split("\n").slice(1).map((line) => line.split(","));
    assert.is(rows.length, 16 * 31);
    const first = rows.filter((r) => r[2] === "2003-01-01");
    const mean = (k: number) => first.reduce((sum, r) => sum + Number(r[k]), 0) / first.length;

    // asynchronously: the server answers from this very process
    const run = async (command: string, args: string[], cwd?: string) => (await promisify(execFile)(command, args, { cwd, encoding: "utf8", timeout: 120_000 })).stdout;
    const cdoWork = join(work, "docs-cdo");
    execFileSync("mkdir", ["-p", cdoWork]);
    const sh = await run("bash", ["-e", "-c", live(docBlock("docs/clients.md", "cdo -s sinfon box.nc"))], cdoWork);
    assert.match(sh, "points=16 (4x4)");
    assert.match(sh, "time : 31 steps");
    const [, date, rain] = /^\s+(2003-01-01)\s+(\S+)\s*$/m.exec(sh)!;
    assert.is(date, "2003-01-01");
    assert.ok(Math.abs(Number(rain) - mean(4)) < 1e-4, `CDO's field mean ${rain}, the CSV's ${mean(4)}`);

    const py = await run(PYTHON, ["-c", live(docBlock("docs/clients.md", "daily = box.groupby(\"date\")"))]);
    assert.is(py, `${16 * 31} 16 2003-01-01 ${Math.round(mean(3) * 1000) / 1000}\n`);

    const r = await run("Rscript", ["-e", `${live(docBlock("docs/clients.md", "box <- read.csv("))}\nwriteLines(paste(nrow(box), nrow(daily), format(daily$air_temperature_max[1], digits = 10)))`]);
    assert.is(r, `${16 * 31} 31 ${Number(mean(3).toPrecision(10))}\n`);
  });
});

demo.run();
