// OPeNDAP's entries of the route table (docs/contract.md §8.6): every raster version a DAP2 dataset at
// /opendap/<id>, the newest of a dataset at /opendap/latest/<dataset_key>, under the OPeNDAP tag.

import { MAX_FILE_VALUES } from "../contract.js";
import { READ_CORS } from "../cors.js";
import { type RouteSpec, defineRoute } from "../routes.js";
import { type DapAsk, SUFFIXES, answerDap, answerDapLatest, checkDapPath, DAP_ERRORS } from "./answers.js";

const SUFFIX_TEXT = SUFFIXES.map((s) => `\`.${s}\``).join(", ");

const CONTENT = {
  "text/plain": { schema: { type: "string", description: "`.dds`, `.das` and `.ver`: DAP2 text." } },
  "text/html": { schema: { type: "string", description: "`.html` and `.info`: pages for a person." } },
  "application/octet-stream": { schema: { type: "string", description: "`.dods`: the constrained DDS, `Data:`, then the values as XDR (big-endian)." } },
};

const CONSTRAINT =
  "A `.dds` or `.dods` takes a DAP2 constraint as its query: projections, comma-separated, each a variable (`time`, `lat`, `lon`, `crs`, the grid by the variable's API name) or a grid member (`air_temperature_max.air_temperature_max`, `.time`, `.lat`, `.lon`), with one hyperslab a dimension (`[i]`, `[start:stop]`, `[start:stride:stop]`, inclusive), brackets percent-encoded or not. Selections (`&...`), functions, unknown names and indices past the end are 400; a `.dods` of over " +
  `${MAX_FILE_VALUES} values is 413, naming hyperslabs that fit. Errors are DAP2 error bodies (\`Error { code = ...; message = "..."; };\`, \`Content-Description: dods-error\`).`;

export const DAP_ROUTES: RouteSpec[] = [
  defineRoute<DapAsk>({
    method: "GET",
    path: "/opendap/:file",
    operationId: "getOpendap",
    cors: READ_CORS,
    tag: "OPeNDAP",
    computed: true,
    summary: "A version as a DAP2 dataset",
    description: `A version as an OPeNDAP (DAP2) dataset: its structure (.dds), attributes (.das), values (.dods) and pages (.html, .info, .ver). Give a DAP client \`<server>/opendap/<version id>\`; it asks the suffixes itself. Pinned answers never change: an ETag and \`Cache-Control: immutable\`. ${CONSTRAINT}`,
    pathParams: [{ name: "file", description: `A version id and a suffix: ${SUFFIX_TEXT}.`, schema: { type: "string", pattern: `^[^/]+\\.(${SUFFIXES.join("|")})$` } }],
    answers: [],
    content: CONTENT,
    errors: ["invalid_parameters", "not_found", "response_too_large"],
    etag: "immutable",
    bounds: { values: MAX_FILE_VALUES },
    errorForm: DAP_ERRORS,
    absoluteLinks: true,
    check: checkDapPath,
    handle: answerDap,
  }),
  defineRoute<DapAsk>({
    method: "GET",
    path: "/opendap/latest/:file",
    operationId: "getOpendapLatest",
    cors: READ_CORS,
    tag: "OPeNDAP",
    summary: "The newest version of a dataset",
    description: "302 to the same answer of a dataset's newest version: follow today's data, or pin a version. `/opendap/latest/<dataset_key>` (such as `silo-tmax`) is the newest published version of that dataset; each suffix and its constraint answer 302 to the pinned version's same URL, which `Service-Dataset-Version` names. A cookie (`opendap-<dataset_key>`, a day) keeps one client's session on the version it began with: netCDF-C asks the alias for every request of an open dataset, and a publish between two of them must not mix versions.",
    pathParams: [{ name: "file", description: `A dataset key and a suffix: ${SUFFIX_TEXT}.`, schema: { type: "string", pattern: `^[^/]+\\.(${SUFFIXES.join("|")})$` } }],
    answers: [],
    errors: ["invalid_parameters", "not_found"],
    redirects: true,
    readsCookie: true,
    errorForm: DAP_ERRORS,
    check: checkDapPath,
    handle: answerDapLatest,
  }),
];
