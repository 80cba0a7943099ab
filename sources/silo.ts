// Source descriptor: SILO daily gridded maximum temperature, as daily GeoTIFFs or annual NetCDF files
// (docs/contract.md §6.1).

import { GRID, TILE_SIDE, windowTransform } from "../format/grid.js";
import { QUERY_DATA_CLASS, QUERY_SOURCE, QUERY_UNIT, QUERY_VARIABLE } from "../format/records.js";

/** Plausible daily maximum temperature, degC (docs/contract.md §6.1): outside it a publish stops. */
export const PLAUSIBLE_TMAX_DEGC = [-20, 60] as const;

export const SILO_TMAX = {
  source: QUERY_SOURCE,
  datasetKey: "silo-tmax",
  siloVariable: "max_temp",
  variable: QUERY_VARIABLE,
  unit: QUERY_UNIT,
  dataClass: QUERY_DATA_CLASS,
  temporalResolution: "daily",
  plausible: PLAUSIBLE_TMAX_DEGC,
  /** `YYYYMMDD.max_temp.tif`, as the bucket names them */
  fileName: /^(\d{4})(\d{2})(\d{2})\.max_temp\.tif$/,
  baseUrl: "https://s3-ap-southeast-2.amazonaws.com/silo-open-data/Official/daily/max_temp",
  /** `YYYY.max_temp.nc`: one NetCDF-4 file per year, SILO's official gridded product */
  annualFileName: /^(\d{4})\.max_temp\.nc$/,
  annualBaseUrl: "https://s3-ap-southeast-2.amazonaws.com/silo-open-data/Official/annual/max_temp",
  landingPage: "https://www.longpaddock.qld.gov.au/silo/gridded-data/",
  license: "CC-BY-4.0",
  attribution: "Queensland Government SILO; interpolated Bureau of Meteorology and other observations.",
  spatialSupport: {
    type: "regular_grid",
    crs: GRID.crs,
    cell_size_deg: 0.05,
    grid_width: GRID.width,
    grid_height: GRID.height,
    grid_transform: windowTransform(0, 0),
    tile_side: TILE_SIDE,
    value_location: "cell_center",
  },
} as const;

/** Where the bucket keeps one day's file, relative to baseUrl and to a local sources folder. */
export function dateToMemberPath(date: string): string {
  return `${date.slice(0, 4)}/${date.replaceAll("-", "")}.${SILO_TMAX.siloVariable}.tif`;
}

export function dateToUrl(date: string, baseUrl: string = SILO_TMAX.baseUrl): string {
  return `${baseUrl}/${dateToMemberPath(date)}`;
}

/** Where the bucket keeps one year's annual file, relative to annualBaseUrl and to a local sources folder. */
export function yearToMemberPath(year: number | string): string {
  return `${year}.${SILO_TMAX.siloVariable}.nc`;
}

export function yearToUrl(year: number | string, baseUrl: string = SILO_TMAX.annualBaseUrl): string {
  return `${baseUrl}/${yearToMemberPath(year)}`;
}

/** The member path of one day inside an annual file: the file, then the variable at that time index. */
export function annualDayMemberPath(fileMemberPath: string, timeIndex: number): string {
  return `${fileMemberPath}#${SILO_TMAX.siloVariable}[${timeIndex}]`;
}
