// The series formats, in the order the route lists them; the first is the default. A new format is a file beside
// these (./format.ts says what it holds) and a row here (docs/layout.md "Adding a series format").

import { CSV_FORMAT } from "./csv.js";
import { JSON_FORMAT } from "./json.js";
import { MET_FORMAT } from "./met.js";
import { NETCDF_FORMAT } from "./netcdf.js";

export const SERIES_FORMATS = [CSV_FORMAT, JSON_FORMAT, MET_FORMAT, NETCDF_FORMAT] as const;
