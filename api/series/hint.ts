// What the contract's 422 says when a data request wants what the series route gives (docs/contract.md §3.1, §8.2):
// a period over 31 days, or another variable than air_temperature_max. The exact series call for that request: the
// box's cells as places (lat/lon of their centres, north to south, west to east) over its period, or, for more cells
// than places a call, the box itself (bbox=, its cells by the same rule).

import { isCalendarDate } from "../../format/dates.js";
import { bboxToWindow, colToLon, rowToLat } from "../../format/grid.js";
import { QUERY_VARIABLE } from "../../format/records.js";
import { findVariable } from "../../format/variables.js";
import { seriesPath } from "./call.js";
import { MAX_SERIES_PLACES } from "./params.js";

const isNumber = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x);

/**
 * "GET <path> answers ..." for a data request as sent (possibly broken elsewhere), or a general pointer when its box
 * or period cannot be read. `variable`: the one to ask for (the request's own, if the route knows it).
 */
export function describeSeriesCall(spec: unknown, variable: string = QUERY_VARIABLE): string {
  const request = (spec ?? {}) as { region?: { bbox?: unknown }; period?: { start?: unknown; end?: unknown }; format?: unknown; dataset_version?: unknown };
  const bbox = request.region?.bbox;
  const { start: asked, end } = request.period ?? {};
  const window = Array.isArray(bbox) && bbox.length === 4 && bbox.every(isNumber) ? bboxToWindow(bbox as [number, number, number, number]) : null;
  const found = findVariable(variable);
  const name = found?.name ?? variable;
  if (!window || typeof asked !== "string" || typeof end !== "string" || !isCalendarDate(asked) || !isCalendarDate(end)) {
    return `GET /api/v1/series?lat=<lat>&lon=<lon>&start=<date>&end=<date>${name === QUERY_VARIABLE ? "" : `&variables=${name}`} answers places over any period in one call`;
  }
  // a variable SILO starts later (evap_pan, mslp): the call suggested asks from its first date, which answers
  const first = found?.firstDate;
  if (first && end < first) return `GET /api/v1/series answers ${name} from ${first}, SILO's first date of it; no date of ${asked}..${end} has a value`;
  const start = first && asked < first ? first : asked;
  const [c0, r0, w, h] = window;
  const cells: [number, number][] = [];
  for (let r = r0; r < r0 + h && cells.length < MAX_SERIES_PLACES; r++) for (let c = c0; c < c0 + w && cells.length < MAX_SERIES_PLACES; c++) cells.push([rowToLat(r), colToLon(c)]);
  const pin = name === QUERY_VARIABLE && typeof request.dataset_version === "string" ? [request.dataset_version] : undefined;
  const path = seriesPath({
    lats: cells.map(([lat]) => lat),
    lons: cells.map(([, lon]) => lon),
    start,
    end,
    variables: name === QUERY_VARIABLE ? undefined : [name],
    format: request.format === "csv" ? "csv" : "json",
    pins: pin,
  });
  const total = w * h;
  const over = start === asked ? "the whole period" : `${start}..${end}, from SILO's first date of ${name}`;
  if (total <= MAX_SERIES_PLACES) return `GET ${path} answers it in one call (the box's ${total === 1 ? "cell" : `${total} cells`} over ${over})`;
  // more cells than places a call: the box itself, its cells by the same rule (a period past what is published is
  // answered for its published part, so the call answers whenever the box's cells are published)
  const boxPath = seriesPath({ bbox: bbox as number[], start, end, variables: name === QUERY_VARIABLE ? undefined : [name], format: request.format === "csv" ? "csv" : "json", pins: pin });
  return `GET ${boxPath} answers it in one call (the box's ${total} cells over ${over}; a 413 there carries the plan of calls that do)`;
}
