// An APSIM weather file (`.met`) of one place (docs/contract.md §8.2): the header APSIM reads, `tav` and `amp` computed
// over the period answered exactly as APSIM's Weather component computes them when a file lacks them, the column
// line, the units line and one row a day. APSIM cannot read a missing value, so a file is made only when every value
// is there: else a 422 that says which variable is missing where.

import { colToLon, rowToLat } from "../../format/grid.js";
import { STORE_SLACK, VALUE_TEXT_MAX, float32ToShortest, valueWords } from "../../format/number-text.js";
import type { Variable } from "../../format/variables.js";
import { HttpError } from "../errors.js";
import { ByteSink } from "../bytes.js";
import type { Place } from "./params.js";
import { type PeriodDates, periodDates } from "./period-dates.js";

/** One column of the file: a variable's values from `start`, and the version they come from. */
export interface MetColumn {
  variable: Variable;
  values: Float32Array;
  version: { id: string; license: string; attribution: string };
}

/** What a .met file is made of: one place, a period, and radn maxt mint rain (vp optional) in any order. */
export interface MetInput {
  place: Place;
  start: string;
  days: number;
  columns: MetColumn[];
}

/**
 * `tav` (annual average ambient temperature) and `amp` (annual amplitude in mean monthly temperature) as APSIM's
 * Weather component computes them (ApsimX Models/Weather.cs, ProcessMonthlyTAVAMP): the mean of (maxt + mint) / 2
 * for each month of each calendar year the file touches; a year's tav is the sum of its monthly means divided by 12
 * (whatever months it holds) and its amp the highest monthly mean less the lowest; both averaged over the years.
 * Values are taken as the file writes them (the shortest decimal of each float32), in double precision.
 */
export function computeTavAmp(dates: PeriodDates, maxt: Float32Array, mint: Float32Array): { tav: number; amp: number } {
  const firstYear = dates.year[0];
  const years = dates.year[dates.days - 1] - firstYear + 1;
  const sums = new Float64Array(12 * years);
  const counts = new Int32Array(12 * years);
  for (let d = 0; d < dates.days; d++) {
    const at = (dates.year[d] - firstYear) * 12 + dates.month[d] - 1;
    sums[at] += (float32ToShortest(maxt[d])! + float32ToShortest(mint[d])!) * 0.5;
    counts[at]++;
  }
  let tavSum = 0;
  let ampSum = 0;
  for (let y = 0; y < years; y++) {
    let means = 0;
    let high = -999;
    let low = 999;
    for (let m = 0; m < 12; m++) {
      if (counts[y * 12 + m] === 0) continue;
      const mean = sums[y * 12 + m] / counts[y * 12 + m];
      means += mean;
      high = Math.max(mean, high);
      low = Math.min(mean, low);
    }
    tavSum += means / 12.0;
    ampSum += high - low;
  }
  return { tav: tavSum / years, amp: ampSum / years };
}

/** The first dates a column misses a value on, and how many it misses. */
function findMissing(column: Float32Array, dates: PeriodDates): { count: number; first: string[] } {
  let count = 0;
  const first: string[] = [];
  for (let d = 0; d < column.length; d++) {
    if (column[d] !== column[d]) {
      if (++count <= 3) first.push(dates.date(d));
    }
  }
  return { count, first };
}

/** A 422 unless every value of every column is there: the place, the variable and the dates it misses. */
function checkComplete(input: MetInput, dates: PeriodDates): void {
  const { place } = input;
  const period = `${dates.date(0)}..${dates.date(input.days - 1)}`;
  const where = `the SILO cell centred on latitude ${rowToLat(place.row)}, longitude ${colToLon(place.col)} (asked: ${place.lat}, ${place.lon})`;
  const gaps = input.columns.map((c) => ({ ...c, ...findMissing(c.values, dates) })).filter((c) => c.count > 0);
  if (gaps.length === 0) return;
  if (gaps.length === input.columns.length && gaps.every((g) => g.count === input.days)) {
    throw new HttpError({ kind: "missing_values", message: `An APSIM weather file cannot hold missing values, and ${where} holds none on any date of ${period}: it is ocean or outside SILO's land mask. Ask for a place on land.` });
  }
  const said = gaps.map((g) => `${g.variable.name} (${g.variable.apsim!.column}) on ${g.count} date${g.count === 1 ? "" : "s"} (${g.first.join(", ")}${g.count > g.first.length ? ", ..." : ""})`);
  throw new HttpError({ kind: "missing_values", message: `An APSIM weather file cannot hold missing values, and ${where} misses ${said.join("; ")} in ${period}. Ask format=csv to see every missing value, or choose another period or place.` });
}

