// The listings' entries of the route table (docs/contract.md §1.1, §4.3, §8.4): the catalog, a version's record,
// its observations, its revised dates, its tiles and one cell.

import { READ_CORS } from "../cors.js";
import type { ErrorKind } from "../errors.js";
import { queryParameters } from "../parameters.js";
import { type RouteSpec, defineRoute } from "../routes.js";
import { answerCatalog, answerInspect, answerObservations } from "./datasets.js";
import { answerLayers, answerSample } from "./layers.js";
import { LAYERS, PAGE, REVISIONS, SAMPLE } from "./parameters.js";
import { answerRevisions } from "./revisions.js";

const PAGE_ERRORS: ErrorKind[] = ["invalid_parameters", "not_found", "response_too_large"];

export const LISTING_ROUTES: RouteSpec[] = [
  defineRoute({
    method: "GET",
    path: "/api/v1/datasets",
    operationId: "listDatasets",
    tag: "Discover",
    cors: READ_CORS,
    computed: true,
    summary: "List the published versions",
    description: "Published catalog records in stable id order (restricted datasets omitted), a page at a time: follow `nextCursor` until it is null.",
    ...queryParameters(PAGE),
    answers: ["catalog-response.schema.json"],
    errors: ["invalid_parameters", "response_too_large"],
    etag: "short",
    handle: answerCatalog,
  }),
  defineRoute({
    method: "GET",
    path: "/api/v1/datasets/:id",
    operationId: "getDataset",
    tag: "Inspect",
    cors: READ_CORS,
    computed: true,
    summary: "A version's record",
    description: "One immutable dataset version: units, coverage, source hashes, license, attribution, spatial support.",
    answers: ["dataset-response.schema.json"],
    errors: ["invalid_parameters", "not_found", "response_too_large"],
    etag: "immutable",
    handle: answerInspect,
  }),
  defineRoute({
    method: "GET",
    path: "/api/v1/datasets/:id/observations",
    operationId: "listObservations",
    tag: "Inspect",
    cors: READ_CORS,
    computed: true,
    summary: "A version's observations",
    description: "Observations of a public demo version in stable id order, a page at a time: follow `nextCursor` until it is null.",
    ...queryParameters(PAGE),
    answers: ["observations-page.schema.json"],
    errors: PAGE_ERRORS,
    etag: "immutable",
    handle: answerObservations,
  }),
  defineRoute({
    method: "GET",
    path: "/api/v1/datasets/:id/revisions",
    operationId: "getRevisions",
    tag: "Inspect",
    cors: READ_CORS,
    computed: true,
    summary: "Dates revised since a version",
    description:
      "Beyond the contract (docs/contract.md §8.4; docs/clients.md, \"Revised days\"): which dates of a version have been revised since, the dates whose cells differ from the newest version of its dataset (or `against`). SILO rewrites recent days every night as late station reports arrive; each revision is a new version, and a pinned version never changes. This compares a pinned version with the newest of its dataset, or with the version `against` names, as inclusive date ranges: `revised` (both hold the date, with other cells), `added` (only the other holds it), `removed` (only the pinned one does).",
    ...queryParameters(REVISIONS),
    answers: ["revisions-response.schema.json"],
    errors: ["invalid_parameters", "not_found", "response_too_large"],
    etag: "short",
    handle: answerRevisions,
  }),
  defineRoute({
    method: "GET",
    path: "/api/v1/layers/:id",
    operationId: "getLayers",
    tag: "Inspect",
    cors: READ_CORS,
    computed: true,
    summary: "A version's tiles, or one tile",
    description: "Without `tile`: a page of tile metadata, date by date. With `tile`: that tile with its cells.",
    ...queryParameters(LAYERS),
    answers: ["layers-page.schema.json", "tile-response.schema.json"],
    errors: PAGE_ERRORS,
    etag: "immutable",
    handle: answerLayers,
  }),
  defineRoute({
    method: "GET",
    path: "/api/v1/layers/:id/sample",
    operationId: "getSample",
    tag: "Inspect",
    cors: READ_CORS,
    computed: true,
    summary: "One cell of a tile",
    description: "One raster cell by tile id and zero-based row and column within the tile.",
    ...queryParameters(SAMPLE),
    answers: ["pixel-sample.schema.json"],
    errors: PAGE_ERRORS,
    etag: "immutable",
    handle: answerSample,
  }),
];
