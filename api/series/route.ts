// GET /api/v1/series (docs/contract.md §8.2): places or a box over any period in one call, in each format of the table
// (api/series/formats/table.ts). Check the parameters, choose each variable's version and the period, bound the values
// (else a 413 with a plan of calls that fit), then the format reads the values from the series tier and writes them.

import type { Answer } from "../answer.js";
import type { Context } from "../context.js";
import { LIMITS } from "../contract.js";
import { READ_CORS } from "../cors.js";
import { HttpError } from "../errors.js";
import { type RouteSpec, defineRoute } from "../routes.js";
import { type SeriesConfig, countPlaces, hashSeriesRequest } from "./call.js";
import type { SeriesFormatSpec } from "./formats/format.js";
import { SERIES_FORMATS } from "./formats/table.js";
import { SERIES_DESCRIPTION, SERIES_PLAN_ITEM, SERIES_PLAN_REST, describeSeriesOk } from "./openapi.js";
import { seriesParameters } from "./params.js";
import { planSeriesCalls } from "./plan.js";
import { type SeriesSelection, chooseVersions } from "./select.js";

/** A 413 when the call asks for more values than one answer of its format holds, with the calls that do. */
function checkBound(ctx: Context, config: SeriesConfig, format: SeriesFormatSpec, selection: SeriesSelection): void {
  const bound = ctx.bound(format.bound.option);
  const [places, days, variables] = [countPlaces(config), selection.days, selection.choices.length];
  const count = places * days * variables;
  if (count <= bound) return;
  const { plan, planRest, summary } = planSeriesCalls(config, format, selection, bound, ctx.bound("planBytes"));
  const noun = config.box ? "cell" : "place";
  throw new HttpError({
    kind: "request_too_large",
    message: `The call asks for ${count} values (${places} ${noun}${places === 1 ? "" : "s"} x ${days} days x ${variables} variable${variables === 1 ? "" : "s"}), over the bound of ${bound} values ${format.bound.holder}. ${summary}`,
    extra: { plan, ...(planRest ? { planRest } : {}) },
  });
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

/** A call's answer in its format, one of the table the route was built with. */
async function answerSeries(ctx: Context, config: SeriesConfig, format: SeriesFormatSpec): Promise<Answer> {
  const selection = await chooseVersions(ctx, config);
  checkBound(ctx, config, format, selection);
  const request = await hashSeriesRequest(ctx.platform, config);
  // pinned versions over a stated, wholly published period never change; otherwise a new publish may answer the same call
  const cache = config.pins && config.start && config.end && !selection.asked ? "immutable" : "short";
  const options = { cache, type: format.type, headers: provenanceHeaders(selection, request.sha256) } as const;
  const body = await format.write({ ctx, config, selection, request });
  return body instanceof Uint8Array ? ctx.answer(body, options) : ctx.streamAnswer(body, options);
}

/** The route over a table of formats: the interface's (SERIES_ROUTES), or a test's with a format of its own. */
export function seriesRoutes(formats: readonly SeriesFormatSpec[]): RouteSpec[] {
  const byName = new Map(formats.map((f) => [f.name, f]));
  return [
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
      ...seriesParameters(formats),
      answers: [],
      errors: ["invalid_parameters", "request_too_large", "coverage_unavailable", "missing_values"],
      etag: "short",
      document: { ok: () => describeSeriesOk(formats, true), planItem: SERIES_PLAN_ITEM, planRest: SERIES_PLAN_REST },
      // each format's bound on values, and the 413's on its bytes (the query's planBytes)
      bounds: { ...Object.fromEntries(formats.map((f) => [f.bound.option, f.bound.values])), planBytes: LIMITS.maxResponseBytes },
      handle: (ctx, config) => answerSeries(ctx, config, byName.get(config.format)!),
    }),
  ];
}

export const SERIES_ROUTES: RouteSpec[] = seriesRoutes(SERIES_FORMATS);
