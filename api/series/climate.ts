// The climate an APSIM file's header states (docs/contract.md §8.2): `tav` and `amp` over whole calendar years, those
// the answer holds, else those of the place's published record (the versions answering maxt and mint, read from their
// series spans at the place: more days than asked); when the record holds no whole year, over its whole months by the
// arithmetic of APSIM's tav_amp program, labelled as such. The file's comment line says which dates they come from.

import { dateToDayNumber, dayNumberToDate } from "../../format/dates.js";
import { type Window, containsWindow } from "../../format/grid.js";
import type { RasterView } from "../../format/versions.js";
import { findHoldingSlices } from "../tiers.js";
import { type MetClimate, type MetDays, averageYears, computePooledTavAmp, computeYearlyTavAmp } from "./met.js";
import type { Place } from "./call.js";
import { joinNames } from "./met.js";
import { periodDates } from "./period-dates.js";
import { readFromSpans } from "./read.js";
import type { SeriesChoice, SeriesSelection } from "./select.js";

const WEATHER_CS =
  "as APSIM's Weather component computes them (ApsimX Weather.cs: the mean of (maxt + mint) / 2 of each month, a year's tav their sum over 12 and its amp their range, averaged over the years)";

/** "1990 to 1995, 1997 and 1999 to 2020 (29 years)". */
function describeYears(years: number[]): string {
  const runs: string[] = [];
  for (let i = 0; i < years.length; ) {
    let j = i;
    while (j + 1 < years.length && years[j + 1] === years[j] + 1) j++;
    runs.push(i === j ? `${years[i]}` : `${years[i]} to ${years[j]}`);
    i = j + 1;
  }
  return `${joinNames(runs)} (${years.length} year${years.length === 1 ? "" : "s"})`;
}

/** Runs of consecutive days [first, last] (day numbers) on which a version's series spans hold `cell`. */
function findHeldRuns(view: RasterView, cell: Window): [number, number][] {
  const runs: [number, number][] = [];
  for (const span of view.index.series) {
    if (!containsWindow(span.window, cell)) continue;
    const [first, last] = [dateToDayNumber(span.first), dateToDayNumber(span.last)];
    const open = runs.at(-1);
    if (open && open[1] + 1 === first) open[1] = last;
    else runs.push([first, last]);
  }
  return runs;
}

/** The days two lists of runs both hold, as runs. */
function intersectRuns(a: [number, number][], b: [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    const [lo, hi] = [Math.max(a[i][0], b[j][0]), Math.min(a[i][1], b[j][1])];
    if (lo <= hi) out.push([lo, hi]);
    if (a[i][1] < b[j][1]) i++;
    else j++;
  }
  return out;
}

/** The place's whole record of maxt and mint in the versions this file reads: every run of dates both hold there. */
async function readRecord(maxt: SeriesChoice, mint: SeriesChoice, place: Place): Promise<MetDays[]> {
  const cell: Window = [place.col, place.row, 1, 1];
  const runs = intersectRuns(findHeldRuns(maxt.view, cell), findHeldRuns(mint.view, cell));
  return Promise.all(
    runs.map(async ([first, last]) => {
      const [start, end, days] = [dayNumberToDate(first), dayNumberToDate(last), last - first + 1];
      const read = (choice: SeriesChoice) => {
        const slices = findHoldingSlices(choice.view, [cell], start, end);
        if (!slices) throw new Error(`${choice.view.record.id}: its spans hold the cell on ${start}..${end} but findHoldingSlices found none`);
        return readFromSpans({ ...choice, slices }, place, days);
      };
      const [maxtValues, mintValues] = await Promise.all([read(maxt), read(mint)]);
      return { dates: periodDates(start, days), maxt: maxtValues, mint: mintValues };
    }),
  );
}

/** The whole months of some days with no value missing, each as its own days. */
function findWholeMonths(part: MetDays): MetDays[] {
  const out: MetDays[] = [];
  const { dates } = part;
  for (let from = 0; from < dates.days; ) {
    let to = from;
    while (to + 1 < dates.days && dates.month[to + 1] === dates.month[from]) to++;
    // whole: it begins on the 1st and the day after it is the next month's 1st
    let complete = dates.date(from).endsWith("-01") && dates.date(to + 1).endsWith("-01");
    for (let d = from; complete && d <= to; d++) if (Number.isNaN(part.maxt[d]) || Number.isNaN(part.mint[d])) complete = false;
    if (complete) out.push({ dates: dates.slice(from, to - from + 1, dates.date(from)), maxt: part.maxt.subarray(from, to + 1), mint: part.mint.subarray(from, to + 1) });
    from = to + 1;
  }
  return out;
}

/** "2003-01", or "2003-01 to 2004-02" (the first and last of them). */
function describeMonths(months: MetDays[]): string {
  const [first, last] = [months[0].dates.start.slice(0, 7), months[months.length - 1].dates.start.slice(0, 7)];
  return first === last ? first : `${first} to ${last}`;
}

/**
 * tav and amp of the place, and which dates they come from: the whole calendar years of `answer` (this file), else the
 * whole years of the place's published record (every date held, no value missing), else the record's whole months by
 * the tav_amp program's arithmetic, else this file's days by it, each said so in `basis`. `answer` holds no missing value
 * (api/series/met.ts checkComplete has passed).
 */
export async function findMetClimate(maxt: SeriesChoice, mint: SeriesChoice, place: Place, answer: MetDays): Promise<MetClimate> {
  const years = computeYearlyTavAmp(answer.dates, answer.maxt, answer.mint).filter((y) => y.whole);
  if (years.length > 0) return { ...averageYears(years), basis: `over the whole calendar years ${describeYears(years.map((y) => y.year))} of this file, ${WEATHER_CS}` };
  const record = await readRecord(maxt, mint, place);
  const recordYears = record.flatMap((r) => computeYearlyTavAmp(r.dates, r.maxt, r.mint)).filter((y) => y.whole);
  if (recordYears.length > 0) {
    const basis = `this file holds no whole calendar year; over the whole calendar years ${describeYears(recordYears.map((y) => y.year))} of the place's published record (the versions of maxt and mint named below, every date held, no value missing), ${WEATHER_CS}`;
    return { ...averageYears(recordYears), basis };
  }
  const months = record.flatMap(findWholeMonths);
  const pooled = computePooledTavAmp(months.length > 0 ? months : [answer]);
  const over =
    months.length > 0
      ? `no whole calendar year; over its ${months.length} whole month${months.length === 1 ? "" : "s"} (${describeMonths(months)})`
      : `no whole calendar year nor a whole month; over the ${answer.dates.days} day${answer.dates.days === 1 ? "" : "s"} of this file`;
  const year = pooled.months < 12 ? ", so not a whole year's climate" : "";
  const basis = `the place's published record holds ${over}: tav the mean and amp the range of the mean of (maxt + mint) / 2 of each of ${pooled.months} calendar month${pooled.months === 1 ? "" : "s"}, as APSIM's tav_amp program computes them${year}`;
  return { tav: pooled.tav, amp: pooled.amp, basis };
}

/** The climate of a .met answer: its maxt and mint columns found among the selection's variables. */
export function findAnswerClimate(selection: SeriesSelection, place: Place, values: Float32Array[][]): Promise<MetClimate> {
  const at = (column: string) => selection.choices.findIndex((c) => c.variable.apsim?.column === column);
  const [maxt, mint] = [at("maxt"), at("mint")];
  const answer = { dates: periodDates(selection.start, selection.days), maxt: values[maxt][0], mint: values[mint][0] };
  return findMetClimate(selection.choices[maxt], selection.choices[mint], place, answer);
}
