// The query parameters of GET /api/v1/series (docs/contract.md §8.2): checked once, each problem a 400 that names the
// parameter and what it accepts; each place is the cell format/grid.ts lonLatToCell gives it.

import { isCalendarDate } from "../../format/dates.js";
import { GRID, colToEdgeLon, lonLatToCell, rowToEdgeLat } from "../../format/grid.js";
import { type Platform, utf8 } from "../../format/storage.js";
import { type Variable, VARIABLES, describeVariables, findVariable } from "../../format/variables.js";
import { HttpError, type Issue } from "../errors.js";

/** Places a call may ask for (docs/contract.md §8.2). */
export const MAX_SERIES_PLACES = 100;
/**
 * Values a call may answer: places x days x variables. SILO's whole archive (1889-01-01 on, about 50,400 days in
 * 2026) at one place with its five variables is about 252,000; this bound keeps that in one call until 2053.
 */
export const MAX_SERIES_VALUES = 300_000;

export const SERIES_FORMATS = ["csv", "json", "met"] as const;
export type SeriesFormat = (typeof SERIES_FORMATS)[number];

/** The parameters a call may carry; any other is a 400 (a misspelt `variable=` would otherwise go unnoticed). */
export const SERIES_PARAMS = ["lat", "lon", "start", "end", "variables", "format", "dataset_version"] as const;

/** A place asked for: the point as given, and the global cell that holds it. */
export interface Place {
  lat: number;
  lon: number;
  col: number;
  row: number;
}

/** A checked series request (the *Config of a GET /api/v1/series query). */
export interface SeriesConfig {
  places: Place[];
  variables: Variable[];
  /** inclusive bounds as asked; absent: the whole period every asked variable holds */
  start?: string;
  end?: string;
  format: SeriesFormat;
  /** pinned versions, one per variable in the order of `variables` */
  pins?: string[];
}

const VERSION_ID = /^[a-zA-Z0-9_-]{1,128}$/;
/** A decimal number as people write one: no hex, no exponent, no Infinity, no blanks. */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)$/;
const APSIM_REQUIRED = ["surface_downwelling_shortwave_flux_in_air", "air_temperature_max", "air_temperature_min", "precipitation_amount"];

const GRID_TEXT = `the SILO grid spans longitude ${colToEdgeLon(0)}..${colToEdgeLon(GRID.width)} and latitude ${rowToEdgeLat(GRID.height)}..${rowToEdgeLat(0)}`;

