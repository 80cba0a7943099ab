// The interface's Storage and Platform on Node: dist files on local disk, node:crypto and node:zlib.
// Used by the server, the pipeline (reuse, verify) and tests; never by the browser client.

import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { deflateSync, inflateRawSync } from "node:zlib";
import { sha256Hex } from "./hash.js";
import { type Platform, type Storage, StorageError } from "./storage.js";

export const nodePlatform: Platform = {
  sha256Hex: async (data) => sha256Hex(data),
  // One output buffer a block, one byte over its known size (so zlib never allocates a second to find the end):
  // the default 16 kB chunks cost an allocation a block and a copy.
  inflateRaw: async (data, maxBytes) => inflateRawSync(data, { maxOutputLength: Math.max(1, maxBytes), chunkSize: Math.max(64, maxBytes + 1) }),
  // synchronous, as inflateRaw: level 1 deflates a 256 x 256 float32 Zarr chunk in about 2 ms (bench/zarr.ts)
  deflate: async (data, level) => deflateSync(data, { level }),
};

function toStorageError(path: string, file: string, code: string | undefined, message: string): StorageError {
  const missing = code === "ENOENT" || code === "EISDIR" || code === "ENOTDIR";
  return new StorageError(path, missing, `${file}: ${missing ? "missing" : `cannot be read (${code ?? message})`}`);
}

export interface LocalStorageOptions {
  /** descriptors kept open for the most recently read day pieces, over all read threads (default 256) */
  maxOpenFiles?: number;
  /** threads that read ranges of day pieces: the reads in flight at once (default 2) */
  readThreads?: number;
}

/**
 * A read thread: takes a batch of ranges, reads them one after another with pread on descriptors it keeps open
 * (least recently used closed first), and sends back one buffer holding them all (moved, not copied), with each
 * range's offset in it and length read, or its error code.
 */
const READ_THREAD = `
const { parentPort, workerData } = require("node:worker_threads");
const { openSync, readSync, closeSync } = require("node:fs");
const open = new Map();
const forget = (file) => { const fd = open.get(file); if (fd !== undefined) { open.delete(file); closeSync(fd); } };
function fdOf(file) {
  let fd = open.get(file);
  if (fd !== undefined) { open.delete(file); open.set(file, fd); return fd; }
  fd = openSync(file, "r");
  open.set(file, fd);
  for (const [oldest] of open) { if (open.size <= workerData.maxOpenFiles) break; forget(oldest); }
  return fd;
}
parentPort.on("message", ({ id, reads, forgotten }) => {
  for (const file of forgotten) forget(file);
  if (!reads) return;
  let total = 0;
  for (const r of reads) total += r[2];
  const buffer = new Uint8Array(total);
  const results = [];
  let at = 0;
  for (const [file, offset, length] of reads) {
    try {
      results.push([at, readSync(fdOf(file), buffer, at, length, offset)]);
    } catch (err) {
      forget(file);
      results.push(String(err.code || err.message));
    }
    at += length;
  }
  parentPort.postMessage({ id, buffer, results }, [buffer.buffer]);
});
`;

/** Ranges a thread reads before it answers: a cold disk's first answers come soon, a warm batch in one message. */
const BATCH_READS = 32;

interface RangeRead {
  file: string;
  offset: number;
  length: number;
  resolve: (bytes: Uint8Array | string) => void;
}

/** A read thread idle this long ends (its descriptors closed); the next read starts another. */
const IDLE_THREAD_MS = 10_000;

/**
 * One read thread and the batches it has not answered yet; referenced (keeping the process alive) only while
 * busy, and ended after IDLE_THREAD_MS without work.
 */
class ReadThread {
  private readonly worker: Worker;
  private readonly batches = new Map<number, RangeRead[]>();
  private nextId = 0;
  private idle: ReturnType<typeof setTimeout> | null = null;

  constructor(maxOpenFiles: number, onEnd: () => void) {
    this.worker = new Worker(READ_THREAD, { eval: true, workerData: { maxOpenFiles } });
    this.worker.unref();
    this.worker.on("exit", onEnd);
    this.worker.on("message", ({ id, buffer, results }: { id: number; buffer: Uint8Array; results: ([number, number] | string)[] }) => {
      const batch = this.batches.get(id)!;
      this.batches.delete(id);
      if (this.batches.size === 0) {
        this.worker.unref();
        this.idle = setTimeout(() => void this.close(), IDLE_THREAD_MS);
        this.idle.unref();
      }
      batch.forEach((read, i) => {
        const result = results[i];
        read.resolve(typeof result === "string" ? result : buffer.subarray(result[0], result[0] + result[1]));
      });
    });
    this.worker.on("error", (err) => this.failAll(err.message));
  }

