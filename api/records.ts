// Which catalog records a request may see and read (docs/contract.md §1.3), and the immutable form of a record.

import type { Dataset } from "../format/records.js";
import { type VersionView, openVersion } from "../format/versions.js";
import type { Context } from "./context.js";
import { HttpError } from "./errors.js";
import { checkVersionId } from "./params.js";

/** A visible record: published and not restricted. */
export function isVisible(record: Dataset): boolean {
  return record.status === "published" && record.access_level !== "restricted";
}

/** The record without what only the catalog holds: the inspect body and the layers pages' `dataset`. */
export function toImmutableRecord(record: Dataset): Dataset {
  const { status: _status, published_at: _published, ...rest } = record;
  return rest;
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
