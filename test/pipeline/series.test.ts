// The series tier: its span rule, its Merkle-proved group directories, both tiers decoding to the very same cells
// across a month close and a year close, daily appends giving what one publish gives, revisions, and which tier
// a query reads.

import { DEMO_VARIABLES } from "../../pipeline/ingest/demo.js";
import { cp, readFile } from "node:fs/promises";
import { suite } from "uvu";
import { buildDemoDist } from "../support/server-fixture.js";
import * as assert from "uvu/assert";
import { Service } from "../../api/service.js";
import { ROUTES } from "../../api/interface.js";
import { createMirrorClient } from "../../client/index.js";
import { startMirrorServer } from "../../client/mirror-server.js";
import { Archive } from "../../format/archive.js";
import { dateToDayNumber, listDates } from "../../format/dates.js";
import { sha256Hex } from "../../format/hash.js";
import { float32ToShortest } from "../../format/number-text.js";
import type { Window } from "../../format/grid.js";
import { LocalStorage, nodePlatform } from "../../format/local.js";
import type { Dataset } from "../../format/records.js";
import { BlockCodec } from "../../format/cells.js";
import { ENTRY_BYTES } from "../../format/entries.js";
import { GROUP_POSITIONS, GroupLattice, buildMerkle, chooseChunkSide, groupEntry, verifyGroupRecord } from "../../format/series.js";
import type { Storage } from "../../format/storage.js";
import { type RasterView, openVersion } from "../../format/versions.js";
import { binaryRanges } from "../../pipeline/publish/series.js";
import { verifyDist } from "../../pipeline/commands/verify.js";
import { freshDirs, makeWorkDir, publishSilently, type CellRule, writeSiloDays } from "../support/helpers.js";
import { findSeriesChunk, flipByte, readRecords, requestFor } from "../support/server-fixture.js";

const freshDir = freshDirs(makeWorkDir("series-test"));

/** Crosses a 64-cell block edge and an 8-cell chunk edge, and holds whole and partial groups. */
const WINDOW: Window = [250, 250, 20, 18];
/** One date crosses December into February: a year close, then a month close, then an open month. */
const DATES = listDates("2003-12-20", "2004-02-10");
const FLOAT_DATE = "2004-01-07";

/** One decimal (tenths), missing on a diagonal band; on FLOAT_DATE one cell holds a value tenths cannot. */
function cellValue(col: number, row: number, date: string, shift = 0): number {
  if ((col + 2 * row) % 9 === 0) return NaN;
  if (date === FLOAT_DATE && col === 255 && row === 255) return Math.fround(21.123456);
  return Math.fround((120 + ((dateToDayNumber(date) * 13) % 200) + ((col * 7 + row * 3) % 40) + shift) / 10);
}

/** The days' cells; 2003-12-25 shifted by `shift` tenths in `patch` (default: everywhere), as SILO revises a day. */
function cells(shift = 0, patch: Window = WINDOW): CellRule {
  const inPatch = (c: number, r: number) => c >= patch[0] && c < patch[0] + patch[2] && r >= patch[1] && r < patch[1] + patch[3];
  return (col, row, date) => cellValue(col, row, date, date === "2003-12-25" && inPatch(col, row) ? shift : 0);
}

const quietly = publishSilently;

async function openRaster(dist: string, record: Dataset, storage: Storage = new LocalStorage(dist)): Promise<RasterView> {
  const view = await openVersion(new Archive(storage, nodePlatform), record);
  if (view.kind !== "raster") throw new Error("not a raster");
  return view;
}

const spansOf = (view: RasterView) => (view.index.series ?? []).map((s) => `${s.first}..${s.last}`);

// ---------------------------------------------------------------------------------------------------------------

const rule = suite("span rule");

rule("series - binary ranges: a count's binary digits from the highest, as ranges of indices", () => {
  assert.equal(binaryRanges(0), []);
  assert.equal(binaryRanges(1), [[1, 1]]);
  assert.equal(binaryRanges(13), [[1, 8], [9, 12], [13, 13]]);
  assert.equal(binaryRanges(31), [[1, 16], [17, 24], [25, 28], [29, 30], [31, 31]]);
  assert.equal(binaryRanges(12), [[1, 8], [9, 12]]);
  // the open month's days: at most three runs, the third holding the rest
  assert.equal(binaryRanges(31, 3), [[1, 16], [17, 24], [25, 31]]);
  assert.equal(binaryRanges(15, 3), [[1, 8], [9, 12], [13, 15]]);
  assert.equal(binaryRanges(13, 3), [[1, 8], [9, 12], [13, 13]]);
  assert.equal(binaryRanges(0, 3), []);
});

