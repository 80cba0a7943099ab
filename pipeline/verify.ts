// `make verify`: re-hash every file of a dist against its manifest, as a mirror operator would.

import { readdir, stat } from "node:fs/promises";
import { join, relative } from "node:path";
import { CATALOG_FILE, datasetPath } from "../schemas/dist.js";
import { PublishError } from "./errors.js";
import { readPublished } from "./catalog.js";
import { hashFile } from "./files.js";

export interface VerifyReport {
  files: number;
  bytes: number;
  problems: string[]; // one line per file that differs or is missing
  unlisted: string[]; // files the manifest does not know (debris of an interrupted publish, or strays)
}

async function listFiles(root: string, dir = root): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await listFiles(root, path)));
    else out.push(relative(root, path).split("\\").join("/"));
  }
  return out;
}

export async function verifyDist(dist: string, onFile: (done: number, total: number) => void = () => {}): Promise<VerifyReport> {
  let state;
  try {
    state = await readPublished(dist);
  } catch (err) {
    return { files: 0, bytes: 0, problems: [err instanceof PublishError ? err.message : String(err)], unlisted: [] };
  }
  if (!state) return { files: 0, bytes: 0, problems: [`${join(dist, CATALOG_FILE)}: missing; run \`make publish DIST=${dist}\``], unlisted: [] };
  const { catalog, manifest } = state;
  const problems: string[] = [];
  const listed = new Set(manifest.files.map((f) => f.path));
  for (const d of catalog.datasets) {
    if (!listed.has(datasetPath(d.id))) problems.push(`${datasetPath(d.id)}: catalog lists version ${d.id} but the manifest has no record of it`);
  }
  let bytes = 0;
  for (const [i, f] of manifest.files.entries()) {
    const file = join(dist, f.path);
    const size = await stat(file).then((s) => s.size, () => null);
    if (size === null) problems.push(`${f.path}: missing`);
    else if (size !== f.size) problems.push(`${f.path}: size ${size}, manifest says ${f.size}`);
    else {
      const sha = await hashFile(file);
      if (sha !== f.sha256) problems.push(`${f.path}: sha256 ${sha}, manifest says ${f.sha256}`);
      bytes += size;
    }
    onFile(i + 1, manifest.files.length);
  }
  listed.add(CATALOG_FILE).add(catalog.manifest.path);
  const unlisted = (await listFiles(dist)).filter((p) => !listed.has(p) && !p.startsWith("manifests/")).sort();
  return { files: manifest.files.length, bytes, problems, unlisted };
}
