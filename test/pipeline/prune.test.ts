// make prune: the retention rule, expiry that leaves every kept answer as it was, deletion only after the grace
// period, never anything a kept version uses (even one republished meanwhile), and a mirror following its origin.

import { cp, readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { listDates } from "../../format/dates.js";
import type { Window } from "../../format/grid.js";
import type { Dataset } from "../../format/records.js";
import { type PruneReport, type RetentionRule, prune, selectKept } from "../../pipeline/commands/prune.js";
import { verifyDist } from "../../pipeline/commands/verify.js";
import { freshDirs, makeWorkDir, publishSilently, writeSiloDays } from "../support/helpers.js";
import { type Served, assertError, post, readRecords, request, requestFor, withServer } from "../support/server-fixture.js";

const freshDir = freshDirs(makeWorkDir("prune-test"));

const WINDOW: Window = [300, 300, 6, 5];
const DATES = listDates("2004-01-25", "2004-02-03");
/** Five versions, each its folder grown by two days, published on these dates. */
const PUBLISHED = ["2026-01-05T00:00:00Z", "2026-01-20T00:00:00Z", "2026-02-10T00:00:00Z", "2026-03-01T00:00:00Z", "2026-03-20T00:00:00Z"];
const NOW = new Date("2026-03-25T00:00:00Z");
const HOUR = 3_600_000;
const rule = (keepDays: number, keepIds: string[] = [], dropVersions = true): RetentionRule => ({ keepDays, keepIds: new Set(keepIds), dropVersions });

/** Each date's cells: distinct within a day (by the cell's place in the window) and from day to day. */
const cells = (col: number, row: number, date: string) => Math.fround((200 + (row - WINDOW[1]) * WINDOW[2] + (col - WINDOW[0]) + Number(date.slice(8)) * 3) / 10);

/** A dist of the five versions, and the sources of each. */
async function publishFive(): Promise<{ dist: string; ids: string[]; folders: string[] }> {
  const dist = freshDir("dist");
  const folder = freshDir("sources");
  const ids: string[] = [];
  const kept: string[] = [];
  for (const [i, publishedAt] of PUBLISHED.entries()) {
    await writeSiloDays(folder, DATES.slice(2 * i, 2 * i + 2), WINDOW, cells);
    const copy = freshDir(`sources-${i + 1}`);
    await cp(folder, copy, { recursive: true });
    kept.push(copy);
    const s = await publishSilently(folder, dist, { publishedAt });
    ids.push(s.added[0].id);
  }
  return { dist, ids, folders: kept };
}

const queryOf = (id: string, first: string, last: string) => requestFor({ col: 301, row: 302, width: 2, height: 1 }, first, last, { dataset_version: id });

/** Every version's answer to a query of all its dates and its first tile, as bytes. */
async function answersOf(served: Served, records: Dataset[]): Promise<string[]> {
  const out: string[] = [];
  for (const r of records) {
    out.push((await post(served, "/api/v1/data/query", queryOf(r.id, r.period_start, r.period_end))).text);
    out.push((await request(served, `/api/v1/layers/${r.id}?tile=${r.period_start.replaceAll("-", "")}-r1-c1`)).text);
  }
  return out;
}

async function countObjects(dist: string): Promise<number> {
  let n = 0;
  for (const shard of await readdir(join(dist, "objects"))) n += (await readdir(join(dist, "objects", shard))).length;
  return n;
}

const retention = suite("retention rule");

retention("prune - keeps the newest of each dataset, the last days' versions, the last of each month and listed ids", () => {
  const records = PUBLISHED.map((published_at, i) => ({ id: `v${i + 1}`, dataset_key: "silo-tmax", published_at }) as Dataset);
  const ids = (kept: Set<string>) => [...kept].sort();
  assert.equal(ids(selectKept(records, rule(10), NOW)), ["v2", "v3", "v5"]); // Jan's last, Feb's last, Mar's last and newest
  assert.equal(ids(selectKept(records, rule(30), NOW)), ["v2", "v3", "v4", "v5"]);
  assert.equal(ids(selectKept(records, rule(0, ["v1"]), NOW)), ["v1", "v2", "v3", "v5"]);
  assert.equal(ids(selectKept(records, rule(0, [], false), NOW)), ["v1", "v2", "v3", "v4", "v5"]);
  const other = { id: "w1", dataset_key: "noaa-weather", published_at: "2020-01-01T00:00:00Z" } as Dataset;
  assert.ok(selectKept([...records, other], rule(10), NOW).has("w1"), "the newest of another dataset");
});

retention.run();

const lifecycle = suite("expire, then collect");

lifecycle("prune - dropped versions leave the catalog at once; files go only after the grace period; kept answers stay byte for byte", async () => {
  const { dist, ids } = await publishFive();
  const before = await withServer(dist, async (served) => answersOf(served, (await readRecords(dist)).filter((r) => [ids[1], ids[2], ids[4]].includes(r.id))));
  const objects = await countObjects(dist);

  const first: PruneReport = await prune({ dist, rule: rule(10), now: NOW, graceMs: 24 * HOUR });
  assert.equal(first.dropped.map((d) => d.id), [ids[0], ids[3]].sort());
  assert.equal([first.deleted.files, first.waiting.firstDueAt], [0, "2026-03-26T00:00:00.000Z"]);
  assert.ok(first.waiting.files > 0);
  assert.is(await countObjects(dist), objects + 4); // nothing deleted; a new catalog leaf (and its .br), root and manifest
  const afterExpiry = await verifyDist(dist);
  assert.equal([afterExpiry.problems, afterExpiry.unlisted], [[], []]);
  assert.is(afterExpiry.pruned.length, first.waiting.files);
  await withServer(dist, async (served) => {
    assert.equal((await readRecords(dist)).map((r) => r.id).sort(), [ids[1], ids[2], ids[4]].sort());
    assertError(await request(served, `/api/v1/datasets/${ids[3]}`), 404, "not_found");
    assertError(await post(served, "/api/v1/data/query", queryOf(ids[3], DATES[0], DATES[1])), 422, "coverage_unavailable");
    assert.equal(await answersOf(served, (await readRecords(dist)).filter((r) => [ids[1], ids[2], ids[4]].includes(r.id))), before);
  });

  const early = await prune({ dist, rule: rule(10), now: new Date(NOW.getTime() + 23 * HOUR), graceMs: 24 * HOUR });
  assert.equal([early.dropped.length, early.deleted.files, early.waiting.files], [0, 0, first.waiting.files]);
  const late = await prune({ dist, rule: rule(10), now: new Date(NOW.getTime() + 24 * HOUR), graceMs: 24 * HOUR });
  assert.equal([late.deleted.files, late.waiting.files], [first.waiting.files, 0]);
  const clean = await verifyDist(dist);
  assert.equal([clean.problems, clean.unlisted, clean.pruned, clean.versions.map((v) => v.problems)], [[], [], [], [[], [], []]]);
  await withServer(dist, async (served) => assert.equal(await answersOf(served, await readRecords(dist)), before));
});

lifecycle("prune - a dropped version published again before the grace period ends keeps every file it uses", async () => {
  const { dist, ids, folders } = await publishFive();
  await prune({ dist, rule: rule(10), now: NOW, graceMs: HOUR });
  // the fourth version's folder, published again: the same cells give the same id, back in the catalog
  const again = await publishSilently(folders[3], dist, { publishedAt: "2026-03-25T01:00:00Z" });
  assert.equal(again.added.map((d) => d.id), [ids[3]]);
  const later = await prune({ dist, rule: rule(10), now: new Date(NOW.getTime() + 2 * HOUR), graceMs: HOUR });
  assert.ok(later.deleted.files > 0, "what the first version alone used is deleted");
  const report = await verifyDist(dist);
  assert.equal([report.problems, report.unlisted, report.versions.map((v) => v.problems)], [[], [], [[], [], [], []]]);
});

lifecycle("prune - keeps every manifest of the current chain, not only the newest: make verify still walks the whole chain", async () => {
  const { dist } = await publishFive();
  // nothing dropped: the catalog keeps its chain of five manifests, and nothing is unreachable
  const report = await prune({ dist, rule: rule(0, [], false), now: NOW, graceMs: 0 });
  assert.equal([report.dropped.length, report.deleted.files, report.waiting.files], [0, 0, 0]);
  const verified = await verifyDist(dist);
  assert.equal([verified.manifests, verified.problems, verified.unlisted], [5, [], []]);
});

lifecycle("prune - a mirror that copied its origin's new catalog drops nothing itself and collects what that catalog no longer reaches", async () => {
  const { dist } = await publishFive();
  const mirror = freshDir("mirror");
  await cp(dist, mirror, { recursive: true });
  await prune({ dist, rule: rule(10), now: NOW, graceMs: 0 });
  // objects first, catalog.json last: what a mirror copies of the pruned origin
  for (const f of await listNew(dist, mirror)) await cp(join(dist, f), join(mirror, f));
  await cp(join(dist, "catalog.json"), join(mirror, "catalog.json"));
  const followed = await prune({ dist: mirror, rule: rule(0, [], false), now: NOW, graceMs: 0 });
  assert.equal(followed.dropped, []);
  assert.equal(await countObjects(mirror), await countObjects(dist));
  const report = await verifyDist(mirror);
  assert.equal([report.problems, report.unlisted, report.pruned], [[], [], []]);
  assert.equal(JSON.parse(await readFile(join(mirror, "catalog.json"), "utf8")), JSON.parse(await readFile(join(dist, "catalog.json"), "utf8")));
});

/** Object files the origin has and the mirror lacks (the new catalog tree and manifest of the prune). */
async function listNew(origin: string, mirror: string): Promise<string[]> {
  const out: string[] = [];
  for (const shard of await readdir(join(origin, "objects"))) {
    const have = new Set(await readdir(join(mirror, "objects", shard)).catch(() => []));
    for (const name of await readdir(join(origin, "objects", shard))) if (!have.has(name)) out.push(join("objects", shard, name));
  }
  return out;
}

lifecycle.run();
