// The browser explorer, written into every published dist (explorer/index.html and app.js), so every mirror
// hosts it: bundled here from explorer/ with the client library, deterministically, and rewritten only when
// its bytes change.

import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { sha256Hex } from "../../format/hash.js";
import { EXPLORER_FILES, type FileEntry } from "../../format/objects.js";
import { PublishError } from "../errors.js";
import type { ObjectStore } from "../operations/files.js";

// the explorer's sources, from this module in pipeline/publish/ or from the pipeline bundled into build/
const SOURCES = fileURLToPath(new URL(/\/build\/[^/]+$/.test(import.meta.url) ? "../explorer/" : "../../explorer/", import.meta.url));

async function bundleApp(): Promise<Uint8Array> {
  try {
    const result = await build({
      entryPoints: [join(SOURCES, "main.ts")],
      bundle: true,
      format: "esm",
      platform: "browser",
      target: "es2022",
      minify: true,
      legalComments: "none",
      write: false,
      logLevel: "silent",
    });
    return result.outputFiles[0].contents;
  } catch (err) {
    throw new PublishError(join(SOURCES, "main.ts"), "explorer", `cannot bundle the explorer (${(err as Error).message}); run make test to see what broke`);
  }
}

export type ExplorerFiles = [path: string, bytes: Uint8Array][];

/** The explorer's files as this checkout makes them. */
export async function makeExplorer(): Promise<ExplorerFiles> {
  return [
    [EXPLORER_FILES[0], await readFile(join(SOURCES, "index.html"))],
    [EXPLORER_FILES[1], await bundleApp()],
  ];
}

/**
 * Writes the explorer's files that differ from what the dist holds (replaced in place, the old bytes kept by the
 * publish journal until the commit); returns them for the publish manifest.
 */
export async function writeExplorer(store: ObjectStore, files: ExplorerFiles): Promise<FileEntry[]> {
  const written: FileEntry[] = [];
  for (const [path, bytes] of files) {
    const sha256 = sha256Hex(bytes);
    const current = await readFile(join(store.root, path)).catch(() => null);
    if (current && sha256Hex(current) === sha256) continue;
    await store.writeFile(path, bytes, "explorer");
    written.push({ path, size: bytes.byteLength, sha256 });
  }
  return written;
}
