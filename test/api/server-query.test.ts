// Server validate/resolve/query: the contract check, version choice, selection edges, stitching, hashes, CSV bytes, limits.

import stableStringify from "fast-json-stable-stringify";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { sha256Hex } from "../../format/hash.js";
import { colToLon, rowToLat } from "../../format/grid.js";
import { assertResponseSize } from "../../api/answer.js";
import { buildManifest, manifestJson } from "../../api/query/manifest.js";
import {
  DATES_A,
  DATES_B,
  VALUE_B,
  assertError,
  assertSchema,
  expectCsv,
  expectRowsA,
  post,
  request,
  requestFor,
  sha256Base64,
  valueA,
  withServer,
  type Answer,
  type Served,
  useFixture,
  fixture,
  A,
} from "../support/server-fixture.js";


/** Checks a JSON query answer end to end: schema, headers, manifest, every hash recomputed from the bytes. */
function checkJsonAnswer(answer: Answer, body: Record<string, unknown>, versionId: string): any {
  assert.is(answer.status, 200, answer.text);
  assert.match(String(answer.headers["content-type"]), /^application\/json/);
  const result = answer.json();
  assertSchema("query-result.schema.json", result);
  const m = result.manifest;
  const dataText = answer.text.slice(answer.text.indexOf(',"data":') + ',"data":'.length, -1);
  assert.is(m.dataSha256, sha256Hex(dataText), "dataSha256 hashes the data array exactly as embedded");
  assert.is(m.dataSha256, sha256Hex(JSON.stringify(result.data)));
  const requestSha256 = sha256Hex(stableStringify({ format: "json", ...body }));
  assert.is(m.requestSha256, requestSha256);
  assert.is(answer.headers["service-request-sha256"], requestSha256);
  assert.is(answer.headers["content-digest"], `sha-256=:${sha256Base64(answer.bytes)}:`);
  assert.is(answer.headers["service-dataset-version"], versionId);
  assert.is(answer.headers["link"], `</api/v1/datasets/${versionId}>; rel="describedby"`);
  assert.is(answer.headers["cache-control"], "no-store");
  assert.is(answer.headers["content-disposition"], undefined);
  assert.is(m.datasetVersion, versionId);
  assert.is(m.queryVersion, "native-cell-centers-v1");
  assert.is(m.spatialSelection, "cell_center_in_bbox_west_south_inclusive_east_north_exclusive");
  assert.is(m.crs, "EPSG:4326");
  assert.is(m.missingPolicy, "preserve");
  assert.is(m.rowCount, result.data.length);
  return result;
}

async function resolveReason(served: Served, body: unknown): Promise<any> {
  const answer = await post(served, "/api/v1/data/resolve", body);
  assert.is(answer.status, 200, answer.text);
  const resolution = answer.json();
  assertSchema("resolution.schema.json", resolution);
  assert.is(resolution.acquisitionEnabled, false);
  return resolution;
}

// ---------------------------------------------------------------------------------------------------------------

const validate = suite("validate");
validate.before(useFixture);

validate("validate - applies the format default and never claims coverage", async () => {
  await withServer(fixture.dist, async (served) => {
    const body = requestFor({ col: 250, row: 250, width: 2, height: 2 }, "2004-02-01", "2004-02-01");
    const answer = await post(served, "/api/v1/data/validate", body);
    assert.is(answer.status, 200, answer.text);
    assert.is(answer.headers["cache-control"], "no-store");
    const result = answer.json();
    assertSchema("validation.schema.json", result);
    assert.equal(result.request, { ...body, format: "json" });
    assert.is(result.valid, true);
    assert.is(result.coverageVerified, false);
    assert.is(result.acquisitionEnabled, false);
    // validate checks shape only: a period nobody published is still valid
    const far = await post(served, "/api/v1/data/validate", requestFor({ col: 0, row: 0, width: 1, height: 1 }, "1900-01-01", "1900-01-31", { format: "csv" }));
    assert.is(far.status, 200);
    assert.is(far.json().request.format, "csv");
  });
});