rule("series - chunk side: the largest power of two up to 64 whose square times the days is at most 8192 values", () => {
  assert.equal([1, 2, 4, 8, 16, 31, 365, 366].map(chooseChunkSide), [64, 64, 32, 32, 16, 16, 4, 4]);
  for (const days of [1, 2, 3, 5, 7, 31, 62, 100, 200, 365, 366]) {
    const side = chooseChunkSide(days);
    assert.ok(side * side * days <= 8192 && (side === 64 || 4 * side * side * days > 8192), `${days} days: side ${side}`);
  }
});

rule("series - countChunks counts exactly the chunks select lists, for boxes on and off chunk edges", () => {
  for (const [window, side] of [[[0, 0, 841, 681], 2], [[400, 300, 40, 40], 8], [[13, 7, 100, 90], 32], [[5, 5, 1, 1], 1]] as [Window, number][]) {
    const lattice = new GroupLattice(window, side);
    for (let k = 0; k < 40; k++) {
      const w = 1 + ((k * 37) % Math.min(window[2], 90));
      const h = 1 + ((k * 53) % Math.min(window[3], 70));
      const area: Window = [window[0] + ((k * 11) % (window[2] - w + 1)), window[1] + ((k * 7) % (window[3] - h + 1)), w, h];
      assert.is(lattice.countChunks(area), lattice.select(area).length, `${window} side ${side} area ${area}`);
    }
  }
});

rule("series - a group directory proves against the root with its Merkle path, and only at its own index", async () => {
  for (const count of [1, 2, 3, 5, 154]) {
    const depth = Math.ceil(Math.log2(count));
    const entries = Array.from({ length: count }, (_, i) => new Uint8Array(GROUP_POSITIONS * ENTRY_BYTES).fill(i + 1));
    const leaves = entries.map((e) => Buffer.from(sha256Hex(e), "hex"));
    const { root, paths } = await buildMerkle(leaves, depth, sha256Hex);
    for (let i = 0; i < count; i++) {
      const record = new Uint8Array(depth * 32 + entries[i].length);
      record.set(paths[i], 0);
      record.set(entries[i], depth * 32);
      assert.ok(await verifyGroupRecord(record, i, depth, root, sha256Hex), `${count}: ${i}`);
      if (count > 1) assert.is(await verifyGroupRecord(record, (i + 1) % count, depth, root, sha256Hex), null);
      record[depth * 32 + 7] ^= 1;
      assert.is(await verifyGroupRecord(record, i, depth, root, sha256Hex), null);
    }
  }
});

rule.run();

// ---------------------------------------------------------------------------------------------------------------

const tiers = suite("both tiers");
let sources = "";
let dist = "";
let record: Dataset;

tiers.before(async () => {
  sources = freshDir("sources");
  dist = freshDir("dist");
  await writeSiloDays(sources, DATES, WINDOW, cells());
  await quietly(sources, dist);
  [record] = await readRecords(dist);
});

tiers("series - spans: the closed year, the closed month, the open month's days in binary runs", async () => {
  const view = await openRaster(dist, record);
  assert.equal(spansOf(view), ["2003-12-20..2003-12-31", "2004-01-01..2004-01-31", "2004-02-01..2004-02-08", "2004-02-09..2004-02-10"]);
  assert.equal(view.index.series!.map((s) => s.chunkSide), [16, 16, 32, 64]);
  // sources inline for the spans holding any of the newest 31 dates (11 January .. 10 February), by Ref before
  assert.equal(view.index.series!.map((s) => Array.isArray(s.sources)), [false, true, true, true]);
});

