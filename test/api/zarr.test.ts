// The Zarr v2 view over HTTP (docs/contract.md §8.3): consolidated metadata, chunks that hold exactly the query route's
// float32 values (NaN for missing), the latest redirect, immutable caching, HEAD and byte ranges, the mirror client.

import { createHash } from "node:crypto";
import { inflateSync } from "node:zlib";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { CHUNK_SHAPES } from "../../api/zarr/view.js";
import { createMirrorClient } from "../../client/index.js";
import { startMirrorServer } from "../../client/mirror-server.js";
import { dateToDayNumber } from "../../format/dates.js";
import { DATES_A, type Served, WINDOW_A, pipelinedUnread, post, request, requestFor, valueA, withServer, useFixture, fixture } from "../support/server-fixture.js";

const base = (id = fixture.a.id) => `/zarr/v2/${id}`;
const SIDE = CHUNK_SHAPES.series.side;
const DAYS = CHUNK_SHAPES.series.days;

/** A chunk answer's values (float32 little-endian): a series chunk is zlib's, a maps chunk is stored as it is (compressor null). */
function decodeChunk(bytes: Buffer, compressed = true): Float32Array {
  const raw = compressed ? inflateSync(bytes) : new Uint8Array(bytes).slice();
  return new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
}

/** Version A's float32 at a global cell on day index `day` (NaN: ocean, outside the window or the dates). */
function expectedA(col: number, row: number, day: number): number {
  const [c0, r0, w, h] = WINDOW_A;
  if (day < 0 || day >= DATES_A.length || col < c0 || row < r0 || col >= c0 + w || row >= r0 + h || col > 840 || row > 680) return NaN;
  const v = valueA(col, row, day);
  return v === null ? NaN : Math.fround(v);
}

/** Values compared as float32 bit patterns (every NaN alike): the first difference, or null. */
function firstDifference(got: Float32Array, want: (i: number) => number): string | null {
  for (let i = 0; i < got.length; i++) {
    const w = want(i);
    if (!(Object.is(got[i], w) || (Number.isNaN(got[i]) && Number.isNaN(w)))) return `value ${i}: ${got[i]} != ${w}`;
  }
  return null;
}

/** A maps chunk's bytes against version A's values of day t, tile (r, c): the first difference, or null. */
function mapsChunkDifference(bytes: Buffer, [t, r, c]: number[]): string | null {
  return firstDifference(decodeChunk(bytes, false), (i) => expectedA(c * 256 + (i % 256), r * 256 + Math.floor(i / 256), t));
}

const zarr = suite("zarr view");
zarr.before(useFixture);

zarr("zarr - .zmetadata consolidates every array's metadata over the whole grid and the version's dates", async () => {
  await withServer(fixture.dist, async (served) => {
    const answer = await request(served, `${base()}/maps/.zmetadata`);
    assert.is(answer.status, 200);
    const { metadata, zarr_consolidated_format } = answer.json();
    assert.is(zarr_consolidated_format, 1);
    assert.equal(metadata[".zgroup"], { zarr_format: 2 });
    const compressor = { id: "zlib", level: 1 };
    // a maps chunk is sent as it is (256 kB of float32): deflating it cost most of its server time (issue 35)
    assert.equal(metadata["air_temperature_max/.zarray"], { chunks: [1, 256, 256], compressor: null, dtype: "<f4", fill_value: "NaN", filters: null, order: "C", shape: [33, 681, 841], zarr_format: 2 });
    assert.equal(metadata["time/.zarray"], { chunks: [33], compressor, dtype: "<i4", fill_value: null, filters: null, order: "C", shape: [33], zarr_format: 2 });
    assert.equal(metadata["lat/.zarray"].shape, [681]);
    assert.equal(metadata["lon/.zarray"].shape, [841]);
    assert.equal(metadata["crs/.zarray"], { chunks: [], compressor: null, dtype: "<i4", fill_value: null, filters: null, order: "C", shape: [], zarr_format: 2 });
    const attrs = metadata["air_temperature_max/.zattrs"];
    assert.equal(attrs._ARRAY_DIMENSIONS, ["time", "lat", "lon"]);
    assert.equal([attrs.standard_name, attrs.units, attrs.cell_methods, attrs.grid_mapping], ["air_temperature", "degC", "time: maximum", "crs"]);
    assert.is(attrs._CRS.url, "http://www.opengis.net/def/crs/EPSG/0/4326");
    assert.equal(metadata["time/.zattrs"].units, "days since 1970-01-01");
    assert.is(metadata[".zattrs"].dataset_version, fixture.a.id);
    const series = (await request(served, `${base()}/series/.zmetadata`)).json().metadata;
    assert.equal(series["air_temperature_max/.zarray"].chunks, [DAYS, SIDE, SIDE]);
    assert.equal(series["air_temperature_max/.zarray"].compressor, compressor);
    // each key answers what .zmetadata holds for it
    for (const key of [".zattrs", ".zgroup", "air_temperature_max/.zarray", "air_temperature_max/.zattrs", "time/.zattrs", "crs/.zattrs"]) {
      assert.equal((await request(served, `${base()}/maps/${key}`)).json(), metadata[key], key);
    }
  });
});

