// Server GET routes: health, capabilities, catalog, inspect, observations and layers pages, tiles, samples, OpenAPI.

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { encodeOffsetCursor } from "../../api/cursors.js";
import { nodePlatform } from "../../format/local.js";
import { colToEdgeLon, rowToEdgeLat } from "../../format/grid.js";
import {
  DATES_A,
  assertError,
  assertSchema,
  request,
  valueA,
  withServer,
  type Served,
  useFixture,
  fixture,
  A,
} from "../support/server-fixture.js";


async function getJson(served: Served, path: string, schema: string, headers: Record<string, string> = {}): Promise<any> {
  const answer = await request(served, path, { headers });
  assert.is(answer.status, 200, `${path}: ${answer.text.slice(0, 300)}`);
  assert.match(String(answer.headers["content-type"]), /^application\/json/);
  assert.is(answer.headers["access-control-allow-origin"], "*");
  const body = answer.json();
  assertSchema(schema, body);
  return body;
}

/** Follows nextCursor from the first page to the end; returns every item in order. */
async function collectPages(served: Served, base: string, kind: "tiles" | "observations", limit: number): Promise<{ items: any[]; pages: number }> {
  const items: any[] = [];
  let after: string | null = null;
  let pages = 0;
  do {
    const path: string = `${base}?limit=${limit}${after === null ? "" : `&after=${encodeURIComponent(after)}`}`;
    const page = await getJson(served, path, kind === "tiles" ? "layers-page.schema.json" : "observations-page.schema.json");
    assert.ok(page[kind].length <= limit);
    if (page.nextCursor !== null) assert.is(page[kind].length, limit, "only the last page is short");
    items.push(...page[kind]);
    after = page.nextCursor;
    pages++;
  } while (after !== null);
  return { items, pages };
}

async function observationCount(): Promise<number> {
  return fixture.noaa.metadata.observations as number;
}

const encodeCursor = (id: string, kind: "layers" | "observations", offset: number) => encodeOffsetCursor(nodePlatform, id, kind, offset);

// ---------------------------------------------------------------------------------------------------------------

const meta = suite("health, capabilities, catalog, inspect");
meta.before(useFixture);

meta("health - process status with the configured environment", async () => {
  await withServer(
    fixture.dist,
    async (served) => {
      const body = await getJson(served, "/api/health", "health.schema.json");
      assert.equal(body, {
        service: "service-api",
        status: "ok",
        scope: "process",
        environment: "staging-test",
        paymentMode: "test",
        capabilities: { requestValidation: true, acquisition: false, payments: false },
      });
    },
    { environment: "staging-test" },
  );
  await withServer(fixture.dist, async (served) => {
    assert.is((await getJson(served, "/api/health", "health.schema.json")).environment, "demo");
  });
});