validate("validate - schema violations are 422 invalid_request with issue paths", async () => {
  await withServer(fixture.dist, async (served) => {
    const base = requestFor({ col: 250, row: 250, width: 2, height: 2 }, "2004-02-01", "2004-02-01");
    const cases: [unknown, string, (string | number)[]][] = [
      [{ ...base, units: undefined }, "required", ["units"]],
      [{ ...base, extra: 1 }, "additional_property", ["extra"]],
      [{ ...base, region: { ...base.region, bbox: [181, -30, 182, -29] } }, "out_of_range", ["region", "bbox", 0]],
      [{ ...base, region: { ...base.region, bbox: [130, -91, 131, -29] } }, "out_of_range", ["region", "bbox", 1]],
      [{ ...base, region: { ...base.region, bbox: [130, -30, 131, "x"] } }, "type", ["region", "bbox", 3]],
      [{ ...base, region: { ...base.region, crs: "EPSG:3857" } }, "enum", ["region", "crs"]],
      [{ ...base, variables: ["air_temperature_min"] }, "enum", ["variables", 0]],
      [{ ...base, variables: ["air_temperature_max", "air_temperature_max"] }, "length", ["variables"]],
      [{ ...base, format: "xml" }, "enum", ["format"]],
      [{ ...base, dataset_version: "bad id!" }, "pattern", ["dataset_version"]],
      [{ ...base, period: { start: "2003-02-29", end: "2003-03-01" } }, "invalid_date", ["period", "start"]],
      [{ ...base, period: { start: "2004-02-01", end: "2004-02-30" } }, "invalid_date", ["period", "end"]],
      [{ ...base, period: { start: "2004-2-1", end: "2004-02-03" } }, "invalid_date", ["period", "start"]],
    ];
    for (const [body, code, path] of cases) {
      for (const route of ["validate", "resolve", "query"]) {
        const answer = await post(served, `/api/v1/data/${route}`, body);
        const error = assertError(answer, 422, "invalid_request");
        assert.ok(
          error.issues.some((i: any) => i.code === code && JSON.stringify(i.path) === JSON.stringify(path)),
          `${route} ${JSON.stringify(body)}: expected ${code} at ${JSON.stringify(path)}, got ${JSON.stringify(error.issues)}`,
        );
      }
    }
  });
});

validate("validate - period and units accept extra properties and ignore them on validate, resolve and query: same echo, same answer bytes, same requestSha256; region and the body stay closed", async () => {
  await withServer(fixture.dist, async (served) => {
    const base = requestFor({ col: 250, row: 250, width: 2, height: 2 }, "2004-02-01", "2004-02-02");
    const extras = {
      ...base,
      period: { label: "two days", ...(base.period as object), tz: "UTC" },
      units: { ...(base.units as object), precipitation_amount: "mm", note: { by: "a client" } },
    };
    const echo = (await post(served, "/api/v1/data/validate", extras)).json().request;
    assert.equal(echo, { ...base, format: "json" });
    assert.equal(Object.keys(echo.period), ["start", "end"]);
    for (const route of ["resolve", "query"]) {
      const plain = await post(served, `/api/v1/data/${route}`, base);
      const extra = await post(served, `/api/v1/data/${route}`, extras);
      assert.is(extra.status, 200, extra.text);
      assert.ok(extra.bytes.equals(plain.bytes), `${route}: the same bytes`);
    }
    const answer = await post(served, "/api/v1/data/query", extras);
    checkJsonAnswer(answer, base, A); // requestSha256 of the request without the ignored properties
    for (const [body, path] of [
      [{ ...base, region: { ...(base.region as object), srid: 4326 } }, ["region", "srid"]],
      [{ ...base, note: "x" }, ["note"]],
    ] as const) {
      for (const route of ["validate", "resolve", "query"]) {
        const error = assertError(await post(served, `/api/v1/data/${route}`, body), 422, "invalid_request");
        assert.equal(error.issues.map((i: any) => [i.code, i.path]), [["additional_property", path]], route);
      }
    }
  });
});

