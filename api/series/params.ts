// The query parameters of GET /api/v1/series (docs/contract.md §8.2): one JSON Schema (api/parameters.ts) from which
// come the check, the 400s naming each parameter and what it accepts, and the OpenAPI parameters; then the rules
// across parameters a schema cannot state. Each place is the cell format/grid.ts lonLatToCell gives it.

import { GRID, colToEdgeLon, lonLatToCell, rowToEdgeLat } from "../../format/grid.js";
import { type Platform, utf8 } from "../../format/storage.js";
import { APSIM_REQUIRED, APSIM_VARIABLES, type Variable, VARIABLES, describeVariables, findVariable } from "../../format/variables.js";
import { VERSION_ID_PATTERN } from "../../schemas/validate.js";
import type { Issue } from "../errors.js";
import { type ParamsOf, rejectParameters } from "../parameters.js";

/** Places a call may ask for (docs/contract.md §8.2). */
export const MAX_SERIES_PLACES = 100;
/**
 * Values a call may answer: places x days x variables. SILO's whole archive (1889-01-01 on, about 50,400 days in
 * 2026) at one place with the five variables of an APSIM file is about 252,000; this bound keeps that in one call until 2053.
 */
export const MAX_SERIES_VALUES = 300_000;

export const SERIES_FORMATS = ["csv", "json", "met"] as const;
export type SeriesFormat = (typeof SERIES_FORMATS)[number];

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

const PROPERTIES = {
  lat: coordinates(
    "lat",
    `Latitudes in decimal degrees, comma-separated, at most ${MAX_SERIES_PLACES}; the i-th pairs with the i-th longitude. A place is the SILO cell whose area holds it; on an edge, the cell to the east or north.`,
  ),
  lon: coordinates("lon", "Longitudes in decimal degrees, comma-separated, as many as latitudes."),
  start: date("start", "First date (inclusive); default: the first date every asked variable holds."),
  end: date("end", "Last date (inclusive); default: the last date every asked variable holds."),
  variables: {
    description: `Comma-separated API or SILO names: ${describeVariables()}. Default ${VARIABLES[0].name}.`,
    type: "array",
    items: {
      type: "string",
      enum: VARIABLES.flatMap((v) => [v.name, v.silo]),
      "x-messages": { enum: `{value} is not a variable here; the variables published are ${describeVariables()} (either name)` },
    },
    default: [VARIABLES[0].name],
  },
  format: {
    description: `\`csv\` (default; tidy: one row per place and date), \`json\` (a manifest and the values by place), or \`met\` (an APSIM weather file: one place, ${APSIM_TEXT.replace(/ \((.*) may be added\)$/, ", $1 optional")}).`,
    type: "string",
    enum: SERIES_FORMATS,
    default: "csv",
    "x-messages": { enum: "{value} is not a format here; the formats allowed are csv (default), json, met (an APSIM weather file)" },
  },
  dataset_version: {
    description: "Pins: one version id per variable, comma-separated, in the order of `variables`.",
    type: "array",
    items: { $ref: "common.schema.json#/$defs/version-id", "x-messages": { pattern: `{value} does not match ${VERSION_ID_PATTERN}; use a version id GET /api/v1/datasets lists` } },
  },
} as const;

/** The series route's parameters: any other is a 400 (a misspelt `variable=` would otherwise go unnoticed). */
export const SERIES_PARAMETERS = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  $id: "series-parameters.schema.json",
  title: "Series parameters",
  description: "The query of GET /api/v1/series: places, a period, variables, a format and pins (docs/contract.md §8.2).",
  type: "object",
  properties: PROPERTIES,
  required: ["lat", "lon"],
  additionalProperties: false,
  "x-messages": { additionalProperties: `is not a parameter of this route: remove it; the parameters allowed are ${Object.keys(PROPERTIES).join(", ")}` },
} as const;

const GRID_TEXT = `the SILO grid spans longitude ${colToEdgeLon(0)}..${colToEdgeLon(GRID.width)} and latitude ${rowToEdgeLat(GRID.height)}..${rowToEdgeLat(0)}`;

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
    else issues.push({ code: "out_of_range", path: ["lat", i], message: `${lat}, with lon ${lons[i]}, is outside the SILO grid: ${GRID_TEXT}` });
  });
  return places;
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
export function readSeriesConfig(params: ParamsOf<typeof SERIES_PARAMETERS>): SeriesConfig {
  const issues: Issue[] = [];
  const places = readPlaces(params.lat, params.lon, issues);
  const variables = readVariables(params.variables, issues);
  const { start, end, format, dataset_version: pins } = params;
  if (pins && pins.length !== variables.length) {
    issues.push({ code: "length", path: ["dataset_version"], message: `holds ${pins.length} versions for ${variables.length} variables; pin one version per variable, in the order of variables` });
  }
  if (start && end && start > end) {
    issues.push({ code: "period_order", path: ["end"], message: `${end} precedes start ${start}: swap start and end (the period is start to end, both inclusive)` });
  }
  const config: SeriesConfig = { places, variables, start, end, format, ...(pins ? { pins } : {}) };
  if (format === "met" && issues.length === 0) checkMet(config, issues);
  if (issues.length > 0) throw rejectParameters(issues);
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
