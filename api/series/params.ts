// The query parameters of GET /api/v1/series (docs/contract.md §8.2): one JSON Schema (api/parameters.ts) from which
// come the check, the 400s naming each parameter and what it accepts, and the OpenAPI parameters; then the rules
// across parameters a schema cannot state. Each place is the cell format/grid.ts lonLatToCell gives it.

import { GRID, type Window, bboxToWindow, colToEdgeLon, colToLon, lonLatToCell, rowToEdgeLat, rowToLat } from "../../format/grid.js";
import { type Platform, utf8 } from "../../format/storage.js";
import { APSIM_REQUIRED, APSIM_VARIABLES, type Variable, VARIABLES, describeVariables, findVariable } from "../../format/variables.js";
import { VERSION_ID_PATTERN } from "../../schemas/validate.js";
import type { Issue } from "../errors.js";
import type { Context } from "../context.js";
import { MAX_FILE_VALUES } from "../contract.js";
import { HttpError } from "../errors.js";
import { type ParamsOf, queryParameters, rejectParameters } from "../parameters.js";

/** Places a call may ask for (docs/contract.md §8.2). */
export const MAX_SERIES_PLACES = 100;
/**
 * Values a call may answer: places x days x variables. SILO's whole archive (1889-01-01 on, about 50,400 days in
 * 2026) at one place with the five variables of an APSIM file is about 252,000; this bound keeps that in one call until 2053.
 */
export const MAX_SERIES_VALUES = 300_000;
/**
 * A NetCDF answer holds at most MAX_FILE_VALUES (api/contract.ts): cells x days x variables. Its bytes are streamed a
 * slab of days at a time, so the server's memory does not grow with it; a 20 x 20 cell box (1 x 1 degree) over 68
 * years of one variable, or SILO's whole grid on 17 days. The text formats keep MAX_SERIES_VALUES: they are built whole.
 */
export const MAX_NETCDF_VALUES = MAX_FILE_VALUES;

export const SERIES_FORMATS = ["csv", "json", "met", "netcdf"] as const;
export type SeriesFormat = (typeof SERIES_FORMATS)[number];

/** A place asked for: the point as given, and the global cell that holds it. */
export interface Place {
  lat: number;
  lon: number;
  col: number;
  row: number;
}

/** A box asked for: its edges as given, and the window of the cells whose centres it holds. */
export interface SeriesBox {
  bbox: [number, number, number, number];
  window: Window;
}

/** A checked series request (the *Config of a GET /api/v1/series query). */
export interface SeriesConfig {
  /** the places asked, or a box's cells (row-major: north to south, west to east; each at its centre) */
  places: Place[];
  /** present when the call asked for a box (bbox=) instead of places */
  box?: SeriesBox;
  variables: Variable[];
  /** inclusive bounds as asked; absent: the whole period every asked variable holds */
  start?: string;
  end?: string;
  format: SeriesFormat;
  /** pinned versions, one per variable in the order of `variables` */
  pins?: string[];
}

/** "a, b, c and d": names in a sentence. */
export function joinNames(names: readonly string[]): string {
  return names.length <= 1 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}

/** What an APSIM weather file holds, in words: "radiation, max_temp, min_temp and daily_rain (vp may be added)". */
export const APSIM_TEXT = `${joinNames(APSIM_REQUIRED.map((v) => v.silo))} (${joinNames(APSIM_VARIABLES.filter((v) => !v.apsim!.required).map((v) => v.silo))} may be added)`;

/** Latitudes or longitudes: decimal degrees, comma-separated. */
function coordinates(name: "lat" | "lon", description: string) {
  const [lo, hi, noun, example] = name === "lat" ? [-90, 90, "latitude", "-27.5"] : [-180, 180, "longitude", "153.0"];
  const outside = `{value} is outside ${lo}..${hi}; give a ${noun} from ${lo} to ${hi}`;
  return {
    description,
    type: "array",
    maxItems: MAX_SERIES_PLACES,
    items: { type: "number", minimum: lo, maximum: hi, "x-messages": { type: `{value} is not a decimal number of degrees; give one like ${example}`, minimum: outside, maximum: outside } },
    "x-messages": {
      required: `is required: one or more ${noun}s in decimal degrees, separated by commas`,
      maxItems: `holds {count} values; at most ${MAX_SERIES_PLACES} places are answered a call`,
    },
  } as const;
}

