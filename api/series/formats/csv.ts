// format=csv, the default: tidy CSV, one row per place (or a box's cell) and date (api/series/write.ts).

import { CSV_TYPE } from "../../answer.js";
import { readSeriesValues } from "../read.js";
import { writeSeriesCsv } from "../write.js";
import { type SeriesFormatSpec, WHOLE_ANSWER_BOUND } from "./format.js";

export const CSV_FORMAT = {
  name: "csv",
  type: CSV_TYPE,
  summary: "tidy: one row per place or cell and date",
  bound: WHOLE_ANSWER_BOUND,
  plan: { joined: "CSV: keep the first header line only" },
  openapi: { type: "string", description: "Tidy CSV: `longitude,latitude,date,<variable>...`, LF line ends, missing an empty field.", pattern: "^longitude,latitude,date(,[a-z_]+)+\\n" },
  write: async ({ config, selection }) => writeSeriesCsv(config, selection, await readSeriesValues(selection, config)),
} as const satisfies SeriesFormatSpec;
