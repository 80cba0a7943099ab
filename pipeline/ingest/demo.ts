// The bundled demo raster: deterministic, generated SILO-format daily grids of SILO's variables (format/variables.ts)
// for January 2003 (docs/contract.md §6.2), and any later day on demand. The demo publishes DEMO_VARIABLES; tests
// generate every variable over small windows.
//
// Byte-for-byte reproducibility is the point: the published version id and content hash follow from these
// bytes (docs/contract.md §5), so nothing here may depend on the machine, the clock, the locale or the engine.
// ECMAScript leaves Math.sin, Math.cos and Math.exp implementation-approximated (engines differ in the last
// bit); IEEE 754 + - * / and sqrt are correctly rounded everywhere, so the smooth fields below use a polynomial
// sine and rational bumps.

import { existsSync, readFileSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { feature } from "topojson-client";
import { dateToDayNumber, isCalendarDate, listDates } from "../../format/dates.js";
import { sha256Hex } from "../../format/hash.js";
import { GRID, colToLon, rowToLat } from "../../format/grid.js";
import { type Variable, VARIABLES } from "../../format/variables.js";
import { dateToMemberPath } from "../../sources/silo.js";
import { DemoError } from "../errors.js";
import { writeFileAtomic } from "../files/write.js";
import { writeSiloTiff } from "./geotiff.js";

export const DEMO_FIRST = "2003-01-01";
export const DEMO_LAST = "2003-01-31";
export const DEMO_SEED = 20030101;
/** Bump whenever the values, the mask, the file names or their format change: writeDemo regenerates on a new version. */
export const DEMO_GENERATOR_VERSION = "demo-variables-2";

/**
 * The variables the demo publishes: the four an APSIM weather file needs and vapour pressure, Class A pan evaporation
 * (APSIM's optional evap column, and a water balance's potential evaporation) and FAO56 reference evapotranspiration
 * (irrigation scheduling). Each more variable costs the demo about a fifth more time; every variable is generated
 * by makeDemoVariables.
 */
export const DEMO_VARIABLES: readonly Variable[] = VARIABLES.filter((v) => ["max_temp", "min_temp", "daily_rain", "radiation", "vp", "evap_pan", "et_short_crop"].includes(v.silo));

export const DEMO_DESCRIPTION = {
  generator: "pipeline/ingest/demo.ts",
  generatorVersion: DEMO_GENERATOR_VERSION,
  seed: DEMO_SEED,
  coastline: "Natural Earth 1:10m Admin 0 countries via world-atlas 2.0.2 (public domain)",
  note: "generated values, not observations",
} as const;

/** ISO 3166 numeric code of Australia; in countries-10m it also names Ashmore and Cartier Is. */
const AUSTRALIA_ID = "036";
const DEMO_RECORD = "demo.json";
const CELLS = GRID.width * GRID.height;

type Topology = Parameters<typeof feature>[0];

// Only file hashes are kept: a generator change without a version bump is caught by the pinned hash in
// test/pipeline/demo.test.ts, which is cheaper than regenerating every day to compare.
interface DemoRecord {
  generator: string;
  generatorVersion: string;
  seed: number;
  files: { path: string; sha256: string }[];
}

/** 1 = land: the cell centre lies inside Australia (mainland, Tasmania, islands); everything else is SILO's ocean. */
export function makeLandMask(): Uint8Array {
  const require = createRequire(import.meta.url);
  const file = require.resolve("world-atlas/countries-10m.json");
  const topology = JSON.parse(readFileSync(file, "utf8")) as Topology;
  const countries = feature(topology, topology.objects.countries) as GeoJSON.FeatureCollection;
  const rings: GeoJSON.Position[][] = [];
  for (const f of countries.features) {
    if (f.id !== AUSTRALIA_ID) continue;
    const g = f.geometry;
    if (g.type === "Polygon") rings.push(...g.coordinates);
    else if (g.type === "MultiPolygon") for (const poly of g.coordinates) rings.push(...poly);
  }
  if (rings.length === 0) {
    throw new DemoError(file, "demo", `no feature with id "${AUSTRALIA_ID}"; is world-atlas still 2.0.2?`);
  }
  return rasterizeRings(rings);
}

/**
 * Even-odd scanline fill at cell centres: one pass over every edge per row, O(rows x edges), rather than a
 * point-in-polygon test per cell. Holes (lakes in the outline) fall out of the even-odd rule.
 */
function rasterizeRings(rings: GeoJSON.Position[][]): Uint8Array {
  const mask = new Uint8Array(CELLS);
  const crossings: number[] = [];
  for (let row = 0; row < GRID.height; row++) {
    const lat = rowToLat(row);
    crossings.length = 0;
    for (const ring of rings) {
      for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
        const [x1, y1] = ring[j];
        const [x2, y2] = ring[i];
        // Half-open in latitude so a vertex exactly on the scanline is counted once, never twice.
        if (y1 > lat !== y2 > lat) crossings.push(x1 + ((lat - y1) * (x2 - x1)) / (y2 - y1));
      }
    }
    crossings.sort((a, b) => a - b);
    for (let k = 0; k + 1 < crossings.length; k += 2) fillSpan(mask, row, crossings[k], crossings[k + 1]);
  }
  return mask;
}

