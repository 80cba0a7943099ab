// The query parameters of GET /api/v1/series (docs/contract.md §8.2): one JSON Schema (api/parameters.ts), built over
// the table of formats, from which come the check, the 400s naming each parameter and what it accepts, and the
// OpenAPI parameters; then the rules across parameters a schema cannot state, and each format's own. Each place is
// the cell format/grid.ts lonLatToCell gives it; a box stays its window.

import { GRID, bboxToWindow, colToEdgeLon, lonLatToCell, rowToEdgeLat } from "../../format/grid.js";
import { type Variable, VARIABLES, describeVariables, findVariable } from "../../format/variables.js";
import { VERSION_ID_PATTERN } from "../../schemas/validate.js";
import type { Issue } from "../errors.js";
import type { Context } from "../context.js";
import { HttpError } from "../errors.js";
import { type ParamsOf, queryParameters, rejectParameters } from "../parameters.js";
import { BBOX_TEXT, type Place, type SeriesBox, type SeriesConfig } from "./call.js";
import type { SeriesFormatSpec } from "./formats/format.js";
import { SERIES_FORMATS } from "./formats/table.js";

/** Places a call may ask for (docs/contract.md §8.2). */
export const MAX_SERIES_PLACES = 100;

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


/** The `format` parameter: one of the formats' names; the first is the default. */
function describeFormats(formats: readonly SeriesFormatSpec[]) {
  const said = formats.map((f, i) => `\`${f.name}\` (${i === 0 ? "default; " : ""}${f.summary})`);
  const listed = formats.map((f, i) => (i === 0 ? `${f.name} (default)` : f.label ? `${f.name} (${f.label})` : f.name));
  return {
    description: `${said.slice(0, -1).join(", ")}, or ${said[said.length - 1]}.`,
    type: "string",
    enum: formats.map((f) => f.name),
    default: formats[0].name,
    "x-messages": { enum: `{value} is not a format here; the formats allowed are ${listed.join(", ")}` },
  } as const;
}

/** "; with format=met, APSIM's (radiation,...)": a format's own default variables, in the variables' description. */
function describeDefaultVariables({ name, defaultVariables: own }: SeriesFormatSpec): string {
  return own ? `; with format=${name}, ${own.whose} (${own.variables.map((v) => v.silo).join(",")})` : "";
}

/** The parameters' schemas, the format's over the table of formats the route is built with. */
const describeProperties = (formats: readonly SeriesFormatSpec[]) => ({
  lat: coordinates(
    "lat",
    `Latitudes in decimal degrees, comma-separated, at most ${MAX_SERIES_PLACES}; the i-th pairs with the i-th longitude. A place is the SILO cell whose area holds it; on an edge, the cell to the east or north.`,
  ),
  lon: coordinates("lon", "Longitudes in decimal degrees, comma-separated, as many as latitudes."),
  start: date("start", "First date (inclusive); default: the first date every asked variable holds."),
  end: date("end", "Last date (inclusive); default: the last date every asked variable holds."),
  variables: {
    description: `Comma-separated API or SILO names: ${describeVariables()}. Default ${VARIABLES[0].name}${formats.map(describeDefaultVariables).join("")}.`,
    type: "array",
    items: {
      type: "string",
      enum: VARIABLES.flatMap((v) => [v.name, v.silo]),
      "x-messages": { enum: `{value} is not a variable here; the variables published are ${describeVariables()} (either name)` },
    },
    default: [VARIABLES[0].name],
  },
  format: describeFormats(formats),
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
}) as const;

/**
 * The series route's parameters over a table of formats: any other is a 400 (a misspelt `variable=` would otherwise
 * go unnoticed). The interface's table has its own schema id; another table (a test's) is named by its formats.
 */
export function seriesParametersSchema(formats: readonly SeriesFormatSpec[]) {
  const properties = describeProperties(formats);
  const own = formats === SERIES_FORMATS;
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: own ? "series-parameters.schema.json" : `series-parameters.${formats.map((f) => f.name).join(".")}.schema.json`,
    title: "Series parameters",
    description: "The query of GET /api/v1/series: places or a box, a period, variables, a format and pins (docs/contract.md §8.2).",
    type: "object",
    properties,
    additionalProperties: false,
    "x-messages": { additionalProperties: `is not a parameter of this route: remove it; the parameters allowed are ${Object.keys(properties).join(", ")}` },
  } as const;
}

/** The interface's series parameters. */
export const SERIES_PARAMETERS = seriesParametersSchema(SERIES_FORMATS);

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
 * query's rule (format/grid.ts bboxToWindow, the one rule of a box's cells).
 */
function readBox(bbox: number[], issues: Issue[]): SeriesBox | null {
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
  return { bbox: [west, south, east, north], window };
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

/** A schema's checked parameters. */
type SeriesParams = ParamsOf<typeof SERIES_PARAMETERS>;

/** Places (lat and lon) or a box (bbox), not both, not neither. */
function readWhere(params: SeriesParams, issues: Issue[]): { places: Place[] } | { box: SeriesBox } {
  if (params.bbox) {
    if (params.lat || params.lon) issues.push({ code: "exclusive", path: [params.lat ? "lat" : "lon"], message: `and bbox are given together; ask for places (lat and lon) or for a box (bbox), not both` });
    else {
      const box = readBox(params.bbox, issues);
      if (box) return { box };
    }
  } else if (!params.lat || !params.lon) {
    const name = !params.lat ? "lat" : "lon";
    const noun = name === "lat" ? "latitude" : "longitude";
    issues.push({ code: "required", path: [name], message: `is required: one or more ${noun}s in decimal degrees, separated by commas (or give a box: ${BBOX_TEXT})` });
  } else return { places: readPlaces(params.lat, params.lon, issues) };
  return { places: [] };
}

/** The series call its checked parameters ask for, or a 400 naming every rule across parameters it breaks. */
export function readSeriesConfig(params: SeriesParams, formats: readonly SeriesFormatSpec[], ctx?: Pick<Context, "query">): SeriesConfig {
  const issues: Issue[] = [];
  const where = readWhere(params, issues);
  const { start, end, dataset_version: pins } = params;
  const format = formats.find((f) => f.name === params.format)!;
  // a format's own default variables when variables= is left out (an APSIM file's columns)
  const names = format.defaultVariables && ctx && !ctx.query.has("variables") ? format.defaultVariables.variables.map((v) => v.name) : params.variables;
  const variables = readVariables(names, issues);
  if (pins && pins.length !== variables.length) {
    issues.push({ code: "length", path: ["dataset_version"], message: `holds ${pins.length} versions for ${variables.length} variables; pin one version per variable, in the order of variables` });
  }
  if (start && end && start > end) {
    issues.push({ code: "period_order", path: ["end"], message: `${end} precedes start ${start}: swap start and end (the period is start to end, both inclusive)` });
  }
  const config: SeriesConfig = { ...where, variables, start, end, format: format.name, ...(pins ? { pins } : {}) };
  if (issues.length === 0) format.check?.(config, issues);
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

/** The series route's check over a table of formats: its schema, then the rules across parameters; a swapped place named as such. */
export function seriesParameters(formats: readonly SeriesFormatSpec[]) {
  const schema = formats === SERIES_FORMATS ? SERIES_PARAMETERS : seriesParametersSchema(formats);
  const { parameters, check } = queryParameters(schema, (params, ctx) => readSeriesConfig(params as SeriesParams, formats, ctx));
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
