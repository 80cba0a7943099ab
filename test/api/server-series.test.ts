// GET /api/v1/series over real HTTP: tidy CSV and JSON of places over any period (exact bytes), the place rule,
// version choice and pins, caching, the bound and its 413 plan, every bad parameter a 400 or 422 that names it, and
// the contract's 422 for a long period or another variable naming the exact series call.

import { createHash } from "node:crypto";
import stableStringify from "fast-json-stable-stringify";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { lonLatToCell } from "../../format/grid.js";
import { DATES_A, VALUE_B, VALUE_C, assertError, expectSeriesCsvA, copyDist, exchange, findSeriesChunk, flipByte, followCsvPlan, post, request, requestFor, sha256Base64, valueA, withServer, useFixture, fixture } from "../support/server-fixture.js";

const sha256 = (text: string | Buffer) => createHash("sha256").update(text).digest("hex");

const answers = suite("series route: answers");
answers.before(useFixture);

answers("series - one place over the whole period by default: tidy CSV, exact bytes, provenance headers", async () => {
  await withServer(fixture.dist, async (s) => {
    const answer = await request(s, "/api/v1/series?lat=-23&lon=124.5");
    assert.is(answer.status, 200, answer.text);
    assert.is(answer.text, expectSeriesCsvA([[250, 260]], DATES_A));
    assert.is(answer.headers["content-type"], "text/csv; charset=utf-8");
    assert.is(answer.headers["service-dataset-version"], fixture.a.id);
    assert.is(answer.headers.link, `</api/v1/datasets/${fixture.a.id}>; rel="describedby"`);
    assert.is(answer.headers["service-request-sha256"], sha256(stableStringify({ lat: [-23], lon: [124.5], variables: ["air_temperature_max"], format: "csv" })));
    const pinned = await request(s, `/api/v1/series?variables=max_temp&lon=124.5,124&lat=-23,-24.5&end=2004-02-02&start=2004-02-01&format=json&dataset_version=${fixture.a.id}`);
    const canonical = { lat: [-23, -24.5], lon: [124.5, 124], variables: ["air_temperature_max"], format: "json", start: "2004-02-01", end: "2004-02-02", dataset_version: [fixture.a.id] };
    assert.is(pinned.headers["service-request-sha256"], sha256(stableStringify(canonical)), "the canonical JSON of the checked request, as fast-json-stable-stringify writes it");
    assert.is(answer.headers["content-digest"], `sha-256=:${sha256Base64(answer.bytes)}:`);
    assert.is(answer.headers["cache-control"], "public, max-age=60");
    assert.is(answer.headers.etag, `"${sha256(answer.bytes).slice(0, 32)}"`);
  });
});

answers("series - places in the order asked, across 29 February, an ocean cell's values empty, a place asked twice twice", async () => {
  await withServer(fixture.dist, async (s) => {
    // (127.6, -25.6) lies in the ocean corner of version A (cols and rows 310..320)
    const answer = await request(s, "/api/v1/series?lat=-25.6,-23,-25.6&lon=127.6,124.5,127.6&start=2004-02-27&end=2004-03-02");
    assert.is(answer.status, 200, answer.text);
    const dates = ["2004-02-27", "2004-02-28", "2004-02-29", "2004-03-01", "2004-03-02"];
    assert.is(answer.text, expectSeriesCsvA([[312, 312], [250, 260], [312, 312]], dates));
    assert.ok(answer.text.includes("127.6,-25.6,2004-02-29,\n"), "missing is an empty field, never 0");
  });
});

