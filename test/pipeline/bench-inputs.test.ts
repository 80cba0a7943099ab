// The five-variable bench's inputs and its bytes walk (bench/variable-sources.ts, bench/variable-bytes.ts): values
// inside each variable's plausible range before 1970 as after, no two days of a variable alike, the minimum below
// the maximum at every cell, and every byte of a five-variable dist counted once, as one variable's or the rest.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { GRID, type Window } from "../../format/grid.js";
import { MAX_TEMP, type Variable, findVariable } from "../../format/variables.js";
import { makeLandMask } from "../../pipeline/ingest/demo.js";
import { writeSiloTiff } from "../../pipeline/ingest/geotiff.js";
import { publish } from "../../pipeline/publish/publish.js";
import { dateToMemberPath } from "../../sources/silo.js";
import { makeSiloLikeMaxTemp, makeSiloLikeRain } from "../../bench/silo-like.js";
import { listDays, makeBenchMaxTemp } from "../../bench/sources.js";
import { sizeOfTree } from "../../bench/tools.js";
import { measureVariableBytes } from "../../bench/variable-bytes.js";
import { FIVE_VARIABLES as VARIABLES, OTHER_VARIABLES, makeBenchVariables, makeSmallVariableDay } from "../../bench/variable-sources.js";

const root = mkdtempSync(join(tmpdir(), "bench-inputs-test-"));
process.on("exit", () => rmSync(root, { recursive: true, force: true }));

const inputs = suite("bench inputs");

inputs("bench inputs - small-window days of the four other variables lie inside their plausible ranges in tenths, no two days alike, 1950 to 2004", () => {
  const days = listDays("1950-01-01", 20_001);
  for (const v of OTHER_VARIABLES) {
    const seen = new Set<string>();
    let outside = 0;
    let notTenths = 0;
    for (const date of days) {
      const values = makeSmallVariableDay(v, date, 64);
      for (const x of values) {
        if (!(x >= v.plausible[0] && x <= v.plausible[1])) outside++;
        if (Math.fround(Math.round(x * 10) / 10) !== x) notTenths++;
      }
      seen.add(Buffer.from(values.buffer).toString("base64"));
    }
    assert.equal([v.silo, outside, notTenths, seen.size], [v.silo, 0, 0, days.length]);
  }
});

inputs("bench inputs - the full-grid minimum lies below the bench's maximum at every cell; rain is 0 on most land", () => {
  const mask = makeLandMask();
  for (const date of ["2003-01-01", "2003-07-15"]) {
    const days = makeBenchVariables(date, mask);
    const tmax = makeBenchMaxTemp(date, mask);
    const tmin = days.get("min_temp")!;
    const rain = days.get("daily_rain")!;
    let notBelow = 0;
    let withoutMax = 0;
    let [land, dry] = [0, 0];
    for (let i = 0; i < tmin.length; i++) {
      if (tmin[i] >= tmax[i]) notBelow++;
      if (tmin[i] === tmin[i] && tmax[i] !== tmax[i]) withoutMax++;
      if (rain[i] === rain[i]) land++;
      if (rain[i] === 0) dry++;
    }
    assert.equal([...days.keys()].sort(), OTHER_VARIABLES.map((v) => v.silo).sort());
    assert.equal([date, notBelow, withoutMax], [date, 0, 0]);
    assert.ok(dry > 0.8 * land, `${date}: ${dry} of ${land} land cells dry`);
  }
});

inputs("bench inputs - a window's SILO-like days, made alone, are the whole grid's cells there, bit for bit", () => {
  const mask = makeLandMask();
  const windows: Window[] = [[400, 300, 8, 8], [0, 0, 5, 7], [836, 676, 5, 5], [123, 456, 70, 3]];
  for (const make of [makeSiloLikeMaxTemp, makeSiloLikeRain]) {
    for (const date of ["1950-06-30", "2003-01-01"]) {
      const whole = make(date, mask);
      for (const [c0, r0, w, h] of windows) {
        const alone = make(date, mask, [c0, r0, w, h]);
        const crop = new Float32Array(w * h);
        for (let r = 0; r < h; r++) crop.set(whole.subarray((r0 + r) * GRID.width + c0, (r0 + r) * GRID.width + c0 + w), r * w);
        assert.ok(Buffer.from(alone.buffer).equals(Buffer.from(crop.buffer)), `${make.name} ${date} ${[c0, r0, w, h]}`);
      }
    }
  }
});

inputs("bench bytes - every byte of a five-variable dist is counted once, as one variable's or the rest", async () => {
  const window: Window = [400, 300, 8, 8];
  const sources = join(root, "sources");
  const dates = listDays("2003-12-28", 6);
  // max_temp's small days: the minimum's, 10 degrees warmer (equal days would share their pieces)
  const valuesOf = (v: Variable, date: string) =>
    v === MAX_TEMP ? makeSmallVariableDay(findVariable("min_temp")!, date, 64).map((x) => Math.fround(Math.round(x * 10 + 100) / 10)) : makeSmallVariableDay(v, date, 64);
  for (const date of dates) for (const v of VARIABLES) await writeSiloTiff(join(sources, dateToMemberPath(date, v)), window, valuesOf(v, date));
  const dist = join(root, "dist");
  const summary = await publish({ sources, dist, observations: false, explorer: false, log: () => {} });
  const bytes = await measureVariableBytes(dist, summary.added, VARIABLES);
  assert.equal(bytes.byVariable.map((b) => b.variable.silo), VARIABLES.map((v) => v.silo));
  assert.equal(bytes.total, await sizeOfTree(dist));
  assert.equal(bytes.byVariable.reduce((n, b) => n + b.total, 0) + bytes.other, bytes.total);
  for (const b of bytes.byVariable) {
    assert.equal(b.day + b.series + b.json, b.total);
    assert.ok(b.day > 0 && b.series > 0 && b.json > 0, `${b.variable.silo}: ${JSON.stringify(b)}`);
  }
  // the rest: catalog.json, the catalog tree and the publish manifest
  assert.ok(bytes.other > 0);
});

inputs.run();
