// The server's front door: the landing page at /, the explorer at /explorer/ and the dist files it reads, taken
// from the dist byte for byte; never a file outside the dist or beside its reader files, however the path is spelled.

import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { Archive } from "../../format/archive.js";
import { colToLon, rowToLat } from "../../format/grid.js";
import { LocalStorage, nodePlatform } from "../../format/local.js";
import { objectPath } from "../../format/objects.js";
import { openVersion } from "../../format/versions.js";
import { createApp } from "../../server/app.js";
import { DOCS } from "../../server/docs.js";
import { startNginx } from "../support/nginx.js";
import { type Served, assertError, buildDemoDist, copyDist, exchange, post, withServer, useFixture, fixture } from "../support/server-fixture.js";

const site = suite("landing page, explorer and dist files");
site.before(useFixture);

/** The path of a day piece of version A, and its bytes. */
async function dayPiece(dist: string): Promise<{ path: string; bytes: Buffer }> {
  const archive = new Archive(new LocalStorage(dist), nodePlatform);
  const view = await openVersion(archive, fixture.a);
  archive.storage.close?.();
  if (view.kind !== "raster") throw new Error("A is a raster");
  const path = objectPath((await view.findDay("2004-02-03"))!.piece.sha256, "day");
  return { path, bytes: await readFile(join(dist, path)) };
}

site("site - the landing page: what is published, its links, an editable query that answers rows and a curl that runs as pasted", async () => {
  await withServer(fixture.dist, async (served: Served) => {
    const page = await exchange(served, "/");
    assert.is(page.status, 200);
    assert.is(page.headers["content-type"], "text/html; charset=utf-8");
    const links = [...page.text.matchAll(/href="([^"]+)"/g)].map((m) => m[1].replaceAll("&amp;", "&"));
    const zarr = ["maps", "series"].map((group) => `zarr/v2/latest/${fixture.b.dataset_key}/${group}/.zmetadata`);
    const pointer = JSON.parse(await readFile(join(fixture.dist, "catalog.json"), "utf8"));
    const [col, row, width, height] = pointer.candidates.find((c: { id: string }) => c.id === fixture.b.id).coverage.windowAll;
    const series = `api/v1/series?lat=${rowToLat(row + Math.floor(height / 2))}&lon=${colToLon(col + Math.floor(width / 2))}&variables=max_temp`;
    const docs = DOCS.map(([page]) => page);
    const opendap = `opendap/${fixture.b.id}.html`;
    assert.equal(links, [...zarr, opendap, "explorer/", series, "api/v1/docs", "api/v1/openapi.json", "api/v1/capabilities", "api/v1/datasets", "api/health", ...docs]);
    assert.ok(docs.includes("README.md") && docs.includes("docs/clients.md") && docs.includes("docs/contract.md"));
    for (const link of links) assert.is((await exchange(served, `/${link}`, {})).status, link.startsWith("zarr/v2/latest/") ? 302 : 200, link);
    assert.is((await exchange(served, "/favicon.ico")).status, 204, "no icon, and no 404 in a browser's console");
    // the newest version of the one variable the fixture publishes, and no banner: its data is not generated
    assert.match(page.text, new RegExp(`<td>daily maximum temperature</td>.*<code>${fixture.b.id}</code>`));
    // the URL a DAP client is given: this server's, the dataset's newest, as pasted into ncdump or Panoply
    assert.ok(page.text.includes(`<code>${served.url}/opendap/latest/${fixture.b.dataset_key}</code>`));
    assert.not.match(page.text, /id="banner"/);
    const query = JSON.parse(/<textarea id="query"[^>]*>([^<]+)<\/textarea>/.exec(page.text)![1].replaceAll("&#34;", '"'));
    const answer = await post(served, "/api/v1/data/query", query);
    assert.is(answer.status, 200);
    assert.is(answer.json().data.length, 4);
    // the curl line names this server's address: pasted into a shell, it answers the same rows
    const curl = /<pre id="curl">([^<]+)<\/pre>/.exec(page.text)![1].replaceAll("&#34;", '"').replaceAll("&#39;", "'");
    assert.ok(curl.startsWith(`curl -sS ${served.url}/api/v1/data/query `), curl);
    // (asynchronously: this process is the server the command asks)
    const pasted = await promisify(execFile)("bash", ["-c", curl], { encoding: "utf8", timeout: 30_000 });
    assert.equal(JSON.parse(pasted.stdout).data, answer.json().data);
  });
});

site("site - the landing page of the generated demo says so in a banner", async () => {
  await withServer(await buildDemoDist(), async (served: Served) => {
    const page = await exchange(served, "/");
    assert.match(page.text, /<p id="banner">Generated demo data: synthetic values on the SILO grid, not observations\./);
    for (const v of ["daily maximum temperature", "daily minimum temperature", "daily rainfall", "daily solar radiation", "vapour pressure"]) assert.match(page.text, `<td>${v}</td>`);
  });
});