zarr("zarr - coordinates: time as days since 1970-01-01 over first..last, lat and lon the cell centres, crs 0", async () => {
  await withServer(fixture.dist, async (served) => {
    const time = inflateSync((await request(served, `${base()}/maps/time/0`)).bytes);
    assert.equal([...new Int32Array(time.buffer, time.byteOffset, 33)], DATES_A.map(dateToDayNumber));
    const lat = inflateSync((await request(served, `${base()}/series/lat/0`)).bytes);
    const lats = new Float64Array(lat.buffer, lat.byteOffset, 681);
    assert.equal([lats[0], lats[1], lats[300], lats[680]], [-10, -10.05, -25, -44]);
    const lon = inflateSync((await request(served, `${base()}/maps/lon/0`)).bytes);
    const lons = new Float64Array(lon.buffer, lon.byteOffset, 841);
    assert.equal([lons[0], lons[607], lons[840]], [112, 142.35, 154]);
    assert.equal([...(await request(served, `${base()}/maps/crs/0`)).bytes], [0, 0, 0, 0]);
  });
});

/** Version A's cells of a window on one date, from the query route, as float32 (null: NaN). */
async function queryValues(served: Served, cells: { col: number; row: number; width: number; height: number }, date: string): Promise<number[]> {
  const answer = await post(served, "/api/v1/data/query", requestFor(cells, date, date, { dataset_version: fixture.a.id }));
  assert.is(answer.status, 200, answer.text);
  return answer.json().data.map((r: { value: number | null }) => (r.value === null ? NaN : Math.fround(r.value)));
}

zarr("zarr - a maps chunk is one day of one tile, exactly the query route's float32, NaN where nothing is held", async () => {
  await withServer(fixture.dist, async (served) => {
    for (const [t, r, c] of [[0, 0, 0], [5, 1, 0], [32, 1, 1], [20, 0, 1]]) {
      const answer = await request(served, `${base()}/maps/air_temperature_max/${t}.${r}.${c}`);
      assert.is(answer.status, 200);
      assert.is(answer.headers["content-type"], "application/octet-stream");
      assert.is(answer.bytes.length, 256 * 256 * 4, "a maps chunk is its float32 bytes, uncompressed");
      const got = decodeChunk(answer.bytes, false);
      assert.is(got.length, 256 * 256);
      assert.is(mapsChunkDifference(answer.bytes, [t, r, c]), null, `${t}.${r}.${c}`);
    }
    // the window's part of tile r1-c0 on day 5 (rows 256..320, cols 200..255) against the query route
    const chunk = decodeChunk((await request(served, `${base()}/maps/air_temperature_max/5.1.0`)).bytes, false);
    const query = await queryValues(served, { col: 200, row: 256, width: 56, height: 65 }, DATES_A[5]);
    const fromChunk = query.map((_, i) => chunk[(Math.floor(i / 56)) * 256 + 200 + (i % 56)]);
    assert.equal(fromChunk.map(String), query.map(String));
  });
});

