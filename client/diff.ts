// What changed between two versions a mirror publishes: the dates whose cells differ, with the sha256 of their
// source files on each side, found by walking both index trees and skipping every year and month they share
// (format/diff.ts): a few index pages per changed month, whatever the archive's length.

import { isVisible } from "../api/records.js";
import { type ChangeKind, type IndexSide, diffIndexTrees } from "../format/diff.js";
import type { Ref } from "../format/objects.js";
import type { Snapshot } from "../format/snapshot.js";
import type { DayEntry } from "../format/version-index.js";
import { VersionReadError, openVersion } from "../format/versions.js";

/** One side of a changed date: the sha256 of its canonical cells and of the source files it was published from. */
export interface DateSide {
  cells: string;
  sources: string[];
}

/** A date whose cells differ between the two versions (or that only one of them holds). */
export interface DateDiff {
  date: string;
  kind: ChangeKind;
  old: DateSide | null;
  new: DateSide | null;
}

const sideOf = (day: DayEntry | null): DateSide | null => (day ? { cells: day.cells, sources: day.sources.map((s) => s.sha256) } : null);

/** A failure of a version's bytes as the client reports it: the IntegrityError or StorageError naming the piece's URL. */
function unwrap(err: unknown): unknown {
  return err instanceof VersionReadError ? err.cause : err;
}

/** The index side of a visible raster version of the snapshot. */
async function openSide(snapshot: Snapshot, id: string): Promise<IndexSide> {
  const record = await snapshot.findRecord(id);
  if (!record || !isVisible(record)) throw new RangeError(`dataset version ${id} is not published on this mirror; GET /api/v1/datasets lists what is`);
  const view = await openVersion(snapshot.archive, record).catch((err) => Promise.reject(unwrap(err)));
  if (view.kind !== "raster") throw new RangeError(`dataset version ${id} is a table of observations, not a raster version: it has no dates to compare`);
  return { years: view.index.years, readPage: <T>(ref: Ref) => snapshot.archive.readJson<T>(ref) };
}

/** The dates whose cells differ between versions `oldId` and `newId` of `snapshot`, in date order. */
export async function* diffVersions(snapshot: Snapshot, oldId: string, newId: string): AsyncGenerator<DateDiff> {
  const [older, newer] = await Promise.all([openSide(snapshot, oldId), openSide(snapshot, newId)]);
  for await (const change of diffIndexTrees(older, newer)) {
    yield { date: change.date, kind: change.kind, old: sideOf(change.old), new: sideOf(change.new) };
  }
}
