// Stored cells -> SILO values (pipeline/ingest/silo-values.ts), worked by hand: packed int16 through the table a file's
// days share, float32 as stored; missing cells as the one canonical NaN pattern, counted; tenths codes alongside.

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { MISSING_BITS } from "../../format/cells.js";
import { type Packing, toSiloValues } from "../../pipeline/ingest/silo-values.js";

const values = suite("toSiloValues");
const fail = (reason: string): never => {
  throw new Error(reason);
};
const bitsOf = (v: Float32Array) => [...new Uint32Array(v.buffer, v.byteOffset, v.length)];
const TENTHS: Packing = { scale: 0.1, offset: 0, missing: [-32767] };

values("packed int16: values in tenths, the fill value missing as the canonical NaN, counted, with their codes", () => {
  const day = toSiloValues(Int16Array.of(253, -32767, 0, -15, 600, -32767), [10, 20, 3, 2], TENTHS, false, [-20, 60], fail);
  assert.equal([...day.values].map(String), ["25.299999237060547", "NaN", "0", "-1.5", "60", "NaN"]);
  assert.equal(bitsOf(day.values)[1], MISSING_BITS);
  assert.equal(bitsOf(day.values)[5], MISSING_BITS);
  assert.equal(day.missing, 2);
  assert.equal([...day.codes!], [253, -32768, 0, -15, 600, -32768]);
});

values("packed int16: a file of another packing after one of tenths gets its own values (no table is shared across packings)", () => {
  toSiloValues(Int16Array.of(10, 20), [0, 0, 2, 1], TENTHS, false, [-20, 60], fail);
  const day = toSiloValues(Int16Array.of(10, 20, 7), [0, 0, 3, 1], { scale: 0.5, offset: 1, missing: [7] }, false, [-20, 60], fail);
  assert.equal([...day.values].map(String), ["6", "11", "NaN"]);
  assert.equal(day.missing, 1);
  assert.equal([...day.codes!], [60, 110, -32768]);
  // hundredths are no tenths: no codes
  const hundredths = toSiloValues(Int16Array.of(253, 5), [0, 0, 2, 1], { scale: 0.01, offset: 0, missing: [] }, false, [-20, 60], fail);
  assert.equal([...hundredths.values].map(String), ["2.5299999713897705", "0.05000000074505806"]);
  assert.equal(hundredths.codes, undefined);
});

values("rows stored south to north are flipped; an implausible packed value names its cell", () => {
  const day = toSiloValues(Int16Array.of(1, 2, 3, 4, 5, 6), [0, 0, 3, 2], TENTHS, true, [-20, 60], fail);
  assert.equal([...day.codes!], [4, 5, 6, 1, 2, 3]);
  assert.throws(
    () => toSiloValues(Int16Array.of(100, 755, 100, 100), [200, 100, 2, 2], TENTHS, false, [-20, 60], fail),
    (err: Error) => err.message === "value 75.5 at cell (col 201, row 100; lon 122.05, lat -15) is outside the plausible range -20..60; check the source file and the variable it holds",
  );
});

values("float32 as stored: any NaN pattern and the legacy ocean value become the canonical NaN; -0 stays", () => {
  const raw = new Float32Array(5);
  new Uint32Array(raw.buffer).set([0x41ca6666, 0x7fc00001, 0xffc00000, 0x80000000, 0xc54ccccd]); // 25.3, NaNs, -0, -3276.8
  const day = toSiloValues(raw, [0, 0, 5, 1], { scale: 1, offset: 0, missing: [] }, false, [-20, 60], fail);
  assert.equal(bitsOf(day.values), [0x41ca6666, MISSING_BITS, MISSING_BITS, 0x80000000, MISSING_BITS]);
  assert.equal(day.missing, 3);
  assert.equal(day.codes, undefined);
});

values.run();