/** A bound of the period: a calendar date, or the whole period when left out. */
function date(name: "start" | "end", description: string) {
  const format = `{value} is not a calendar date; give it as YYYY-MM-DD (leap years respected), or omit ${name} for the whole period`;
  return { description, type: "string", format: "date", "x-messages": { format } } as const;
}

const BBOX_TEXT = "bbox=west,south,east,north (decimal degrees, west < east, south < north)";

const PROPERTIES = {
  lat: coordinates(
    "lat",
    `Latitudes in decimal degrees, comma-separated, at most ${MAX_SERIES_PLACES}; the i-th pairs with the i-th longitude. A place is the SILO cell whose area holds it; on an edge, the cell to the east or north.`,
  ),
  lon: coordinates("lon", "Longitudes in decimal degrees, comma-separated, as many as latitudes."),
  start: date("start", "First date (inclusive); default: the first date every asked variable holds."),
  end: date("end", "Last date (inclusive); default: the last date every asked variable holds."),
  variables: {
    description: `Comma-separated API or SILO names: ${describeVariables()}. Default ${VARIABLES[0].name}; with format=met, APSIM's (${APSIM_VARIABLES.map((v) => v.silo).join(",")}).`,
    type: "array",
    items: {
      type: "string",
      enum: VARIABLES.flatMap((v) => [v.name, v.silo]),
      "x-messages": { enum: `{value} is not a variable here; the variables published are ${describeVariables()} (either name)` },
    },
    default: [VARIABLES[0].name],
  },
  format: {
    description: `\`csv\` (default; tidy: one row per place or cell and date), \`json\` (a manifest and the values by place or cell), \`met\` (an APSIM weather file: one place, ${APSIM_TEXT.replace(/ \((.*) may be added\)$/, ", $1 optional")}), or \`netcdf\` (one CF-1.8 NetCDF file of a box or one place, streamed; at most ${MAX_NETCDF_VALUES} values).`,
    type: "string",
    enum: SERIES_FORMATS,
    default: "csv",
    "x-messages": { enum: "{value} is not a format here; the formats allowed are csv (default), json, met (an APSIM weather file), netcdf" },
  },
  dataset_version: {
    description: "Pins: one version id per variable, comma-separated, in the order of `variables`.",
    type: "array",
    items: { $ref: "common.schema.json#/$defs/version-id", "x-messages": { pattern: `{value} does not match ${VERSION_ID_PATTERN}; use a version id GET /api/v1/datasets lists` } },
  },
  bbox: {
    description:
      "A box instead of places: `west,south,east,north` in decimal degrees. Its cells are those whose centres lie inside, west and south edges inclusive, east and north exclusive (the direct query's rule); answered cell by cell, north to south, west to east.",
    type: "array",
    minItems: 4,
    maxItems: 4,
    items: {
      type: "number",
      minimum: -180,
      maximum: 180,
      "x-messages": {
        type: "{value} is not a decimal number of degrees; give four like 149.0,-35.4,149.2,-35.2",
        minimum: "{value} is outside -180..180; give west,south,east,north in decimal degrees, like 149.0,-35.4,149.2,-35.2",
        maximum: "{value} is outside -180..180; give west,south,east,north in decimal degrees, like 149.0,-35.4,149.2,-35.2",
      },
    },
    "x-messages": { minItems: `holds {count} values; give four: ${BBOX_TEXT}`, maxItems: `holds {count} values; give four: ${BBOX_TEXT}` },
  },
} as const;

