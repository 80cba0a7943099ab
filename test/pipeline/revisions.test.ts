// Revisions (docs/contract.md §5, §8.4): a day SILO rewrote in a patch is a new version holding the new cells, sharing the rest;
// a file rewritten with the same cells makes no new version and is not decoded again; the pinned old version answers
// byte for byte; GET /api/v1/datasets/{id}/revisions says which dates were revised since, over real HTTP and from a
// mirror alike; the series manifest and the Zarr group name the version they answer from.

import { appendFile, cp, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createMirrorClient } from "../../client/index.js";
import { startMirrorServer } from "../../client/mirror-server.js";
import { Archive } from "../../format/archive.js";
import { dateToDayNumber, dayNumberToDate, listDates } from "../../format/dates.js";
import { LocalStorage, nodePlatform } from "../../format/local.js";
import { type RasterView, openVersion } from "../../format/versions.js";
import type { Window } from "../../format/grid.js";
import type { Dataset } from "../../format/records.js";
import { MAX_TEMP } from "../../format/variables.js";
import { prune } from "../../pipeline/commands/prune.js";
import { sync } from "../../pipeline/commands/sync.js";
import { verifyDist } from "../../pipeline/commands/verify.js";
import { dateToMemberPath } from "../../sources/silo.js";
import { docBlock, localize } from "../docs/doc-blocks.js";
import { READER_ENV, runBash } from "../docs/doc-run.js";
import { freshDirs, makeWorkDir, publishSilently, quietProgress, writeSiloDays } from "../support/helpers.js";
import { startNginx } from "../support/nginx.js";
import { readRecords, request, withServer } from "../support/server-fixture.js";

const fresh = freshDirs(makeWorkDir("revisions-test"));
const WINDOW: Window = [300, 300, 40, 30];
const DATES = listDates("2003-12-10", dayNumberToDate(dateToDayNumber("2003-12-10") + 39)); // 40 days across a year's close
const REVISED = "2003-12-20";
const REWRITTEN = "2004-01-05";
const PATCH: Window = [302, 302, 6, 4];

const inPatch = (col: number, row: number) => col >= PATCH[0] && col < PATCH[0] + PATCH[2] && row >= PATCH[1] && row < PATCH[1] + PATCH[3];

function value(col: number, row: number, date: string, revised: boolean): number {
  if ((col + row) % 11 === 0) return NaN;
  const day = Number(date.slice(8)) + (date.startsWith("2004") ? 31 : 0);
  return (200 + ((col * 3 + row * 7 + day * 5) % 120) + (revised && date === REVISED && inPatch(col, row) ? 7 : 0)) / 10;
}

/** The cells of the first night's files (revised false), or of the night that revised REVISED. */
const cells = (revised: boolean) => (col: number, row: number, date: string) => value(col, row, date, revised);

interface Published {
  dist: string;
  sources: string;
  first: Dataset;
  second: Dataset;
}

let published: Published;

/** The first night's version, then a night that revised REVISED in a patch and rewrote REWRITTEN with the same cells. */
async function publishTwoNights(): Promise<Published> {
  const sources = fresh("sources");
  const dist = fresh("dist");
  await writeSiloDays(sources, DATES, WINDOW, cells(false));
  await publishSilently(sources, dist, { publishedAt: "2004-01-19T06:00:00Z" });
  const [first] = await readRecords(dist);
  await writeSiloDays(sources, [REVISED], WINDOW, cells(true));
  await appendFile(join(sources, dateToMemberPath(REWRITTEN, MAX_TEMP)), new Uint8Array(1)); // new bytes, the same cells
  const night = await publishSilently(sources, dist, { publishedAt: "2004-01-20T06:00:00Z" });
  // one day's piece written (the rewritten one's cells are the base's); one span revised, January's runs kept
  assert.equal([night.added.length, night.decoded, night.series.revised, night.series.built], [1, 1, 1, 0]);
  const second = (await readRecords(dist)).find((r) => r.id !== first.id)!;
  return { dist, sources, first, second };
}

const revisions = suite("revisions");
revisions.before(async () => {
  published = await publishTwoNights();
});

