// OPeNDAP (DAP2) over HTTP (docs/contract.md §8.6): the DDS and DAS texts, .dods bytes as XDR, constraints in every
// form, DAP2 error bodies with their statuses, the bound's 413, the headers, and the newest alias with its session
// cookie. The field's own clients reading it are test/api/opendap-clients.test.ts.

import { execFile } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { gunzipSync } from "node:zlib";
import { publish } from "../../pipeline/publish/publish.js";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { writeSiloDays } from "../support/helpers.js";
import { DATES_A, WINDOW_A, copyDist, request, valueA, withServer, useFixture, fixture, A } from "../support/server-fixture.js";

const url = (suffix: string, query = "") => `/opendap/${A}.${suffix}${query ? `?${query}` : ""}`;
const FIRST_DAY = 12449; // 2004-02-01, days since 1970-01-01

/** Version A's float32 at a global cell on day index `day` (NaN: ocean, outside its window). */
function expectedA(col: number, row: number, day: number): number {
  const [c0, r0, w, h] = WINDOW_A;
  if (col < c0 || row < r0 || col >= c0 + w || row >= r0 + h) return NaN;
  const v = valueA(col, row, day);
  return v === null ? NaN : Math.fround(v);
}

/** A .dods body read as the spec says: the DDS text, `Data:\n`, then XDR arrays (length twice, big-endian values). */
function readDods(bytes: Buffer, arrays: { type: "Int32" | "Float32" | "Float64"; scalar?: boolean }[]): { dds: string; values: number[][] } {
  const mark = bytes.indexOf("\nData:\n");
  assert.ok(mark > 0, "a .dods body has its DDS, then Data:");
  let at = mark + 7;
  const values = arrays.map(({ type, scalar }) => {
    let n = 1;
    if (!scalar) {
      n = bytes.readUInt32BE(at);
      assert.is(bytes.readUInt32BE(at + 4), n, "an array's length is sent twice");
      at += 8;
    }
    const size = type === "Float64" ? 8 : 4;
    const out = Array.from({ length: n }, (_, k) => (type === "Int32" ? bytes.readInt32BE(at + k * size) : type === "Float64" ? bytes.readDoubleBE(at + k * size) : bytes.readFloatBE(at + k * size)));
    at += n * size;
    return out;
  });
  assert.is(at, bytes.length, "nothing after the last array");
  return { dds: bytes.subarray(0, mark + 1).toString("utf8"), values };
}

function sameFloats(got: number[], want: number[]): void {
  assert.is(got.length, want.length);
  got.forEach((g, i) => assert.ok(Object.is(g, want[i]) || (Number.isNaN(g) && Number.isNaN(want[i])), `value ${i}: ${g} != ${want[i]}`));
}

const dap = suite("opendap");
dap.before(useFixture);

dap("opendap - .dds declares time, lat, lon, crs and the variable as a Grid over them, the whole grid and every date", async () => {
  await withServer(fixture.dist, async (served) => {
    const answer = await request(served, url("dds"));
    assert.is(answer.status, 200);
    assert.is(
      answer.text,
      `Dataset {\n    Int32 time[time = 33];\n    Float64 lat[lat = 681];\n    Float64 lon[lon = 841];\n    Int32 crs;\n    Grid {\n      ARRAY:\n        Float32 air_temperature_max[time = 33][lat = 681][lon = 841];\n      MAPS:\n        Int32 time[time = 33];\n        Float64 lat[lat = 681];\n        Float64 lon[lon = 841];\n    } air_temperature_max;\n} ${A};\n`,
    );
    assert.is(answer.headers["content-description"], "dods-dds");
    assert.is(answer.headers["xdods-server"], "dods/3.2");
    assert.is(answer.headers["content-type"], "text/plain; charset=utf-8");
    assert.is(answer.headers["cache-control"], "public, max-age=31536000, immutable");
    assert.is(answer.headers["service-dataset-version"], A);
    assert.is(answer.headers["access-control-allow-origin"], "*");
    assert.ok(answer.headers.etag && answer.headers["content-digest"]);
  });
});

