// Server trust: start-up reads only catalog.json; every object and block is verified when first read; a version whose
// bytes fail answers 503 while the others serve; a new catalog.json is picked up while running, one snapshot a request.

import { execFile, spawn } from "node:child_process";
import { readFile, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { CatalogError } from "../../format/archive.js";
import { openVersion } from "../../format/versions.js";
import { LocalStorage, nodePlatform } from "../../format/local.js";
import { type ApiRequest, Service } from "../../api/service.js";
import { ROUTES } from "../../api/interface.js";
import { type Storage, fromUtf8 } from "../../format/storage.js";
import { ObjectStore } from "../../pipeline/store/objects.js";
import { writeFileAtomic } from "../../pipeline/files/write.js";
import { publish } from "../../pipeline/publish/publish.js";
import { colToEdgeLon, rowToEdgeLat } from "../../format/grid.js";
import { type DayHeader } from "../../format/day-piece.js";
import { type Ref, objectPath } from "../../format/objects.js";
import { type Dataset } from "../../format/records.js";
import { createApp } from "../../server/app.js";
import { writeSiloDays } from "../support/helpers.js";
import {
  DATES_B,
  VALUE_B,
  VALUE_C,
  WINDOW_B,
  assertError,
  copyDist,
  editRecords,
  post,
  readRecords,
  request,
  requestFor,
  valueA,
  withServer,
  type Answer,
  type Served,
  flipByte,
  findSeriesChunk,
  useFixture,
  fixture,
  A,
  openSnapshot,
  findDayPiece,
  findPages,
} from "../support/server-fixture.js";

const run = promisify(execFile);

const objectFile = (dist: string, ref: Ref, kind: "json" | "day") => join(dist, objectPath(ref.sha256, kind));

/** Every file under dist/objects, as dist-relative paths. */
async function listObjects(dist: string): Promise<string[]> {
  const out: string[] = [];
  for (const shard of await readdir(join(dist, "objects"))) {
    for (const name of await readdir(join(dist, "objects", shard))) out.push(`objects/${shard}/${name}`);
  }
  return out.sort();
}

/** Polls `check` every 10 ms until it holds; fails when `withinMs` pass first. Returns the milliseconds it took. */
async function waitFor(what: string, check: () => Promise<boolean> | boolean, withinMs = 2000): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check()) return Date.now() - started;
    if (Date.now() - started > withinMs) assert.unreachable(`${what} within ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A box of version A only (tile r0-c0, block 0 of every day); version B's window does not reach it. */
const CELLS_A = { col: 250, row: 250, width: 3, height: 3 };
const queryA = (start: string, end: string, extra: Record<string, unknown> = {}) => requestFor(CELLS_A, start, end, extra);
/** A box inside version B's window on 29 February: the newest candidate covering it answers. */
const queryB = () => requestFor({ col: 302, row: 202, width: 2, height: 2 }, "2004-02-29", "2004-02-29");

/** Values of a query answer's rows. */
const valuesOf = (answer: Answer) => answer.json().data.map((r: { value: number | null }) => r.value);

/** The visible catalog ids (restricted never listed), in id order. */
const visibleIds = (records: Dataset[]) => records.filter((d) => d.status === "published" && d.access_level !== "restricted").map((d) => d.id);

async function catalogIds(served: Served): Promise<string[]> {
  const answer = await request(served, "/api/v1/datasets");
  assert.is(answer.status, 200, answer.text);
  return answer.json().datasets.map((d: Dataset) => d.id);
}

/** Other versions and the catalog keep answering 200 whatever happened to version A. */
async function assertOthersServe(served: Served): Promise<void> {
  const b = await post(served, "/api/v1/data/query", queryB());
  assert.is(b.status, 200, b.text);
  assert.is(b.headers["service-dataset-version"], fixture.b.id);
  assert.equal(valuesOf(b), [VALUE_B, VALUE_B, VALUE_B, VALUE_B]);
  assert.is((await request(served, `/api/v1/layers/${fixture.b.id}?tile=20040229-r0-c1`)).status, 200);
  const observations = await request(served, `/api/v1/datasets/${fixture.noaa.id}/observations?limit=3`);
  assert.is(observations.status, 200, observations.text);
  assert.is(observations.json().observations.length, 3);
  assert.is((await request(served, `/api/v1/datasets/${fixture.b.id}`)).status, 200);
  assert.equal(await catalogIds(served), visibleIds(fixture.records));
  assert.is((await request(served, "/api/health")).status, 200);
}

/** The exact warning of a version marked unavailable. */
const unavailable = (id: string, reason: string) => `dataset ${id} is unavailable: ${reason}`;

// ---------------------------------------------------------------------------------------------------------------

const start = suite("start-up");
start.before(useFixture);

/** createApp must reject with a CatalogError, `missing` only when there is no catalog.json; returns its message. */
async function startFails(dist: string, missing = false): Promise<string> {
  const failure = await createApp({ dist, log: false }).then(
    async (app) => {
      await app.close();
      return null;
    },
    (err: unknown) => err,
  );
  assert.instance(failure, CatalogError, `createApp should refuse ${dist}`);
  assert.is((failure as CatalogError).path, join(dist, "catalog.json"));
  assert.is((failure as CatalogError).missing, missing);
  return (failure as CatalogError).message;
}

start("start - refuses a missing dist and a dist without catalog.json, naming catalog.json and make publish", async () => {
  const missing = join(fixture.root, "no-such-dist");
  assert.is(await startFails(missing, true), `${missing}/catalog.json: is missing; publish a dist with \`make publish\``);
  const dist = await copyDist(fixture);
  await rm(join(dist, "catalog.json"));
  assert.is(await startFails(dist, true), `${dist}/catalog.json: is missing; publish a dist with \`make publish\``);
});

