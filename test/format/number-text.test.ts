// format/number-text.ts: every form of a float32 value's text agrees with its shortest decimal, for every tenths code
// and at the extremes (missing, -0, the missing code's own value, values no tenths table holds, subnormals).

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { TENTHS_MISSING_CODE, tenthsValue } from "../../format/cells.js";
import { STORE_SLACK, VALUE_TEXT_MAX, ValueWords, float32ToJson, float32ToShortest, valueBytes, valueWords } from "../../format/number-text.js";

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("latin1");

/** What ValueWords writes for `v` (or for a tenths code) into a fresh buffer, and where it says the text ends. */
function wordsOf(words: ValueWords, v: number, code?: number): string {
  const buffer = new Uint8Array(4 + VALUE_TEXT_MAX + STORE_SLACK).fill(0x7e);
  const view = new DataView(buffer.buffer);
  const end = code === undefined ? words.put(view, buffer, 4, v) : words.putCodes(view, 4, Int16Array.of(code));
  assert.is(buffer.subarray(0, 4).every((b) => b === 0x7e), true, "nothing is written before `at`");
  return text(buffer.subarray(4, end));
}

const forms = suite("number text");

forms("number text - the shortest decimal of float32 values, and JSON's null for missing", () => {
  const cases: [number, string][] = [
    [24.2, "24.2"],
    [-0.1, "-0.1"],
    [0, "0"],
    [-0, "0"],
    [-3276.7, "-3276.7"],
    [-3276.8, "-3276.8"],
    [3276.7, "3276.7"],
    [3276.8, "3276.8"],
    [0.123456789, "0.12345679"],
    [1e-45, "1e-45"],
    [3.4028234663852886e38, "3.4028235e+38"],
    [16777217, "16777216"],
  ];
  for (const [value, expected] of cases) {
    assert.is(float32ToJson(Math.fround(value)), expected, String(value));
    assert.is(String(float32ToShortest(Math.fround(value))), expected, String(value));
  }
  assert.is(float32ToJson(NaN), "null");
  assert.is(float32ToShortest(NaN), null);
});

forms("number text - every tenths code: words, bytes and strings give the same text, the missing code its own", () => {
  const json = valueWords(",", "null");
  const met = valueWords(" ", "");
  const quoted = valueBytes('"', '"', "");
  let longest = 0;
  for (let code = -32768; code <= 32767; code++) {
    const v = tenthsValue(code);
    const expected = code === TENTHS_MISSING_CODE ? "null" : float32ToJson(v);
    assert.is(wordsOf(json, 0, code), `,${expected}`);
    assert.is(wordsOf(json, v), `,${expected}`);
    assert.is(text(valueBytes("", "", "null").of(v)), expected);
    assert.is(wordsOf(met, v), code === TENTHS_MISSING_CODE ? " " : ` ${expected}`);
    assert.is(text(quoted.of(v)), code === TENTHS_MISSING_CODE ? "" : `"${expected}"`);
    longest = Math.max(longest, expected.length);
  }
  assert.is(longest, 7); // "-3276.7": with its separator, two 4-byte words
});

forms("number text - values no tenths table holds are written whole, in every form", () => {
  const json = valueWords(",", "null");
  for (const value of [Math.fround(0.123456789), Math.fround(-3276.8), Math.fround(1e-45), Math.fround(-3.4e38), Math.fround(12345.6)]) {
    const expected = float32ToJson(value);
    assert.is(wordsOf(json, value), `,${expected}`);
    assert.is(text(valueBytes('"', '"', "").of(value)), `"${expected}"`);
    assert.ok(expected.length <= VALUE_TEXT_MAX, expected);
  }
  assert.is(wordsOf(json, NaN), ",null");
});

forms("number text - one table per form: writers of the same form share it; a form that cannot fit two words is refused", () => {
  assert.is(valueWords(",", "null"), valueWords(",", "null"));
  assert.is.not(valueWords(",", "null"), valueWords(",", ""));
  assert.is(valueBytes('"', '"', ""), valueBytes('"', '"', ""));
  assert.throws(() => new ValueWords(", ", ""), /one-byte separator/);
  assert.throws(() => new ValueWords(",", "missing!"), /at most 7 bytes/);
});

forms.run();
