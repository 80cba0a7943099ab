// The interface's Storage and Platform on Node: dist files on local disk, node:crypto and node:zlib.
// Used by the server, the pipeline (reuse, verify) and tests; never by the browser client.

import { open, readFile } from "node:fs/promises";
import { join } from "node:path";
import { inflateRawSync } from "node:zlib";
import { sha256Hex } from "../schemas/hash.js";
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

export class LocalStorage implements Storage {
  constructor(readonly root: string) {}

  describe(path: string): string {
    return join(this.root, path);
  }

  async read(path: string, offset?: number, length?: number): Promise<Uint8Array> {
    const file = join(this.root, path);
    try {
      if (offset === undefined) return await readFile(file);
      const handle = await open(file, "r");
      try {
        const buffer = Buffer.allocUnsafe(length ?? 0);
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, offset);
        return buffer.subarray(0, bytesRead);
      } finally {
        await handle.close();
      }
    } catch (err) {
      throw toStorageError(path, file, err);
    }
  }
}
