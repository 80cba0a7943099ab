// `make verify`: check a dist as a mirror operator would: every file the publish manifests list, then every
// version's tree down to each block's cells and its series tier down to each chunk, shared objects checked once
// and reported per version.

import { readdir } from "node:fs/promises";
import { join, relative } from "node:path";
import { Archive } from "../../format/archive.js";
import { Snapshot } from "../../format/snapshot.js";
import { type RasterView, openVersion } from "../../format/versions.js";
import { LocalStorage, nodePlatform } from "../../format/local.js";
import { canonicalizeMissing } from "../../format/cells.js";
import { sha256Hex } from "../../format/hash.js";
import type { CatalogLeaf, CatalogPointer, CatalogRoot, Manifest } from "../../format/catalog.js";
import { CATALOG_FILE, type Ref, objectPath } from "../../format/objects.js";
import { type Dataset, versionId } from "../../format/records.js";
import { type MonthPage, type YearPage, rasterContentText } from "../../format/version-index.js";
import { describeError } from "../errors.js";
import { hashFile } from "../files/write.js";
import { PENDING_FILE, readUnreachable } from "../store/pending.js";
import { DIST_LOCK } from "../store/lock.js";
import { SOURCE_CACHE_DIR } from "../publish/source-cache.js";
import { isSameSummary, summarizeDays, summarizeNodes } from "../../format/summaries.js";
import { verifySeries } from "./verify-series.js";

export interface VersionReport {
  id: string;
  days: number;
  /** objects of this version checked here for the first time, and those already checked for a version above */
  objects: number;
  shared: number;
  problems: string[];
}

export interface VerifyReport {
  files: number;
  bytes: number;
  manifests: number;
  versions: VersionReport[];
  problems: string[]; // problems of the dist as a whole (catalog.json, manifests, listed files)
  unlisted: string[]; // files no manifest lists (debris of an interrupted publish, or strays)
  pruned: string[]; // files a prune found unreachable, deleted by a later prune after its grace period
}

async function listFiles(root: string, dir = root): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await listFiles(root, path)));
    else out.push(relative(root, path).split("\\").join("/"));
  }
  return out;
}

export async function verifyDist(dist: string, onProgress: (text: string) => void = () => {}): Promise<VerifyReport> {
  const archive = new Archive(new LocalStorage(dist, { reads: "threadpool" }), nodePlatform, { cacheBytes: 16 << 20 });
  const report: VerifyReport = { files: 0, bytes: 0, manifests: 0, versions: [], problems: [], unlisted: [], pruned: [] };
  const listed = new Set<string>([CATALOG_FILE]);
  try {
    let pointer: CatalogPointer;
    let sha256: string;
    try {
      ({ pointer, sha256 } = await archive.readPointer());
    } catch (err) {
      report.problems.push(describeError(err));
      return report;
    }
    await verifyManifests(archive, dist, pointer.manifest, { report, listed }, onProgress);
    await verifyVersions(archive, pointer.catalog, report, onProgress);
    await verifyCandidateRecords(new Snapshot(archive, { ...pointer, candidates: [] }, sha256), pointer, report);
    const pending = await readUnreachable(dist);
    // the writers' own files are in no manifest: the lock, the pending list, the publish's memories of its sources
    const unlisted = (await listFiles(dist)).filter((p) => !listed.has(p) && p !== DIST_LOCK.name && p !== PENDING_FILE && !p.startsWith(`${SOURCE_CACHE_DIR}/`)).sort();
    report.unlisted = unlisted.filter((p) => !pending.has(p));
    report.pruned = unlisted.filter((p) => pending.has(p));
    return report;
  } finally {
    await archive.storage.close?.();
  }
}

/** A record catalog.json carries with a candidate is exactly the record of its catalog leaf. */
async function verifyCandidateRecords(tree: Snapshot, pointer: CatalogPointer, report: VerifyReport): Promise<void> {
  for (const c of pointer.candidates) {
    try {
      const record = await tree.findRecord(c.id);
      if (JSON.stringify(record) !== JSON.stringify(c.record)) report.problems.push(`${CATALOG_FILE}: the record of candidate ${c.id} differs from its catalog leaf's`);
    } catch (err) {
      report.problems.push(describeError(err));
    }
  }
}

interface ManifestCheck {
  report: VerifyReport;
  /** paths of every file a manifest lists, collected */
  listed: Set<string>;
}

/** 1. Every file every publish added, by the manifest chain (newest first); `listed` collects their paths. */
async function verifyManifests(archive: Archive, dist: string, newest: Ref, check: ManifestCheck, onProgress: (text: string) => void): Promise<void> {
  const { report, listed } = check;
  for (let ref: Ref | null = newest; ref; ) {
    listed.add(objectPath(ref.sha256, "json"));
    let manifest: Manifest;
    try {
      manifest = await archive.readJson<Manifest>(ref);
    } catch (err) {
      report.problems.push(`manifest chain broken: ${describeError(err)}`);
      return;
    }
    report.manifests++;
    for (const f of manifest.files) {
      // newest first: a path a later publish listed again is checked once
      if (listed.has(f.path)) continue;
      listed.add(f.path);
      const sha = await hashFile(join(dist, f.path)).catch(() => null);
      if (sha === null) report.problems.push(`${f.path}: missing`);
      else if (sha !== f.sha256) report.problems.push(`${f.path}: sha256 ${sha}, its manifest says ${f.sha256}`);
      else {
        report.files++;
        report.bytes += f.size;
      }
      if (report.files % 1000 === 0) onProgress(`verified ${report.files} files`);
    }
    ref = manifest.previous;
  }
}

