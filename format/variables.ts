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
  /** CF attributes of the Zarr view's array: a standard name where CF has one that fits, else null (a long_name only) */
  standardName: string | null;
  cellMethods: string | null;
  /** SILO's observation-time convention for the value of a date */
  observed: string;
  /**
   * SILO's first date of it (YYYY-MM-DD): 1889-01-01 for most; a publish refuses a file before it, fetch and update
   * never ask for one, and the series route answers a period starting before it with a 422 naming it
   */
  firstDate: string;
  /**
   * How many days, ending at the night's last date, SILO may still rewrite its files (docs/contract.md §5), so make
   * update asks for them again: rain up to 12 months back (a year and a day, so a leap year is covered), the others
   * 3 to 6 months back (six months and a week). Evaporation and evapotranspiration take the others' window: SILO
   * computes them from temperature, radiation and vapour pressure, so they are rewritten when those are, and pan
   * readings arrive with the temperatures of the same stations. REVISION_DAYS overrides it for every variable.
   */
  revisionDays: number;
  /**
   * APSIM's column of it in a weather (.met) file: its name, its unit, its place among the file's value columns (SILO's
   * order: radn maxt mint rain evap vp) and whether a file must hold it (APSIM reads radn maxt mint rain; evap and vp
   * may follow, as in SILO's own APSIM files)
   */
  apsim: { column: string; unit: string; order: number; required: boolean } | null;
  /** how a NetCDF file may spell the unit (lower case, spaces as underscores) */
  unitSpellings: readonly string[];
}

const TO_9AM = "the 24 hours to 9 am local time on the date";
const FROM_9AM = "the 24 hours from 9 am local time on the date";
const CELSIUS = ["celsius", "degrees_celsius", "degree_celsius", "degc", "deg_c", "c"] as const;
const MM = ["mm", "millimeters", "millimetres", "kg_m-2", "kg/m2"] as const;
const HPA = ["hpa", "hectopascal", "hectopascals", "mb", "mbar"] as const;
const PERCENT = ["%", "percent", "percentage"] as const;
/** SILO's estimates of evaporative demand are computed from the date's temperatures, radiation and vapour pressure. */
const COMPUTED = "the date: SILO computes it from the date's temperatures, solar radiation and vapour pressure";
/** Revision windows (Variable.revisionDays): rain's a year and a day, every other variable's six months and a week. */
const RAIN_REVISION_DAYS = 366;
const REVISION_DAYS = 190;
/** The first date of SILO's archive, and of most of its variables. */
const ARCHIVE_START = "1889-01-01";
/**
 * Evaporation and evapotranspiration, mm: SILO's API filter keeps Class A pan evaporation within 0..35 mm
 * (docs/contract.md §8.1), and a pan evaporates more than a crop or Morton's areal estimates of the same day, so the
 * pan's bound holds every one of them.
 */
