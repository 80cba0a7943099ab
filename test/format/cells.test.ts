// The Tenths codec's bytes before DEFLATE (docs/format.md §5), worked by hand: predictions, zigzag, the mask, the wrap;
// and a chunk patch over its base (docs/format.md §7).

import { suite } from "uvu";
import * as assert from "uvu/assert";
import { BlockCodec, NOT_TENTHS, decodeTenths, decodeTenthsCell, encodeBlockCells, encodeBlockCodes, encodeTenths, encodeTenthsAt, tenthsValue, toTenthsCode, valuesToTenths } from "../../format/cells.js";
import { ChunkOrder, applyChunkPatch, decodeChunkPatch, encodeChunkPatch } from "../../format/series.js";

const tenths = suite("tenths codec");
const M = -32768;

// two planes of 2 x 2 cells; plane 0: 10 12 / 11 -, plane 1: 15 15 / 16 14
const CODES = Int16Array.from([10, 12, 11, M, 15, 15, 16, 14]);
// residuals: 10 (from 0), 2 (left), 1 (up), 0 (missing: filled with 11 + 12 - 10), 5 (plane 0's first), 0, 1, -2 (16 + 15 - 15)
const BYTES = [1, 0b1000, 20, 4, 2, 0, 10, 0, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0];

tenths("a block's bytes: flag, mask, zigzag low bytes, then high bytes", () => {
  assert.equal(Array.from(encodeTenths(CODES, 2, 2, 2)), BYTES);
  assert.equal(Array.from(decodeTenths(Uint8Array.from(BYTES), 2, 2, 2)), Array.from(CODES));
});

tenths("a chunk's cells read through strides give the bytes of the same cells gathered", () => {
  // a strip of 3 rows x 4 columns over 2 days; the chunk is its 2 x 2 cells at column 1, row 1 (CODES' two planes)
  const strip = new Int16Array(24).fill(99);
  CODES.forEach((code, i) => (strip[Math.floor(i / 4) * 12 + (1 + Math.floor((i % 4) / 2)) * 4 + 1 + (i % 2)] = code));
  assert.equal(Array.from(encodeTenthsAt({ codes: strip, at: 5, rowStride: 4, planeStride: 12 }, 2, 2, 2)), BYTES);
});

tenths("a value's tenths code: the rule of valuesToTenths, value by value", () => {
  // float32s, as a table of a file's stored numbers holds them
  const values = [0, -0, 0.1, -0.1, 25.3, 3276.7, -3276.7, 3276.8, 0.05, 0.1 + 1e-6, Number.NaN, 1e9].map(Math.fround);
  const codes = values.map(toTenthsCode);
  assert.equal(codes, [0, 0, 1, -1, 253, 32767, -32767, NOT_TENTHS, NOT_TENTHS, NOT_TENTHS, -32768, NOT_TENTHS]);
  for (const [i, v] of values.entries()) {
    const out = new Int16Array(1);
    assert.is(valuesToTenths(Float32Array.of(v), out), codes[i] !== NOT_TENTHS, `value ${v}`);
    if (codes[i] !== NOT_TENTHS) assert.is(out[0], codes[i], `value ${v}`);
  }
});

tenths("a day block from its codes where they lie: the bytes of the block from its values", () => {
  const values = Float32Array.from([1.5, 2.5, Number.NaN, 3, 4.5, 5, 6, 7.5, 8]);
  const codes = new Int16Array(9);
  assert.ok(valuesToTenths(values, codes));
  // the block is the day's 2 x 2 cells at column 1, row 1 of a 3 x 3 day
  const block = Float32Array.from([values[4], values[5], values[7], values[8]]);
  assert.equal(encodeBlockCodes({ codes, at: 4, rowStride: 3, planeStride: 4 }, 2, 2), encodeBlockCells(block, 2));
  assert.equal(encodeBlockCodes({ codes: Int16Array.from([M, M, M, M]), at: 0, rowStride: 2, planeStride: 4 }, 2, 2), { codec: BlockCodec.Empty, raw: null });
});

tenths("no missing cell: no mask, flag 0", () => {
  assert.equal(Array.from(encodeTenths(Int16Array.from([7, 5]), 2, 1, 1)), [0, 14, 3, 0, 0]);
});

