// Bench phase of issue 44's codec choice: the day blocks' and series chunks' codecs and the chunk shape, measured in
// one run on a year of SILO-like maximum temperature and rain (bench/silo-like.ts), climate-dist-3's codec the
// baseline: bytes a land value (entries and group records counted), encode and decode time on one thread, and what
// one point read of a chunk fetches and spends decoding it. The codecs are this repository's (format/cells.ts), the
// baseline's row differences written again here (only make upgrade still reads them).
//
// Runs alone: BENCH_ONLY=codecs node_modules/.bin/tsx bench/run.ts (BENCH_CODEC_DAYS=120 for a shorter year).

import { constants, deflateRawSync, inflateRawSync } from "node:zlib";
import { Zstd } from "numcodecs";
import { decodeTenths, encodeTenths } from "../format/cells.js";
import { ENTRY_BYTES } from "../format/entries.js";
import { GRID } from "../format/grid.js";
import { GROUP_CHUNKS, merkleDepth } from "../format/series.js";
import { type Variable, MAX_TEMP, findVariable } from "../format/variables.js";
import { makeLandMask } from "../pipeline/ingest/demo.js";
import { makeSiloLikeMaxTemp, makeSiloLikeRain } from "./silo-like.js";
import { listDays } from "./sources.js";

type Say = (line?: string) => void;
const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
const MISSING = -32768;
const W = GRID.width;
const H = GRID.height;
/** A group record's bytes: an entry of each of its g x g chunks and the Merkle path of the whole grid's groups. */
function recordBytes(side: number, group: number): number {
  const groups = Math.ceil(W / (side * group)) * Math.ceil(H / (side * group));
  return group * group * ENTRY_BYTES + merkleDepth(groups) * 32;
}

export interface CodecBenchContext {
  say: Say;
  log: (line: string) => void;
  figures: Record<string, number>;
}

/** A way of storing a block of tenths codes (missing -32768) of `planes` planes of `width` x `height` cells. */
interface Codec {
  name: string;
  encode(codes: Int16Array, width: number, height: number, planes: number): Uint8Array | Promise<Uint8Array>;
  decode(stored: Uint8Array, width: number, height: number, planes: number): Int16Array | Promise<Int16Array>;
}

const zRle = { level: 6, strategy: constants.Z_RLE };

/** climate-dist-3: each row of `rowWidth` codes as its first and its differences, DEFLATE level 6. */
function rowDifferences(rowWidth: (w: number, h: number, planes: number) => number): Codec {
  return {
    name: "dist-3: row differences, DEFLATE 6",
    encode(codes, w, h, planes) {
      const row = rowWidth(w, h, planes);
      const diffs = codes.slice();
      for (let s = 0; s < diffs.length; s += row) for (let i = s + row - 1; i > s; i--) diffs[i] = ((diffs[i] - diffs[i - 1]) << 16) >> 16;
      return deflateRawSync(diffs, { level: 6, memLevel: 4 });
    },
    decode(stored, w, h, planes) {
      const row = rowWidth(w, h, planes);
      const out = new Int16Array(inflateRawSync(stored).buffer.slice(0));
      for (let s = 0; s < out.length; s += row) for (let i = s + 1; i < s + row; i++) out[i] = ((out[i] + out[i - 1]) << 16) >> 16;
      return out;
    },
  };
}

function tenthsCodec(name: string, options: object): Codec {
  return {
    name,
    encode: (codes, w, h, planes) => deflateRawSync(encodeTenths(codes, w, h, planes), options),
    decode: (stored, w, h, planes) => decodeTenths(inflateRawSync(stored), w, h, planes),
  };
}

/**
 * Open-Meteo's way: the same predicted residuals (zigzag), bit-packed in frames of 128 values, each frame its width
 * in a byte (frame of reference 0: zigzag residuals are small and non-negative), and no DEFLATE.
 */
