// A period's dates as the series writers put them: `YYYY-MM-DD` bytes written by counting, never by formatting each
// date, with each one's year, month and day of the year (values become text in format/number-text.ts).

import { dateToDayNumber, dayNumberToDate, isLeapYear } from "../../format/dates.js";

const MONTH_DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** A period's dates: `YYYY-MM-DD` as 10 ASCII bytes each, day after day, and each one's year, month and day of the year. */
export class PeriodDates {
  private constructor(
    readonly start: string,
    readonly days: number,
    /** each date's 10 bytes in 12 (three little-endian words, the last one's upper half zero) */
    readonly words: Uint32Array,
    readonly year: Uint16Array,
    /** 1..12 */
    readonly month: Uint8Array,
    readonly dayOfYear: Uint16Array,
  ) {}

  /** The dates of `days` days from `start`, counted out. */
  static count(start: string, days: number): PeriodDates {
    const dates = new PeriodDates(start, days, new Uint32Array(days * 3), new Uint16Array(days), new Uint8Array(days), new Uint16Array(days));
    let y = Number(start.slice(0, 4));
    let m = Number(start.slice(5, 7));
    let d = Number(start.slice(8, 10));
    let doy = dateToDayNumber(start) - dateToDayNumber(`${start.slice(0, 4)}-01-01`) + 1;
    const text = new Uint8Array(dates.words.buffer);
    for (let i = 0, at = 0; i < days; i++, at += 12) {
      text[at] = 48 + ((y / 1000) | 0);
      text[at + 1] = 48 + (((y / 100) | 0) % 10);
      text[at + 2] = 48 + (((y / 10) | 0) % 10);
      text[at + 3] = 48 + (y % 10);
      text[at + 4] = 45;
      text[at + 5] = 48 + ((m / 10) | 0);
      text[at + 6] = 48 + (m % 10);
      text[at + 7] = 45;
      text[at + 8] = 48 + ((d / 10) | 0);
      text[at + 9] = 48 + (d % 10);
      dates.year[i] = y;
      dates.month[i] = m;
      dates.dayOfYear[i] = doy++;
      if (++d > (m === 2 && isLeapYear(y) ? 29 : MONTH_DAYS[m])) {
        d = 1;
        if (++m > 12) {
          m = 1;
          y++;
          doy = 1;
        }
      }
    }
    return dates;
  }

  /** Dates [from, from + days) of these, as views (no copy); `start` is date `from`. */
  slice(from: number, days: number, start: string): PeriodDates {
    const to = from + days;
    return new PeriodDates(start, days, this.words.subarray(3 * from, 3 * to), this.year.subarray(from, to), this.month.subarray(from, to), this.dayOfYear.subarray(from, to));
  }

  /** Writes date `i`'s 10 bytes at `at` (12 are stored); returns where the date ends. */
  put(view: DataView, at: number, i: number): number {
    view.setUint32(at, this.words[3 * i], true);
    view.setUint32(at + 4, this.words[3 * i + 1], true);
    view.setUint32(at + 8, this.words[3 * i + 2], true);
    return at + 10;
  }

  /** Writes date `i`'s year (4 bytes) at `at`; returns where it ends. */
  putYear(view: DataView, at: number, i: number): number {
    view.setUint32(at, this.words[3 * i], true);
    return at + 4;
  }

  /** The `i`th date as a string. */
  date(i: number): string {
    return dayNumberToDate(dateToDayNumber(this.start) + i);
  }
}

/**
 * Every date from 1800 to 2100 (1.9 MB), counted once on first use and widened when a period reaches past it: a
 * period's dates are views of it. Counting out each answer's dates took 4% of the series route's time (a new place
 * and period on every request).
 */
let calendar: { first: number; dates: PeriodDates } | null = null;
const CALENDAR = ["1800-01-01", "2100-01-01"].map(dateToDayNumber);

export function periodDates(start: string, days: number): PeriodDates {
  const first = dateToDayNumber(start);
  if (!calendar || first < calendar.first || first + days > calendar.first + calendar.dates.days) {
    const from = Math.min(first, CALENDAR[0], calendar?.first ?? Infinity);
    const to = Math.max(first + days, CALENDAR[1], calendar ? calendar.first + calendar.dates.days : 0);
    calendar = { first: from, dates: PeriodDates.count(dayNumberToDate(from), to - from) };
  }
  return calendar.dates.slice(first - calendar.first, days, start);
}
