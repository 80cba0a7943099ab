// Server trust: refusing to start on a broken dist, 503 for a version whose files fail their hash, others unaffected.

import { execFile, spawn } from "node:child_process";
import { open, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { cellsPath, indexPath, datasetPath, pagePath, tilePath } from "../schemas/dist.js";
import { createApp } from "../server/app.js";
import { DistError } from "../server/store.js";
import {
  assertError,
  buildFixture,
  copyDist,
  editCatalog,
  post,
  request,
  requestFor,
  withServer,
  type Fixture,
  type Served,
} from "./server-fixture.js";

const run = promisify(execFile);

let fixture: Fixture;
let A: string;

async function useFixture(): Promise<void> {
  fixture = await buildFixture();
  A = fixture.a.id;
}

/** Flips one byte of a file in place (same size, new mtime). */
async function flipByte(file: string, position: number): Promise<void> {
  const handle = await open(file, "r+");
  try {
    const byte = Buffer.alloc(1);
    await handle.read(byte, 0, 1, position);
    byte[0] ^= 0xff;
    await handle.write(byte, 0, 1, position);
  } finally {
    await handle.close();
  }
}

const queryA = () => requestFor({ col: 250, row: 250, width: 3, height: 3 }, "2004-02-01", "2004-02-02");
const queryB = () => requestFor({ col: 302, row: 202, width: 2, height: 2 }, "2004-02-29", "2004-02-29");

async function assertOthersServe(served: Served): Promise<void> {
  assert.is((await request(served, `/api/v1/datasets/${fixture.noaa.id}/observations`)).status, 200);
  assert.is((await request(served, `/api/v1/datasets/${fixture.noaa.id}/observations?limit=3`)).status, 200);
  const b = await post(served, "/api/v1/data/query", queryB());
  assert.is(b.status, 200, b.text);
  assert.is(b.headers["service-dataset-version"], fixture.b.id);
  assert.is((await request(served, "/api/v1/datasets")).status, 200);
  assert.is((await request(served, "/api/health")).status, 200);
}

// ---------------------------------------------------------------------------------------------------------------

const start = suite("start-up");
start.before(useFixture);

start("start - refuses a missing dist, naming catalog.json and make publish", async () => {
  const missing = join(fixture.root, "no-such-dist");
  try {
    await createApp({ dist: missing, log: false });
    assert.unreachable("createApp should fail");
  } catch (err) {
    assert.instance(err, DistError);
    assert.match((err as Error).message, /no-such-dist\/catalog\.json/);
    assert.match((err as Error).message, /make publish/);
  }
});

start("start - refuses an unparseable or invalid catalog and a manifest that does not match", async () => {
  const cases: [string, (dist: string) => Promise<void>, RegExp][] = [
    ["not JSON", (dist) => writeFile(join(dist, "catalog.json"), "{"), /catalog\.json: is not JSON/],
    ["wrong shape", (dist) => writeFile(join(dist, "catalog.json"), JSON.stringify({ format: "climate-dist-1", datasets: "x" })), /catalog\.json: is not a climate-dist-1 catalog/],
    [
      "manifest changed",
      async (dist) => {
        const catalog = JSON.parse(await readFile(join(dist, "catalog.json"), "utf8"));
        await flipByte(join(dist, catalog.manifest.path), 10);
      },
      /manifests\/[0-9a-f]{64}\.json: does not match/,
    ],
    [
      "manifest missing",
      async (dist) => {
        const catalog = JSON.parse(await readFile(join(dist, "catalog.json"), "utf8"));
        await rm(join(dist, catalog.manifest.path));
      },
      /cannot be read \(ENOENT\)/,
    ],
  ];
  for (const [what, damage, message] of cases) {
    const dist = await copyDist(fixture);
    await damage(dist);
    try {
      await createApp({ dist, log: false });
      assert.unreachable(`${what}: createApp should fail`);
    } catch (err) {
      assert.instance(err, DistError, what);
      assert.match((err as Error).message, message, what);
      assert.match((err as Error).message, /make publish/, what);
    }
  }
});

start("main - exits 1 before listening when dist is missing, and says which command builds it", async () => {
  try {
    await run("node_modules/.bin/tsx", ["server/main.ts"], { env: { ...process.env, DIST: join(fixture.root, "missing"), PORT: "0" } });
    assert.unreachable("main should exit non-zero");
  } catch (err) {
    const e = err as { code: number; stderr: string };
    assert.is(e.code, 1);
    assert.match(e.stderr, /make publish/);
  }
});

start("main - prints the URL and a curl query that returns data", async () => {
  const child = spawn("node_modules/.bin/tsx", ["server/main.ts"], { env: { ...process.env, DIST: fixture.dist, PORT: "0", LOG: "0" } });
  try {
    let out = "";
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("curl")) resolve();
      });
      child.on("exit", (code) => reject(new Error(`main exited with ${code}: ${out}`)));
    });
    const url = /Serving .* at (http:\/\/127\.0\.0\.1:(\d+))/.exec(out);
    assert.ok(url, out);
    const curl = /curl -sS -X POST (\S+) -H 'Content-Type: application\/json' -d '([^']+)'/.exec(out);
    assert.ok(curl, out);
    assert.is(curl![1], `${url![1]}/api/v1/data/query`);
    const served = { port: Number(url![2]) } as Served;
    const answer = await post(served, "/api/v1/data/query", curl![2]);
    assert.is(answer.status, 200, answer.text);
    const result = answer.json();
    assert.ok(result.data.length > 0);
    assert.ok(result.data.some((r: any) => r.value !== null), "the example returns values");
  } finally {
    child.kill("SIGTERM");
  }
});

