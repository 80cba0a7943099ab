// The text pieces of series answers as bytes: a float32 value's shortest decimal (docs/contract.md §2), made once
// per value and reused, and a period's dates written by counting, never by formatting each date.

import { dateToDayNumber, dayNumberToDate } from "../format/dates.js";
import { cellToJson } from "./serialize.js";

/** The longest value text: a float32's shortest decimal (at most 9 significant digits, sign, point, exponent). */
export const VALUE_TEXT_MAX = 16;

// SILO values are tenths: their text is found by arithmetic (k = 10 v) in a table filled as met; any other float32
// goes through a bounded map.
const tenths: (Uint8Array | undefined)[] = new Array(65536);
const others = new Map<number, Uint8Array>();
const EMPTY = new Uint8Array(0);

function ascii(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

/** A value's shortest decimal as ASCII bytes; no bytes for missing (NaN). */
export function valueBytes(v: number): Uint8Array {
  if (v !== v) return EMPTY;
  const k = Math.round(v * 10);
  if (k >= -32768 && k < 32768 && Math.fround(k / 10) === v) return (tenths[k + 32768] ??= ascii(cellToJson(v)));
  let bytes = others.get(v);
  if (!bytes) {
    bytes = ascii(cellToJson(v));
    if (others.size < 1 << 16) others.set(v, bytes);
  }
  return bytes;
}

/** Copies `part` into `buffer` at `at`; returns where it ends (short parts byte by byte: cheaper than set()). */
export function putBytes(buffer: Uint8Array, at: number, part: Uint8Array): number {
  const n = part.length;
  if (n <= 16) for (let i = 0; i < n; i++) buffer[at + i] = part[i];
  else buffer.set(part, at);
  return at + n;
}

const daysIn = (year: number, month: number) => (month === 2 ? ((year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31);

/** A period's dates: `YYYY-MM-DD` as 10 ASCII bytes each, day after day, and each one's year and day of the year. */
export class PeriodDates {
  readonly text: Uint8Array;
  readonly year: Uint16Array;
  readonly dayOfYear: Uint16Array;

  constructor(
    readonly start: string,
    readonly days: number,
  ) {
    this.text = new Uint8Array(days * 10);
    this.year = new Uint16Array(days);
    this.dayOfYear = new Uint16Array(days);
    let [y, m, d] = start.split("-").map(Number);
    let doy = dateToDayNumber(start) - dateToDayNumber(`${start.slice(0, 4)}-01-01`) + 1;
    const digits = (at: number, n: number, width: number) => {
      for (let i = width - 1; i >= 0; i--, n = Math.floor(n / 10)) this.text[at + i] = 48 + (n % 10);
    };
    for (let i = 0; i < days; i++) {
      const at = i * 10;
      digits(at, y, 4);
      this.text[at + 4] = 45;
      digits(at + 5, m, 2);
      this.text[at + 7] = 45;
      digits(at + 8, d, 2);
      this.year[i] = y;
      this.dayOfYear[i] = doy;
      if (++d > daysIn(y, m)) [d, m] = [1, m + 1];
      if (m > 12) [m, y, doy] = [1, y + 1, 0];
      doy++;
    }
  }

  /** The `i`th date as a string. */
  date(i: number): string {
    return dayNumberToDate(dateToDayNumber(this.start) + i);
  }
}