/** Marks the cells of one row whose centre longitude lies in [west, east). */
function fillSpan(mask: Uint8Array, row: number, west: number, east: number): void {
  let col = Math.max(0, Math.ceil((west - colToLon(0)) / 0.05) - 1);
  while (col < GRID.width && colToLon(col) < west) col++;
  for (; col < GRID.width && colToLon(col) < east; col++) mask[row * GRID.width + col] = 1;
}

/** One day of the demo's maximum temperature, row-major over the full SILO grid; NaN = missing (ocean, foreign land, gaps). */
export function makeDemoDay(date: string, mask: Uint8Array): Float32Array {
  const values = computeTmax(date, mask);
  punchGaps(values, mask, loadClimate(mask).coastKm, `${DEMO_SEED}:${date}:gaps`);
  return values;
}

/** Maximum temperature of every land cell, before gaps: the other variables follow from it and the day's storms. */
function computeTmax(date: string, mask: Uint8Array): Float32Array {
  if (mask.length !== CELLS) {
    throw new DemoError("land mask", "demo", `mask has ${mask.length} cells, the SILO grid has ${CELLS}`);
  }
  const day = dateToDayIndex(date);
  const climate = loadClimate(mask);
  const noise = seedRandom(`${DEMO_SEED}:${date}:noise`);
  const values = new Float32Array(CELLS).fill(NaN);
  for (let row = 0; row < GRID.height; row++) {
    const lat = rowToLat(row);
    for (let col = 0; col < GRID.width; col++) {
      const i = row * GRID.width + col;
      if (mask[i] === 0) continue;
      const lon = colToLon(col);
      const v = climate.normals[i] + computeWeather(lon, lat, day) + (noise() - 0.5) * 0.8;
      // One decimal, then float32: what SILO files hold (docs/contract.md §6.1, §6.2).
      values[i] = toTenths(v);
    }
  }
  return values;
}

/** One decimal, then float32: what SILO files hold (docs/contract.md §6.1, §6.2). */
function toTenths(v: number): number {
  return Math.fround(Math.round(v * 10) / 10);
}

/**
 * Every variable of one demo day (SILO name -> cells), each with its own gaps. Minimum temperature lies below the
 * maximum at every cell by a diurnal range that is wider inland and narrower under rain; rain falls from a few dozen
 * storms (most cells 0, a long tail of wet ones, more in the monsoon north); radiation is January's clear sky
 * dimmed by cloud; vapour pressure is humid in the north and on the coasts, dry inland.
 */
