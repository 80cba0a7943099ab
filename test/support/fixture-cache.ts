// Where the shared test fixtures live once prepared: .cache/test-fixtures/<key>/, the key a hash of every file that
// shapes them, and a manifest of their files that tells a folder a test has written into.

import { createHash } from "node:crypto";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { readFile, readdir, rm } from "node:fs/promises";
import { join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");
/** The folders whose code writes a published dist (the pipeline, and the explorer it bundles into it). */
const INPUT_FOLDERS = ["api", "client", "explorer", "format", "pipeline", "schemas", "sources"];
/** The fixtures' recipes, this file's rules, and the exact packages (geotiff, esbuild, h5wasm write bytes too). */
const INPUT_FILES = ["package-lock.json", "test/support/server-fixture.ts", "test/support/helpers.ts", "test/support/fixture-cache.ts", "test/support/prepare-fixtures.ts"];
export const MANIFEST_FILE = "manifest.json";

export const fixturesHome = (root = ROOT) => join(root, ".cache", "test-fixtures");

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/**
 * The hash of every input file (path and bytes) and of Node's version: any change to the pipeline, the explorer, the
 * recipes or a package gives another key, so another folder, built afresh.
 */
export function fixtureKey(root = ROOT): string {
  const files = [...INPUT_FOLDERS.flatMap((f) => listFiles(join(root, f))), ...INPUT_FILES.map((f) => join(root, f)).filter((f) => existsSync(f))];
  const hash = createHash("sha256").update(`node ${process.version}\n`);
  for (const file of files.map((f) => relative(root, f)).sort()) {
    hash.update(`${file}\n`).update(createHash("sha256").update(readFileSync(join(root, file))).digest("hex"));
  }
  return hash.digest("hex").slice(0, 16);
}

/** The prepared folder for this checkout's code, or null when `make test` has not prepared it (a file run alone). */
export function preparedFixtures(root = ROOT): string | null {
  const folder = join(fixturesHome(root), fixtureKey(root));
  return existsSync(join(folder, MANIFEST_FILE)) ? folder : null;
}

/** Every file of a folder but the manifest, as "path size sha256", sorted. */
export async function listManifest(folder: string): Promise<string[]> {
  const lines: string[] = [];
  for (const entry of await readdir(folder, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = relative(folder, join(entry.parentPath, entry.name));
    if (path === MANIFEST_FILE) continue;
    const bytes = await readFile(join(folder, path));
    lines.push(`${path} ${bytes.length} ${createHash("sha256").update(bytes).digest("hex")}`);
  }
  return lines.sort();
}

/** What differs between a prepared folder and its manifest: files added, removed or changed since it was built. */
export async function checkManifest(folder: string): Promise<string[]> {
  let expected: string[];
  try {
    expected = JSON.parse(await readFile(join(folder, MANIFEST_FILE), "utf8")) as string[];
  } catch {
    return [`${MANIFEST_FILE}: missing or unreadable`];
  }
  const actual = await listManifest(folder);
  const pathOf = (line: string) => line.slice(0, line.indexOf(" "));
  const before = new Map(expected.map((l) => [pathOf(l), l]));
  const after = new Map(actual.map((l) => [pathOf(l), l]));
  const problems: string[] = [];
  for (const [path, line] of after) if (before.get(path) !== line) problems.push(`${path}: ${before.has(path) ? "changed" : "added"}`);
  for (const path of before.keys()) if (!after.has(path)) problems.push(`${path}: removed`);
  return problems.sort();
}

/**
 * Removes every prepared folder but `keep`: older keys, and folders half-built by processes that are gone. A folder
 * another living process is building (`<key>.tmp-<pid>`: a second test run in the same checkout) is left to it;
 * removing it under that process once left a folder that looked whole and held half the fixtures.
 */
export async function removeOthers(keep: string, home = fixturesHome()): Promise<void> {
  if (!existsSync(home)) return;
  for (const name of await readdir(home)) if (name !== keep && !isBuiltByLivingProcess(name)) await rm(join(home, name), { recursive: true, force: true });
}

function isBuiltByLivingProcess(name: string): boolean {
  const pid = /\.tmp-(\d+)$/.exec(name)?.[1];
  if (!pid) return false;
  try {
    process.kill(Number(pid), 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
