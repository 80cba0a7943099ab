// The text pieces of series answers as bytes: a float32 value's shortest decimal (docs/contract.md §2), made once
// per value and reused, and a period's dates written by counting, never by formatting each date.

import { dateToDayNumber, dayNumberToDate } from "../format/dates.js";
import { cellToJson } from "./serialize.js";

/** The longest value text: a float32's shortest decimal (at most 9 significant digits, sign, point, exponent). */
export const VALUE_TEXT_MAX = 16;
/** Bytes a writer of word stores may store past the end of what it writes. */
export const STORE_SLACK = 8;

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

/**
 * A value's text after its separator (",25.3", " 25.3", ",null") as two little-endian words, so a row is written
 * with a few 4-byte stores instead of a store a byte (what follows overwrites the bytes past the text's end): a
 * table of every tenths code, filled as met; any other float32 is written byte by byte.
 */
export class ValueWords {
  private readonly words = new Uint32Array(65536 * 2);
  /** 1 + the text's length; 0 until made */
  private readonly lengths = new Uint8Array(65536);
  private readonly missing: Uint8Array;

  constructor(
    private readonly separator: number,
    missingText: string,
  ) {
    this.missing = Uint8Array.from(`${String.fromCharCode(separator)}${missingText}`, (c) => c.charCodeAt(0));
  }

  private fill(index: number, v: number): number {
    const text = valueBytes(v);
    const bytes = new Uint8Array(8);
    bytes[0] = this.separator;
    bytes.set(text, 1);
    const view = new DataView(bytes.buffer);
    this.words[2 * index] = view.getUint32(0, true);
    this.words[2 * index + 1] = view.getUint32(4, true);
    return (this.lengths[index] = text.length + 2);
  }

  /** Writes the separator and `v`'s text at `at` (up to 8 bytes are stored); returns where the text ends. */
  put(view: DataView, buffer: Uint8Array, at: number, v: number): number {
    if (v !== v) return putBytes(buffer, at, this.missing);
    const k = Math.round(v * 10);
    if (k < -32768 || k >= 32768 || Math.fround(k / 10) !== v) {
      buffer[at] = this.separator;
      return putBytes(buffer, at + 1, valueBytes(v));
    }
    const index = k + 32768;
    const length = this.lengths[index] || this.fill(index, v);
    view.setUint32(at, this.words[2 * index], true);
    view.setUint32(at + 4, this.words[2 * index + 1], true);
    return at + length - 1;
  }
}

/** Copies `part` into `buffer` at `at`; returns where it ends (short parts byte by byte: cheaper than set()). */
export function putBytes(buffer: Uint8Array, at: number, part: Uint8Array): number {
  const n = part.length;
  if (n <= 16) for (let i = 0; i < n; i++) buffer[at + i] = part[i];
  else buffer.set(part, at);
  return at + n;
}

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
