// The browser explorer in a dist: the page `make install` built (build/explorer.html) stored as a content-addressed
// object that catalog.json names, so every mirror, static or not, can show it and no publish replaces a file.

import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { Ref } from "../../format/objects.js";
import type { ObjectStore } from "../store/objects.js";

/** build/explorer.html, from this module in pipeline/publish/ or from the pipeline bundled beside it into build/. */
export const BUILT_EXPLORER = fileURLToPath(new URL(/\/build\/[^/]+$/.test(import.meta.url) ? "./explorer.html" : "../../build/explorer.html", import.meta.url));

/**
 * The explorer page as an object of the dist (written when the dist lacks it), or null when there is none to
 * store: `page` false, or the page not built (a pipeline used as a library without `make install`).
 */
export async function storeExplorer(store: ObjectStore, page: string | false = BUILT_EXPLORER): Promise<Ref | null> {
  if (page === false) return null;
  const bytes = await readFile(page).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return null;
    throw err;
  });
  return bytes ? store.put(bytes, "html", false) : null;
}
