// The interface's one route table: the service's own routes and every family's (the OpenAPI document lists them under
// their tags, api/tags.ts, in this order within a tag). The one file of api/ that imports every room: families never
// import each other, so what one needs of another is handed to it here (the query's 422s name the series call that
// answers them).

import { DAP_ROUTES } from "./dap/routes.js";
import { ACQUISITION_ROUTES, queryRoutes } from "./query/routes.js";
import { LISTING_ROUTES } from "./listings/routes.js";
import { META_ROUTES } from "./meta.js";
import type { RouteTable } from "./routes.js";
import { describeSeriesCall } from "./series/hint.js";
import { SERIES_ROUTES } from "./series/route.js";
import { ZARR_ROUTES } from "./zarr/routes.js";

export const ROUTES: RouteTable = [...META_ROUTES, ...LISTING_ROUTES, ...queryRoutes(describeSeriesCall), ...SERIES_ROUTES, ...ACQUISITION_ROUTES, ...ZARR_ROUTES, ...DAP_ROUTES];