start("start - refuses a catalog.json that is not JSON", async () => {
  const dist = await copyDist(fixture);
  await writeFile(join(dist, "catalog.json"), '{"format": "climate-dist-2", ');
  const message = await startFails(dist);
  assert.ok(message.startsWith(`${dist}/catalog.json: is not JSON (`), message);
  assert.ok(message.endsWith("republish with `make publish`"), message);
});

start("start - refuses a catalog.json of another shape (an older format names make upgrade; missing keys, not an object)", async () => {
  const dist = await copyDist(fixture);
  const pointer = JSON.parse(await readFile(join(dist, "catalog.json"), "utf8"));
  for (const old of ["climate-dist-2", "climate-dist-3"]) {
    await writeFile(join(dist, "catalog.json"), JSON.stringify({ ...pointer, format: old }));
    assert.is(await startFails(dist), `${dist}/catalog.json: is a ${old} dist; this reader reads climate-dist-4: upgrade it with \`make upgrade DIST=<dir>\` (docs/publishing.md "Upgrading a dist"), or republish`);
  }
  const { candidates: _candidates, ...withoutCandidates } = pointer;
  const shapes: [string, unknown][] = [
    ["an unknown format", { ...pointer, format: "climate-dist-x" }],
    ["a pointer without candidates", withoutCandidates],
    ["a pointer with an extra key", { ...pointer, datasets: [] }],
    ["a ref whose sha256 is not hex", { ...pointer, catalog: { ...pointer.catalog, sha256: "z".repeat(64) } }],
    ["an array", [pointer]],
    ["null", null],
  ];
  for (const [what, value] of shapes) {
    await writeFile(join(dist, "catalog.json"), JSON.stringify(value));
    const message = await startFails(dist);
    assert.ok(message.startsWith(`${dist}/catalog.json: is not a climate-dist-4 catalog (`), `${what}: ${message}`);
    assert.ok(message.endsWith("); republish with `make publish`"), `${what}: ${message}`);
  }
});

start("start - reads and hashes no data: with every object but the catalog tree deleted, only data answers 503", async () => {
  const dist = await copyDist(fixture);
  const snapshot = await openSnapshot(dist);
  const root = await snapshot.root();
  const keep = new Set([snapshot.pointer.catalog, ...root.leaves.map((l) => l.ref)].map((ref) => objectPath(ref.sha256, "json")));
  const objects = await listObjects(dist);
  assert.ok(objects.some((p) => p.endsWith(".day")), "the fixture has day pieces");
  for (const path of objects) if (!keep.has(path)) await rm(join(dist, path));
  // every index root, year page, month page, day piece, observation chunk and manifest is gone
  assert.is((await listObjects(dist)).length, keep.size);
  const warnings: string[] = [];
  await withServer(
    dist,
    async (served) => {
      for (const path of ["/api/health", "/api/v1/capabilities", "/api/v1/openapi.json", `/api/v1/datasets/${A}`, `/api/v1/datasets/${fixture.noaa.id}`]) {
        const answer = await request(served, path);
        assert.is(answer.status, 200, `${path}: ${answer.text.slice(0, 200)}`);
      }
      assert.equal(await catalogIds(served), visibleIds(fixture.records));
      assert.equal(warnings, [], "nothing was missed before data was asked for");
      // only now is a version's index read: it is gone, so its data is 503, never a guess
      assertError(await request(served, `/api/v1/layers/${A}?tile=20040201-r0-c0`), 503, "service_unavailable");
      const indexFile = join(dist, objectPath(fixture.a.metadata.index.sha256, "json"));
      assert.equal(warnings, [unavailable(A, `${indexFile}: missing`)]);
      assertError(await post(served, "/api/v1/data/query", queryA("2004-02-01", "2004-02-01", { dataset_version: A })), 503, "service_unavailable");
      assertError(await post(served, "/api/v1/data/query", queryB()), 503, "service_unavailable");
      assertError(await request(served, `/api/v1/datasets/${fixture.noaa.id}/observations`), 503, "service_unavailable");
      assert.is((await request(served, "/api/health")).status, 200);
      assert.equal(await catalogIds(served), visibleIds(fixture.records));
    },
    { warn: (m) => warnings.push(m) },
  );
});

/** A Storage that records every read: `path` for a whole file, `path@offset+length` for a range. */
class CountingStorage implements Storage {
  readonly reads: string[] = [];
  private readonly inner: LocalStorage;

  constructor(root: string) {
    this.inner = new LocalStorage(root);
  }

  describe(path: string): string {
    return this.inner.describe(path);
  }

  read(path: string, offset?: number, length?: number): Promise<Uint8Array> {
    this.reads.push(offset === undefined ? path : `${path}@${offset}+${length}`);
    return this.inner.read(path, offset, length);
  }

  /** Reads since the last call. */
  take(): string[] {
    return this.reads.splice(0);
  }
}

const apiGet = (path: string, query = ""): ApiRequest => ({ method: "GET", path, query: new URLSearchParams(query), baseUrl: "http://127.0.0.1" });

