// Tests the generated demo raster: land mask against known places, value rules, determinism and writeDemo's reuse.

import { MAX_TEMP, VARIABLES } from "../../format/variables.js";
import { createHash } from "node:crypto";
import { mkdtemp, readFile, readdir, rm, stat, unlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { GRID } from "../../format/grid.js";
import { DemoError } from "../../pipeline/errors.js";
import { readSiloTiff } from "../../pipeline/ingest/geotiff.js";
import {
  DEMO_VARIABLES,
  DEMO_DESCRIPTION,
  DEMO_FIRST,
  DEMO_LAST,
  DEMO_SEED,
  listDemoDates,
  makeDemoDay,
  makeDemoVariables,
  makeLandMask,
  writeDemo,
} from "../../pipeline/ingest/demo.js";
import { dateToMemberPath } from "../../sources/silo.js";

// SILO's full-grid ocean mask is 290,758 cells (docs/contract.md §6.1). Natural Earth's 1:10m coast is not SILO's
// mask, so allow 2% of the land count; measured: 278,340 land cells (-1.3%).
const SILO_LAND_CELLS = GRID.width * GRID.height - 290_758;
const LAND_TOLERANCE = Math.round(SILO_LAND_CELLS * 0.02);
// sha256 of makeDemoDay("2003-01-01") as little-endian float32 bytes: any change to the generator shows here,
// and should come with a new DEMO_GENERATOR_VERSION.
const PINNED_20030101_SHA256 = "cd4c6eebbc99fe7530027e1da7d41c27efb8ae8df31054ee3ce827def0d81a79";

const t0 = performance.now();
const mask = makeLandMask();
const maskMs = performance.now() - t0;
const t1 = performance.now();
const days = new Map(listDemoDates().map((d) => [d, makeDemoDay(d, mask)]));
const daysMs = performance.now() - t1;
console.log(`demo: land mask ${maskMs.toFixed(0)} ms, ${days.size} days ${daysMs.toFixed(0)} ms`);

/** Index of the grid cell whose 0.05 degree square contains the point (edges from docs/contract.md §6.1). */
function pointToIndex(lat: number, lon: number): number {
  const col = Math.floor((lon * 1000 - GRID.westEdgeMilliDeg) / GRID.cellMilliDeg);
  const row = Math.floor((GRID.northEdgeMilliDeg - lat * 1000) / GRID.cellMilliDeg);
  return row * GRID.width + col;
}

function hashFloats(values: Float32Array): string {
  return createHash("sha256").update(new Uint8Array(values.buffer, values.byteOffset, values.byteLength)).digest("hex");
}

function countLand(): number {
  let land = 0;
  for (const m of mask) land += m;
  return land;
}

const landMask = suite("demo land mask");

landMask("demo land mask - covers the full SILO grid with 0/1 cells", () => {
  assert.is(mask.length, 841 * 681);
  assert.ok(mask.every((m) => m === 0 || m === 1));
});

landMask("demo land mask - Australian places are land", () => {
  const places: [string, number, number][] = [
    ["Alice Springs", -23.7, 133.88],
    ["Hobart", -42.88, 147.33],
    ["Perth", -31.95, 115.86],
    ["Canberra", -35.28, 149.13],
    ["Uluru", -25.34, 131.04],
    ["Kangaroo Island", -35.8, 137.25],
    ["Melville Island", -11.6, 130.9],
  ];
  for (const [name, lat, lon] of places) assert.is(mask[pointToIndex(lat, lon)], 1, name);
});

landMask("demo land mask - sea and foreign land are missing", () => {
  const places: [string, number, number][] = [
    ["Coral Sea", -18, 152],
    ["Timor (Indonesia), row 0", -9.98, 124.5],
    ["Tagula Island (Papua New Guinea)", -11.5, 153.5],
    ["Gulf of Carpentaria", -14.5, 139],
    ["Bass Strait", -39.5, 146.5],
    ["Great Australian Bight", -34, 130],
    ["Indian Ocean", -25, 112.5],
    ["Arafura Sea", -10.5, 134],
  ];
  for (const [name, lat, lon] of places) assert.is(mask[pointToIndex(lat, lon)], 0, name);
});

landMask(`demo land mask - land count within ${LAND_TOLERANCE} of SILO's ${SILO_LAND_CELLS}`, () => {
  const land = countLand();
  console.log(`demo: ${land} land cells, ${mask.length - land} ocean cells (SILO: ${SILO_LAND_CELLS} land, 290758 ocean)`);
  assert.ok(Math.abs(land - SILO_LAND_CELLS) <= LAND_TOLERANCE, `${land} land cells`);
});

landMask.run();

const values = suite("demo values");

values("demo values - the same date gives the same bytes, pinned by hash", () => {
  const again = makeDemoDay(DEMO_FIRST, mask);
  assert.is(hashFloats(again), hashFloats(days.get(DEMO_FIRST)!));
  assert.is(hashFloats(again), PINNED_20030101_SHA256);
});

values("demo values - every land value is plausible and has one decimal; ocean is NaN", () => {
  const [lo, hi] = MAX_TEMP.plausible;
  for (const [date, day] of days) {
    assert.is(day.length, mask.length, date);
    for (let i = 0; i < day.length; i++) {
      const v = day[i];
      if (mask[i] === 0) {
        if (!Number.isNaN(v)) assert.unreachable(`${date} cell ${i}: ocean holds ${v}`);
      } else if (!Number.isNaN(v)) {
        if (!(v >= lo && v <= hi)) assert.unreachable(`${date} cell ${i}: ${v} outside ${lo}..${hi}`);
        if (Math.fround(Math.round(v * 10) / 10) !== v) assert.unreachable(`${date} cell ${i}: ${v} has more than one decimal`);
      }
    }
  }
});

values("demo values - climate is January-like where it should be", () => {
  const at = (lat: number, lon: number) => days.get(DEMO_FIRST)![pointToIndex(lat, lon)];
  assert.ok(at(-23.7, 133.88) >= 35 && at(-23.7, 133.88) <= 46, `Alice Springs ${at(-23.7, 133.88)}`);
  assert.ok(at(-42.88, 147.33) >= 14 && at(-42.88, 147.33) <= 27, `Hobart ${at(-42.88, 147.33)}`);
  assert.ok(at(-12.46, 130.84) >= 28 && at(-12.46, 130.84) <= 35, `Darwin ${at(-12.46, 130.84)}`);
});

values("demo values - some days have inland gaps, and not every day", () => {
  const gapDays = [...days].filter(([, day]) => day.some((v, i) => mask[i] === 1 && Number.isNaN(v))).map(([d]) => d);
  console.log(`demo: inland gaps on ${gapDays.length} of ${days.size} days`);
  assert.ok(gapDays.length > 0);
  assert.ok(gapDays.length < days.size);
});

/** Every variable of three days: the beginning, the middle and the end of the month. */
const variableDays = new Map(["2003-01-01", "2003-01-16", "2003-01-31"].map((d) => [d, makeDemoVariables(d, mask)]));
const PINNED_VARIABLES_20030101: Record<string, string> = {
  max_temp: PINNED_20030101_SHA256,
  min_temp: "e5c9aeb02c527a53b30ceddcaa05a4e8a060d6e43af5e50eb9bf28bfa2bd569f",
  daily_rain: "7c6926086bcc83f1e76ee2916d50b6b8c1ba33dfe55c48e399c854437a7700a6",
  radiation: "fb66ae164b8bc44c13f919ebe3becb51feee68005396cac8ea343e34c51c4ba8",
  vp: "2d692c1c6357952261730fd654412c8f6d7dbdaf517861f32e7313561940ce21",
  // generator version 2: the thirteen computed from the five (evap_comb is evap_pan from 1970, so equal here)
  vp_deficit: "205314f68e7b102d93e3d4e33185785eb37bcfd71eede3c46d716cb67570bc9d",
  evap_pan: "3a42f3a4bed1c62352c889870b9afd0b66dbbf1d1b82873ee49fc5d40a8f77e7",
  evap_syn: "a38fb4baf793efcbae956bb1f146f59917500b8d154b52b4f7856286a59b2eb3",
  evap_comb: "3a42f3a4bed1c62352c889870b9afd0b66dbbf1d1b82873ee49fc5d40a8f77e7",
  evap_morton_lake: "50f176d60f230d996186dc721a15647c9c9660d6bebca29676bcf37f976087bc",
  rh_tmax: "8b95cf1e8cd483ffaeaeb8b793b1319654311522d621714662516568d8bf5ec4",
  rh_tmin: "8aee40e8493f0d3bcc177ccde2c04ace4427aeaa3d426872b0a70859bc0b0019",
  et_short_crop: "7af46c9e224da3d9109a00f90841300af879138868940c5ebedb8cf7ce8d0d01",
  et_tall_crop: "7be15048c5eb9091a4ebb9df935dd98a7642029d2c288ea0e1aa872c10acd8bb",
  et_morton_actual: "46f935314b6cab85c4280856ded2ae725ba17fa1670cbc31a9aabf8faa03e27d",
  et_morton_potential: "4e654bf93187a2031438900ab45e7e2399df64588943f7e0448a8882380769ac",
  et_morton_wet: "52620ed2f3497b0ae5f365d56b539a9c89cf4d612a767c3f4f266d9f3b188083",
  mslp: "000fc8f6c4e902f32d61e72996506f1c0a76a76bdc5f01579427cd31ce61b115",
};

values("demo values - every variable, pinned by hash (the five of before unchanged); maximum temperature is makeDemoDay's", () => {
  const first = variableDays.get(DEMO_FIRST)!;
  assert.equal([...first.keys()], VARIABLES.map((v) => v.silo));
  const hashes = Object.fromEntries([...first].map(([silo, cells]) => [silo, hashFloats(cells)]));
  if (process.env.PRINT_GOLDEN) console.log(JSON.stringify(hashes, null, 2));
  assert.equal(hashes, PINNED_VARIABLES_20030101);
});

values("demo values - every variable: plausible, one decimal, ocean missing, its own inland gaps", () => {
  for (const [date, day] of variableDays) {
    for (const v of VARIABLES) {
      const cells = day.get(v.silo)!;
      let gaps = 0;
      for (let i = 0; i < cells.length; i++) {
        const x = cells[i];
        if (mask[i] === 0) {
          if (!Number.isNaN(x)) assert.unreachable(`${v.silo} ${date} cell ${i}: ocean holds ${x}`);
        } else if (Number.isNaN(x)) gaps++;
        else if (!(x >= v.plausible[0] && x <= v.plausible[1]) || Math.fround(Math.round(x * 10) / 10) !== x) {
          assert.unreachable(`${v.silo} ${date} cell ${i}: ${x} is outside ${v.plausible.join("..")} or has more than one decimal`);
        }
      }
      assert.ok(gaps < 2000, `${v.silo} ${date}: ${gaps} inland gaps`);
    }
  }
});

values("demo values - evaporation follows the day: the pan above the short crop, the tall crop above it, Morton's actual at most his wet", () => {
  for (const [date, day] of variableDays) {
    const [pan, short, tall, wet, actual, potential] = ["evap_pan", "et_short_crop", "et_tall_crop", "et_morton_wet", "et_morton_actual", "et_morton_potential"].map((n) => day.get(n)!);
    let land = 0;
    for (let i = 0; i < pan.length; i++) {
      if (mask[i] === 0 || [pan, short, tall, wet, actual, potential].some((a) => Number.isNaN(a[i]))) continue;
      land++;
      if (!(pan[i] > short[i] && tall[i] >= short[i] && actual[i] <= wet[i] && wet[i] <= potential[i])) {
        assert.unreachable(`${date} cell ${i}: pan ${pan[i]}, short ${short[i]}, tall ${tall[i]}, Morton actual ${actual[i]}, wet ${wet[i]}, potential ${potential[i]}`);
      }
    }
    assert.ok(land > 250_000, `${date}: ${land} cells`);
  }
});

values("demo values - minimum temperature is below the maximum at every cell of every day", () => {
  for (const [date, day] of variableDays) {
    const [tmax, tmin] = [day.get("max_temp")!, day.get("min_temp")!];
    for (let i = 0; i < tmax.length; i++) {
      if (tmin[i] >= tmax[i]) assert.unreachable(`${date} cell ${i}: minimum ${tmin[i]} is not below maximum ${tmax[i]}`);
    }
  }
});

values("demo values - rain is 0 on most land cells, with a long tail of wet ones", () => {
  for (const [date, day] of variableDays) {
    const wet = [...day.get("daily_rain")!].filter((x, i) => mask[i] === 1 && x > 0).sort((a, b) => a - b);
    const dry = [...day.get("daily_rain")!].filter((x, i) => mask[i] === 1 && x === 0).length;
    const mean = wet.reduce((a, b) => a + b, 0) / wet.length;
    console.log(`demo: ${date} rain on ${wet.length} of ${wet.length + dry} land cells, median ${wet[wet.length >> 1].toFixed(1)} mm, mean ${mean.toFixed(1)} mm, most ${wet[wet.length - 1].toFixed(1)} mm`);
    assert.ok(dry > 4 * wet.length, `${date}: ${dry} dry cells, ${wet.length} wet`);
    assert.ok(wet.length > 1000 && mean > 1.3 * wet[wet.length >> 1], `${date}: skewed`);
  }
});

values("demo values - no two days are the same", () => {
  const hashes = new Set([...days.values()].map(hashFloats));
  assert.is(hashes.size, days.size);
});

values("demo values - rejects a non-calendar date and a mask of the wrong size", () => {
  assert.throws(() => makeDemoDay("2003-02-29", mask), (err: unknown) => err instanceof DemoError);
  assert.throws(() => makeDemoDay("2003-1-1", mask), (err: unknown) => err instanceof DemoError);
  assert.throws(() => makeDemoDay(DEMO_FIRST, new Uint8Array(10)), (err: unknown) => err instanceof DemoError);
});

values("demo values - January 2003 and its descriptor", () => {
  const dates = listDemoDates();
  assert.is(dates.length, 31);
  assert.is(dates[0], DEMO_FIRST);
  assert.is(dates[30], DEMO_LAST);
  assert.is(dateToMemberPath("2003-01-09", MAX_TEMP), "2003/20030109.max_temp.tif");
  assert.is(DEMO_DESCRIPTION.note, "generated values, not observations");
});

values.run();

const write = suite("demo writeDemo");

write("demo writeDemo - writes 31 days of the demo's variables, reuses them, and regenerates exactly a deleted one", async () => {
  const folder = await mkdtemp(join(tmpdir(), "demo-test-"));
  try {
    const members = listDemoDates().flatMap((d) => DEMO_VARIABLES.map((v) => dateToMemberPath(d, v)));
    const expected = members.map((rel) => join(folder, rel));

    const lines: string[] = [];
    let t = performance.now();
    assert.equal(await writeDemo(folder, (line) => lines.push(line)), expected);
    console.log(`demo: first writeDemo ${(performance.now() - t).toFixed(0)} ms`);
    assert.equal(lines, members.map((rel) => `generated ${rel}`));
    assert.equal((await readdir(join(folder, "2003"))).sort(), expected.map((p) => p.slice(folder.length + 6)).sort());
    const record = JSON.parse(await readFile(join(folder, "demo.json"), "utf8"));
    assert.is(record.generatorVersion, DEMO_DESCRIPTION.generatorVersion);
    assert.is(record.seed, DEMO_SEED);
    assert.is(record.files.length, 31 * DEMO_VARIABLES.length);

    const decoded = await readSiloTiff(expected[0], MAX_TEMP.plausible);
    assert.equal(decoded.window, [0, 0, GRID.width, GRID.height]);
    assert.is(hashFloats(decoded.values), PINNED_20030101_SHA256);

    const mtimes = await Promise.all(expected.map(async (p) => (await stat(p)).mtimeMs));
    lines.length = 0;
    t = performance.now();
    assert.equal(await writeDemo(folder, (line) => lines.push(line)), expected);
    console.log(`demo: second writeDemo (all present) ${(performance.now() - t).toFixed(0)} ms`);
    assert.equal(lines, members.map((rel) => `unchanged ${rel}`));
    assert.equal(await Promise.all(expected.map(async (p) => (await stat(p)).mtimeMs)), mtimes);

    const victim = expected[14 * DEMO_VARIABLES.length];
    const before = await readFile(victim);
    await unlink(victim);
    lines.length = 0;
    await writeDemo(folder, (line) => lines.push(line));
    assert.equal(lines.filter((l) => l.startsWith("generated")), ["generated 2003/20030115.max_temp.tif"]);
    assert.ok(before.equals(await readFile(victim)));
    const after = await Promise.all(expected.map(async (p) => (await stat(p)).mtimeMs));
    assert.equal(after.filter((m, i) => m !== mtimes[i]).length, 1);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
});

write.run();