validate("validate - run-time rules: bbox order, period order, 31 and 32 days, leap years", async () => {
  await withServer(fixture.dist, async (served) => {
    const base = requestFor({ col: 250, row: 250, width: 2, height: 2 }, "2004-02-01", "2004-02-01");
    const [w, s, e, n] = base.region.bbox as number[];
    const cases: [unknown, string, (string | number)[]][] = [
      [{ ...base, region: { ...base.region, bbox: [e, s, w, n] } }, "bbox_order", ["region", "bbox", 0]],
      [{ ...base, region: { ...base.region, bbox: [w, s, w, n] } }, "bbox_order", ["region", "bbox", 0]],
      [{ ...base, region: { ...base.region, bbox: [w, n, e, s] } }, "bbox_order", ["region", "bbox", 1]],
      [{ ...base, region: { ...base.region, bbox: [170, s, -170, n] } }, "bbox_order", ["region", "bbox", 0]],
      [{ ...base, period: { start: "2004-02-02", end: "2004-02-01" } }, "period_order", ["period", "end"]],
      [{ ...base, period: { start: "2004-02-01", end: "2004-03-03" } }, "too_many_days", ["period", "end"]],
      [{ ...base, period: { start: "2003-12-31", end: "2004-12-31" } }, "too_many_days", ["period", "end"]],
    ];
    for (const [body, code, path] of cases) {
      const error = assertError(await post(served, "/api/v1/data/validate", body), 422, "invalid_request");
      assert.equal(error.issues.map((i: any) => [i.code, i.path]), [[code, path]], JSON.stringify(body));
    }
    // 31 days inclusive across 29 February is the most allowed; the same count through 2003 has no 29 February
    for (const period of [
      { start: "2004-02-01", end: "2004-03-02" },
      { start: "2004-02-29", end: "2004-02-29" },
      { start: "2003-02-01", end: "2003-03-03" },
    ]) {
      const answer = await post(served, "/api/v1/data/validate", { ...base, period });
      assert.is(answer.status, 200, `${JSON.stringify(period)}: ${answer.text}`);
    }
    const tooLong = await post(served, "/api/v1/data/validate", { ...base, period: { start: "2003-02-01", end: "2003-03-04" } });
    assertError(tooLong, 422, "invalid_request");
  });
});

validate("validate - JSON that is not an object is 422 invalid_request", async () => {
  await withServer(fixture.dist, async (served) => {
    for (const text of ["[]", '"text"', "null", "1", "true"]) {
      for (const route of ["validate", "resolve", "query"]) {
        const error = assertError(await post(served, `/api/v1/data/${route}`, text), 422, "invalid_request");
        assert.equal(error.issues[0].path, []);
      }
    }
  });
});

validate.run();

// ---------------------------------------------------------------------------------------------------------------

const resolve = suite("resolve");
resolve.before(useFixture);

resolve("resolve - selects the version, its sorted tile ids and row count", async () => {
  await withServer(fixture.dist, async (served) => {
    // cols 254..257 x rows 254..257 cross lattice column 256 and row 256: four tiles on each of two days
    const body = requestFor({ col: 254, row: 254, width: 4, height: 4 }, "2004-02-01", "2004-02-02");
    const resolution = await resolveReason(served, body);
    assert.equal(resolution, {
      available: true,
      reason: "available",
      selection: {
        datasetVersion: A,
        tileIds: ["20040201-r0-c0", "20040201-r0-c1", "20040201-r1-c0", "20040201-r1-c1", "20040202-r0-c0", "20040202-r0-c1", "20040202-r1-c0", "20040202-r1-c1"],
        rowCount: 32,
      },
      acquisitionEnabled: false,
    });
  });
});

