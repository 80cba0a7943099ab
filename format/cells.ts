// Block codecs of day pieces and series chunks (docs/format.md §5): lossless, chosen per block, shared by writer and
// readers.
//
// SILO values carry one decimal, so most blocks store int16 tenths; a block is stored that way only when every
// value reads back as the very same float32 (Math.fround(k / 10) === v), else as float32. Tenths are coded as planes
// of cells (a day block is one plane; a series chunk one plane a day, its c x c cells), each cell predicted from its
// left, upper and upper-left neighbours (left + up - upper-left: what a smooth surface continues), a plane's first
// cell from the previous plane's first (the day before), so what is left is mostly small numbers. They are stored
// zigzagged (small of either sign, small), low bytes then high bytes (the high bytes, nearly all zero, pack to almost
// nothing), after a mask of the missing cells when there are any. Measured against the differences along a row that
// climate-dist-3 stored (docs/performance.md "Codecs"). DEFLATE itself is injected: node:zlib in the pipeline and
// server, DecompressionStream in a browser.

/** How a block's cells are stored. */
export const BlockCodec = {
  /** every cell missing: no bytes */
  Empty: 0,
  /** float32 LE, raw DEFLATE: values that tenths cannot hold exactly */
  Float32: 2,
  /** tenths as int16 (missing -32768), planes predicted (above), raw DEFLATE */
  Tenths: 3,
  /** a series chunk's revised days over another chunk of its span (format/series.ts): series pieces only */
  Patch: 4,
} as const;
export type BlockCodec = (typeof BlockCodec)[keyof typeof BlockCodec];

/** One NaN bit pattern for every missing cell, so equal content always hashes equal. */
export const MISSING_BITS = 0x7fc00000;
const TENTHS_MISSING = -32768;

let tenthsTable: Float32Array | null = null;

/**
 * float32 of every int16 tenths code; index k + 32768, NaN for the missing code. Built on first use: its 65,536
 * divisions took 12 ms of a server's start, which decodes nothing until asked.
 */
function tenths(): Float32Array {
  if (tenthsTable) return tenthsTable;
  const table = new Float32Array(65536);
  for (let i = 0; i < 65536; i++) table[i] = (i - 32768) / 10;
  table[TENTHS_MISSING + 32768] = NaN;
  return (tenthsTable = table);
}

/** Rewrites every NaN to the canonical pattern; returns how many cells are missing. */
export function canonicalizeMissing(values: Float32Array): number {
  const bits = new Uint32Array(values.buffer, values.byteOffset, values.length);
  let missing = 0;
  for (let i = 0; i < values.length; i++) {
    if (values[i] !== values[i]) {
      bits[i] = MISSING_BITS;
      missing++;
    }
  }
  return missing;
}

/** The float32 of a tenths code (NaN for the missing code). */
export function tenthsValue(code: number): number {
  return tenths()[code + 32768];
}

/** The missing code of tenths. */
export const TENTHS_MISSING_CODE = TENTHS_MISSING;

/**
 * Tenths codes of `values` into `out` (missing -32768); false, leaving `out` partly written, as soon as a value is
 * not exactly a float32 of tenths.
 */
export function valuesToTenths(values: Float32Array, out: Int16Array): boolean {
  const table = tenths();
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v !== v) {
      out[i] = TENTHS_MISSING;
      continue;
    }
    const k = Math.round(v * 10);
    if (k < -32767 || k > 32767 || table[k + 32768] !== v) return false;
    out[i] = k;
  }
  return true;
}

/** What toTenthsCode gives for a value no tenths code reads back as (outside int16). */
export const NOT_TENTHS = 0x8000;

/**
 * A value's tenths code (the missing code for NaN), or NOT_TENTHS: the rule of valuesToTenths for one value, for a
 * reader that converts a table of every stored number once instead of every cell. valuesToTenths keeps its own loop
 * (calling this a value took three times its time); test/format/cells.test.ts holds the two to one answer.
 */
export function toTenthsCode(v: number): number {
  if (v !== v) return TENTHS_MISSING;
  const k = Math.round(v * 10);
  return k < -32767 || k > 32767 || tenths()[k + 32768] !== v ? NOT_TENTHS : k;
}

/** A residual's zigzag form: 0, -1, 1, -2, 2... as 0, 1, 2, 3, 4... (16 bits). */
const zigzag = (r: number) => ((r << 1) ^ (r >> 15)) & 0xffff;
const unzigzag = (z: number) => (z >>> 1) ^ -(z & 1);