/** The series route's parameters: any other is a 400 (a misspelt `variable=` would otherwise go unnoticed). */
export const SERIES_PARAMETERS = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $id: "series-parameters.schema.json",
  title: "Series parameters",
  description: "The query of GET /api/v1/series: places or a box, a period, variables, a format and pins (docs/contract.md §8.2).",
  type: "object",
  properties: PROPERTIES,
  additionalProperties: false,
  "x-messages": { additionalProperties: `is not a parameter of this route: remove it; the parameters allowed are ${Object.keys(PROPERTIES).join(", ")}` },
} as const;

const GRID_TEXT = `the SILO grid spans longitude ${colToEdgeLon(0)}..${colToEdgeLon(GRID.width)} and latitude ${rowToEdgeLat(GRID.height)}..${rowToEdgeLat(0)}`;

/** Whether a point outside the SILO grid would be inside it with latitude and longitude swapped. */
export function isSwapped(lat: number, lon: number): boolean {
  return lonLatToCell(lon, lat) === null && lonLatToCell(lat, lon) !== null;
}

/** "lat=133.87 and lon=-23.7 look swapped: ...", for a place given longitude first. */
function describeSwapped(lat: number, lon: number): string {
  return `${lat}, with lon ${lon}, looks like latitude and longitude swapped: the SILO grid is at latitudes -10..-44 and longitudes 112..154, so give lat=${lon}&lon=${lat}`;
}

/** lat and lon: the same count, each pair inside the SILO grid. */
function readPlaces(lats: number[], lons: number[], issues: Issue[]): Place[] {
  if (lats.length !== lons.length) {
    issues.push({ code: "length", path: ["lon"], message: `holds ${lons.length} values and lat ${lats.length}; give one longitude for each latitude` });
    return [];
  }
  const places: Place[] = [];
  lats.forEach((lat, i) => {
    const cell = lonLatToCell(lons[i], lat);
    if (cell) places.push({ lat, lon: lons[i], ...cell });
    else if (isSwapped(lat, lons[i])) issues.push({ code: "swapped", path: ["lat", i], message: describeSwapped(lat, lons[i]) });
    else issues.push({ code: "out_of_range", path: ["lat", i], message: `${lat}, with lon ${lons[i]}, is outside the SILO grid: ${GRID_TEXT}` });
  });
  return places;
}

/**
 * A box: west < east, south < north, latitudes in -90..90, and at least one SILO cell centre inside it by the direct
 * query's rule (format/grid.ts bboxToWindow, the one rule of a box's cells). Its cells become the places, row-major.
 */
function readBox(bbox: number[], issues: Issue[]): { box: SeriesBox; places: Place[] } | null {
  const [west, south, east, north] = bbox;
  const before = issues.length;
  if (isSwapped(south, west) && isSwapped(north, east)) {
    issues.push({ code: "swapped", path: ["bbox"], message: `${bbox.join(",")} looks like latitudes and longitudes swapped: the order is ${BBOX_TEXT.slice(5)}, so give bbox=${[south, west, north, east].join(",")}` });
    return null;
  }
  for (const i of [1, 3]) if (bbox[i] < -90 || bbox[i] > 90) issues.push({ code: "out_of_range", path: ["bbox", i], message: `${bbox[i]} is outside -90..90; the ${i === 1 ? "south" : "north"} edge is a latitude` });
  if (issues.length > before) return null;
  if (west >= east) issues.push({ code: "bbox_order", path: ["bbox", 2], message: `east ${east} is not east of west ${west}: give ${BBOX_TEXT}; a box cannot cross the antimeridian` });
  if (south >= north) issues.push({ code: "bbox_order", path: ["bbox", 3], message: `north ${north} is not north of south ${south}: give ${BBOX_TEXT}` });
  if (issues.length > before) return null;
  const window = bboxToWindow([west, south, east, north]);
  if (!window) {
    const inside = west < colToEdgeLon(GRID.width) && east > colToEdgeLon(0) && south < rowToEdgeLat(0) && north > rowToEdgeLat(GRID.height);
    issues.push({
      code: inside ? "no_cell_centers" : "out_of_range",
      path: ["bbox"],
      message: inside
        ? `${bbox.join(",")} holds no SILO cell centre (west and south edges inclusive, east and north exclusive); widen it to take in one: centres lie at 112 + 0.05k east and -10 - 0.05k north`
        : `${bbox.join(",")} is outside the SILO grid: ${GRID_TEXT}`,
    });
    return null;
  }
  const [c0, r0, w, h] = window;
  const places: Place[] = [];
  for (let row = r0; row < r0 + h; row++) for (let col = c0; col < c0 + w; col++) places.push({ lat: rowToLat(row), lon: colToLon(col), col, row });
  return { box: { bbox: [west, south, east, north], window }, places };
}

