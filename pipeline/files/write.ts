// A file written whole or not at all (a temporary name beside it, then a rename), and a file's sha256: what every
// folder the pipeline writes needs, a sources folder as much as a dist.

import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, open, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";

export async function hashFile(file: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/** A unique temporary name beside the target, so the rename is atomic and a crash leaves only *.tmp debris. */
function tempNameFor(target: string): string {
  return `${target}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`;
}

/**
 * Writes `data` to `target` so that readers see the old file or the new one, never part of one: a temporary
 * name beside it, flushed to disk when `durable` (before it replaces something readers rely on), then renamed.
 */
export async function writeFileAtomic(target: string, data: string | Uint8Array, durable = false): Promise<void> {
  await mkdir(dirname(target), { recursive: true });
  const temp = tempNameFor(target);
  const handle = await open(temp, "w");
  try {
    await handle.writeFile(data);
    if (durable) await handle.sync();
  } catch (err) {
    await handle.close();
    await rm(temp, { force: true });
    throw err;
  }
  await handle.close();
  await rename(temp, target);
}