dap("opendap - .das carries CF attributes of each variable and the version, hash, license and dates globally", async () => {
  await withServer(fixture.dist, async (served) => {
    const answer = await request(served, url("das"));
    assert.is(answer.status, 200);
    assert.is(answer.headers["content-description"], "dods-das");
    const text = answer.text;
    assert.ok(text.startsWith("Attributes {\n    time {\n        String standard_name \"time\";\n        String long_name \"time\";\n        String units \"days since 1970-01-01\";\n        String calendar \"proleptic_gregorian\";\n        String axis \"T\";\n    }\n"), text.slice(0, 300));
    assert.ok(text.includes('    air_temperature_max {\n        String standard_name "air_temperature";\n        String long_name "daily maximum temperature";\n        String units "degC";\n        String cell_methods "time: maximum";\n'));
    assert.ok(text.includes('        String grid_mapping "crs";\n        Float32 _FillValue NaN;\n    }\n'));
    assert.ok(text.includes('        Float64 semi_major_axis 6378137;\n        Float64 inverse_flattening 298.257223563;\n'));
    assert.ok(text.includes('String crs_wkt "GEOGCS[\\"WGS 84\\",'), "quotes inside a string are escaped");
    const globals = text.slice(text.indexOf("    NC_GLOBAL {\n"));
    for (const line of [
      'String Conventions "CF-1.8";',
      `String license "${fixture.a.license}";`,
      `String dataset_version "${A}";`,
      `String content_sha256 "${fixture.a.content_sha256}";`,
      'String time_coverage_start "2004-02-01";',
      'String time_coverage_end "2004-03-04";',
    ]) assert.ok(globals.includes(`        ${line}\n`), line);
    assert.ok(text.endsWith("    }\n}\n"));
  });
});

dap("opendap - .dods of the maps: the constrained DDS, Data:, then each array as XDR with its length twice", async () => {
  await withServer(fixture.dist, async (served) => {
    const answer = await request(served, url("dods", "time[0:2],lat[0:1],lon[840],crs"));
    assert.is(answer.status, 200);
    assert.is(answer.headers["content-description"], "dods-data");
    assert.is(answer.headers["content-type"], "application/octet-stream");
    assert.is(answer.headers["content-length"], String(answer.bytes.length));
    const { dds, values } = readDods(answer.bytes, [{ type: "Int32" }, { type: "Float64" }, { type: "Float64" }, { type: "Int32", scalar: true }]);
    assert.is(dds, `Dataset {\n    Int32 time[time = 3];\n    Float64 lat[lat = 2];\n    Float64 lon[lon = 1];\n    Int32 crs;\n} ${A};\n`);
    assert.equal(values, [[FIRST_DAY, FIRST_DAY + 1, FIRST_DAY + 2], [-10, -10.05], [154], [0]]);
  });
});

dap("opendap - a Grid's hyperslab holds the version's float32 values (NaN off its window and at ocean), then its maps", async () => {
  await withServer(fixture.dist, async (served) => {
    // rows 253..257 and columns 198..202 cross the window's west edge and the ocean cell at 255,255; days 1..4 by 3
    const answer = await request(served, url("dods", "air_temperature_max[1:3:4][253:257][198:202]"));
    assert.is(answer.status, 200);
    const { dds, values } = readDods(answer.bytes, [{ type: "Float32" }, { type: "Int32" }, { type: "Float64" }, { type: "Float64" }]);
    assert.ok(dds.includes("    Grid {\n      ARRAY:\n        Float32 air_temperature_max[time = 2][lat = 5][lon = 5];\n      MAPS:\n        Int32 time[time = 2];\n"), dds);
    const want: number[] = [];
    for (const day of [1, 4]) for (let row = 253; row <= 257; row++) for (let col = 198; col <= 202; col++) want.push(expectedA(col, row, day));
    sameFloats(values[0], want);
    assert.ok(values[0].some(Number.isNaN) && values[0].some((v) => !Number.isNaN(v)));
    assert.equal(values[1], [FIRST_DAY + 1, FIRST_DAY + 4]);
    // every missing value is the canonical NaN: 0x7fc00000
    const start = answer.bytes.indexOf("\nData:\n") + 7 + 8;
    assert.is(answer.bytes.readUInt32BE(start), 0x7fc00000, "the first value (column 198, off the window) is NaN");
  });
});