/** Bytes of the missing-cell mask of `cells` cells (a bit a cell, least significant first). */
const maskBytes = (cells: number) => Math.ceil(cells / 8);

/**
 * The prediction of cell (x, y) of a plane from the cells already known (`f`, every missing cell filled with its own
 * prediction): left + up - upper-left inside the plane, the left or the upper cell on its first row or column, and
 * for its first cell the previous plane's first (0 for the first plane).
 */
function predict(f: Int16Array, at: number, x: number, y: number, planeWidth: number, planeCells: number): number {
  if (x > 0 && y > 0) return f[at - 1] + f[at - planeWidth] - f[at - planeWidth - 1];
  if (x > 0) return f[at - 1];
  if (y > 0) return f[at - planeWidth];
  return at >= planeCells ? f[at - planeCells] : 0;
}

/** Tenths codes (missing -32768) of `planes` planes of planeWidth x planeHeight cells, plane-major, as the Tenths codec's bytes before DEFLATE. */
export function encodeTenths(codes: Int16Array, planeWidth: number, planeHeight: number, planes: number): Uint8Array {
  return encodeTenthsAt({ codes, at: 0, rowStride: planeWidth, planeStride: planeWidth * planeHeight }, planeWidth, planeHeight, planes);
}

/**
 * Where a writer's codes lie: plane p's row y starts at `at + p * planeStride + y * rowStride` (a series chunk's cells
 * inside a strip of many days, read where they are instead of gathered first).
 */
export interface CodesAt {
  codes: Int16Array;
  at: number;
  rowStride: number;
  planeStride: number;
}

/** Whether any of the cells `source` places holds a value (a code other than the missing one). */
export function holdsValue({ codes, at, rowStride, planeStride }: CodesAt, planeWidth: number, planeHeight: number, planes: number): boolean {
  for (let p = 0; p < planes; p++) {
    for (let y = 0, row = at + p * planeStride; y < planeHeight; y++, row += rowStride) for (let x = 0; x < planeWidth; x++) if (codes[row + x] !== TENTHS_MISSING) return true;
  }
  return false;
}

/** encodeTenths of the cells `source` places. */
export function encodeTenthsAt(source: CodesAt, planeWidth: number, planeHeight: number, planes: number): Uint8Array {
  const n = planeWidth * planeHeight * planes;
  const planeCells = planeWidth * planeHeight;
  let missing = 0;
  for (let p = 0; p < planes; p++) {
    for (let y = 0, row = source.at + p * source.planeStride; y < planeHeight; y++, row += source.rowStride) {
      for (let x = 0; x < planeWidth; x++) if (source.codes[row + x] === TENTHS_MISSING) missing++;
    }
  }
  const mask = missing > 0 ? maskBytes(n) : 0;
  const out = new Uint8Array(1 + mask + 2 * n);
  out[0] = missing > 0 ? 1 : 0;
  // with cells missing: the known cells gathered, each missing one filled with its prediction (so its residual is 0)
  const { codes: f, at: origin, rowStride: w, planeStride: ps } = missing > 0 ? { codes: gather(source, planeWidth, planeHeight, planes), at: 0, rowStride: planeWidth, planeStride: planeCells } : source;
  if (missing > 0) {
    for (let at = 0; at < n; at++) {
      if (f[at] !== TENTHS_MISSING) continue;
      out[1 + (at >> 3)] |= 1 << (at & 7);
      const x = at % planeWidth;
      const y = Math.floor(at / planeWidth) % planeHeight;
      f[at] = predict(f, at, x, y, planeWidth, planeCells);
    }
  }
  // residuals first (an Int16Array wraps as the codec's arithmetic does), then their zigzag bytes, low then high
  const r = residuals(n);
  for (let k = 0, p = 0; p < planes; p++) {
    let at = origin + p * ps;
    r[k++] = f[at] - (p > 0 ? f[at - ps] : 0);
    for (let x = 1; x < planeWidth; x++) r[k++] = f[at + x] - f[at + x - 1];
    for (let y = 1; y < planeHeight; y++) {
      at += w;
      r[k++] = f[at] - f[at - w];
      for (let x = 1; x < planeWidth; x++) r[k++] = f[at + x] - f[at + x - 1] - f[at + x - w] + f[at + x - w - 1];
    }
  }
  const low = 1 + mask;
  const high = low + n;
  for (let at = 0; at < n; at++) {
    const z = zigzag(r[at]);
    out[low + at] = z & 0xff;
    out[high + at] = z >>> 8;
  }
  return out;
}