meta("capabilities - limits, features and absolute links from the request's Host", async () => {
  await withServer(fixture.dist, async (served) => {
    const answer = await request(served, "/api/v1/capabilities", { headers: { Host: "data.example.org:9443" } });
    assert.is(answer.status, 200);
    assert.is(answer.headers["cache-control"], "public, max-age=60");
    const body = answer.json();
    assertSchema("capabilities.schema.json", body);
    assert.is(body.apiVersion, "1.0.0");
    assert.equal(body.query.limits, {
      maxDays: 31,
      maxCells: 10000,
      maxRequestBytes: 16384,
      maxResponseBytes: 1000000,
      defaultPageLimit: 100,
      maxPageLimit: 1000,
      maxCursorLength: 256,
      maxTileSide: 256,
      maxTileCells: 65536,
    });
    assert.is(body.features.acquisition, false);
    assert.is(body.features.payments, false);
    assert.is(body.features.query, true);
    assert.is(body.features.series, true);
    assert.is(body.links.series, "http://data.example.org:9443/api/v1/series");
    assert.equal(body.query.formats, ["json", "csv"]);
    assert.equal(body.query.units, { air_temperature_max: ["degC"] });
    assert.is(body.links.self, "http://data.example.org:9443/api/v1/capabilities");
    assert.is(body.links.openapi, "http://data.example.org:9443/api/v1/openapi.json");
    for (const name of ["datasets", "validate", "resolve", "query"]) assert.match(body.links[name], /^http:\/\/data\.example\.org:9443\/api\/v1\//);
    // a Host header that is not a host name is not echoed into links
    const odd = (await request(served, "/api/v1/capabilities", { headers: { Host: "evil.example/<script>" } })).json();
    assert.is(odd.links.self, `http://127.0.0.1:${served.port}/api/v1/capabilities`);
  });
});

meta("catalog - published records with status and published_at; restricted never listed", async () => {
  await withServer(fixture.dist, async (served) => {
    const answer = await request(served, "/api/v1/datasets?unknown=1");
    assert.is(answer.status, 200, "the catalog ignores unknown query parameters");
    assert.is(answer.headers["cache-control"], "public, max-age=60");
    const body = answer.json();
    assertSchema("catalog-response.schema.json", body);
    const ids = body.datasets.map((d: any) => d.id).sort();
    assert.equal(ids, [fixture.a.id, fixture.b.id, fixture.c.id, fixture.paid.id, fixture.noaa.id].sort());
    assert.not.ok(answer.text.includes(fixture.restricted.id));
    for (const d of body.datasets) {
      assert.is(d.status, "published");
      assert.type(d.published_at, "string");
    }
    assert.is(body.datasets.find((d: any) => d.id === fixture.paid.id).access_level, "paid");
    assert.is(body.nextCursor, null);
  });
});

meta("catalog - pages in id order return every visible version once; bad limits and cursors are 400", async () => {
  await withServer(fixture.dist, async (served) => {
    const all = (await getJson(served, "/api/v1/datasets", "catalog-response.schema.json")).datasets.map((d: any) => d.id);
    assert.equal(all, [...all].sort(), "stable id order");
    for (const limit of [1, 2, 4, 5, 1000]) {
      const ids: string[] = [];
      let after: string | null = null;
      let pages = 0;
      do {
        const page: any = await getJson(served, `/api/v1/datasets?limit=${limit}${after ? `&after=${encodeURIComponent(after)}` : ""}`, "catalog-response.schema.json");
        assert.ok(page.datasets.length <= limit);
        ids.push(...page.datasets.map((d: any) => d.id));
        after = page.nextCursor;
        pages++;
      } while (after !== null);
      assert.equal(ids, all, `limit ${limit}`);
      assert.is(pages, Math.ceil(all.length / limit), `limit ${limit}: no empty last page`);
    }
    for (const bad of ["limit=0", "limit=1001", "limit=abc", "limit=1&limit=2", `after=${"a".repeat(257)}`, "after=nonsense", `after=${all[0]}.000000000000`]) {
      assertError(await request(served, `/api/v1/datasets?${bad}`), 400, "invalid_parameters");
    }
  });
});

meta("inspect - the immutable record; paid inspectable; restricted and unknown 404; bad ids 400", async () => {
  await withServer(fixture.dist, async (served) => {
    const answer = await request(served, `/api/v1/datasets/${A}`);
    assert.is(answer.status, 200);
    assert.is(answer.headers["cache-control"], "public, max-age=31536000, immutable");
    assert.match(String(answer.headers.etag), /^"[0-9a-f]{32}"$/);
    const body = answer.json();
    assertSchema("dataset-response.schema.json", body);
    const { status: _status, published_at: _publishedAt, ...immutable } = fixture.a;
    assert.is(answer.text, JSON.stringify({ dataset: immutable }), "the record as JSON.stringify writes it");
    assert.equal(body.dataset, immutable);
    assert.equal(body.dataset.variables, { air_temperature_max: "degC" });

    const paid = await getJson(served, `/api/v1/datasets/${fixture.paid.id}`, "dataset-response.schema.json");
    assert.is(paid.dataset.access_level, "paid");
    assertError(await request(served, `/api/v1/datasets/${fixture.restricted.id}`), 404, "not_found");
    assertError(await request(served, "/api/v1/datasets/silo-tmax-19990101-19990102-0000000000000000"), 404, "not_found");
    const bad = assertError(await request(served, "/api/v1/datasets/bad%20id!"), 400, "invalid_parameters");
    assert.equal(bad.issues[0].path, ["id"]);
    assertError(await request(served, `/api/v1/datasets/${"x".repeat(129)}`), 400, "invalid_parameters");
    assert.is((await request(served, `/api/v1/datasets/${"x".repeat(128)}`)).status, 404);
  });
});

meta.run();

// ---------------------------------------------------------------------------------------------------------------

const pages = suite("observations and layers pages");
pages.before(useFixture);

pages("observations - every item exactly once in stable order, at several limits", async () => {
  await withServer(fixture.dist, async (served) => {
    const count = await observationCount();
    assert.ok(count > 1000);
    const base = `/api/v1/datasets/${fixture.noaa.id}/observations`;
    const byHundred = await collectPages(served, base, "observations", 100);
    assert.is(byHundred.items.length, count);
    assert.is(byHundred.pages, Math.ceil(count / 100));
    const ids = byHundred.items.map((o) => o.id);
    assert.is(new Set(ids).size, count, "no item twice");
    for (const limit of [1000, 333]) {
      const other = await collectPages(served, base, "observations", limit);
      assert.equal(other.items.map((o) => o.id), ids, `limit ${limit}`);
      assert.equal(other.items, byHundred.items);
    }
    for (const o of byHundred.items) assert.is(o.dataset_version_id, fixture.noaa.id);
  });
});

pages("observations - a default page (a stored chunk, sent as it is) equals the same page cut from other pages", async () => {
  await withServer(fixture.dist, async (served) => {
    const base = `/api/v1/datasets/${fixture.noaa.id}/observations`;
    const answer = await request(served, base);
    assert.is(answer.status, 200);
    assert.is(answer.headers["cache-control"], "public, max-age=31536000, immutable");
    const big = (await request(served, `${base}?limit=333`)).json();
    const second = answer.json().nextCursor;
    assert.is(answer.text, JSON.stringify({ datasetVersion: fixture.noaa.id, observations: big.observations.slice(0, 100), nextCursor: second }));
    const next = await request(served, `${base}?after=${second}&limit=100`);
    const third = next.json().nextCursor;
    assert.is(next.text, JSON.stringify({ datasetVersion: fixture.noaa.id, observations: big.observations.slice(100, 200), nextCursor: third }));
  });
});

pages("observations - a raster version has none; mixed limits continue from any cursor", async () => {
  await withServer(fixture.dist, async (served) => {
    for (const query of ["", "?limit=5", "?limit=1000"]) {
      const body = await getJson(served, `/api/v1/datasets/${A}/observations${query}`, "observations-page.schema.json");
      assert.equal(body, { datasetVersion: A, observations: [], nextCursor: null });
    }
    const base = `/api/v1/datasets/${fixture.noaa.id}/observations`;
    const first = await getJson(served, `${base}?limit=150`, "observations-page.schema.json");
    const second = await getJson(served, `${base}?limit=7&after=${first.nextCursor}`, "observations-page.schema.json");
    const reference = await getJson(served, `${base}?limit=157`, "observations-page.schema.json");
    assert.equal([...first.observations, ...second.observations], reference.observations);
    assert.is(second.nextCursor, reference.nextCursor);
  });
});

pages("layers - every tile exactly once at limits 1, 7, 100 and 1000", async () => {
  await withServer(fixture.dist, async (served) => {
    const base = `/api/v1/layers/${A}`;
    const all = await collectPages(served, base, "tiles", 100);
    assert.is(all.items.length, DATES_A.length * 4);
    const ids = all.items.map((t) => t.id);
    assert.equal(ids, [...ids].sort(), "stable id order");
    assert.is(new Set(ids).size, ids.length);
    assert.equal(ids.slice(0, 4), ["20040201-r0-c0", "20040201-r0-c1", "20040201-r1-c0", "20040201-r1-c1"]);
    for (const limit of [1, 7, 1000]) {
      const other = await collectPages(served, base, "tiles", limit);
      assert.equal(other.items, all.items, `limit ${limit}`);
      assert.is(other.pages, Math.ceil(ids.length / limit));
    }
    const first = await getJson(served, base, "layers-page.schema.json");
    assert.is(first.dataset.id, A);
    const small = await getJson(served, `${base}?limit=3`, "layers-page.schema.json");
    assert.equal(small.dataset, first.dataset);
    const tile = all.items.find((t) => t.id === "20040201-r0-c1");
    assert.equal(tile, {
      id: "20040201-r0-c1",
      variable: "air_temperature_max",
      unit: "degC",
      observed_on: "2004-02-01",
      width: 65,
      height: 56,
      crs: "EPSG:4326",
      transform: [0.05, 0, colToEdgeLon(256), 0, -0.05, rowToEdgeLat(200)],
      bbox: [colToEdgeLon(256), rowToEdgeLat(256), colToEdgeLon(321), rowToEdgeLat(200)],
    });
  });
});

pages("layers - an observation version has no tiles", async () => {
  await withServer(fixture.dist, async (served) => {
    const body = await getJson(served, `/api/v1/layers/${fixture.noaa.id}`, "layers-page.schema.json");
    assert.equal(body.tiles, []);
    assert.is(body.nextCursor, null);
    assert.is(body.dataset.id, fixture.noaa.id);
    assert.equal((await getJson(served, `/api/v1/layers/${fixture.noaa.id}?limit=3`, "layers-page.schema.json")).tiles, []);
    assertError(await request(served, `/api/v1/layers/${fixture.noaa.id}?tile=20040201-r0-c0`), 404, "not_found");
  });
});

pages("pages - limit and cursor bounds", async () => {
  await withServer(fixture.dist, async (served) => {
    const base = `/api/v1/datasets/${fixture.noaa.id}/observations`;
    assert.is((await getJson(served, `${base}?limit=1`, "observations-page.schema.json")).observations.length, 1);
    assert.is((await getJson(served, `${base}?limit=1000`, "observations-page.schema.json")).observations.length, 1000);
    for (const limit of ["0", "1001", "-1", "1.5", "abc", "", "99999999999"]) {
      const error = assertError(await request(served, `${base}?limit=${limit}`), 400, "invalid_parameters");
      assert.equal(error.issues[0].path, ["limit"]);
    }
    assertError(await request(served, `${base}?limit=5&limit=6`), 400, "invalid_parameters");

    const cursor256 = "1".repeat(243) + "-" + "0".repeat(12);
    assert.is(cursor256.length, 256);
    const notIssued = assertError(await request(served, `${base}?after=${cursor256}`), 400, "invalid_parameters");
    assert.is(notIssued.issues[0].code, "invalid_cursor");
    const tooLong = assertError(await request(served, `${base}?after=${"a".repeat(257)}`), 400, "invalid_parameters");
    assert.is(tooLong.issues[0].code, "length");
    const count = await observationCount();
    const forged = [
      await encodeCursor(A, "observations", 100), // another version's cursor
      await encodeCursor(fixture.noaa.id, "layers", 100), // another list's cursor
      await encodeCursor(fixture.noaa.id, "observations", count), // one past the end
      await encodeCursor(fixture.noaa.id, "observations", count + 100),
      "100-000000000000",
      "0-" + "0".repeat(12),
    ];
    for (const after of forged) assertError(await request(served, `${base}?after=${after}`), 400, "invalid_parameters");
    // the last item's cursor is still inside the list
    const last = await getJson(served, `${base}?after=${await encodeCursor(fixture.noaa.id, "observations", count - 1)}`, "observations-page.schema.json");
    assert.is(last.observations.length, 1);
    assert.is(last.nextCursor, null);
    assertError(await request(served, `/api/v1/layers/${A}?tile=${"x".repeat(129)}`), 400, "invalid_parameters");
  });
});

pages("pages - an empty tile= is the same 400 on layers and on sample; a sample without tile is 400 required", async () => {
  await withServer(fixture.dist, async (served) => {
    const issue = { code: "length", path: ["tile"], message: "must be a tile id of 1 to 128 characters: use one GET /api/v1/layers/{id} lists" };
    for (const path of [`/api/v1/layers/${A}?tile=`, `/api/v1/layers/${A}/sample?tile=&row=0&col=0`, `/api/v1/layers/${A}?tile=${"x".repeat(129)}`]) {
      const error = assertError(await request(served, path), 400, "invalid_parameters");
      assert.equal(error, { error: "invalid_parameters", message: "Query parameter tile must be a tile id of 1 to 128 characters: use one GET /api/v1/layers/{id} lists.", issues: [issue] }, path);
    }
    const missing = assertError(await request(served, `/api/v1/layers/${A}/sample?row=0&col=0`), 400, "invalid_parameters");
    assert.equal(missing.issues, [{ code: "required", path: ["tile"], message: "is required: a tile id from GET /api/v1/layers/{id}" }]);
  });
});

pages("pages - paid, restricted and unknown versions give no data", async () => {
  await withServer(fixture.dist, async (served) => {
    for (const id of [fixture.paid.id, fixture.restricted.id, "silo-tmax-19990101-19990102-0000000000000000"]) {
      assertError(await request(served, `/api/v1/datasets/${id}/observations`), 404, "not_found");
      assertError(await request(served, `/api/v1/layers/${id}`), 404, "not_found");
      assertError(await request(served, `/api/v1/layers/${id}?tile=20040201-r0-c0`), 404, "not_found");
      assertError(await request(served, `/api/v1/layers/${id}/sample?tile=20040201-r0-c0&row=0&col=0`), 404, "not_found");
    }
    assertError(await request(served, "/api/v1/datasets/bad!/observations"), 400, "invalid_parameters");
    assertError(await request(served, "/api/v1/layers/bad!"), 400, "invalid_parameters");
  });
});

pages.run();

// ---------------------------------------------------------------------------------------------------------------

const cells = suite("tiles and samples");
cells.before(useFixture);

cells("tile - the published tile with its cells, nulls kept", async () => {
  await withServer(fixture.dist, async (served) => {
    const answer = await request(served, `/api/v1/layers/${A}?tile=20040229-r0-c0`);
    assert.is(answer.status, 200);
    assert.is(answer.headers["cache-control"], "public, max-age=31536000, immutable");
    const body = answer.json();
    assert.is(answer.text, JSON.stringify(body), "the tile as JSON.stringify writes it");
    assertSchema("tile-response.schema.json", body);
    const tile = body.tile;
    assert.is(body.datasetVersion, A);
    assert.equal(tile.source_window, [200, 200, 56, 56]);
    assert.is(tile.cells.length, 56 * 56);
    const day = DATES_A.indexOf("2004-02-29");
    for (let r = 0; r < tile.height; r++) {
      for (let c = 0; c < tile.width; c++) assert.is(tile.cells[r * tile.width + c], valueA(200 + c, 200 + r, day));
    }
    assert.is(tile.cells[55 * 56 + 55], null, "the ocean cell at (255, 255)");
    for (const unknown of ["20040229-r2-c0", "20040229-r0-c2", "20050101-r0-c0", "2004-02-29", "nonsense", "20040229-r0-c0.json"]) {
      assertError(await request(served, `/api/v1/layers/${A}?tile=${encodeURIComponent(unknown)}`), 404, "not_found");
    }
    // B's window lies in lattice column 1 only: there is no r0-c0 tile on its dates
    assertError(await request(served, `/api/v1/layers/${fixture.b.id}?tile=20040229-r0-c0`), 404, "not_found");
    assert.is((await request(served, `/api/v1/layers/${fixture.b.id}?tile=20040229-r0-c1`)).status, 200);
  });
});

cells("sample - one cell by tile-local row and col; ocean null", async () => {
  await withServer(fixture.dist, async (served) => {
    const day = DATES_A.indexOf("2004-03-01");
    const answer = await request(served, `/api/v1/layers/${A}/sample?tile=20040301-r1-c1&row=3&col=4`);
    assert.is(answer.status, 200);
    assert.is(answer.headers["cache-control"], "public, max-age=31536000, immutable");
    assert.match(String(answer.headers.etag), /^"[0-9a-f]{32}"$/);
    const body = answer.json();
    assertSchema("pixel-sample.schema.json", body);
    assert.equal(body, {
      datasetVersion: A,
      tile: "20040301-r1-c1",
      row: 3,
      col: 4,
      value: valueA(260, 259, day),
      unit: "degC",
      variable: "air_temperature_max",
      date: "2004-03-01",
      crs: "EPSG:4326",
      transform: [0.05, 0, colToEdgeLon(256), 0, -0.05, rowToEdgeLat(256)],
    });
    const ocean = await getJson(served, `/api/v1/layers/${A}/sample?tile=20040301-r1-c1&row=60&col=60`, "pixel-sample.schema.json");
    assert.is(ocean.value, null);
    assert.is(ocean.unit, "degC");
    const edge = await getJson(served, `/api/v1/layers/${A}/sample?tile=20040301-r0-c1&row=55&col=64`, "pixel-sample.schema.json");
    assert.is(edge.value, valueA(320, 255, day));
  });
});

cells("sample - 404 outside the tile or for unknown tiles, 400 for bad row/col", async () => {
  await withServer(fixture.dist, async (served) => {
    const base = `/api/v1/layers/${A}/sample`;
    // r0-c1 is 65 columns x 56 rows
    for (const q of ["tile=20040301-r0-c1&row=56&col=0", "tile=20040301-r0-c1&row=0&col=65", "tile=20040301-r0-c1&row=99999999999999999999&col=0", "tile=20040301-r2-c2&row=0&col=0", "tile=nonsense&row=0&col=0"]) {
      assertError(await request(served, `${base}?${q}`), 404, "not_found");
    }
    for (const [q, path] of [
      ["tile=20040301-r0-c1&col=0", "row"],
      ["tile=20040301-r0-c1&row=0", "col"],
      ["tile=20040301-r0-c1&row=-1&col=0", "row"],
      ["tile=20040301-r0-c1&row=1.5&col=0", "row"],
      ["tile=20040301-r0-c1&row=abc&col=0", "row"],
      ["tile=20040301-r0-c1&row=&col=0", "row"],
      ["tile=20040301-r0-c1&row=0&col=1e2", "col"],
      ["row=0&col=0", "tile"],
      [`tile=${"x".repeat(129)}&row=0&col=0`, "tile"],
    ]) {
      const error = assertError(await request(served, `${base}?${q}`), 400, "invalid_parameters");
      assert.equal(error.issues[0].path, [path], q);
    }
    assertError(await request(served, `/api/v1/layers/${fixture.noaa.id}/sample?tile=20040301-r0-c1&row=0&col=0`), 404, "not_found");
  });
});

cells.run();

// ---------------------------------------------------------------------------------------------------------------

const openapi = suite("openapi");
openapi.before(useFixture);

function resolvePointer(document: any, ref: string): unknown {
  assert.ok(ref.startsWith("#/"), `${ref} is a local reference`);
  let node = document;
  for (const raw of ref.slice(2).split("/")) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (node === null || typeof node !== "object" || !(key in node)) return undefined;
    node = node[key];
  }
  return node;
}