site("site - the explorer, catalog.json and objects are the dist's bytes; pieces by range, whole and revalidated, through the answers' one path (ETag, 304, 206, 416)", async () => {
  await withServer(fixture.dist, async (served: Served) => {
    const moved = await exchange(served, "/explorer");
    assert.equal([moved.status, moved.headers.location], [301, "/explorer/"]);
    // the explorer: the page catalog.json names, one object of the dist (docs/format.md §1), also at its own path
    const explorer = objectPath(JSON.parse(await readFile(join(fixture.dist, "catalog.json"), "utf8")).explorer.sha256, "html");
    // /explorer/ is whichever page the newest publish named, so it is cached briefly; the object, for a year
    for (const [path, cache] of [["/explorer/", "public, max-age=60"], [`/${explorer}`, "public, max-age=31536000, immutable"]]) {
      const page = await exchange(served, path);
      assert.equal([page.status, page.headers["content-type"], page.headers["cache-control"]], [200, "text/html; charset=utf-8", cache], path);
      assert.ok(page.bytes.equals(await readFile(join(fixture.dist, explorer))), path);
    }
    assertError(await exchange(served, "/explorer/app.js"), 404, "not_found");
    const catalog = await exchange(served, "/catalog.json");
    assert.equal([catalog.status, catalog.headers["cache-control"]], [200, "public, max-age=60"]);
    assert.ok(catalog.bytes.equals(await readFile(join(fixture.dist, "catalog.json"))));
    const root = objectPath(JSON.parse(catalog.text).catalog.sha256, "json");
    const object = await exchange(served, `/${root}`);
    assert.equal([object.status, object.headers["cache-control"]], [200, "public, max-age=31536000, immutable"]);
    assert.ok(object.bytes.equals(await readFile(join(fixture.dist, root))));

    const piece = await dayPiece(fixture.dist);
    const part = await exchange(served, `/${piece.path}`, { headers: { Range: "bytes=10-99" } });
    assert.equal([part.status, part.headers["content-range"], part.headers["content-length"]], [206, "bytes 10-99/*", "90"]);
    assert.ok(part.bytes.equals(piece.bytes.subarray(10, 100)));
    const tail = await exchange(served, `/${piece.path}`, { headers: { Range: `bytes=${piece.bytes.length - 5}-${piece.bytes.length + 100}` } });
    assert.equal([tail.status, tail.headers["content-range"]], [206, `bytes ${piece.bytes.length - 5}-${piece.bytes.length - 1}/*`]);
    assert.ok(tail.bytes.equals(piece.bytes.subarray(-5)));
    const whole = await exchange(served, `/${piece.path}`);
    assert.equal([whole.status, whole.headers["content-type"]], [200, "application/octet-stream"]);
    assert.ok(whole.bytes.equals(piece.bytes));
    // a piece's ETag and digest are every answer's: the first 32 hex digits of its sha256 (its name), and its sha256
    const sha256 = piece.path.slice(11, 75);
    const etag = whole.headers.etag!;
    assert.is(etag, `"${sha256.slice(0, 32)}"`);
    assert.is(whole.headers["content-digest"], `sha-256=:${Buffer.from(sha256, "hex").toString("base64")}:`);
    assert.equal([whole.headers["cache-control"], whole.headers["accept-ranges"]], ["public, max-age=31536000, immutable", "bytes"]);
    assert.is((await exchange(served, `/${piece.path}`, { headers: { "If-None-Match": etag } })).status, 304);
    // past its end: the contract's 416, naming the piece's size
    const past = await exchange(served, `/${piece.path}`, { headers: { Range: `bytes=${piece.bytes.length}-${piece.bytes.length + 9}` } });
    assert.equal([past.status, past.headers["content-range"], past.json().error], [416, `bytes */${piece.bytes.length}`, "range_not_satisfiable"]);
    // an open or suffix range of a piece, whose size is not known before it is read to its end, is answered whole
    assert.is((await exchange(served, `/${piece.path}`, { headers: { Range: "bytes=10-" } })).status, 200);
    const head = await exchange(served, `/${piece.path}`, { method: "HEAD" });
    assert.equal([head.status, head.bytes.length, head.headers["repr-digest"]], [200, 0, whole.headers["content-digest"]]);
    // a reader file's name the dist does not hold: the contract's 404
    const absent = `/objects/ab/ab${"0".repeat(62)}.day`;
    assertError(await exchange(served, absent), 404, "not_found");
    assertError(await exchange(served, `/objects/ab/ab${"0".repeat(62)}.json`), 404, "not_found");
  });
});

