// The catalog (docs/format.md §3): catalog.json, the catalog tree of records, the query candidates and the
// publish manifests, and the one rule that finds a record's leaf (the writer and readers both use it).

import type { Coverage } from "./coverage.js";
import type { DIST_FORMAT, FileEntry, Ref } from "./objects.js";
import type { Dataset } from "./records.js";

/** Records per catalog leaf before it splits. */
export const CATALOG_LEAF_MAX = 64;

/** A candidate version (records.ts isCandidate) that no newer version of its variable shadows (the publish keeps the list). */
export interface Candidate {
  id: string;
  published_at: string;
  coverage: Coverage;
  /** the catalog record of `id`, exactly as its leaf holds it, so a reader of the newest version reads no catalog tree */
  record: Dataset;
}

/** catalog.json: the root of trust, the only mutable file. */
export interface CatalogPointer {
  format: typeof DIST_FORMAT;
  /** the catalog tree's root object (CatalogRoot) */
  catalog: Ref;
  /** the newest publish manifest; manifests chain back through `previous` and together list every file */
  manifest: Ref;
  /** candidates of every variable, in choice order: newest published_at first, ties by id ascending */
  candidates: Candidate[];
  /** the browser explorer: one self-contained page, objects/<aa>/<sha256>.html (absent when a publish stored none) */
  explorer?: Ref;
}

export interface CatalogRoot {
  format: typeof DIST_FORMAT;
  count: number;
  /** leaves in id order; `first` is the smallest id of the leaf */
  leaves: { first: string; count: number; ref: Ref }[];
}

/** Catalog records as GET /api/v1/datasets lists them: the immutable record plus status and published_at. */
export interface CatalogLeaf {
  datasets: Dataset[];
}

/** A publish manifest: the files this publish added, and the manifest before it. */
export interface Manifest {
  format: typeof DIST_FORMAT;
  previous: Ref | null;
  files: FileEntry[];
}

/** The leaf whose id range holds `id`: the last one whose first id is <= id; -1 when id sorts before all. */
export function findLeaf(root: CatalogRoot, id: string): number {
  let lo = 0;
  let hi = root.leaves.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (root.leaves[mid].first <= id) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** The candidates of one variable (API name), in choice order. */
export function candidatesOf(pointer: CatalogPointer, variable: string): Candidate[] {
  return pointer.candidates.filter((c) => Object.keys(c.record.variables)[0] === variable);
}
