// The SILO daily variables this archive publishes (docs/contract.md §8.1): one table every side reads, so the
// pipeline's dataset keys, plausible ranges and file names, the API's names and aliases, and the Zarr view's CF
// attributes never disagree.

export interface Variable {
  /** the name on the API (a CF standard name where one fits) */
  name: string;
  /** SILO's name: in its file names (`YYYYMMDD.<silo>.tif`, `YYYY.<silo>.nc`), its NetCDF variable, and as an alias */
  silo: string;
  /** the dataset_key of its versions: each variable is its own dataset with its own version chain */
  datasetKey: string;
  unit: string;
  /** what a title says: "daily maximum temperature" */
  label: string;
  /** finite values outside it stop a publish (fail closed) */
  plausible: readonly [number, number];
  /** CF attributes of the Zarr view's array */
  standardName: string;
  cellMethods: string | null;
  /** SILO's observation-time convention for the value of a date */
  observed: string;
  /**
   * APSIM's column of it in a weather (.met) file: its name, its unit, its place among the file's value columns (SILO's
   * order: radn maxt mint rain vp) and whether a file must hold it (APSIM reads radn maxt mint rain; vp may follow)
   */
  apsim: { column: string; unit: string; order: number; required: boolean } | null;
  /** how a NetCDF file may spell the unit (lower case, spaces as underscores) */
  unitSpellings: readonly string[];
}

const TO_9AM = "the 24 hours to 9 am local time on the date";
const FROM_9AM = "the 24 hours from 9 am local time on the date";
const CELSIUS = ["celsius", "degrees_celsius", "degree_celsius", "degc", "deg_c", "c"] as const;

export const VARIABLES: readonly Variable[] = [
  {
    name: "air_temperature_max",
    silo: "max_temp",
    datasetKey: "silo-tmax",
    unit: "degC",
    label: "daily maximum temperature",
    plausible: [-20, 60],
    standardName: "air_temperature",
    cellMethods: "time: maximum",
    observed: FROM_9AM,
    apsim: { column: "maxt", unit: "oC", order: 1, required: true },
    unitSpellings: CELSIUS,
  },
  {
    name: "air_temperature_min",
    silo: "min_temp",
    datasetKey: "silo-tmin",
    unit: "degC",
    label: "daily minimum temperature",
    plausible: [-30, 50],
    standardName: "air_temperature",
    cellMethods: "time: minimum",
    observed: TO_9AM,
    apsim: { column: "mint", unit: "oC", order: 2, required: true },
    unitSpellings: CELSIUS,
  },
  {
    name: "precipitation_amount",
    silo: "daily_rain",
    datasetKey: "silo-rain",
    unit: "mm",
    label: "daily rainfall",
    plausible: [0, 1500],
    standardName: "lwe_thickness_of_precipitation_amount",
    cellMethods: "time: sum",
    observed: TO_9AM,
    apsim: { column: "rain", unit: "mm", order: 3, required: true },
    unitSpellings: ["mm", "millimeters", "millimetres", "kg_m-2", "kg/m2"],
  },
  {
    name: "surface_downwelling_shortwave_flux_in_air",
    silo: "radiation",
    datasetKey: "silo-radiation",
    unit: "MJ m-2 day-1",
    label: "daily solar radiation",
    plausible: [0, 45],
    standardName: "surface_downwelling_shortwave_flux_in_air",
    cellMethods: "time: mean",
    observed: "the calendar day (midnight to midnight local time)",
    apsim: { column: "radn", unit: "MJ/m2", order: 0, required: true },
    unitSpellings: ["mj/m2", "mj_m-2", "mj_m-2_day-1", "mj/m2/day", "mj_m-2_d-1"],
  },
  {
    name: "water_vapor_partial_pressure_in_air",
    silo: "vp",
    datasetKey: "silo-vp",
    unit: "hPa",
    label: "vapour pressure",
    plausible: [0, 60],
    standardName: "water_vapor_partial_pressure_in_air",
    cellMethods: null,
    observed: "9 am local time on the date",
    apsim: { column: "vp", unit: "hPa", order: 4, required: false },
    unitSpellings: ["hpa", "hectopascal", "hectopascals", "mb", "mbar"],
  },
];

const BY_NAME = new Map<string, Variable>(VARIABLES.flatMap((v) => [[v.name, v], [v.silo, v]]));

/** The variable an API name or a SILO name (its alias) names; undefined for anything else. */
export function findVariable(nameOrAlias: string): Variable | undefined {
  return BY_NAME.get(nameOrAlias);
}

/** The variable of a dataset record's `variables` map (a raster version holds exactly one), or undefined. */
export function variableOfRecord(record: { variables?: Record<string, string> }): Variable | undefined {
  const names = Object.keys(record.variables ?? {});
  return names.length === 1 ? findVariable(names[0]) : undefined;
}

/** Every name a request may use, for messages: "air_temperature_max (max_temp), ...". */
export function describeVariables(): string {
  return VARIABLES.map((v) => `${v.name} (${v.silo})`).join(", ");
}

/** The variables an APSIM weather file holds, in the order of its columns (SILO's: radn maxt mint rain, then vp). */
export const APSIM_VARIABLES: readonly Variable[] = VARIABLES.filter((v) => v.apsim).sort((a, b) => a.apsim!.order - b.apsim!.order);

/** Those an APSIM weather file must hold, in the order of its columns. */
export const APSIM_REQUIRED: readonly Variable[] = APSIM_VARIABLES.filter((v) => v.apsim!.required);

/** The contract's one queryable variable (docs/contract.md §1.1): SILO's max_temp. */
export const MAX_TEMP: Variable = VARIABLES[0];
