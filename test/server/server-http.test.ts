// Server HTTP manners: 404/405, CORS preflight, HEAD, ETag/304, compression, body limits, media types, logging, 500s.

import { connect } from "node:net";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { INTERNAL_ERROR_BODY } from "../../api/errors.js";
import { selectCoding as selectEncoding } from "../../server/http.js";
import {
  assertError,
  assertSchema,
  post,
  request,
  requestFor,
  sha256Base64,
  withServer,
  useFixture,
  fixture,
  A,
} from "../support/server-fixture.js";


const ROUTES: [string, string][] = [
  ["/api/health", "GET, HEAD, OPTIONS"],
  ["/api/v1/capabilities", "GET, HEAD, OPTIONS"],
  ["/api/v1/openapi.json", "GET, HEAD, OPTIONS"],
  ["/api/v1/datasets", "GET, HEAD, OPTIONS"],
  ["/api/v1/datasets/x", "GET, HEAD, OPTIONS"],
  ["/api/v1/datasets/x/observations", "GET, HEAD, OPTIONS"],
  ["/api/v1/layers/x", "GET, HEAD, OPTIONS"],
  ["/api/v1/layers/x/sample", "GET, HEAD, OPTIONS"],
  ["/api/v1/data/validate", "POST, OPTIONS"],
  ["/api/v1/data/resolve", "POST, OPTIONS"],
  ["/api/v1/data/query", "POST, OPTIONS"],
  ["/api/v1/data/requests", "POST, OPTIONS"],
];

// ---------------------------------------------------------------------------------------------------------------

const routing = suite("routing and CORS");
routing.before(useFixture);

routing("routing - unknown routes are 404 not_found JSON (GET / is the landing page, server-site.test.ts)", async () => {
  await withServer(fixture.dist, async (served) => {
    for (const [method, path] of [
      ["POST", "/"],
      ["GET", "/index.html"],
      ["GET", "/api/v1/nope"],
      ["GET", "/api/v2/datasets"],
      ["POST", "/api/v1/data"],
      ["GET", "/api/v1/datasets/a/b/c"],
      ["DELETE", "/nope"],
    ]) {
      assertError(await request(served, path, { method }), 404, "not_found");
    }
  });
});

routing("routing - a known route with another method is 405 with Allow and a JSON body", async () => {
  await withServer(fixture.dist, async (served) => {
    for (const [path, allow] of ROUTES) {
      for (const method of allow.startsWith("GET") ? ["POST", "PUT", "DELETE", "PATCH"] : ["GET", "PUT", "DELETE"]) {
        const answer = await request(served, path, { method });
        assertError(answer, 405, "method_not_allowed");
        assert.is(answer.headers.allow, allow, `${method} ${path}`);
      }
    }
  });
});

routing("routing - CORS preflight answers 204 with methods, headers and max-age", async () => {
  await withServer(fixture.dist, async (served) => {
    for (const [path, allow] of ROUTES) {
      const answer = await request(served, path, {
        method: "OPTIONS",
        headers: { Origin: "https://app.example", "Access-Control-Request-Method": allow.startsWith("GET") ? "GET" : "POST", "Access-Control-Request-Headers": "content-type" },
      });
      assert.is(answer.status, 204, path);
      assert.is(answer.headers["access-control-allow-origin"], "*");
      assert.is(answer.headers["access-control-allow-methods"], allow);
      assert.is(answer.headers["access-control-allow-headers"], path === "/api/v1/data/requests" ? "Content-Type, Authorization" : "Content-Type, If-None-Match", path);
      assert.is(answer.headers["access-control-max-age"], "86400");
      assert.is(answer.headers.allow, allow);
      assert.is(answer.bytes.length, 0);
    }
    // the Zarr view's routes say they take byte ranges
    const zarr = await request(served, `/zarr/v2/${fixture.a.id}/maps/.zmetadata`, { method: "OPTIONS", headers: { Origin: "https://app.example", "Access-Control-Request-Headers": "range" } });
    assert.is(zarr.status, 204);
    assert.is(zarr.headers["access-control-allow-headers"], "Range, If-Range, If-None-Match");
    assertError(await request(served, "/api/v1/nope", { method: "OPTIONS" }), 404, "not_found");
  });
});

routing("routing - every answer carries Access-Control-Allow-Origin and exposes the provenance headers", async () => {
  await withServer(fixture.dist, async (served) => {
    const answers = [
      await request(served, "/api/v1/datasets"),
      await post(served, "/api/v1/data/query", requestFor({ col: 250, row: 250, width: 1, height: 1 }, "2004-02-01", "2004-02-01")),
      await request(served, "/api/v1/datasets/nope"),
      await post(served, "/api/v1/data/requests", {}),
    ];
    for (const answer of answers) {
      assert.is(answer.headers["access-control-allow-origin"], "*");
      assert.match(String(answer.headers["access-control-expose-headers"]), /Content-Digest.*Service-Dataset-Version.*Service-Request-SHA256.*Link/);
    }
  });
});