dap("opendap - a place over every date (the series tier) and a map of one date (the day pieces) hold the same cells", async () => {
  await withServer(fixture.dist, async (served) => {
    const place = readDods((await request(served, url("dods", "air_temperature_max.air_temperature_max[0:32][260][300]"))).bytes, [{ type: "Float32" }]);
    sameFloats(place.values[0], DATES_A.map((_, day) => expectedA(300, 260, day)));
    assert.ok(place.dds.includes("    Structure {\n        Float32 air_temperature_max[time = 33][lat = 1][lon = 1];\n    } air_temperature_max;\n"), place.dds);
    const map = readDods((await request(served, url("dods", "air_temperature_max.air_temperature_max[20][190:330][190:330]"))).bytes, [{ type: "Float32" }]);
    const want: number[] = [];
    for (let row = 190; row <= 330; row++) for (let col = 190; col <= 330; col++) want.push(expectedA(col, row, 20));
    sameFloats(map.values[0], want);
  });
});

dap("opendap - constraints: brackets encoded or not, strides, several projections, a member alone, in the dataset's order", async () => {
  await withServer(fixture.dist, async (served) => {
    const plain = await request(served, url("dods", "air_temperature_max[0][200:2:210][300:3:312],time[5]"));
    const encoded = await request(served, url("dods", "air_temperature_max%5B0%5D%5B200%3A2%3A210%5D%5B300%3A3%3A312%5D%2Ctime%5B5%5D"));
    assert.is(plain.status, 200);
    assert.equal(encoded.bytes, plain.bytes);
    const { dds, values } = readDods(plain.bytes, [{ type: "Int32" }, { type: "Float32" }, { type: "Int32" }, { type: "Float64" }, { type: "Float64" }]);
    assert.ok(dds.startsWith(`Dataset {\n    Int32 time[time = 1];\n    Grid {\n`), "time first: variables go in the dataset's order, not the constraint's");
    assert.equal(values[0], [FIRST_DAY + 5]);
    const want: number[] = [];
    for (let row = 200; row <= 210; row += 2) for (let col = 300; col <= 312; col += 3) want.push(expectedA(col, row, 0));
    sameFloats(values[1], want);
    assert.equal(values[3], [-20, -20.1, -20.2, -20.3, -20.4, -20.5]);
    const map = await request(served, url("dods", "air_temperature_max.lon[2:4]"));
    const member = readDods(map.bytes, [{ type: "Float64" }]);
    assert.is(member.dds, `Dataset {\n    Structure {\n        Float64 lon[lon = 3];\n    } air_temperature_max;\n} ${A};\n`);
    assert.equal(member.values[0], [112.1, 112.15, 112.2]);
    const constrained = await request(served, url("dds", "time[0:9]"));
    assert.is(constrained.text, `Dataset {\n    Int32 time[time = 10];\n} ${A};\n`);
  });
});

