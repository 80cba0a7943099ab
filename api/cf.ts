// The CF-1.8 attributes of a version seen as a cube (time, lat, lon) over the SILO grid: its variable's, its
// coordinates' and its grid mapping's, stated once for every view that describes one (the Zarr view, OPeNDAP).

import { WGS84_WKT } from "../format/grid.js";
import type { Variable } from "../format/variables.js";

/** An attribute's value: text, or a number (a double wherever the view has no narrower type for it). */
export type CfValue = string | number;
export type CfAttributes = Record<string, CfValue>;

/** The variable's attributes, after its dimensions and before a view's own; the fill value is each view's (its type). */
export function variableCfAttributes(variable: Variable): CfAttributes {
  return {
    // a variable CF has no standard name for (a reference crop's evapotranspiration) carries a long_name only
    ...(variable.standardName ? { standard_name: variable.standardName } : {}),
    long_name: variable.label,
    units: variable.unit,
    ...(variable.cellMethods ? { cell_methods: variable.cellMethods } : {}),
    comment: `SILO's value of a date covers ${variable.observed}; missing cells (ocean, gaps) are NaN.`,
    grid_mapping: "crs",
  };
}

/** The coordinates' attributes: `time` in whole days since 1970-01-01, `lat` and `lon` the cell centres. */
export const COORDINATE_CF_ATTRIBUTES: Record<"time" | "lat" | "lon" | "crs", CfAttributes> = {
  time: { standard_name: "time", long_name: "time", units: "days since 1970-01-01", calendar: "proleptic_gregorian", axis: "T" },
  lat: { standard_name: "latitude", long_name: "latitude of the cell centre", units: "degrees_north", axis: "Y" },
  lon: { standard_name: "longitude", long_name: "longitude of the cell centre", units: "degrees_east", axis: "X" },
  // CF's grid mapping of EPSG:4326, with the WKT as `crs_wkt` and as GDAL's own `spatial_ref`
  crs: {
    grid_mapping_name: "latitude_longitude",
    semi_major_axis: 6378137,
    inverse_flattening: 298.257223563,
    longitude_of_prime_meridian: 0,
    crs_wkt: WGS84_WKT,
    spatial_ref: WGS84_WKT,
  },
};