tiers("series - every cell of every date reads the same from the series tier as from the day pieces", async () => {
  const view = await openRaster(dist, record);
  let cells = 0;
  for (const span of view.index.series!) {
    const dates = listDates(span.first, span.last);
    const series = await view.readSeries(span, WINDOW, 0, dates.length);
    for (const [d, date] of dates.entries()) {
      const day = (await view.findDay(date))!;
      const pieces = await view.readCells(day, WINDOW);
      assert.ok(Buffer.from(series[d].buffer, series[d].byteOffset, series[d].byteLength).equals(Buffer.from(pieces.buffer, pieces.byteOffset, pieces.byteLength)), date);
      for (let i = 0; i < pieces.length; i++) {
        const expected = cellValue(WINDOW[0] + (i % WINDOW[2]), WINDOW[1] + Math.floor(i / WINDOW[2]), date);
        assert.ok(Object.is(series[d][i], expected) || (expected !== expected && series[d][i] !== series[d][i]), `${date} cell ${i}`);
        cells++;
      }
    }
  }
  assert.is(cells, DATES.length * WINDOW[2] * WINDOW[3]);
  // any sub-period of a span, for any sub-area, reads the same too
  const span = view.index.series![1];
  const part = await view.readSeries(span, [253, 257, 5, 3], 5, 17);
  for (let d = 5; d < 17; d++) {
    const day = (await view.findDay(listDates(span.first, span.last)[d]))!;
    assert.equal(Array.from(part[d - 5]), Array.from(await view.readCells(day, [253, 257, 5, 3])));
  }
});

/** A Storage that counts the reads of each kind of object. */
function countingStorage(root: string): Storage & { reads: Record<string, number> } {
  const inner = new LocalStorage(root);
  const reads: Record<string, number> = {};
  return {
    reads,
    describe: (path) => inner.describe(path),
    read: (path, offset, length) => {
      const kind = path.split(".").pop()!;
      reads[kind] = (reads[kind] ?? 0) + 1;
      return inner.read(path, offset, length);
    },
  };
}

/** A service over a counting storage of the tiers' dist, and a query through it (its answer's rows, 200 asserted). */
function countedService() {
  const storage = countingStorage(dist);
  const service = new Service({ routes: ROUTES, storage, platform: nodePlatform });
  const ask = async (body: unknown) => {
    const answer = await service.handle({ method: "POST", path: "/api/v1/data/query", query: new URLSearchParams(), contentType: "application/json", baseUrl: "http://x", readBody: async () => Buffer.from(JSON.stringify(body)) });
    assert.is(answer.status, 200, Buffer.from(answer.body).toString());
    return JSON.parse(Buffer.from(answer.body).toString()) as { data: { date: string; value: number | null; tile: string; row: number; col: number }[] };
  };
  return { storage, ask };
}

tiers("series - a place over days reads series chunks, one date reads its day piece: both answer the same rows", async () => {
  const { storage, ask } = countedService();
  const point = await ask(requestFor({ col: 255, row: 256, width: 1, height: 1 }, "2003-12-25", "2004-01-24"));
  assert.equal([storage.reads.ser ?? 0, storage.reads.day ?? 0], [4, 0]); // two spans: a group directory and a chunk each
  const expected = listDates("2003-12-25", "2004-01-24").map((d) => cellValue(255, 256, d));
  assert.equal(point.data.map((r) => r.value), expected.map((v) => (v !== v ? null : float32ToShortest(v))));
  storage.reads.ser = 0;
  const oneDate = await ask(requestFor({ col: 255, row: 256, width: 1, height: 1 }, "2004-01-07", "2004-01-07"));
  assert.equal([storage.reads.ser, storage.reads.day], [0, 2]); // its header and its block
  assert.equal(oneDate.data, point.data.filter((r) => r.date === "2004-01-07"));
});

tiers("series - a place asked again is read from memory from its fourth ask on, and so are its chunk's other cells", async () => {
  const { storage, ask } = countedService();
  const reads: number[] = [];
  // each ask another period over the same two spans, so the answer cache never answers one
  for (const [col, start] of [[255, "2003-12-25"], [255, "2003-12-26"], [255, "2003-12-27"], [255, "2003-12-28"], [254, "2003-12-29"]] as const) {
    storage.reads.ser = 0;
    const answer = await ask(requestFor({ col, row: 256, width: 1, height: 1 }, start, "2004-01-24"));
    reads.push(storage.reads.ser);
    const expected = listDates(start, "2004-01-24").map((d) => cellValue(col, 256, d));
    assert.equal(answer.data.map((r) => r.value), expected.map((v) => (v !== v ? null : float32ToShortest(v))), `col ${col}`);
  }
  // two spans: a group directory and a chunk each, then the chunks alone (one cell decoded), then the chunks decoded
  // whole and kept, then nothing
  assert.equal(reads, [4, 2, 2, 0, 0]);
});