function collectRefs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const child of node) collectRefs(child, out);
  else if (node !== null && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if (key === "$ref" && typeof value === "string") out.push(value);
      else collectRefs(value, out);
    }
  }
  return out;
}

openapi("openapi - every route, every $ref resolves, linked from capabilities", async () => {
  await withServer(fixture.dist, async (served) => {
    const capabilities = (await request(served, "/api/v1/capabilities")).json();
    assert.is(capabilities.links.openapi, `http://127.0.0.1:${served.port}/api/v1/openapi.json`);
    const document = (await request(served, "/api/v1/openapi.json")).json();
    assert.is(document.openapi, "3.1.0");
    assert.is(document.info.version, "1.0.0");
    const expected: [string, string][] = [
      ["/api/health", "get"],
      ["/api/v1/capabilities", "get"],
      ["/api/v1/datasets", "get"],
      ["/api/v1/datasets/{id}", "get"],
      ["/api/v1/datasets/{id}/observations", "get"],
      ["/api/v1/layers/{id}", "get"],
      ["/api/v1/layers/{id}/sample", "get"],
      ["/api/v1/data/validate", "post"],
      ["/api/v1/data/resolve", "post"],
      ["/api/v1/data/query", "post"],
      ["/api/v1/data/requests", "post"],
    ];
    for (const [path, method] of expected) {
      const operation = document.paths[path]?.[method];
      assert.ok(operation, `${method} ${path}`);
      assert.ok(operation.responses, `${method} ${path} responses`);
    }
    for (const path of ["/api/v1/data/validate", "/api/v1/data/resolve", "/api/v1/data/query"]) {
      const operation = document.paths[path].post;
      assert.is(operation.requestBody.content["application/json"].schema.$ref, "#/components/schemas/data-request");
      for (const status of ["200", "400", "413", "415", "422", "503"]) assert.ok(operation.responses[status], `${path} ${status}`);
    }
    assert.ok(document.paths["/api/v1/data/query"].post.responses["200"].content["text/csv"]);
    assert.ok(document.paths["/api/v1/data/requests"].post.responses["503"]);
    const refs = collectRefs(document);
    assert.ok(refs.length > 50);
    for (const ref of new Set(refs)) assert.ok(resolvePointer(document, ref) !== undefined, `${ref} resolves`);
    assert.ok(document.components.schemas["data-request"].properties.region);
    assert.not.ok(JSON.stringify(document).includes(".schema.json#"), "no file references left");
  });
});

openapi.run();