answers("series - JSON: the manifest with versions, hashes and sources by reference, dataSha256 of the data text, the CSV's values", async () => {
  await withServer(fixture.dist, async (s) => {
    const path = "/api/v1/series?lat=-23,-25.6&lon=124.5,127.6&start=2004-02-27&end=2004-03-02&format=json";
    const answer = await request(s, path);
    assert.is(answer.status, 200, answer.text);
    const body = answer.json();
    const dates = ["2004-02-27", "2004-02-28", "2004-02-29", "2004-03-01", "2004-03-02"];
    assert.equal(body.data, {
      dates,
      places: [
        { longitude: 124.5, latitude: -23, values: { air_temperature_max: dates.map((d) => valueA(250, 260, DATES_A.indexOf(d))) } },
        { longitude: 127.6, latitude: -25.6, values: { air_temperature_max: dates.map(() => null) } },
      ],
    });
    const dataText = answer.text.slice(answer.text.indexOf(',"data":') + 8, -1);
    const m = body.manifest;
    assert.is(m.dataSha256, sha256(dataText));
    assert.is(m.requestSha256, answer.headers["service-request-sha256"]);
    assert.equal([m.queryVersion, m.start, m.end, m.days, m.valueCount], ["silo-cell-series-v1", "2004-02-27", "2004-03-02", 5, 10]);
    assert.equal(m.places, [{ lat: -23, lon: 124.5, longitude: 124.5, latitude: -23 }, { lat: -25.6, lon: 127.6, longitude: 127.6, latitude: -25.6 }]);
    const [v] = m.variables;
    assert.equal([v.name, v.silo, v.unit, v.datasetVersion, v.datasetContentSha256, v.license], ["air_temperature_max", "max_temp", "degC", fixture.a.id, fixture.a.content_sha256, fixture.a.license]);
    // February and March's days are two spans; each reference leads to the source lists of its dates, verified
    assert.equal(v.sources.map((r: { first: string; last: string }) => `${r.first}..${r.last}`), ["2004-02-01..2004-02-29", "2004-03-01..2004-03-04"]);
    for (const ref of v.sources) {
      // the dist's objects are served beside the interface (server/site.ts), as a mirror serves them
      const fetched = await exchange(s, `/${ref.path}`);
      assert.is(fetched.status, 200, ref.path);
      assert.is(sha256(fetched.bytes), ref.sha256);
      const held = JSON.parse(fetched.bytes.toString());
      const lists = ref.pointer ? ref.pointer.split("/").slice(1).reduce((at: any, key: string) => at[key], held) : held;
      assert.is(lists.length, ref.first === "2004-02-01" ? 29 : 4);
      assert.ok(lists.every((l: { sha256: string }[]) => l.length >= 1 && /^[0-9a-f]{64}$/.test(l[0].sha256)));
    }
    const csv = await request(s, path.replace("&format=json", ""));
    assert.is(csv.text, expectSeriesCsvA([[250, 260], [312, 312]], dates));
  });
});

answers("series - the place rule: the cell whose area holds the point; on an edge the cell east or north; the grid's outer edges hold their cells", async () => {
  const table: [number, number, { col: number; row: number } | null][] = [
    [124.5, -23, { col: 250, row: 260 }], // a centre
    [124.51, -23.02, { col: 250, row: 260 }], // inside its square
    [124.525, -23, { col: 251, row: 260 }], // on the edge between cols 250 and 251: east
    [124.475, -23, { col: 250, row: 260 }], // on the edge between 249 and 250: east
    [124.5, -23.025, { col: 250, row: 260 }], // on the edge between rows 260 and 261: north
    [124.5, -22.975, { col: 250, row: 259 }], // on the edge between 259 and 260: north
    [124.525, -23.025, { col: 251, row: 260 }], // a corner: east and north
    [111.975, -9.975, { col: 0, row: 0 }], // the grid's north-west corner
    [154.025, -44.025, { col: 840, row: 680 }], // its south-east corner
    [154.025, -9.975, { col: 840, row: 0 }],
    [111.97, -20, null],
    [154.03, -20, null],
    [130, -9.97, null],
    [130, -44.03, null],
  ];
  for (const [lon, lat, cell] of table) assert.equal(lonLatToCell(lon, lat), cell, `${lon}, ${lat}`);
  await withServer(fixture.dist, async (s) => {
    const centre = await request(s, "/api/v1/series?lat=-23&lon=124.55&start=2004-02-01&end=2004-02-03");
    const edge = await request(s, "/api/v1/series?lat=-23.025&lon=124.525&start=2004-02-01&end=2004-02-03");
    assert.is(edge.status, 200, edge.text);
    assert.is(edge.text, centre.text, "a point on an edge answers as the centre of the cell east and north of it");
    assert.is(edge.text, expectSeriesCsvA([[251, 260]], ["2004-02-01", "2004-02-02", "2004-02-03"]));
  });
});