resolve("resolve - each unavailable reason, decided in the documented order", async () => {
  await withServer(fixture.dist, async (served) => {
    const between = requestFor({ col: 250, row: 250, width: 1, height: 1 }, "2004-02-01", "2004-02-01");
    const [w, , , n] = between.region.bbox as number[];
    // a box between cell centres: 0.01..0.02 degrees east of a cell edge, no centre inside
    between.region.bbox = [w + 0.001, n - 0.02, w + 0.02, n - 0.001];
    assert.is((await resolveReason(served, between)).reason, "no_cell_centers");
    // a pinned version that does not exist has no grid to overlap: coverage_unavailable, saying so
    const unknown = await post(served, "/api/v1/data/query", { ...between, dataset_version: "silo-tmax-unknown" });
    assert.match(assertError(unknown, 422, "coverage_unavailable").message, /pinned dataset_version silo-tmax-unknown is not a published version/);
    // a box over Europe overlaps no published grid: coverage_unavailable, naming what is published
    const europe = { ...between, region: { bbox: [5, 45, 15, 55], crs: "EPSG:4326" } };
    assert.is((await resolveReason(served, europe)).reason, "coverage_unavailable");
    assert.match(assertError(await post(served, "/api/v1/data/query", europe), 422, "coverage_unavailable").message, /outside every published grid; give a box inside one of these: silo-tmax-/);

    // 11,011 rows (121 x 91 cells, one day) inside version A: too large
    const tooLarge = requestFor({ col: 200, row: 200, width: 121, height: 91 }, "2004-02-01", "2004-02-01");
    assert.equal(await resolveReason(served, tooLarge), { available: false, reason: "request_too_large", selection: null, acquisitionEnabled: false });
    // the same box on dates nobody published: no version could answer it at any size
    assert.is((await resolveReason(served, { ...tooLarge, period: { start: "1990-01-01", end: "1990-01-01" } })).reason, "coverage_unavailable");

    // exactly 10,000 rows inside version A: available as CSV; as JSON they pass 1,000,000 bytes, and resolve
    // says so as query would (docs/contract.md §3)
    const csv = { format: "csv" };
    const tenThousand = await resolveReason(served, requestFor({ col: 205, row: 205, width: 100, height: 100 }, "2004-02-03", "2004-02-03", csv));
    assert.is(tenThousand.reason, "available");
    assert.is(tenThousand.selection.rowCount, 10000);
    assert.is((await resolveReason(served, requestFor({ col: 205, row: 205, width: 100, height: 100 }, "2004-02-03", "2004-02-03"))).reason, "request_too_large");
    // 10,000 rows as 5,000 cells on two days, and one cell more on two days
    const twoDays = await resolveReason(served, requestFor({ col: 205, row: 205, width: 100, height: 50 }, "2004-02-03", "2004-02-04", csv));
    assert.is(twoDays.selection.rowCount, 10000);
    const overTwoDays = await resolveReason(served, requestFor({ col: 205, row: 205, width: 101, height: 50 }, "2004-02-03", "2004-02-04", csv));
    assert.is(overTwoDays.reason, "request_too_large");

    const cases: [string, Record<string, unknown>][] = [
      ["dates nobody published", requestFor({ col: 250, row: 250, width: 2, height: 2 }, "2005-01-01", "2005-01-02")],
      ["a period running past the last date", requestFor({ col: 250, row: 250, width: 2, height: 2 }, "2004-03-03", "2004-03-05")],
      ["a box running past the window", requestFor({ col: 195, row: 250, width: 10, height: 2 }, "2004-02-01", "2004-02-01")],
      ["an unknown pinned version", requestFor({ col: 250, row: 250, width: 2, height: 2 }, "2004-02-01", "2004-02-01", { dataset_version: "silo-tmax-nope" })],
      ["a pinned paid version", requestFor({ col: 250, row: 250, width: 2, height: 2 }, "2004-02-01", "2004-02-01", { dataset_version: fixture.paid.id })],
      ["a pinned restricted version", requestFor({ col: 250, row: 250, width: 2, height: 2 }, "2004-02-01", "2004-02-01", { dataset_version: fixture.restricted.id })],
      ["a pinned incompatible version", requestFor({ col: 250, row: 250, width: 2, height: 2 }, "2004-02-01", "2004-02-01", { dataset_version: fixture.noaa.id })],
      ["a pinned version that does not cover the box", requestFor({ col: 250, row: 250, width: 2, height: 2 }, "2004-02-28", "2004-02-28", { dataset_version: fixture.b.id })],
    ];
    for (const [what, body] of cases) {
      assert.equal(await resolveReason(served, body), { available: false, reason: "coverage_unavailable", selection: null, acquisitionEnabled: false }, what);
    }
  });
});

resolve("resolve - newest published_at wins, ties by id, never mixing versions", async () => {
  await withServer(fixture.dist, async (served) => {
    const inB = { col: 302, row: 202, width: 3, height: 3 };
    // B and C cover this box on 28 Feb .. 1 Mar and are newer than A; they tie on published_at, so B (id order)
    assert.is((await resolveReason(served, requestFor(inB, "2004-02-28", "2004-03-01"))).selection.datasetVersion, fixture.b.id);
    // one day outside B's dates: only A covers every date
    assert.is((await resolveReason(served, requestFor(inB, "2004-02-27", "2004-02-29"))).selection.datasetVersion, A);
    // one column outside B's window: only A covers every cell
    assert.is((await resolveReason(served, requestFor({ ...inB, col: 309 }, "2004-02-28", "2004-02-28"))).selection.datasetVersion, A);
    // pinning overrides the choice
    assert.is((await resolveReason(served, requestFor(inB, "2004-02-28", "2004-02-28", { dataset_version: A }))).selection.datasetVersion, A);
    assert.is((await resolveReason(served, requestFor(inB, "2004-02-28", "2004-02-28", { dataset_version: fixture.c.id }))).selection.datasetVersion, fixture.c.id);
  });
});

