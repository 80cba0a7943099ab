// A period's dates as the series writers put them: `YYYY-MM-DD` bytes written by counting, never by formatting each
// date, with each one's year, month and day of the year (values become text in format/number-text.ts).

import { dateToDayNumber, dayNumberToDate } from "../../format/dates.js";

const MONTH_DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeap = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

/** A period's dates: `YYYY-MM-DD` as 10 ASCII bytes each, day after day, and each one's year, month and day of the year. */
export class PeriodDates {
  /** each date's 10 bytes in 12 (three little-endian words, the last one's upper half zero) */
  readonly words: Uint32Array;
  readonly year: Uint16Array;
  /** 1..12 */
  readonly month: Uint8Array;
  readonly dayOfYear: Uint16Array;

  constructor(
    readonly start: string,
    readonly days: number,
  ) {
    this.words = new Uint32Array(days * 3);
    this.year = new Uint16Array(days);
    this.month = new Uint8Array(days);
    this.dayOfYear = new Uint16Array(days);
    let y = Number(start.slice(0, 4));
    let m = Number(start.slice(5, 7));
    let d = Number(start.slice(8, 10));
    let doy = dateToDayNumber(start) - dateToDayNumber(`${start.slice(0, 4)}-01-01`) + 1;
    const text = new Uint8Array(this.words.buffer);
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
      this.year[i] = y;
      this.month[i] = m;
      this.dayOfYear[i] = doy++;
      if (++d > (m === 2 && isLeap(y) ? 29 : MONTH_DAYS[m])) {
        d = 1;
        if (++m > 12) {
          m = 1;
          y++;
          doy = 1;
        }
      }
    }
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

/** The dates of recent periods: a place's whole archive is asked again and again, its 50,000 dates made once. */
const recent = new Map<string, PeriodDates>();

export function periodDates(start: string, days: number): PeriodDates {
  const key = `${start}/${days}`;
  let dates = recent.get(key);
  if (!dates) {
    dates = new PeriodDates(start, days);
    if (recent.size >= 8) recent.delete(recent.keys().next().value!);
    recent.set(key, dates);
  }
  return dates;
}
