// Which catalog records a request may see and read (docs/contract.md §1.3, §3.4), and the immutable form of a record.

import { GRID, windowTransform } from "../format/grid.js";
import type { Dataset } from "../format/records.js";
import { type VersionView, openVersion } from "../format/versions.js";
import type { Context } from "./context.js";
import { HttpError } from "./errors.js";
import { checkVersionId } from "./parameters.js";

/** A visible record: published and not restricted. */
export function isVisible(record: Dataset): boolean {
  return record.status === "published" && record.access_level !== "restricted";
}

/** The record without what only the catalog holds: the inspect body and the layers pages' `dataset`. */
export function toImmutableRecord(record: Dataset): Dataset {
  const { status: _status, published_at: _published, ...rest } = record;
  return rest;
}

/**
 * The candidate's grid must be the north-up regular EPSG:4326 grid whose arithmetic format/grid.ts does: the SILO
 * grid itself (docs/contract.md §3.4, unsupported_grid). Any other grid cannot be selected by these cell rules.
 */
export function isSupportedGrid(record: Dataset): boolean {
  const support = record.spatial_support as { crs?: unknown; grid_transform?: unknown };
  const transform = support.grid_transform;
  if (support.crs !== GRID.crs || !Array.isArray(transform) || transform.length !== 6) return false;
  const [a, b, , d, e] = transform as number[];
  if (a <= 0 || b !== 0 || d !== 0 || e >= 0) return false;
  return windowTransform(0, 0).every((x, i) => x === transform[i]);
}

export function notFound(what: string): HttpError {
  return new HttpError({ kind: "not_found", message: `${what} is not published here; GET /api/v1/datasets lists what is.` });
}

/** A visible version's catalog record (paid included: listed and inspectable), else 404; 503 when it failed. */
export async function findVisibleRecord(ctx: Context, id: string): Promise<Dataset> {
  checkVersionId(id);
  const record = await ctx.snapshot.findRecord(id);
  if (!record || !isVisible(record)) throw notFound(`Dataset version ${id}`);
  ctx.assertAvailable(id);
  return record;
}

/** A version whose data may be read: published, demo, not restricted, verified so far. */
export async function openData(ctx: Context, id: string): Promise<VersionView> {
  const record = await findVisibleRecord(ctx, id);
  if (record.access_level !== "demo") throw notFound(`Dataset version ${id}`);
  return openVersion(ctx.archive, record);
}