/** The cells `source` places, plane-major, in an array of their own. */
function gather({ codes, at, rowStride, planeStride }: CodesAt, planeWidth: number, planeHeight: number, planes: number): Int16Array {
  const out = new Int16Array(planeWidth * planeHeight * planes);
  for (let p = 0, k = 0; p < planes; p++) {
    for (let y = 0, row = at + p * planeStride; y < planeHeight; y++, row += rowStride) for (let x = 0; x < planeWidth; x++) out[k++] = codes[row + x];
  }
  return out;
}

let residualBuffer = new Int16Array(0);
/** The encoder's residuals, in one buffer of this thread grown as needed (they never outlive a call). */
function residuals(n: number): Int16Array {
  if (residualBuffer.length < n) residualBuffer = new Int16Array(Math.max(n, 2 * residualBuffer.length));
  return residualBuffer;
}

/**
 * The codes a Tenths block's inflated bytes hold (missing -32768), plane-major; throws when they do not fit its shape.
 * Every cell is predicted as encodeTenths did, a missing cell's residual being 0, so one pass of plain stores (an
 * Int16Array wraps as the codec's arithmetic does) decodes the block and a second marks the mask's cells missing.
 * Into `into` when given (at least the block's cells long), else into a new array.
 */
export function decodeTenths(raw: Uint8Array, planeWidth: number, planeHeight: number, planes: number, into?: Int16Array): Int16Array {
  const n = planeWidth * planeHeight * planes;
  const planeCells = planeWidth * planeHeight;
  const mask = raw[0] === 1 ? maskBytes(n) : 0;
  if (raw.byteLength === 0 || raw[0] > 1 || raw.byteLength !== 1 + mask + 2 * n) throw new Error(`a tenths block of ${n} cells inflates to ${raw.byteLength} bytes`);
  // every cell is written before it is read, so a reused array needs no clearing
  const f = into ? into.subarray(0, n) : new Int16Array(n);
  const low = 1 + mask;
  const high = low + n;
  const w = planeWidth;
  // the left and upper-left cells ride in locals (wrapped to int16 as the array would), so a cell waits on no load of
  // the one just stored
  for (let at = 0, p = 0; p < planes; p++) {
    let left = (((p > 0 ? f[at - planeCells] : 0) + unzigzag(raw[low + at] | (raw[high + at] << 8))) << 16) >> 16;
    f[at] = left;
    for (const end = at++ + w; at < end; at++) {
      left = ((left + unzigzag(raw[low + at] | (raw[high + at] << 8))) << 16) >> 16;
      f[at] = left;
    }
    for (let y = 1; y < planeHeight; y++) {
      let upLeft = f[at - w];
      left = ((upLeft + unzigzag(raw[low + at] | (raw[high + at] << 8))) << 16) >> 16;
      f[at] = left;
      const end = at + w;
      for (at++; at < end; at++) {
        const up = f[at - w];
        left = ((left + up - upLeft + unzigzag(raw[low + at] | (raw[high + at] << 8))) << 16) >> 16;
        f[at] = left;
        upLeft = up;
      }
    }
  }
  if (mask > 0) {
    for (let b = 0; b < mask; b++) {
      const bits = raw[1 + b];
      if (bits === 0) continue;
      for (let k = 0; k < 8; k++) {
        const at = b * 8 + k;
        if (!(bits & (1 << k))) continue;
        if (at >= n || raw[low + at] !== 0 || raw[high + at] !== 0) throw new Error(`a tenths block's missing cell ${at} has a residual or lies outside its ${n} cells`);
        f[at] = TENTHS_MISSING;
      }
    }
  }
  return f;
}

/**
 * One cell's values on planes [from, to) of a Tenths block's inflated bytes, into `out` from `at` (NaN missing):
 * what decodeTenths gives for that cell, decoding of each plane only the cells up to it (left and above: its
 * prediction reaches no further) and of the planes before `from` only their first cells. A point read of a year's
 * chunk of 4 x 4 cells decodes 1 to 16 cells a day instead of 16, and allocates one plane's rectangle.
 */