answers("series - version choice: the newest candidate holding every date at every place; pins; pinned and dated answers are immutable", async () => {
  await withServer(fixture.dist, async (s) => {
    // B and C (published together, B first by id) hold 11 x 11 cells on 2004-02-28..03-01; A holds them on 33 days
    const newest = await request(s, "/api/v1/series?lat=-20.25&lon=127.25");
    assert.is(newest.headers["service-dataset-version"], fixture.b.id);
    assert.is(newest.text, `longitude,latitude,date,air_temperature_max\n${["2004-02-28", "2004-02-29", "2004-03-01"].map((d) => `127.25,-20.25,${d},${VALUE_B}\n`).join("")}`);
    const longer = await request(s, "/api/v1/series?lat=-20.25&lon=127.25&start=2004-02-27&end=2004-03-01");
    assert.is(longer.headers["service-dataset-version"], fixture.a.id, "B does not hold 2004-02-27: A answers");
    const pinned = await request(s, `/api/v1/series?lat=-20.25&lon=127.25&start=2004-02-29&end=2004-02-29&dataset_version=${fixture.c.id}`);
    assert.is(pinned.text, `longitude,latitude,date,air_temperature_max\n127.25,-20.25,2004-02-29,${VALUE_C}\n`);
    assert.is(pinned.headers["cache-control"], "public, max-age=31536000, immutable");
    const alias = await request(s, `/api/v1/series?lat=-20.25&lon=127.25&variables=max_temp&start=2004-02-29&end=2004-02-29&dataset_version=${fixture.c.id}`);
    assert.is(alias.text, pinned.text, "SILO's name is an alias of the API name");
  });
});

answers("series - HEAD, ETag and 304, and gzip with the Content-Digest of the bytes sent", async () => {
  await withServer(fixture.dist, async (s) => {
    const path = "/api/v1/series?lat=-23,-24&lon=124.5,125";
    const get = await request(s, path);
    const head = await request(s, path, { method: "HEAD" });
    assert.is(head.status, 200);
    assert.is(head.bytes.length, 0);
    assert.is(head.headers["repr-digest"], get.headers["content-digest"]);
    const cached = await request(s, path, { headers: { "If-None-Match": String(get.headers.etag) } });
    assert.is(cached.status, 304);
    const gzip = await request(s, path, { headers: { "Accept-Encoding": "gzip" } });
    assert.is(gzip.headers["content-encoding"], "gzip");
    assert.is(gzip.headers["content-digest"], `sha-256=:${sha256Base64(gzip.bytes)}:`);
  });
});

answers("series - over the bound: 413 with a plan of pinned calls, each within it, whose answers in order are exactly the call's", async () => {
  const path = "/api/v1/series?lat=-23,-24,-21&lon=124.5,125,123&start=2004-02-01&end=2004-03-04";
  const whole = await withServer(fixture.dist, async (s) => (await request(s, path)).text);
  for (const [bound, parts] of [[70, 2], [20, 6]] as const) {
    await withServer(
      fixture.dist,
      async (s) => {
        const refused = assertError(await request(s, path), 413, "request_too_large");
        assert.match(refused.message, `The call asks for 99 values (3 places x 33 days x 1 variable), over the bound of ${bound} values a call.`);
        assert.is(refused.plan.length, parts, refused.plan.join("\n"));
        const text = await followCsvPlan(s, refused.plan, (part) => assert.match(part, `&dataset_version=${fixture.a.id}`));
        assert.is(text, whole);
      },
      { bounds: { seriesMaxValues: bound } },
    );
  }
});

answers("series - a damaged series chunk: 503 for that version's calls, never a wrong value; other versions keep answering", async () => {
  const dist = await copyDist(fixture);
  const chunk = await findSeriesChunk(dist, fixture.a, "2004-02-10", 250, 260);
  await flipByte(chunk.file, chunk.chunk.offset + 3);
  await withServer(dist, async (s) => {
    const damaged = assertError(await request(s, "/api/v1/series?lat=-23&lon=124.5"), 503, "service_unavailable");
    assert.match(damaged.message, `Dataset version ${fixture.a.id} is temporarily unavailable`);
    const other = await request(s, "/api/v1/series?lat=-20.25&lon=127.25");
    assert.is(other.status, 200, other.text);
    assert.is(other.headers["service-dataset-version"], fixture.b.id);
  });
});