/** 2. Every version's tree, checked for what readers rely on; objects shared by versions checked once. */
async function verifyVersions(archive: Archive, catalog: Ref, report: VerifyReport, onProgress: (text: string) => void): Promise<void> {
  const seen = new Set<string>();
  let root: CatalogRoot;
  try {
    root = await archive.readJson<CatalogRoot>(catalog);
  } catch (err) {
    report.problems.push(`catalog tree: ${describeError(err)}`);
    return;
  }
  for (const leafNode of root.leaves) {
    let leaf: CatalogLeaf;
    try {
      leaf = await archive.readJson<CatalogLeaf>(leafNode.ref);
    } catch (err) {
      report.problems.push(`catalog leaf ${leafNode.first}: ${describeError(err)}`);
      continue;
    }
    for (const record of leaf.datasets) {
      const version: VersionReport = { id: record.id, days: 0, objects: 0, shared: 0, problems: [] };
      // true the first time an object is met; a shared object is checked for the first version that meets it
      const visit = (sha: string) => {
        if (seen.has(sha)) return (version.shared++, false);
        seen.add(sha);
        version.objects++;
        return true;
      };
      try {
        await verifyVersion(archive, record, version, visit);
      } catch (err) {
        version.problems.push(describeError(err));
      }
      report.versions.push(version);
      onProgress(`checked ${report.versions.length}/${root.count} versions`);
    }
  }
}

async function verifyVersion(
  archive: Archive,
  record: Dataset,
  report: VersionReport,
  visit: (sha: string) => boolean,
): Promise<void> {
  const view = await openVersion(archive, record);
  visit(record.metadata.index.sha256);
  if (view.kind === "observation") {
    let count = 0;
    for (const [i, chunk] of view.index.chunks.entries()) {
      visit(chunk.sha256);
      count += (JSON.parse(await view.chunkText(i)) as unknown[]).length;
    }
    if (count !== view.index.count) report.problems.push(`observation chunks hold ${count} items, the index says ${view.index.count}`);
    return;
  }
  const years = await verifyRaster(view, report, visit);
  report.problems.push(...(await verifySeries(view, visit)));
  const content = sha256Hex(rasterContentText(record.transform_version, years));
  if (content !== record.content_sha256) report.problems.push(`content_sha256 is ${record.content_sha256}, the cells give ${content}`);
  const id = versionId(record.dataset_key, record.period_start, record.period_end, content);
  if (id !== record.id) report.problems.push(`id should be ${id}`);
}

async function verifyRaster(
  view: RasterView,
  report: VersionReport,
  visit: (sha: string) => boolean,
): Promise<{ key: string; content: string }[]> {
  const { archive, index } = view;
  const years = [];
  for (const yearNode of index.years) {
    visit(yearNode.ref.sha256);
    const year = await archive.readJson<YearPage>(yearNode.ref);
    for (const monthNode of year.months) {
      if (!visit(monthNode.ref.sha256)) {
        report.days += monthNode.days; // the same page, so the same days: checked for a version above
        continue;
      }
      const month = await archive.readJson<MonthPage>(monthNode.ref);
      if (!isSameSummary(monthNode, summarizeDays(month.days))) report.problems.push(`month ${monthNode.key}: its counts, content hash or coverage differ from its days`);
      for (const day of month.days) {
        report.days++;
        if (!visit(day.piece.sha256)) continue;
        try {
          const cells = await archive.readCells(day, day.window);
          const missing = canonicalizeMissing(cells);
          if (sha256Hex(new Uint8Array(cells.buffer)) !== day.cells) report.problems.push(`${day.date}: decoded cells do not match their sha256 ${day.cells}`);
          if (missing !== day.missing) report.problems.push(`${day.date}: ${missing} missing cells, the index says ${day.missing}`);
        } catch (err) {
          report.problems.push(`${day.date}: ${describeError(err)}`);
        }
      }
    }
    if (!isSameSummary(yearNode, summarizeNodes(year.months))) report.problems.push(`year ${yearNode.key}: its counts, content hash or coverage differ from its months`);
    years.push({ key: yearNode.key, content: yearNode.content });
  }
  const root = summarizeNodes(index.years);
  if (root.days !== index.days || root.tiles !== index.tiles || JSON.stringify(root.coverage) !== JSON.stringify(index.coverage)) {
    report.problems.push("the index's counts or coverage differ from its years");
  }
  return years;
}