resolve.run();

// ---------------------------------------------------------------------------------------------------------------

const query = suite("query");
query.before(useFixture);

query("query - stitches a box across four tiles, rows in date/north-to-south/west-to-east order", async () => {
  await withServer(fixture.dist, async (served) => {
    const cells = { col: 253, row: 254, width: 5, height: 4 };
    const body = requestFor(cells, "2004-02-01", "2004-02-02");
    const result = checkJsonAnswer(await post(served, "/api/v1/data/query", body), body, A);
    assert.equal(result.data, expectRowsA(cells, ["2004-02-01", "2004-02-02"]));
    assert.equal(new Set(result.data.map((r: any) => r.tile)).size, 8);
    // the cell at lattice corner (255, 255) is ocean: null, never 0
    const corner = result.data.find((r: any) => r.date === "2004-02-01" && r.tile === "20040201-r0-c0" && r.row === 55 && r.col === 55);
    assert.is(corner.value, null);
    const m = result.manifest;
    assert.is(m.datasetContentSha256, fixture.a.content_sha256);
    assert.is(m.transformVersion, fixture.a.transform_version);
    assert.is(m.dataClass, "interpolated_observation");
    // only the sources of the dates answered, in date order (docs/contract.md §3); these files were supplied, not fetched
    assert.equal(m.sourceManifest.map((e: any) => Object.keys(e).sort()), [["member_path", "sha256"], ["member_path", "sha256"]]);
    assert.equal(m.sourceManifest.map((e: any) => e.member_path), ["2004/20040201.max_temp.tif", "2004/20040202.max_temp.tif"]);
    assert.is(m.license, fixture.a.license);
    assert.is(m.attribution, fixture.a.attribution);
  });
});

query("query - stitches a box across two tiles", async () => {
  await withServer(fixture.dist, async (served) => {
    const cells = { col: 250, row: 230, width: 12, height: 3 };
    const body = requestFor(cells, "2004-02-10", "2004-02-10");
    const result = checkJsonAnswer(await post(served, "/api/v1/data/query", body), body, A);
    assert.equal(result.data, expectRowsA(cells, ["2004-02-10"]));
    assert.equal([...new Set(result.data.map((r: any) => r.tile))], ["20040210-r0-c0", "20040210-r0-c1"]);
  });
});

query("query - leap day: 28 February, 29 February, 1 March", async () => {
  await withServer(fixture.dist, async (served) => {
    const cells = { col: 260, row: 260, width: 2, height: 2 };
    const body = requestFor(cells, "2004-02-28", "2004-03-01");
    const result = checkJsonAnswer(await post(served, "/api/v1/data/query", body), body, A);
    assert.equal([...new Set(result.data.map((r: any) => r.date))], ["2004-02-28", "2004-02-29", "2004-03-01"]);
    assert.equal(result.data, expectRowsA(cells, ["2004-02-28", "2004-02-29", "2004-03-01"]));
  });
});

query("query - box edges: west/south inclusive, east/north exclusive on exact centres", async () => {
  await withServer(fixture.dist, async (served) => {
    // a box whose edges sit exactly on cell centres: west and south centres are in, east and north are out
    const body = requestFor({ col: 0, row: 0, width: 1, height: 1 }, "2004-02-05", "2004-02-05");
    body.region.bbox = [colToLon(250), rowToLat(253), colToLon(252), rowToLat(250)];
    const result = checkJsonAnswer(await post(served, "/api/v1/data/query", body), body, A);
    assert.equal(result.data, expectRowsA({ col: 250, row: 251, width: 2, height: 3 }, ["2004-02-05"]));
    // a box on exact cell edges holds exactly the cells it outlines
    const edges = requestFor({ col: 250, row: 251, width: 2, height: 3 }, "2004-02-05", "2004-02-05");
    const onEdges = checkJsonAnswer(await post(served, "/api/v1/data/query", edges), edges, A);
    assert.equal(onEdges.data, result.data);
  });
});

