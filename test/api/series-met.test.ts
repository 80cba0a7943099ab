// The APSIM weather file writer: exact bytes of a small file, tav and amp as APSIM's Weather component computes them
// (worked by hand here), year by year with the whole years marked, the tav_amp program's pooled months, and the 422
// that a missing value or an ocean cell is. (Which dates a served file's tav and amp come from: series-met-years.test.ts.)

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { type MetColumn, type MetInput, computePooledTavAmp, computeTavAmp, computeYearlyTavAmp, writeMet } from "../../api/series/met.js";
import { HttpError } from "../../api/errors.js";
import { periodDates } from "../../api/series/period-dates.js";
import { findVariable } from "../../format/variables.js";

const VERSION = { id: "silo-x-20031130-20040101-0123456789abcdef", license: "CC-BY-4.0", attribution: "Queensland Government SILO; interpolated Bureau of Meteorology and other observations." };
const place = { lat: -27.01, lon: 133.02, col: 421, row: 340 };

function column(name: string, values: number[]): MetColumn {
  return { variable: findVariable(name)!, values: Float32Array.from(values), version: { ...VERSION, id: VERSION.id.replace("x", name) } };
}

const met = suite("met");

met("met - tav and amp as APSIM computes them: monthly means of (maxt + mint) / 2 per calendar year, a year's means summed over 12", () => {
  // 2003-11-30 .. 2004-01-01: November 2003 holds one day (mean 20), December every day at mean 22, January 2004 one day (12.5)
  const days = 33;
  const maxt = new Float32Array(days).fill(32);
  const mint = new Float32Array(days).fill(12);
  [maxt[0], mint[0]] = [30, 10];
  [maxt[32], mint[32]] = [20.5, 4.5];
  const { tav, amp } = computeTavAmp(periodDates("2003-11-30", days), maxt, mint);
  // 2003: (20 + 22) / 12 = 3.5, amplitude 22 - 20 = 2; 2004: 12.5 / 12, amplitude 0; both averaged over the two years
  assert.is(tav, (3.5 + 12.5 / 12) / 2);
  assert.is(amp, 1);
  // values as the file writes them: float32 21.1 is read back as the decimal 21.1, not 21.100000381469727
  const one = computeTavAmp(periodDates("2003-01-01", 1), Float32Array.of(21.1), Float32Array.of(10.2));
  assert.is(one.tav, ((21.1 + 10.2) * 0.5) / 12);
});

met("met - each year's tav and amp, whole only when every date of it is held with both values; a missing value is left out of its month", () => {
  // 2003-12-31 .. 2005-01-01: December 2003 holds one day, 2004 every day (a leap year), 2005 one day
  const days = 368;
  const dates = periodDates("2003-12-31", days);
  const maxt = new Float32Array(days).fill(30);
  const mint = new Float32Array(days).fill(10);
  // 2004: January's mean 24 ((38 + 10) / 2), the other months 20
  for (let d = 1; d <= 31; d++) maxt[d] = 38;
  const years = computeYearlyTavAmp(dates, maxt, mint);
  assert.equal(years, [
    { year: 2003, tav: 20 / 12, amp: 0, whole: false },
    { year: 2004, tav: (24 + 11 * 20) / 12, amp: 4, whole: true },
    { year: 2005, tav: 20 / 12, amp: 0, whole: false },
  ]);
  // a missing maximum on 2004-01-10: January's mean is over its 30 other days, and 2004 is no longer whole
  maxt[10] = NaN;
  const gappy = computeYearlyTavAmp(dates, maxt, mint)[1];
  assert.equal(gappy, { year: 2004, tav: (24 + 11 * 20) / 12, amp: 4, whole: false });
});

met("met - the tav_amp program's arithmetic: each calendar month's mean pooled over every day of it across years, their mean and range", () => {
  // January 2003 at mean 20 (31 days), January 2004 at mean 26 (31 days), February 2004 at mean 14 (29 days)
  const part = (start: string, days: number, mean: number) => ({ dates: periodDates(start, days), maxt: new Float32Array(days).fill(mean + 5), mint: new Float32Array(days).fill(mean - 5) });
  const pooled = computePooledTavAmp([part("2003-01-01", 31, 20), part("2004-01-01", 31, 26), part("2004-02-01", 29, 14)]);
  assert.equal(pooled, { tav: (23 + 14) / 2, amp: 9, months: 2 });
});