start("start - the service reads catalog.json alone at start, then only the objects and blocks a request needs, once", async () => {
  const storage = new CountingStorage(fixture.dist);
  const warnings: string[] = [];
  const service = new Service({ routes: ROUTES, storage, platform: nodePlatform, warn: (m) => warnings.push(m) });
  await service.snapshot(); // what createApp awaits before listening
  assert.equal(storage.take(), ["catalog.json"]);
  for (const path of ["/api/health", "/api/v1/capabilities", "/api/v1/openapi.json"]) {
    assert.is((await service.handle(apiGet(path))).status, 200, path);
  }
  assert.equal(storage.take(), [], "health, capabilities and openapi read nothing");

  const snapshot = await openSnapshot(fixture.dist);
  const root = await snapshot.root();
  assert.is((await service.handle(apiGet("/api/v1/datasets"))).status, 200);
  assert.equal(storage.take(), [objectPath(snapshot.pointer.catalog.sha256, "json"), ...root.leaves.map((l) => objectPath(l.ref.sha256, "json"))]);

  const { day, header } = await findDayPiece(fixture.dist, fixture.a, "2004-02-01");
  const pages = await findPages(fixture.dist, fixture.a, "2004-02");
  const piece = objectPath(day.piece.sha256, "day");
  const tile = await service.handle(apiGet(`/api/v1/layers/${A}`, "tile=20040201-r0-c0"));
  assert.is(tile.status, 200);
  // index root, year page, month page, the day's block directory, then the one block of tile r0-c0
  assert.equal(storage.take(), [
    objectPath(fixture.a.metadata.index.sha256, "json"),
    objectPath(pages.year.sha256, "json"),
    objectPath(pages.month.sha256, "json"),
    `${piece}@0+${day.header.size}`,
    `${piece}@${header.blocks[0].offset}+${header.blocks[0].length}`,
  ]);
  // a whole tile's blocks are read for its answer alone (format/archive.ts BlockReuse): asked again, the pages and the
  // block directory come from the cache and the block is read again; asked a third time, the answer cache answers
  const again = await service.handle(apiGet(`/api/v1/layers/${A}`, "tile=20040201-r0-c0"));
  assert.equal(again.body, tile.body);
  assert.equal(storage.take(), [`${piece}@${header.blocks[0].offset}+${header.blocks[0].length}`]);
  assert.equal((await service.handle(apiGet(`/api/v1/layers/${A}`, "tile=20040201-r0-c0"))).body, tile.body);
  assert.equal(storage.take(), [], "an answer asked twice is kept whole");
  // tile r0-c1 is blocks 1 and 2: adjacent in the piece, read as one range and verified block by block
  assert.is((await service.handle(apiGet(`/api/v1/layers/${A}`, "tile=20040201-r0-c1"))).status, 200);
  const [b1, b2] = [header.blocks[1], header.blocks[2]];
  assert.equal(storage.take(), [`${piece}@${b1.offset}+${b2.offset + b2.length - b1.offset}`]);
  assert.equal(warnings, []);
});

start("answer cache - an answer is kept on its second ask only while its first lies within the cache's reach", async () => {
  // Zarr maps chunks: every one 256 kB, so each costs the same (body twice, for its compressed forms, and 512)
  const cost = 256 * 256 * 4 * 2 + 512;
  const service = new Service({ routes: ROUTES, storage: new LocalStorage(fixture.dist), platform: nodePlatform, answerCacheBytes: 10 * cost });
  const chunk = async (t: number) => {
    const answer = await service.handle(apiGet(`/zarr/v2/${A}/maps/air_temperature_max/${t}.0.0`));
    assert.is(answer.status, 200, `chunk ${t}`);
    return answer;
  };
  const first = await chunk(0);
  const second = await chunk(0);
  assert.is.not(second, first, "asked once: computed, not kept");
  assert.is(await chunk(0), second, "asked twice in a row: kept");
  // between two asks of chunk 1, eleven other chunks: more than the cache holds (two generations of five)
  await chunk(1);
  for (let t = 2; t <= 12; t++) await chunk(t);
  const late = await chunk(1);
  const next = await chunk(1);
  assert.is.not(next, late, "a second ask from beyond the cache's reach is not kept");
  assert.is(await chunk(1), next, "it is kept when asked again soon");
  // a maps chunk's memory is given back by its sender (server/app.ts, once sent), and the next chunk takes it; a kept
  // answer has nothing to give back, since other requests read its body
  assert.is(next.recycle, undefined);
  // a sink's answer (a tile's JSON) kept on its second ask: its body copied out of the sink's working buffer
  const tile = () => service.handle(apiGet(`/api/v1/layers/${A}`, "tile=20040201-r1-c1"));
  assert.ok((await tile()).recycle, "a sink's answer not kept gives its working buffer back once sent");
  const kept = await tile();
  assert.is(kept.recycle, undefined);
  assert.is(kept.body.buffer.byteLength, kept.body.byteLength, "a kept answer's body is a buffer of its own");
  const sent = await chunk(20);
  sent.recycle!();
  assert.is((await chunk(21)).body.buffer, sent.body.buffer);
});

start("main - exits 1 before listening when the dist is missing, and says which command builds it", async () => {
  const missing = join(fixture.root, "missing");
  try {
    await run("node_modules/.bin/tsx", ["server/main.ts"], { env: { ...process.env, DIST: missing, PORT: "0" } });
    assert.unreachable("main should exit non-zero");
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    assert.is(e.code, 1);
    assert.is(e.stdout, "", "nothing is served");
    assert.is(e.stderr.trim(), `Cannot serve ${missing}: ${missing}/catalog.json: is missing; publish a dist with \`make publish\``);
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
    const answer = await post({ port: Number(url![2]) } as Served, "/api/v1/data/query", curl![2]);
    assert.is(answer.status, 200, answer.text);
    // the newest candidate is B: four cells of its first date
    assert.is(answer.headers["service-dataset-version"], fixture.b.id);
    assert.equal(valuesOf(answer), [VALUE_B, VALUE_B, VALUE_B, VALUE_B]);
  } finally {
    child.kill("SIGTERM");
  }
});

start.run();

// ---------------------------------------------------------------------------------------------------------------

