// How a float32 value becomes text, for every writer (docs/contract.md §2): its shortest round-tripping decimal, as a
// number, a string, or bytes for the fast writers (query rows, tiles, samples, series CSV and JSON, APSIM files).
// Each value's text is made once and kept: SILO values are tenths, found by arithmetic (k = 10 v) in tables filled
// as met; any other float32 goes through a bounded map.

import { tenthsValue } from "./cells.js";

/**
 * A bound on the text of any value in a variable's plausible range (format/variables.ts): at most 9 significant
 * digits, a sign, a point and the zeros JavaScript writes before the digits of 1e-6 <= |v| < 1e-5 ("-0.00000" and 9
 * digits). Every writer sizes its buffers by it, and the query's 413 plans bound their rows by it (one constant: the
 * plan's and the writers' bounds once disagreed, 17 and 16).
 */
export const VALUE_TEXT_MAX = 17;
/** Bytes a writer of word stores (ValueWords) may store past the end of what it writes. */
export const STORE_SLACK = 8;
/** Entries each map of other (not tenths) values keeps: SILO's values are tenths, so these stay small. */
const OTHERS_MAX = 1 << 16;
/** Index of a tenths code k in the tables: k + 32768; index 0, the missing code, is never a value's. */
const TENTHS_OFFSET = 32768;

/**
 * The table index of a float32 that is a tenths value (k / 10 as float32, -32767 <= k <= 32767), else -1. The missing
 * code's index (0) is left out, so a value's text and the missing text never share an entry.
 */
function tenthsIndex(v: number): number {
  const k = Math.round(v * 10);
  return k > -TENTHS_OFFSET && k < TENTHS_OFFSET && Math.fround(k / 10) === v ? k + TENTHS_OFFSET : -1;
}

const shortest = new Map<number, number>();

/** The shortest decimal that reads back as the same float32, as a JS number; null for missing (NaN). */
export function float32ToShortest(v: number): number | null {
  if (Number.isNaN(v)) return null;
  let hit = shortest.get(v);
  if (hit === undefined) {
    hit = v;
    for (let p = 1; p <= 9; p++) {
      const candidate = Number(v.toPrecision(p));
      if (Math.fround(candidate) === v) {
        hit = candidate;
        break;
      }
    }
    if (shortest.size < OTHERS_MAX) shortest.set(v, hit);
  }
  return hit;
}

/** by tenths code; made on first use: a holey array of 65,536 costs about 2 ms, and a start makes eight of them */
let tenthsText: (string | undefined)[] = [];
const otherText = new Map<number, string>();

/** A value's shortest decimal as text (not missing). */
function textOf(v: number): string {
  const i = tenthsIndex(v);
  if (i >= 0) {
    if (tenthsText.length === 0) tenthsText = new Array(2 * TENTHS_OFFSET);
    return (tenthsText[i] ??= String(float32ToShortest(v)));
  }
  let text = otherText.get(v);
  if (text === undefined) {
    text = String(float32ToShortest(v));
    if (otherText.size < OTHERS_MAX) otherText.set(v, text);
  }
  return text;
}

/** JSON text of a float32 value: its shortest decimal, or null for missing. */
export function float32ToJson(v: number): string {
  return v !== v ? "null" : textOf(v);
}