query("query - the reasons a query cannot answer", async () => {
  await withServer(fixture.dist, async (served) => {
    const between = requestFor({ col: 250, row: 250, width: 1, height: 1 }, "2004-02-01", "2004-02-01");
    const [w, , , n] = between.region.bbox as number[];
    between.region.bbox = [w + 0.001, n - 0.02, w + 0.02, n - 0.001];
    assertError(await post(served, "/api/v1/data/query", between), 422, "no_cell_centers");
    assertError(await post(served, "/api/v1/data/query", requestFor({ col: 250, row: 250, width: 2, height: 2 }, "2005-01-01", "2005-01-01")), 422, "coverage_unavailable");
    assertError(
      await post(served, "/api/v1/data/query", requestFor({ col: 250, row: 250, width: 2, height: 2 }, "2004-02-01", "2004-02-01", { dataset_version: fixture.paid.id })),
      422,
      "coverage_unavailable",
    );
    const late = assertError(await post(served, "/api/v1/data/query", requestFor({ col: 250, row: 250, width: 2, height: 2 }, "2004-03-04", "2004-03-06")), 422, "coverage_unavailable");
    assert.match(late.message, /inside one of these \(or pin it with dataset_version\): .*silo-tmax-20040201-20040304-[0-9a-f]{16} \(2004-02-01\.\.2004-03-04/);
    const tooLarge = assertError(await post(served, "/api/v1/data/query", requestFor({ col: 200, row: 200, width: 121, height: 91 }, "2004-02-01", "2004-02-01")), 413, "request_too_large");
    assert.ok(Array.isArray(tooLarge.plan) && tooLarge.plan.length >= 2, "a 413 carries a plan");
  });
});

query("query - 31 days answer, 32 days are refused", async () => {
  await withServer(fixture.dist, async (served) => {
    const cells = { col: 300, row: 300, width: 1, height: 1 };
    const body = requestFor(cells, "2004-02-01", "2004-03-02");
    const result = checkJsonAnswer(await post(served, "/api/v1/data/query", body), body, A);
    assert.is(result.data.length, 31);
    assert.equal(result.data, expectRowsA(cells, DATES_A.slice(0, 31)));
    assertError(await post(served, "/api/v1/data/query", requestFor(cells, "2004-02-01", "2004-03-03")), 422, "invalid_request");
  });
});

query("query - 10,000 rows answer as CSV; as JSON they pass 1,000,000 bytes and are 413 response_too_large", async () => {
  await withServer(fixture.dist, async (served) => {
    const cells = { col: 205, row: 205, width: 100, height: 100 };
    const csv = await post(served, "/api/v1/data/query", requestFor(cells, "2004-02-03", "2004-02-03", { format: "csv" }));
    assert.is(csv.status, 200, csv.text.slice(0, 300));
    assert.ok(csv.bytes.length <= 1_000_000, `${csv.bytes.length} bytes`);
    assert.is(csv.text, expectCsv(expectRowsA(cells, ["2004-02-03"])));
    const json = await post(served, "/api/v1/data/query", requestFor(cells, "2004-02-03", "2004-02-03"));
    const error = assertError(json, 413, "response_too_large");
    assert.match(error.message, /narrow the box or shorten the period/);
    assert.ok(Array.isArray(error.plan) && error.plan.length >= 2, "a 413 carries a plan");
  });
});

query("query - the 1,000,000-byte bound is inclusive", () => {
  assertResponseSize(1_000_000, "narrow");
  assert.throws(() => assertResponseSize(1_000_001, "narrow"), (err: any) => err.kind === "response_too_large" && err.status === 413);
});

query("query - CSV bytes exactly: header, quoted fields, empty null, CRLF after every line", async () => {
  await withServer(fixture.dist, async (served) => {
    // rows 309..310 x cols 308..311: the ocean corner starts at (310, 310)
    const cells = { col: 308, row: 309, width: 4, height: 2 };
    const body = requestFor(cells, "2004-02-29", "2004-02-29", { format: "csv", dataset_version: A });
    const answer = await post(served, "/api/v1/data/query", body);
    assert.is(answer.status, 200, answer.text);
    assert.match(String(answer.headers["content-type"]), /^text\/csv/);
    const expected = expectCsv(expectRowsA(cells, ["2004-02-29"]));
    assert.is(answer.text, expected);
    assert.ok(answer.text.includes(`,"air_temperature_max",,"degC",`), "a null value is an empty unquoted field");
    assert.is(
      answer.text.split("\r\n")[1],
      `"2004-02-29","127.4","-25.45","air_temperature_max","${valueA(308, 309, 28)}","degC","20040229-r1-c1","53","52"`,
    );
    assert.is(answer.headers["content-digest"], `sha-256=:${sha256Base64(answer.bytes)}:`);
    const requestSha256 = sha256Hex(stableStringify(body));
    assert.is(answer.headers["service-request-sha256"], requestSha256);
    assert.is(answer.headers["service-dataset-version"], A);
    assert.is(answer.headers["link"], `</api/v1/datasets/${A}>; rel="describedby"`);
    assert.is(answer.headers["content-disposition"], undefined);
    // the same request as JSON carries the same rows and a request hash that differs only by format
    const json = checkJsonAnswer(await post(served, "/api/v1/data/query", { ...body, format: "json" }), { ...body, format: "json" }, A);
    assert.equal(json.data, expectRowsA(cells, ["2004-02-29"]));
    assert.ok(json.data.some((r: any) => r.value === null));
  });
});

query("query - values equal the published tile cells and the sample route", async () => {
  await withServer(fixture.dist, async (served) => {
    const body = requestFor({ col: 255, row: 256, width: 2, height: 1 }, "2004-03-01", "2004-03-01");
    const result = checkJsonAnswer(await post(served, "/api/v1/data/query", body), body, A);
    for (const row of result.data) {
      const tile = (await request(served, `/api/v1/layers/${A}?tile=${row.tile}`)).json().tile;
      assert.is(tile.cells[row.row * tile.width + row.col], row.value);
      const sample = (await request(served, `/api/v1/layers/${A}/sample?tile=${row.tile}&row=${row.row}&col=${row.col}`)).json();
      assert.is(sample.value, row.value);
    }
  });
});

query("query - a pinned version answers from that version; the newest covering version otherwise", async () => {
  await withServer(fixture.dist, async (served) => {
    const cells = { col: 302, row: 202, width: 2, height: 2 };
    const body = requestFor(cells, "2004-02-29", "2004-02-29");
    const chosen = checkJsonAnswer(await post(served, "/api/v1/data/query", body), body, fixture.b.id);
    assert.equal(chosen.data.map((r: any) => r.value), [VALUE_B, VALUE_B, VALUE_B, VALUE_B]);
    // B's window starts at (300, 200): tile-local indexes count from there
    assert.equal(chosen.data.map((r: any) => [r.tile, r.row, r.col]), [
      ["20040229-r0-c1", 2, 2],
      ["20040229-r0-c1", 2, 3],
      ["20040229-r0-c1", 3, 2],
      ["20040229-r0-c1", 3, 3],
    ]);
    const pinnedBody = { ...body, dataset_version: A };
    const pinned = checkJsonAnswer(await post(served, "/api/v1/data/query", pinnedBody), pinnedBody, A);
    assert.equal(pinned.data, expectRowsA(cells, ["2004-02-29"]));
    assert.ok(DATES_B.includes("2004-02-29"));
  });
});

query.run();

const manifest = suite("manifest");
manifest.before(useFixture);

manifest("manifest - its JSON made from each source entry's text kept is JSON.stringify of the manifest itself, kept or not", () => {
  const sha = (c: string) => c.repeat(64);
  const sources = [
    { sha256: sha("a"), member_path: "2004/20040201.max_temp.tif" },
    { sha256: sha("b"), url: "https://example.org/a$&b$'c?x=\"1\"", doi: "10.1/ü", license: "CC-BY-4.0" },
    { sha256: sha("c") },
  ];
  for (const list of [sources, [sources[1], sources[0], sources[1]], [], sources]) {
    assert.is(manifestJson(fixture.a, sha("d"), 31, list), JSON.stringify(buildManifest(fixture.a, sha("d"), 31, list)));
  }
});

manifest.run();