const FRAME = 128;
const bitPacked: Codec = {
  name: "predicted residuals, bit-packed frames of 128",
  encode(codes, w, h, planes) {
    const planesBytes = encodeTenths(codes, w, h, planes);
    const n = w * h * planes;
    // the flag byte and the missing cells' mask stay as they are; the low and high planes follow them
    const head = planesBytes.length - 2 * n;
    const out = new Uint8Array(head + Math.ceil(n / FRAME) * (1 + 2 * FRAME));
    out.set(planesBytes.subarray(0, head));
    let at = head;
    for (let f = 0; f < n; f += FRAME) {
      const end = Math.min(n, f + FRAME);
      let max = 0;
      for (let i = f; i < end; i++) max |= planesBytes[head + i] | (planesBytes[head + n + i] << 8);
      const bits = 32 - Math.clz32(max);
      out[at++] = bits;
      let acc = 0;
      let held = 0;
      for (let i = f; i < end; i++) {
        acc |= (planesBytes[head + i] | (planesBytes[head + n + i] << 8)) << held;
        held += bits;
        while (held >= 8) (out[at++] = acc & 255), (acc >>>= 8), (held -= 8);
      }
      if (held > 0) out[at++] = acc & 255;
    }
    return out.slice(0, at);
  },
  decode(stored, w, h, planes) {
    const n = w * h * planes;
    const head = stored[0] === 1 ? 1 + Math.ceil(n / 8) : 1;
    const planesBytes = new Uint8Array(head + 2 * n);
    planesBytes.set(stored.subarray(0, head));
    let at = head;
    for (let f = 0; f < n; f += FRAME) {
      const end = Math.min(n, f + FRAME);
      const bits = stored[at++];
      const mask = (1 << bits) - 1;
      let acc = 0;
      let held = 0;
      for (let i = f; i < end; i++) {
        while (held < bits) (acc |= stored[at++] << held), (held += 8);
        const v = acc & mask;
        acc >>>= bits;
        held -= bits;
        planesBytes[head + i] = v & 255;
        planesBytes[head + n + i] = v >> 8;
      }
    }
    return decodeTenths(planesBytes, w, h, planes);
  },
};

/** dynamical.org's compressor: zstd, here numcodecs' WebAssembly build (Node 20 has none of its own). */
function zstdCodec(level: number): Codec {
  const zstd = Zstd.fromConfig({ level, id: "zstd" });
  return {
    name: `predicted planes, zstd ${level} (WebAssembly)`,
    encode: (codes, w, h, planes) => zstd.encode(encodeTenths(codes, w, h, planes)),
    decode: async (stored, w, h, planes) => decodeTenths(await zstd.decode(stored), w, h, planes),
  };
}

const DAY_CODECS: Codec[] = [
  rowDifferences((w) => w),
  tenthsCodec("predicted planes, DEFLATE 6 Z_RLE (dist-4)", zRle),
  tenthsCodec("predicted planes, DEFLATE 3", { level: 3 }),
  tenthsCodec("predicted planes, DEFLATE 6", { level: 6 }),
  bitPacked,
  zstdCodec(3),
  zstdCodec(9),
];

/**
 * Series candidates: a codec, a chunk side and a group side (chunks a group record lists a side; the baseline's
 * chunks are cells-major: rows of a cell's days).
 */
const SERIES: { codec: Codec; side: number; group: number }[] = [
  { codec: rowDifferences((_w, _h, planes) => planes), side: 2, group: 8 },
  { codec: tenthsCodec("predicted planes, Z_RLE", zRle), side: 2, group: 8 },
  { codec: tenthsCodec("predicted planes, DEFLATE 6", { level: 6 }), side: 4, group: 8 },
  { codec: tenthsCodec("predicted planes, Z_RLE", zRle), side: 4, group: 8 },
  { codec: tenthsCodec("predicted planes, Z_RLE (dist-4)", zRle), side: 4, group: GROUP_CHUNKS },
  { codec: tenthsCodec("predicted planes, Z_RLE", zRle), side: 8, group: 8 },
  { codec: bitPacked, side: 4, group: GROUP_CHUNKS },
  { codec: zstdCodec(3), side: 4, group: GROUP_CHUNKS },
];
/** climate-dist-4's rows of each table: day blocks under Z_RLE, series chunks of 4 x 4 cells under Z_RLE. */
const DIST_4_DAY = 1;
const DIST_4_SERIES = 4;

interface Row {
  name: string;
  bytesPerValue: number;
  encodeS: number;
  decodeS: number;
  /** a point read: the chunk's bytes and its record's, and the chunk's decoding */
  pointBytes?: number;
  pointUs?: number;
}

/** The grids' tenths codes, each day's. */
function toCodes(days: Float32Array[]): Int16Array[] {
  return days.map((g) => Int16Array.from(g, (v) => (v !== v ? MISSING : Math.round(v * 10))));
}