answers.run();

// ---------------------------------------------------------------------------------------------------------------

const refusals = suite("series route: refusals");
refusals.before(useFixture);

refusals("series - bad parameters are 400 invalid_parameters naming the parameter and what it accepts", async () => {
  const cases: [string, string, (string | number)[], RegExp][] = [
    ["lon=124.5", "required", ["lat"], /one or more latitudes/],
    ["lat=-23,-24&lon=124.5", "length", ["lon"], /holds 1 values and lat 2/],
    ["lat=abc&lon=124.5", "type", ["lat", 0], /not a decimal number/],
    ["lat=-23&lon=0x10", "type", ["lon", 0], /not a decimal number/],
    ["lat=-23&lon=1e2", "type", ["lon", 0], /not a decimal number/],
    ["lat=-23&lon=", "type", ["lon", 0], /not a decimal number/],
    ["lat=-23&lon=Infinity", "type", ["lon", 0], /not a decimal number/],
    ["lat=-95&lon=124.5", "out_of_range", ["lat", 0], /outside -90..90/],
    ["lat=-23,-50&lon=124.5,124.5", "out_of_range", ["lat", 1], /outside the SILO grid: the SILO grid spans longitude 111.975..154.025 and latitude -44.025..-9.975/],
    [`lat=${Array(101).fill(-23).join(",")}&lon=${Array(101).fill(124.5).join(",")}`, "length", ["lat"], /at most 100 places/],
    ["lat=-23&lon=124.5&variables=rain", "enum", ["variables", 0], /the variables published are air_temperature_max \(max_temp\), air_temperature_min \(min_temp\), precipitation_amount \(daily_rain\)/],
    ["lat=-23&lon=124.5&variables=max_temp,air_temperature_max", "repeated", ["variables", 1], /twice/],
    ["lat=-23&lon=124.5&start=2004-02-30", "invalid_date", ["start"], /not a calendar date/],
    ["lat=-23&lon=124.5&start=2004-03-02&end=2004-03-01", "period_order", ["end"], /precedes start/],
    ["lat=-23&lon=124.5&format=xml", "enum", ["format"], /csv \(default\), json, met/],
    ["lat=-23&lon=124.5&lat=-24", "repeated", ["lat"], /give it once/],
    ["lat=-23&lon=124.5&variable=min_temp", "additional_property", ["variable"], /remove it; the parameters allowed are lat, lon, start, end, variables, format, dataset_version/],
    ["lat=-23&lon=124.5&dataset_version=a.b", "pattern", ["dataset_version", 0], /does not match/],
    ["lat=-23&lon=124.5&variables=max_temp,min_temp&dataset_version=x", "length", ["dataset_version"], /one version per variable/],
    ["lat=-23&lon=124.5&format=met&variables=max_temp", "required", ["variables"], /variables=radiation,max_temp,min_temp,daily_rain/],
    ["lat=-23,-24&lon=124.5,125&format=met&variables=radiation,max_temp,min_temp,daily_rain", "length", ["lat"], /holds exactly one/],
  ];
  await withServer(fixture.dist, async (s) => {
    for (const [query, code, path, message] of cases) {
      const body = assertError(await request(s, `/api/v1/series?${query}`), 400, "invalid_parameters");
      assert.equal([body.issues[0].code, body.issues[0].path], [code, path], query);
      assert.match(body.issues[0].message, message, query);
      assert.match(body.message, `Query parameter ${path.length === 1 ? path[0] : `${path[0]}[${path[1]}]`}`, query);
    }
  });
});

