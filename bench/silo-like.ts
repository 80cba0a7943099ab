// Bench inputs that behave like SILO's grids (issue 44): smooth in space at the scale of hundreds of km, changing from
// day to day as weather does, rain mostly zero and patchy, every value a tenth. Deterministic: any date is made alone
// (no day depends on having made the one before), so a cache of files can be filled in any order.
//
// A field is a sum of smooth layers, each a coarse lattice of noise that changes every day, interpolated with
// Catmull-Rom splines: a weather layer (nodes 2 degrees apart, so features of 200 to 1,000 km) whose value on a day is
// a moving average of the past 12 days' noise with weights phi^j, each day's noise drifting east (so a lag-1
// correlation near phi, and fronts that travel), a layer of finer weather (1 degree for temperature), and for temperature a
// fixed terrain layer (0.4 degrees). Temperature is a climatology (hotter north and inland, a seasonal cycle that grows
// southward) plus those anomalies; rain falls where a latent field of the same kind passes a threshold that moves with
// latitude and season, its amount growing steeply above it (heavy-tailed).

import { dateToDayNumber } from "../format/dates.js";
import { GRID, type Window, colToLon, rowToLat } from "../format/grid.js";

/** A standard normal from a 32-bit hash of the integers given (deterministic, no state). */
function gaussian(seed: number, a: number, b: number, c: number): number {
  const u1 = (hash(seed, a, b, c) + 0.5) / 4294967296;
  const u2 = (hash(seed ^ 0x9e3779b9, a, b, c) + 0.5) / 4294967296;
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

function hash(seed: number, a: number, b: number, c: number): number {
  let h = seed >>> 0;
  for (const x of [a, b, c]) {
    h = Math.imul(h ^ (x | 0), 0x85ebca6b) >>> 0;
    h = (h ^ (h >>> 13)) >>> 0;
    h = Math.imul(h, 0xc2b2ae35) >>> 0;
    h = (h ^ (h >>> 16)) >>> 0;
  }
  return h;
}

/** Catmull-Rom weights of the four nodes around fraction t. */
function weights(t: number): [number, number, number, number] {
  const t2 = t * t;
  const t3 = t2 * t;
  return [(-t3 + 2 * t2 - t) / 2, (3 * t3 - 5 * t2 + 2) / 2, (-3 * t3 + 4 * t2 + t) / 2, (t3 - t2) / 2];
}

/** One noise layer: nodes `spacing` degrees apart, a moving average of `lags` days of noise with weights phi^j drifting east `driftDeg` a day. */
interface Layer {
  seed: number;
  spacing: number;
  phi: number;
  lags: number;
  driftDeg: number;
  /** standard deviation of the layer's value */
  sd: number;
  /** the same noise every day (a terrain) */
  fixed?: boolean;
}

/** The layer's values at the points (lon, lat) of a lattice covering the grid (rows north to south). */
function sampleLayer(layer: Layer, day: number, lons: Float64Array, lats: Float64Array): Float32Array {
  const out = new Float32Array(lons.length * lats.length);
  const lags = layer.fixed ? 1 : layer.lags;
  const w = Array.from({ length: lags }, (_, j) => layer.phi ** j);
  const norm = layer.sd / Math.sqrt(w.reduce((s, x) => s + x * x, 0));
  const rowOf = (lat: number) => (lat + 60) / layer.spacing;
  const y0 = Math.floor(rowOf(lats[lats.length - 1])) - 1;
  const ny = Math.floor(rowOf(lats[0])) + 3 - y0;
  for (let j = 0; j < lags; j++) {
    const t = layer.fixed ? 0 : day - j;
    const shift = layer.fixed ? 0 : j * layer.driftDeg; // the noise of day t - j has drifted j days east since
    const colOf = (lon: number) => (lon - shift - 60) / layer.spacing;
    const x0 = Math.floor(colOf(lons[0])) - 1;
    const nx = Math.floor(colOf(lons[lons.length - 1])) + 3 - x0;
    // the day's noise at every node the lattice's points need, once
    const nodes = new Float64Array(nx * ny);
    for (let a = 0; a < ny; a++) for (let b = 0; b < nx; b++) nodes[a * nx + b] = gaussian(layer.seed, t, y0 + a, x0 + b);
    const xs = Array.from(lons, (lon) => {
      const x = colOf(lon);
      return { at: Math.floor(x) - 1 - x0, w: weights(x - Math.floor(x)) };
    });
    for (let r = 0; r < lats.length; r++) {
      const y = rowOf(lats[r]);
      const base = (Math.floor(y) - 1 - y0) * nx;
      const wy = weights(y - Math.floor(y));
      for (let c = 0; c < lons.length; c++) {
        const { at, w: wx } = xs[c];
        let v = 0;
        for (let a = 0; a < 4; a++) {
          const k = base + a * nx + at;
          v += wy[a] * (wx[0] * nodes[k] + wx[1] * nodes[k + 1] + wx[2] * nodes[k + 2] + wx[3] * nodes[k + 3]);
        }
        out[r * lons.length + c] += v * w[j] * norm;
      }
    }
  }
  return out;
}

/** A lattice `step` degrees apart over the grid (with a margin), and bilinear interpolation from it to every cell. */
const COARSE_STEP = 0.25;
const coarseLons = Float64Array.from({ length: Math.ceil((GRID.width * 0.05) / COARSE_STEP) + 3 }, (_, i) => colToLon(0) - COARSE_STEP + i * COARSE_STEP);
const coarseLats = Float64Array.from({ length: Math.ceil((GRID.height * 0.05) / COARSE_STEP) + 3 }, (_, i) => rowToLat(0) + COARSE_STEP - i * COARSE_STEP);

/** Bilinear interpolation to the window's cells from `field`, the lattice's points x0.. by y0.. (`width` a row). */
function toCells(field: Float32Array, width: number, x0: number, y0: number, [c0, r0, w, h]: Window, out: Float32Array): void {
  for (let row = r0; row < r0 + h; row++) {
    const y = (coarseLats[0] - rowToLat(row)) / COARSE_STEP;
    const yi = Math.floor(y);
    const fy = y - yi;
    for (let col = c0; col < c0 + w; col++) {
      const x = (colToLon(col) - coarseLons[0]) / COARSE_STEP;
      const xi = Math.floor(x);
      const fx = x - xi;
      const at = (yi - y0) * width + xi - x0;
      const top = field[at] * (1 - fx) + field[at + 1] * fx;
      const bottom = field[at + width] * (1 - fx) + field[at + width + 1] * fx;
      out[(row - r0) * w + col - c0] += top * (1 - fy) + bottom * fy;
    }
  }
}

/** The fixed terrain layer, finer than the coarse lattice: computed once per process for every cell. */
let terrain: Float32Array | null = null;
function terrainField(): Float32Array {
  if (terrain) return terrain;
  const layer: Layer = { seed: 77, spacing: 0.4, phi: 0, lags: 1, driftDeg: 0, sd: 0.35, fixed: true };
  const lons = Float64Array.from({ length: GRID.width }, (_, c) => colToLon(c));
  const lats = Float64Array.from({ length: GRID.height }, (_, r) => rowToLat(r));
  return (terrain = sampleLayer(layer, 0, lons, lats));
}

const WEATHER_T: Layer = { seed: 11, spacing: 6, phi: 0.75, lags: 12, driftDeg: 1.2, sd: 3.6 };
const MIDDLE_T: Layer = { seed: 13, spacing: 1.5, phi: 0.55, lags: 8, driftDeg: 0.8, sd: 1.4 };
const FINE_T: Layer = { seed: 12, spacing: 1, phi: 0.4, lags: 4, driftDeg: 0.3, sd: 0.35 };
const WEATHER_R: Layer = { seed: 21, spacing: 5, phi: 0.75, lags: 10, driftDeg: 1.2, sd: 1 };
const MIDDLE_R: Layer = { seed: 23, spacing: 1.2, phi: 0.5, lags: 6, driftDeg: 1, sd: 0.5 };
const FINE_R: Layer = { seed: 22, spacing: 0.4, phi: 0.2, lags: 3, driftDeg: 0.6, sd: 0.3 };

/**
 * The anomalies of a day at the window's cells: the layers summed on the coarse lattice's points the window needs,
 * then to cells. A point's value does not depend on which others are sampled, so a window's cells are exactly the
 * whole grid's, at a fraction of the cost.
 */
function anomalies(day: number, layers: Layer[], window: Window): Float32Array {
  const [c0, r0, w, h] = window;
  const xOf = (col: number) => Math.floor((colToLon(col) - coarseLons[0]) / COARSE_STEP);
  const yOf = (row: number) => Math.floor((coarseLats[0] - rowToLat(row)) / COARSE_STEP);
  const [x0, y0] = [xOf(c0), yOf(r0)];
  const lons = coarseLons.subarray(x0, xOf(c0 + w - 1) + 2);
  const lats = coarseLats.subarray(y0, yOf(r0 + h - 1) + 2);
  const coarse = new Float32Array(lons.length * lats.length);
  for (const layer of layers) {
    const part = sampleLayer(layer, day, lons, lats);
    for (let i = 0; i < coarse.length; i++) coarse[i] += part[i];
  }
  const out = new Float32Array(w * h);
  toCells(coarse, lons.length, x0, y0, window, out);
  return out;
}

const toTenths = (v: number) => Math.fround(Math.round(v * 10) / 10);

/** Day of the year's angle (0 on 15 January, the middle of the southern summer). */
const seasonOf = (day: number) => (2 * Math.PI * (day - dateToDayNumber("2003-01-15"))) / 365.25;

const WHOLE_GRID: Window = [0, 0, GRID.width, GRID.height];

/** Maximum temperature of a date at the window's cells (the whole grid's by default), tenths of degC, NaN off land (`mask` 1 on land, whole-grid). */
export function makeSiloLikeMaxTemp(date: string, mask: Uint8Array, window: Window = WHOLE_GRID): Float32Array {
  const [c0, r0, w, h] = window;
  const day = dateToDayNumber(date);
  const out = anomalies(day, [WEATHER_T, MIDDLE_T, FINE_T], window);
  const ground = terrainField();
  const season = Math.cos(seasonOf(day));
  for (let row = r0; row < r0 + h; row++) {
    const south = -rowToLat(row) - 10; // 0 at the north edge, 34 at the south
    for (let col = c0; col < c0 + w; col++) {
      const i = row * GRID.width + col;
      const o = (row - r0) * w + col - c0;
      if (!mask[i]) {
        out[o] = NaN;
        continue;
      }
      const inland = Math.min(1, Math.abs(colToLon(col) - 133) < 12 ? 1 - Math.abs(colToLon(col) - 133) / 12 : 0);
      const climate = 31 - 0.35 * south + inland * 4 + (1 + 0.12 * south + inland * 3) * season;
      out[o] = toTenths(Math.max(-15, Math.min(55, climate + out[o] + ground[i])));
    }
  }
  return out;
}

/** Daily rain of a date at the window's cells (the whole grid's by default), tenths of mm: mostly zero, in patches, heavy-tailed; NaN off land. */
export function makeSiloLikeRain(date: string, mask: Uint8Array, window: Window = WHOLE_GRID): Float32Array {
  const [c0, r0, w, h] = window;
  const day = dateToDayNumber(date);
  const latent = anomalies(day, [WEATHER_R, MIDDLE_R, FINE_R], window);
  const season = Math.cos(seasonOf(day));
  for (let row = r0; row < r0 + h; row++) {
    const south = -rowToLat(row) - 10;
    // wetter in the north's summer, in the south's winter: the threshold the latent field must pass
    const threshold = 0.8 + 0.012 * south - (south < 17 ? 0.35 * season : -0.25 * season);
    for (let col = c0; col < c0 + w; col++) {
      const o = (row - r0) * w + col - c0;
      if (!mask[row * GRID.width + col]) {
        latent[o] = NaN;
        continue;
      }
      const above = latent[o] - threshold;
      latent[o] = above <= 0 ? 0 : toTenths(Math.min(300, 0.2 + 14 * above ** 1.5 * Math.exp(0.7 * above)));
    }
  }
  return latent;
}