/** What the bench's grids are like, to set beside SILO's: spread, roughness in space and from day to day. */
function describe(days: Int16Array[]): string {
  let [n, sum, sq, zero, east, eastN, step, stepSq, stepN] = [0, 0, 0, 0, 0, 0, 0, 0, 0];
  for (let d = 0; d < days.length; d++) {
    const day = days[d];
    for (let i = 0; i < day.length; i++) {
      const v = day[i];
      if (v === MISSING) continue;
      n++;
      sum += v;
      sq += v * v;
      if (v === 0) zero++;
      if (i % W < W - 1 && day[i + 1] !== MISSING) (east += Math.abs(day[i + 1] - v)), eastN++;
      if (d > 0 && days[d - 1][i] !== MISSING) (step += v - days[d - 1][i]), (stepSq += (v - days[d - 1][i]) ** 2), stepN++;
    }
  }
  const mean = sum / n;
  const sd = Math.sqrt(sq / n - mean * mean);
  const stepSd = Math.sqrt(stepSq / stepN - (step / stepN) ** 2);
  return `mean ${fmt(mean / 10, 1)}, sd ${fmt(sd / 10, 1)}; mean |difference| of east neighbours (5 km) ${fmt(east / eastN / 10, 2)}; sd of a cell's change from one day to the next ${fmt(stepSd / 10, 2)}; zero ${fmt((100 * zero) / n, 1)}% of land values`;
}

/** A candidate that changes a value is no candidate: every one is checked against what it was given. */
function sameCodes(back: Int16Array, codes: Int16Array, name: string): void {
  for (let i = 0; i < codes.length; i++) if (back[i] !== codes[i]) throw new Error(`${name} changed value ${i}: ${codes[i]} came back ${back[i]}`);
}

/** Every 64 x 64 block of the days given: one plane each. */
async function measureDays(days: Int16Array[], codec: Codec): Promise<Row> {
  let bytes = 0;
  let land = 0;
  let encodeMs = 0;
  let decodeMs = 0;
  for (const day of days) {
    for (let br = 0; br < H; br += 64) {
      for (let bc = 0; bc < W; bc += 64) {
        const [bw, bh] = [Math.min(64, W - bc), Math.min(64, H - br)];
        const block = new Int16Array(bw * bh);
        let present = 0;
        for (let y = 0; y < bh; y++) for (let x = 0; x < bw; x++) if ((block[y * bw + x] = day[(br + y) * W + bc + x]) !== MISSING) present++;
        if (present === 0) continue;
        let t = performance.now();
        const stored = await codec.encode(block, bw, bh, 1);
        encodeMs += performance.now() - t;
        t = performance.now();
        const back = await codec.decode(stored, bw, bh, 1);
        decodeMs += performance.now() - t;
        sameCodes(back, block, codec.name);
        bytes += stored.byteLength + ENTRY_BYTES;
        land += present;
      }
    }
  }
  return { name: codec.name, bytesPerValue: bytes / land, encodeS: encodeMs / 1000, decodeS: decodeMs / 1000 };
}

/** Every chunk of `side` x `side` cells over all the days (a span of them), days-major (cells-major for the baseline). */
async function measureSeries(days: Int16Array[], { codec, side, group }: (typeof SERIES)[number]): Promise<Row> {
  const record = recordBytes(side, group);
  const dayCount = days.length;
  const cellsMajor = codec.name.startsWith("dist-3");
  let [bytes, land, encodeMs, decodeMs, chunks, pointBytes, pointMs, points] = [0, 0, 0, 0, 0, 0, 0, 0];
  for (let cr = 0; cr < H; cr += side) {
    for (let cc = 0; cc < W; cc += side) {
      const [cw, ch] = [Math.min(side, W - cc), Math.min(side, H - cr)];
      const n = cw * ch;
      const codes = new Int16Array(n * dayCount);
      let present = 0;
      for (let d = 0; d < dayCount; d++) {
        for (let i = 0; i < n; i++) {
          const v = days[d][(cr + Math.floor(i / cw)) * W + cc + (i % cw)];
          codes[cellsMajor ? i * dayCount + d : d * n + i] = v;
          if (v !== MISSING) present++;
        }
      }
      if (present === 0) continue;
      let t = performance.now();
      const stored = await codec.encode(codes, cw, ch, dayCount);
      encodeMs += performance.now() - t;
      t = performance.now();
      const back = await codec.decode(stored, cw, ch, dayCount);
      const ms = performance.now() - t;
      sameCodes(back, codes, codec.name);
      decodeMs += ms;
      bytes += stored.byteLength + record / (group * group);
      land += present;
      // a point read: a group record and one chunk; full land chunks only, every 17th
      if (present === n * dayCount && chunks++ % 17 === 0) {
        pointBytes += stored.byteLength + record;
        pointMs += ms;
        points++;
      }
    }
  }
  return { name: `${codec.name}, ${side} x ${side} cells, groups of ${group} x ${group}`, bytesPerValue: bytes / land, encodeS: encodeMs / 1000, decodeS: decodeMs / 1000, pointBytes: pointBytes / points, pointUs: (pointMs * 1000) / points };
}

