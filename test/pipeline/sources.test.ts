// A sources folder in every shape a maintainer keeps it: annual NetCDF files (their provenance, revisions from a
// re-fetched file), both forms of a date side by side (the rule of docs/contract.md §6.1), and the daily routine
// on a grown folder, which reads only new and changed files and takes unchanged years and months whole.

import { MAX_TEMP } from "../../format/variables.js";
import { spawnSync } from "node:child_process";
import { copyFile, cp, mkdir, readFile, readdir, rename, rm, stat, symlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { dateToDayNumber, dayNumberToDate } from "../../format/dates.js";
import type { Window } from "../../format/grid.js";
import { sha256Hex } from "../../format/hash.js";
import { objectPath } from "../../format/objects.js";
import type { Dataset } from "../../format/records.js";
import type { DayEntry, MonthPage, RasterIndex, YearPage } from "../../format/version-index.js";
import { writeSiloTiff } from "../../pipeline/ingest/geotiff.js";
import type { PublishOptions, PublishSummary } from "../../pipeline/publish/publish.js";
import { SOURCE_CACHE_DIR, sourceCachePath } from "../../pipeline/publish/source-cache.js";
import { verifyDist } from "../../pipeline/commands/verify.js";
import { yearToUrl } from "../../sources/silo.js";
import { expectPublishError, freshDirs, makeWorkDir, publishSilently, readObject } from "../support/helpers.js";
import { post, requestFor, withServer } from "../support/server-fixture.js";

const FIXTURES = fileURLToPath(new URL("../fixtures/", import.meta.url));
const MAKE = join(FIXTURES, "make-netcdf-fixtures.py");
const ANNUAL = join(FIXTURES, "nc-packed-south-up.nc"); // 2003-01-01..05, window [0, 330, 37, 23]
const freshDir = freshDirs(makeWorkDir("sources-test"));

function runPython(args: string[]): string {
  const run = spawnSync("/usr/bin/python3", args, { encoding: "utf8" });
  if (run.status !== 0) throw new Error(`${args.join(" ")} failed: ${run.stderr}`);
  return run.stdout;
}

let publishes = 0;

/** Each publish a minute after the one before: the catalog orders versions by publish time (to the second). */
function publishQuietly(sources: string, dist: string, extra: Partial<PublishOptions> = {}): Promise<PublishSummary> {
  const publishedAt = new Date(Date.UTC(2026, 0, 1) + ++publishes * 60_000).toISOString().replace(/\.\d{3}Z$/, "Z");
  return publishSilently(sources, dist, { publishedAt, ...extra });
}

/** A version's year and month page refs (by key) and day entries (by date). */
async function readTree(dist: string, record: Dataset): Promise<{ nodes: Map<string, string>; days: Map<string, DayEntry> }> {
  const nodes = new Map<string, string>();
  const days = new Map<string, DayEntry>();
  for (const year of (await readObject<RasterIndex>(dist, record.metadata.index)).years) {
    nodes.set(year.key, year.ref.sha256);
    for (const month of (await readObject<YearPage>(dist, year.ref)).months) {
      nodes.set(month.key, month.ref.sha256);
      for (const day of (await readObject<MonthPage>(dist, month.ref)).days) days.set(day.date, day);
    }
  }
  return { nodes, days };
}

const hashFile = async (path: string) => sha256Hex(await readFile(path));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ANNUAL_DATES = ["2003-01-01", "2003-01-02", "2003-01-03", "2003-01-04", "2003-01-05"];

// ---------------------------------------------------------------------------------------------------------------

const annual = suite("annual files: provenance and revisions");
const A = { folder: "", dist: "", first: null as Dataset | null };

annual("publish - each day of an annual file records the file's sha256, the day inside it and the url it was fetched from; a query's manifest lists them", async () => {
  A.folder = freshDir("annual");
  await mkdir(A.folder, { recursive: true });
  await copyFile(ANNUAL, join(A.folder, "2003.max_temp.nc"));
  const bytes = await readFile(ANNUAL);
  const url = yearToUrl(2003, MAX_TEMP);
  await writeFile(join(A.folder, "silo.lock.json"), JSON.stringify({ files: [{ path: "2003.max_temp.nc", url, bytes: bytes.length, sha256: sha256Hex(bytes) }] }));
  A.dist = freshDir("annual-dist");
  const s = await publishQuietly(A.folder, A.dist);
  assert.equal([s.days, s.decoded, s.reused, s.filesRead], [5, 5, 0, 1]);
  A.first = s.added[0];
  assert.equal(A.first.metadata.provenance, ["fetched"]);
  const { days } = await readTree(A.dist, A.first);
  const expected = ANNUAL_DATES.map((_, i) => [{ sha256: sha256Hex(bytes), url, member_path: `2003.max_temp.nc#max_temp[${i}]`, license: "CC-BY-4.0" }]);
  assert.equal([...days.values()].map((d) => d.sources), expected);
  const manifest = await withServer(A.dist, async (served) => {
    const answer = await post(served, "/api/v1/data/query", requestFor({ col: 10, row: 335, width: 2, height: 2 }, "2003-01-02", "2003-01-03"));
    assert.is(answer.status, 200, answer.text);
    return answer.json().manifest.sourceManifest;
  });
  assert.equal(manifest, [...expected[1], ...expected[2]]);
});

annual("publish - the same annual file again reads nothing: not hashed, not opened, the version already published", async () => {
  await sleep(2100); // younger files may still change unseen within their clock tick: they are read again
  await publishQuietly(A.folder, A.dist); // remembers the file, now old enough
  const s = await publishQuietly(A.folder, A.dist);
  assert.equal([s.added.length, s.unchanged.map((d) => d.id), s.filesRead, s.decoded, s.objectsWritten], [0, [A.first!.id], 0, 0, 0]);
});

annual("publish - a re-fetched annual file in which 2 days changed gives a version where only those 2 days get new pieces", async () => {
  const revised = join(freshDir("revised"), "2003.max_temp.nc");
  await mkdir(join(revised, ".."), { recursive: true });
  const changed = runPython([MAKE, "revise", ANNUAL, revised, "2"]).trim().split(" ").map(Number);
  assert.equal(changed, [0, 2]);
  await copyFile(revised, join(A.folder, "2003.max_temp.nc"));
  const bytes = await readFile(revised);
  const lock = { files: [{ path: "2003.max_temp.nc", url: yearToUrl(2003, MAX_TEMP), bytes: bytes.length, sha256: sha256Hex(bytes) }] };
  await writeFile(join(A.folder, "silo.lock.json"), JSON.stringify(lock));
  const s = await publishQuietly(A.folder, A.dist);
  assert.equal([s.days, s.decoded, s.reused, s.filesRead, s.added.length], [5, 2, 3, 1, 1]);
  // two day pieces, whatever else the version needs (its month, year and root pages, series, catalog)
  const manifest = await readObject<{ files: { path: string }[] }>(A.dist, JSON.parse(await readFile(join(A.dist, "catalog.json"), "utf8")).manifest);
  assert.is(manifest.files.filter((f) => f.path.endsWith(".day")).length, 2);
  assert.is(s.dayBytesWritten > 0 && s.dayBytesWritten < 4 * 2 * 37 * 23, true, `${s.dayBytesWritten} bytes of day pieces`);
  const before = (await readTree(A.dist, A.first!)).days;
  const after = (await readTree(A.dist, s.added[0])).days;
  ANNUAL_DATES.forEach((date, i) => {
    const [b, a] = [before.get(date)!, after.get(date)!];
    assert.is(a.sources[0].sha256, sha256Hex(bytes), date);
    if (changed.includes(i)) assert.ok(a.piece.sha256 !== b.piece.sha256 && a.cells !== b.cells, `${date} changed`);
    else assert.equal([a.piece, a.cells, a.header], [b.piece, b.cells, b.header], `${date} reused`);
  });
  assert.equal((await verifyDist(A.dist)).problems, []);
});

annual.run();

// ---------------------------------------------------------------------------------------------------------------

const both = suite("both forms of a date in one folder");
const B = { annualOnly: null as Dataset | null, folder: "", dailyPath: (date: string) => join(B.folder, "2003", `${date.replaceAll("-", "")}.max_temp.tif`) };

both("publish - the annual file and the same days as GeoTIFFs: identical cells are fine, both sources recorded, the same version id", async () => {
  const annualOnly = freshDir("annual-only");
  await mkdir(annualOnly, { recursive: true });
  await copyFile(ANNUAL, join(annualOnly, "2003.max_temp.nc"));
  B.annualOnly = (await publishQuietly(annualOnly, freshDir("annual-only-dist"))).added[0];
  const tiffs = freshDir("tiffs");
  runPython([MAKE, "tiffs", ANNUAL, tiffs]);
  B.folder = join(tiffs, "float32-cog");
  await copyFile(ANNUAL, join(B.folder, "2003.max_temp.nc"));
  const dist = freshDir("both-dist");
  const s = await publishQuietly(B.folder, dist);
  assert.equal([s.days, s.decoded], [5, 5]);
  assert.is(s.added[0].id, B.annualOnly.id);
  const { days } = await readTree(dist, s.added[0]);
  const annualSha = await hashFile(ANNUAL);
  for (const [i, date] of ANNUAL_DATES.entries()) {
    assert.equal(days.get(date)!.sources, [
      { sha256: annualSha, member_path: `2003.max_temp.nc#max_temp[${i}]` },
      { sha256: await hashFile(B.dailyPath(date)), member_path: `2003/${date.replaceAll("-", "")}.max_temp.tif` },
    ]);
  }
});

both("publish - different cells for a date stop the publish naming both files, unless PREFER says which form wins", async () => {
  // day 2's GeoTIFF now holds day 1's cells
  await copyFile(B.dailyPath("2003-01-01"), B.dailyPath("2003-01-02"));
  const dist = freshDir("conflict-dist");
  const err = await expectPublishError(publishQuietly(B.folder, dist));
  assert.equal([err.file, err.stage], [B.dailyPath("2003-01-02"), "sources"]);
  assert.match(err.reason, /^2003-01-02 is also in 2003\.max_temp\.nc \(time index 1\) with different cells \(\d+ cells differ, first at col \d+, row \d+: [\d.]+ against [\d.]+\); keep one form of this date, or say which form wins with PREFER=daily or PREFER=annual$/);
  assert.not.ok((await readdir(dist)).includes("catalog.json"));

  const lines: string[] = [];
  const annualWins = await publishQuietly(B.folder, freshDir("annual-wins"), { prefer: "annual", log: (l) => lines.push(l) });
  assert.is(annualWins.added[0].id, B.annualOnly!.id, "the annual file's cells, so the annual file's version");
  assert.ok(lines.some((l) => /^2003-01-02: 2003\.max_temp\.nc wins over 2003\/20030102\.max_temp\.tif \(\d+ cells differ.*; PREFER=annual\)$/.test(l)), lines.join("\n"));
  const dailyDist = freshDir("daily-wins");
  const dailyWins = (await publishQuietly(B.folder, dailyDist, { prefer: "daily" })).added[0];
  assert.is.not(dailyWins.id, B.annualOnly!.id);
  const { days } = await readTree(dailyDist, dailyWins);
  assert.equal(days.get("2003-01-02")!.sources, [{ sha256: await hashFile(B.dailyPath("2003-01-02")), member_path: "2003/20030102.max_temp.tif" }]);
  assert.is(days.get("2003-01-02")!.cells, days.get("2003-01-01")!.cells, "day 2 holds the daily file's cells (day 1's)");
  assert.is(days.get("2003-01-03")!.sources.length, 2, "dates whose forms agree record both");
});

both.run();

// ---------------------------------------------------------------------------------------------------------------

const TINY: Window = [300, 300, 4, 4];
const GROWN_DATES = Array.from({ length: 84 }, (_, i) => dayNumberToDate(dateToDayNumber("2003-11-20") + i)); // .. 2004-02-11
const memberPath = (date: string) => `${date.slice(0, 4)}/${date.replaceAll("-", "")}.max_temp.tif`;

async function writeDay(dir: string, date: string, shift = 0): Promise<void> {
  const values = new Float32Array(16).map((_, i) => Math.fround((150 + ((dateToDayNumber(date) * 7 + i * 3 + shift) % 200)) / 10));
  await writeSiloTiff(join(dir, memberPath(date)), TINY, values);
}

const grown = suite("the daily routine on a grown folder");
const G = { folder: "", next: "", dist: "", first: null as Dataset | null, second: null as Dataset | null };

/** Every file under `dir` with its size and modification time: what a publish must leave as it found it. */
async function listStamps(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries.filter((e) => !e.isDirectory()).map((e) => join(e.parentPath, e.name));
  return Promise.all(files.sort().map(async (f) => `${f.slice(dir.length + 1)} ${(await stat(f)).size} ${(await stat(f)).mtimeMs}`));
}

grown("publish - a folder published twice: the second reads no file and writes nothing; the memory is the dist's, the folder untouched", async () => {
  G.folder = freshDir("grown");
  G.next = freshDir("grown-next");
  for (const date of GROWN_DATES.slice(0, -1)) await writeDay(G.folder, date);
  await writeDay(G.next, GROWN_DATES[GROWN_DATES.length - 1]);
  await sleep(2100); // files this young are read again by the next publish (their clock tick may not have passed)
  G.dist = freshDir("grown-dist");
  const folder = await listStamps(G.folder);
  const first = await publishQuietly(G.folder, G.dist);
  assert.equal([first.days, first.decoded, first.filesRead], [83, 83, 83]);
  G.first = first.added[0];
  // the memory lives in the dist, named by the folder's real path: the sources folder is left exactly as it was
  assert.equal(await readdir(join(G.dist, SOURCE_CACHE_DIR)), [sourceCachePath(G.dist, G.folder).slice(join(G.dist, SOURCE_CACHE_DIR).length + 1)]);
  const cache = JSON.parse(await readFile(sourceCachePath(G.dist, G.folder), "utf8"));
  assert.is(Object.keys(cache.files).length, 83);
  assert.equal(Object.keys(cache.nodes).sort(), ["2003", "2003-11", "2003-12", "2004", "2004-01", "2004-02"].map((key) => `max_temp ${key}`));
  // the same folder through a link is the same folder: one memory
  const link = join(freshDir("grown-link"), "silo");
  await mkdir(join(link, ".."), { recursive: true });
  await symlink(G.folder, link);
  const again = await publishQuietly(link, G.dist);
  assert.equal([again.added.length, again.filesRead, again.decoded, again.reused, again.objectsWritten], [0, 0, 0, 83, 0]);
  assert.equal(await listStamps(G.folder), folder);
});

grown("publish - one more day reads one file and never opens the pages of unchanged years and months", async () => {
  await cp(G.next, G.folder, { recursive: true });
  const before = await readTree(G.dist, G.first!);
  // hide the pages the publish must not need: 2003's year page and the month pages of November, December, January
  const hidden = ["2003", "2003-11", "2003-12", "2004-01"].map((key) => join(G.dist, objectPath(before.nodes.get(key)!, "json")));
  await Promise.all(hidden.map((p) => rename(p, `${p}.hidden`)));
  let s: PublishSummary;
  try {
    s = await publishQuietly(G.folder, G.dist);
  } finally {
    await Promise.all(hidden.map((p) => rename(`${p}.hidden`, p)));
  }
  assert.equal([s.days, s.decoded, s.reused, s.filesRead], [84, 1, 83, 1]);
  G.second = s.added[0];
  const after = await readTree(G.dist, G.second);
  for (const key of ["2003", "2003-11", "2003-12", "2004-01"]) assert.is(after.nodes.get(key), before.nodes.get(key), key);
  assert.is.not(after.nodes.get("2004-02"), before.nodes.get("2004-02"));
  assert.equal((await verifyDist(G.dist)).problems, []);
});

grown("publish - REHASH reads every file again and gives the same version", async () => {
  await sleep(2100); // the day added above is now old enough to be remembered
  // by a publish of this dist that finds nothing new: it reads that one file, and its memory learns it
  const learned = await publishQuietly(G.folder, G.dist);
  assert.equal([learned.added.length, learned.filesRead], [0, 1]);
  const dist = freshDir("rehash-dist");
  await cp(G.dist, dist, { recursive: true });
  const s = await publishQuietly(G.folder, dist, { rehash: true });
  assert.equal([s.added.length, s.unchanged.map((d) => d.id), s.filesRead, s.decoded], [0, [G.second!.id], 84, 0]);
});

grown("publish - a file rewritten with the same size and its old modification time is read again (its change time moved)", async () => {
  const target = join(G.folder, memberPath("2003-12-25"));
  const { mtime, size } = await stat(target);
  await writeDay(G.folder, "2003-12-25", 5);
  await utimes(target, mtime, mtime);
  assert.is((await stat(target)).size, size);
  const s = await publishQuietly(G.folder, G.dist);
  assert.equal([s.decoded, s.filesRead, s.added.length], [1, 1, 1]);
  const after = await readTree(G.dist, s.added[0]);
  assert.is(after.days.get("2003-12-25")!.sources[0].sha256, await hashFile(target));
  assert.is(after.nodes.get("2004"), (await readTree(G.dist, G.second!)).nodes.get("2004"), "2004 is untouched");
});

grown("publish - a remembered file whose cache entry is damaged or missing is simply read again", async () => {
  await writeFile(sourceCachePath(G.dist, G.folder), "{not json");
  const s = await publishQuietly(G.folder, G.dist);
  assert.equal([s.added.length, s.filesRead, s.decoded], [0, 84, 0]);
  await rm(sourceCachePath(G.dist, G.folder));
  const again = await publishQuietly(G.folder, G.dist);
  assert.equal([again.added.length, again.filesRead], [0, 84]);
  // a memory of another folder (a folder renamed, the file copied by hand) is not trusted
  const other = freshDir("grown-moved");
  await cp(G.folder, other, { recursive: true, preserveTimestamps: true });
  await copyFile(sourceCachePath(G.dist, G.folder), sourceCachePath(G.dist, other));
  assert.is((await publishQuietly(other, G.dist)).filesRead, 84);
});

grown("publish - a read-only sources folder (a read-only bind mount) is remembered: the second publish reads no file", async () => {
  const mount = freshDir("grown-read-only");
  await mkdir(mount);
  const bound = spawnSync("mount", ["--bind", "-o", "ro", G.folder, mount], { encoding: "utf8" });
  if (bound.status !== 0) {
    console.log(`  skipped: cannot bind-mount a folder read-only here (${bound.stderr.trim()}); the test needs root`);
    return;
  }
  try {
    const refused = await writeFile(join(mount, "probe"), "").then(() => null, (err: NodeJS.ErrnoException) => err.code);
    assert.is(refused, "EROFS", "the folder is read-only");
    // the file rewritten above is remembered only once its change time is old enough
    const changed = await Promise.all((await readdir(G.folder, { recursive: true })).map(async (f) => (await stat(join(G.folder, f))).ctimeMs));
    await sleep(Math.max(0, Math.max(...changed) + 2100 - Date.now()));
    const dist = freshDir("read-only-dist");
    const first = await publishQuietly(mount, dist);
    assert.equal([first.added.length, first.filesRead], [1, 84]);
    const again = await publishQuietly(mount, dist);
    assert.equal([again.added.length, again.filesRead, again.decoded], [0, 0, 0]);
  } finally {
    spawnSync("umount", [mount]);
  }
});

grown.run();
