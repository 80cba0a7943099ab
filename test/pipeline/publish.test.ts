// Publish pipeline: golden dist, determinism, no-op republish, reuse across versions (append, extend, revise),
// gaps, provenance labels, fail-closed sources, low open-file limits, bounded answers over a long archive.

import { MAX_TEMP } from "../../format/variables.js";
import { execFile, execFileSync } from "node:child_process";
import { copyFile, cp, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { Archive } from "../../format/archive.js";
import { openVersion } from "../../format/versions.js";
import { LocalStorage, nodePlatform } from "../../format/local.js";
import { makeDemoDay, makeLandMask } from "../../pipeline/ingest/demo.js";
import { ObjectStore } from "../../pipeline/store/objects.js";
import { hashFile } from "../../pipeline/files/write.js";
import { writeSiloTiff } from "../../pipeline/ingest/geotiff.js";
import { type PublishOptions, type PublishSummary, publish } from "../../pipeline/publish/publish.js";
import { lockDist } from "../../pipeline/store/lock.js";
import { verifyDist } from "../../pipeline/commands/verify.js";
import { LockError, StoreError } from "../../pipeline/errors.js";
import { dateToDayNumber, dayNumberToDate } from "../../format/dates.js";
import { GRID, type Window } from "../../format/grid.js";
import { sha256Hex } from "../../format/hash.js";
import { type CatalogPointer, type Manifest } from "../../format/catalog.js";
import { CATALOG_FILE, type Ref, objectPath } from "../../format/objects.js";
import { type Dataset } from "../../format/records.js";
import { type DayEntry, type MonthPage, type RasterIndex, type YearPage } from "../../format/version-index.js";
import { dateToUrl } from "../../sources/silo.js";
import { expectFailure, expectPublishError, freshDirs, makeWorkDir, readObject, writeSiloDays } from "../support/helpers.js";
import { type Answer, type Served, assertError, post, readRecords, request, requestFor, withServer } from "../support/server-fixture.js";
import { SOURCE_CACHE_DIR, sourceCachePath } from "../../pipeline/publish/source-cache.js";
import { publishObservations } from "../../pipeline/publish/observations.js";
import { readPublished } from "../../pipeline/store/catalog.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const FIXTURES = fileURLToPath(new URL("../fixtures/", import.meta.url));
/** A new, not yet created path under the temp dir. */
const freshDir = freshDirs(makeWorkDir("publish-test"));

/** Crosses lattice column 256 and row 256: four tiles and four blocks a day. */
const SMALL: Window = [254, 254, 4, 4];
/** Inside one tile: the cheapest day a publish can take. */
const TINY: Window = [300, 300, 4, 4];

async function listObjects(dist: string): Promise<string[]> {
  const out: string[] = [];
  for (const shard of await readdir(join(dist, "objects"))) for (const name of await readdir(join(dist, "objects", shard))) out.push(`objects/${shard}/${name}`);
  return out.sort();
}

function listDays(first: string, count: number): string[] {
  const start = dateToDayNumber(first);
  return Array.from({ length: count }, (_, i) => dayNumberToDate(start + i));
}

/**
 * The value of a cell on a date: one decimal (what SILO files hold), 10.0..44.9 degC, distinct between
 * neighbouring dates and cells; missing (NaN) on a diagonal band. `shift` makes a revised file of the same date.
 */
function cellValue(col: number, row: number, date: string, shift = 0): number {
  if ((col + row) % 7 === 0) return NaN;
  return Math.fround((100 + (dateToDayNumber(date) % 300) + ((col * 7 + row * 3) % 50) + shift) / 10);
}

const memberPath = (date: string) => `${date.slice(0, 4)}/${date.replaceAll("-", "")}.max_temp.tif`;

/** The cells of each date's file, `shift` tenths up in a revised one. */
const cells = (shift = 0) => (col: number, row: number, date: string) => cellValue(col, row, date, shift);

function publishQuietly(sources: string, dist: string, options: Partial<PublishOptions> = {}): Promise<PublishSummary> {
  return publish({ sources, dist, observations: false, log: () => {}, ...options });
}

async function listTree(root: string, dir = root): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await listTree(root, p)));
    else out.push(relative(root, p).split("\\").join("/"));
  }
  return out.sort();
}

async function readPointer(dist: string): Promise<CatalogPointer> {
  return JSON.parse(await readFile(join(dist, CATALOG_FILE), "utf8")) as CatalogPointer;
}

async function findRecord(dist: string, id: string): Promise<Dataset> {
  const found = (await readRecords(dist)).find((d) => d.id === id);
  if (!found) throw new Error(`no ${id} in ${dist}`);
  return found;
}

/** A raster version's month refs (by YYYY-MM) and day entries (by date), read from its index tree. */
async function readTree(dist: string, record: Dataset): Promise<{ months: Map<string, string>; days: Map<string, DayEntry> }> {
  const index = await readObject<RasterIndex>(dist, record.metadata.index);
  const months = new Map<string, string>();
  const days = new Map<string, DayEntry>();
  for (const yearNode of index.years) {
    for (const monthNode of (await readObject<YearPage>(dist, yearNode.ref)).months) {
      months.set(monthNode.key, monthNode.ref.sha256);
      for (const day of (await readObject<MonthPage>(dist, monthNode.ref)).days) days.set(day.date, day);
    }
  }
  return { months, days };
}

/** Runs the CLI (under a soft open-file limit when given), as a maintainer would. */
function runCli(args: string[], openFiles?: number): Promise<{ code: number; stdout: string; stderr: string }> {
  const script = `${openFiles ? `ulimit -n ${openFiles} && ` : ""}exec node_modules/.bin/tsx pipeline/cli.ts "$@"`;
  return new Promise((resolve) => {
    execFile("bash", ["-c", script, "cli", ...args], { cwd: REPO, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      const code = err ? ((err as { code?: number }).code ?? 1) : 0;
      resolve({ code: typeof code === "number" ? code : 1, stdout, stderr });
    });
  });
}

/** A query over a window's cells on [start, end], optionally pinned to a version. */
function queryBody(window: Window, start: string, end: string, version?: string) {
  const [col, row, width, height] = window;
  return requestFor({ col, row, width, height }, start, end, version ? { dataset_version: version } : {});
}

async function query(served: Served, window: Window, start: string, end: string, version?: string): Promise<Answer> {
  return post(served, "/api/v1/data/query", queryBody(window, start, end, version));
}

/** Values of the answer's rows in order (date, north to south, west to east), null for missing. */
function answerValues(answer: Answer): (number | null)[] {
  assert.is(answer.status, 200, answer.text);
  return answer.json().data.map((r: { value: number | null }) => r.value);
}

