// format=met: an APSIM weather file of one place (api/series/met.ts writes it, api/series/climate.ts finds its tav
// and amp). APSIM reads no missing value, so the file is refused at once when one is missing.

import { APSIM_REQUIRED, APSIM_VARIABLES } from "../../../format/variables.js";
import type { Issue } from "../../errors.js";
import { type SeriesConfig, countPlaces, listPlaces } from "../call.js";
import { findAnswerClimate } from "../climate.js";
import { type MetInput, checkComplete, joinNames, writeMet } from "../met.js";
import { readSeriesValues } from "../read.js";
import { type SeriesFormatSpec, WHOLE_ANSWER_BOUND } from "./format.js";

export const MET_TYPE = "text/plain; charset=utf-8";

/** What an APSIM weather file holds, in words: "radiation, max_temp, min_temp and daily_rain (vp may be added)". */
export const APSIM_TEXT = `${joinNames(APSIM_REQUIRED.map((v) => v.silo))} (${joinNames(APSIM_VARIABLES.filter((v) => !v.apsim!.required).map((v) => v.silo))} may be added)`;

/** APSIM's file: exactly one place, and the columns it needs among the variables (format/variables.ts). */
function checkMet(config: SeriesConfig, issues: Issue[]): void {
  const places = countPlaces(config);
  if (places > 1) issues.push({ code: "length", path: ["lat"], message: `holds ${places} places; an APSIM weather file (format=met) holds exactly one` });
  config.variables.forEach((v, i) => {
    if (v.apsim) return;
    const optional = APSIM_VARIABLES.filter((a) => !a.apsim!.required).map((a) => `${a.silo} (${a.apsim!.column})`);
    issues.push({ code: "enum", path: ["variables", i], message: `${v.name} (${v.silo}) has no column in an APSIM weather file (format=met), which holds ${APSIM_TEXT}; leave it out (format=csv answers it), or add ${joinNames(optional)}` });
  });
  const missing = APSIM_REQUIRED.filter((v) => !config.variables.includes(v));
  if (missing.length > 0) {
    const names = missing.map((v) => `${v.name} (${v.silo})`).join(", ");
    issues.push({
      code: "required",
      path: ["variables"],
      message: `lacks ${names}; an APSIM weather file (format=met) needs ${APSIM_TEXT}: variables=${APSIM_REQUIRED.map((v) => v.silo).join(",")}`,
    });
  }
}

export const MET_FORMAT = {
  name: "met",
  type: MET_TYPE,
  summary: `an APSIM weather file: one place, ${APSIM_TEXT.replace(/ \((.*) may be added\)$/, ", $1 optional")}`,
  label: "an APSIM weather file",
  bound: WHOLE_ANSWER_BOUND,
  // "the same call with &format=met" answers a query's place: without variables=, APSIM's columns (docs/contract.md §8.2)
  defaultVariables: { whose: "APSIM's", variables: APSIM_VARIABLES },
  check: checkMet,
  plan: { eachPart: " Each part is its own APSIM file, its tav and amp over the whole calendar years it holds (else the place's record's); ask format=csv for one table." },
  openapi: { type: "string", description: "An APSIM weather file (format=met).", pattern: "^\\[weather\\.met\\.weather\\]\\n" },
  // refused at once when a value is missing, before its climate reads the place's record
  write: async ({ config, selection }) => {
    const values = await readSeriesValues(selection, config);
    const columns = selection.choices.map(({ variable, view: { record } }, v) => ({ variable, values: values[v][0], version: { id: record.id, license: record.license, attribution: record.attribution } }));
    const input: MetInput = { place: listPlaces(config)[0], start: selection.start, days: selection.days, columns };
    checkComplete(input);
    return writeMet(input, await findAnswerClimate(selection, input.place, values));
  },
} as const satisfies SeriesFormatSpec;