zarr("zarr - maps chunks sent 12 at once, their buffers reused: each its own day and tile, its digest its bytes; a kept one unchanged", async () => {
  await withServer(fixture.dist, async (served) => {
    const chunkPath = ([t, r, c]: number[]) => `${base()}/maps/air_temperature_max/${t}.${r}.${c}`;
    const check = (answer: Awaited<ReturnType<typeof request>>, [t, r, c]: number[]) => {
      assert.is(answer.status, 200);
      assert.is(answer.headers["content-digest"], `sha-256=:${createHash("sha256").update(answer.bytes).digest("base64")}:`, `${t}.${r}.${c}`);
      assert.is(mapsChunkDifference(answer.bytes, [t, r, c]), null, `${t}.${r}.${c}`);
    };
    // asked twice, the answer cache keeps it: its buffer must never be given back for another chunk
    const kept = [3, 1, 1];
    await request(served, chunkPath(kept));
    check(await request(served, chunkPath(kept)), kept);
    const keys = DATES_A.flatMap((_, t) => [[t, 0, 0], [t, 0, 1], [t, 1, 0], [t, 1, 1]]);
    for (let i = 0; i < keys.length; i += 12) {
      const batch = keys.slice(i, i + 12);
      const answers = await Promise.all(batch.map((key) => request(served, chunkPath(key))));
      answers.forEach((answer, j) => check(answer, batch[j]));
    }
    check(await request(served, chunkPath(kept)), kept);
    // 32 chunks (8 MB) asked at once on one connection that is not read: more than the kernel's socket buffers take
    // (at most 4 MB here), so answers wait in the server's queue while 24 other chunks are answered; each must then
    // arrive as it was computed (with eight, all fitted in the kernel, and giving buffers back at once went unseen)
    const waiting = DATES_A.slice(0, 32).map((_, t) => [t, 0, 1]);
    const responses = await pipelinedUnread(served, waiting.map(chunkPath), () => Promise.all(keys.slice(40, 64).map((key) => request(served, chunkPath(key)))));
    responses.forEach(({ head, body }, i) => {
      const key = waiting[i];
      assert.match(head, /^HTTP\/1\.1 200 OK\r\n/);
      assert.is(body.length, 256 * 256 * 4);
      assert.is(/\r\nContent-Digest: (.*)/i.exec(head)![1], `sha-256=:${createHash("sha256").update(body).digest("base64")}:`, `queued ${key.join(".")}`);
      assert.is(mapsChunkDifference(body, key), null, `queued ${key.join(".")}`);
    });
  });
});

zarr("zarr - a series chunk is 1,024 days by 4 x 4 cells from the series tier, the query route's values, NaN past the last date", async () => {
  await withServer(fixture.dist, async (served) => {
    for (const [r, c] of [[50, 50], [77, 77], [63, 64], [80, 80]]) {
      const answer = await request(served, `${base()}/series/air_temperature_max/0.${r}.${c}`);
      assert.is(answer.status, 200, `0.${r}.${c}`);
      const got = decodeChunk(answer.bytes);
      assert.is(got.length, DAYS * SIDE * SIDE);
      const want = (i: number) => expectedA(c * SIDE + (i % SIDE), r * SIDE + (Math.floor(i / SIDE) % SIDE), Math.floor(i / (SIDE * SIDE)));
      assert.is(firstDifference(got, want), null, `0.${r}.${c}`);
    }
    // one cell (col 255, row 254) over every date against the query route, date by date
    const chunk = decodeChunk((await request(served, `${base()}/series/air_temperature_max/0.63.63`)).bytes);
    const cell = (254 % SIDE) * SIDE + (255 % SIDE);
    for (const [day, date] of DATES_A.entries()) {
      assert.equal(String(chunk[day * SIDE * SIDE + cell]), String((await queryValues(served, { col: 255, row: 254, width: 1, height: 1 }, date))[0]), date);
    }
  });
});

