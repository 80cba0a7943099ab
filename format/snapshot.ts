// One state of the dist as a reader sees it: the catalog.json a request started with, and the records it reaches.

import type { Archive } from "./archive.js";
import { type CatalogLeaf, type CatalogPointer, type CatalogRoot, findLeaf } from "./catalog.js";
import type { Dataset } from "./records.js";

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
    const candidate = this.pointer.candidates.find((c) => c.id === id);
    if (candidate) return candidate.record;
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
