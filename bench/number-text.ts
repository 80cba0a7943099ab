// The value writers measured in-process (issue 24's number-to-text tables): each shape's CPU time an answer and the
// sha256 of its bytes, so two checkouts compare side by side (the bytes must be equal, the time within noise).
//
//   node_modules/.bin/tsx bench/number-text.ts   (NUMBER_TEXT_ROUNDS: rounds of each shape, default 7;
//                                                 NUMBER_TEXT_ONLY: only the shapes whose name holds it)

import { createHash } from "node:crypto";
import { averageYears, computeYearlyTavAmp, writeMet } from "../api/series/met.js";
import { periodDates } from "../api/series/period-dates.js";
import type { SeriesConfig } from "../api/series/call.js";
import type { SeriesSelection } from "../api/series/select.js";
import { writeSeriesCsv } from "../api/series/write.js";
import { ByteSink } from "../api/bytes.js";
import { writeTile } from "../api/listings/pages.js";
import { writeCsvRows, writeJsonRows } from "../api/query/serialize.js";
import { findTile } from "../format/grid.js";
import { VARIABLES } from "../format/variables.js";

const ROUNDS = Number(process.env.NUMBER_TEXT_ROUNDS ?? 7);
/** Shapes whose name holds this text (default: all). */
const ONLY = process.env.NUMBER_TEXT_ONLY ?? "";

/** A repeatable stream of numbers (mulberry32), so both checkouts write the very same cells. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** SILO-like tenths (-5.0 .. 45.0) with about 8% missing; `anyFloat`: arbitrary float32 values instead. */
function cells(n: number, seed: number, anyFloat = false, missing = 0.08): Float32Array {
  const next = random(seed);
  return Float32Array.from({ length: n }, () => (next() < missing ? NaN : anyFloat ? next() * 50 - 5 : Math.round(next() * 500 - 50) / 10));
}

function codesOf(values: Float32Array): Int16Array {
  return Int16Array.from(values, (v) => (v !== v ? -32768 : Math.round(v * 10)));
}

const tile = findTile([0, 0, 841, 681], 1, 1)!;
const meaning = { variable: "air_temperature_max", unit: "degC" };
const box: [number, number, number, number] = [300, 300, 100, 100];
const place = { lat: -25, lon: 135, col: 460, row: 300 };
const LONG_DAYS = 20_000;
const longStart = "1950-01-01";
const seriesSelection = { start: longStart, days: LONG_DAYS, choices: [{ variable: VARIABLES[0] }] } as unknown as SeriesSelection;
const seriesConfig = { places: [place], variables: [VARIABLES[0]], format: "csv" } as unknown as SeriesConfig;

const tileValues = cells(65536, 1);
const tileCodes = codesOf(tileValues);
const tileFloats = cells(65536, 2, true);
const boxDay = [{ date: "2003-01-01", window: [0, 0, 841, 681] as [number, number, number, number], cells: cells(10_000, 3) }];
const boxFloats = [{ ...boxDay[0], cells: cells(10_000, 4, true) }];
const longValues = [[cells(LONG_DAYS, 5)]];
const metColumns = VARIABLES.filter((v) => v.apsim?.required).map((variable, i) => ({
  variable,
  values: cells(LONG_DAYS, 10 + i, false, 0),
  version: { id: `v-${variable.silo}`, license: "CC-BY-4.0", attribution: "SILO" },
}));

const rows = (write: typeof writeJsonRows, days: typeof boxDay) => () => {
  const out = new ByteSink();
  write(out, box, days);
  return out.finish();
};

/** tav and amp as the route computes them for this file: over the whole calendar years it holds (api/series/climate.ts) */
const metClimate = () => {
  const [maxt, mint] = ["maxt", "mint"].map((c) => metColumns.find((m) => m.variable.apsim!.column === c)!.values);
  const years = computeYearlyTavAmp(periodDates(longStart, LONG_DAYS), maxt, mint).filter((y) => y.whole);
  return { ...averageYears(years), basis: `over the whole calendar years of this file (${years.length} years)` };
};

const SHAPES: [string, () => Uint8Array][] = [
  ["tile, 65,536 tenths codes (JSON)", () => writeTile("v", meaning, "2003-01-01", tile, tileCodes)],
  ["tile, 65,536 float32 tenths (JSON)", () => writeTile("v", meaning, "2003-01-01", tile, tileValues)],
  ["tile, 65,536 arbitrary float32 (JSON)", () => writeTile("v", meaning, "2003-01-01", tile, tileFloats)],
  ["query, 10,000 rows (JSON)", rows(writeJsonRows, boxDay)],
  ["query, 10,000 rows (CSV)", rows(writeCsvRows, boxDay)],
  ["query, 10,000 rows of arbitrary float32 (CSV)", rows(writeCsvRows, boxFloats)],
  ["series, 1 place x 20,000 days (CSV)", () => writeSeriesCsv(seriesConfig, seriesSelection, longValues)],
  ["series, 1 place x 20,000 days x 4 columns (APSIM met)", () => writeMet({ place, start: longStart, days: LONG_DAYS, columns: metColumns }, metClimate())],
];

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];

for (const [name, write] of SHAPES.filter(([name]) => name.includes(ONLY))) {
  const bytes = write();
  const sha = createHash("sha256").update(bytes).digest("hex").slice(0, 16);
  for (let i = 0; i < 20; i++) write(); // warm-up: the tables filled, the writer compiled
  const perAnswerMs: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    // CPU time, not wall time: other work on a shared machine moves it less
    const t0 = process.cpuUsage();
    const cpuMs = () => {
      const t = process.cpuUsage(t0);
      return (t.user + t.system) / 1000;
    };
    let n = 0;
    while (cpuMs() < 200) {
      write();
      n++;
    }
    perAnswerMs.push(cpuMs() / n);
  }
  console.log(`${name.padEnd(56)} ${median(perAnswerMs).toFixed(3).padStart(8)} ms  (${Math.min(...perAnswerMs).toFixed(3)}-${Math.max(...perAnswerMs).toFixed(3)})  ${bytes.length} bytes  sha256 ${sha}`);
}