function reject(issues: Issue[]): HttpError {
  const first = issues[0];
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more issue${issues.length > 2 ? "s" : ""})` : "";
  return new HttpError({ kind: "invalid_parameters", message: `Query parameter ${first.path.join("[")}${first.path.length > 1 ? "]" : ""} ${first.message}${more}.`, issues });
}

/** One value of a parameter (a repeated one is ambiguous), split at commas; undefined when absent. */
function readList(query: URLSearchParams, name: string, issues: Issue[]): string[] | undefined {
  const values = query.getAll(name);
  if (values.length > 1) {
    issues.push({ code: "repeated", path: [name], message: `is given ${values.length} times; give it once, its values separated by commas` });
    return undefined;
  }
  return values.length === 0 ? undefined : values[0].split(",").map((v) => v.trim());
}

function readCoordinates(query: URLSearchParams, name: "lat" | "lon", issues: Issue[]): number[] | null {
  const items = readList(query, name, issues);
  if (items === undefined) {
    if (!issues.some((i) => i.path[0] === name)) issues.push({ code: "required", path: [name], message: `is required: one or more ${name === "lat" ? "latitudes" : "longitudes"} in decimal degrees, separated by commas` });
    return null;
  }
  if (items.length > MAX_SERIES_PLACES) {
    issues.push({ code: "length", path: [name], message: `holds ${items.length} values; at most ${MAX_SERIES_PLACES} places are answered a call` });
    return null;
  }
  const [lo, hi] = name === "lat" ? [-90, 90] : [-180, 180];
  const out: number[] = [];
  items.forEach((text, i) => {
    const n = Number(text);
    if (!DECIMAL.test(text) || !Number.isFinite(n)) issues.push({ code: "type", path: [name, i], message: `${JSON.stringify(text)} is not a decimal number of degrees; give one like ${name === "lat" ? "-27.5" : "153.0"}` });
    else if (n < lo || n > hi) issues.push({ code: "out_of_range", path: [name, i], message: `${text} is outside ${lo}..${hi}; give a ${name === "lat" ? "latitude" : "longitude"} from ${lo} to ${hi}` });
    else out.push(n);
  });
  return out.length === items.length ? out : null;
}

/** lat and lon: the same count, each pair inside the SILO grid. */
function readPlaces(query: URLSearchParams, issues: Issue[]): Place[] {
  const lats = readCoordinates(query, "lat", issues);
  const lons = readCoordinates(query, "lon", issues);
  if (!lats || !lons) return [];
  if (lats.length !== lons.length) {
    issues.push({ code: "length", path: ["lon"], message: `holds ${lons.length} values and lat ${lats.length}; give one longitude for each latitude` });
    return [];
  }
  const places: Place[] = [];
  lats.forEach((lat, i) => {
    const cell = lonLatToCell(lons[i], lat);
    if (cell) places.push({ lat, lon: lons[i], ...cell });
    else issues.push({ code: "out_of_range", path: ["lat", i], message: `${lat}, with lon ${lons[i]}, is outside the SILO grid: ${GRID_TEXT}` });
  });
  return places;
}

function readVariables(query: URLSearchParams, issues: Issue[]): Variable[] {
  const names = readList(query, "variables", issues) ?? [VARIABLES[0].name];
  const out: Variable[] = [];
  names.forEach((name, i) => {
    const variable = findVariable(name);
    if (!variable) issues.push({ code: "enum", path: ["variables", i], message: `${JSON.stringify(name)} is not a variable here; the variables published are ${describeVariables()} (either name)` });
    else if (out.includes(variable)) issues.push({ code: "repeated", path: ["variables", i], message: `names ${variable.name} twice; name each variable once` });
    else out.push(variable);
  });
  return out;
}

function readDate(query: URLSearchParams, name: "start" | "end", issues: Issue[]): string | undefined {
  const items = readList(query, name, issues);
  if (items === undefined) return undefined;
  const text = items.join(",");
  if (!isCalendarDate(text)) issues.push({ code: "invalid_date", path: [name], message: `${JSON.stringify(text)} is not a calendar date; give it as YYYY-MM-DD (leap years respected), or omit ${name} for the whole period` });
  return text;
}

function readFormat(query: URLSearchParams, issues: Issue[]): SeriesFormat {
  const items = readList(query, "format", issues);
  const text = items?.join(",") ?? "csv";
  if ((SERIES_FORMATS as readonly string[]).includes(text)) return text as SeriesFormat;
  issues.push({ code: "enum", path: ["format"], message: `${JSON.stringify(text)} is not a format here; the formats allowed are csv (default), json, met (an APSIM weather file)` });
  return "csv";
}

function readPins(query: URLSearchParams, variables: Variable[], issues: Issue[]): string[] | undefined {
  const pins = readList(query, "dataset_version", issues);
  if (!pins) return undefined;
  pins.forEach((id, i) => {
    if (!VERSION_ID.test(id)) issues.push({ code: "pattern", path: ["dataset_version", i], message: `${JSON.stringify(id)} does not match ^[a-zA-Z0-9_-]{1,128}$; use a version id GET /api/v1/datasets lists` });
  });
  if (variables.length > 0 && pins.length !== variables.length) {
    issues.push({ code: "length", path: ["dataset_version"], message: `holds ${pins.length} versions for ${variables.length} variables; pin one version per variable, in the order of variables` });
  }
  return pins;
}

/** APSIM's file: exactly one place, and radn maxt mint rain among the variables (vp may join them). */
function checkMet(config: SeriesConfig, issues: Issue[]): void {
  if (config.places.length > 1) issues.push({ code: "length", path: ["lat"], message: `holds ${config.places.length} places; an APSIM weather file (format=met) holds exactly one` });
  const missing = APSIM_REQUIRED.filter((name) => !config.variables.some((v) => v.name === name));
  if (missing.length > 0) {
    const names = missing.map((name) => `${name} (${findVariable(name)!.silo})`).join(", ");
    issues.push({
      code: "required",
      path: ["variables"],
      message: `lacks ${names}; an APSIM weather file (format=met) needs radiation, max_temp, min_temp and daily_rain (vp may be added): variables=radiation,max_temp,min_temp,daily_rain`,
    });
  }
}

/** The checked parameters of a series call, or a 400 naming every parameter at fault. */
export function readSeriesConfig(query: URLSearchParams): SeriesConfig {
  const issues: Issue[] = [];
  for (const name of new Set(query.keys())) {
    if (!(SERIES_PARAMS as readonly string[]).includes(name)) {
      issues.push({ code: "additional_property", path: [name], message: `is not a parameter of this route: remove it; the parameters allowed are ${SERIES_PARAMS.join(", ")}` });
    }
  }
  const places = readPlaces(query, issues);
  const variables = readVariables(query, issues);
  const start = readDate(query, "start", issues);
  const end = readDate(query, "end", issues);
  const format = readFormat(query, issues);
  const pins = readPins(query, variables, issues);
  if (start && end && isCalendarDate(start) && isCalendarDate(end) && start > end) {
    issues.push({ code: "period_order", path: ["end"], message: `${end} precedes start ${start}: swap start and end (the period is start to end, both inclusive)` });
  }
  const config: SeriesConfig = { places, variables, start, end, format, ...(pins ? { pins } : {}) };
  if (format === "met" && issues.length === 0) checkMet(config, issues);
  if (issues.length > 0) throw reject(issues);
  return config;
}

/** The canonical request a call's Service-Request-SHA256 and manifest hash: defaults applied, dates and pins as sent. */
export function canonicalSeriesRequest(config: SeriesConfig): Record<string, unknown> {
  return {
    lat: config.places.map((p) => p.lat),
    lon: config.places.map((p) => p.lon),
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
  lats: number[];
  lons: number[];
  start?: string;
  end?: string;
  variables?: string[];
  format?: SeriesFormat;
  pins?: string[];
}

/** The path and query of a series call (commas unescaped: every value here is digits, names and ids). */
export function seriesPath(spec: SeriesPathSpec): string {
  const parts = [`lat=${spec.lats.join(",")}`, `lon=${spec.lons.join(",")}`];
  if (spec.start) parts.push(`start=${spec.start}`);
  if (spec.end) parts.push(`end=${spec.end}`);
  if (spec.variables) parts.push(`variables=${spec.variables.join(",")}`);
  if (spec.format) parts.push(`format=${spec.format}`);
  if (spec.pins) parts.push(`dataset_version=${spec.pins.join(",")}`);
  return `/api/v1/series?${parts.join("&")}`;
}