const EVAPORATION: readonly [number, number] = [0, 35];

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
    firstDate: ARCHIVE_START,
    revisionDays: REVISION_DAYS,
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
    firstDate: ARCHIVE_START,
    revisionDays: REVISION_DAYS,
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
    firstDate: ARCHIVE_START,
    revisionDays: RAIN_REVISION_DAYS,
    apsim: { column: "rain", unit: "mm", order: 3, required: true },
    unitSpellings: MM,
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
    firstDate: ARCHIVE_START,
    revisionDays: REVISION_DAYS,
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
    firstDate: ARCHIVE_START,
    revisionDays: REVISION_DAYS,
    apsim: { column: "vp", unit: "hPa", order: 5, required: false },
    unitSpellings: HPA,
  },
  {
    name: "water_vapor_saturation_deficit_in_air",
    silo: "vp_deficit",
    datasetKey: "silo-vp_deficit",
    unit: "hPa",
    label: "vapour pressure deficit",
    // below the saturation vapour pressure at 50 degC (123 hPa): no Australian day has reached 51 degC
    plausible: [0, 130],
    standardName: "water_vapor_saturation_deficit_in_air",
    cellMethods: null,
    observed: "the date: SILO computes it from the date's temperatures and its 9 am vapour pressure",
    firstDate: ARCHIVE_START,
    revisionDays: REVISION_DAYS,
    apsim: null,
    unitSpellings: HPA,
  },
  {
    name: "pan_evaporation",
    silo: "evap_pan",
    datasetKey: "silo-evap_pan",
    unit: "mm",
    label: "daily Class A pan evaporation",
    plausible: EVAPORATION,
    // a pan is open water under the day's ambient conditions: CF's potential evaporation
    standardName: "water_potential_evaporation_amount",
    cellMethods: "time: sum",
    observed: TO_9AM,
    // SILO's Class A pan grids begin in 1970; before it SILO has only the synthetic estimate (evap_syn), which its
    // combined series (evap_comb) uses for those years
    firstDate: "1970-01-01",
    revisionDays: REVISION_DAYS,
    apsim: { column: "evap", unit: "mm", order: 4, required: false },
    unitSpellings: MM,
  },
  {
    name: "synthetic_pan_evaporation",
    silo: "evap_syn",
    datasetKey: "silo-evap_syn",
    unit: "mm",
    label: "daily synthetic pan evaporation",
    plausible: EVAPORATION,
    standardName: "water_potential_evaporation_amount",
    cellMethods: "time: sum",
    observed: `${TO_9AM}, as the pan it estimates (SILO computes it from the date's temperatures, radiation and vapour pressure)`,
    firstDate: ARCHIVE_START,
    revisionDays: REVISION_DAYS,
    apsim: null,
    unitSpellings: MM,
  },
  {
    name: "combined_pan_evaporation",
    silo: "evap_comb",
    datasetKey: "silo-evap_comb",
    unit: "mm",
    label: "daily pan evaporation, synthetic before 1970",
    plausible: EVAPORATION,
    standardName: "water_potential_evaporation_amount",
    cellMethods: "time: sum",
    observed: `${TO_9AM}: Class A pan evaporation from 1970, synthetic pan evaporation before`,
    firstDate: ARCHIVE_START,
    revisionDays: REVISION_DAYS,
    apsim: null,
    unitSpellings: MM,
  },
  {
    name: "lake_evaporation_morton",
    silo: "evap_morton_lake",
    datasetKey: "silo-evap_morton_lake",
    unit: "mm",
    label: "daily shallow lake evaporation (Morton)",
    plausible: EVAPORATION,
    standardName: "water_potential_evaporation_amount",
    cellMethods: "time: sum",
    observed: COMPUTED,
    firstDate: ARCHIVE_START,
    revisionDays: REVISION_DAYS,
    apsim: null,
    unitSpellings: MM,
  },
  {
    name: "relative_humidity_at_max_temperature",
    silo: "rh_tmax",
    datasetKey: "silo-rh_tmax",
    unit: "%",
    label: "relative humidity at the time of maximum temperature",
    // a percentage: SILO computes it from vapour pressure and the saturation vapour pressure at the day's extreme
    plausible: [0, 100],
    standardName: "relative_humidity",
    cellMethods: null,
    observed: "the time of the date's maximum temperature",
    firstDate: ARCHIVE_START,
    revisionDays: REVISION_DAYS,
    apsim: null,
    unitSpellings: PERCENT,
  },
  {
    name: "relative_humidity_at_min_temperature",
    silo: "rh_tmin",
    datasetKey: "silo-rh_tmin",
    unit: "%",
    label: "relative humidity at the time of minimum temperature",
    plausible: [0, 100],
    standardName: "relative_humidity",
    cellMethods: null,
    observed: "the time of the date's minimum temperature",
    firstDate: ARCHIVE_START,
    revisionDays: REVISION_DAYS,
    apsim: null,
    unitSpellings: PERCENT,
  },
  {
    name: "reference_evapotranspiration_short_crop",
    silo: "et_short_crop",
    datasetKey: "silo-et_short_crop",
    unit: "mm",
    label: "daily FAO56 short crop reference evapotranspiration",
    plausible: EVAPORATION,
    // CF has no name for a reference crop's evapotranspiration: a long_name only
    standardName: null,
    cellMethods: "time: sum",
    observed: COMPUTED,
    firstDate: ARCHIVE_START,
    revisionDays: REVISION_DAYS,
    apsim: null,
    unitSpellings: MM,
  },
  {
    name: "reference_evapotranspiration_tall_crop",
    silo: "et_tall_crop",
    datasetKey: "silo-et_tall_crop",
    unit: "mm",
    label: "daily ASCE tall crop reference evapotranspiration",
    plausible: EVAPORATION,
    standardName: null,
    cellMethods: "time: sum",
    observed: COMPUTED,
    firstDate: ARCHIVE_START,
    revisionDays: REVISION_DAYS,
    apsim: null,
    unitSpellings: MM,
  },
  {
    name: "actual_evapotranspiration_morton",
    silo: "et_morton_actual",
    datasetKey: "silo-et_morton_actual",
    unit: "mm",
    label: "daily actual areal evapotranspiration (Morton)",
    plausible: EVAPORATION,
    standardName: "water_evapotranspiration_amount",
    cellMethods: "time: sum",
    observed: COMPUTED,
    firstDate: ARCHIVE_START,
    revisionDays: REVISION_DAYS,
    apsim: null,
    unitSpellings: MM,
  },
  {
    name: "potential_evapotranspiration_morton",
    silo: "et_morton_potential",
    datasetKey: "silo-et_morton_potential",
    unit: "mm",
    label: "daily potential evapotranspiration (Morton)",
    plausible: EVAPORATION,
    standardName: null,
    cellMethods: "time: sum",
    observed: COMPUTED,
    firstDate: ARCHIVE_START,
    revisionDays: REVISION_DAYS,
    apsim: null,
    unitSpellings: MM,
  },
  {
    name: "potential_evapotranspiration_morton_wet",
    silo: "et_morton_wet",
    datasetKey: "silo-et_morton_wet",
    unit: "mm",
    label: "daily wet-environment areal evapotranspiration (Morton)",
    plausible: EVAPORATION,
    standardName: null,
    cellMethods: "time: sum",
    observed: COMPUTED,
    firstDate: ARCHIVE_START,
    revisionDays: REVISION_DAYS,
    apsim: null,
    unitSpellings: MM,
  },
  {
    name: "air_pressure_at_mean_sea_level",
    silo: "mslp",
    datasetKey: "silo-mslp",
    unit: "hPa",
    label: "mean sea level pressure",
    // the deepest cyclones that crossed Australia's coast (about 900 hPa) to the strongest winter highs (about 1045)
    plausible: [880, 1060],
    standardName: "air_pressure_at_mean_sea_level",
    cellMethods: null,
    observed: "9 am local time on the date",
    // SILO's pressure grids begin in 1957
    firstDate: "1957-01-01",
    revisionDays: REVISION_DAYS,
    apsim: null,
    unitSpellings: HPA,
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

/** The variables an APSIM weather file holds, in the order of its columns (SILO's: radn maxt mint rain, then evap, vp). */
export const APSIM_VARIABLES: readonly Variable[] = VARIABLES.filter((v) => v.apsim).sort((a, b) => a.apsim!.order - b.apsim!.order);

/** Those an APSIM weather file must hold, in the order of its columns. */
export const APSIM_REQUIRED: readonly Variable[] = APSIM_VARIABLES.filter((v) => v.apsim!.required);

/** The contract's one queryable variable (docs/contract.md §1.1): SILO's max_temp. */
export const MAX_TEMP: Variable = VARIABLES[0];
