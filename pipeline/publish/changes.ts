// What a record says beside its data: the version it was built from and the dates it added, revised and removed
// relative to it (metadata.built_from, metadata.changes), and how to cite it (metadata.citation). None of it
// enters the content hash or the id (docs/format.md §6): they hash cells only.

import type { Archive } from "../../format/archive.js";
import { DateRanges, type DateRange, type IndexSide, boundRanges, diffIndexTrees, heldRanges } from "../../format/diff.js";
import type { Dataset } from "../../format/records.js";
import type { RasterView } from "../../format/versions.js";
import type { IndexTree } from "./index-tree.js";

/**
 * Ranges per list at most: a record stays bounded whatever the number of days changed. Beyond it the closest
 * ranges are merged (exact: false), so the list still covers every changed date; `npm run mirror -- diff` lists
 * the dates themselves.
 */
export const CHANGE_RANGES_MAX = 64;

/** metadata.changes: the dates whose cells differ from the version the record was built from. */
export interface VersionChanges {
  added: DateRange[];
  revised: DateRange[];
  removed: DateRange[];
  /** false when a list passed CHANGE_RANGES_MAX ranges and was coarsened */
  exact: boolean;
}

export interface VersionNotes {
  /** the version this one was built from (the base of the publish), or null */
  built_from: string | null;
  changes: VersionChanges;
}

function bounded(lists: Record<"added" | "revised" | "removed", DateRange[]>): VersionChanges {
  const [added, revised, removed] = [lists.added, lists.revised, lists.removed].map((r) => boundRanges(r, CHANGE_RANGES_MAX));
  return { added: added.ranges, revised: revised.ranges, removed: removed.ranges, exact: added.exact && revised.exact && removed.exact };
}

/**
 * The notes of a new version whose index tree is written: against its base, by walking both trees and skipping
 * what they share (a daily publish reads a year page and a month page of each); without a base, every held date
 * is added.
 */
export async function describeChanges(base: RasterView | null, archive: Archive, tree: IndexTree): Promise<VersionNotes> {
  if (!base) {
    const { first, last, gaps } = tree.coverage;
    return { built_from: null, changes: bounded({ added: heldRanges(first, last, gaps), revised: [], removed: [] }) };
  }
  const older: IndexSide = { years: base.index.years, readPage: (ref) => base.readJson(ref) };
  const newer: IndexSide = { years: tree.years, readPage: (ref) => archive.readJson(ref) };
  const lists = { added: new DateRanges(), revised: new DateRanges(), removed: new DateRanges() };
  for await (const change of diffIndexTrees(older, newer)) lists[change.kind].add(change.date);
  return { built_from: base.record.id, changes: bounded({ added: lists.added.ranges, revised: lists.revised.ranges, removed: lists.removed.ranges }) };
}

const sentence = (text: string) => (/[.!?]$/.test(text.trim()) ? text.trim() : `${text.trim()}.`);

/**
 * metadata.citation of a published record: title, version id, content hash, publish time, attribution and
 * license, in one text. Made when published_at is stamped (the last step of a publish, docs/publishing.md "What a publish writes").
 */
export function citeVersion(record: Dataset): string {
  return [
    sentence(record.title),
    `Version ${record.id}, content SHA-256 ${record.content_sha256}, published ${record.published_at}.`,
    sentence(record.attribution),
    sentence(`License: ${record.license}`),
  ].join(" ");
}