const damage = suite("damaged files");
damage.before(useFixture);

/** A copy of the dist with one byte flipped in the middle of block 0 (tile r0-c0) of version A's 2004-02-10. */
async function corruptBlockA(): Promise<{ dist: string; file: string; header: DayHeader }> {
  const dist = await copyDist(fixture);
  const { file, header } = await findDayPiece(dist, fixture.a, "2004-02-10");
  const block = header.blocks[0];
  assert.ok(block.length > 0, "block 0 holds land cells");
  await flipByte(file, block.offset + Math.floor(block.length / 2));
  return { dist, file, header };
}

damage("damage - a corrupted block is never served: 503, one warning, then all of that version is 503; others serve", async () => {
  const { dist, file, header } = await corruptBlockA();
  const warnings: string[] = [];
  await withServer(
    dist,
    async (served) => {
      // nothing is verified before it is needed: untouched days and the piece's other blocks still answer
      const before = await post(served, "/api/v1/data/query", queryA("2004-02-01", "2004-02-02"));
      assert.is(before.status, 200, before.text);
      assert.is(before.headers["service-dataset-version"], A);
      const otherBlock = await request(served, `/api/v1/layers/${A}/sample?tile=20040210-r1-c1&row=0&col=0`);
      assert.is(otherBlock.status, 200, otherBlock.text);
      assert.is(otherBlock.json().value, valueA(256, 256, 9));
      assert.equal(warnings, []);

      // one date reads its day piece (a period of a few cells reads the series tier instead)
      assertError(await post(served, "/api/v1/data/query", queryA("2004-02-10", "2004-02-10")), 503, "service_unavailable");
      assert.equal(warnings, [unavailable(A, `${file}: block 0 does not match its sha256 ${header.blocks[0].sha256}`)]);

      // from now on the version is unavailable for everything, including days and blocks that are intact
      assertError(await post(served, "/api/v1/data/query", queryA("2004-02-01", "2004-02-02")), 503, "service_unavailable");
      assertError(await post(served, "/api/v1/data/query", queryA("2004-02-01", "2004-02-02", { dataset_version: A })), 503, "service_unavailable");
      assertError(await post(served, "/api/v1/data/resolve", queryA("2004-02-01", "2004-02-02")), 503, "service_unavailable");
      assertError(await request(served, `/api/v1/layers/${A}?tile=20040201-r0-c0`), 503, "service_unavailable");
      assertError(await request(served, `/api/v1/layers/${A}`), 503, "service_unavailable");
      assertError(await request(served, `/api/v1/layers/${A}/sample?tile=20040210-r1-c1&row=0&col=0`), 503, "service_unavailable");
      const body = assertError(await request(served, `/api/v1/datasets/${A}`), 503, "service_unavailable");
      assert.ok(body.message.includes(A), body.message);
      await assertOthersServe(served);
      assert.is(warnings.length, 1, "one warning per failed version");
    },
    { warn: (m) => warnings.push(m) },
  );
});

damage("damage - a corrupted series chunk is never served: the period that reads it is 503 and the version is marked", async () => {
  const dist = await copyDist(fixture);
  const found = await findSeriesChunk(dist, fixture.a, "2004-02-09", CELLS_A.col, CELLS_A.row);
  assert.ok(found.chunk.length > 0, "the chunk holds land cells");
  await flipByte(found.file, found.chunk.offset + Math.floor(found.chunk.length / 2));
  const warnings: string[] = [];
  await withServer(
    dist,
    async (served) => {
      // one date reads its day piece, which is whole
      assert.is((await post(served, "/api/v1/data/query", queryA("2004-02-09", "2004-02-09"))).status, 200);
      assertError(await post(served, "/api/v1/data/query", queryA("2004-02-09", "2004-02-10")), 503, "service_unavailable");
      assert.equal(warnings, [unavailable(A, `${found.file}: chunk ${found.group}/${found.position} does not match its sha256 ${found.chunk.sha256}`)]);
      assertError(await post(served, "/api/v1/data/query", queryA("2004-02-09", "2004-02-09")), 503, "service_unavailable");
      await assertOthersServe(served);
    },
    { warn: (m) => warnings.push(m) },
  );
});

damage("damage - a series chunk that fails verification while a NetCDF answer is sent: the stream breaks, the version is marked, the next call 503", async () => {
  const dist = await copyDist(fixture);
  const found = await findSeriesChunk(dist, fixture.a, "2004-02-09", CELLS_A.col, CELLS_A.row);
  const warnings: string[] = [];
  // nothing kept in memory: the send reads the chunk again, as a long answer does
  const app = await createApp({ dist, log: false, cacheBytes: 0, answerCacheBytes: 0, warn: (m) => warnings.push(m) });
  try {
    const box = `${colToEdgeLon(CELLS_A.col)},${rowToEdgeLat(CELLS_A.row + 3)},${colToEdgeLon(CELLS_A.col + 3)},${rowToEdgeLat(CELLS_A.row)}`;
    const ask = () => app.service.handle({ method: "GET", path: "/api/v1/series", query: new URLSearchParams(`bbox=${box}&start=2004-02-01&end=2004-03-04&format=netcdf`), baseUrl: "http://localhost" });
    // the answer's head is made (its digest pass read the chunk whole); then the chunk is damaged before its bytes go
    const answer = await ask();
    assert.is(answer.status, 200);
    await flipByte(found.file, found.chunk.offset + Math.floor(found.chunk.length / 2));
    let sent = 0;
    try {
      for await (const part of answer.stream!.open()) sent += part.byteLength;
      assert.unreachable("a damaged chunk ends the stream");
    } catch (err) {
      assert.match((err as Error).message, `does not match its sha256 ${found.chunk.sha256}`);
    }
    assert.ok(sent < answer.stream!.byteLength, `${sent} of ${answer.stream!.byteLength} bytes`);
    assert.equal(warnings, [unavailable(A, `${found.file}: chunk ${found.group}/${found.position} does not match its sha256 ${found.chunk.sha256}`)]);
    const next = await ask();
    assert.is(next.status, 503);
    assert.match(fromUtf8(next.body), `Dataset version ${A}`);
  } finally {
    await app.close();
  }
});