revisions("revisions - the revised version records the revised date, its day piece keeps the unchanged blocks in the old piece", async () => {
  const { second, first, dist } = published;
  assert.equal([second.metadata.built_from, second.metadata.changes], [first.id, { added: [], revised: [[REVISED, REVISED]], removed: [], exact: true }]);
  const archive = new Archive(new LocalStorage(dist), nodePlatform);
  const [was, now] = await Promise.all([first, second].map(async (r) => (await openVersion(archive, r)) as RasterView).map(async (v) => (await v).findDay(REVISED)));
  // the window's 4 blocks: the patch lies in one, the 3 others stay in the old piece, which the new one names
  const header = await archive.readHeader(now!);
  assert.equal([now!.packs, header.blocks.map((b) => b.pack)], [[was!.piece], [1, 0, 0, 0]]);
  assert.ok(now!.piece.size < was!.piece.size, `${now!.piece.size} of ${was!.piece.size}`);
  assert.equal((await verifyDist(published.dist)).problems, []);
});

revisions("revisions - a file rewritten with the same cells makes no new version and is not decoded again", async () => {
  const dist = fresh("dist-same");
  await cp(published.dist, dist, { recursive: true });
  const sources = fresh("sources-same");
  await cp(published.sources, sources, { recursive: true });
  await appendFile(join(sources, dateToMemberPath("2004-01-06", MAX_TEMP)), new Uint8Array(1));
  // a file changed within the filesystem clock's tick is not remembered (pipeline/publish/source-cache.ts RACY_MS)
  await new Promise((r) => setTimeout(r, 2100));
  const once = await publishSilently(sources, dist);
  // every file of the copied folder read (new to the publish's memory), the rewritten one decoded: nothing written
  assert.equal([once.added.length, once.unchanged.map((d) => d.id), once.filesRead, once.bytesWritten], [0, [published.second.id], 40, 0]);
  // the next night: the publish remembers what that file decoded to (the base's cells), and reads none of it
  const twice = await publishSilently(sources, dist);
  assert.equal([twice.added.length, twice.filesRead, twice.bytesWritten], [0, 0, 0]);
});

revisions("revisions - the new version serves the new cells, the pinned old one answers byte for byte as before", async () => {
  const { dist, first, second } = published;
  const query = (id: string) => `/api/v1/series?lat=-25.1,-26.4&lon=127.1,128&start=2003-12-19&end=2003-12-21&dataset_version=${id}`;
  await withServer(dist, async (served) => {
    const old = await request(served, query(first.id));
    const now = await request(served, query(second.id));
    // (302, 302) is in the patch, (320, 328) is not
    const rows = (answer: { text: string }) => answer.text.trim().split("\n").slice(1).map((l) => Number(l.split(",")[3]));
    assert.equal(rows(old), [value(302, 302, "2003-12-19", false), value(302, 302, REVISED, false), value(302, 302, "2003-12-21", false), value(320, 328, "2003-12-19", false), value(320, 328, REVISED, false), value(320, 328, "2003-12-21", false)]);
    assert.equal(rows(now)[1], value(302, 302, REVISED, true));
    assert.equal(rows(now).filter((_, i) => i !== 1), rows(old).filter((_, i) => i !== 1));
    // the unpinned answer is the newest
    assert.is((await request(served, query(second.id).replace(/&dataset_version=.*/, ""))).text, now.text);
  });
});

revisions("revisions - GET /api/v1/datasets/{id}/revisions lists the revised dates since; the newest has none; against compares with another", async () => {
  const { dist, first, second } = published;
  await withServer(dist, async (served) => {
    const since = await request(served, `/api/v1/datasets/${first.id}/revisions`);
    assert.is(since.status, 200, since.text);
    assert.is(since.text, JSON.stringify({ datasetVersion: first.id, comparedWith: second.id, newest: true, revised: [[REVISED, REVISED]], added: [], removed: [] }));
    assert.is(since.headers["cache-control"], "public, max-age=60");
    const newest = await request(served, `/api/v1/datasets/${second.id}/revisions`);
    assert.is(newest.text, JSON.stringify({ datasetVersion: second.id, comparedWith: second.id, newest: true, revised: [], added: [], removed: [] }));
    const back = await request(served, `/api/v1/datasets/${second.id}/revisions?against=${first.id}`);
    assert.is(back.text, JSON.stringify({ datasetVersion: second.id, comparedWith: first.id, newest: false, revised: [[REVISED, REVISED]], added: [], removed: [] }));
    const noaa = (await readRecords(dist)).find((r) => r.dataset_key === "noaa-weather");
    const errors = [
      [`/api/v1/datasets/silo-tmax-20000101-20000101-0000000000000000/revisions`, 404, "not_found"],
      [`/api/v1/datasets/${first.id}/revisions?against=bad%20id`, 400, "invalid_parameters"],
      [`/api/v1/datasets/${first.id}/revisions?against=${first.id}&against=${second.id}`, 400, "invalid_parameters"],
      ...(noaa ? [[`/api/v1/datasets/${first.id}/revisions?against=${noaa.id}`, 400, "invalid_parameters"]] : []),
    ] as [string, number, string][];
    for (const [path, status, error] of errors) {
      const answer = await request(served, path);
      assert.equal([answer.status, JSON.parse(answer.text).error], [status, error], path);
    }
  });
});

