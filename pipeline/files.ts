// Immutable dist files: written to a temporary name and renamed; an existing name never receives other bytes.

import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { type FileEntry, sha256Hex } from "../schemas/dist.js";
import { PublishError } from "./errors.js";

export async function hashFile(file: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

async function sizeOf(file: string): Promise<number | null> {
  try {
    return (await stat(file)).size;
  } catch {
    return null;
  }
}

/** A unique temporary name beside the target, so a rename is atomic and a crash leaves only *.tmp debris. */
export function tempNameFor(target: string): string {
  return `${target}.${process.pid}.${Math.random().toString(36).slice(2, 10)}.tmp`;
}

export class DistWriter {
  /** every file this run wrote or found already identical, by dist-relative path */
  readonly entries = new Map<string, FileEntry>();
  written = 0;
  bytes = 0;

  constructor(readonly root: string) {}

  async write(path: string, data: string | Uint8Array): Promise<FileEntry> {
    const bytes = typeof data === "string" ? Buffer.from(data, "utf8") : data;
    const entry = { path, size: bytes.byteLength, sha256: sha256Hex(bytes) };
    const target = join(this.root, path);
    if (await this.isAlreadyThere(target, entry)) return this.record(entry, false);
    await mkdir(dirname(target), { recursive: true });
    const temp = tempNameFor(target);
    await writeFile(temp, bytes);
    await rename(temp, target);
    return this.record(entry, true);
  }

  /** Move a finished temporary file (hashed while it was written) to its immutable name. */
  async adopt(path: string, temp: string, sha256: string): Promise<FileEntry> {
    const entry = { path, size: (await stat(temp)).size, sha256 };
    const target = join(this.root, path);
    if (await this.isAlreadyThere(target, entry)) {
      await rm(temp, { force: true });
      return this.record(entry, false);
    }
    await mkdir(dirname(target), { recursive: true });
    await rename(temp, target);
    return this.record(entry, true);
  }

  private async isAlreadyThere(target: string, entry: FileEntry): Promise<boolean> {
    const size = await sizeOf(target);
    if (size === null) return false;
    const existing = size === entry.size ? (size < 4 << 20 ? sha256Hex(await readFile(target)) : await hashFile(target)) : null;
    if (existing === entry.sha256) return true;
    throw new PublishError(
      entry.path,
      "write",
      "file conflict: this immutable file already exists with different bytes; a published version is never rewritten " +
        "(if it is damaged, run `make verify` and restore it from a mirror, or publish into a fresh DIST)",
    );
  }

  private record(entry: FileEntry, fresh: boolean): FileEntry {
    this.entries.set(entry.path, entry);
    if (fresh) {
      this.written++;
      this.bytes += entry.size;
    }
    return entry;
  }
}
