// The OpenAPI description of GET /api/v1/series beyond what its route entry says (its parameters come from their
// schema, api/series/params.ts): its 200 in each format of the table (api/series/formats/) with the provenance
// headers, and its 413's plan items.

import { APSIM_VARIABLES } from "../../format/variables.js";
import { VERSION_ID_TEXT } from "../parameters.js";
import { MAX_SERIES_VALUES, type SeriesFormatSpec } from "./formats/format.js";
import { MAX_NETCDF_VALUES } from "./formats/netcdf.js";
import { MAX_SERIES_PLACES } from "./params.js";

type Json = Record<string, unknown>;

/** The value columns of an APSIM file, in order, the optional ones said apart: "`year day radn maxt mint rain` and `vp`". */
const APSIM_LINE = `\`year day ${APSIM_VARIABLES.filter((v) => v.apsim!.required).map((v) => v.apsim!.column).join(" ")}\` and ${APSIM_VARIABLES.filter((v) => !v.apsim!.required).map((v) => `\`${v.apsim!.column}\``).join(", ")}`;
/** One version id, and a comma-separated list of them. */
const VERSION_LIST = `^${VERSION_ID_TEXT}(,${VERSION_ID_TEXT})*$`;
const DESCRIBED_BY = `</api/v1/datasets/${VERSION_ID_TEXT}>; rel="describedby"`;

export const SERIES_DESCRIPTION = [
  "One GET in four forms: places (`lat` and `lon`) as tidy CSV or JSON with a provenance manifest; a box of cells (`bbox`) the same ways; an APSIM weather file of a place (`format=met`); a box or a place as one NetCDF file (`format=netcdf`).",
  `One call answers places over any period: at most ${MAX_SERIES_PLACES} places and ${MAX_SERIES_VALUES} values (places x days x variables), which holds SILO's whole archive at one place with the five variables of an APSIM file.`,
  "Each variable is answered by its newest published version that holds every asked date at every asked place (or by its pin); one answer never mixes versions of a variable.",
  "A larger call is 413 `request_too_large` with `plan`: calls of this route, pinned, each within the bound, whose answers in order hold exactly the asked values.",
  "CSV: header `longitude,latitude,date,<variable>...` (cell centres, variables in the order asked), one row per place and date, missing an empty field, LF line ends.",
  `\`bbox=west,south,east,north\` instead of places answers every cell whose centre lies inside (west and south edges inclusive, east and north exclusive), cell by cell (north to south, west to east) then date, within the same bound; \`format=netcdf\` answers a box (or one place) as one CF-1.8 NetCDF file of at most ${MAX_NETCDF_VALUES} values, streamed with its Content-Length and Content-Digest.`,
  "A period that runs past what is published is answered for its published part: the `Service-Period` header (`first/last`) names the dates answered; a period wholly outside is 422.",
  `\`met\`: an APSIM weather file (\`[weather.met.weather]\`, latitude, longitude, tav and amp computed as APSIM computes them over the period answered, ${APSIM_LINE} when asked); a missing value or an ocean cell is 422 \`missing_values\`.`,
].join(" ");

/** A plan item of the series route's 413: a GET path of this route. */
export const SERIES_PLAN_ITEM: Json = { type: "string", description: "A GET path and query of /api/v1/series, pinned to the versions that would answer.", pattern: "^/api/v1/series\\?(lat|bbox)=" };

/** The series route's `planRest`: the call for the rest of a box whose plan would not fit its 413. */
export const SERIES_PLAN_REST: Json = {
  type: "string",
  description:
    "Present when `plan` would not fit this answer's 1,000,000 bytes (a box of many cells): `plan` then holds the parts of the box's first rows (whole rows; a NetCDF box's first ranges of dates), and `planRest` is the call for the rest of the box, pinned. Asking it answers 413 with the next parts (and perhaps the next `planRest`): following `plan`, then `planRest` until it is absent, gives exactly the values asked for, in order.",
  pattern: "^/api/v1/series\\?bbox=",
};

const ref = (kind: "headers" | "schemas", name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** The 200 of the route: a content entry for each format's media type. */
export function describeSeriesOk(formats: readonly SeriesFormatSpec[], etag: boolean): Json {
  const headers: Json = {
    "Content-Digest": ref("headers", "Content-Digest"),
    "Access-Control-Allow-Origin": ref("headers", "Access-Control-Allow-Origin"),
    "Cache-Control": ref("headers", "Cache-Control"),
    ...(etag ? { ETag: ref("headers", "ETag") } : {}),
    "Service-Dataset-Version": {
      description: "The versions that answered, comma-separated, in the order of the variables.",
      required: true,
      schema: { type: "string", pattern: VERSION_LIST },
    },
    "Service-Request-SHA256": ref("headers", "Service-Request-SHA256"),
    "Service-Period": {
      description: "The dates answered, `first/last`: the period asked, or its published part when it runs past what is published (the JSON manifest's `asked` then names the period asked).",
      required: true,
      schema: { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}/\\d{4}-\\d{2}-\\d{2}$" },
    },
    Link: {
      description: 'Each version\'s record, `</api/v1/datasets/{id}>; rel="describedby"`, comma-separated: source references, license and attribution.',
      required: true,
      schema: { type: "string", pattern: `^${DESCRIBED_BY}(, ${DESCRIBED_BY})*$` },
    },
  };
  const content = Object.fromEntries(formats.map((f) => [f.type.split(";")[0], { schema: f.openapi }]));
  return { description: "The values asked for, in the format asked.", headers, content };
}
