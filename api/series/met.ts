// An APSIM weather file (`.met`) of one place (docs/contract.md §8.2): the header APSIM reads, `tav` and `amp` of the
// place's climate (api/series/climate.ts chooses the dates: whole calendar years), the column line, the units line and
// one row a day. APSIM cannot read a missing value, so a file is made only when every value is there: else a 422 that
// says which variable is missing where.

import { isLeapYear } from "../../format/dates.js";
import { colToLon, rowToLat } from "../../format/grid.js";
import { STORE_SLACK, VALUE_TEXT_MAX, float32ToShortest, valueWords } from "../../format/number-text.js";
import type { Variable } from "../../format/variables.js";
import { HttpError } from "../errors.js";
import { ByteSink } from "../bytes.js";
import type { Place } from "./call.js";
import { type PeriodDates, periodDates } from "./period-dates.js";

/** "a, b, c and d": names in a sentence. */
export function joinNames(names: readonly string[]): string {
  return names.length <= 1 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}

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

/** Days of maxt and mint, one value a date from `dates.start`. */
export interface MetDays {
  dates: PeriodDates;
  maxt: Float32Array;
  mint: Float32Array;
}

/** `tav` and `amp` as the header states them, and the comment line saying which dates they come from. */
export interface MetClimate {
  tav: number;
  amp: number;
  /** what they were computed over, for the header's comment line (api/series/climate.ts) */
  basis: string;
}

/** One calendar year's `tav` and `amp` by APSIM's arithmetic. */
export interface YearTavAmp {
  year: number;
  tav: number;
  amp: number;
  /**
   * whether every date of the year is in the period with both values (a year held in part is still computed, as
   * APSIM does, but describes no year; a missing value counts as none in its month)
   */
  whole: boolean;
}

/**
 * Each calendar year's `tav` and `amp` as APSIM's Weather component computes them (ApsimX Models/Climate/Weather.cs,
 * processMonthlyTAVAMP): the mean of (maxt + mint) / 2 of each month of the year the period holds; the year's tav is
 * the sum of those monthly means divided by 12 (whatever months it holds) and its amp the highest monthly mean less
 * the lowest. Values are taken as the file writes them (the shortest decimal of each float32), in double precision.
 */
export function computeYearlyTavAmp(dates: PeriodDates, maxt: Float32Array, mint: Float32Array): YearTavAmp[] {
  const firstYear = dates.year[0];
  const years = dates.year[dates.days - 1] - firstYear + 1;
  const sums = new Float64Array(12 * years);
  const counts = new Int32Array(12 * years);
  for (let d = 0; d < dates.days; d++) {
    // NaN !== NaN: a missing value is left out of its month (its year is then not whole)
    if (maxt[d] !== maxt[d] || mint[d] !== mint[d]) continue;
    const at = (dates.year[d] - firstYear) * 12 + dates.month[d] - 1;
    sums[at] += (float32ToShortest(maxt[d])! + float32ToShortest(mint[d])!) * 0.5;
    counts[at]++;
  }
  const out: YearTavAmp[] = [];
  for (let y = 0; y < years; y++) {
    let means = 0;
    let high = -Infinity;
    let low = Infinity;
    let days = 0;
    for (let m = 0; m < 12; m++) {
      if (counts[y * 12 + m] === 0) continue;
      const mean = sums[y * 12 + m] / counts[y * 12 + m];
      means += mean;
      high = Math.max(mean, high);
      low = Math.min(mean, low);
      days += counts[y * 12 + m];
    }
    if (days > 0) out.push({ year: firstYear + y, tav: means / 12.0, amp: high - low, whole: days === (isLeapYear(firstYear + y) ? 366 : 365) });
  }
  return out;
}

/** The average of the years' tav and amp (Weather.cs: the sums over the years, divided by their count). */
export function averageYears(years: YearTavAmp[]): { tav: number; amp: number } {
  let tav = 0;
  let amp = 0;
  for (const y of years) {
    tav += y.tav;
    amp += y.amp;
  }
  return { tav: tav / years.length, amp: amp / years.length };
}

/** tav and amp as APSIM computes them from a file of these dates alone (every year it touches, in part or whole). */
export function computeTavAmp(dates: PeriodDates, maxt: Float32Array, mint: Float32Array): { tav: number; amp: number } {
  return averageYears(computeYearlyTavAmp(dates, maxt, mint));
}

/**
 * tav and amp by the arithmetic of APSIM's stand-alone tav_amp program (as the APSIM R package's insertTavAmp states
 * it): the mean of (maxt + mint) / 2 over every day of each calendar month in the dates given, pooled across years;
 * tav the mean of those monthly means, amp the highest less the lowest. Over fewer than 12 calendar months it is not a
 * year's climate: api/series/climate.ts uses it only when the record holds no whole year, and says so. `parts` are
 * the days to pool (whole months, say), in any order.
 */
export function computePooledTavAmp(parts: MetDays[]): { tav: number; amp: number; months: number } {
  const sums = new Float64Array(12);
  const counts = new Int32Array(12);
  for (const { dates, maxt, mint } of parts) {
    for (let d = 0; d < dates.days; d++) {
      sums[dates.month[d] - 1] += (float32ToShortest(maxt[d])! + float32ToShortest(mint[d])!) * 0.5;
      counts[dates.month[d] - 1]++;
    }
  }
  let means = 0;
  let months = 0;
  let high = -Infinity;
  let low = Infinity;
  for (let m = 0; m < 12; m++) {
    if (counts[m] === 0) continue;
    const mean = sums[m] / counts[m];
    means += mean;
    months++;
    high = Math.max(mean, high);
    low = Math.min(mean, low);
  }
  return { tav: means / months, amp: high - low, months };
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
export function checkComplete(input: MetInput, dates: PeriodDates = periodDates(input.start, input.days)): void {
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

function writeHeader(out: ByteSink, input: MetInput, columns: MetColumn[], dates: PeriodDates, climate: MetClimate): void {
  const { place } = input;
  const licenses = [...new Set(columns.map((c) => `${c.version.license}: ${c.version.attribution}`))];
  const lines = [
    "[weather.met.weather]",
    `!SILO daily gridded data of the 0.05 degree cell centred on latitude ${rowToLat(place.row)}, longitude ${colToLon(place.col)} (asked: ${place.lat}, ${place.lon})`,
    `!period ${dates.date(0)} to ${dates.date(input.days - 1)}`,
    `!tav and amp: ${climate.basis}`,
    ...columns.map((c) => `!${c.variable.apsim!.column}: ${c.variable.name} of dataset version ${c.version.id}`),
    ...licenses.map((l) => `!license ${l}`),
    `latitude = ${rowToLat(place.row).toFixed(2)} (DECIMAL DEGREES)`,
    `longitude = ${colToLon(place.col).toFixed(2)} (DECIMAL DEGREES)`,
    `tav = ${climate.tav.toFixed(2)} (oC) ! annual average ambient temperature`,
    `amp = ${climate.amp.toFixed(2)} (oC) ! annual amplitude in mean monthly temperature`,
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

/** The .met file of one place, its header stating `climate`, or a 422 naming what is missing. */
export function writeMet(input: MetInput, climate: MetClimate): Uint8Array {
  // in the order SILO writes them (format/variables.ts): radn maxt mint rain, evap and vp only when asked
  const columns = [...input.columns].sort((a, b) => a.variable.apsim!.order - b.variable.apsim!.order);
  const dates = periodDates(input.start, input.days);
  checkComplete(input, dates);
  const out = new ByteSink();
  writeHeader(out, input, columns, dates, climate);
  writeRows(out, columns, dates);
  return out.finish();
}
