// GET /api/v1/series (docs/contract.md §8.2): places or a box over any period in one call, as tidy CSV, JSON with a
// provenance manifest, an APSIM weather file, or a NetCDF file streamed as it is written. Check the parameters, choose
// each variable's version and the period, bound the values (else a 413 with a plan of calls that fit), read them from
// the series tier, write them.

import { type Answer, CSV_TYPE, JSON_TYPE } from "../answer.js";
import type { Context } from "../context.js";
import { READ_CORS } from "../cors.js";
import { HttpError } from "../errors.js";
import { type RouteSpec, defineRoute } from "../routes.js";
import { findAnswerClimate } from "./climate.js";
import { type MetInput, checkComplete, writeMet } from "./met.js";
import { SERIES_DESCRIPTION, SERIES_PLAN_ITEM, describeSeriesOk } from "./openapi.js";
import { NETCDF_TYPE, streamSeriesNetcdf } from "./netcdf-file.js";
import { MAX_NETCDF_VALUES, MAX_SERIES_VALUES, type SeriesConfig, type SeriesFormat, hashSeriesRequest, seriesParameters } from "./params.js";
import { planSeriesCalls } from "./plan.js";
import { readSeriesValues } from "./read.js";
import { type SeriesSelection, chooseVersions } from "./select.js";
import { writeSeriesCsv, writeSeriesJson } from "./write.js";

export const MET_TYPE = "text/plain; charset=utf-8";
const TYPES: Record<SeriesFormat, string> = { csv: CSV_TYPE, json: JSON_TYPE, met: MET_TYPE, netcdf: NETCDF_TYPE };

/** A 413 when the call asks for more values than one answer holds, with the calls that do. */
function checkBound(config: SeriesConfig, selection: SeriesSelection, bound: number): void {
  const [places, days, variables] = [config.places.length, selection.days, selection.choices.length];
  const count = places * days * variables;
  if (count <= bound) return;
  const { plan, summary } = planSeriesCalls(config, selection, bound);
  const noun = config.box ? "cell" : "place";
  const what = config.format === "netcdf" ? `a NetCDF answer` : "a call";
  throw new HttpError({ kind: "request_too_large", message: `The call asks for ${count} values (${places} ${noun}${places === 1 ? "" : "s"} x ${days} days x ${variables} variable${variables === 1 ? "" : "s"}), over the bound of ${bound} values ${what}. ${summary}`, extra: { plan } });
}

/** Provenance headers: every version used, in the order of the variables, and each one's record. */
function provenanceHeaders(selection: SeriesSelection, requestSha256: string): Record<string, string> {
  const ids = selection.choices.map((c) => c.view.record.id);
  return {
    "Service-Dataset-Version": ids.join(","),
    // the dates answered: the period asked, or its published part when it runs past that (docs/contract.md §8.2)
    "Service-Period": `${selection.start}/${selection.end}`,
    "Service-Request-SHA256": requestSha256,
    Link: ids.map((id) => `</api/v1/datasets/${id}>; rel="describedby"`).join(", "),
  };
}

function toMetInput(config: SeriesConfig, selection: SeriesSelection, values: Float32Array[][]): MetInput {
  const columns = selection.choices.map(({ variable, view: { record } }, v) => ({ variable, values: values[v][0], version: { id: record.id, license: record.license, attribution: record.attribution } }));
  return { place: config.places[0], start: selection.start, days: selection.days, columns };
}

/** The .met file: refused at once when a value is missing, before its climate reads the place's record. */
async function writeMetAnswer(config: SeriesConfig, selection: SeriesSelection, values: Float32Array[][]): Promise<Uint8Array> {
  const input = toMetInput(config, selection, values);
  checkComplete(input);
  return writeMet(input, await findAnswerClimate(selection, input.place, values));
}

export async function answerSeries(ctx: Context, config: SeriesConfig): Promise<Answer> {
  const selection = await chooseVersions(ctx, config);
  checkBound(config, selection, ctx.bound(config.format === "netcdf" ? "seriesNetcdfMaxValues" : "seriesMaxValues"));
  const requestSha256 = await hashSeriesRequest(ctx.platform, config);
  // pinned versions over a stated, wholly published period never change; otherwise a new publish may answer the same call
  const cache = config.pins && config.start && config.end && !selection.asked ? "immutable" : "short";
  const options = { cache, type: TYPES[config.format], headers: provenanceHeaders(selection, requestSha256) } as const;
  if (config.format === "netcdf") return ctx.streamAnswer(streamSeriesNetcdf(config, selection, requestSha256), options);
  const values = await readSeriesValues(selection, config.places, config.box?.window);
  const body =
    config.format === "csv"
      ? writeSeriesCsv(config, selection, values)
      : config.format === "met"
        ? await writeMetAnswer(config, selection, values)
        : await writeSeriesJson(config, selection, values, requestSha256, (bytes) => ctx.platform.sha256Hex(bytes));
  return ctx.answer(body, options);
}

export const SERIES_ROUTES: RouteSpec[] = [
  defineRoute({
    method: "GET",
    path: "/api/v1/series",
    operationId: "getSeries",
    tag: "Series",
    cors: READ_CORS,
    computed: true,
    summary: "Places or a box over any period",
    description: SERIES_DESCRIPTION,
    // the parameters, checked before the call waits for a turn: a bad call is answered at once (docs/contract.md §4.7)
    ...seriesParameters(),
    answers: [],
    errors: ["invalid_parameters", "request_too_large", "coverage_unavailable", "missing_values"],
    etag: "short",
    document: { ok: () => describeSeriesOk(true), planItem: SERIES_PLAN_ITEM },
    bounds: { seriesMaxValues: MAX_SERIES_VALUES, seriesNetcdfMaxValues: MAX_NETCDF_VALUES },
    handle: answerSeries,
  }),
];