function writeHeader(out: ByteSink, input: MetInput, columns: MetColumn[], dates: PeriodDates, tavAmp: { tav: number; amp: number }): void {
  const { place } = input;
  const licenses = [...new Set(columns.map((c) => `${c.version.license}: ${c.version.attribution}`))];
  const lines = [
    "[weather.met.weather]",
    `!SILO daily gridded data of the 0.05 degree cell centred on latitude ${rowToLat(place.row)}, longitude ${colToLon(place.col)} (asked: ${place.lat}, ${place.lon})`,
    `!period ${dates.date(0)} to ${dates.date(input.days - 1)}; tav and amp computed over it as APSIM's Weather component computes them`,
    ...columns.map((c) => `!${c.variable.apsim!.column}: ${c.variable.name} of dataset version ${c.version.id}`),
    ...licenses.map((l) => `!license ${l}`),
    `latitude = ${rowToLat(place.row).toFixed(2)} (DECIMAL DEGREES)`,
    `longitude = ${colToLon(place.col).toFixed(2)} (DECIMAL DEGREES)`,
    `tav = ${tavAmp.tav.toFixed(2)} (oC) ! annual average ambient temperature`,
    `amp = ${tavAmp.amp.toFixed(2)} (oC) ! annual amplitude in mean monthly temperature`,
    "!",
    `year day ${columns.map((c) => c.variable.apsim!.column).join(" ")}`,
    `() () ${columns.map((c) => `(${c.variable.apsim!.unit})`).join(" ")}`,
  ];
  // APSIM reads any line holding "=" as a constant: a comment never holds one
  out.text(`${lines.map((l) => (l.startsWith("!") ? l.replaceAll("=", "-") : l)).join("\n")}\n`);
}

const MET_VALUES = valueWords(" ", "");

/** The rows: `year day` then each column's value, space-separated, one line a day. */
function writeRows(out: ByteSink, columns: MetColumn[], dates: PeriodDates): void {
  const digits = new Uint8Array(8);
  out.write(dates.days * (9 + columns.length * (1 + VALUE_TEXT_MAX) + 1) + STORE_SLACK, (buffer, start) => {
    const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    let at = start;
    for (let d = 0; d < dates.days; d++) {
      at = dates.putYear(view, at, d);
      buffer[at++] = 32;
      let n = dates.dayOfYear[d];
      let len = 0;
      do digits[len++] = 48 + (n % 10);
      while ((n = Math.floor(n / 10)) > 0);
      while (len > 0) buffer[at++] = digits[--len];
      for (const c of columns) at = MET_VALUES.put(view, buffer, at, c.values[d]);
      buffer[at++] = 10;
    }
    return at;
  });
}

/** The .met file of one place, or a 422 naming what is missing. */
export function writeMet(input: MetInput): Uint8Array {
  // in the order SILO writes them (format/variables.ts): radn maxt mint rain, evap and vp only when asked
  const columns = [...input.columns].sort((a, b) => a.variable.apsim!.order - b.variable.apsim!.order);
  const dates = periodDates(input.start, input.days);
  checkComplete(input, dates);
  const column = (name: string) => columns.find((c) => c.variable.apsim!.column === name)!.values;
  const out = new ByteSink();
  writeHeader(out, input, columns, dates, computeTavAmp(dates, column("maxt"), column("mint")));
  writeRows(out, columns, dates);
  return out.finish();
}
