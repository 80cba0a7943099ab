// The API reference's tags, in the order a user works, each with when to use it: every route names one
// (RouteSpec.tag), and the OpenAPI document lists the tags, and the operations under each, in this order.

export const TAGS = [
  {
    name: "Discover",
    description:
      "Start here: what the service offers and its limits (capabilities), which dataset versions are published (the catalog, a page at a time), this document, and whether the process is up.",
  },
  {
    name: "Inspect",
    description:
      "Once you hold a version id: its record (units, coverage, sources, license, attribution), its tiles and single cells, a demo version's observations, and which of its dates SILO has revised since (docs/contract.md §8.4).",
  },
  {
    name: "Resolve and query",
    description:
      "The contract's data requests, POSTed as JSON: check one against the contract, find the version and cells that answer it, then receive its rows inline with a provenance manifest (at most 31 days). Acquisition is not enabled: its route answers 503.",
  },
  {
    name: "Series",
    description:
      "For modellers: places or a box over any period, up to SILO's whole archive at a place, in one GET: tidy CSV, JSON with a provenance manifest, an APSIM weather file, or a CF-1.8 NetCDF file (docs/contract.md §8.2).",
  },
  {
    name: "Zarr",
    description:
      "For xarray, GDAL (QGIS, R terra) and zarrita.js: every raster version as two Zarr v2 groups, `maps` and `series`, with consolidated metadata, read lazily with no project code; values are exactly the query route's float32 (docs/contract.md §8.3).",
  },
  {
    name: "OPeNDAP",
    description:
      "For netCDF's own tools (ncdump, nccopy, NCO, CDO, MATLAB, R `ncdf4`, Python `netCDF4`, xarray, Panoply): every raster version as a DAP2 dataset they open by URL, reading only the index ranges they ask (docs/contract.md §8.6).",
  },
] as const;

/** A tag of the API reference, by name. */
export type TagName = (typeof TAGS)[number]["name"];