export function makeDemoVariables(date: string, mask: Uint8Array): Map<string, Float32Array> {
  const climate = loadClimate(mask);
  const tmax = computeTmax(date, mask);
  const rain = computeRain(date, mask);
  const day = dateToDayIndex(date);
  const noise = seedRandom(`${DEMO_SEED}:${date}:variables`);
  const out = new Map<string, Float32Array>(VARIABLES.map((v) => [v.silo, new Float32Array(CELLS).fill(NaN)]));
  const [tmin, radiation, vp] = ["min_temp", "radiation", "vp"].map((n) => out.get(n)!);
  for (let row = 0; row < GRID.height; row++) {
    const lat = rowToLat(row);
    const monsoon = clamp((lat + 22) / 10, 0, 1) * (0.6 + 0.4 * sinTurns(day / 11 + 0.2));
    const clearSky = interpolate(lat, [-44, -30, -20, -10], [31, 32.5, 30.5, 27]);
    for (let col = 0; col < GRID.width; col++) {
      const i = row * GRID.width + col;
      if (mask[i] === 0) continue;
      const inland = sq(climate.coastKm[i]) / (sq(climate.coastKm[i]) + 150 * 150);
      const wet = Math.min(1, rain[i] / 15);
      const range = Math.max(1, 7 + 9 * inland - 5 * wet - 3 * monsoon + (noise() - 0.5) * 2);
      tmin[i] = toTenths(tmax[i] - range);
      const cloud = clamp(0.1 + 0.45 * monsoon + 0.5 * wet + 0.1 * (1 - inland), 0, 0.9);
      radiation[i] = toTenths(clamp(clearSky * (1 - 0.7 * cloud) + (noise() - 0.5) * 1.5, 1, 40));
      vp[i] = toTenths(clamp(7 + 20 * monsoon + 8 * (1 - inland) + 4 * wet + (noise() - 0.5) * 2, 2, 40));
    }
  }
  out.set("max_temp", tmax);
  out.set("daily_rain", rain);
  computeEvaporation(date, mask, out);
  for (const [silo, values] of out) punchGaps(values, mask, climate.coastKm, silo === "max_temp" ? `${DEMO_SEED}:${date}:gaps` : `${DEMO_SEED}:${date}:gaps:${silo}`);
  return out;
}

/**
 * The variables SILO computes from the day's temperatures, radiation and vapour pressure, here by the textbook
 * arithmetic: saturation vapour pressure from each temperature (FAO56 eq. 11), the deficit and
 * relative humidities from it; a Penman combination of radiation and the deficit for the reference crops (the tall
 * crop's rougher canopy draws more from dry air), the Class A pan as the short crop over a pan coefficient of 0.7, the
 * synthetic pan near it; Morton's wet-environment evaporation as Priestley-Taylor, his potential above it by the
 * deficit, his actual by the complementary relationship (2 wet - potential); a pressure field of lows in the monsoon
 * north and fronts in the south. Values are filled from undisturbed cells (gaps are punched later, per variable).
 */
