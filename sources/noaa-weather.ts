// Source descriptor: NOAA daily weather for Seattle and New York, as shipped in the vega-datasets npm package.

import { createRequire } from "node:module";
import { dirname, join } from "node:path";

// The package exports only its JS entry (build/index.js); its data files sit one folder above that.
const packageDir = dirname(dirname(createRequire(import.meta.url).resolve("vega-datasets")));

export const NOAA_WEATHER = {
  datasetKey: "noaa-weather",
  packageName: "vega-datasets",
  packageDir,
  csvPath: join(packageDir, "data", "weather.csv"),
  memberPath: "data/weather.csv",
  datapackagePath: join(packageDir, "datapackage.json"),
  resourceName: "weather",
  dataClass: "observation",
  temporalResolution: "daily",
  /** CSV column -> variable name and unit; units are the ones the datapackage description states (checked at publish). */
  columns: {
    precipitation: { variable: "precipitation_amount", unit: "mm", stated: "millimeters" },
    temp_max: { variable: "air_temperature_max", unit: "degC", stated: "degrees Celsius" },
    temp_min: { variable: "air_temperature_min", unit: "degC", stated: "degrees Celsius" },
    wind: { variable: "wind_speed", unit: "km/h", stated: "kilometers per hour" },
  },
  /** categorical column kept with each observation of that station-day, as a dimension */
  categoryColumn: "weather",
} as const;