met("met - exact bytes: the header APSIM reads, the columns in SILO's order whatever the order asked, vp when asked, one row a day", () => {
  const input: MetInput = {
    place,
    start: "2003-12-30",
    days: 3,
    columns: [
      column("max_temp", [33.2, 30, 28.4]),
      column("daily_rain", [0, 12.6, 0.2]),
      column("radiation", [25.1, 18, 27.3]),
      column("min_temp", [20.1, 19.5, 15]),
      column("vp", [21.3, 24, 18.9]),
    ],
  };
  const { tav, amp } = computeTavAmp(periodDates("2003-12-30", 3), Float32Array.of(33.2, 30, 28.4), Float32Array.of(20.1, 19.5, 15));
  const basis = "over the whole calendar years 1990 to 2020 (31 years) of the place's published record";
  const text = new TextDecoder().decode(writeMet(input, { tav: 18.456, amp: 12.004, basis }));
  assert.is(
    text,
    [
      "[weather.met.weather]",
      "!SILO daily gridded data of the 0.05 degree cell centred on latitude -27, longitude 133.05 (asked: -27.01, 133.02)",
      "!period 2003-12-30 to 2004-01-01",
      `!tav and amp: ${basis}`,
      "!radn: surface_downwelling_shortwave_flux_in_air of dataset version silo-radiation-20031130-20040101-0123456789abcdef",
      "!maxt: air_temperature_max of dataset version silo-max_temp-20031130-20040101-0123456789abcdef",
      "!mint: air_temperature_min of dataset version silo-min_temp-20031130-20040101-0123456789abcdef",
      "!rain: precipitation_amount of dataset version silo-daily_rain-20031130-20040101-0123456789abcdef",
      "!vp: water_vapor_partial_pressure_in_air of dataset version silo-vp-20031130-20040101-0123456789abcdef",
      "!license CC-BY-4.0: Queensland Government SILO; interpolated Bureau of Meteorology and other observations.",
      "latitude = -27.00 (DECIMAL DEGREES)",
      "longitude = 133.05 (DECIMAL DEGREES)",
      "tav = 18.46 (oC) ! annual average ambient temperature",
      "amp = 12.00 (oC) ! annual amplitude in mean monthly temperature",
      "!",
      "year day radn maxt mint rain vp",
      "() () (MJ/m2) (oC) (oC) (mm) (hPa)",
      "2003 364 25.1 33.2 20.1 0 21.3",
      "2003 365 18 30 19.5 12.6 24",
      "2004 1 27.3 28.4 15 0.2 18.9",
      "",
    ].join("\n"),
  );
  // 2003: December's mean of (33.2 + 20.1) / 2 and (30 + 19.5) / 2, over 12; 2004: January's (28.4 + 15) / 2 over 12;
  // one month a year, so no amplitude
  const december = ((33.2 + 20.1) * 0.5 + (30 + 19.5) * 0.5) / 2;
  assert.is(tav, (december / 12 + ((28.4 + 15) * 0.5) / 12) / 2);
  assert.is(amp, 0);
  assert.not.match(text.split("\n").filter((l) => l.startsWith("!")).join(""), "=", "no comment holds '=' (APSIM would read it as a constant)");
});

met("met - a missing value is a 422 naming the variable, the place and the first dates; an ocean cell says it is ocean", () => {
  const base = (rain: number[]): MetInput => ({
    place,
    start: "2004-02-27",
    days: 4,
    columns: [column("radiation", [20, 21, 22, 23]), column("max_temp", [30, 31, 32, 33]), column("min_temp", [10, 11, 12, 13]), column("daily_rain", rain)],
  });
  const refusal = (input: MetInput): HttpError => {
    try {
      writeMet(input, { tav: 20, amp: 10, basis: "over the whole calendar year 2004 of this file" });
    } catch (err) {
      return err as HttpError;
    }
    throw new Error("a file was written");
  };
  const missing = refusal(base([0, NaN, 1, NaN]));
  assert.instance(missing, HttpError);
  assert.is(missing.status, 422);
  assert.is(missing.kind, "missing_values");
  assert.is(
    missing.message,
    "An APSIM weather file cannot hold missing values, and the SILO cell centred on latitude -27, longitude 133.05 (asked: -27.01, 133.02) misses precipitation_amount (rain) on 2 dates (2004-02-28, 2004-03-01) in 2004-02-27..2004-03-01. Ask format=csv to see every missing value, or choose another period or place.",
  );
  const ocean = refusal({ ...base([NaN, NaN, NaN, NaN]), columns: base([NaN, NaN, NaN, NaN]).columns.map((c) => ({ ...c, values: new Float32Array(4).fill(NaN) })) });
  assert.match(ocean.message, "holds none on any date of 2004-02-27..2004-03-01: it is ocean or outside SILO's land mask. Ask for a place on land.");
});

met.run();