zarr("zarr - chunks of no held cell, outside the array, malformed keys, unknown versions and keys are 404", async () => {
  await withServer(fixture.dist, async (served) => {
    const missing = [
      `${base()}/maps/air_temperature_max/0.2.3`, // outside the version's window
      `${base()}/maps/air_temperature_max/33.0.0`, // past the last date
      `${base()}/maps/air_temperature_max/0.3.0`, // past the grid
      `${base()}/series/air_temperature_max/0.49.49`,
      `${base()}/series/air_temperature_max/1.50.50`,
      `${base()}/series/air_temperature_max/0.171.0`,
      `${base()}/maps/air_temperature_max/01.0.0`,
      `${base()}/maps/air_temperature_max/0.0`,
      `${base()}/maps/air_temperature_max/0.0.0.0`,
      `${base()}/maps/air_temperature_max/-1.0.0`,
      `${base()}/maps/air_temperature_max/99999999999999999999.0.0`,
      `${base()}/maps/air_temperature_max/1e3.0.0`,
      `${base()}/maps/time/1`,
      `${base()}/maps/crs/1`,
      `${base()}/maps/precipitation_amount/.zarray`,
      `${base()}/maps/air_temperature_max/.zgroup`,
      `${base()}/maps/air_temperature_max/.zarray.gmac`,
      `${base()}/maps/.zarray`,
      `${base()}/maps/.zgroup.gmac`,
      `${base()}/tiles/.zmetadata`,
      `${base()}/maps/..`,
      `${base()}/maps/%2e%2e`,
      `${base()}/maps/%2e%2e%2f%2e%2e%2fcatalog.json`,
      `${base()}/maps/air_temperature_max/..%2F..%2F..%2Fcatalog.json`,
      `${base(fixture.noaa.id)}/maps/.zmetadata`,
      `${base(fixture.paid.id)}/maps/.zmetadata`,
      `${base(fixture.restricted.id)}/maps/.zmetadata`,
      `${base("silo-tmax-20040201-20040304-0000000000000000")}/maps/.zmetadata`,
      `${base("..")}/maps/.zmetadata`,
      `${base("%2e%2e")}/maps/.zmetadata`,
      `${base("x".repeat(300))}/maps/.zmetadata`,
      "/zarr/v2/latest/silo-nothing/maps/.zmetadata",
      "/zarr/v2/latest/silo-tmax/maps/..",
      "/zarr/v2/latest/silo-tmax/tiles/.zmetadata",
      "/zarr/v2/latest/silo-tmax/maps/air_temperature_max/%2e%2e",
      "/zarr/v2/latest/silo-tmax/maps/Air/0.0.0",
    ];
    for (const path of missing) {
      const answer = await request(served, path);
      assert.is(answer.status, 404, `${path}: ${answer.status} ${answer.text.slice(0, 200)}`);
      assert.is(answer.json().error, "not_found");
    }
    assert.is((await request(served, `${base()}/maps/.zmetadata`, { method: "POST", body: "{}" })).status, 405);
  });
});

zarr("zarr - latest/<dataset_key> answers 302 to the newest version's same key; following it gives the pinned bytes", async () => {
  await withServer(fixture.dist, async (served) => {
    const group = await request(served, "/zarr/v2/latest/silo-tmax/maps/.zmetadata");
    assert.is(group.status, 302);
    assert.is(group.headers.location, `../../../${fixture.a.id}/maps/.zmetadata`);
    assert.is(new URL(group.headers.location!, `http://h/zarr/v2/latest/silo-tmax/maps/.zmetadata`).pathname, `${base()}/maps/.zmetadata`);
    const chunk = await request(served, "/zarr/v2/latest/silo-tmax/series/air_temperature_max/0.50.50");
    assert.is(chunk.status, 302);
    const target = new URL(chunk.headers.location!, "http://h/zarr/v2/latest/silo-tmax/series/air_temperature_max/0.50.50").pathname;
    assert.is(target, `${base()}/series/air_temperature_max/0.50.50`);
    assert.equal((await request(served, target)).bytes, (await request(served, `${base()}/series/air_temperature_max/0.50.50`)).bytes);
    assert.is(chunk.headers["cache-control"], "public, max-age=60");
  });
});