export function decodeTenthsCell(raw: Uint8Array, planeWidth: number, planeHeight: number, planes: number, cell: number, from: number, to: number, out: Float32Array, at: number): void {
  const n = planeWidth * planeHeight * planes;
  const planeCells = planeWidth * planeHeight;
  const mask = raw[0] === 1 ? maskBytes(n) : 0;
  if (raw.byteLength === 0 || raw[0] > 1 || raw.byteLength !== 1 + mask + 2 * n) throw new Error(`a tenths block of ${n} cells inflates to ${raw.byteLength} bytes`);
  const low = 1 + mask;
  const high = low + n;
  const w = planeWidth;
  const [x, y] = [cell % w, Math.floor(cell / w)];
  const rw = x + 1;
  // the plane's cells up to the one asked for, rw wide; f[0] carries the first cell from plane to plane (an
  // Int16Array wraps as the codec's arithmetic does)
  const f = new Int16Array(rw * (y + 1));
  const table = tenths();
  const r = (i: number) => unzigzag(raw[low + i] | (raw[high + i] << 8));
  for (let p = 0; p < to; p++) {
    const base = p * planeCells;
    f[0] = (p > 0 ? f[0] : 0) + r(base);
    if (p < from) continue;
    for (let c = 1; c <= x; c++) f[c] = f[c - 1] + r(base + c);
    for (let row = 1; row <= y; row++) {
      const k = row * rw;
      const i = base + row * w;
      f[k] = f[k - rw] + r(i);
      for (let c = 1; c <= x; c++) f[k + c] = f[k + c - 1] + f[k + c - rw] - f[k + c - rw - 1] + r(i + c);
    }
    const stored = base + cell;
    const missing = mask > 0 && (raw[1 + (stored >> 3)] & (1 << (stored & 7))) !== 0;
    out[at + p - from] = missing ? Number.NaN : table[f[y * rw + x] + 32768];
  }
}

/** The stored bytes of one day block before DEFLATE (one plane), and its codec; null bytes for an all-missing block. */
export function encodeBlockCells(values: Float32Array, width: number): { codec: BlockCodec; raw: Uint8Array | null } {
  let present = false;
  for (let i = 0; i < values.length && !present; i++) present = values[i] === values[i];
  if (!present) return { codec: BlockCodec.Empty, raw: null };
  const tenths = new Int16Array(values.length);
  if (!valuesToTenths(values, tenths)) return { codec: BlockCodec.Float32, raw: new Uint8Array(values.slice().buffer) };
  return { codec: BlockCodec.Tenths, raw: encodeTenths(tenths, width, values.length / width, 1) };
}

/** encodeBlockCells of a block whose cells are tenths codes (missing -32768), read where they lie. */
export function encodeBlockCodes(source: CodesAt, width: number, height: number): { codec: BlockCodec; raw: Uint8Array | null } {
  if (!holdsValue(source, width, height, 1)) return { codec: BlockCodec.Empty, raw: null };
  return { codec: BlockCodec.Tenths, raw: encodeTenthsAt(source, width, height, 1) };
}

/** The most bytes inflating a block may give: a bound for the decompressor (the codec checks what it gave). */
export function rawBlockBytes(codec: BlockCodec, cells: number): number {
  return codec === BlockCodec.Tenths ? 1 + maskBytes(cells) + cells * 2 : codec === BlockCodec.Float32 ? cells * 4 : 0;
}

/**
 * A block as readers keep it: its cells' tenths codes (missing -32768), or float32, rows of `width` cells; decoded
 * whole when read (a cell's prediction reaches the cells before it), so reading a row is a table lookup a cell and a
 * cached block takes 2 bytes a cell.
 */
export interface StoredBlock {
  codec: BlockCodec;
  width: number;
  tenths: Int16Array | null;
  floats: Float32Array | null;
}

const EMPTY_BLOCK: Omit<StoredBlock, "width"> = { codec: BlockCodec.Empty, tenths: null, floats: null };

/**
 * A block from its inflated bytes, rows of `width` cells, `height` rows; its Tenths planes are `plane` (width x height
 * cells: a series chunk's c x c cells a day), else the whole block. Throws when the bytes do not fit. A Tenths
 * block's codes go into `into` when given: a block used at once and never kept.
 */
export function toStoredBlock(codec: BlockCodec, raw: Uint8Array | null, width: number, height: number, plane: [number, number] = [width, height], into?: Int16Array): StoredBlock {
  if (codec === BlockCodec.Empty) return { ...EMPTY_BLOCK, width };
  const cells = width * height;
  if (!raw) throw new Error("a block with no bytes");
  if (codec === BlockCodec.Tenths) return { codec, width, tenths: decodeTenths(raw, plane[0], plane[1], cells / (plane[0] * plane[1]), into), floats: null };
  if (codec !== BlockCodec.Float32) throw new Error(`unknown block codec ${codec}`);
  if (raw.byteLength !== cells * 4) throw new Error(`block inflates to ${raw.byteLength} bytes, expected ${cells * 4}`);
  // kept (in a cache) as a typed view of its bytes: copied out when misaligned (little-endian, as on every platform
  // this runs on) or when they sit in a much larger buffer the view would keep alive
  const aligned = raw.byteOffset % 4 === 0 && raw.buffer.byteLength - raw.byteLength <= 64 ? raw : raw.slice();
  return { codec, width, tenths: null, floats: new Float32Array(aligned.buffer, aligned.byteOffset, cells) };
}

