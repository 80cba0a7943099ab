// Constants of the interface contract that the API computes with (docs/contract.md §1, §3.3, §4).

export const API_VERSION = "1.0.0";
export const QUERY_VERSION = "native-cell-centers-v1";
export const SPATIAL_SELECTION = "cell_center_in_bbox_west_south_inclusive_east_north_exclusive";

/** The contract's limits; capabilities publish them under these names (docs/contract.md §1.2, §3.3). */
export const LIMITS = {
  maxDays: 31,
  maxCells: 10000,
  maxRequestBytes: 16384,
  maxResponseBytes: 1000000,
  defaultPageLimit: 100,
  maxPageLimit: 1000,
  maxCursorLength: 256,
  maxTileSide: 256,
  maxTileCells: 65536,
} as const;

/**
 * Values in one file of values beside the contract (docs/contract.md §8.2, §8.6): a series NetCDF answer, an OPeNDAP
 * .dods answer. 40 MB of float32: a few at once fit a small server's memory.
 */
export const MAX_FILE_VALUES = 10_000_000;