function computeEvaporation(date: string, mask: Uint8Array, out: Map<string, Float32Array>): void {
  const day = dateToDayIndex(date);
  const noise = seedRandom(`${DEMO_SEED}:${date}:evaporation`);
  const [tmax, tmin, radiation, vp] = ["max_temp", "min_temp", "radiation", "vp"].map((n) => out.get(n)!);
  const get = (n: string) => out.get(n)!;
  const [deficit, rhMax, rhMin, short, tall, pan, syn, comb, lake, wet, potential, actual, mslp] = [
    "vp_deficit", "rh_tmax", "rh_tmin", "et_short_crop", "et_tall_crop", "evap_pan", "evap_syn", "evap_comb", "evap_morton_lake", "et_morton_wet", "et_morton_potential", "et_morton_actual", "mslp",
  ].map(get);
  const panMeasured = date >= findSilo("evap_pan").firstDate;
  for (let row = 0; row < GRID.height; row++) {
    const lat = rowToLat(row);
    const monsoon = clamp((lat + 22) / 10, 0, 1) * (0.6 + 0.4 * sinTurns(day / 11 + 0.2));
    const southern = clamp((-lat - 25) / 15, 0, 1);
    for (let col = 0; col < GRID.width; col++) {
      const i = row * GRID.width + col;
      if (mask[i] === 0) continue;
      const [esMax, esMin] = [saturationHpa(tmax[i]), saturationHpa(tmin[i])];
      const mean = (tmax[i] + tmin[i]) / 2;
      const slope = (4098 * saturationHpa(mean)) / sq(mean + 237.3); // hPa per degC
      const weight = slope / (slope + 0.66); // 0.66 hPa per degC: the psychrometric constant near sea level
      const gap = Math.max(0, (esMax + esMin) / 2 - vp[i]);
      const net = 0.6 * radiation[i]; // net radiation, MJ m-2, of a green surface
      const shortCrop = (weight * net) / 2.45 + (1 - weight) * 0.54 * gap; // 2.45 MJ per kg: latent heat; 0.54 mm per hPa at 2 m/s wind
      const panDay = clamp(shortCrop / 0.7 + (noise() - 0.5) * 0.8, 0.2, 34);
      const wetDay = (1.26 * weight * net) / 2.45;
      const potentialDay = wetDay + 0.2 * gap;
      deficit[i] = toTenths(clamp(gap, 0, 125));
      rhMax[i] = toTenths(clamp((100 * vp[i]) / esMax, 1, 100));
      rhMin[i] = toTenths(clamp((100 * vp[i]) / esMin, 1, 100));
      short[i] = toTenths(clamp(shortCrop, 0.1, 30));
      tall[i] = toTenths(clamp(1.15 * (weight * net) / 2.45 + 1.6 * (1 - weight) * 0.54 * gap, 0.1, 34));
      pan[i] = toTenths(panDay);
      syn[i] = toTenths(clamp(panDay * (0.92 + 0.1 * noise()), 0.2, 34));
      comb[i] = panMeasured ? pan[i] : syn[i];
      wet[i] = toTenths(clamp(wetDay, 0.1, 30));
      lake[i] = toTenths(clamp(1.08 * wetDay + 0.05 * gap, 0.1, 30));
      potential[i] = toTenths(clamp(potentialDay, 0.1, 34));
      actual[i] = toTenths(clamp(2 * wetDay - potentialDay, 0, 30));
      const fronts = southern * 9 * sinTurns((colToLon(col) - 112 - 6.5 * day) / 26);
      mslp[i] = toTenths(1012 - 9 * monsoon + fronts + 4 * southern + (noise() - 0.5) * 1.5);
    }
  }
}

/** Saturation vapour pressure over water, hPa (FAO56 eq. 11), with exp from + - * / only (see the file header). */
function saturationHpa(celsius: number): number {
  return 6.108 * expArith((17.27 * celsius) / (celsius + 237.3));
}

/** e^x as (1 + x/2^20)^(2^20): 20 squarings, correctly rounded at every step, so the same on every engine (|x| < 5). */
function expArith(x: number): number {
  let y = 1 + x / 1048576;
  for (let k = 0; k < 20; k++) y *= y;
  return y;
}

/** The variable of a SILO name of format/variables.ts. */
function findSilo(silo: string): Variable {
  return VARIABLES.find((v) => v.silo === silo)!;
}

/** Rain, mm: 0 on most land cells; storms of compact support whose intensities have a long tail. */
function computeRain(date: string, mask: Uint8Array): Float32Array {
  const rain = new Float32Array(CELLS).fill(NaN);
  for (let i = 0; i < CELLS; i++) if (mask[i] === 1) rain[i] = 0;
  const rand = seedRandom(`${DEMO_SEED}:${date}:storms`);
  const pulse = 0.5 + 0.5 * sinTurns(dateToDayIndex(date) / 11 + 0.2);
  const storms = 12 + Math.floor(30 * pulse);
  for (let k = 0; k < storms; k++) {
    // the monsoon north takes most storms; the rest fall anywhere
    const north = rand() < 0.65;
    const row = Math.floor(north ? rand() * 240 : rand() * GRID.height);
    const col = Math.floor(rand() * GRID.width);
    const u = rand();
    addStorm(rain, mask, row, col, 4 + rand() * 36, 2 + 140 * u * u * u * (north ? 1 + pulse : 0.6), seedRandom(`${DEMO_SEED}:${date}:storm:${k}`));
  }
  for (let i = 0; i < CELLS; i++) if (rain[i] > 0) rain[i] = rain[i] < 0.2 ? 0 : toTenths(Math.min(rain[i], 600));
  return rain;
}

