// GET capabilities, the OpenAPI document and health (docs/contract.md §1.1, §4): the service's own routes.

import { QUERY_DATA_CLASS, QUERY_SOURCE, QUERY_UNIT, QUERY_VARIABLE } from "../format/records.js";
import type { Answer } from "./answer.js";
import type { Context } from "./context.js";
import { API_VERSION, LIMITS, SPATIAL_SELECTION } from "./contract.js";
import { READ_CORS } from "./cors.js";
import type { RouteSpec } from "./routes.js";

export function answerHealth(ctx: Context): Promise<Answer> {
  const body = {
    service: "service-api",
    status: "ok",
    scope: "process",
    environment: ctx.environment,
    paymentMode: "test",
    capabilities: { requestValidation: true, acquisition: false, payments: false },
  };
  return ctx.answer(JSON.stringify(body), { cache: "no-store" });
}

export function answerCapabilities(ctx: Context): Promise<Answer> {
  const base = ctx.request.baseUrl;
  const body = {
    apiVersion: API_VERSION,
    features: {
      validate: true,
      resolve: true,
      query: true,
      csv: true,
      observations: true,
      layers: true,
      sample: true,
      catalogPagination: true,
      series: true,
      acquisition: false,
      payments: false,
    },
    query: {
      sources: [QUERY_SOURCE],
      variables: [QUERY_VARIABLE],
      dataClasses: [QUERY_DATA_CLASS],
      crs: ["EPSG:4326"],
      temporalResolutions: ["daily"],
      spatialResolutions: ["native"],
      units: { [QUERY_VARIABLE]: [QUERY_UNIT] },
      formats: ["json", "csv"],
      defaultFormat: "json",
      delivery: "inline",
      missingPolicy: "preserve",
      access: "public_demo",
      limits: { ...LIMITS },
      spatialSelection: SPATIAL_SELECTION,
    },
    links: {
      self: `${base}/api/v1/capabilities`,
      health: `${base}/api/health`,
      datasets: `${base}/api/v1/datasets`,
      validate: `${base}/api/v1/data/validate`,
      resolve: `${base}/api/v1/data/resolve`,
      query: `${base}/api/v1/data/query`,
      requests: `${base}/api/v1/data/requests`,
      series: `${base}/api/v1/series`,
      openapi: `${base}/api/v1/openapi.json`,
    },
  };
  return ctx.answer(JSON.stringify(body), { cache: "short" });
}

export function answerOpenApi(ctx: Context): Promise<Answer> {
  return ctx.answer(ctx.openApiText(), { cache: "short" });
}

export const META_ROUTES: RouteSpec[] = [
  {
    method: "GET",
    path: "/api/v1/capabilities",
    operationId: "getCapabilities",
    tag: "Discover",
    absoluteLinks: true,
    cors: READ_CORS,
    summary: "What the service offers",
    description: "Implemented variables, sources, representations, limits and features, and a link to each route.",
    answers: ["capabilities.schema.json"],
    errors: [],
    etag: "short",
    handle: answerCapabilities,
  },
  {
    method: "GET",
    path: "/api/v1/openapi.json",
    operationId: "getOpenApi",
    tag: "Discover",
    cors: READ_CORS,
    summary: "This OpenAPI document",
    description: "This OpenAPI 3.1 description of the interface; `/api/v1/docs` draws it as HTML.",
    answers: [],
    errors: [],
    etag: "short",
    handle: answerOpenApi,
  },
  {
    method: "GET",
    path: "/api/health",
    operationId: "getHealth",
    tag: "Discover",
    cors: READ_CORS,
    summary: "Is the process up",
    description: "Process and configuration status (no database or source check).",
    answers: ["health.schema.json"],
    errors: [],
    handle: answerHealth,
  },
];
