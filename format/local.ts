// The interface's Storage and Platform on Node: dist files on local disk, node:crypto and node:zlib.
// Used by the server, the pipeline (reuse, verify) and tests; never by the browser client.

import { closeSync, openSync, readFileSync, readSync } from "node:fs";
import { type FileHandle, open, readFile } from "node:fs/promises";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { deflateSync, inflateRawSync } from "node:zlib";
import { sha256Hex } from "./hash.js";
import { type Platform, type Storage, StorageError } from "./storage.js";

export const nodePlatform: Platform = {
  sha256Hex: async (data) => sha256Hex(data),
  async sha256Parts(parts) {
    const hash = createHash("sha256");
    for await (const part of parts) hash.update(part);
    return hash.digest("hex");
  },
  // One output buffer a block, one byte over its known size (so zlib never allocates a second to find the end):
  // the default 16 kB chunks cost an allocation a block and a copy.
  inflateRaw: async (data, maxBytes) => inflateRawSync(data, { maxOutputLength: Math.max(1, maxBytes), chunkSize: Math.max(64, maxBytes + 1) }),
  // synchronous, as inflateRaw: level 1 deflates a 256 x 256 float32 Zarr chunk in about 2 ms (bench/zarr.ts)
  deflate: async (data, level) => deflateSync(data, { level }),
};

/** `length` bytes at `offset` of a file, on this thread (fewer at its end). */
function readRangeSync(file: string, offset: number, length: number): Uint8Array {
  const fd = openSync(file, "r");
  try {
    const buffer = new Uint8Array(length);
    const bytesRead = readSync(fd, buffer, 0, length, offset);
    return bytesRead === length ? buffer : buffer.subarray(0, bytesRead);
  } finally {
    closeSync(fd);
  }
}

function toStorageError(path: string, file: string, code: string | undefined, message: string): StorageError {
  const missing = code === "ENOENT" || code === "EISDIR" || code === "ENOTDIR";
  return new StorageError(path, missing, `${file}: ${missing ? "missing" : `cannot be read (${code ?? message})`}`);
}

export interface LocalStorageOptions {
  /** descriptors kept open for the most recently read day pieces (default 256) */
  maxOpenFiles?: number;
  /** after this long without a read every descriptor is closed (default 10 s) */
  idleCloseMs?: number;
  /** where reads happen (default DEFAULT_READS): see StorageReads */
  reads?: StorageReads;
}

/**
 * Where a storage's reads happen.
 * - "threadpool": on libuv's threadpool, through descriptors kept open: an archive larger than memory, whose reads
 *   wait for the disk, never holds up the event loop (the server's health and cached answers, a command's threads).
 * - "sync": on the calling thread, through descriptors kept open: the default (DEFAULT_READS), for reads that come
 *   from the page cache.
 * - "sync-each-open": on the calling thread, each range opening and closing its file: a worker thread of the
 *   publish, which answers nobody while it waits and reads a year of day pieces in turn (far more files than
 *   descriptors it keeps), and whose end must leave no descriptor open.
 */
export type StorageReads = "threadpool" | "sync" | "sync-each-open";

/**
 * Where a storage reads unless its caller says, the server's READS default included (server/settings.ts): on the
 * calling thread, as nginx reads files by default. A range from the page cache takes microseconds, where a trip through
 * the threadpool and its promise cost a Zarr maps chunk a quarter of its time (docs/performance.md, "Decision: the
 * server reads on its own thread"). The pipeline's commands, whose reads of a whole dist may wait for the disk while
 * their threads wait for work, say "threadpool".
 */
export const DEFAULT_READS = "sync" satisfies StorageReads;

/**
 * An open descriptor (a FileHandle opened on the threadpool, or a number opened here) and the reads using it: once
 * evicted or forgotten, it is closed when its last read ends.
 */
interface OpenFile {
  handle: Promise<FileHandle> | number;
  users: number;
  retired: boolean;
}

/**
 * Descriptors of a storage nobody has read for this long are closed: a reader that drops a storage without
 * close() (a snapshot read once) lets them go, rather than leaving them to garbage collection, which Node warns of.
 */
