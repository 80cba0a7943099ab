// The Zarr view's entries of the route table (docs/contract.md §8.3): paths, checks, handlers and what the OpenAPI document says
// of them, under their own tag.

import { VERSION_ID_PATTERN } from "../../schemas/validate.js";
import { RANGE_CORS } from "../cors.js";
import type { ErrorKind } from "../errors.js";
import type { RouteSpec } from "../routes.js";
import { answerZarrArrayKey, answerZarrGroupKey, answerZarrLatest, checkZarrPath } from "./answers.js";

const ERRORS: ErrorKind[] = ["not_found"];

const group = { name: "group", description: "`maps` (chunks of one day by one 256 x 256 tile) or `series` (chunks of many days by a few cells).", schema: { type: "string", enum: ["maps", "series"] } };
const array = {
  name: "array",
  description: "An array of the group: the variable's (its API name, such as `air_temperature_max`), `time`, `lat`, `lon` or `crs`.",
  schema: { type: "string", pattern: "^[a-z_]{1,64}$" },
};
const arrayKey = {
  name: "key",
  description: "`.zarray`, `.zattrs`, or a chunk key: indices joined by `.` (`0.1.2`; `0` for a coordinate).",
  schema: { type: "string", pattern: "^(\\.zarray|\\.zattrs|(0|[1-9][0-9]{0,8})(\\.(0|[1-9][0-9]{0,8})){0,2})$" },
};

/** A Zarr key's answer: JSON metadata, or a chunk (float32, int32 or float64, C order; zlib or uncompressed, as its .zarray says). */
const CONTENT = {
  "application/json": { schema: { type: "object", description: "Zarr v2 metadata: `.zgroup`, `.zattrs`, `.zarray`, or the consolidated `.zmetadata`." } },
  "application/octet-stream": { schema: { type: "string", description: "One chunk, stored as its `.zarray` says: numcodecs' zlib, or as it is (`compressor: null`, the maps group's variable)." } },
};

const PINNED =
  "Pinned keys never change: an ETag, `Cache-Control: immutable`, HEAD and single byte ranges (Range, 206, 416). A chunk none of whose cells the version holds (outside its window or dates, a gap) and every unknown key answer 404, which Zarr readers take as the fill value (NaN).";

export const ZARR_ROUTES: RouteSpec[] = [
  {
    method: "GET",
    path: "/zarr/v2/:id/:group/:key",
    operationId: "getZarrGroupKey",
    cors: RANGE_CORS,
    tag: "Zarr",
    computed: true,
    summary: "A group's metadata",
    description: `A group-level key of a version's Zarr v2 view: \`.zgroup\`, \`.zattrs\`, or the consolidated metadata \`.zmetadata\`. Open the group with \`xarray.open_zarr("<server>/zarr/v2/<id>/maps")\` or GDAL's \`ZARR:"/vsicurl/<server>/zarr/v2/<id>/maps"\`. ${PINNED}`,
    pathParams: [group, { name: "key", description: "`.zgroup`, `.zattrs` or `.zmetadata`.", schema: { type: "string", enum: [".zgroup", ".zattrs", ".zmetadata"] } }],
    answers: [],
    content: { "application/json": CONTENT["application/json"] },
    errors: ERRORS,
    etag: "immutable",
    ranges: true,
    check: checkZarrPath,
    handle: answerZarrGroupKey,
  },
  {
    method: "GET",
    path: "/zarr/v2/:id/:group/:array/:key",
    operationId: "getZarrArrayKey",
    cors: RANGE_CORS,
    tag: "Zarr",
    computed: true,
    summary: "An array's metadata or a chunk",
    description: `An array-level key of a version's Zarr v2 view: \`.zarray\`, \`.zattrs\`, or a chunk computed from the verified pieces. ${PINNED} With \`latest\` as the id the path is \`/zarr/v2/latest/{dataset_key}/{group}/{key}\`: 302 to the same group-level key of that dataset's newest version.`,
    pathParams: [group, array, arrayKey],
    answers: [],
    content: CONTENT,
    errors: ERRORS,
    etag: "immutable",
    ranges: true,
    redirects: true,
    check: checkZarrPath,
    handle: answerZarrArrayKey,
  },
  {
    method: "GET",
    path: "/zarr/v2/latest/:dataset/:group/:array/:key",
    operationId: "getZarrLatest",
    cors: RANGE_CORS,
    tag: "Zarr",
    summary: "The newest version's key (302)",
    description: "302 to the same array-level key of the newest published version of a dataset: follow today's data, or pin a version.",
    pathParams: [{ name: "dataset", description: "A dataset key, such as `silo-tmax`.", schema: { type: "string", pattern: VERSION_ID_PATTERN } }, group, array, arrayKey],
    answers: [],
    errors: ERRORS,
    redirects: true,
    check: checkZarrPath,
    handle: answerZarrLatest,
  },
];
