// Constants of the interface contract (interface.md 2, 8; decisions.md 3, 4) that both sides need.

import { type Window, windowBbox } from "./grid.js";
import type { Dataset } from "./layout.js";

export const API_VERSION = "1.0.0";
export const QUERY_VERSION = "native-cell-centers-v1";
export const SPATIAL_SELECTION = "cell_center_in_bbox_west_south_inclusive_east_north_exclusive";
export const QUERY_VARIABLE = "air_temperature_max";
export const QUERY_UNIT = "degC";
export const QUERY_SOURCE = "silo";
export const QUERY_DATA_CLASS = "interpolated_observation";

export const LIMITS = {
  maxDays: 31,
  maxCells: 10000,
  maxRequestBytes: 16384,
  maxResponseBytes: 1000000,
  defaultPageLimit: 100,
  maxPageLimit: 1000,
  maxCursorLength: 256,
  maxTileSide: 256,
  maxTileCells: 65536,
} as const;

/** Plausible daily maximum temperature, degC (decisions.md 1): outside it a publish stops. */
export const PLAUSIBLE_TMAX_DEGC = [-20, 60] as const;

/**
 * What may answer a direct query, from the catalog record alone (decisions.md 3): published demo data of the
 * SILO source, interpolated observations, daily, air_temperature_max in degC.
 */
export function isQueryCompatible(record: Dataset): boolean {
  return (
    record.status === "published" &&
    record.access_level === "demo" &&
    record.metadata?.source === QUERY_SOURCE &&
    record.data_class === QUERY_DATA_CLASS &&
    record.temporal_resolution === "daily" &&
    record.variables?.[QUERY_VARIABLE] === QUERY_UNIT
  );
}

/**
 * A data request of the contract (interface.md 2.5) for global cells `window` (its box on cell edges, so exactly
 * those centres are selected) over an inclusive period, every fixed field filled in; `extra` adds `format`,
 * `dataset_version` (or anything a test wants to send).
 */
export function makeDataRequest(window: Window, start: string, end: string, extra: Record<string, unknown> = {}) {
  return {
    variables: [QUERY_VARIABLE],
    region: { bbox: windowBbox(window) as number[], crs: "EPSG:4326" },
    period: { start, end },
    temporal_resolution: "daily",
    spatial_resolution: "native",
    units: { [QUERY_VARIABLE]: QUERY_UNIT },
    data_class: QUERY_DATA_CLASS,
    missing_policy: "preserve",
    source_preference: QUERY_SOURCE,
    ...extra,
  };
}