  send(batch: RangeRead[], forgotten: string[] = []): void {
    if (this.idle) clearTimeout(this.idle);
    const id = this.nextId++;
    if (this.batches.size === 0) this.worker.ref();
    this.batches.set(id, batch);
    this.worker.postMessage({ id, reads: batch.map((r) => [r.file, r.offset, r.length]), forgotten });
  }

  forget(files: string[]): void {
    this.worker.postMessage({ id: -1, reads: null, forgotten: files });
  }

  private failAll(reason: string): void {
    for (const batch of this.batches.values()) for (const read of batch) read.resolve(reason);
    this.batches.clear();
  }

  /** ended or ending: takes no more batches */
  closed = false;

  close(): Promise<number> {
    this.closed = true;
    if (this.idle) clearTimeout(this.idle);
    this.failAll("the storage is closed");
    return this.worker.terminate();
  }
}

/** Which thread reads a file: always the same one, so its descriptor stays open there. */
function threadOf(file: string, threads: number): number {
  let h = 0;
  for (let i = Math.max(0, file.length - 24); i < file.length; i++) h = (h * 31 + file.charCodeAt(i)) | 0;
  return (h >>> 0) % threads;
}

/**
 * Dist files on disk, every read off the event loop: a cold archive larger than memory slows the answers that
 * read it, never health or cached answers. Whole objects are read with libuv's asynchronous readFile; ranges of
 * day pieces (most reads: a few kB each) by a few read threads. The ranges asked in one turn of the event loop
 * go as one batch per thread and come back in one buffer, so a 31-day series costs one round trip to a thread,
 * not 31; the threads bound the reads in flight.
 */
export class LocalStorage implements Storage {
  private readonly threads: ReadThread[] = [];
  private readonly threadCount: number;
  private readonly maxOpenFiles: number;
  private pending: RangeRead[] = [];

  constructor(
    readonly root: string,
    options: LocalStorageOptions = {},
  ) {
    this.threadCount = Math.max(1, options.readThreads ?? 2);
    this.maxOpenFiles = options.maxOpenFiles ?? 256;
  }

  describe(path: string): string {
    return join(this.root, path);
  }

  async read(path: string, offset?: number, length?: number): Promise<Uint8Array> {
    const file = join(this.root, path);
    if (offset === undefined) {
      try {
        return await readFile(file);
      } catch (err) {
        throw toStorageError(path, file, (err as NodeJS.ErrnoException).code, (err as Error).message);
      }
    }
    const result = await new Promise<Uint8Array | string>((resolve) => {
      if (this.pending.length === 0) setImmediate(() => this.flush());
      this.pending.push({ file, offset, length: length ?? 0, resolve });
    });
    if (typeof result === "string") throw toStorageError(path, file, /^E[A-Z]+$/.test(result) ? result : undefined, result);
    return result;
  }

  /** Sends the ranges asked in this turn, one batch per thread. */
  private flush(): void {
    const batches = new Map<number, RangeRead[]>();
    for (const read of this.pending) {
      const at = threadOf(read.file, this.threadCount);
      batches.get(at)?.push(read) ?? batches.set(at, [read]);
    }
    this.pending = [];
    // at most BATCH_READS a message, so the first ranges of a long batch come back without waiting for the last
    for (const [at, batch] of batches) {
      for (let i = 0; i < batch.length; i += BATCH_READS) this.thread(at).send(batch.slice(i, i + BATCH_READS));
    }
  }

  private thread(at: number): ReadThread {
    if (this.threads[at] && !this.threads[at].closed) return this.threads[at];
    const thread = new ReadThread(Math.max(8, Math.floor(this.maxOpenFiles / this.threadCount)), () => {
      if (this.threads[at] === thread) delete this.threads[at];
    });
    return (this.threads[at] = thread);
  }

  /** Closes the descriptor of `path`: after a failed check, a restored file is opened afresh. */
  forget(path: string): void {
    const file = join(this.root, path);
    this.threads[threadOf(file, this.threadCount)]?.forget([file]);
  }

  /** Ends the read threads; resolves once they have exited (their descriptors closed with them). */
  async close(): Promise<void> {
    await Promise.all(this.threads.splice(0).map((thread) => thread?.close()));
  }
}
