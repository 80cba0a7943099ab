// format=netcdf: a box or one place as one CF-1.8 NetCDF file, streamed a slab of days at a time
// (api/series/netcdf-file.ts describes it, api/series/netcdf.ts writes it; docs/netcdf.md).

import { MAX_FILE_VALUES } from "../../contract.js";
import type { Issue } from "../../errors.js";
import { BBOX_TEXT, type SeriesConfig } from "../call.js";
import { NETCDF_TYPE, streamSeriesNetcdf } from "../netcdf-file.js";
import type { SeriesFormatSpec } from "./format.js";

/**
 * A NetCDF answer holds at most MAX_FILE_VALUES (api/contract.ts): cells x days x variables. Its bytes are streamed a
 * slab of days at a time, so the server's memory does not grow with it; a 20 x 20 cell box (1 x 1 degree) over 68
 * years of one variable, or SILO's whole grid on 17 days. The text formats keep MAX_SERIES_VALUES: they are built whole.
 */
export const MAX_NETCDF_VALUES = MAX_FILE_VALUES;

/** One place or a box: a file's grid is one window. */
function checkNetcdf(config: SeriesConfig, issues: Issue[]): void {
  if (config.box || config.places.length <= 1) return;
  issues.push({ code: "length", path: ["lat"], message: `holds ${config.places.length} places; a NetCDF answer (format=netcdf) holds one place or a box: ask each place alone, or give ${BBOX_TEXT}` });
}

export const NETCDF_FORMAT = {
  name: "netcdf",
  type: NETCDF_TYPE,
  summary: `one CF-1.8 NetCDF file of a box or one place, streamed; at most ${MAX_NETCDF_VALUES} values`,
  bound: { option: "seriesNetcdfMaxValues", values: MAX_NETCDF_VALUES, holder: "a NetCDF answer" },
  check: checkNetcdf,
  plan: { splitsBoxByDates: true, joined: "NetCDF: each part is a file; join them with cdo mergetime, or xarray.open_mfdataset" },
  openapi: {
    type: "string",
    format: "binary",
    description:
      "format=netcdf: one CF-1.8 NetCDF file (classic, or 64-bit offset over 2 GiB), streamed with its Content-Length: coordinates `time` (days since 1970-01-01), `lat` (north to south), `lon`, one float32 variable per asked variable (dims time, lat, lon; `_FillValue` NaN; units, standard names), global attributes naming each version, its content sha256, license and attribution (docs/netcdf.md).",
  },
  write: async ({ config, selection, request }) => streamSeriesNetcdf(config, selection, request),
} as const satisfies SeriesFormatSpec;