start.run();

// ---------------------------------------------------------------------------------------------------------------

const damage = suite("damaged files");
damage.before(useFixture);

damage("damage - a corrupted tile is 503 for its version while other versions answer 200", async () => {
  const dist = await copyDist(fixture);
  await flipByte(join(dist, tilePath(A, "20040201-r0-c1")), 30);
  const warnings: string[] = [];
  await withServer(dist, async (served) => {
    await served.app.store.cellsVerified();
    // before anything reads the damaged tile, the version answers
    assert.is((await post(served, "/api/v1/data/query", queryA())).status, 200);
    assertError(await request(served, `/api/v1/layers/${A}?tile=20040201-r0-c1`), 503, "service_unavailable");
    // ... and from then on the version is unavailable for all of its data
    assertError(await request(served, `/api/v1/layers/${A}?tile=20040201-r0-c0`), 503, "service_unavailable");
    assertError(await post(served, "/api/v1/data/query", queryA()), 503, "service_unavailable");
    assertError(await post(served, "/api/v1/data/resolve", queryA()), 503, "service_unavailable");
    assertError(await request(served, `/api/v1/layers/${A}/sample?tile=20040201-r0-c0&row=0&col=0`), 503, "service_unavailable");
    await assertOthersServe(served);
  }, { warn: (m) => warnings.push(m) });
  assert.equal(warnings, [`dataset ${A} is unavailable: ${tilePath(A, "20040201-r0-c1")} does not match its manifest size and sha256`]);
});

damage("damage - a missing tile file or page file is 503", async () => {
  const dist = await copyDist(fixture);
  await rm(join(dist, tilePath(A, "20040202-r1-c1")));
  await writeFile(join(dist, pagePath(fixture.noaa.id, "observations", null)), "{}");
  await withServer(dist, async (served) => {
    assertError(await request(served, `/api/v1/layers/${A}?tile=20040202-r1-c1`), 503, "service_unavailable");
    assertError(await request(served, `/api/v1/datasets/${fixture.noaa.id}/observations?limit=3`), 503, "service_unavailable");
    const b = await post(served, "/api/v1/data/query", queryB());
    assert.is(b.status, 200);
  });
});

damage("damage - a corrupted cells.f32 found by the start-up check is 503 for query and sample", async () => {
  const dist = await copyDist(fixture);
  await flipByte(join(dist, cellsPath(A)), 4000);
  await withServer(dist, async (served) => {
    assertError(await post(served, "/api/v1/data/query", queryA()), 503, "service_unavailable");
    assertError(await request(served, `/api/v1/layers/${A}/sample?tile=20040201-r0-c0&row=0&col=0`), 503, "service_unavailable");
    await served.app.store.cellsVerified();
    assertError(await request(served, `/api/v1/layers/${A}`), 503, "service_unavailable");
    await assertOthersServe(served);
  });
});