/** Writes cells [c0, c1) of block row `row` to `out` from `at`; missing cells are NaN. */
export function readBlockRow(block: StoredBlock, row: number, c0: number, c1: number, out: Float32Array, at: number): void {
  const start = row * block.width;
  if (block.tenths) {
    const codes = block.tenths;
    const table = tenths();
    for (let i = start + c0; i < start + c1; i++) out[at++] = table[codes[i] + 32768];
  } else if (block.floats) out.set(block.floats.subarray(start + c0, start + c1), at);
  else out.fill(NaN, at, at + (c1 - c0));
}

/**
 * Writes cells [c0, c1) of block rows [r0, r1) to `out`, row r from `at + (r - r0) * stride`; missing cells are NaN.
 * A days-major chunk's cells of one grid row over many days in one call: a box over years is millions of values.
 */
export function readBlockRows(block: StoredBlock, r0: number, r1: number, c0: number, c1: number, out: Float32Array, at: number, stride: number): void {
  const width = block.width;
  if (block.tenths) {
    const codes = block.tenths;
    const table = tenths();
    for (let r = r0; r < r1; r++) {
      let o = at + (r - r0) * stride;
      for (let i = r * width + c0, end = r * width + c1; i < end; i++) out[o++] = table[codes[i] + 32768];
    }
  } else if (block.floats) {
    for (let r = r0; r < r1; r++) out.set(block.floats.subarray(r * width + c0, r * width + c1), at + (r - r0) * stride);
  } else for (let r = r0; r < r1; r++) out.fill(NaN, at + (r - r0) * stride, at + (r - r0) * stride + (c1 - c0));
}

/**
 * Writes the tenths codes of cells [c0, c1) of block row `row` to `out` from `at` (missing -32768), the form a
 * writer re-encodes without a round trip through float32; false for a float32 block, whose values have no code.
 */
export function readBlockCodes(block: StoredBlock, row: number, c0: number, c1: number, out: Int16Array, at: number): boolean {
  if (block.floats) return false;
  if (!block.tenths) {
    out.fill(TENTHS_MISSING, at, at + (c1 - c0));
    return true;
  }
  const start = row * block.width;
  out.set(block.tenths.subarray(start + c0, start + c1), at);
  return true;
}

/** A 32-bit word with its bytes reversed: little-endian float32 bits to big-endian (XDR, OPeNDAP's wire order) and back. */
export const swapWord = (w: number): number => ((w & 0xff) << 24) | ((w & 0xff00) << 8) | ((w >>> 8) & 0xff00) | (w >>> 24);

let tenthsWordsTable: Uint32Array | null = null;

/** The float32 of every tenths code as big-endian bits (index k + 32768; the missing code's the canonical NaN's). */
function tenthsWords(): Uint32Array {
  if (tenthsWordsTable) return tenthsWordsTable;
  const bits = new Uint32Array(tenths().buffer.slice(0));
  for (let i = 0; i < bits.length; i++) bits[i] = swapWord(bits[i]);
  return (tenthsWordsTable = bits);
}

/**
 * readBlockRow for a big-endian reader: the cells' float32 bits byte-swapped into `out` (words) from `at`, so a map
 * goes to the wire in one pass (a tenths block through its own table; missing cells the canonical NaN).
 */
export function readBlockRowBigEndian(block: StoredBlock, row: number, c0: number, c1: number, out: Uint32Array, at: number): void {
  const start = row * block.width;
  if (block.tenths) {
    const codes = block.tenths;
    const table = tenthsWords();
    for (let i = start + c0; i < start + c1; i++) out[at++] = table[codes[i] + 32768];
  } else if (block.floats) {
    const words = new Uint32Array(block.floats.buffer, block.floats.byteOffset, block.floats.length);
    for (let i = start + c0; i < start + c1; i++) out[at++] = swapWord(words[i]);
  } else out.fill(swapWord(MISSING_BITS), at, at + (c1 - c0));
}