damage("damage - a series group directory that fails its Merkle proof is never used: 503", async () => {
  const dist = await copyDist(fixture);
  const found = await findSeriesChunk(dist, fixture.a, "2004-02-09", CELLS_A.col, CELLS_A.row);
  await flipByte(found.file, found.entriesAt + 4); // the first entry's length: a directory that lies about a chunk
  const warnings: string[] = [];
  await withServer(
    dist,
    async (served) => {
      assertError(await post(served, "/api/v1/data/query", queryA("2004-02-09", "2004-02-10")), 503, "service_unavailable");
      assert.equal(warnings, [unavailable(A, `${found.file}: group ${found.group} does not prove against its root ${found.span.root}`)]);
    },
    { warn: (m) => warnings.push(m) },
  );
});

damage("damage - a tile or a sample reading the corrupted block is 503, and the version is marked", async () => {
  const { dist, file, header } = await corruptBlockA();
  const expected = [unavailable(A, `${file}: block 0 does not match its sha256 ${header.blocks[0].sha256}`)];
  for (const path of [`/api/v1/layers/${A}?tile=20040210-r0-c0`, `/api/v1/layers/${A}/sample?tile=20040210-r0-c0&row=50&col=50`]) {
    const warnings: string[] = [];
    await withServer(
      dist,
      async (served) => {
        assertError(await request(served, path), 503, "service_unavailable");
        assertError(await request(served, `/api/v1/layers/${A}?tile=20040201-r0-c0`), 503, "service_unavailable");
        await assertOthersServe(served);
      },
      { warn: (m) => warnings.push(m) },
    );
    assert.equal(warnings, expected, path);
  }
});

damage("damage - a corrupted month page, index root, day header or observation chunk, and a missing day piece, are 503", async () => {
  const pages = await findPages(fixture.dist, fixture.a, "2004-03");
  const indexRef = fixture.a.metadata.index;
  const chunks: [string, (dist: string) => Promise<string>, string, string][] = [
    [
      "month page",
      async (dist) => {
        const file = objectFile(dist, pages.month, "json");
        await flipByte(file, 40);
        return unavailable(A, `${file}: does not match its sha256 ${pages.month.sha256} (${pages.month.size} bytes)`);
      },
      `/api/v1/layers/${A}?tile=20040301-r0-c0`,
      `/api/v1/layers/${A}?tile=20040201-r0-c0`,
    ],
    [
      "index root",
      async (dist) => {
        const file = objectFile(dist, indexRef, "json");
        await flipByte(file, 20);
        return unavailable(A, `${file}: does not match its sha256 ${indexRef.sha256} (${indexRef.size} bytes)`);
      },
      `/api/v1/layers/${A}`,
      `/api/v1/datasets/${A}`,
    ],
    [
      "day piece header",
      async (dist) => {
        const { day, file } = await findDayPiece(dist, fixture.a, "2004-02-20");
        await flipByte(file, 12); // the window's first field, inside the block directory
        return unavailable(A, `${file}: header does not match its sha256 ${day.header.sha256}`);
      },
      `/api/v1/layers/${A}/sample?tile=20040220-r1-c1&row=0&col=0`,
      `/api/v1/layers/${A}?tile=20040219-r0-c0`,
    ],
    [
      "missing day piece",
      async (dist) => {
        const { file } = await findDayPiece(dist, fixture.a, "2004-02-15");
        await rm(file);
        return unavailable(A, `${file}: missing`);
      },
      `/api/v1/layers/${A}/sample?tile=20040215-r1-c0&row=0&col=0`,
      `/api/v1/layers/${A}/sample?tile=20040214-r1-c0&row=0&col=0`,
    ],
  ];
  for (const [what, damageDist, first, then] of chunks) {
    const dist = await copyDist(fixture);
    const expected = await damageDist(dist);
    const warnings: string[] = [];
    await withServer(
      dist,
      async (served) => {
        assertError(await request(served, first), 503, "service_unavailable");
        assert.equal(warnings, [expected], what);
        assertError(await request(served, then), 503, "service_unavailable");
        assertError(await post(served, "/api/v1/data/query", queryA("2004-02-01", "2004-02-01", { dataset_version: A })), 503, "service_unavailable");
        await assertOthersServe(served);
        assert.is(warnings.length, 1, what);
      },
      { warn: (m) => warnings.push(m) },
    );
  }

  // the observation table: its first chunk
  const dist = await copyDist(fixture);
  const snapshot = await openSnapshot(dist);
  const view = await openVersion(snapshot.archive, fixture.noaa);
  if (view.kind !== "observation") throw new Error("noaa is an observation version");
  await flipByte(objectFile(dist, view.index.chunks[0], "json"), 5);
  await withServer(dist, async (served) => {
    assertError(await request(served, `/api/v1/datasets/${fixture.noaa.id}/observations`), 503, "service_unavailable");
    const a = await post(served, "/api/v1/data/query", queryA("2004-02-01", "2004-02-01"));
    assert.is(a.status, 200, a.text);
    assert.is((await request(served, `/api/v1/layers/${fixture.b.id}?tile=20040229-r0-c1`)).status, 200);
  });
});