tiers("series - make verify checks every chunk against the day pieces, and reports a damaged one", async () => {
  const clean = await verifyDist(dist);
  assert.equal([clean.problems, clean.versions.map((v) => v.problems)], [[], [[]]]);
  const copy = freshDir("verify-dist");
  await cp(dist, copy, { recursive: true });
  const found = await findSeriesChunk(copy, record, "2004-01-10", 255, 256);
  await flipByte(found.file, found.chunk.offset + 1);
  const report = await verifyDist(copy);
  assert.equal(report.problems, [`${found.path}: sha256 ${sha256Hex(await readFile(found.file))}, its manifest says ${found.span.piece.sha256}`]);
  assert.equal(report.versions[0].problems, [`series ${found.span.first}..${found.span.last}: ${found.file}: does not match its sha256 ${found.span.piece.sha256} (${found.span.piece.size} bytes)`]);
});

tiers.run();

// ---------------------------------------------------------------------------------------------------------------

const appends = suite("appends and revisions");

appends("series - a day at a time gives the spans one publish of the whole folder gives, reusing what did not change", async () => {
  const daily = freshDir("daily-dist");
  const folder = freshDir("daily-sources");
  const built: number[] = [];
  for (const [i, date] of DATES.slice(0, 45).entries()) {
    await writeSiloDays(folder, [date], WINDOW, cells());
    const s = await quietly(folder, daily, { publishedAt: `2026-01-01T00:00:${String(i).padStart(2, "0")}Z` });
    built.push(s.series.built);
  }
  // a new day rebuilds only the span its binary digit carries into, and the closes: never the whole history
  assert.ok(Math.max(...built) <= 2, `spans built per day: ${built.join(",")}`);
  const whole = freshDir("whole-dist");
  const wholeFolder = freshDir("whole-sources");
  await writeSiloDays(wholeFolder, DATES.slice(0, 45), WINDOW, cells());
  await quietly(wholeFolder, whole);
  const last = (await readRecords(daily)).find((r) => r.period_end === DATES[44])!;
  const [one] = await readRecords(whole);
  assert.is(last.id, one.id);
  const a = await openRaster(daily, last);
  const b = await openRaster(whole, one);
  assert.equal(a.index.series, b.index.series);
});

appends("series - a cold mirror reads a place's newest 31 days in 10 requests when the newest day-of-month has four binary digits", async () => {
  // 30 January: the open month in three runs (1-16, 17-24, 25-30), and 31 December in the closed year's span
  const folder = freshDir("newest-sources");
  const daily = freshDir("newest-dist");
  await writeSiloDays(folder, listDates("2003-12-20", "2004-01-30"), WINDOW, cells());
  await quietly(folder, daily);
  const mirror = await startMirrorServer({ dist: daily });
  try {
    const asked: string[] = [];
    const client = createMirrorClient({
      baseUrl: mirror.url,
      fetch: (url, init) => {
        asked.push(String(url).slice(mirror.url.length).split(".").pop()!);
        return fetch(url, init);
      },
    });
    const answer = await client.answer({ method: "POST", path: "/api/v1/data/query", body: requestFor({ col: 255, row: 256, width: 1, height: 1 }, "2003-12-31", "2004-01-30") });
    assert.is(answer.status, 200, answer.text());
    // catalog.json, the index root (listing every span's sources: no sources object), a group directory and a chunk of each of four spans
    assert.equal(asked, ["json", "json", ...Array(8).fill("ser")]);
    assert.is(client.stats().requests, 10);
  } finally {
    await mirror.close();
  }
});

