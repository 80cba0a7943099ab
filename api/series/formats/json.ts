// format=json: a provenance manifest and the values by place or cell, the manifest hashing the data as sent
// (api/series/write.ts).

import { JSON_TYPE } from "../../answer.js";
import { readSeriesValues } from "../read.js";
import { writeSeriesJson } from "../write.js";
import { type SeriesFormatSpec, WHOLE_ANSWER_BOUND } from "./format.js";

export const JSON_FORMAT = {
  name: "json",
  type: JSON_TYPE,
  summary: "a manifest and the values by place or cell",
  bound: WHOLE_ANSWER_BOUND,
  plan: {},
  openapi: { $ref: "#/components/schemas/series-result" },
  write: async ({ ctx, config, selection, request }) =>
    writeSeriesJson(config, selection, await readSeriesValues(selection, config), request.sha256, (bytes) => ctx.platform.sha256Hex(bytes)),
} as const satisfies SeriesFormatSpec;