dap("opendap - what is not answered is a DAP2 error body naming what is wrong and what is valid, with its status", async () => {
  const cases: [string, number, string][] = [
    [url("dods", "time&time>3"), 400, 'has a selection (\\"&time>3\\"); this server answers projections only'],
    [url("dods", "time[0:40]"), 400, "time[0:40]: index 40 of time is past its end; time has 33 indices, 0 to 32."],
    [url("dods", "max_temp[0][0][0]"), 400, "max_temp is not a variable of this dataset (SILO's max_temp is air_temperature_max here)"],
    [url("dods", "air_temperature_max[0][0]"), 400, "gives 2 hyperslabs; air_temperature_max has 3 dimensions [time = 33][lat = 681][lon = 841]"],
    [url("dods", "time[3:1]"), 400, "stops (1) before it starts (3)"],
    [url("dods", "time[0:0:3]"), 400, "has stride 0"],
    [url("dods", "time[a]"), 400, "is not [index], [start:stop] or [start:stride:stop]"],
    [url("dods", "time[0],time[1]"), 400, "time is asked twice with different hyperslabs"],
    [url("dods", "sum(time)"), 400, "calls a function"],
    [`/opendap/${A}.nc`, 404, "is not an OPeNDAP dataset here"],
    ["/opendap/silo-tmax-20040201-20040304-0000000000000000.dds", 404, "is not published here"],
    [`/opendap/${fixture?.noaa?.id ?? "noaa"}.dds`, 404, "not a raster of a SILO variable"],
    ["/opendap/latest/silo-nothing.dds", 404, "(no published version)"],
  ];
  await withServer(fixture.dist, async (served) => {
    for (const [path, status, said] of cases) {
      const answer = await request(served, path.replace("noaa.dds", `${fixture.noaa.id}.dds`));
      assert.is(answer.status, status, path);
      assert.is(answer.headers["content-description"], "dods-error", path);
      assert.ok(answer.text.startsWith(`Error {\n    code = ${status};\n    message = "`) && answer.text.endsWith('";\n};\n'), answer.text);
      assert.ok(answer.text.includes(said), `${path}: ${answer.text}`);
    }
  });
});

dap("opendap - a .dods over the bound is 413 naming hyperslabs of the grid that fit, time ranges first", async () => {
  await withServer(
    fixture.dist,
    async (served) => {
      const answer = await request(served, url("dods", "air_temperature_max[0:32][200:209][200:209]"));
      assert.is(answer.status, 413);
      assert.is(
        answer.text,
        'Error {\n    code = 413;\n    message = "This answer would hold 3353 values, over the bound of 3000 a request; ask at most 29 time steps at once, as 2 requests: air_temperature_max[0:28][200:209][200:209], air_temperature_max[29:32][200:209][200:209].";\n};\n',
      );
      const fits = await request(served, url("dods", "air_temperature_max[0:28][200:209][200:209]"));
      assert.is(fits.status, 200);
    },
    { bounds: { values: 3000 } },
  );
});

dap("opendap - a .dods is gzip-coded only when asked; its ETag, digest and 304 hold as on every immutable answer", async () => {
  await withServer(fixture.dist, async (served) => {
    const path = url("dods", "air_temperature_max[0:2][200:260][200:260]");
    const plain = await request(served, path);
    assert.is(plain.headers["content-encoding"], undefined);
    const gzipped = await request(served, path, { headers: { "Accept-Encoding": "gzip" } });
    assert.is(gzipped.headers["content-encoding"], "gzip");
    assert.equal(gunzipSync(gzipped.bytes), plain.bytes);
    const again = await request(served, path, { headers: { "If-None-Match": plain.headers.etag as string } });
    assert.is(again.status, 304);
  });
});

dap("opendap - latest answers 302 to the newest version's same URL and keeps a session's cookie on the version it began with", async () => {
  await withServer(fixture.dist, async (served) => {
    const first = await request(served, "/opendap/latest/silo-tmax.dods?time%5B0%5D");
    assert.is(first.status, 302);
    assert.is(first.headers.location, `../${A}.dods?time%5B0%5D`);
    assert.is(first.headers["set-cookie"]?.[0], `opendap-silo-tmax=${A}; Path=/opendap/latest/; Max-Age=86400; SameSite=Lax`);
    assert.is(first.headers["cache-control"], "no-store");
    // a cookie naming a version that is not a candidate (pruned, or another dataset's) gives way to the newest
    const stale = await request(served, "/opendap/latest/silo-tmax.das", { headers: { Cookie: `opendap-silo-tmax=${fixture.b.id}` } });
    assert.is(stale.headers.location, `../${A}.das`);
  });
});

