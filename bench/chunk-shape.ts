// The series chunk shape, measured (docs/format.md §9): a year span and a month span of full-grid days encoded
// with each chunk side over one band of 256 rows, and for each side what the band costs a day, what one point
// read fetches (its group directory and one chunk) and how long that chunk takes to inflate.
//   node_modules/.bin/tsx bench/chunk-shape.ts      (BENCH_DIST=<a published year of 2003> skips the publish)

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inflateRawSync } from "node:zlib";
import { Archive } from "../format/archive.js";
import type { Window } from "../format/grid.js";
import { LocalStorage, nodePlatform } from "../format/local.js";
import { GROUP_CHUNKS, GroupLattice, groupRecordBytes, merkleDepth } from "../format/series.js";
import { Snapshot } from "../format/snapshot.js";
import { openVersion } from "../format/versions.js";
import { encodeStrip } from "../pipeline/publish/series-strip.js";
import { publish } from "../pipeline/publish/publish.js";
import { BENCH_CACHE, listDays, makeFullGridDays } from "./sources.js";
import { linkFolder } from "./tools.js";

const YEAR = listDays("2003-01-01", 365);
const BAND_ROW = 256;
const BAND_ROWS = 256; // a whole number of groups for every side below (group side 8 x side <= 256)
const log = (line: string) => process.stderr.write(`${line}\n`);

const work = await mkdtemp(join(tmpdir(), "chunk-shape-"));
try {
  let dist = process.env.BENCH_DIST ?? "";
  if (!dist) {
    const cache = join(BENCH_CACHE, "year");
    await makeFullGridDays(cache, YEAR, log);
    dist = join(work, "dist");
    log("publishing a year of full-grid days (set BENCH_DIST to a published one to skip this)");
    await publish({ sources: await linkFolder(join(work, "year"), cache, YEAR), dist, observations: false, log: () => {} });
  }
  const archive = new Archive(new LocalStorage(dist), nodePlatform);
  const { pointer, sha256 } = await archive.readPointer();
  const { records } = await new Snapshot(archive, pointer, sha256).listRecords(null, 100, () => true);
  const record = records.find((r) => r.id.startsWith("silo-tmax-2003"));
  if (!record) throw new Error(`${dist} holds no version of 2003`);
  const view = await openVersion(archive, record);
  if (view.kind !== "raster") throw new Error(`${record.id} is not a raster`);
  console.log(`series chunk shape: a band of ${BAND_ROWS} full-grid rows of ${record.id}, each side a new encoding`);
  for (const [label, count, sides] of [["a year", 365, [1, 2, 4, 8]], ["a month", 31, [4, 8, 16, 32]]] as const) {
    const days = await Promise.all(YEAR.slice(0, count).map(async (d) => (await view.findDay(d))!));
    const window = days[0].window;
    const band: Window = [window[0], window[1] + BAND_ROW, window[2], BAND_ROWS];
    for (const side of sides) {
      if (BAND_ROWS % (GROUP_CHUNKS * side) !== 0) throw new Error(`side ${side}: the band is not whole groups`);
      const lattice = new GroupLattice(window, side);
      const strip = await encodeStrip(days, lattice, band, archive);
      const chunks = strip.entries.flat().filter((e) => e.length > 0);
      const total = chunks.reduce((n, e) => n + e.length, 0);
      const started = performance.now();
      for (const e of chunks) inflateRawSync(strip.chunks.subarray(e.offset, e.offset + e.length));
      const inflateUs = ((performance.now() - started) * 1000) / chunks.length;
      const directory = groupRecordBytes(merkleDepth(lattice.count)); // its Merkle path and 64 entries
      console.log(
        `  ${label}, side ${String(side).padStart(2)} (${String(side * side * count).padStart(6)} values a chunk): the band ${(total / count / 1024).toFixed(1).padStart(6)} kB a day;` +
          ` a point read ${((directory + total / chunks.length) / 1024).toFixed(1).padStart(5)} kB (directory ${(directory / 1024).toFixed(1)} kB + mean chunk ${(total / chunks.length / 1024).toFixed(1)} kB), inflated in ${inflateUs.toFixed(0)} µs`,
      );
    }
  }
} finally {
  await rm(work, { recursive: true, force: true });
}
process.exit(0);
