// Which catalog records a client may see, and the immutable form of a record.

import type { Dataset } from "../schemas/layout.js";

/** A visible record: published and not restricted (interface.md 3.1; decisions.md 4). */
export function isVisible(record: Dataset): boolean {
  return record.status === "published" && record.access_level !== "restricted";
}

/** The record without what only the catalog holds: the inspect body and the layers pages' `dataset`. */
export function toImmutableRecord(record: Dataset): Dataset {
  const { status: _status, published_at: _published, ...rest } = record;
  return rest;
}