site("site - README.md and every docs page at its repository path, as Markdown; each page's relative links answer there; no other file", async () => {
  const repository = join(import.meta.dirname, "..", "..");
  await withServer(fixture.dist, async (served: Served) => {
    const pages = ["README.md", ...(await readdir(join(repository, "docs"))).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
    for (const page of pages) {
      const answer = await exchange(served, `/${page}`);
      assert.equal([answer.status, answer.headers["content-type"], answer.headers["cache-control"]], [200, "text/markdown; charset=utf-8", "public, max-age=60"], page);
      assert.ok(answer.bytes.equals(await readFile(join(repository, page))), page);
      // a link the page makes to another page of the repository resolves, on the server as in the checkout
      for (const [, target] of answer.text.matchAll(/\]\(([^)#:]+\.md)(#[^)]*)?\)/g)) {
        const url = new URL(target, `http://host/${page}`).pathname;
        assert.is((await exchange(served, url)).status, 200, `${page} links ${target}`);
      }
    }
    // the reference's page and its script, from this server (no CDN)
    const reference = await exchange(served, "/api/v1/docs");
    assert.equal([reference.status, reference.headers["content-type"]], [200, "text/html; charset=utf-8"]);
    assert.match(reference.text, '<redoc spec-url="openapi.json"></redoc>');
    const script = await exchange(served, "/api/v1/docs/redoc.standalone.js");
    assert.equal([script.status, script.headers["content-type"]], [200, "text/javascript; charset=utf-8"]);
    assert.ok(script.bytes.length > 500_000, `${script.bytes.length} bytes`);
    for (const path of ["/package.json", "/docs/", "/docs/missing.md", "/docs/Clients.md", "/docs/../package.json", "/docs/%2e%2e/package.json", "/docs/..%2fpackage.json", "/api/README.md", "/test/house.test.ts", "/api/v1/docs/", "/api/v1/docs/redoc.js"]) {
      assertError(await exchange(served, path), 404, "not_found");
    }
  });
});

site("site - never a path outside the dist, nor the dist's own working files: encoded and double-encoded dots, backslashes", async () => {
  const dist = await copyDist(fixture);
  const secret = "TOP-SECRET-NOT-SERVED";
  await writeFile(join(dist, "..", "secret.txt"), secret);
  for (const name of [".publish.lock", ".publish.journal", ".prune-pending.json", "notes.txt"]) {
    await writeFile(join(dist, name), secret);
  }
  const piece = await dayPiece(dist);
  await writeFile(join(dist, `${piece.path}.publish-backup`), secret);
  const paths = [
    "/../secret.txt", "/%2e%2e/secret.txt", "/%2E%2E/secret.txt", "/%252e%252e/secret.txt", "/..%2fsecret.txt", "/..%252fsecret.txt",
    "/explorer/../../secret.txt", "/explorer/%2e%2e/%2e%2e/secret.txt", "/explorer/..%2f..%2fsecret.txt", "/explorer/%252e%252e%252f%252e%252e%252fsecret.txt",
    "/explorer\\..\\..\\secret.txt", "/explorer/..%5c..%5csecret.txt", "/explorer/%255c..%255csecret.txt", "/objects/../../secret.txt",
    `/objects/${piece.path.slice(8, 10)}/..%2f..%2f..%2fsecret.txt`, "//secret.txt", "/./secret.txt", "/explorer/./index.html",
    "/.publish.lock", "/.publish.journal", "/.prune-pending.json", "/notes.txt", `/${piece.path}.publish-backup`,
    `/${piece.path.toUpperCase()}`, `/${piece.path}%00`, "/explorer/index.html%00", "/objects/", "/explorer/../catalog.json", "/%63atalog.json",
  ];
  await withServer(dist, async (served: Served) => {
    for (const path of paths) {
      const answer = await exchange(served, path);
      assert.ok([400, 404].includes(answer.status), `${path}: ${answer.status}`);
      assert.match(String(answer.headers["content-type"]), /^application\/json/, path);
      assert.ok(["not_found", "bad_request"].includes(answer.json().error), `${path}: ${answer.text}`);
      assert.not.match(answer.text, secret, path);
    }
  });
});

site("site - over a remote dist whose host stops answering: its files are 503 with Retry-After, never a 500, and the page still shows", async () => {
  const host = await startNginx(fixture.dist);
  const app = await createApp({ dist: host.url, log: false, warn: () => {} });
  await new Promise<void>((resolve) => app.server.listen(0, "127.0.0.1", resolve));
  const served: Served = { app, url: "", port: (app.server.address() as { port: number }).port };
  try {
    assert.is((await exchange(served, "/catalog.json")).status, 200);
    await host.stop();
    const failed = await exchange(served, "/catalog.json");
    assert.equal([failed.status, failed.headers["retry-after"]], [503, "1"]);
    assert.is(failed.json().error, "service_unavailable");
    // the interface's one error path: the contract's body, its digest and no-store, as every other error
    assert.match(failed.json().message, /cannot be read just now; retry later with exponential backoff\.$/);
    assert.equal([failed.headers["cache-control"], typeof failed.headers["content-digest"]], ["no-store", "string"]);
    assert.is((await exchange(served, "/")).status, 200);
  } finally {
    await app.close();
  }
});

site.run();
