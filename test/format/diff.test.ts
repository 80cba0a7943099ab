// Changes between versions: the date ranges a record states (bounded), and the mirror client's and CLI's diff of any
// two versions across append, extend, revise and a shorter folder: exactly the dates whose cells changed, with their
// source sha256 on each side, read by walking the index trees and skipping shared years and months.

import { MAX_TEMP } from "../../format/variables.js";
import { execFile } from "node:child_process";
import { rmSync } from "node:fs";
import { cp, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { type DateDiff, createMirrorClient } from "../../client/index.js";
import { startMirrorServer, type MirrorServer } from "../../client/mirror-server.js";
import { type DateRange, DateRanges, boundRanges, heldRanges } from "../../format/diff.js";
import { dateToDayNumber, listDates } from "../../format/dates.js";
import type { Window } from "../../format/grid.js";
import { objectPath, type Ref } from "../../format/objects.js";
import type { Dataset } from "../../format/records.js";
import type { DayEntry, MonthPage, RasterIndex, YearPage } from "../../format/version-index.js";
import { CHANGE_RANGES_MAX } from "../../pipeline/publish/changes.js";
import { dateToMemberPath } from "../../sources/silo.js";
import { freshDirs, makeWorkDir, publishSilently, writeSiloDays } from "../support/helpers.js";
import { readRecords } from "../support/server-fixture.js";
import { childArgs } from "../support/child-bundles.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const freshDir = freshDirs(makeWorkDir("diff-test"));

const WINDOW: Window = [300, 300, 3, 3];
/** Two years: a diff of a change in 2004 never reads 2003's pages. */
const DATES = listDates("2003-11-01", "2004-03-31");

/** The cells of each date, distinct within a day (by the cell's place in the window); `shift` tenths up make a revision. */
const cells = (shift = 0) => (col: number, row: number, date: string) =>
  Math.fround((150 + ((dateToDayNumber(date) * 7) % 200) + (row - WINDOW[1]) * WINDOW[2] + (col - WINDOW[0]) + shift) / 10);

const quietly = publishSilently;

// ---------------------------------------------------------------------------------------------------------------

const ranges = suite("date ranges");

ranges("changes - consecutive dates make one range; held dates skip gaps; more than the cap merge across the smallest separations", () => {
  const built = new DateRanges();
  for (const d of ["2004-02-27", "2004-02-28", "2004-02-29", "2004-03-01", "2004-03-03", "2004-12-31", "2005-01-01"]) built.add(d);
  assert.equal(built.ranges, [["2004-02-27", "2004-03-01"], ["2004-03-03", "2004-03-03"], ["2004-12-31", "2005-01-01"]]);
  assert.equal(heldRanges("2004-01-01", "2004-01-10", [["2004-01-03", "2004-01-04"], ["2004-01-10", "2004-01-10"]]), [["2004-01-01", "2004-01-02"], ["2004-01-05", "2004-01-09"]]);
  assert.equal(boundRanges(built.ranges, 3), { ranges: built.ranges, exact: true });
  // separations: 2 days (03-01 .. 03-03), 303 days: merged across the smaller
  assert.equal(boundRanges(built.ranges, 2), { ranges: [["2004-02-27", "2004-03-03"], ["2004-12-31", "2005-01-01"]], exact: false });
  assert.equal(boundRanges(built.ranges, 1), { ranges: [["2004-02-27", "2005-01-01"]], exact: false });
  // every other day of 1,000: 500 ranges, bounded to the cap, each input date still inside one of them
  const sparse = new DateRanges();
  const many = listDates("2001-01-01", "2003-09-26").filter((_, i) => i % 2 === 0);
  for (const d of many) sparse.add(d);
  const capped = boundRanges(sparse.ranges, CHANGE_RANGES_MAX);
  assert.equal([sparse.ranges.length, capped.ranges.length, capped.exact], [500, CHANGE_RANGES_MAX, false]);
  assert.ok(many.every((d) => capped.ranges.some(([s, e]) => d >= s && d <= e)));
});

ranges.run();

// ---------------------------------------------------------------------------------------------------------------

const diff = suite("diff between versions");
const V = { dist: "", ids: {} as Record<string, string>, mirror: null as MirrorServer | null };
const REVISED_ONE = ["2004-02-10"];
const REVISED_THREE = ["2003-12-05", "2004-01-20", "2004-03-02"];

/** Every day entry of a version, by date, read from the dist's files (the expectation's own walk, no skipping). */
async function readAllDays(dist: string, record: Dataset): Promise<Map<string, DayEntry>> {
  const read = async <T>(ref: Ref) => JSON.parse(await readFile(join(dist, objectPath(ref.sha256, "json")), "utf8")) as T;
  const days = new Map<string, DayEntry>();
  for (const year of (await read<RasterIndex>(record.metadata.index)).years) {
    for (const month of (await read<YearPage>(year.ref)).months) for (const day of (await read<MonthPage>(month.ref)).days) days.set(day.date, day);
  }
  return days;
}

/** The dates whose cells differ, computed from every day of both versions. */
async function expectedDiff(oldId: string, newId: string): Promise<DateDiff[]> {
  const records = await readRecords(V.dist);
  const [a, b] = await Promise.all([oldId, newId].map((id) => readAllDays(V.dist, records.find((r) => r.id === id)!)));
  const side = (d: DayEntry | undefined) => (d ? { cells: d.cells, sources: d.sources.map((s) => s.sha256) } : null);
  const out: DateDiff[] = [];
  for (const date of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    const [x, y] = [a.get(date), b.get(date)];
    if (x && y && x.cells === y.cells && x.window.join() === y.window.join()) continue;
    out.push({ date, kind: !x ? "added" : !y ? "removed" : "revised", old: side(x), new: side(y) });
  }
  return out;
}

diff.before(async () => {
  V.dist = freshDir("dist");
  const folder = freshDir("all");
  const base = DATES.slice(0, -2);
  await writeSiloDays(folder, base, WINDOW, cells());
  V.ids.first = (await quietly(folder, V.dist, { publishedAt: "2026-01-01T00:00:00Z" })).added[0].id;
  await writeSiloDays(folder, DATES.slice(-2, -1), WINDOW, cells()); // append: the grown folder
  V.ids.append = (await quietly(folder, V.dist, { publishedAt: "2026-01-02T00:00:00Z" })).added[0].id;
  const extend = freshDir("extend");
  await writeSiloDays(extend, DATES.slice(-1), WINDOW, cells());
  V.ids.extend = (await quietly(extend, V.dist, { extend: true, publishedAt: "2026-01-03T00:00:00Z" })).added[0].id;
  const reviseOne = freshDir("revise-one");
  await writeSiloDays(reviseOne, REVISED_ONE, WINDOW, cells(5));
  V.ids.reviseOne = (await quietly(reviseOne, V.dist, { extend: true, publishedAt: "2026-01-04T00:00:00Z" })).added[0].id;
  const reviseThree = freshDir("revise-three");
  await writeSiloDays(reviseThree, REVISED_THREE, WINDOW, cells(9));
  V.ids.reviseThree = (await quietly(reviseThree, V.dist, { extend: true, publishedAt: "2026-01-05T00:00:00Z" })).added[0].id;
  // a shorter folder (no extend): February and March only, with the three revisions
  const shorter = freshDir("shorter");
  await cp(folder, shorter, { recursive: true });
  for (const date of DATES.filter((d) => d < "2004-02-01")) rmSync(join(shorter, dateToMemberPath(date, MAX_TEMP)));
  await writeSiloDays(shorter, DATES.slice(-1), WINDOW, cells());
  await writeSiloDays(shorter, REVISED_THREE.filter((d) => d >= "2004-02-01"), WINDOW, cells(9));
  await writeSiloDays(shorter, REVISED_ONE, WINDOW, cells(5));
  V.ids.shorter = (await quietly(shorter, V.dist, { publishedAt: "2026-01-06T00:00:00Z" })).added[0].id;
  V.mirror = await startMirrorServer({ dist: V.dist });
});

diff.after(async () => {
  await V.mirror?.close();
});

/** A cold client's diff of two versions, and the requests it sent. */
async function diffOf(oldName: string, newName: string): Promise<{ dates: DateDiff[]; requests: number }> {
  const client = createMirrorClient({ baseUrl: V.mirror!.url });
  const dates = await client.diff(V.ids[oldName], V.ids[newName]);
  return { dates, requests: client.stats().requests };
}

diff("diff - across append, extend, revise and a shorter folder, the dates reported are exactly those whose cells changed", async () => {
  assert.is(new Set(Object.values(V.ids)).size, 6);
  const pairs: [string, string, string[]][] = [
    ["first", "append", [DATES[DATES.length - 2]]],
    ["append", "extend", [DATES[DATES.length - 1]]],
    ["extend", "reviseOne", REVISED_ONE],
    ["reviseOne", "reviseThree", REVISED_THREE],
    ["first", "reviseThree", [...REVISED_THREE, ...REVISED_ONE, ...DATES.slice(-2)].sort()],
    ["reviseThree", "first", [...REVISED_THREE, ...REVISED_ONE, ...DATES.slice(-2)].sort()],
    ["reviseThree", "shorter", DATES.filter((d) => d < "2004-02-01")],
  ];
  for (const [a, b, dates] of pairs) {
    const { dates: found } = await diffOf(a, b);
    assert.equal(found, await expectedDiff(V.ids[a], V.ids[b]), `${a} -> ${b}`);
    assert.equal(found.map((d) => d.date), dates, `${a} -> ${b}`);
  }
  const revised = (await diffOf("extend", "reviseOne")).dates[0];
  assert.is(revised.kind, "revised");
  assert.is.not(revised.old!.sources[0], revised.new!.sources[0]);
  assert.equal((await diffOf("reviseThree", "shorter")).dates.map((d) => d.kind), DATES.filter((d) => d < "2004-02-01").map(() => "removed"));
  assert.equal((await diffOf("first", "append")).dates.map((d) => [d.kind, d.old]), [["added", null]]);
});

diff("diff - the records state the same changes as ranges, and the version each was built from", async () => {
  const records = await readRecords(V.dist);
  const notes = (name: string) => {
    const { built_from, changes } = records.find((r) => r.id === V.ids[name])!.metadata;
    return { built_from, changes };
  };
  const day = (d: string): DateRange => [d, d];
  const none: DateRange[] = [];
  assert.equal(notes("reviseThree"), { built_from: V.ids.reviseOne, changes: { added: none, revised: REVISED_THREE.map(day), removed: none, exact: true } });
  assert.equal(notes("shorter"), { built_from: V.ids.reviseThree, changes: { added: none, revised: none, removed: [[DATES[0], "2004-01-31"]], exact: true } });
});

diff("diff - the objects read grow with the changed months, not with the archive: shared years and months are never read", async () => {
  // catalog.json (which holds the records of the query candidates), the catalog root and leaf when a record is
  // not among them, two index roots; then both pages of each changed year and month
  const pointer = JSON.parse(await readFile(join(V.dist, "catalog.json"), "utf8")) as { candidates: { id: string; record?: object }[] };
  const carried = new Set(pointer.candidates.filter((c) => c.record).map((c) => c.id));
  const roots = (a: string, b: string) => 1 + ([a, b].every((name) => carried.has(V.ids[name])) ? 0 : 2) + (a === b ? 1 : 2);
  assert.ok(carried.has(V.ids.shorter) && !carried.has(V.ids.first), "the newest version's record is in catalog.json, an old one's is not");
  const cost = (a: string, b: string, years: number, monthPages: number) => roots(a, b) + 2 * years + monthPages;
  assert.is((await diffOf("extend", "reviseOne")).requests, cost("extend", "reviseOne", 1, 2));
  assert.is((await diffOf("reviseOne", "reviseThree")).requests, cost("reviseOne", "reviseThree", 2, 6));
  assert.is((await diffOf("first", "append")).requests, cost("first", "append", 1, 2)); // March was open: both sides hold it
  // the shorter folder drops 2003 and January: 2003's year page, its two month pages and January's page on one side
  assert.is((await diffOf("reviseThree", "shorter")).requests, roots("reviseThree", "shorter") + 1 + 2 + 2 + 1);
  // the same two versions compared with themselves read no page below the roots
  assert.is((await diffOf("reviseThree", "reviseThree")).requests, roots("reviseThree", "reviseThree"));
});

diff("diff - npm run mirror -- diff prints a line per changed date with the old and new source sha256; an unknown version exits 1", async () => {
  const run = promisify(execFile);
  // the command npm runs, bundled first when make test runs (test/support/child-bundles.ts): tsx's loader costs a second a start
  const cli = await childArgs(join(REPO, "client/cli.ts"), "client");
  const { stdout, stderr } = await run(process.execPath, [...cli, "diff", V.mirror!.url, V.ids.reviseOne, V.ids.reviseThree], { cwd: REPO });
  const expected = await expectedDiff(V.ids.reviseOne, V.ids.reviseThree);
  const lines = expected.map((d) => `${d.date}\trevised\t${d.old!.sources[0]}\t${d.new!.sources[0]}`);
  assert.is(stdout, ["date\tchange\told_source_sha256\tnew_source_sha256", ...lines, ""].join("\n"));
  assert.match(stderr, /^3 dates differ \(0 added, 3 revised, 0 removed\); 15 requests, \d+ bytes read from the mirror\n$/);
  const json = await run(process.execPath, [...cli, "diff", V.mirror!.url, V.ids.reviseOne, V.ids.reviseThree, "--json"], { cwd: REPO });
  assert.equal(json.stdout.trim().split("\n").map((l) => JSON.parse(l)), expected);
  const unknown = await run(process.execPath, [...cli, "diff", V.mirror!.url, V.ids.first, "silo-tmax-20000101-20000102-0000000000000000"], { cwd: REPO }).catch((err) => err);
  assert.is(unknown.code, 1);
  assert.match(unknown.stderr, /dataset version silo-tmax-20000101-20000102-0000000000000000 is not published on this mirror/);
});

diff.run();