appends("series - a day revised in a patch gives a new version whose span shares every unchanged chunk with the old; the old version answers as before", async () => {
  const revised = freshDir("revised-sources");
  const copy = freshDir("revised-dist");
  await cp(dist, copy, { recursive: true });
  await cp(sources, revised, { recursive: true });
  // five cells of one 16 x 16 chunk (December's span: c = 16) in one of the window's four groups
  await writeSiloDays(revised, ["2003-12-25"], WINDOW, cells(5, [258, 258, 5, 1]));
  const s = await quietly(revised, copy);
  assert.equal([s.decoded, s.series.built, s.series.revised, s.series.reused], [1, 0, 1, 3]); // December's span only
  const records = await readRecords(copy);
  const fresh = records.find((r) => r.id !== record.id)!;
  const before = await openRaster(copy, record);
  const after = await openRaster(copy, fresh);
  const [was, now] = [before.index.series[0], after.index.series[0]];
  // the revised span's lineage: the old piece holds every chunk the revision did not change
  assert.equal([now.packs, now.header?.size], [[was.piece], 44 + 2 * 44 + 4 * 4]);
  const layout = await after.archive.readSpanLayout(now);
  assert.equal([0, 1, 2, 3].map((g) => layout.locate(g).pack), [0, 0, 0, 1]);
  // one day of twelve changed: the chunk stores a Patch of that day over its base in the old piece
  const lattice = new GroupLattice(now.window, now.chunkSide);
  const entryOf = async (col: number, row: number) => {
    const { group, position } = lattice.locate(col, row);
    return groupEntry(await after.archive.readGroup(now, group), position);
  };
  assert.equal([(await entryOf(259, 258)).codec, (await entryOf(259, 258)).pack, (await entryOf(250, 250)).codec, (await entryOf(250, 250)).pack], [BlockCodec.Patch, 1, BlockCodec.Tenths, 0]);
  assert.ok(now.piece.size < was.piece.size / 2, `${now.piece.size} of ${was.piece.size}`);
  assert.equal(after.index.series.slice(1), before.index.series.slice(1));
  for (const [col, row, shifted] of [[259, 258, true], [257, 258, false], [259, 259, false]] as const) {
    const [old] = await before.readSeries(was, [col, row, 1, 1], 5, 6); // the span starts on 2003-12-20
    const [fresh] = await after.readSeries(now, [col, row, 1, 1], 5, 6);
    assert.equal([old[0], fresh[0]], [cellValue(col, row, "2003-12-25"), cellValue(col, row, "2003-12-25", shifted ? 5 : 0)], `${col},${row}`);
  }
  assert.equal((await verifyDist(copy)).problems, []);
});

appends("series - revisions night after night keep a lineage in tiers: 8 revision pieces merge into one of the next tier, the values always the newest", async () => {
  const revised = freshDir("tiered-sources");
  const copy = freshDir("tiered-dist");
  await cp(dist, copy, { recursive: true });
  await cp(sources, revised, { recursive: true });
  const lengths: number[] = [];
  for (let night = 1; night <= 9; night++) {
    await writeSiloDays(revised, ["2003-12-25"], WINDOW, cells(night, [258, 258, 5, 1]));
    await quietly(revised, copy, { publishedAt: `2099-02-${String(night).padStart(2, "0")}T00:00:00Z` });
    const newest = (await readRecords(copy)).sort((a, b) => (a.published_at! < b.published_at! ? 1 : -1))[0];
    const view = await openRaster(copy, newest);
    const span = view.index.series[0];
    lengths.push(span.packs?.length ?? 0);
    const [value] = await view.readSeries(span, [259, 258, 1, 1], 5, 6);
    assert.is(value[0], cellValue(259, 258, "2003-12-25", night), `night ${night}`);
    if (night === 9) assert.equal((await view.archive.readSpanLayout(span)).packs.map((p) => p.tier), [0, 1, 0]);
  }
  // the first piece stays; revisions 1-7 add pieces; the 8th merges the seven and itself into one of tier 1
  assert.equal(lengths, [1, 2, 3, 4, 5, 6, 7, 1, 2]);
  assert.equal((await verifyDist(copy)).problems, []);
});

appends("series - a day revised everywhere writes its span whole again, with no lineage", async () => {
  const revised = freshDir("revised-sources");
  const copy = freshDir("revised-dist");
  await cp(dist, copy, { recursive: true });
  await cp(sources, revised, { recursive: true });
  await writeSiloDays(revised, ["2003-12-25"], WINDOW, cells(5));
  const s = await quietly(revised, copy);
  assert.equal([s.decoded, s.series.built, s.series.revised, s.series.reused], [1, 1, 0, 3]);
  const fresh = (await readRecords(copy)).find((r) => r.id !== record.id)!;
  const after = await openRaster(copy, fresh);
  assert.equal([after.index.series[0].packs, after.index.series[0].header], [undefined, undefined]);
  const [now] = await after.readSeries(after.index.series[0], [255, 256, 1, 1], 5, 6);
  assert.is(now[0], cellValue(255, 256, "2003-12-25", 5));
});

appends.run();

// ---------------------------------------------------------------------------------------------------------------

const large = suite("large spans");

large("series - full-grid months of the demo's variables (large enough for the encoding threads) equal their day pieces, every cell (make verify)", async () => {
  const report = await verifyDist(await buildDemoDist());
  assert.equal(report.problems, []);
  const rasters = report.versions.filter((v) => !v.id.startsWith("noaa-"));
  assert.equal(rasters.map((v) => [v.id.split("-2003")[0], v.days, v.problems]), DEMO_VARIABLES.map((v) => v.datasetKey).sort().map((key) => [key, 31, []]));
});

large.run();