damage("damage - a query choosing a version whose month page is corrupted is 503, never another version's data", async () => {
  // 2004-02-10 at B's cells: B does not hold that date, so A is chosen; A's February page fails its hash
  const dist = await copyDist(fixture);
  const pages = await findPages(dist, fixture.a, "2004-02");
  await flipByte(objectFile(dist, pages.month, "json"), 40);
  const warnings: string[] = [];
  await withServer(
    dist,
    async (served) => {
      const cells = { col: 302, row: 202, width: 2, height: 2 };
      assertError(await post(served, "/api/v1/data/query", requestFor(cells, "2004-02-10", "2004-02-10")), 503, "service_unavailable");
      assertError(await post(served, "/api/v1/data/resolve", requestFor(cells, "2004-02-10", "2004-02-10")), 503, "service_unavailable");
      assert.ok(warnings.length > 0 && warnings.every((w) => w.includes(objectPath(pages.month.sha256, "json"))), warnings.join("\n"));
      const b = await post(served, "/api/v1/data/query", queryB());
      assert.is(b.status, 200, b.text);
      assert.is(b.headers["service-dataset-version"], fixture.b.id);
    },
    { warn: (m) => warnings.push(m) },
  );
});

damage("damage - an index root of a shape this reader does not know (a newer publish) is 503 for its version, never a 500", async () => {
  const dist = await copyDist(fixture);
  const store = new ObjectStore(dist);
  let written: Ref | null = null;
  const records = await readRecords(dist);
  const b = records.find((r) => r.id === fixture.b.id)!;
  const index = JSON.parse(await readFile(objectFile(dist, b.metadata.index, "json"), "utf8"));
  // what a later format might add: a field this reader has no rule for, in the first series span
  index.series[0].sources = { inline: "a form this reader does not know" };
  written = await store.putJson(index);
  await editRecords(dist, (all) => {
    const record = all.find((r) => r.id === fixture.b.id)!;
    record.metadata.index = { ...record.metadata.index, sha256: written!.sha256, size: written!.size, path: objectPath(written!.sha256, "json") };
  });
  const warnings: string[] = [];
  await withServer(
    dist,
    async (served) => {
      const answer = await post(served, "/api/v1/data/query", queryB());
      assertError(answer, 503, "service_unavailable");
      assert.ok(warnings.some((w) => w.includes(objectPath(written!.sha256, "json")) && w.includes("is not an index of the format this reader knows (series[0].sources")), warnings.join("\n"));
      assert.is((await request(served, "/api/health")).status, 200);
    },
    { warn: (m) => warnings.push(m) },
  );
});

damage("damage - a corrupted catalog leaf is 503 for the catalog and for records only it holds; the query candidates' records come from catalog.json", async () => {
  const dist = await copyDist(fixture);
  const root = await (await openSnapshot(dist)).root();
  const leaf = root.leaves[0].ref;
  await flipByte(objectFile(dist, leaf, "json"), 30);
  const warnings: string[] = [];
  await withServer(
    dist,
    async (served) => {
      assert.is((await request(served, "/api/health")).status, 200);
      assertError(await request(served, "/api/v1/datasets"), 503, "service_unavailable");
      assertError(await request(served, `/api/v1/datasets/${fixture.paid.id}`), 503, "service_unavailable");
      // a query candidate's record is in catalog.json itself (equal to its leaf's: make verify checks it)
      const inspect = await request(served, `/api/v1/datasets/${A}`);
      assert.is(inspect.status, 200, inspect.text);
      assert.is(JSON.parse(inspect.text).dataset.content_sha256, fixture.a.content_sha256);
      const b = await post(served, "/api/v1/data/query", queryB());
      assert.is(b.status, 200, b.text);
      assert.is(b.headers["service-dataset-version"], fixture.b.id);
      const file = objectFile(dist, leaf, "json");
      assert.ok(warnings.length > 0, "the failure is reported");
      for (const w of warnings) assert.is(w, `${file}: does not match its sha256 ${leaf.sha256} (${leaf.size} bytes)`);
    },
    { warn: (m) => warnings.push(m) },
  );
});

damage.run();

// ---------------------------------------------------------------------------------------------------------------

const live = suite("catalog pick-up");
live.before(useFixture);

const VALUE_D = 52;
const PUBLISHED_D = "2024-04-01T00:00:00Z";

/** SILO-named GeoTIFFs of WINDOW_B on DATES_B, every cell VALUE_D: a version D that shadows B. */
const writeSourcesD = (dir: string) => writeSiloDays(dir, DATES_B, WINDOW_B, () => VALUE_D);