/** Adds one storm: intensity * (1 - q^2)^2 inside its radius (cells), with a little texture. */
function addStorm(rain: Float32Array, mask: Uint8Array, r0: number, c0: number, radius: number, intensity: number, texture: () => number): void {
  const reach = Math.ceil(radius);
  for (let row = Math.max(0, r0 - reach); row <= Math.min(GRID.height - 1, r0 + reach); row++) {
    for (let col = Math.max(0, c0 - reach); col <= Math.min(GRID.width - 1, c0 + reach); col++) {
      const i = row * GRID.width + col;
      const q2 = (sq(row - r0) + sq(col - c0)) / (radius * radius);
      if (q2 >= 1 || mask[i] === 0) continue;
      rain[i] += intensity * sq(1 - q2) * (0.7 + 0.6 * texture());
    }
  }
}

/**
 * Writes every variable of DEMO_FIRST..`through` under folder (by default DEMO_LAST, or the last day the folder
 * already holds: days added by the daily routine stay), keeping files whose bytes already match, and demo.json
 * listing them; returns every path.
 */
export async function writeDemo(folder: string, log: (line: string) => void = () => {}, through?: string): Promise<string[]> {
  const previous = await readRecord(folder);
  const matches = previous?.generatorVersion === DEMO_GENERATOR_VERSION && previous.seed === DEMO_SEED;
  // days the folder held stay (regenerated when the generator changed), so its files and demo.json agree
  const held = previous?.files.map((f) => lastDateOf(f.path)).sort().pop();
  const dates = listDates(DEMO_FIRST, [through ?? DEMO_LAST, held ?? DEMO_LAST].sort()[1]);
  const known = new Map(matches ? previous.files.map((f) => [f.path, f.sha256]) : []);
  const record: DemoRecord = { generator: DEMO_DESCRIPTION.generator, generatorVersion: DEMO_GENERATOR_VERSION, seed: DEMO_SEED, files: [] };
  let mask: Uint8Array | undefined;
  const paths: string[] = [];
  for (const date of dates) {
    const members = DEMO_VARIABLES.map((v) => ({ v, rel: dateToMemberPath(date, v) }));
    const onDisk = await Promise.all(members.map(async ({ rel }) => (existsSync(join(folder, rel)) ? sha256Hex(await readFile(join(folder, rel))) : undefined)));
    paths.push(...members.map(({ rel }) => join(folder, rel)));
    const stale = members.filter(({ rel }, i) => onDisk[i] === undefined || onDisk[i] !== known.get(rel));
    let days: Map<string, Float32Array> | undefined;
    if (stale.length > 0) {
      mask ??= makeLandMask();
      await mkdir(join(folder, date.slice(0, 4)), { recursive: true });
      days = makeDemoVariables(date, mask);
    }
    for (const [i, { v, rel }] of members.entries()) {
      const fresh = stale.some((m) => m.rel === rel);
      record.files.push({ path: rel, sha256: fresh ? await writeDemoFile(join(folder, rel), days!.get(v.silo)!, v) : onDisk[i]! });
      log(`${fresh ? "generated" : "unchanged"} ${rel}`);
    }
  }
  await writeRecord(folder, record);
  return paths;
}

async function writeDemoFile(file: string, values: Float32Array, variable: Variable): Promise<string> {
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v < variable.plausible[0] || v > variable.plausible[1]) throw new DemoError(file, "demo", `value ${v} is outside ${variable.silo}'s plausible range`);
  }
  await writeSiloTiff(file, [0, 0, GRID.width, GRID.height], values);
  return sha256Hex(await readFile(file));
}

/** The date of a demo file's member path (YYYY/YYYYMMDD.<var>.tif). */
function lastDateOf(memberPath: string): string {
  const m = /(\d{4})(\d{2})(\d{2})\.[a-z_]+\.tif$/.exec(memberPath);
  return m ? `${m[1]}-${m[2]}-${m[3]}` : DEMO_FIRST;
}

/** DEMO_FIRST..DEMO_LAST inclusive, as YYYY-MM-DD. */
export function listDemoDates(): string[] {
  return listDates(DEMO_FIRST, DEMO_LAST);
}

