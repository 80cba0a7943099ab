// The catalog and manifest: the last step of a publish, and the only file ever replaced (atomically).

import { open, readFile, rename } from "node:fs/promises";
import { join } from "node:path";
import { CATALOG_FILE, type CatalogFile, type Dataset, DIST_FORMAT, type FileEntry, type Manifest, manifestPath, sha256Hex } from "../schemas/dist.js";
import { assertValid } from "../schemas/validate.js";
import { PublishError } from "./errors.js";
import { type DistWriter, tempNameFor } from "./files.js";

export interface PublishedState {
  catalog: CatalogFile;
  manifest: Manifest;
}

/** The dist as last published, or null for an empty folder; a damaged one stops the publish. */
export async function readPublished(dist: string): Promise<PublishedState | null> {
  const file = join(dist, CATALOG_FILE);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch {
    return null;
  }
  try {
    const catalog = JSON.parse(text) as CatalogFile;
    assertValid("dist-catalog.schema.json", catalog, CATALOG_FILE);
    const bytes = await readFile(join(dist, catalog.manifest.path));
    if (sha256Hex(bytes) !== catalog.manifest.sha256) throw new Error(`${catalog.manifest.path} does not match its sha256`);
    const manifest = JSON.parse(bytes.toString("utf8")) as Manifest;
    assertValid("dist-manifest.schema.json", manifest, catalog.manifest.path);
    return { catalog, manifest };
  } catch (err) {
    throw new PublishError(file, "catalog", `the published dist is damaged (${(err as Error).message}); run \`make verify DIST=${dist}\``);
  }
}

/** Write the manifest of every file, then swap catalog.json in one rename: readers see old or new, never half. */
export async function writeCatalog(
  writer: DistWriter,
  previous: PublishedState | null,
  fresh: Dataset[],
  publishedAt: string,
): Promise<CatalogFile> {
  const files = new Map<string, FileEntry>((previous?.manifest.files ?? []).map((f) => [f.path, f]));
  for (const entry of writer.entries.values()) {
    const old = files.get(entry.path);
    if (old && old.sha256 !== entry.sha256) throw new PublishError(entry.path, "catalog", "file conflict with the published manifest");
    files.set(entry.path, entry);
  }
  const manifest: Manifest = { format: DIST_FORMAT, files: [...files.values()].sort((a, b) => (a.path < b.path ? -1 : 1)) };
  assertValid("dist-manifest.schema.json", manifest, "manifest");
  const manifestText = JSON.stringify(manifest);
  const manifestEntry = await writer.write(manifestPath(sha256Hex(manifestText)), manifestText);

  const known = new Set((previous?.catalog.datasets ?? []).map((d) => d.id));
  const added = fresh.filter((d) => !known.has(d.id)).map((d): Dataset => ({ ...d, status: "published", published_at: publishedAt }));
  const catalog: CatalogFile = {
    format: DIST_FORMAT,
    datasets: [...(previous?.catalog.datasets ?? []), ...added].sort((a, b) => (a.id < b.id ? -1 : 1)),
    manifest: manifestEntry,
  };
  assertValid("dist-catalog.schema.json", catalog, CATALOG_FILE);
  const target = join(writer.root, CATALOG_FILE);
  const temp = tempNameFor(target);
  const handle = await open(temp, "w");
  try {
    await handle.writeFile(JSON.stringify(catalog));
    await handle.sync(); // the new catalog must be on disk before it replaces the old one
  } finally {
    await handle.close();
  }
  await rename(temp, target);
  return catalog;
}