function printRows(say: Say, title: string, rows: Row[]): void {
  say(`  ${title}`);
  say(`    ${"codec".padEnd(82)} ${"B/value".padStart(8)} ${"encode s".padStart(9)} ${"decode s".padStart(9)} ${"point read".padStart(11)} ${"decode".padStart(8)}`);
  for (const r of rows) {
    const point = r.pointBytes ? `${fmt(r.pointBytes / 1000, 1)} kB`.padStart(11) + `${fmt(r.pointUs!, 0)} µs`.padStart(9) : "";
    say(`    ${r.name.padEnd(82)} ${fmt(r.bytesPerValue, 3).padStart(8)} ${fmt(r.encodeS, 2).padStart(9)} ${fmt(r.decodeS, 2).padStart(9)} ${point}`);
  }
}

/** The A/B of both tiers' codecs and of the chunk shape, for maximum temperature and rain; figures named by variable. */
export async function benchCodecs(ctx: CodecBenchContext): Promise<void> {
  const dayCount = Number(process.env.BENCH_CODEC_DAYS ?? 365);
  const dates = listDays("2003-01-01", dayCount);
  const mask = makeLandMask();
  ctx.say();
  ctx.say(`codecs on ${dayCount} days of SILO-like grids (bench/silo-like.ts, the whole grid): bytes a land value, one thread's encode and decode, a point read of a chunk (its record and the chunk)`);
  for (const [variable, make] of [[MAX_TEMP, makeSiloLikeMaxTemp], [findVariable("daily_rain")!, makeSiloLikeRain]] as [Variable, (d: string, m: Uint8Array) => Float32Array][]) {
    ctx.log(`making ${dayCount} SILO-like days of ${variable.silo}`);
    const days = toCodes(dates.map((d) => make(d, mask)));
    ctx.say(`  ${variable.silo} (${variable.unit}): ${describe(days)}`);
    const dayRows: Row[] = [];
    for (const c of DAY_CODECS) dayRows.push(await measureDays(days.filter((_, i) => i % 3 === 0), c));
    const seriesRows: Row[] = [];
    for (const s of SERIES) seriesRows.push(await measureSeries(days, s));
    printRows(ctx.say, `${variable.silo}: day blocks (every third day)`, dayRows);
    printRows(ctx.say, `${variable.silo}: series chunks over the ${dayCount} days`, seriesRows);
    const [dayBase, dayNew] = [dayRows[0], dayRows[DIST_4_DAY]];
    const [seriesBase, seriesNew] = [seriesRows[0], seriesRows[DIST_4_SERIES]];
    const total = dayNew.bytesPerValue + seriesNew.bytesPerValue;
    ctx.say(`    both tiers: ${fmt(dayBase.bytesPerValue + seriesBase.bytesPerValue, 2)} B a value in climate-dist-3, ${fmt(total, 2)} in climate-dist-4`);
    Object.assign(ctx.figures, {
      [`codec_${variable.silo}_day_b`]: dayNew.bytesPerValue,
      [`codec_${variable.silo}_day_base_b`]: dayBase.bytesPerValue,
      [`codec_${variable.silo}_series_b`]: seriesNew.bytesPerValue,
      [`codec_${variable.silo}_series_base_b`]: seriesBase.bytesPerValue,
      [`codec_${variable.silo}_both_b`]: total,
      [`codec_${variable.silo}_point_bytes`]: seriesNew.pointBytes!,
      [`codec_${variable.silo}_point_base_bytes`]: seriesBase.pointBytes!,
      [`codec_${variable.silo}_point_us`]: seriesNew.pointUs!,
      [`codec_${variable.silo}_point_base_us`]: seriesBase.pointUs!,
    });
  }
}