/** Whole days since DEMO_FIRST; the weather's clock. */
function dateToDayIndex(date: string): number {
  if (!isCalendarDate(date)) throw new DemoError(`demo ${date}`, "demo", "not a calendar date YYYY-MM-DD");
  return dateToDayNumber(date) - dateToDayNumber(DEMO_FIRST);
}

interface Climate {
  normals: Float64Array; // January mean daily maximum per land cell, degC
  coastKm: Float64Array;
}
// Keyed by the mask so the coast distance and normals are computed once and shared by all 31 days.
const climates = new WeakMap<Uint8Array, Climate>();

function loadClimate(mask: Uint8Array): Climate {
  let hit = climates.get(mask);
  if (!hit) {
    const coastKm = measureCoastDistance(mask);
    const normals = new Float64Array(CELLS);
    for (let row = 0; row < GRID.height; row++) {
      const lat = rowToLat(row);
      for (let col = 0; col < GRID.width; col++) {
        const i = row * GRID.width + col;
        if (mask[i] === 1) normals[i] = computeNormal(colToLon(col), lat, coastKm[i]);
      }
    }
    hit = { normals, coastKm };
    climates.set(mask, hit);
  }
  return hit;
}

/**
 * January mean daily maximum, degC: the sea keeps coasts mild and the interior bakes, so the value moves from a
 * coastal to an inland profile with distance from the sea; the Great Dividing Range and Alps cool the south-east.
 */
function computeNormal(lon: number, lat: number, coastKm: number): number {
  const coastal = interpolate(lat, [-44, -38, -34, -28, -20, -10], [19, 22.5, 25.5, 29, 33, 32]);
  const inland = interpolate(lat, [-44, -36, -32, -27, -22, -16, -10], [21, 31, 36, 40, 41.5, 37, 34]);
  const reach = (coastKm * coastKm) / (coastKm * coastKm + 150 * 150);
  const highlands = (5 * clamp((-lat - 26) / 8, 0, 1)) / (1 + sq((lon - 148.6) / 1.6));
  const pilbara = 2.5 / (1 + sq((lon - 120.5) / 4) + sq((lat + 22) / 3));
  return coastal + (inland - coastal) * reach - highlands * (0.4 + 0.6 * reach) + pilbara;
}

/** Day-to-day departures: fronts sweeping west to east (strongest in the south), monsoon cloud in the north, one roaming heat wave. */
function computeWeather(lon: number, lat: number, day: number): number {
  const southern = 1 + 5 * clamp((-lat - 22) / 16, 0, 1);
  // Two wave trains of unrelated speed and wavelength, so the weather does not repeat every few days.
  const fronts =
    southern *
    (0.65 * sinTurns((lon - 112 - 6.5 * day + 0.4 * (lat + 27)) / 26) +
      0.35 * sinTurns((lon - 112 - 3.7 * day - 0.3 * (lat + 27)) / 23 + 0.15));
  const monsoon = -2.5 * clamp((lat + 20) / 8, 0, 1) * (0.5 + 0.5 * sinTurns(day / 11 + 0.2));
  const heatwave = 3 * (0.5 - 0.5 * sinTurns(day / 31 + 0.25));
  const heat = heatwave / sq(1 + sq((lon - 118 - 1.1 * day) / 9) + sq((lat + 24 + 0.35 * day) / 6));
  return fronts + monsoon + heat;
}

/** Station-sparse inland patches where SILO would have no value: 0-2 small blobs on some days. */
function punchGaps(values: Float32Array, mask: Uint8Array, coastKm: Float64Array, label: string): void {
  const rand = seedRandom(label);
  const blobs = [0, 0, 1, 2][Math.floor(rand() * 4)];
  for (let b = 0; b < blobs; b++) {
    let centre = -1;
    for (let tries = 0; tries < 1000 && centre < 0; tries++) {
      const i = Math.floor(rand() * CELLS);
      if (mask[i] === 1 && coastKm[i] > 150) centre = i;
    }
    if (centre < 0) continue;
    const r0 = Math.floor(centre / GRID.width);
    const c0 = centre % GRID.width;
    const radius = 2 + rand() * 4;
    const reach = Math.ceil(radius);
    for (let row = r0 - reach; row <= r0 + reach; row++) {
      for (let col = c0 - reach; col <= c0 + reach; col++) {
        const i = row * GRID.width + col;
        if (sq(row - r0) + sq(col - c0) <= radius * radius && mask[i] === 1) values[i] = NaN;
      }
    }
  }
}

