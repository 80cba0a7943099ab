// Hostile paths and headers against the Zarr view (fast-check, fixed seed): unknown versions and keys, chunk
// indices out of range, malformed and huge, dots and percent-encoded traversal, odd Range headers. Every answer is
// one the OpenAPI document holds (request() checks it), never a 500, and only a well-formed key of a held chunk
// or metadata document is a 200.

import fc from "fast-check";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { type Fixture, buildFixture, request, withServer } from "./server-fixture.js";

const SEED = Number(process.env.HOSTILE_SEED ?? 20261125);
const RUNS = 1500;
const STATUSES = new Set([200, 206, 302, 304, 404, 405, 416]);

let fixture: Fixture;

const nasty = fc.constantFrom("", ".", "..", "%2e", "%2e%2e", "%2e%2e%2f", "..%2f..%2f", "%2F", "%00", "%", "%ZZ", "%C0%AF", "__proto__", "constructor", "-1", "1e3", "0x1", "01", "9".repeat(40), "%20", "+", ".zarray.gmac", ".zmetadata/", "0.0.0.0", "0..0", ".0.0", "0.0.");
const index = fc.oneof(fc.nat({ max: 40 }).map(String), fc.constantFrom("-1", "00", "4294967296", "99999999999", "1.5", "NaN"));
const chunkKey = fc.oneof(fc.tuple(index, index, index).map((t) => t.join(".")), index, nasty);

function pathsOf(f: Fixture): fc.Arbitrary<string> {
  const id = fc.oneof(fc.constantFrom(f.a.id, f.b.id, f.noaa.id, f.paid.id, f.restricted.id, "latest"), nasty);
  const group = fc.oneof(fc.constantFrom("maps", "series"), nasty);
  const array = fc.oneof(fc.constantFrom("air_temperature_max", "time", "lat", "lon", "crs", "silo-tmax", "maps"), nasty);
  const key = fc.oneof(fc.constantFrom(".zmetadata", ".zgroup", ".zattrs", ".zarray"), chunkKey);
  // keys of version A that mostly exist: metadata, coordinates, chunks near its window (rows and cols 0..3 of maps)
  const held = fc.oneof(
    fc.constantFrom("maps/.zmetadata", "series/.zattrs", "maps/time/0", "series/lat/0", "maps/crs/0", "maps/air_temperature_max/.zarray"),
    fc.tuple(fc.nat({ max: 40 }), fc.nat({ max: 3 }), fc.nat({ max: 4 })).map(([t, r, c]) => `maps/air_temperature_max/${t}.${r}.${c}`),
    fc.tuple(fc.nat({ max: 1 }), fc.integer({ min: 45, max: 85 }), fc.integer({ min: 45, max: 85 })).map(([t, r, c]) => `series/air_temperature_max/${t}.${r}.${c}`),
  );
  return fc.oneof(
    { arbitrary: held.map((key) => `/zarr/v2/${f.a.id}/${key}`), weight: 3 },
    fc.tuple(id, group, key).map((p) => `/zarr/v2/${p.join("/")}`),
    fc.tuple(id, group, array, key).map((p) => `/zarr/v2/${p.join("/")}`),
    fc.tuple(fc.oneof(fc.constantFrom("silo-tmax", "silo-tmax-b"), nasty), group, array, key).map((p) => `/zarr/v2/latest/${p.join("/")}`),
    fc.array(fc.oneof(nasty, key), { minLength: 1, maxLength: 7 }).map((p) => `/zarr/${p.join("/")}`),
  );
}

const range = fc.oneof(fc.constant(undefined), fc.constantFrom("bytes=0-0", "bytes=-1", "bytes=5-", "bytes=0-1,3-4", "bytes=9-1", "bytes=999999999-", "bytes=-0", "items=0-1", "bytes=abc", `bytes=${"9".repeat(30)}-`));
const method = fc.constantFrom("GET", "GET", "GET", "HEAD", "POST", "DELETE", "OPTIONS");

const hostile = suite("zarr hostile");
hostile.before(async () => {
  fixture = await buildFixture();
});

hostile(`zarr hostile - ${RUNS} generated paths, methods and ranges: documented answers, never a 500`, async () => {
  await withServer(fixture.dist, async (served) => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(pathsOf(fixture), method, range, async (path, verb, asked) => {
        const answer = await request(served, path, { method: verb, headers: asked === undefined ? {} : { Range: asked } });
        seen.set(answer.status, (seen.get(answer.status) ?? 0) + 1);
        assert.ok(STATUSES.has(answer.status) || (verb === "OPTIONS" && answer.status === 204), `${verb} ${path} (Range ${asked}): ${answer.status} ${answer.text.slice(0, 200)}`);
        if (answer.status === 200 && verb === "GET") assert.ok(/\/(\.z(metadata|group|attrs|array)|[0-9.]+)$/.test(path), `${path} answered 200`);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    // the generator reaches every kind of answer, not only 404s
    for (const status of [200, 206, 302, 404, 405]) assert.ok((seen.get(status) ?? 0) > 0, `no ${status} in ${JSON.stringify([...seen])}`);
  });
});

hostile.run();
