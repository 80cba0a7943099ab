// The last steps of a publish: new versions into the catalog tree, the query candidates, the publish manifest,
// then catalog.json swapped in one rename (the only file ever replaced): readers see old or new, never half.

import { join } from "node:path";
import { Archive, CatalogError } from "../../format/archive.js";
import { Snapshot } from "../../format/snapshot.js";
import { LocalStorage, nodePlatform } from "../../format/local.js";
import { CATALOG_LEAF_MAX, type Candidate, type CatalogLeaf, type CatalogPointer, type CatalogRoot, type Manifest } from "../../format/catalog.js";
import { type Coverage, shadows } from "../../format/coverage.js";
import { CATALOG_FILE, DIST_FORMAT, type FileEntry, type Ref } from "../../format/objects.js";
import { type Dataset, isCandidate } from "../../format/records.js";
import { assertValid } from "../../schemas/validate.js";
import { StoreError } from "../errors.js";
import type { ObjectStore } from "./objects.js";

/** The dist as last published (null for an empty folder); a damaged catalog.json stops the publish. */
export async function readPublished(dist: string): Promise<Snapshot | null> {
  const archive = new Archive(new LocalStorage(dist, { reads: "threadpool" }), nodePlatform);
  try {
    const { pointer, sha256 } = await archive.readPointer();
    return new Snapshot(archive, pointer, sha256);
  } catch (err) {
    if (err instanceof CatalogError && err.missing) return null;
    throw new StoreError(join(dist, CATALOG_FILE), "catalog", `${(err as Error).message}; run \`make verify DIST=${dist}\``);
  }
}

async function writeLeaf(store: ObjectStore, datasets: Dataset[]): Promise<CatalogRoot["leaves"][number]> {
  const leaf: CatalogLeaf = { datasets };
  assertValid("dist-catalog-leaf.schema.json", leaf, "catalog leaf");
  return { first: datasets[0].id, count: datasets.length, ref: await store.putJson(leaf) };
}

/**
 * The catalog tree with `records` added in id order: only the leaves they land in are rewritten (split in
 * two when full), so a publish costs one leaf and the root however many versions the dist holds.
 */
export async function addToCatalog(store: ObjectStore, previous: Snapshot | null, records: Dataset[]): Promise<CatalogRoot> {
  const root = previous ? await previous.root() : { format: DIST_FORMAT, count: 0, leaves: [] };
  const leaves = [...root.leaves];
  const touched = new Map<number, Dataset[]>();
  for (const record of [...records].sort((a, b) => (a.id < b.id ? -1 : 1))) {
    let at = leaves.findLastIndex((l) => l.first <= record.id);
    if (at < 0) at = 0;
    let list = touched.get(at);
    if (!list) {
      list = leaves[at] ? [...(await previous!.archive.readJson<CatalogLeaf>(leaves[at].ref)).datasets] : [];
      touched.set(at, list);
    }
    if (list.some((d) => d.id === record.id)) throw new StoreError(record.id, "catalog", "is already in the catalog");
    list.push(record);
    list.sort((a, b) => (a.id < b.id ? -1 : 1));
  }
  // Rewrite touched leaves from the last, so earlier indexes stay valid while leaves split.
  for (const at of [...touched.keys()].sort((a, b) => b - a)) {
    const list = touched.get(at)!;
    // balanced parts: a split leaves room, so appending in id order does not split on every publish
    const size = Math.ceil(list.length / Math.ceil(list.length / CATALOG_LEAF_MAX));
    const parts: Dataset[][] = [];
    for (let i = 0; i < list.length; i += size) parts.push(list.slice(i, i + size));
    const written = [];
    for (const part of parts) written.push(await writeLeaf(store, part));
    leaves.splice(at, leaves[at] ? 1 : 0, ...written);
  }
  const next: CatalogRoot = { format: DIST_FORMAT, count: root.count + records.length, leaves };
  assertValid("dist-catalog-root.schema.json", next, "catalog root");
  return next;
}

/** Choice order (docs/contract.md §3): newest published_at first, ties by id ascending. */
function compareCandidates(a: Candidate, b: Candidate): number {
  if (a.published_at !== b.published_at) return a.published_at < b.published_at ? 1 : -1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The query candidates of a catalog, each with its record. */
export function currentCandidates(previous: Snapshot | null): Candidate[] {
  return previous ? [...previous.pointer.candidates] : [];
}

/**
 * The candidates after adding `fresh`: in choice order, without any version that a version of the same variable
 * before it shadows.
 */
export function updateCandidates(current: Candidate[], fresh: { record: Dataset; coverage: Coverage }[]): Candidate[] {
  const all = [...current];
  for (const { record, coverage } of fresh) {
    if (isCandidate(record)) all.push({ id: record.id, published_at: record.published_at!, coverage, record });
  }
  all.sort(compareCandidates);
  const variableOf = (c: Candidate) => Object.keys(c.record.variables)[0];
  const kept: Candidate[] = [];
  for (const c of all) if (!kept.some((k) => variableOf(k) === variableOf(c) && shadows(k.coverage, c.coverage))) kept.push(c);
  return kept;
}

/** What catalog.json names besides the manifest: the catalog tree, the candidates and the explorer page. */
export interface CatalogParts {
  catalog: CatalogRoot;
  candidates: Candidate[];
  explorer: Ref | null;
  /** files the manifest lists besides what this store added (a prune's new chain lists every file it keeps) */
  kept?: FileEntry[];
}

/**
 * The manifest of this publish (what it added), chained to the previous one (a prune starts a new chain: its
 * manifest lists every file it keeps), then catalog.json swapped in.
 */
export async function writeCatalog(store: ObjectStore, dist: string, previousManifest: Ref | null, parts: CatalogParts): Promise<CatalogPointer> {
  store.stage = "catalog";
  const catalog = await store.putJson(parts.catalog);
  store.stage = "manifest";
  const manifest: Manifest = {
    format: DIST_FORMAT,
    previous: previousManifest,
    files: [...store.added, ...(parts.kept ?? [])].sort((a, b) => (a.path < b.path ? -1 : 1)),
  };
  assertValid("dist-manifest.schema.json", manifest, "publish manifest");
  // the manifest lists this publish's files, so it cannot list a copy of itself: no .br beside it
  const pointer: CatalogPointer = {
    format: DIST_FORMAT,
    catalog,
    manifest: await store.putJson(manifest, false),
    candidates: parts.candidates,
    ...(parts.explorer ? { explorer: parts.explorer } : {}),
  };
  assertValid("dist-catalog-pointer.schema.json", pointer, CATALOG_FILE);
  // durable: every object it names is written; the new catalog must be on disk before it replaces the old
  await store.swapCatalog(JSON.stringify(pointer));
  return pointer;
}