revisions("revisions - the mirror client answers the revisions route, and the revised version's series and tiles, byte for byte as the server", async () => {
  const { dist, first, second } = published;
  const mirror = await startMirrorServer({ dist });
  try {
    await withServer(dist, async (served) => {
      const paths = [
        `/api/v1/datasets/${first.id}/revisions`,
        // a revised span (its lineage read through HTTP ranges) and a revised day (blocks in two pieces)
        `/api/v1/series?lat=-25.1,-26.4&lon=127.1,128&format=json&dataset_version=${second.id}`,
        `/api/v1/layers/${second.id}?tile=${REVISED.replaceAll("-", "")}-r1-c1`,
      ];
      const client = createMirrorClient({ baseUrl: mirror.url });
      for (const path of paths) {
        const fromMirror = await client.answer({ path });
        assert.is(fromMirror.status, 200, path);
        assert.is(fromMirror.text(), (await request(served, path)).text, path);
      }
    });
  } finally {
    await mirror.close();
  }
});

revisions("revisions - the series manifest and the Zarr group attributes name the version they answer from", async () => {
  const { dist, second } = published;
  await withServer(dist, async (served) => {
    const series = JSON.parse((await request(served, "/api/v1/series?lat=-25.1&lon=127.1&start=2003-12-19&end=2003-12-21&format=json")).text);
    assert.equal(series.manifest.variables.map((v: { datasetVersion: string }) => v.datasetVersion), [second.id]);
    const attrs = JSON.parse((await request(served, `/zarr/v2/${second.id}/series/.zattrs`)).text);
    assert.is(attrs.dataset_version, second.id);
  });
});

revisions("revisions - docs/clients.md's revisions block runs as written against a live server", async () => {
  const { dist, first, second } = published;
  await withServer(dist, async (served) => {
    const work = fresh("work-docs");
    await mkdir(work);
    const { stdout } = await runBash(localize(docBlock("docs/clients.md", "/revisions\""), { "http://127.0.0.1:8080": served.url }), { cwd: work, env: READER_ENV });
    const answer = JSON.parse(stdout);
    assert.ok([first.id, second.id].includes(answer.datasetVersion), stdout);
    assert.equal([answer.comparedWith, answer.revised], [second.id, answer.datasetVersion === first.id ? [[REVISED, REVISED]] : []]);
  });
});

revisions("revisions - make prune drops the old version but keeps the pieces the new one still reads; a mirror synced before and after verifies", async () => {
  const dist = fresh("dist-prune");
  await cp(published.dist, dist, { recursive: true });
  const mirror = fresh("mirror");
  const host = await startNginx(dist);
  try {
    await sync({ from: host.url, dist: mirror, progress: quietProgress });
    // the newest of each dataset alone is kept (a keep window of 0 days), unreachable files deleted at once
    const report = await prune({ dist, rule: { keepDays: 0, keepIds: new Set(), dropVersions: true }, graceMs: 0, now: new Date("2030-01-01T00:00:00Z") });
    assert.equal(report.dropped.map((d) => d.id), [published.first.id]);
    assert.ok(report.deleted.files > 0, "the first version's own index pages go");
    const after = await verifyDist(dist);
    assert.equal([after.problems, after.versions.map((v) => [v.id, v.problems])], [[], [[published.second.id, []], ...after.versions.slice(1).map((v) => [v.id, []])]]);
    await withServer(dist, async (served) => {
      const answer = await request(served, `/api/v1/series?lat=-25.1&lon=127.1&start=${REVISED}&end=${REVISED}&dataset_version=${published.second.id}`);
      assert.equal(answer.text.trim().split("\n")[1].split(",")[3], String(value(302, 302, REVISED, true)));
    });
    await sync({ from: host.url, dist: mirror, progress: quietProgress, graceMs: 0 });
    assert.equal((await verifyDist(mirror)).problems, []);
  } finally {
    await host.stop();
  }
});

revisions.run();
