// The catalog (docs/format.md §3): catalog.json, the catalog tree of records, the query candidates and the
// publish manifests; and a Snapshot, one state of the dist as a reader sees it.

import type { Archive } from "./archive.js";
import type { Coverage } from "./coverage.js";
import type { DIST_FORMAT, FileEntry, Ref } from "./objects.js";
import type { Dataset } from "./records.js";

/** Records per catalog leaf before it splits. */
export const CATALOG_LEAF_MAX = 64;

/** A query-compatible version that no newer version shadows (the publish keeps the list). */
export interface Candidate {
  id: string;
  published_at: string;
  coverage: Coverage;
}

/** catalog.json: the root of trust, the only mutable file. */
export interface CatalogPointer {
  format: typeof DIST_FORMAT;
  /** the catalog tree's root object (CatalogRoot) */
  catalog: Ref;
  /** the newest publish manifest; manifests chain back through `previous` and together list every file */
  manifest: Ref;
  /** query candidates, in choice order: newest published_at first, ties by id ascending */
  candidates: Candidate[];
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

/** One state of the dist: the catalog.json a request started with, and everything reachable from it. */
export class Snapshot {
  constructor(
    readonly archive: Archive,
    readonly pointer: CatalogPointer,
    /** sha256 of catalog.json */
    readonly sha256: string,
  ) {}

  root(): Promise<CatalogRoot> {
    return this.archive.readJson<CatalogRoot>(this.pointer.catalog);
  }

  /** The catalog record of `id` (with status and published_at), or null. */
  async findRecord(id: string): Promise<Dataset | null> {
    const root = await this.root();
    const at = findLeaf(root, id);
    if (at < 0) return null;
    const leaf = await this.archive.readJson<CatalogLeaf>(root.leaves[at].ref);
    return leaf.datasets.find((d) => d.id === id) ?? null;
  }

  /** Up to `limit` records with id > `after` that `keep` accepts, in id order, and whether more follow. */
  async listRecords(after: string | null, limit: number, keep: (d: Dataset) => boolean): Promise<{ records: Dataset[]; more: boolean }> {
    const root = await this.root();
    const records: Dataset[] = [];
    for (let at = after === null ? 0 : Math.max(0, findLeaf(root, after)); at < root.leaves.length; at++) {
      const leaf = await this.archive.readJson<CatalogLeaf>(root.leaves[at].ref);
      for (const d of leaf.datasets) {
        if ((after !== null && d.id <= after) || !keep(d)) continue;
        if (records.length === limit) return { records, more: true };
        records.push(d);
      }
    }
    return { records, more: false };
  }
}