/** Each variable once (the schema has checked every name). */
function readVariables(names: string[], issues: Issue[]): Variable[] {
  const out: Variable[] = [];
  names.forEach((name, i) => {
    const variable = findVariable(name)!;
    if (out.includes(variable)) issues.push({ code: "repeated", path: ["variables", i], message: `names ${variable.name} twice; name each variable once` });
    else out.push(variable);
  });
  return out;
}

/** APSIM's file: exactly one place, and the columns it needs among the variables (format/variables.ts). */
function checkMet(config: SeriesConfig, issues: Issue[]): void {
  if (config.places.length > 1) issues.push({ code: "length", path: ["lat"], message: `holds ${config.places.length} places; an APSIM weather file (format=met) holds exactly one` });
  config.variables.forEach((v, i) => {
    if (v.apsim) return;
    const optional = APSIM_VARIABLES.filter((a) => !a.apsim!.required).map((a) => `${a.silo} (${a.apsim!.column})`);
    issues.push({ code: "enum", path: ["variables", i], message: `${v.name} (${v.silo}) has no column in an APSIM weather file (format=met), which holds ${APSIM_TEXT}; leave it out (format=csv answers it), or add ${joinNames(optional)}` });
  });
  const missing = APSIM_REQUIRED.filter((v) => !config.variables.includes(v));
  if (missing.length > 0) {
    const names = missing.map((v) => `${v.name} (${v.silo})`).join(", ");
    issues.push({
      code: "required",
      path: ["variables"],
      message: `lacks ${names}; an APSIM weather file (format=met) needs ${APSIM_TEXT}: variables=${APSIM_REQUIRED.map((v) => v.silo).join(",")}`,
    });
  }
}

/** The series call its checked parameters ask for, or a 400 naming every rule across parameters it breaks. */
export function readSeriesConfig(params: ParamsOf<typeof SERIES_PARAMETERS>, ctx?: Pick<Context, "query">): SeriesConfig {
  const issues: Issue[] = [];
  let places: Place[] = [];
  let box: SeriesBox | undefined;
  if (params.bbox) {
    if (params.lat || params.lon) issues.push({ code: "exclusive", path: [params.lat ? "lat" : "lon"], message: `and bbox are given together; ask for places (lat and lon) or for a box (bbox), not both` });
    else {
      const read = readBox(params.bbox, issues);
      if (read) [places, box] = [read.places, read.box];
    }
  } else if (!params.lat || !params.lon) {
    const name = !params.lat ? "lat" : "lon";
    const noun = name === "lat" ? "latitude" : "longitude";
    issues.push({ code: "required", path: [name], message: `is required: one or more ${noun}s in decimal degrees, separated by commas (or give a box: ${BBOX_TEXT})` });
  } else places = readPlaces(params.lat, params.lon, issues);
  const { start, end, format, dataset_version: pins } = params;
  // an APSIM file without variables= holds APSIM's columns: "the same call with &format=met" answers (docs/contract.md §8.2)
  const names = format === "met" && ctx && !ctx.query.has("variables") ? APSIM_VARIABLES.map((v) => v.name) : params.variables;
  const variables = readVariables(names, issues);
  if (pins && pins.length !== variables.length) {
    issues.push({ code: "length", path: ["dataset_version"], message: `holds ${pins.length} versions for ${variables.length} variables; pin one version per variable, in the order of variables` });
  }
  if (start && end && start > end) {
    issues.push({ code: "period_order", path: ["end"], message: `${end} precedes start ${start}: swap start and end (the period is start to end, both inclusive)` });
  }
  const config: SeriesConfig = { places, ...(box ? { box } : {}), variables, start, end, format, ...(pins ? { pins } : {}) };
  if (format === "met" && issues.length === 0) checkMet(config, issues);
  if (format === "netcdf" && issues.length === 0 && !box && places.length > 1) {
    issues.push({ code: "length", path: ["lat"], message: `holds ${places.length} places; a NetCDF answer (format=netcdf) holds one place or a box: ask each place alone, or give ${BBOX_TEXT}` });
  }
  if (issues.length > 0) throw rejectParameters(issues);
  return config;
}