const IDLE_CLOSE_MS = 10_000;

/**
 * Dist files on disk. Whole objects are read at once; ranges of day pieces and series chunks (most reads: a few kB
 * each) through descriptors kept open for the most recently read files, on the thread `reads` says (StorageReads).
 */
export class LocalStorage implements Storage {
  /** the open descriptors, least recently read first */
  private readonly files = new Map<string, OpenFile>();
  private readonly maxOpenFiles: number;
  private readonly idleCloseMs: number;
  private readonly reads: StorageReads;
  private idle: ReturnType<typeof setTimeout> | null = null;
  /** descriptors being closed, so close() resolves once they are */
  private readonly closing = new Set<Promise<void>>();

  constructor(
    readonly root: string,
    options: LocalStorageOptions = {},
  ) {
    this.maxOpenFiles = Math.max(1, options.maxOpenFiles ?? 256);
    this.idleCloseMs = options.idleCloseMs ?? IDLE_CLOSE_MS;
    this.reads = options.reads ?? DEFAULT_READS;
  }

  describe(path: string): string {
    return join(this.root, path);
  }

  async read(path: string, offset?: number, length?: number): Promise<Uint8Array> {
    const file = join(this.root, path);
    try {
      if (offset === undefined) return this.reads === "threadpool" ? await readFile(file) : readFileSync(file);
      return this.reads === "sync-each-open" ? readRangeSync(file, offset, length ?? 0) : await this.readRange(file, offset, length ?? 0);
    } catch (err) {
      throw toStorageError(path, file, (err as NodeJS.ErrnoException).code, (err as Error).message);
    }
  }

  private async readRange(file: string, offset: number, length: number): Promise<Uint8Array> {
    const entry = this.acquire(file);
    this.idle?.refresh();
    // unref'd: it never keeps a process alive, and while pending it keeps this storage from being collected open
    this.idle ??= setTimeout(() => void this.close(), this.idleCloseMs).unref();
    try {
      const buffer = new Uint8Array(length);
      const bytesRead = typeof entry.handle === "number" ? readSync(entry.handle, buffer, 0, length, offset) : (await (await entry.handle).read(buffer, 0, length, offset)).bytesRead;
      return bytesRead === length ? buffer : buffer.subarray(0, bytesRead);
    } catch (err) {
      this.retire(file, entry); // the next read opens the file afresh
      throw err;
    } finally {
      entry.users--;
      if (entry.retired && entry.users === 0) void this.closeFile(entry);
    }
  }

  private acquire(file: string): OpenFile {
    let entry = this.files.get(file);
    if (entry) {
      this.files.delete(file);
    } else {
      entry = { handle: this.reads === "sync" ? openSync(file, "r") : open(file, "r"), users: 0, retired: false };
      for (const [oldest, other] of this.files) {
        if (this.files.size < this.maxOpenFiles) break;
        this.retire(oldest, other);
      }
    }
    this.files.set(file, entry);
    entry.users++;
    return entry;
  }

  private retire(file: string, entry: OpenFile): Promise<void> {
    if (this.files.get(file) === entry) this.files.delete(file);
    if (entry.retired) return Promise.resolve();
    entry.retired = true;
    return entry.users === 0 ? this.closeFile(entry) : Promise.resolve();
  }

  private closeFile(entry: OpenFile): Promise<void> {
    const { handle } = entry;
    if (typeof handle === "number") {
      closeSync(handle);
      return Promise.resolve();
    }
    const closed = handle.then((h) => h.close()).catch(() => undefined);
    this.closing.add(closed);
    return closed.finally(() => this.closing.delete(closed));
  }

  /** Closes the descriptor of `path`: after a failed check, a restored file is opened afresh. */
  forget(path: string): void {
    const file = join(this.root, path);
    const entry = this.files.get(file);
    if (entry) void this.retire(file, entry);
  }

  /** Closes the descriptors (one a read is using, once that read ends). */
  async close(): Promise<void> {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    await Promise.all([...[...this.files].map(([file, entry]) => this.retire(file, entry)), ...this.closing]);
  }
}
