// Source descriptor: SILO's daily gridded variables (format/variables.ts), as daily GeoTIFFs or annual NetCDF
// files, on one grid with one license (docs/contract.md §6.1, §8.1).

import { GRID, TILE_SIDE, windowTransform } from "../format/grid.js";
import { QUERY_DATA_CLASS, QUERY_SOURCE } from "../format/records.js";
import type { Variable } from "../format/variables.js";

/** Where SILO's bucket keeps its official files: `daily/<var>/YYYY/YYYYMMDD.<var>.tif`, `annual/<var>/YYYY.<var>.nc`. */
export const SILO_BUCKET = "https://s3-ap-southeast-2.amazonaws.com/silo-open-data/Official";

export const SILO = {
  source: QUERY_SOURCE,
  dataClass: QUERY_DATA_CLASS,
  temporalResolution: "daily",
  /** `YYYYMMDD.<var>.tif`, as the bucket names them */
  dailyFileName: /^(\d{4})(\d{2})(\d{2})\.([a-z][a-z0-9_]*)\.tif$/,
  /** `YYYY.<var>.nc`: one NetCDF-4 file per year, SILO's official gridded product */
  annualFileName: /^(\d{4})\.([a-z][a-z0-9_]*)\.nc$/,
  dailyBaseUrl: `${SILO_BUCKET}/daily`,
  annualBaseUrl: `${SILO_BUCKET}/annual`,
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

/** Where the bucket keeps one day's file of a variable, relative to the variable's folder and to a local sources folder. */
export function dateToMemberPath(date: string, variable: Pick<Variable, "silo">): string {
  return `${date.slice(0, 4)}/${date.replaceAll("-", "")}.${variable.silo}.tif`;
}

export function dateToUrl(date: string, variable: Pick<Variable, "silo">, baseUrl: string = SILO.dailyBaseUrl): string {
  return `${baseUrl}/${variable.silo}/${dateToMemberPath(date, variable)}`;
}

/** Where the bucket keeps one year's annual file of a variable, relative to its folder and to a local sources folder. */
export function yearToMemberPath(year: number | string, variable: Pick<Variable, "silo">): string {
  return `${year}.${variable.silo}.nc`;
}

export function yearToUrl(year: number | string, variable: Pick<Variable, "silo">, baseUrl: string = SILO.annualBaseUrl): string {
  return `${baseUrl}/${variable.silo}/${yearToMemberPath(year, variable)}`;
}

/** The member path of one day inside an annual file: the file, then the variable at that time index. */
export function annualDayMemberPath(fileMemberPath: string, variable: Pick<Variable, "silo">, timeIndex: number): string {
  return `${fileMemberPath}#${variable.silo}[${timeIndex}]`;
}