tenths("the arithmetic wraps at 16 bits, so the extremes round-trip", () => {
  const codes = Int16Array.from([32767, -32767, -32767, 32767]);
  const bytes = encodeTenths(codes, 2, 2, 1);
  // 32767 from 0 is zigzag 65534; -32767 after 32767 a residual of 2 once wrapped; the last cell's prediction
  // -32767 - 32767 - 32767 leaves a residual of 131068, -4 once wrapped (zigzag 7)
  assert.equal(Array.from(bytes), [0, 0xfe, 4, 4, 7, 0xff, 0, 0, 0]);
  assert.equal(Array.from(decodeTenths(bytes, 2, 2, 1)), Array.from(codes));
});

tenths("decoding refuses bytes that do not fit: a short block, a missing cell with a residual", () => {
  assert.throws(() => decodeTenths(Uint8Array.from(BYTES.slice(0, 17)), 2, 2, 2), /a tenths block of 8 cells inflates to 17 bytes/);
  const bad = Uint8Array.from(BYTES);
  bad[2 + 3] = 1;
  assert.throws(() => decodeTenths(bad, 2, 2, 2), /missing cell 3 has a residual/);
  assert.throws(() => decodeTenths(Uint8Array.from([2, 0, 0]), 1, 1, 1), /inflates to 3 bytes/);
});

tenths("one cell's days decoded alone are what the whole block decodes to, for every cell and any days", () => {
  // 3 planes of 4 x 3 cells, smooth with a wrap-sized jump and missing cells (the first cell of plane 1 among them)
  const [w, h, planes] = [4, 3, 3];
  const codes = Int16Array.from({ length: w * h * planes }, (_, i) => [13, 19].includes(i) ? M : i === 22 ? 32767 : i === 23 ? -32767 : 200 + 3 * (i % w) - 2 * Math.floor(i / w) + (i % 5));
  codes[12] = M;
  const raw = encodeTenths(codes, w, h, planes);
  const whole = decodeTenths(raw, w, h, planes);
  assert.equal(Array.from(whole), Array.from(codes));
  for (let cell = 0; cell < w * h; cell++) {
    for (const [from, to] of [[0, 3], [1, 3], [2, 3], [0, 1], [1, 2]]) {
      const out = new Float32Array(to - from + 2).fill(7);
      decodeTenthsCell(raw, w, h, planes, cell, from, to, out, 1);
      const expected = [7, ...Array.from({ length: to - from }, (_, d) => tenthsValue(codes[(from + d) * w * h + cell])), 7];
      assert.equal(Array.from(out), expected, `cell ${cell}, planes ${from}..${to}`);
    }
  }
  assert.throws(() => decodeTenthsCell(raw.subarray(1), w, h, planes, 0, 0, 1, new Float32Array(1), 0), /inflates to/);
});

tenths.run();

const patches = suite("chunk patches");

patches("a float32 patch read from a Node Buffer (a view into a larger pool, at an odd offset) replaces its days", () => {
  // a chunk of 2 x 1 cells over 3 days, days-major, tenths: 1.0 2.0 / 3.0 4.0 / 5.0 6.0
  const base = { codec: BlockCodec.Tenths, width: 2, tenths: Int16Array.from([10, 20, 30, 40, 50, 60]), floats: null };
  const baseEntry = { codec: BlockCodec.Float32, order: ChunkOrder.Days, pack: 0, offset: 0, length: 24, sha256: "ab".repeat(32) };
  const cells = new Uint8Array(Float32Array.from([0.125, Number.NaN]).buffer);
  const encoded = encodeChunkPatch({ base: baseEntry, days: [1], codec: BlockCodec.Float32, cells });
  // inflateRawSync gives a Buffer; one whose bytes sit at offset 1 of a larger pool, as Node's pools do
  const pool = Buffer.alloc(encoded.byteLength + 7);
  pool.set(encoded, 1);
  const patch = decodeChunkPatch(pool.subarray(1, 1 + encoded.byteLength), 3, 2);
  const block = applyChunkPatch(base, ChunkOrder.Days, patch, [2, 1], 3);
  assert.is(block.codec, BlockCodec.Float32);
  assert.equal(Array.from(block.floats!), [1, 2, 0.125, Number.NaN, 5, 6]);
});

patches.run();
