// Query parameters and path ids of the GET routes (docs/contract.md §1.1, §3.3, §4): checked once, typed after.

import { LIMITS } from "./contract.js";
import { HttpError } from "./errors.js";

const VERSION_ID = /^[a-zA-Z0-9_-]{1,128}$/;
/** The bounds of a `tile` query parameter, on layers and sample alike (docs/contract.md §1.1). */
export const TILE_PARAM = { minLength: 1, maxLength: 128 } as const;

export function rejectParameter(name: string, code: string, message: string): HttpError {
  return new HttpError({ kind: "invalid_parameters", message: `Query parameter ${name} ${message}.`, issues: [{ code, path: [name], message }] });
}

/** One value of a query parameter; a repeated parameter is ambiguous and rejected. */
export function readParam(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name);
  if (values.length > 1) throw rejectParameter(name, "repeated", "is given more than once; give it once");
  return values[0];
}

export function checkVersionId(id: string): void {
  if (!VERSION_ID.test(id)) {
    const message = "must match ^[a-zA-Z0-9_-]{1,128}$: use an id GET /api/v1/datasets lists";
    throw new HttpError({ kind: "invalid_parameters", message: `The dataset id ${message}.`, issues: [{ code: "pattern", path: ["id"], message }] });
  }
}

const LIMIT_RULE = `must be an integer from 1 to ${LIMITS.maxPageLimit} (default ${LIMITS.defaultPageLimit})`;
const CELL_INDEX_RULE = (name: string) => `an integer from 0 to the tile's ${name === "row" ? "height" : "width"} - 1 (the zero-based ${name === "row" ? "row" : "column"} within the tile)`;

export interface PageConfig {
  limit: number;
  after: string | null;
}

/** limit 1..1000 (default 100) and after <= 256 characters (docs/contract.md §4.3, §4). */
export function readPageParams(query: URLSearchParams): PageConfig {
  const limitSpec = readParam(query, "limit");
  let limit: number = LIMITS.defaultPageLimit;
  if (limitSpec !== undefined) {
    if (!/^[0-9]{1,7}$/.test(limitSpec)) throw rejectParameter("limit", "type", LIMIT_RULE);
    limit = Number(limitSpec);
    if (limit < 1 || limit > LIMITS.maxPageLimit) throw rejectParameter("limit", "out_of_range", LIMIT_RULE);
  }
  const after = readParam(query, "after") ?? null;
  if (after !== null && after.length > LIMITS.maxCursorLength) {
    throw rejectParameter("after", "length", `must be at most ${LIMITS.maxCursorLength} characters: pass the nextCursor of the preceding page as it came, or omit after for the first page`);
  }
  return { limit, after };
}

export function readTileParam(query: URLSearchParams, required: boolean): string | null {
  const tile = readParam(query, "tile") ?? null;
  if (tile === null) {
    if (required) throw rejectParameter("tile", "required", "is required: a tile id from GET /api/v1/layers/{id}");
    return null;
  }
  // an empty tile= is the same 400 on both routes: on layers it is no tile id, not an omitted parameter
  if (tile.length < TILE_PARAM.minLength || tile.length > TILE_PARAM.maxLength) {
    throw rejectParameter("tile", "length", `must be a tile id of ${TILE_PARAM.minLength} to ${TILE_PARAM.maxLength} characters: use one GET /api/v1/layers/{id} lists`);
  }
  return tile;
}

/** A non-negative integer query parameter of sample (docs/contract.md §1.1); missing or malformed is 400. */
export function readCellIndex(query: URLSearchParams, name: string): number {
  const spec = readParam(query, name);
  if (spec === undefined || spec === "") throw rejectParameter(name, "required", `is required: ${CELL_INDEX_RULE(name)}`);
  if (!/^[0-9]+$/.test(spec)) throw rejectParameter(name, "type", `must be ${CELL_INDEX_RULE(name)}`);
  return Number(spec);
}

export function rejectCursor(): HttpError {
  return rejectParameter("after", "invalid_cursor", "is not a cursor this service issued for this list: pass the nextCursor of the preceding page as it came, or omit after for the first page");
}
