// The interface's Storage and Platform on Node: dist files on local disk, node:crypto and node:zlib.
// Used by the server, the pipeline (reuse, verify) and tests; never by the browser client.

import { closeSync, openSync, readSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { inflateRawSync } from "node:zlib";
import { sha256Hex } from "./hash.js";
import { type Platform, type Storage, StorageError } from "./storage.js";

export const nodePlatform: Platform = {
  sha256Hex: async (data) => sha256Hex(data),
  inflateRaw: async (data, maxBytes) => inflateRawSync(data, { maxOutputLength: Math.max(1, maxBytes) }),
};

function toStorageError(path: string, file: string, err: unknown): StorageError {
  const code = (err as NodeJS.ErrnoException).code;
  const missing = code === "ENOENT" || code === "EISDIR" || code === "ENOTDIR";
  return new StorageError(path, missing, `${file}: ${missing ? "missing" : `cannot be read (${code ?? (err as Error).message})`}`);
}

/**
 * Dist files on disk. Whole objects are read asynchronously; ranges of day pieces (a few kB, almost always in
 * the page cache) with one synchronous pread on a kept-open descriptor: a round trip through libuv's thread
 * pool would cost more than the read. Descriptors are kept for the most recently read pieces only.
 */
export class LocalStorage implements Storage {
  private readonly descriptors = new Map<string, number>();

  constructor(
    readonly root: string,
    private readonly maxOpenFiles = 256,
  ) {}

  describe(path: string): string {
    return join(this.root, path);
  }

  async read(path: string, offset?: number, length?: number): Promise<Uint8Array> {
    const file = join(this.root, path);
    try {
      if (offset === undefined) return await readFile(file);
      const buffer = Buffer.allocUnsafe(length ?? 0);
      const bytesRead = readSync(this.descriptorOf(file), buffer, 0, buffer.length, offset);
      return buffer.subarray(0, bytesRead);
    } catch (err) {
      this.forget(path);
      throw toStorageError(path, file, err);
    }
  }

  private descriptorOf(file: string): number {
    const known = this.descriptors.get(file);
    if (known !== undefined) {
      this.descriptors.delete(file); // most recently used last
      this.descriptors.set(file, known);
      return known;
    }
    const fd = openSync(file, "r");
    this.descriptors.set(file, fd);
    for (const [oldest, oldFd] of this.descriptors) {
      if (this.descriptors.size <= this.maxOpenFiles) break;
      this.descriptors.delete(oldest);
      closeSync(oldFd);
    }
    return fd;
  }

  /** Closes the descriptor of `path`: after a failed check, a restored file is opened afresh. */
  forget(path: string): void {
    const file = join(this.root, path);
    const fd = this.descriptors.get(file);
    if (fd === undefined) return;
    this.descriptors.delete(file);
    closeSync(fd);
  }

  close(): void {
    for (const fd of this.descriptors.values()) closeSync(fd);
    this.descriptors.clear();
  }
}