refusals("series - 422 coverage_unavailable when no version holds the place, the period or the variable, saying what is published", async () => {
  const cases: [string, RegExp][] = [
    ["lat=-35&lon=140", /No published version of air_temperature_max holds the place at latitude -35, longitude 140; published: .*silo-tmax-2004/],
    ["lat=-23&lon=124.5&start=2003-01-01&end=2003-02-10", /holds the place at latitude -23, longitude 124.5 on every date of 2003-01-01..2003-02-10; published: .*\(2004-02-01..2004-03-04; box 121.975,-26.025,128.025,-19.975\)/],
    ["lat=-23&lon=124.5&start=2004-03-05", /No period is held by every asked variable from start to end \(2004-03-05..2004-03-04\)/],
    ["lat=-23&lon=124.5&variables=radiation", /No public demo version of surface_downwelling_shortwave_flux_in_air \(radiation\) is published here/],
    ["lat=-23&lon=124.5&dataset_version=silo-tmax-20990101-20990102-0000000000000000", /dataset_version\[0\] silo-tmax-20990101-20990102-0000000000000000 is not a published version here/],
    ["lat=-23&lon=124.5&dataset_version={NOAA}", /is not a public demo SILO daily version of air_temperature_max/],
    ["lat=-23&lon=124.5&dataset_version={PAID}", /is not a public demo SILO daily version of air_temperature_max/],
    ["lat=-23&lon=124.5&dataset_version={RESTRICTED}", /is not a published version here/],
    ["lat=-23&lon=124.5&dataset_version={B}", /No pinned version of air_temperature_max holds the place/],
  ];
  const ids: Record<string, string> = { NOAA: fixture.noaa.id, PAID: fixture.paid.id, RESTRICTED: fixture.restricted.id, B: fixture.b.id };
  await withServer(fixture.dist, async (s) => {
    for (const [query, message] of cases) {
      const path = `/api/v1/series?${query.replace(/\{([A-Z]+)\}/, (_, k: string) => ids[k])}`;
      const body = assertError(await request(s, path), 422, "coverage_unavailable");
      assert.match(body.message, message, path);
    }
  });
});

refusals("contract - a query over 31 days, or for another variable, is the contract's 422, and it names the exact series call", async () => {
  await withServer(fixture.dist, async (s) => {
    const long = assertError(await post(s, "/api/v1/data/query", requestFor({ col: 250, row: 260, width: 2, height: 1 }, "2004-02-01", "2004-03-04", { format: "csv" })), 422, "invalid_request");
    const call = "/api/v1/series?lat=-23,-23&lon=124.5,124.55&start=2004-02-01&end=2004-03-04&format=csv";
    assert.is(long.issues[0].code, "too_many_days");
    assert.match(long.issues[0].message, `the period holds 33 days; at most 31 are allowed (inclusive bounds). GET ${call} answers it in one call (the box's 2 cells over the whole period)`);
    assert.match(long.message, call);
    const answer = await request(s, call);
    assert.is(answer.status, 200, answer.text);
    assert.is(answer.text, expectSeriesCsvA([[250, 260], [251, 260]], DATES_A));

    const big = assertError(await post(s, "/api/v1/data/query", requestFor({ col: 200, row: 200, width: 20, height: 10 }, "2004-02-01", "2004-03-04")), 422, "invalid_request");
    assert.match(big.issues[0].message, "GET /api/v1/series?bbox=121.975,-20.475,122.975,-19.975&start=2004-02-01&end=2004-03-04&format=json answers it in one call (the box's 200 cells over the whole period");
    const boxCall = /GET (\/api\/v1\/series\?\S+)/.exec(big.issues[0].message)![1];
    assert.is((await request(s, boxCall)).json().data.places.length, 200);

    const other = assertError(await post(s, "/api/v1/data/query", { ...requestFor({ col: 250, row: 260, width: 1, height: 1 }, "2004-02-01", "2004-02-03"), variables: ["air_temperature_min"] }), 422, "invalid_request");
    const enumIssue = other.issues.find((i: { path: unknown[] }) => i.path[0] === "variables");
    assert.match(enumIssue.message, "air_temperature_min is not answered by the direct query (air_temperature_max only); use the series route: GET /api/v1/series?lat=-23&lon=124.5&start=2004-02-01&end=2004-02-03&variables=air_temperature_min&format=json answers it in one call");
  });
});

refusals.run();