zarr("zarr - pinned keys are immutable: ETag and 304, Cache-Control immutable, Content-Digest, HEAD, single byte ranges", async () => {
  await withServer(fixture.dist, async (served) => {
    const path = `${base()}/maps/air_temperature_max/3.1.1`;
    const whole = await request(served, path, { headers: { "Accept-Encoding": "gzip, br" } });
    assert.is(whole.headers["content-encoding"], undefined, "a chunk is never content-coded again");
    assert.is(whole.headers["cache-control"], "public, max-age=31536000, immutable");
    assert.is(whole.headers["accept-ranges"], "bytes");
    const digest = (bytes: Buffer) => `sha-256=:${createHash("sha256").update(bytes).digest("base64")}:`;
    assert.is(whole.headers["content-digest"], digest(whole.bytes));
    assert.is((await request(served, path, { headers: { "If-None-Match": whole.headers.etag! } })).status, 304);
    const head = await request(served, path, { method: "HEAD" });
    assert.equal([head.status, head.bytes.length, head.headers["content-length"], head.headers.etag], [200, 0, String(whole.bytes.length), whole.headers.etag]);
    const size = whole.bytes.length;
    for (const [range, first, last] of [["bytes=0-99", 0, 99], ["bytes=100-", 100, size - 1], ["bytes=-50", size - 50, size - 1], [`bytes=10-${size + 100}`, 10, size - 1]] as const) {
      const part = await request(served, path, { headers: { Range: range } });
      assert.is(part.status, 206, range);
      assert.is(part.headers["content-range"], `bytes ${first}-${last}/${size}`);
      assert.equal(part.bytes, whole.bytes.subarray(first, last + 1));
      assert.is(part.headers["content-digest"], digest(part.bytes));
    }
    const beyond = await request(served, path, { headers: { Range: `bytes=${size}-` } });
    assert.equal([beyond.status, beyond.headers["content-range"], beyond.json().error], [416, `bytes */${size}`, "range_not_satisfiable"]);
    assert.is((await request(served, path, { headers: { Range: "bytes=0-1,5-9" } })).status, 200, "several ranges: the whole answer");
    assert.is((await request(served, path, { headers: { Range: "bytes=0-9", "If-Range": '"other"' } })).status, 200);
    const meta = await request(served, `${base()}/maps/.zmetadata`, { headers: { Range: "bytes=0-15" } });
    assert.equal([meta.status, meta.text], [206, '{"metadata":{".z']);
  });
});

zarr("zarr - the mirror client answers the view from a static mirror: the same metadata bytes, the same chunk values", async () => {
  const mirror = await startMirrorServer({ dist: fixture.dist });
  try {
    const client = createMirrorClient({ baseUrl: mirror.url });
    await withServer(fixture.dist, async (served) => {
      for (const key of ["maps/.zmetadata", "series/air_temperature_max/.zarray", "series/lat/0"]) {
        const [local, remote] = [await request(served, `${base()}/${key}`), await client.answer({ path: `${base()}/${key}` })];
        assert.is(remote.status, 200);
        assert.equal(inflateIfChunk(key, Buffer.from(remote.body)), inflateIfChunk(key, local.bytes), key);
      }
      // a maps chunk is the same bytes (stored as it is); a series chunk the same values (each side's own zlib)
      const maps = "maps/air_temperature_max/7.1.1";
      assert.equal(Buffer.from((await client.answer({ path: `${base()}/${maps}` })).body), (await request(served, `${base()}/${maps}`)).bytes, maps);
      const series = "series/air_temperature_max/0.77.77";
      assert.equal(inflateSync((await client.answer({ path: `${base()}/${series}` })).body), inflateSync((await request(served, `${base()}/${series}`)).bytes), series);
      assert.is((await client.answer({ path: `${base()}/maps/air_temperature_max/0.2.3` })).status, 404);
      assert.is((await client.answer({ path: "/zarr/v2/latest/silo-tmax/maps/.zmetadata" })).headers.Location, `../../../${fixture.a.id}/maps/.zmetadata`);
    });
  } finally {
    await mirror.close();
  }
});

function inflateIfChunk(key: string, bytes: Buffer): Buffer {
  return key.endsWith("/0") ? inflateSync(bytes) : bytes;
}

zarr.run();