routing("routing - HEAD answers the GET headers without a body", async () => {
  await withServer(fixture.dist, async (served) => {
    const get = await request(served, "/api/v1/datasets");
    const head = await request(served, "/api/v1/datasets", { method: "HEAD" });
    assert.is(head.status, 200);
    assert.is(head.bytes.length, 0);
    assert.is(head.headers["content-length"], String(get.bytes.length));
    assert.is(head.headers.etag, get.headers.etag);
  });
});

routing("routing - requests pipelined on one connection are answered in order, and the server goes on", async () => {
  await withServer(fixture.dist, async (served) => {
    const socket = connect(served.port, "127.0.0.1");
    const paths = ["/api/health", "/api/v1/datasets", "/api/v1/nothing-here"];
    socket.write(paths.map((path) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`).join(""));
    let text = "";
    socket.setEncoding("latin1");
    await new Promise<void>((resolve) => {
      socket.on("data", (data: string) => {
        text += data;
        if ((text.match(/HTTP\/1\.1 \d{3} /g) ?? []).length === paths.length && text.endsWith("}")) resolve();
      });
    });
    socket.destroy();
    // each body is JSON without a newline at its end: the next status line follows it at once
    assert.equal(text.match(/HTTP\/1\.1 \d{3} /g), ["HTTP/1.1 200 ", "HTTP/1.1 200 ", "HTTP/1.1 404 "]);
    assert.is((await request(served, "/api/health")).status, 200);
  });
});

routing.run();

// ---------------------------------------------------------------------------------------------------------------

const caching = suite("caching and compression");
caching.before(useFixture);

caching("caching - ETag and If-None-Match give 304 on every immutable answer", async () => {
  await withServer(fixture.dist, async (served) => {
    const paths = [
      `/api/v1/datasets/${A}`,
      `/api/v1/layers/${A}`,
      `/api/v1/layers/${A}?limit=3`,
      `/api/v1/layers/${A}?tile=20040201-r0-c0`,
      `/api/v1/datasets/${fixture.noaa.id}/observations`,
      `/api/v1/datasets/${fixture.noaa.id}/observations?limit=7`,
      `/api/v1/layers/${A}/sample?tile=20040201-r0-c0&row=1&col=1`,
    ];
    for (const path of paths) {
      const first = await request(served, path);
      assert.is(first.status, 200, path);
      assert.is(first.headers["cache-control"], "public, max-age=31536000, immutable", path);
      const etag = String(first.headers.etag);
      assert.match(etag, /^"[0-9a-f]{32}"$/);
      for (const condition of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
        const again = await request(served, path, { headers: { "If-None-Match": condition } });
        assert.is(again.status, 304, `${path} with ${condition}`);
        assert.is(again.bytes.length, 0);
        assert.is(again.headers.etag, etag);
        assert.is(again.headers["cache-control"], "public, max-age=31536000, immutable");
        assert.is(again.headers["access-control-allow-origin"], "*");
      }
      assert.is((await request(served, path, { headers: { "If-None-Match": '"0123"' } })).status, 200);
    }
    const catalog = await request(served, "/api/v1/datasets");
    assert.is(catalog.headers["cache-control"], "public, max-age=60");
    assert.is((await request(served, "/api/v1/datasets", { headers: { "If-None-Match": String(catalog.headers.etag) } })).status, 304);
  });
});

caching("compression - gzip and brotli when accepted and over 1 KB, with Vary", async () => {
  await withServer(fixture.dist, async (served) => {
    const plain = await request(served, "/api/v1/datasets");
    assert.is(plain.headers["content-encoding"], undefined);
    assert.is(plain.headers.vary, "Accept-Encoding");
    const gzipped = await request(served, "/api/v1/datasets", { headers: { "Accept-Encoding": "gzip" } });
    assert.is(gzipped.headers["content-encoding"], "gzip");
    assert.ok(gzipped.bytes.length < plain.bytes.length);
    assert.equal(gunzipSync(gzipped.bytes), plain.bytes);
    assert.is(gzipped.headers.etag, String(plain.headers.etag).replace(/"$/, '-gzip"'));
    const brotli = await request(served, "/api/v1/datasets", { headers: { "Accept-Encoding": "gzip, deflate, br" } });
    assert.is(brotli.headers["content-encoding"], "br");
    assert.equal(brotliDecompressSync(brotli.bytes), plain.bytes);
    // a compressed representation is revalidated with its own validator, and the identity one still matches
    assert.is((await request(served, "/api/v1/datasets", { headers: { "Accept-Encoding": "br", "If-None-Match": String(brotli.headers.etag) } })).status, 304);
    const tile = await request(served, `/api/v1/layers/${A}?tile=20040201-r1-c1`, { headers: { "Accept-Encoding": "br" } });
    const tileAgain = await request(served, `/api/v1/layers/${A}?tile=20040201-r1-c1`, { headers: { "Accept-Encoding": "br" } });
    assert.equal(tileAgain.bytes, tile.bytes, "cached compressed copy is the same");
    // small answers are not worth compressing
    const health = await request(served, "/api/health", { headers: { "Accept-Encoding": "gzip" } });
    assert.is(health.headers["content-encoding"], undefined);
  });
});

caching("compression - Content-Digest is the sha-256 of the bytes sent, for identity, gzip and br (RFC 9530)", async () => {
  await withServer(fixture.dist, async (served) => {
    const body = requestFor({ col: 250, row: 250, width: 10, height: 10 }, "2004-02-01", "2004-02-02");
    const plain = await post(served, "/api/v1/data/query", body);
    assert.is(plain.headers["content-digest"], `sha-256=:${sha256Base64(plain.bytes)}:`);
    const gzipped = await post(served, "/api/v1/data/query", body, { "Accept-Encoding": "gzip" });
    assert.is(gzipped.headers["content-encoding"], "gzip");
    assert.is(gzipped.headers["content-digest"], `sha-256=:${sha256Base64(gzipped.bytes)}:`);
    assert.equal(gunzipSync(gzipped.bytes), plain.bytes);
    const br = await post(served, "/api/v1/data/query", body, { "Accept-Encoding": "gzip, deflate, br" });
    assert.is(br.headers["content-encoding"], "br");
    assert.is(br.headers["content-digest"], `sha-256=:${sha256Base64(br.bytes)}:`);
    assert.equal(brotliDecompressSync(br.bytes), plain.bytes);
    // no header carries a digest of anything else under a standard name (docs/contract.md §3)
    for (const answer of [plain, gzipped, br]) assert.is(answer.headers["repr-digest"], undefined);
    assert.is(gzipped.headers["cache-control"], "no-store");
    // a GET answer carries it too, compressed or not
    const tile = await request(served, `/api/v1/layers/${fixture.a.id}?tile=20040229-r0-c0`, { headers: { "Accept-Encoding": "br" } });
    assert.is(tile.headers["content-digest"], `sha-256=:${sha256Base64(tile.bytes)}:`);
  });
});

caching("compression - Accept-Encoding q-values", () => {
  assert.is(selectEncoding(undefined), null);
  assert.is(selectEncoding("identity"), null);
  assert.is(selectEncoding("gzip;q=0, br;q=0"), null);
  assert.is(selectEncoding("br;q=0, gzip"), "gzip");
  assert.is(selectEncoding("*"), "br");
  assert.is(selectEncoding("*;q=0, gzip;q=0.5"), "gzip");
  assert.is(selectEncoding("GZIP"), "gzip");
});

caching.run();

// ---------------------------------------------------------------------------------------------------------------

const bodies = suite("POST bodies");
bodies.before(useFixture);

/** The valid request padded with spaces to exactly `size` bytes. */
function paddedRequest(size: number): string {
  const text = JSON.stringify(requestFor({ col: 250, row: 250, width: 1, height: 1 }, "2004-02-01", "2004-02-01"));
  return text.slice(0, -1) + " ".repeat(size - text.length) + "}";
}

bodies("bodies - 16,384 bytes are read, 16,385 are 413 payload_too_large (declared or streamed)", async () => {
  await withServer(fixture.dist, async (served) => {
    for (const chunked of [false, true]) {
      for (const route of ["validate", "resolve", "query"]) {
        const exact = paddedRequest(16384);
        assert.is(Buffer.byteLength(exact), 16384);
        const ok = await request(served, `/api/v1/data/${route}`, { method: "POST", body: exact, chunked, headers: { "Content-Type": "application/json" } });
        assert.is(ok.status, 200, `${route} chunked=${chunked}: ${ok.text.slice(0, 200)}`);
        const over = await request(served, `/api/v1/data/${route}`, { method: "POST", body: paddedRequest(16385), chunked, headers: { "Content-Type": "application/json" } });
        assertError(over, 413, "payload_too_large");
      }
    }
    const big = await request(served, "/api/v1/data/query", { method: "POST", body: paddedRequest(200_000), headers: { "Content-Type": "application/json" } });
    assertError(big, 413, "payload_too_large");
  });
});

bodies("bodies - Content-Type must be application/json, parameters allowed", async () => {
  await withServer(fixture.dist, async (served) => {
    const text = JSON.stringify(requestFor({ col: 250, row: 250, width: 1, height: 1 }, "2004-02-01", "2004-02-01"));
    for (const type of ["application/json; charset=utf-8", "Application/JSON", "application/json;charset=UTF-8"]) {
      assert.is((await request(served, "/api/v1/data/validate", { method: "POST", body: text, headers: { "Content-Type": type } })).status, 200, type);
    }
    for (const route of ["validate", "resolve", "query"]) {
      for (const type of ["text/plain", "application/x-www-form-urlencoded", "application/jsonx", "application/problem+json", undefined]) {
        const headers: Record<string, string> = type ? { "Content-Type": type } : {};
        assertError(await request(served, `/api/v1/data/${route}`, { method: "POST", body: text, headers }), 415, "unsupported_media_type");
      }
    }
  });
});

bodies("bodies - empty, malformed and non-UTF-8 JSON are 400 malformed_json", async () => {
  await withServer(fixture.dist, async (served) => {
    const bad: (string | Buffer)[] = ["", "{", "{} x", "{'a': 1}", Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]), Buffer.from([0xc3, 0x28])];
    for (const route of ["validate", "resolve", "query"]) {
      for (const body of bad) {
        const answer = await request(served, `/api/v1/data/${route}`, { method: "POST", body, headers: { "Content-Type": "application/json" } });
        assertError(answer, 400, "malformed_json");
        assert.is(answer.headers["cache-control"], "no-store");
      }
    }
  });
});

bodies("requests - always 503 acquisition_not_ready, whatever the body", async () => {
  await withServer(fixture.dist, async (served) => {
    const valid = requestFor({ col: 250, row: 250, width: 1, height: 1 }, "2004-02-01", "2004-02-01");
    const answers = [
      await post(served, "/api/v1/data/requests", valid),
      await post(served, "/api/v1/data/requests", "{not json"),
      await request(served, "/api/v1/data/requests", { method: "POST" }),
      await request(served, "/api/v1/data/requests", { method: "POST", body: "x", headers: { "Content-Type": "text/plain" } }),
      await request(served, "/api/v1/data/requests", { method: "POST", body: paddedRequest(100_000), headers: { "Content-Type": "application/json" } }),
      await post(served, "/api/v1/data/requests", valid, { Authorization: "Bearer token" }),
    ];
    for (const answer of answers) {
      const error = assertError(answer, 503, "acquisition_not_ready");
      assert.match(error.message, /\/api\/v1\/data\/query/);
      assert.is(answer.headers["cache-control"], "no-store");
    }
  });
});

bodies.run();

// ---------------------------------------------------------------------------------------------------------------

const operations = suite("logging and unexpected errors");
operations.before(useFixture);

operations("log - one line per request: method, path, status, bytes, milliseconds", async () => {
  const lines: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  try {
    await withServer(
      fixture.dist,
      async (served) => {
        const health = await request(served, "/api/health?x=1");
        await request(served, "/api/v1/nope");
        await new Promise((resolve) => setImmediate(resolve));
        assert.ok(lines.some((l) => l === `GET /api/health 200 ${health.bytes.length} ${l.split(" ")[4]}`), lines.join(""));
        assert.ok(lines.some((l) => /^GET \/api\/v1\/nope 404 \d+ \d+\.\dms\n$/.test(l)), lines.join(""));
      },
      { log: true },
    );
  } finally {
    process.stderr.write = write;
  }
  assert.is(lines.length, 2);
});

operations("log - off with log: false", async () => {
  const lines: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = ((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  try {
    await withServer(fixture.dist, async (served) => {
      await request(served, "/api/health");
    });
  } finally {
    process.stderr.write = write;
  }
  assert.equal(lines, []);
});

operations("errors - an unexpected failure is logged and answered 500 without details", async () => {
  const logged: string[] = [];
  try {
    await withServer(fixture.dist, async (served) => {
      served.app.service.archive.readText = () => {
        throw new Error("secret detail /etc/passwd");
      };
      const answer = await request(served, `/api/v1/datasets/${fixture.noaa.id}/observations?limit=5`);
      assert.is(answer.status, 500);
      assert.equal(answer.json(), INTERNAL_ERROR_BODY);
      assertSchema("error.schema.json", answer.json());
      assert.not.ok(answer.text.includes("secret"));
      assert.is(answer.headers["access-control-allow-origin"], "*");
    }, { warn: (m) => logged.push(m) });
  } finally {
    // nothing to restore: the warnings went to this test's own hook
  }
  assert.is(logged.length, 1);
  assert.match(logged[0], /secret detail/);
});

operations.run();