live("live - a publish under a stream of requests: every answer 200 from one snapshot, the new version served within 2 s", async () => {
  const dist = await copyDist(fixture);
  const sources = join(fixture.root, `sources-d-${Date.now()}`);
  await writeSourcesD(sources);
  const oldIds = visibleIds(fixture.records);
  const failures: string[] = [];
  const catalogs: string[][] = [];
  const queries: { version: string; values: number[] }[] = [];
  let stop = false;
  const rounds = [0, 0, 0, 0, 0, 0];

  await withServer(
    dist,
    async (served) => {
      const check = (what: string, answer: Answer) => {
        if (answer.status !== 200) failures.push(`${what}: ${answer.status} ${answer.text.slice(0, 200)}`);
        return answer.status === 200;
      };
      const loops: (() => Promise<void>)[] = [
        async () => {
          const answer = await request(served, "/api/v1/datasets");
          if (check("catalog", answer)) catalogs.push(answer.json().datasets.map((d: Dataset) => d.id));
        },
        async () => {
          const answer = await post(served, "/api/v1/data/query", queryB());
          if (!check("query B", answer)) return;
          const body = answer.json();
          if (body.manifest.datasetVersion !== answer.headers["service-dataset-version"]) failures.push("query B: manifest and header name different versions");
          queries.push({ version: String(answer.headers["service-dataset-version"]), values: valuesOf(answer) });
        },
        async () => {
          const answer = await post(served, "/api/v1/data/query", queryA("2004-02-28", "2004-03-01", { dataset_version: A }));
          if (check("query A", answer) && answer.headers["service-dataset-version"] !== A) failures.push("query A: answered by another version");
        },
        async () => void check("tile", await request(served, `/api/v1/layers/${A}?tile=20040229-r1-c1`)),
        async () => void check("inspect B", await request(served, `/api/v1/datasets/${fixture.b.id}`)),
        async () => void check("health", await request(served, "/api/health")),
      ];
      const streams = loops.map(async (once, i) => {
        while (!stop) {
          await once();
          rounds[i]++;
        }
      });
      try {
        await waitFor("every stream answers once before the publish", () => rounds.every((n) => n >= 1));
        const summary = await publish({ sources, dist, log: () => {}, publishedAt: PUBLISHED_D, datasetKey: "silo-tmax-d", observations: false });
        const published = Date.now();
        assert.is(summary.added.length, 1);
        const D = summary.added[0].id;
        assert.match(D, /^silo-tmax-d-20040228-20040301-[0-9a-f]{16}$/);
        await waitFor("the new version is inspectable", async () => (await request(served, `/api/v1/datasets/${D}`)).status === 200);
        const chosen = await post(served, "/api/v1/data/query", queryB());
        assert.is(chosen.headers["service-dataset-version"], D, "a query without dataset_version selects the newest covering version");
        assert.equal(valuesOf(chosen), [VALUE_D, VALUE_D, VALUE_D, VALUE_D]);
        assert.ok(Date.now() - published <= 2000, `picked up ${Date.now() - published} ms after the publish`);
        // let every stream run a few more rounds on the new catalog
        const seen = [...rounds];
        await waitFor("every stream answers on the new catalog", () => rounds.every((n, i) => n >= seen[i] + 3), 5000);
        stop = true;
        await Promise.all(streams);

        assert.equal(failures, []);
        const newIds = [...oldIds, D].sort();
        for (const ids of catalogs) assert.ok(JSON.stringify(ids) === JSON.stringify(oldIds) || JSON.stringify(ids) === JSON.stringify(newIds), ids.join(","));
        assert.equal(catalogs[0], oldIds);
        assert.equal(catalogs[catalogs.length - 1], newIds);
        // sequential requests of one stream never go back to the old catalog once they saw the new one
        const firstNew = catalogs.findIndex((ids) => ids.length === newIds.length);
        assert.ok(catalogs.slice(firstNew).every((ids) => ids.length === newIds.length), "the catalog stream never went back");
        for (const q of queries) {
          if (q.version === fixture.b.id) assert.equal(q.values, [VALUE_B, VALUE_B, VALUE_B, VALUE_B]);
          else if (q.version === D) assert.equal(q.values, [VALUE_D, VALUE_D, VALUE_D, VALUE_D]);
          else assert.unreachable(`query B answered by ${q.version}`);
        }
        assert.is(queries[0].version, fixture.b.id);
        assert.is(queries[queries.length - 1].version, D);
        const firstD = queries.findIndex((q) => q.version === D);
        assert.ok(queries.slice(firstD).every((q) => q.version === D), "the query stream never went back");
      } finally {
        stop = true;
        await Promise.allSettled(streams);
      }
    },
    { watchMs: 50 },
  );
  await rm(sources, { recursive: true, force: true });
});

live("live - a garbage, wrongly shaped or missing catalog.json is reported and not taken; the old snapshot serves until a valid one arrives", async () => {
  const dist = await copyDist(fixture);
  const catalogFile = join(dist, "catalog.json");
  // the valid catalog that will arrive later (C taken out), prepared now, then the original put back
  const original = await readFile(catalogFile);
  await editRecords(dist, (records) => void records.splice(records.findIndex((r) => r.id === fixture.c.id), 1));
  const edited = await readFile(catalogFile);
  await writeFileAtomic(catalogFile, original);
  const oldIds = visibleIds(fixture.records);
  const warnings: string[] = [];
  await withServer(
    dist,
    async (served) => {
      await writeFileAtomic(catalogFile, "{ this is not a catalog");
      await waitFor("the garbage is reported", () => warnings.length > 0);
      await new Promise((r) => setTimeout(r, 300)); // six more looks at it: said once
      assert.is(warnings.length, 1, warnings.join("\n"));
      assert.ok(warnings[0].startsWith(`catalog not reloaded: ${catalogFile}: is not JSON (`), warnings[0]);
      assert.equal(await catalogIds(served), oldIds);
      const b = await post(served, "/api/v1/data/query", queryB());
      assert.is(b.status, 200, b.text);
      assert.is(b.headers["service-dataset-version"], fixture.b.id);
      assert.is((await request(served, `/api/v1/layers/${fixture.c.id}?tile=20040229-r0-c1`)).status, 200);

      warnings.length = 0;
      await writeFileAtomic(catalogFile, JSON.stringify({ format: "climate-dist-4", datasets: [] }));
      await waitFor("the wrong shape is reported", () => warnings.length > 0);
      for (const w of warnings) assert.ok(w.startsWith(`catalog not reloaded: ${catalogFile}: is not a climate-dist-4 catalog (`), w);
      assert.equal(await catalogIds(served), oldIds);

      warnings.length = 0;
      await rm(catalogFile);
      await waitFor("the missing catalog is reported", () => warnings.length > 0);
      for (const w of warnings) assert.is(w, `catalog not reloaded: ${catalogFile}: is missing; publish a dist with \`make publish\``);
      assert.equal(await catalogIds(served), oldIds);

      warnings.length = 0;
      await writeFileAtomic(catalogFile, edited);
      await waitFor("the valid catalog is taken", async () => !(await catalogIds(served)).includes(fixture.c.id));
      assert.equal(await catalogIds(served), oldIds.filter((id) => id !== fixture.c.id));
      assertError(await request(served, `/api/v1/datasets/${fixture.c.id}`), 404, "not_found");
      assert.equal(warnings, []);
    },
    { watchMs: 50, warn: (m) => warnings.push(m) },
  );
});