damage("damage - cells.f32 changed while serving is verified again before use", async () => {
  const dist = await copyDist(fixture);
  await withServer(dist, async (served) => {
    const first = await post(served, "/api/v1/data/query", queryA());
    assert.is(first.status, 200);
    // rewriting the same bytes changes only the mtime: verified again, still served
    const file = join(dist, cellsPath(A));
    await flipByte(file, 8);
    await flipByte(file, 8);
    const same = await post(served, "/api/v1/data/query", queryA());
    assert.is(same.status, 200);
    assert.equal(same.bytes, first.bytes);
    await flipByte(file, 8);
    assertError(await post(served, "/api/v1/data/query", queryA()), 503, "service_unavailable");
    assertError(await request(served, `/api/v1/layers/${A}/sample?tile=20040201-r0-c0&row=0&col=2`), 503, "service_unavailable");
    await assertOthersServe(served);
  });
});

damage("damage - a corrupted dataset.json or index.json makes only that version unavailable", async () => {
  const dist = await copyDist(fixture);
  await flipByte(join(dist, datasetPath(fixture.noaa.id)), 20);
  await flipByte(join(dist, indexPath(A)), 5);
  await withServer(dist, async (served) => {
    assertError(await request(served, `/api/v1/datasets/${fixture.noaa.id}`), 503, "service_unavailable");
    assertError(await request(served, `/api/v1/datasets/${fixture.noaa.id}/observations`), 503, "service_unavailable");
    assertError(await request(served, `/api/v1/datasets/${A}`), 503, "service_unavailable");
    assertError(await request(served, `/api/v1/layers/${A}`), 503, "service_unavailable");
    // A's coverage cannot be known without its index: no silent fallback, no false "unavailable coverage"
    assertError(await post(served, "/api/v1/data/query", queryA()), 503, "service_unavailable");
    assertError(await post(served, "/api/v1/data/resolve", queryA()), 503, "service_unavailable");
    const b = await post(served, "/api/v1/data/query", queryB());
    assert.is(b.status, 200);
    assert.is((await request(served, `/api/v1/datasets/${fixture.b.id}`)).status, 200);
    const catalog = (await request(served, "/api/v1/datasets")).json();
    assert.ok(catalog.datasets.some((d: any) => d.id === A), "the catalog still lists what catalog.json holds");
  });
});

damage.run();

// ---------------------------------------------------------------------------------------------------------------

const catalogEdits = suite("catalog edits");
catalogEdits.before(useFixture);

catalogEdits("catalog - a retired or staging version is neither listed nor served nor chosen", async () => {
  const dist = await copyDist(fixture);
  await editCatalog(dist, (catalog) => {
    for (const d of catalog.datasets) {
      if (d.id === fixture.b.id) d.status = "retired";
      if (d.id === fixture.c.id) d.status = "staging";
    }
  });
  await withServer(dist, async (served) => {
    const ids = (await request(served, "/api/v1/datasets")).json().datasets.map((d: any) => d.id);
    assert.not.ok(ids.includes(fixture.b.id));
    assert.not.ok(ids.includes(fixture.c.id));
    assertError(await request(served, `/api/v1/datasets/${fixture.b.id}`), 404, "not_found");
    assertError(await request(served, `/api/v1/layers/${fixture.c.id}`), 404, "not_found");
    const answer = await post(served, "/api/v1/data/query", queryB());
    assert.is(answer.headers["service-dataset-version"], A);
    assertError(await post(served, "/api/v1/data/query", { ...queryB(), dataset_version: fixture.b.id }), 422, "coverage_unavailable");
  });
});

catalogEdits("catalog - a grid that is not north-up regular EPSG:4326 is unsupported_grid", async () => {
  const dist = await copyDist(fixture);
  await editCatalog(dist, (catalog) => {
    for (const d of catalog.datasets) {
      if (d.dataset_key.startsWith("silo")) d.spatial_support = { ...d.spatial_support, grid_transform: [0.05, 0, 111.975, 0, 0.05, -44.025] };
    }
  });
  await withServer(dist, async (served) => {
    const resolution = (await post(served, "/api/v1/data/resolve", queryA())).json();
    assert.equal(resolution, { available: false, reason: "unsupported_grid", selection: null, acquisitionEnabled: false });
    assertError(await post(served, "/api/v1/data/query", queryA()), 422, "unsupported_grid");
    // no_cell_centers is decided first
    const between = queryA();
    const [w, , , n] = between.region.bbox as number[];
    between.region.bbox = [w + 0.001, n - 0.02, w + 0.02, n - 0.001];
    assertError(await post(served, "/api/v1/data/query", between), 422, "no_cell_centers");
  });
});

catalogEdits.run();