function expectValues(window: Window, dates: string[], shift = 0): (number | null)[] {
  const [c0, r0, w, h] = window;
  const out: (number | null)[] = [];
  for (const date of dates) {
    for (let r = r0; r < r0 + h; r++) {
      for (let c = c0; c < c0 + w; c++) {
        const v = cellValue(c, r, date, shift);
        out.push(Number.isNaN(v) ? null : Number(v.toPrecision(6)));
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------

const GOLDEN_DATES = ["2004-02-28", "2004-02-29", "2004-03-01"];
const GOLDEN_PUBLISHED_AT = "2026-01-01T00:00:00Z";
const GOLDEN_ID = "silo-tmax-20040228-20040301-15d6dbd5138cf1d8";
// Every object of the golden dist: 3 day pieces, 2 month pages, 1 year page, 2 series pieces (February, closed,
// and the first of March; spans this short list their sources in the index root), the index root and 1 catalog
// leaf (each with its brotli copy: they pass 1 kB), the catalog root and the publish manifest. Day-piece and series-piece bytes come from Node's
// bundled zlib (DEFLATE level 6, Z_RLE): a Node whose zlib compresses differently changes these (never the version id,
// which hashes cells). Records carry metadata.built_from, changes and citation: those changed the catalog leaf, the
// catalog root and the manifest, and nothing of the version (index root, pages, pieces, spans, id). Since the five
// variables, a record says what its variable is (metadata.variable), and the source GeoTIFFs are written with DEFLATE
// strips (new sha256 in the month pages and the index root): the day pieces, the series pieces and the id stayed.
// climate-dist-3 changed every object (pieces' entries name a pack and an offset, series headers list a lineage, the
// format id is in every JSON object); the id stayed. The .br copies' quality 5 (was 9) changed the manifest alone.
// With every SILO variable, a record's metadata.variable says SILO's first date of it (first_date): the catalog
// leaf, the catalog root and the manifest changed, nothing of the version. climate-dist-4 changed every object again
// (the Tenths codec's predicted planes under DEFLATE Z_RLE, series chunks of 8192 values in groups of 4 x 4, the format id); the id stayed.
const GOLDEN_FILES = [
  ".publish.lock",
  "catalog.json",
  "objects/00/009839f2bc4fd0e73e4aa9c101f37f86ff23e4b2b6dabfe010e405b1ae4bc1b4.json",
  "objects/1f/1f3cc4307b84c2049cecf68654074c75cedfcdf5534af6ae60c641a9bce5e85a.json",
  "objects/45/4519897d3d8645fa5838ff35d5a2dcc43119ee4b36ded173d8ec6637cdef6d20.day",
  "objects/51/51519c79d186ad0c207e8c135c1342abffbd240aa24e9bc086c739f91b720b87.json",
  "objects/55/554b59425f73aea2b49c34f78bbdd00b7cf5ec430a5aa3c3344e73e330011b8e.json",
  "objects/79/79bccea6607d9398f3bdec27e8b91f08b159ad1917f351740df24407786faf7d.json",
  "objects/79/79bccea6607d9398f3bdec27e8b91f08b159ad1917f351740df24407786faf7d.json.br",
  "objects/7c/7c3b235bb0373548d8d83652c254cf3812ce863253b32363e50660c50ce9fdff.json",
  "objects/ad/ad14d4861175b7216dc6815e84e7ab54a58439240336bd145570df30e8d9b226.ser",
  "objects/b2/b2c074f1b94f4aef9c661132b4810d966cb5e74e85b65698f64a662a16752ff3.day",
  "objects/be/be6db55c60f461765219160b012f611ffa50b8a228002d5e327e93a295517088.json",
  "objects/be/be6db55c60f461765219160b012f611ffa50b8a228002d5e327e93a295517088.json.br",
  "objects/ca/ca78e713ff316269981b7528dda7380e88676f88e702abc2434bcf98a7f9c0ed.day",
  "objects/cb/cb5be8d02ac5a63ee9a71a9a1bec0cef87099d5399c162dfa966729fd8788246.ser",
];
const GOLDEN_MANIFEST_SHA256 = "7c3b235bb0373548d8d83652c254cf3812ce863253b32363e50660c50ce9fdff";
const GOLDEN_CATALOG_SHA256 = "7d3df67a4256a5beb849d8ad82e0266910c6475d4f55afb3700416830865ae4a";

const GOLDEN_CITATION =
  "SILO daily maximum temperature (files supplied by the maintainer). Version silo-tmax-20040228-20040301-15d6dbd5138cf1d8, " +
  "content SHA-256 15d6dbd5138cf1d89c99422e6a7e1ddf9dc112af639315abb5ae5d1209ad79d5, published 2026-01-01T00:00:00Z. " +
  "Queensland Government SILO; interpolated Bureau of Meteorology and other observations. Files supplied by the maintainer: " +
  "the pipeline did not fetch them and cannot vouch for their origin; each source entry carries the sha256 of the file published. License: CC-BY-4.0.";

const golden = suite("golden dist");
let goldenSources = "";
let goldenDist = "";

golden.before(async () => {
  goldenSources = freshDir("golden-sources");
  goldenDist = freshDir("golden-dist");
  await writeSiloDays(goldenSources, GOLDEN_DATES, SMALL, cells());
  // without the explorer: the golden dist pins the data format, not the explorer's bundle
  await publishQuietly(goldenSources, goldenDist, { publishedAt: GOLDEN_PUBLISHED_AT, explorer: false });
});

/** The publish's memory of its sources folder: a writer-only file of the dist, no part of any version (docs/format.md §1). */
const isMemory = (path: string) => path.startsWith(`${SOURCE_CACHE_DIR}/`);

golden("publish - three small days give exactly these files, this publish manifest and this catalog.json", async () => {
  const all = await listTree(goldenDist);
  // beside the data, the memory of the sources folder (named by its path, so it is no part of the golden list)
  assert.equal(all.filter(isMemory), [relative(goldenDist, sourceCachePath(goldenDist, goldenSources))]);
  const files = all.filter((f) => !isMemory(f));
  const pointer = await readPointer(goldenDist);
  // a deliberate change of the format: PRINT_GOLDEN=1 prints the new values to paste above, after reading why they changed
  if (process.env.PRINT_GOLDEN) console.log(JSON.stringify({ files, manifest: pointer.manifest.sha256, catalog: sha256Hex(await readFile(join(goldenDist, CATALOG_FILE))) }, null, 2));
  assert.equal(files, GOLDEN_FILES);
  assert.is(pointer.manifest.sha256, GOLDEN_MANIFEST_SHA256);
  assert.is(sha256Hex(await readFile(join(goldenDist, CATALOG_FILE))), GOLDEN_CATALOG_SHA256);
  const records = await readRecords(goldenDist);
  assert.equal(records.map((d) => d.id), [GOLDEN_ID]);
  const { built_from, changes, citation } = records[0].metadata;
  assert.equal({ built_from, changes }, { built_from: null, changes: { added: [[GOLDEN_DATES[0], GOLDEN_DATES[2]]], revised: [], removed: [], exact: true } });
  if (process.env.PRINT_GOLDEN) console.log(JSON.stringify(citation));
  assert.is(citation, GOLDEN_CITATION);
  // the manifest lists every file the publish wrote but itself, catalog.json and the lock, with sizes and hashes
  const manifest = await readObject<Manifest>(goldenDist, pointer.manifest);
  assert.is(manifest.previous, null);
  const manifestPath = objectPath(pointer.manifest.sha256, "json");
  assert.equal(manifest.files.map((f) => f.path), files.filter((f) => f !== CATALOG_FILE && f !== manifestPath && f !== ".publish.lock"));
  for (const f of manifest.files) assert.is(await hashFile(join(goldenDist, f.path)), f.sha256, f.path);
});

golden("publish - the same sources and publish time give a byte-identical dist in another folder", async () => {
  const other = freshDir("golden-again");
  const s = await publishQuietly(goldenSources, other, { publishedAt: GOLDEN_PUBLISHED_AT, explorer: false });
  assert.equal(s.added.map((d) => d.id), [GOLDEN_ID]);
  const files = await listTree(other);
  assert.equal(files, await listTree(goldenDist));
  // the memory records when it looked at the files, so it may differ: the data may not
  for (const f of files.filter((f) => !isMemory(f))) assert.ok((await readFile(join(other, f))).equals(await readFile(join(goldenDist, f))), f);
});

golden("publish - day pieces hold the source cells exactly, missing cells as NaN", async () => {
  const archive = new Archive(new LocalStorage(goldenDist), nodePlatform);
  const [record] = await readRecords(goldenDist);
  const view = await openVersion(archive, record);
  assert.is(view.kind, "raster");
  if (view.kind !== "raster") return;
  assert.equal([record.period_start, record.period_end, record.metadata.days, record.metadata.tiles], ["2004-02-28", "2004-03-01", 3, 12]);
  for (const date of GOLDEN_DATES) {
    const day = (await view.findDay(date))!;
    assert.equal(day.window, SMALL);
    const cells = await archive.readCells(day, SMALL);
    const [c0, r0, w] = SMALL;
    let missing = 0;
    cells.forEach((v, i) => {
      const expected = cellValue(c0 + (i % w), r0 + Math.floor(i / w), date);
      if (Number.isNaN(expected)) missing++;
      assert.ok(Number.isNaN(expected) ? Number.isNaN(v) : v === expected, `${date} cell ${i}: ${v}, expected ${expected}`);
    });
    assert.is(day.missing, missing);
    assert.ok(missing > 0, "the fixture has missing cells");
    assert.equal(day.sources, [{ sha256: await hashFile(join(goldenSources, memberPath(date))), member_path: memberPath(date) }]);
  }
});

golden("publish - a read once (decoded straight into its target) gives a cached read's cells, some blocks cached already", async () => {
  const [record] = await readRecords(goldenDist);
  const [c0, r0, w, h] = SMALL;
  // a target wider than the area, the area's rows at an offset into it, as a Zarr chunk or an OPeNDAP body takes them
  const stride = w + 3;
  for (const cachedFirst of [false, true]) {
    const archive = new Archive(new LocalStorage(goldenDist), nodePlatform);
    const view = await openVersion(archive, record);
    if (view.kind !== "raster") return assert.unreachable("a raster version");
    for (const date of GOLDEN_DATES) {
      const day = (await view.findDay(date))!;
      // the area's upper-left blocks in the block cache before the read once
      if (cachedFirst) await archive.readCells(day, [c0, r0, 2, 2]);
      const floats = new Float32Array(2 + stride * h);
      const words = new Float32Array(2 + stride * h);
      await archive.readCells(day, SMALL, { out: floats, at: 2, stride }, "once");
      await archive.readCells(day, SMALL, { out: words, at: 2, stride, bigEndian: true }, "once");
      const bits = new Uint32Array(words.buffer);
      const wire = new DataView(words.buffer);
      let checked = 0;
      for (let i = 0; i < w * h; i++) {
        const at = 2 + Math.floor(i / w) * stride + (i % w);
        const expected = cellValue(c0 + (i % w), r0 + Math.floor(i / w), date);
        const label = `${date} cell ${i}${cachedFirst ? ", some blocks cached" : ""}`;
        assert.ok(Number.isNaN(expected) ? Number.isNaN(floats[at]) : floats[at] === expected, `${label}: ${floats[at]}, expected ${expected}`);
        if (Number.isNaN(expected)) assert.is(bits[at], 0x0000c07f, `${label}: the canonical NaN, big-endian`);
        else assert.is(wire.getFloat32(at * 4), expected, label);
        checked++;
      }
      assert.is(checked, w * h);
      // nothing outside the area's cells was written
      assert.equal([floats[0], floats[1], floats[2 + w], bits[0], bits[2 + w]], [0, 0, 0, 0, 0]);
    }
  }
});

golden.run();

// ---------------------------------------------------------------------------------------------------------------

const repeat = suite("determinism and republish");
let repeatDist = "";

repeat("publish - raster and observations: same ids and byte-identical version objects in two dists; only catalog pieces carry the publish time", async () => {
  const a = freshDir("with-observations-a");
  const b = freshDir("with-observations-b");
  const sa = await publish({ sources: goldenSources, dist: a, log: () => {}, publishedAt: "2026-01-01T00:00:00Z" });
  const sb = await publish({ sources: goldenSources, dist: b, log: () => {}, publishedAt: "2026-02-02T00:00:00Z" });
  assert.equal(sa.added.map((d) => d.id), sb.added.map((d) => d.id));
  assert.equal(sa.added.map((d) => d.dataset_key), ["silo-tmax", "noaa-weather"]);
  assert.is(sa.added[0].id, GOLDEN_ID);
  assert.is(sa.observations, 11688);
  assert.equal([sa.days, sa.decoded, sa.reused, sa.tiles], [3, 3, 0, 12]);
  // content-addressed: equal names are equal bytes, so the lists say what differs
  const filesA = await listTree(a);
  const filesB = await listTree(b);
  const onlyA = filesA.filter((f) => !filesB.includes(f));
  const onlyB = filesB.filter((f) => !filesA.includes(f));
  const catalogPieces = async (dist: string) => {
    const pointer = await readPointer(dist);
    const root = await readObject<{ leaves: { ref: Ref }[] }>(dist, pointer.catalog);
    const paths = [pointer.catalog, pointer.manifest, ...root.leaves.map((l) => l.ref)].map((r) => objectPath(r.sha256, "json"));
    // and the brotli copies a static host serves beside them
    return [...paths, ...paths.map((p) => `${p}.br`).filter((p) => filesOf(dist).includes(p))].sort();
  };
  const filesOf = (dist: string) => (dist === a ? filesA : filesB);
  assert.equal(onlyA, await catalogPieces(a));
  assert.equal(onlyB, await catalogPieces(b));
  for (const f of filesA.filter((f) => filesB.includes(f) && f !== CATALOG_FILE && !isMemory(f))) {
    assert.ok((await readFile(join(a, f))).equals(await readFile(join(b, f))), f);
  }
  repeatDist = a;
});

repeat("publish - publishing the same sources again is a no-op: nothing written, catalog.json byte-identical", async () => {
  const before = await readFile(join(repeatDist, CATALOG_FILE));
  const files = await listTree(repeatDist);
  const again = await publish({ sources: goldenSources, dist: repeatDist, log: () => {}, publishedAt: "2026-03-03T00:00:00Z" });
  assert.is(again.added.length, 0);
  assert.equal(again.unchanged.map((d) => d.dataset_key).sort(), ["noaa-weather", "silo-tmax"]);
  assert.equal([again.objectsWritten, again.bytesWritten, again.decoded, again.reused], [0, 0, 0, 3]);
  assert.ok(before.equals(await readFile(join(repeatDist, CATALOG_FILE))));
  assert.equal(await listTree(repeatDist), files);
  const out = await runCli(["publish", "--sources", goldenSources, "--dist", repeatDist, "--threads", "1"]);
  assert.is(out.code, 0, out.stderr);
  assert.match(out.stdout, /nothing to publish: .* already holds silo-tmax-20040228-20040301-[0-9a-f]{16}, noaa-weather-/);
  assert.ok(before.equals(await readFile(join(repeatDist, CATALOG_FILE))));
  // THREADS (make publish) is --threads: a whole number of at least one
  const refused = await runCli(["publish", "--sources", goldenSources, "--dist", repeatDist, "--threads", "0"]);
  assert.is(refused.code, 1, refused.stdout);
  assert.match(refused.stderr, /--threads: "0" is not a number of at least 1/);
});

repeat("publish - the observation table a dist holds is found by its source's sha256: no row parsed, no id computed, nothing written", async () => {
  const previous = (await readPublished(repeatDist))!;
  try {
    const first = async (keep: (record: Dataset) => boolean) => (await previous.listRecords(null, 1, keep)).records[0] ?? null;
    const nothingWritten = new Proxy({}, { get: () => assert.unreachable("the stage writes nothing") }) as ObjectStore;
    const asked: string[] = [];
    const found = await publishObservations(nothingWritten, { first, find: async (id) => (asked.push(id), null) });
    assert.ok("published" in found && found.published.dataset_key === "noaa-weather");
    assert.equal(asked, [], "the table's id was not computed: its rows were not read");
    // a dist without a version of these bytes: the rows are read and the id computed, which finds the same version
    const again = await publishObservations(nothingWritten, { first: async () => null, find: async (id) => (asked.push(id), "published" in found ? found.published : null) });
    assert.ok("published" in again);
    assert.equal(asked, ["published" in found ? found.published.id : ""]);
  } finally {
    await previous.archive.storage.close?.();
  }
});

repeat.run();

// ---------------------------------------------------------------------------------------------------------------

const failing = suite("fail closed");

const badCases: [string, string][] = [
  ["bad-crs.tif", "CRS is EPSG:4283, not the SILO grid's EPSG:4326"],
  ["bad-origin.tif", "is not on the SILO 0.05 degree grid"],
  ["bad-bands.tif", "has 2 bands"],
  ["bad-truncated.tif", "truncated or corrupt GeoTIFF"],
  ["bad-implausible.tif", "value 75.5 at cell"],
];
for (const [fixture, reason] of badCases) {
  failing(`publish - ${fixture} stops the publish, names the file and the reason, and publishes nothing`, async () => {
    const dist = freshDir(`bad-dist-${fixture}`);
    await cp(goldenDist, dist, { recursive: true });
    const catalogBefore = await readFile(join(dist, CATALOG_FILE));
    const sources = freshDir(`bad-sources-${fixture}`);
    await writeSiloDays(sources, ["2004-03-02"], SMALL, cells());
    await copyFile(join(FIXTURES, fixture), join(sources, "2004", "20040303.max_temp.tif"));
    const err = await expectPublishError(publishQuietly(sources, dist));
    assert.is(err.file, join(sources, "2004", "20040303.max_temp.tif"));
    assert.is(err.stage, "decode");
    assert.ok(err.reason.includes(reason), err.reason);
    assert.is(err.variable?.silo, "max_temp", "the refused file's variable, typed (make update publishes the others)");
    assert.ok(catalogBefore.equals(await readFile(join(dist, CATALOG_FILE))));
    // the published state is the golden one, and what the failed run wrote is gone
    const report = await verifyDist(dist);
    assert.equal(report.problems, []);
    assert.equal(report.unlisted, []);
    assert.equal(report.versions.map((v) => [v.id, v.problems]), [[GOLDEN_ID, []]]);
    assert.is(await readFile(join(dist, ".publish.lock"), "utf8"), "", "the lock is free again: its file describes no holder");
  });
}

failing("publish - objects a killed publish left behind are listed by the next manifest that uses them", async () => {
  const dist = freshDir("debris-dist");
  await cp(goldenDist, dist, { recursive: true });
  const sources = freshDir("debris-sources");
  await writeSiloDays(sources, [...GOLDEN_DATES, "2004-03-02"], SMALL, cells());
  // a publish killed after writing the new day's piece: the object exists, newer than catalog.json, in no manifest
  const scratch = freshDir("debris-scratch");
  await publishQuietly(sources, scratch);
  const debris = await listObjects(scratch);
  const before = new Set(await listObjects(dist));
  const leftover = debris.filter((p) => p.endsWith(".day") && !before.has(p));
  assert.is(leftover.length, 1);
  await mkdir(join(dist, leftover[0], ".."), { recursive: true });
  await copyFile(join(scratch, leftover[0]), join(dist, leftover[0]));
  assert.equal((await verifyDist(dist)).unlisted, [leftover[0]]);
  await publishQuietly(sources, dist);
  const report = await verifyDist(dist);
  assert.equal(report.unlisted, [], "the new manifest lists the piece the new version uses");
  assert.equal(report.problems, []);
});

failing("publish - a folder with no SILO files, or a file named for an impossible date, stops with a message", async () => {
  const empty = freshDir("empty");
  await mkdir(empty, { recursive: true });
  let err = await expectPublishError(publishQuietly(empty, freshDir("empty-dist")));
  assert.is(err.stage, "discover");
  assert.match(err.reason, /no SILO daily files \(YYYYMMDD.<variable>.tif\) or annual files/);
  assert.is(err.variable, null, "a folder is no one variable's file");
  const wrongDay = freshDir("wrong-day");
  await writeSiloDays(wrongDay, ["2003-02-28"], SMALL, cells());
  await copyFile(join(wrongDay, memberPath("2003-02-28")), join(wrongDay, "20030229.max_temp.tif"));
  err = await expectPublishError(publishQuietly(wrongDay, freshDir("wrong-day-dist")));
  assert.equal([err.file, err.stage, err.reason, err.variable?.silo], ["20030229.max_temp.tif", "discover", "2003-02-29 is not a calendar date", "max_temp"]);
});

failing("publish - a folder without catalog.json is a new dist; a damaged catalog.json stops the publish, naming make verify", async () => {
  const dist = freshDir("damaged-catalog");
  await mkdir(dist, { recursive: true });
  await writeFile(join(dist, CATALOG_FILE), '{"format": "climate-dist-2", ');
  const err = await expectFailure(publishQuietly(goldenSources, dist), StoreError);
  assert.equal([err.file, err.stage], [join(dist, CATALOG_FILE), "catalog"]);
  assert.match(err.reason, new RegExp(`^${join(dist, CATALOG_FILE)}: is not JSON \\(.+\\); republish with \`make publish\`; run \`make verify DIST=${dist}\`$`));
  assert.equal(await readdir(dist), [CATALOG_FILE, ".publish.lock"].sort());
  await rm(join(dist, CATALOG_FILE));
  const s = await publishQuietly(goldenSources, dist);
  assert.equal(s.unchanged, []);
  assert.is(s.added.length, 1);
});

failing("publish - an object whose bytes do not match its name is reported as damage, never overwritten", async () => {
  const root = freshDir("store");
  const store = new ObjectStore(root);
  const ref = await store.put("one", "json");
  assert.equal(await store.put("one", "json"), ref);
  assert.is(store.added.length, 1);
  const path = objectPath(ref.sha256, "json");
  await writeFile(join(root, path), "two");
  const err = await expectFailure(store.put("one", "json"), StoreError);
  assert.equal([err.file, err.stage], [path, "write"]);
  assert.match(err.reason, /do not match its name: the dist is damaged/);
  assert.is(await readFile(join(root, path), "utf8"), "two");
});

failing("publish - one writer at a time per dist, also within one process; a lock file naming a live process that holds no lock is taken", async () => {
  const dist = freshDir("locked");
  await cp(goldenDist, dist, { recursive: true });
  const release = await lockDist(dist, "prune");
  const err = await expectFailure(publishQuietly(goldenSources, dist), LockError);
  assert.is(err.stage, "lock");
  assert.match(err.reason, new RegExp(`^another prune \\(pid ${process.pid} on host [^ ]+, since [0-9T:.-]+Z: .+\\) is writing this dist; waited 0 s for it \\(LOCK_WAIT\\)\\. Run make publish again`));
  await release();
  // what the PID lock of old left behind: a number naming this (live) process, which the kernel's lock ignores
  await writeFile(join(dist, ".publish.lock"), String(process.pid));
  const s = await publishQuietly(goldenSources, dist);
  assert.equal(s.unchanged.map((d) => d.id), [GOLDEN_ID]);
  assert.is(await readFile(join(dist, ".publish.lock"), "utf8"), "");
});

failing("verify - names a day piece with a flipped byte and a missing month page, in the files and in the version", async () => {
  const dist = freshDir("damaged");
  await cp(goldenDist, dist, { recursive: true });
  assert.equal((await verifyDist(dist)).problems, []);
  const [record] = await readRecords(dist);
  const { days, months } = await readTree(dist, record);
  const piece = objectPath(days.get("2004-02-29")!.piece.sha256, "day");
  const bytes = await readFile(join(dist, piece));
  bytes[bytes.length - 1] ^= 1; // in the last block, not the header
  await writeFile(join(dist, piece), bytes);
  const month = objectPath(months.get("2004-03")!, "json");
  await rm(join(dist, month));
  const report = await verifyDist(dist);
  assert.ok(report.problems.some((p) => p.startsWith(`${piece}: sha256 `)), report.problems.join("\n"));
  assert.ok(report.problems.includes(`${month}: missing`), report.problems.join("\n"));
  const versionProblems = report.versions.flatMap((v) => v.problems);
  assert.ok(versionProblems.some((p) => p.startsWith("2004-02-29: ") && p.includes("does not match its sha256")), versionProblems.join("\n"));
  assert.ok(versionProblems.some((p) => p.includes(month)), versionProblems.join("\n"));
});

failing.run();

// ---------------------------------------------------------------------------------------------------------------

const fullGrid = suite("full grid");

fullGrid("publish - full-grid GDAL COGs (DEFLATE + floating-point predictor), 29 February included, keep every cell", async () => {
  const dir = freshDir("full-grid");
  const mask = makeLandMask();
  const dates = ["2004-02-28", "2004-02-29"];
  const values = dates.map((d) => makeDemoDay(d.replace("2004-02", "2003-01"), mask));
  await mkdir(join(dir, "src", "2004"), { recursive: true });
  for (const [i, date] of dates.entries()) {
    const plain = join(dir, `plain-${i}.tif`);
    await writeSiloTiff(plain, [0, 0, GRID.width, GRID.height], values[i]);
    execFileSync("gdal_translate", ["-q", "-of", "COG", "-co", "COMPRESS=DEFLATE", "-co", "PREDICTOR=FLOATING_POINT", plain, join(dir, "src", memberPath(date))]);
  }
  const dist = join(dir, "dist");
  const s = await publishQuietly(join(dir, "src"), dist);
  assert.equal([s.days, s.decoded, s.tiles], [2, 2, 24]);
  const record = s.added[0];
  assert.match(record.id, /^silo-tmax-20040228-20040229-[0-9a-f]{16}$/);
  const archive = new Archive(new LocalStorage(dist), nodePlatform);
  const view = await openVersion(archive, record);
  if (view.kind !== "raster") return assert.unreachable("a raster version");
  for (const [i, date] of dates.entries()) {
    const day = (await view.findDay(date))!;
    assert.equal(day.window, [0, 0, GRID.width, GRID.height]);
    const cells = await archive.readCells(day, day.window);
    let differ = 0;
    for (let k = 0; k < cells.length; k++) {
      if (!(Number.isNaN(values[i][k]) ? Number.isNaN(cells[k]) : cells[k] === values[i][k])) differ++;
    }
    assert.is(differ, 0, `${date}: ${differ} cells differ`);
    assert.is(day.missing, values[i].filter(Number.isNaN).length);
  }
  assert.equal((await verifyDist(dist)).versions.map((v) => v.problems), [[]]);
});

fullGrid.run();

// ---------------------------------------------------------------------------------------------------------------

// Seven days across a month end: days 1..6 in January, day 7 in February (so extending with it leaves January whole).
const ARCHIVE_DATES = listDays("2004-01-26", 7);
const published = (n: number) => `2026-01-0${n}T00:00:00Z`;

const archive = suite("append, extend, revise");
const A = {
  dist: "",
  /** the folder of days 1..5 */
  firstFolder: "",
  ids: [] as string[],
  /** answers before the later publishes: a pinned query of version 1, its record */
  pinnedQuery: null as Answer | null,
  inspect: null as Answer | null,
};

/** The paths the newest publish added, from its manifest. */
async function newestManifestPaths(dist: string): Promise<string[]> {
  return (await readObject<Manifest>(dist, (await readPointer(dist)).manifest)).files.map((f) => f.path);
}

archive.before(async () => {
  A.dist = freshDir("archive-dist");
});

archive("publish - days 1..5 make a first version; its pinned answers are kept for comparison", async () => {
  const sources = (A.firstFolder = freshDir("archive-1-5"));
  await writeSiloDays(sources, ARCHIVE_DATES.slice(0, 5), SMALL, cells());
  const s = await publishQuietly(sources, A.dist, { publishedAt: published(1) });
  assert.equal([s.days, s.decoded, s.reused, s.added.length], [5, 5, 0, 1]);
  A.ids.push(s.added[0].id);
  await withServer(A.dist, async (served) => {
    A.pinnedQuery = await query(served, SMALL, ARCHIVE_DATES[0], ARCHIVE_DATES[4], A.ids[0]);
    assert.equal(answerValues(A.pinnedQuery), expectValues(SMALL, ARCHIVE_DATES.slice(0, 5)));
    A.inspect = await request(served, `/api/v1/datasets/${A.ids[0]}`);
    assert.is(A.inspect.status, 200);
  });
});

archive("publish - a folder holding the same five files plus day 6 makes a new version that decodes 1, reuses 5 and shares their pieces", async () => {
  const sources = freshDir("archive-1-6");
  await cp(A.firstFolder, sources, { recursive: true });
  await writeSiloDays(sources, [ARCHIVE_DATES[5]], SMALL, cells());
  const manifestBefore = (await readPointer(A.dist)).manifest;
  const s = await publishQuietly(sources, A.dist, { publishedAt: published(2) });
  assert.equal([s.days, s.decoded, s.reused, s.added.length], [6, 1, 5, 1]);
  A.ids.push(s.added[0].id);
  assert.is.not(A.ids[1], A.ids[0]);
  const v1 = await readTree(A.dist, await findRecord(A.dist, A.ids[0]));
  const v2 = await readTree(A.dist, await findRecord(A.dist, A.ids[1]));
  for (const date of ARCHIVE_DATES.slice(0, 5)) assert.equal(v2.days.get(date), v1.days.get(date), date);
  // written: the new day piece; January, now closed, as one series span (its piece; a month's span lists its
  // sources in the index root); January's month page, the year page, the index root, a catalog leaf, the catalog root and the publish
  // manifest (which lists the others and chains to the previous one)
  const added = await newestManifestPaths(A.dist);
  assert.equal(added.filter((p) => p.endsWith(".day")), [objectPath(v2.days.get(ARCHIVE_DATES[5])!.piece.sha256, "day")]);
  assert.is(added.filter((p) => p.endsWith(".ser")).length, 1);
  assert.is(added.filter((p) => !p.endsWith(".br")).length, 7, `objects, besides their .br copies: ${added.join(" ")}`);
  assert.is(s.objectsWritten, 8);
  assert.equal([s.series.built, s.series.reused], [1, 0]);
  assert.equal((await readObject<Manifest>(A.dist, (await readPointer(A.dist)).manifest)).previous, manifestBefore);
});

archive("publish - extending with a folder of only day 7 holds days 1..7, decodes 1 and takes untouched months whole", async () => {
  const sources = freshDir("archive-7");
  await writeSiloDays(sources, [ARCHIVE_DATES[6]], SMALL, cells());
  const s = await publishQuietly(sources, A.dist, { extend: true, publishedAt: published(3) });
  assert.equal([s.days, s.decoded, s.reused, s.added.length], [7, 1, 0, 1]);
  const record = s.added[0];
  A.ids.push(record.id);
  assert.equal([record.period_start, record.period_end, record.metadata.days, record.metadata.gaps], [ARCHIVE_DATES[0], ARCHIVE_DATES[6], 7, []]);
  const v2 = await readTree(A.dist, await findRecord(A.dist, A.ids[1]));
  const v3 = await readTree(A.dist, record);
  assert.is(v3.months.get("2004-01"), v2.months.get("2004-01"), "January's month page is the same object");
  assert.equal([...v3.days.keys()], ARCHIVE_DATES);
  const added = await newestManifestPaths(A.dist);
  assert.equal(added.filter((p) => p.endsWith(".day")), [objectPath(v3.days.get(ARCHIVE_DATES[6])!.piece.sha256, "day")]);
  assert.not.ok(added.includes(objectPath(v3.months.get("2004-01")!, "json")));
  // day piece, February's series piece, February page, year page, index root, leaf, root, manifest; January's
  // span is taken whole
  assert.is(s.objectsWritten, 8);
  assert.equal([s.series.built, s.series.reused], [1, 1]);
});

archive("publish - extending with a revised day 3 makes a new version with the new cells; older versions keep the old", async () => {
  const sources = freshDir("archive-revised-3");
  await writeSiloDays(sources, [ARCHIVE_DATES[2]], SMALL, cells(7));
  const s = await publishQuietly(sources, A.dist, { extend: true, publishedAt: published(4) });
  assert.equal([s.days, s.decoded, s.reused, s.added.length], [7, 1, 0, 1]);
  A.ids.push(s.added[0].id);
  assert.is(new Set(A.ids).size, 4);
  const v3 = await readTree(A.dist, await findRecord(A.dist, A.ids[2]));
  const v4 = await readTree(A.dist, s.added[0]);
  for (const date of ARCHIVE_DATES) {
    if (date === ARCHIVE_DATES[2]) {
      assert.is.not(v4.days.get(date)!.cells, v3.days.get(date)!.cells);
      assert.is.not(v4.days.get(date)!.piece.sha256, v3.days.get(date)!.piece.sha256);
      assert.is(v4.days.get(date)!.sources[0].sha256, await hashFile(join(sources, memberPath(date))));
    } else assert.equal(v4.days.get(date), v3.days.get(date), date);
  }
  assert.is(v4.months.get("2004-02"), v3.months.get("2004-02"), "February is untouched by the revision");
  // only the newest version is a query candidate: it shadows the other three
  assert.equal((await readPointer(A.dist)).candidates.map((c) => c.id), [A.ids[3]]);
});

archive("publish - each record names the version it was built from and the dates it added and revised, as ranges", async () => {
  const notes = async (id: string) => {
    const { built_from, changes } = (await findRecord(A.dist, id)).metadata;
    return { built_from, changes };
  };
  const none: [string, string][] = [];
  const day = (i: number): [string, string][] => [[ARCHIVE_DATES[i], ARCHIVE_DATES[i]]];
  assert.equal(await notes(A.ids[0]), { built_from: null, changes: { added: [[ARCHIVE_DATES[0], ARCHIVE_DATES[4]]], revised: none, removed: none, exact: true } });
  assert.equal(await notes(A.ids[1]), { built_from: A.ids[0], changes: { added: day(5), revised: none, removed: none, exact: true } });
  assert.equal(await notes(A.ids[2]), { built_from: A.ids[1], changes: { added: day(6), revised: none, removed: none, exact: true } });
  assert.equal(await notes(A.ids[3]), { built_from: A.ids[2], changes: { added: none, revised: day(2), removed: none, exact: true } });
  // the citation names the version, its content hash and when it was published
  const record = await findRecord(A.dist, A.ids[3]);
  assert.ok(String(record.metadata.citation).includes(`Version ${A.ids[3]}, content SHA-256 ${record.content_sha256}, published ${published(4)}.`));
});

archive("verify - every version checks out, shared objects counted once and reported as shared", async () => {
  const report = await verifyDist(A.dist);
  assert.equal(report.problems, []);
  assert.equal(report.unlisted, []);
  assert.is(report.manifests, 4);
  assert.equal(report.versions.map((v) => v.id).sort(), [...A.ids].sort());
  assert.equal(report.versions.map((v) => v.problems), [[], [], [], []]);
  const days = new Map(report.versions.map((v) => [v.id, v.days]));
  assert.equal(A.ids.map((id) => days.get(id)), [5, 6, 7, 7]);
  report.versions.slice(1).forEach((v) => assert.ok(v.shared > 0, `${v.id} shares objects with a version above`));
});

archive("server - old versions answer byte-identically; a query over days published apart is answered by the newest version holding both", async () => {
  await withServer(A.dist, async (served) => {
    const pinned = await query(served, SMALL, ARCHIVE_DATES[0], ARCHIVE_DATES[4], A.ids[0]);
    assert.is(pinned.status, 200);
    assert.ok(pinned.bytes.equals(A.pinnedQuery!.bytes), "pinned query of version 1 unchanged");
    assert.ok((await request(served, `/api/v1/datasets/${A.ids[0]}`)).bytes.equals(A.inspect!.bytes), "record of version 1 unchanged");
    const apart = await query(served, SMALL, ARCHIVE_DATES[5], ARCHIVE_DATES[6]);
    assert.is(apart.headers["service-dataset-version"], A.ids[3]);
    assert.equal(answerValues(apart), expectValues(SMALL, ARCHIVE_DATES.slice(5)));
    const revised = await query(served, SMALL, ARCHIVE_DATES[2], ARCHIVE_DATES[2]);
    assert.is(revised.headers["service-dataset-version"], A.ids[3]);
    assert.equal(answerValues(revised), expectValues(SMALL, [ARCHIVE_DATES[2]], 7));
    const before = await query(served, SMALL, ARCHIVE_DATES[2], ARCHIVE_DATES[2], A.ids[2]);
    assert.is(before.headers["service-dataset-version"], A.ids[2]);
    assert.equal(answerValues(before), expectValues(SMALL, [ARCHIVE_DATES[2]]));
  });
});

archive.run();

// ---------------------------------------------------------------------------------------------------------------

const sharing = suite("index pieces are shared");

sharing("publish - one more day on a 60-day version writes the day piece and seven small objects (< 40 kB together)", async () => {
  const dates = listDays("2004-01-15", 61); // 15 January .. 15 March
  const first60 = freshDir("sixty");
  const last1 = freshDir("sixty-first");
  const all61 = freshDir("sixty-one");
  await writeSiloDays(first60, dates.slice(0, 60), TINY, cells());
  await writeSiloDays(last1, dates.slice(60), TINY, cells());
  await cp(first60, all61, { recursive: true });
  await cp(last1, all61, { recursive: true });
  const dist = freshDir("sixty-dist");
  await publishQuietly(first60, dist, { publishedAt: published(1) });
  const before = await readTree(dist, (await readRecords(dist))[0]);
  const s = await publishQuietly(last1, dist, { extend: true, publishedAt: published(2) });
  assert.equal([s.days, s.decoded, s.reused], [61, 1, 0]);
  const added = await readObject<Manifest>(dist, (await readPointer(dist)).manifest);
  const pieces = added.files.filter((f) => f.path.endsWith(".day"));
  assert.is(pieces.length, 1);
  // the day piece, the new series span of 13..15 March (the open month's third run holds the rest: its piece; its
  // sources are in the index root) and six index objects; the spans of January and February (closed) and of 1..8
  // and 9..12 March are taken whole
  assert.is(s.objectsWritten, 8);
  assert.equal([s.series.built, s.series.reused], [1, 3]);
  // Besides the piece: March's page (here 15 day entries of ~460 bytes, at most 31: 14.3 kB), the year page
  // (3 month nodes of ~330 bytes), the index root (5 series spans of ~540 bytes, and the source lists of the
  // spans holding the newest 31 dates: the open month's and January-February's, 61 days of about 110 bytes), the
  // catalog leaf (2 records of ~1.8 kB), the catalog root, the new span's piece (one group directory of 64
  // entries: 3.1 kB) and the manifest listing them: 35 kB. Rewriting the three month pages of the version
  // (~28 kB) would exceed 40 kB: the bound holds only when untouched months are shared.
  const besides = s.bytesWritten - pieces[0].size;
  assert.ok(besides < 40_000, `${besides} bytes besides the day piece`);
  const after = await readTree(dist, s.added[0]);
  assert.is(after.months.get("2004-01"), before.months.get("2004-01"));
  assert.is(after.months.get("2004-02"), before.months.get("2004-02"));
  // extending by the new day gives the very version the whole folder gives, in this dist or a fresh one
  const again = await publishQuietly(all61, dist, { publishedAt: published(3) });
  assert.equal([again.added.length, again.objectsWritten, again.reused], [0, 0, 61]);
  assert.equal(again.unchanged.map((d) => d.id), [s.added[0].id]);
  const fresh = await publishQuietly(all61, freshDir("sixty-one-dist"), { publishedAt: published(2) });
  assert.equal(fresh.added.map((d) => [d.id, d.metadata.index.sha256]), [[s.added[0].id, s.added[0].metadata.index.sha256]]);
});

sharing.run();

// ---------------------------------------------------------------------------------------------------------------

const gaps = suite("gaps");
const GAP_DATES = listDays("2004-01-01", 6).filter((d) => d !== "2004-01-03" && d !== "2004-01-04");

const G = { dist: "", sources: "", record: null as Dataset | null };

gaps("publish - a folder missing dates in the middle is refused, naming them and ALLOW_GAPS; nothing is published", async () => {
  G.dist = freshDir("gaps-dist");
  const other = freshDir("gaps-other");
  await writeSiloDays(other, ["2005-06-01"], SMALL, cells());
  await publishQuietly(other, G.dist, { publishedAt: published(1) });
  const catalogBefore = await readFile(join(G.dist, CATALOG_FILE));
  const filesBefore = await listTree(G.dist);
  G.sources = freshDir("gaps-sources");
  await writeSiloDays(G.sources, GAP_DATES, SMALL, cells());
  const err = await expectPublishError(publishQuietly(G.sources, G.dist, { publishedAt: published(2) }));
  assert.is(err.stage, "gaps");
  assert.ok(err.reason.startsWith("2 dates missing between the first and last day: 2004-01-03..2004-01-04;"), err.reason);
  assert.match(err.reason, /ALLOW_GAPS=1/);
  assert.ok(catalogBefore.equals(await readFile(join(G.dist, CATALOG_FILE))));
  assert.equal(await listTree(G.dist), filesBefore);
});

gaps("publish - with allowGaps the version records the missing range and never answers for it", async () => {
  const s = await publishQuietly(G.sources, G.dist, { allowGaps: true, publishedAt: published(2) });
  const record = (G.record = s.added[0]);
  assert.equal([record.period_start, record.period_end, record.metadata.days, record.metadata.gaps], ["2004-01-01", "2004-01-06", 4, [["2004-01-03", "2004-01-04"]]]);
  const candidate = (await readPointer(G.dist)).candidates.find((c) => c.id === record.id)!;
  assert.equal(candidate.coverage.gaps, [["2004-01-03", "2004-01-04"]]);
  await withServer(G.dist, async (served) => {
    for (const date of ["2004-01-02", "2004-01-05"]) {
      const answer = await query(served, SMALL, date, date);
      assert.is(answer.headers["service-dataset-version"], record.id, date);
      assert.equal(answerValues(answer), expectValues(SMALL, [date]), date);
    }
    assertError(await query(served, SMALL, "2004-01-03", "2004-01-03"), 422, "coverage_unavailable");
    assertError(await query(served, SMALL, "2004-01-02", "2004-01-05"), 422, "coverage_unavailable");
    assertError(await query(served, SMALL, "2004-01-04", "2004-01-04", record.id), 422, "coverage_unavailable");
  });
});

gaps("publish - extending a gapped version keeps its recorded gap but refuses a new one", async () => {
  const next = freshDir("gaps-next");
  await writeSiloDays(next, ["2004-01-07"], SMALL, cells());
  const extended = await publishQuietly(next, G.dist, { extend: true, publishedAt: published(3) });
  assert.equal([extended.added[0].period_end, extended.added[0].metadata.gaps], ["2004-01-07", [["2004-01-03", "2004-01-04"]]]);
  const later = freshDir("gaps-later");
  await writeSiloDays(later, ["2004-01-09"], SMALL, cells());
  const catalogBefore = await readFile(join(G.dist, CATALOG_FILE));
  const refused = await expectPublishError(publishQuietly(later, G.dist, { extend: true, publishedAt: published(4) }));
  assert.is(refused.stage, "gaps");
  assert.match(refused.reason, /^1 date missing between the first and last day: 2004-01-08;/);
  assert.ok(catalogBefore.equals(await readFile(join(G.dist, CATALOG_FILE))));
});

gaps.run();

// ---------------------------------------------------------------------------------------------------------------

const provenance = suite("provenance");
const PROVENANCE_DATES = ["2004-05-01", "2004-05-02"];

/** The query answer's manifest over both dates of a single-version dist. */
async function querySources(dist: string): Promise<Record<string, unknown>[]> {
  return withServer(dist, async (served) => {
    const answer = await query(served, SMALL, PROVENANCE_DATES[0], PROVENANCE_DATES[1]);
    assert.is(answer.status, 200, answer.text);
    return answer.json().manifest.sourceManifest;
  });
}

provenance("publish - a folder without demo.json or silo.lock.json is labelled maintainer-supplied; sources carry only sha256 and member_path", async () => {
  const sources = freshDir("supplied");
  await writeSiloDays(sources, PROVENANCE_DATES, SMALL, cells());
  const dist = freshDir("supplied-dist");
  const record = (await publishQuietly(sources, dist)).added[0];
  assert.is(record.title, "SILO daily maximum temperature (files supplied by the maintainer)");
  assert.match(record.attribution, /Files supplied by the maintainer: the pipeline did not fetch them/);
  assert.equal(record.metadata.provenance, ["supplied"]);
  assert.is(record.metadata.synthetic, false);
  const entries = await querySources(dist);
  const expected = [];
  for (const date of PROVENANCE_DATES) expected.push({ sha256: await hashFile(join(sources, memberPath(date))), member_path: memberPath(date) });
  assert.equal(entries, expected);
  assert.equal(entries.map((e) => Object.keys(e).sort()), [["member_path", "sha256"], ["member_path", "sha256"]]);
});

provenance("publish - a folder with silo.lock.json is labelled fetched, each source with the url the lock recorded; a file that differs from it is refused", async () => {
  const sources = freshDir("fetched");
  await writeSiloDays(sources, PROVENANCE_DATES, SMALL, cells());
  const files = [];
  for (const date of PROVENANCE_DATES) {
    const bytes = await readFile(join(sources, memberPath(date)));
    files.push({ path: memberPath(date), url: dateToUrl(date, MAX_TEMP), bytes: bytes.length, sha256: sha256Hex(bytes) });
  }
  await writeFile(join(sources, "silo.lock.json"), JSON.stringify({ files }));
  const dist = freshDir("fetched-dist");
  const record = (await publishQuietly(sources, dist)).added[0];
  assert.is(record.title, "SILO daily maximum temperature");
  assert.equal(record.metadata.provenance, ["fetched"]);
  assert.is(record.license, "CC-BY-4.0");
  const entries = await querySources(dist);
  assert.equal(entries, files.map((f) => ({ sha256: f.sha256, url: f.url, member_path: f.path, license: "CC-BY-4.0" })));
  assert.is(entries[1].url, "https://s3-ap-southeast-2.amazonaws.com/silo-open-data/Official/daily/max_temp/2004/20040502.max_temp.tif");

  const changed = freshDir("fetched-changed");
  await cp(sources, changed, { recursive: true });
  await writeSiloDays(changed, [PROVENANCE_DATES[1]], SMALL, cells(3));
  const catalogBefore = await readFile(join(dist, CATALOG_FILE));
  const err = await expectPublishError(publishQuietly(changed, dist));
  assert.equal([err.file, err.stage, err.variable?.silo], [memberPath(PROVENANCE_DATES[1]), "provenance", "max_temp"]);
  assert.match(err.reason, new RegExp(`^sha256 [0-9a-f]{64} differs from silo\\.lock\\.json \\(${files[1].sha256}\\)`));
  assert.ok(catalogBefore.equals(await readFile(join(dist, CATALOG_FILE))));
});

provenance.run();

// ---------------------------------------------------------------------------------------------------------------

// One long version of tiny days, published by the CLI under a low open-file limit; the bounded-answer suite
// below reads the same dist (1,500 days is the longer of the two archives these checks need).
const LONG_DATES = listDays("2000-01-01", 1500); // 2000-01-01 .. 2004-02-08, five year pages
const OPEN_FILES = 256;
const long = { sources: "", dist: "", id: "" };

const manyFiles = suite("many files");

manyFiles(`cli - publishes 1,500 day files under ulimit -n ${OPEN_FILES} into one version holding every day`, async () => {
  long.sources = freshDir("long-sources");
  long.dist = freshDir("long-dist");
  await writeSiloDays(long.sources, LONG_DATES, TINY, cells());
  const out = await runCli(["publish", "--sources", long.sources, "--dist", long.dist], OPEN_FILES);
  assert.is(out.code, 0, out.stderr);
  assert.ok(out.stdout.includes("days 1500 (decoded 1500, reused 0)"), out.stdout);
  const records = await readRecords(long.dist);
  const raster = records.filter((d) => d.dataset_key === "silo-tmax");
  assert.is(raster.length, 1);
  const record = raster[0];
  long.id = record.id;
  assert.equal([record.period_start, record.period_end, record.metadata.days, record.metadata.gaps], [LONG_DATES[0], LONG_DATES[1499], 1500, []]);
  const tree = await readTree(long.dist, record);
  assert.equal([...tree.days.keys()], LONG_DATES);
  assert.is(tree.months.size, 50);
});

manyFiles(`cli - a corrupt file among 300 stops the publish with one line "error: <file>: <reason> [<stage>]" and no stack`, async () => {
  const sources = freshDir("corrupt-among-many");
  const dates = listDays("2001-01-01", 300);
  await writeSiloDays(sources, dates, TINY, cells());
  const bad = join(sources, memberPath(dates[150]));
  await copyFile(join(FIXTURES, "bad-truncated.tif"), bad);
  const dist = freshDir("corrupt-among-many-dist");
  const out = await runCli(["publish", "--sources", sources, "--dist", dist], OPEN_FILES);
  assert.is(out.code, 1, out.stderr);
  const errors = out.stderr.split("\n").filter((l) => l.startsWith("error: "));
  assert.equal(errors, [`error: ${bad}: truncated or corrupt GeoTIFF (tile 0 needs bytes up to 3059 but the file has 2493); fetch or regenerate the file [decode]`]);
  assert.not.match(out.stderr, /^\s+at /m);
  assert.not.match(out.stderr, /PublishError|\.ts:\d+/);
  assert.not.ok((await readdir(dist)).includes(CATALOG_FILE));
});

manyFiles.run();

// ---------------------------------------------------------------------------------------------------------------

const bounded = suite("bounded answers");

bounded("server - on a 1,500-day version the record, catalog page, layers page and a 31-day query stay small", async () => {
  assert.ok(long.id, "the many-files suite published the long version");
  await withServer(long.dist, async (served) => {
    const inspect = await request(served, `/api/v1/datasets/${long.id}`);
    assert.is(inspect.status, 200);
    // a record is a fixed set of fields: 1,500 days add no list (the source list is one index entry)
    assert.ok(inspect.bytes.length < 4096, `record ${inspect.bytes.length} bytes`);
    // within a few digits of the 3-day golden version's record, which has the same labels
    const [short] = await readRecords(goldenDist);
    const { status: _status, published_at: _publishedAt, ...shortRecord } = short;
    const shortBytes = JSON.stringify({ dataset: shortRecord }).length;
    assert.ok(Math.abs(inspect.bytes.length - shortBytes) < 64, `record ${inspect.bytes.length} bytes, 3-day record ${shortBytes}`);
    const record = inspect.json().dataset;
    assert.is(record.source_manifest.length, 1);
    assert.is(record.source_manifest[0].member_path, record.metadata.index.path);

    const catalog = await request(served, "/api/v1/datasets");
    assert.is(catalog.status, 200);
    assert.is(catalog.json().datasets.length, 2); // the raster version and the observation table
    assert.ok(catalog.bytes.length < 8192, `catalog page ${catalog.bytes.length} bytes`);

    const layers = await request(served, `/api/v1/layers/${long.id}`);
    assert.is(layers.status, 200);
    const page = layers.json();
    assert.is(page.tiles.length, 100);
    assert.type(page.nextCursor, "string");
    // 100 tile items of ~300 bytes and the record
    assert.ok(layers.bytes.length < 48_000, `layers page ${layers.bytes.length} bytes`);

    const dates = LONG_DATES.slice(1000, 1031);
    const answer = await query(served, TINY, dates[0], dates[30]);
    assert.is(answer.headers["service-dataset-version"], long.id);
    const body = answer.json();
    assert.is(body.data.length, 31 * 16);
    assert.equal(body.manifest.sourceManifest.map((e: { member_path: string }) => e.member_path), dates.map(memberPath));
    // 496 rows of ~150 bytes and 31 source entries: bounded by the request, not by the archive
    assert.ok(answer.bytes.length < 100_000, `query answer ${answer.bytes.length} bytes`);
    assert.ok(JSON.stringify(body.manifest).length < 8192, `manifest ${JSON.stringify(body.manifest).length} bytes`);
  });
});

bounded.run();