live("live - a new catalog.json gives a failed version another check: still damaged is 503 again, repaired serves", async () => {
  const { dist, file, header } = await corruptBlockA();
  const block = header.blocks[0];
  const warnings: string[] = [];
  const touchCatalog = () => editRecords(dist, () => {}); // same records, a new publish manifest: a new catalog.json
  await withServer(
    dist,
    async (served) => {
      const damaged = queryA("2004-02-10", "2004-02-10");
      assertError(await post(served, "/api/v1/data/query", damaged), 503, "service_unavailable");
      assert.is(warnings.length, 1);
      const sha = (await served.app.service.snapshot()).sha256;
      await touchCatalog();
      await waitFor("the new catalog is taken", async () => (await served.app.service.snapshot()).sha256 !== sha);
      // the block is checked again, fails again, and is reported again
      assertError(await post(served, "/api/v1/data/query", damaged), 503, "service_unavailable");
      assert.equal(warnings, [1, 2].map(() => unavailable(A, `${file}: block 0 does not match its sha256 ${block.sha256}`)));

      await flipByte(file, block.offset + Math.floor(block.length / 2)); // flipped back: the bytes are whole again
      const sha2 = (await served.app.service.snapshot()).sha256;
      await touchCatalog();
      await waitFor("the second new catalog is taken", async () => (await served.app.service.snapshot()).sha256 !== sha2);
      const repaired = await post(served, "/api/v1/data/query", damaged);
      assert.is(repaired.status, 200, repaired.text);
      assert.equal(valuesOf(repaired), [250, 251, 252].flatMap((row) => [250, 251, 252].map((col) => valueA(col, row, 9))));
      assert.is(warnings.length, 2);
    },
    { watchMs: 50, warn: (m) => warnings.push(m) },
  );
});

live.run();

// ---------------------------------------------------------------------------------------------------------------

const edits = suite("record edits");
edits.before(useFixture);

edits("edits - an unpublished or restricted version is 404 everywhere and left out of the query candidates", async () => {
  const dist = await copyDist(fixture);
  // the catalog tree holds published records only (dist-catalog-leaf.schema.json): unpublishing takes B out
  await editRecords(dist, (records) => {
    records.splice(records.findIndex((r) => r.id === fixture.b.id), 1);
    records.find((r) => r.id === fixture.c.id)!.access_level = "restricted";
  });
  const records = await readRecords(dist);
  await withServer(dist, async (served) => {
    assert.equal(await catalogIds(served), visibleIds(records));
    assert.equal(visibleIds(records), visibleIds(fixture.records).filter((id) => id !== fixture.b.id && id !== fixture.c.id));
    for (const id of [fixture.b.id, fixture.c.id]) {
      assertError(await request(served, `/api/v1/datasets/${id}`), 404, "not_found");
      assertError(await request(served, `/api/v1/layers/${id}`), 404, "not_found");
      assertError(await request(served, `/api/v1/layers/${id}/sample?tile=20040229-r0-c1&row=0&col=0`), 404, "not_found");
      assertError(await post(served, "/api/v1/data/query", { ...queryB(), dataset_version: id }), 422, "coverage_unavailable");
    }
    assert.equal((await served.app.service.snapshot()).pointer.candidates.map((c) => c.id), [A]);
    // B's cells on 29 February now come from A, the only candidate left
    const answer = await post(served, "/api/v1/data/query", queryB());
    assert.is(answer.status, 200, answer.text);
    assert.is(answer.headers["service-dataset-version"], A);
    assert.equal(valuesOf(answer), [valueA(302, 202, 28), valueA(303, 202, 28), valueA(302, 203, 28), valueA(303, 203, 28)]);
  });
});

edits("edits - unpublishing a version while running hides it within 2 s; the version it shadowed becomes a candidate", async () => {
  const dist = await copyDist(fixture);
  await withServer(
    dist,
    async (served) => {
      assert.equal((await served.app.service.snapshot()).pointer.candidates.map((c) => c.id), [fixture.b.id, A], "B shadows C");
      assert.is((await post(served, "/api/v1/data/query", queryB())).headers["service-dataset-version"], fixture.b.id);
      await editRecords(dist, (records) => void records.splice(records.findIndex((r) => r.id === fixture.b.id), 1));
      await waitFor("B is hidden", async () => (await request(served, `/api/v1/datasets/${fixture.b.id}`)).status === 404);
      assert.equal((await served.app.service.snapshot()).pointer.candidates.map((c) => c.id), [fixture.c.id, A]);
      const answer = await post(served, "/api/v1/data/query", queryB());
      assert.is(answer.status, 200, answer.text);
      assert.is(answer.headers["service-dataset-version"], fixture.c.id);
      assert.equal(valuesOf(answer), [VALUE_C, VALUE_C, VALUE_C, VALUE_C]);
      assert.not.ok((await catalogIds(served)).includes(fixture.b.id));
    },
    { watchMs: 50 },
  );
});

edits.run();