function ascii(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

/** Copies `part` into `buffer` at `at`; returns where it ends (short parts byte by byte: cheaper than set()). */
export function putBytes(buffer: Uint8Array, at: number, part: Uint8Array): number {
  const n = part.length;
  if (n <= 16) for (let i = 0; i < n; i++) buffer[at + i] = part[i];
  else buffer.set(part, at);
  return at + n;
}

/** One form of value text as bytes: the value between `before` and `after`, and what missing (NaN) writes. */
export class ValueBytes {
  /** by tenths code; empty until the first value (as tenthsText) */
  private tenths: (Uint8Array | undefined)[] = [];
  private readonly others = new Map<number, Uint8Array>();
  private readonly missing: Uint8Array;

  constructor(
    private readonly before: string,
    private readonly after: string,
    missing: string,
  ) {
    this.missing = ascii(missing);
  }

  /** The bytes of `v` in this form (shared: never write into them). */
  of(v: number): Uint8Array {
    if (v !== v) return this.missing;
    const i = tenthsIndex(v);
    if (i >= 0) return this.tenths[i] ?? this.makeTenths(i, v);
    let bytes = this.others.get(v);
    if (!bytes) {
      bytes = ascii(`${this.before}${textOf(v)}${this.after}`);
      if (this.others.size < OTHERS_MAX) this.others.set(v, bytes);
    }
    return bytes;
  }

  private makeTenths(i: number, v: number): Uint8Array {
    if (this.tenths.length === 0) this.tenths = new Array(2 * TENTHS_OFFSET);
    return (this.tenths[i] = ascii(`${this.before}${textOf(v)}${this.after}`));
  }
}

/**
 * One form of value text after a one-byte separator (",25.3", " 25.3", ",null") as two little-endian words, so a
 * row is written with a few 4-byte stores instead of a store a byte (what follows overwrites the bytes past the
 * text's end, up to STORE_SLACK): a table of every tenths code, filled as met; any other float32 is copied byte by
 * byte. A float32 value (put) and its tenths code (putCodes) write the same bytes.
 */
export class ValueWords {
  private readonly words = new Uint32Array(2 * 2 * TENTHS_OFFSET);
  /** the separator's and the text's length; 0 until made */
  private readonly lengths = new Uint8Array(2 * TENTHS_OFFSET);
  private readonly separator: number;
  private readonly missing: Uint8Array;
  private readonly bare: ValueBytes;

  constructor(separator: string, missingText: string) {
    if (separator.length !== 1 || missingText.length > 7) throw new RangeError("a value word holds a one-byte separator and at most 7 bytes of missing text");
    this.separator = separator.charCodeAt(0);
    this.missing = ascii(`${separator}${missingText}`);
    this.bare = new ValueBytes("", "", missingText);
  }

  private fill(index: number): number {
    const bytes = new Uint8Array(8);
    const text = index === 0 ? this.missing : ascii(`${String.fromCharCode(this.separator)}${textOf(tenthsValue(index - TENTHS_OFFSET))}`);
    bytes.set(text);
    const view = new DataView(bytes.buffer);
    this.words[2 * index] = view.getUint32(0, true);
    this.words[2 * index + 1] = view.getUint32(4, true);
    return (this.lengths[index] = text.length);
  }

  /** Writes the separator and `v`'s text at `at` (up to 8 bytes are stored); returns where the text ends. */
  put(view: DataView, buffer: Uint8Array, at: number, v: number): number {
    if (v !== v) return putBytes(buffer, at, this.missing);
    const index = tenthsIndex(v);
    if (index < 0) {
      buffer[at] = this.separator;
      return putBytes(buffer, at + 1, this.bare.of(v));
    }
    const length = this.lengths[index] || this.fill(index);
    view.setUint32(at, this.words[2 * index], true);
    view.setUint32(at + 4, this.words[2 * index + 1], true);
    return at + length;
  }

  /** Writes each tenths code (-32768: missing) with its separator from `at`, one after another (8 bytes are stored past the last); returns where the last ends. */
  putCodes(view: DataView, at: number, codes: Int16Array): number {
    const { words, lengths } = this;
    const n = codes.length;
    let p = at;
    let i = 0;
    // the inner loop makes no call (a code not made yet leaves it, to be made, and it resumes): a tile's 65,536
    // codes took 1.4 times as long with the fill call inside it
    while (i < n) {
      for (; i < n; i++) {
        const index = codes[i] + TENTHS_OFFSET;
        const length = lengths[index];
        if (length === 0) break;
        view.setUint32(p, words[2 * index], true);
        view.setUint32(p + 4, words[2 * index + 1], true);
        p += length;
      }
      if (i < n) this.fill(codes[i] + TENTHS_OFFSET);
    }
    return p;
  }
}

const byteForms = new Map<string, ValueBytes>();
const wordForms = new Map<string, ValueWords>();

/** The shared ValueBytes of a form: every writer of the same form fills and reads one table. */
export function valueBytes(before: string, after: string, missing: string): ValueBytes {
  const key = JSON.stringify([before, after, missing]);
  let form = byteForms.get(key);
  if (!form) byteForms.set(key, (form = new ValueBytes(before, after, missing)));
  return form;
}

/** The shared ValueWords of a form: every writer of the same form fills and reads one table. */
export function valueWords(separator: string, missing: string): ValueWords {
  const key = JSON.stringify([separator, missing]);
  let form = wordForms.get(key);
  if (!form) wordForms.set(key, (form = new ValueWords(separator, missing)));
  return form;
}
