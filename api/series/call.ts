// The series call (docs/contract.md §8.2): the family's words (a place, a box, the checked call), its URL, and its
// canonical form, whose sha256 every answer carries. Callers outside api/ reach these through ./face.ts.

import { type Window, colToLon, rowToLat } from "../../format/grid.js";
import { type Platform, utf8 } from "../../format/storage.js";
import type { Variable } from "../../format/variables.js";

/** How a box is given, for messages. */
export const BBOX_TEXT = "bbox=west,south,east,north (decimal degrees, west < east, south < north)";

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

interface SeriesConfigParts {
  variables: Variable[];
  /** inclusive bounds as asked; absent: the whole period every asked variable holds */
  start?: string;
  end?: string;
  /** the format's name: a row of the table the route was built with (api/series/formats/table.ts) */
  format: string;
  /** pinned versions, one per variable in the order of `variables` */
  pins?: string[];
}

/**
 * A checked series call: places, or a box kept as its window (a box of the whole grid is 572,721 cells; the
 * writers that need a row per cell make them, listPlaces).
 */
export type SeriesConfig = SeriesConfigParts & ({ places: Place[]; box?: undefined } | { box: SeriesBox; places?: undefined });

/** How many places (or a box's cells) a call asks for. */
export function countPlaces(config: SeriesConfig): number {
  return config.box ? config.box.window[2] * config.box.window[3] : config.places.length;
}

/** The places asked, or a box's cells row-major (north to south, west to east), each at its centre. */
export function listPlaces(config: SeriesConfig): Place[] {
  if (!config.box) return config.places;
  const [c0, r0, w, h] = config.box.window;
  const places: Place[] = [];
  for (let row = r0; row < r0 + h; row++) for (let col = c0; col < c0 + w; col++) places.push({ lat: rowToLat(row), lon: colToLon(col), col, row });
  return places;
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

/** A call's canonical request as text, and its sha256: computed once a call. */
export interface SeriesRequest {
  text: string;
  sha256: string;
}

/**
 * The canonical JSON (keys sorted at every level, as fast-json-stable-stringify writes it) of canonicalSeriesRequest,
 * written directly: its members are numbers, strings and arrays of them, in a fixed set of keys; and its sha256.
 */
export async function hashSeriesRequest(platform: Platform, config: SeriesConfig): Promise<SeriesRequest> {
  const request = canonicalSeriesRequest(config);
  const text = `{${Object.keys(request)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${JSON.stringify(request[key])}`)
    .join(",")}}`;
  return { text, sha256: await platform.sha256Hex(utf8(text)) };
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
  /** a format's name (face.ts SeriesFormat, or a format a service was built with) */
  format?: string;
  pins?: string[];
}

/** The path and query of a series call (commas unescaped: every value here is digits, names and ids). */
export function seriesPath(spec: SeriesPathSpec): string {
  const parts = spec.bbox ? [`bbox=${spec.bbox.join(",")}`] : [];
  if (spec.lats) parts.push(`lat=${spec.lats.join(",")}`);
  if (spec.lons) parts.push(`lon=${spec.lons.join(",")}`);
  if (spec.start) parts.push(`start=${spec.start}`);
  if (spec.end) parts.push(`end=${spec.end}`);
  if (spec.variables) parts.push(`variables=${spec.variables.join(",")}`);
  if (spec.format) parts.push(`format=${spec.format}`);
  if (spec.pins) parts.push(`dataset_version=${spec.pins.join(",")}`);
  return `/api/v1/series?${parts.join("&")}`;
}