dap("opendap - .html names the dataset and its URL in each tool's words; .info shows its DDS and DAS; .ver the protocol", async () => {
  await withServer(fixture.dist, async (served) => {
    const page = await request(served, url("html"));
    assert.is(page.status, 200);
    assert.is(page.headers["content-type"], "text/html; charset=utf-8");
    const address = `${served.url}/opendap/${A}`;
    for (const text of [`<code>${address}</code>`, `ncdump -h &#39;${address}&#39;`, `cdo sinfon &#39;${address}&#39;`, "ncread(&#39;", "library(ncdf4)", "Open Remote Dataset", "(33 dates, 2004-02-01 to 2004-03-04"]) {
      assert.ok(page.text.includes(text), text);
    }
    const info = await request(served, url("info"));
    assert.ok(info.text.includes("Float32 air_temperature_max[time = 33][lat = 681][lon = 841];") && info.text.includes("String Conventions &#34;CF-1.8&#34;;"));
    const version = await request(served, url("ver"));
    assert.is(version.text, "Core version: DAP/2.0\nServer version: climate-data-service/dap2\n");
  });
});

/** A proxy in front of `port` that notes each request's path and Cookie header (what a DAP client sends back). */
async function recordingProxy(port: number): Promise<{ url: string; asked: { path: string; cookie: string }[]; close: () => void }> {
  const asked: { path: string; cookie: string }[] = [];
  const proxy = http.createServer((req, res) => {
    asked.push({ path: req.url ?? "", cookie: req.headers.cookie ?? "" });
    const forward = http.request({ host: "127.0.0.1", port, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, asked, close: () => proxy.close() };
}

dap("opendap - a session's cookie keeps the newest alias on the version it began with after a newer one is published; ncdump sends it back", async () => {
  const dist = await copyDist(fixture);
  const next = join(fixture.root, "opendap-next-day");
  await writeSiloDays(next, ["2004-03-05"], WINDOW_A, (col, row) => valueA(col, row, 33));
  const { added } = await publish({ sources: next, dist, extend: true, observations: false, log: () => {}, publishedAt: "2024-04-01T00:00:00Z" });
  const newer = added[0].id;
  await withServer(dist, async (served) => {
    const fresh = await request(served, "/opendap/latest/silo-tmax.dds");
    assert.is(fresh.headers.location, `../${newer}.dds`);
    // a session that began before the publish: its cookie names the older version, still a candidate
    const session = await request(served, "/opendap/latest/silo-tmax.dods?time%5B0:33%5D", { headers: { Cookie: `other=1; opendap-silo-tmax=${A}` } });
    assert.is(session.headers.location, `../${A}.dods?time%5B0:33%5D`);
    assert.is(session.headers["service-dataset-version"], A);
    // the older version has 33 dates: the index 33 that the newer holds is past its end, as that session's DDS said
    const followed = await request(served, `/opendap/${A}.dods?time%5B0:33%5D`);
    assert.is(followed.status, 400);
    // ncdump (netCDF-C) keeps the cookie of an open dataset: every request after the first carries it back
    const proxy = await recordingProxy(served.port);
    try {
      await promisify(execFile)("ncdump", ["-h", `${proxy.url}/opendap/latest/silo-tmax`]);
      const aliased = proxy.asked.filter((a) => a.path.startsWith("/opendap/latest/"));
      assert.is(aliased.length, 3, JSON.stringify(proxy.asked));
      assert.equal(aliased.map((a) => a.cookie), ["", `opendap-silo-tmax=${newer}`, `opendap-silo-tmax=${newer}`]);
    } finally {
      proxy.close();
    }
  });
});

dap.run();