/** Chamfer distance from each land cell to the nearest sea cell, km; two raster passes, no geometry. */
function measureCoastDistance(mask: Uint8Array): Float64Array {
  const { width, height } = GRID;
  const dist = new Float64Array(CELLS);
  for (let i = 0; i < CELLS; i++) dist[i] = mask[i] === 1 ? Infinity : 0;
  const dyKm = 5.55; // 0.05 degree of latitude
  const dxKm = (row: number) => dyKm * sinTurns(0.25 + rowToLat(row) / 360);
  const relax = (i: number, j: number, w: number) => {
    if (dist[j] + w < dist[i]) dist[i] = dist[j] + w;
  };
  for (let row = 0; row < height; row++) {
    const dx = dxKm(row);
    const diag = Math.sqrt(dx * dx + dyKm * dyKm);
    for (let col = 0; col < width; col++) {
      const i = row * width + col;
      if (dist[i] === 0) continue;
      if (col > 0) relax(i, i - 1, dx);
      if (row > 0) {
        relax(i, i - width, dyKm);
        if (col > 0) relax(i, i - width - 1, diag);
        if (col < width - 1) relax(i, i - width + 1, diag);
      }
    }
  }
  for (let row = height - 1; row >= 0; row--) {
    const dx = dxKm(row);
    const diag = Math.sqrt(dx * dx + dyKm * dyKm);
    for (let col = width - 1; col >= 0; col--) {
      const i = row * width + col;
      if (dist[i] === 0) continue;
      if (col < width - 1) relax(i, i + 1, dx);
      if (row < height - 1) {
        relax(i, i + width, dyKm);
        if (col < width - 1) relax(i, i + width + 1, diag);
        if (col > 0) relax(i, i + width - 1, diag);
      }
    }
  }
  return dist;
}

/** sin(2 pi x) from + - * / only (see the file header): reduce to a quarter turn, then a Taylor series to x^11. */
function sinTurns(turns: number): number {
  let r = (turns - Math.round(turns)) * 2 * Math.PI; // -pi..pi
  if (r > Math.PI / 2) r = Math.PI - r;
  else if (r < -Math.PI / 2) r = -Math.PI - r;
  const r2 = r * r;
  return r * (1 + r2 * (-1 / 6 + r2 * (1 / 120 + r2 * (-1 / 5040 + r2 * (1 / 362880 + r2 * (-1 / 39916800))))));
}

function interpolate(x: number, xs: number[], ys: number[]): number {
  if (x <= xs[0]) return ys[0];
  for (let k = 1; k < xs.length; k++) {
    if (x <= xs[k]) return ys[k - 1] + ((ys[k] - ys[k - 1]) * (x - xs[k - 1])) / (xs[k] - xs[k - 1]);
  }
  return ys[ys.length - 1];
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}

function sq(x: number): number {
  return x * x;
}

/** mulberry32 seeded by FNV-1a of a label, so every (seed, date, purpose) has its own reproducible stream. */
function seedRandom(label: string): () => number {
  let h = 0x811c9dc5;
  for (let k = 0; k < label.length; k++) h = Math.imul(h ^ label.charCodeAt(k), 0x01000193);
  let a = h >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}


async function readRecord(folder: string): Promise<DemoRecord | undefined> {
  try {
    return JSON.parse(await readFile(join(folder, DEMO_RECORD), "utf8")) as DemoRecord;
  } catch {
    // A missing or unreadable record only costs a regeneration.
    return undefined;
  }
}

async function writeRecord(folder: string, record: DemoRecord): Promise<void> {
  await writeFileAtomic(join(folder, DEMO_RECORD), JSON.stringify(record, null, 2) + "\n");
}