/** A 400 of the schema itself (lat outside -90..90, say), with a place given longitude first named as swapped. */
function nameSwapped(err: unknown, query: URLSearchParams): unknown {
  if (!(err instanceof HttpError) || !err.issues) return err;
  const read = (name: string) => (query.get(name) ?? "").split(",").map(Number);
  const [lats, lons] = [read("lat"), read("lon")];
  const swapped = lats.findIndex((lat, i) => lats.length === lons.length && Number.isFinite(lat) && Number.isFinite(lons[i]) && isSwapped(lat, lons[i]));
  if (swapped < 0) return err;
  return rejectParameters([{ code: "swapped", path: ["lat", swapped], message: describeSwapped(lats[swapped], lons[swapped]) }, ...err.issues]);
}

/** The series route's check: its schema, then the rules across parameters; a swapped place named as such. */
export function seriesParameters() {
  const { parameters, check } = queryParameters(SERIES_PARAMETERS, readSeriesConfig);
  return {
    parameters,
    check: (ctx: Context): SeriesConfig => {
      try {
        return check(ctx);
      } catch (err) {
        throw nameSwapped(err, ctx.query);
      }
    },
  };
}

/** The canonical request a call's Service-Request-SHA256 and manifest hash: defaults applied, dates and pins as sent. */
export function canonicalSeriesRequest(config: SeriesConfig): Record<string, unknown> {
  return {
    ...(config.box ? { bbox: config.box.bbox } : { lat: config.places.map((p) => p.lat), lon: config.places.map((p) => p.lon) }),
    variables: config.variables.map((v) => v.name),
    format: config.format,
    ...(config.start ? { start: config.start } : {}),
    ...(config.end ? { end: config.end } : {}),
    ...(config.pins ? { dataset_version: config.pins } : {}),
  };
}

/**
 * The canonical JSON (keys sorted at every level, as fast-json-stable-stringify writes it) of canonicalSeriesRequest,
 * written directly: its members are numbers, strings and arrays of them, in a fixed set of keys.
 */
export function canonicalSeriesText(config: SeriesConfig): string {
  const request = canonicalSeriesRequest(config);
  return `{${Object.keys(request)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${JSON.stringify(request[key])}`)
    .join(",")}}`;
}

export function hashSeriesRequest(platform: Platform, config: SeriesConfig): Promise<string> {
  return platform.sha256Hex(utf8(canonicalSeriesText(config)));
}

/** What a series call's URL says, as numbers and names. */
export interface SeriesPathSpec {
  lats?: number[];
  lons?: number[];
  /** a box instead of places */
  bbox?: readonly number[];
  start?: string;
  end?: string;
  variables?: string[];
  format?: SeriesFormat;
  pins?: string[];
}

/** The path and query of a series call (commas unescaped: every value here is digits, names and ids). */
export function seriesPath(spec: SeriesPathSpec): string {
  const parts = spec.bbox ? [`bbox=${spec.bbox.join(",")}`] : [`lat=${spec.lats!.join(",")}`, `lon=${spec.lons!.join(",")}`];
  if (spec.start) parts.push(`start=${spec.start}`);
  if (spec.end) parts.push(`end=${spec.end}`);
  if (spec.variables) parts.push(`variables=${spec.variables.join(",")}`);
  if (spec.format) parts.push(`format=${spec.format}`);
  if (spec.pins) parts.push(`dataset_version=${spec.pins.join(",")}`);
  return `/api/v1/series?${parts.join("&")}`;
}
