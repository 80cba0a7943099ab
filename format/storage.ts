// What the interface needs from where it runs: bytes of dist files (local disk or HTTP ranges), SHA-256 and
// DEFLATE. The server and pipeline implement it with node APIs (format/local.ts), the mirror client with
// fetch, WebCrypto and DecompressionStream (client/).

export interface Storage {
  /** The whole file, or `length` bytes from `offset`. Rejects with StorageError. */
  read(path: string, offset?: number, length?: number): Promise<Uint8Array>;
  /** Where `path` lives, for messages ("dist/objects/..", "https://mirror/objects/.."). */
  describe(path: string): string;
  /** Drops anything kept about `path` (an open descriptor): its bytes failed a check. */
  forget?(path: string): void;
  /** Releases what the storage holds open (resolved once released). */
  close?(): void | Promise<void>;
}

export interface Platform {
  sha256Hex(data: Uint8Array): Promise<string>;
  /**
   * The sha256 (hex) of bytes given a part at a time, none of them kept: a streamed answer's digest in flat memory.
   * Absent (the browser's Web Crypto hashes whole buffers only): the caller joins the parts and hashes them once.
   */
  sha256Parts?(parts: AsyncIterable<Uint8Array>): Promise<string>;
  /** Inflates raw DEFLATE; rejects when the output would pass `maxBytes`. */
  inflateRaw(data: Uint8Array, maxBytes: number): Promise<Uint8Array>;
  /**
   * DEFLATE in the zlib format (RFC 1950) at `level` where the platform can choose one: what the Zarr view's
   * chunks are coded with (numcodecs' zlib). Output bytes are those of the platform's zlib, so they may differ
   * between platforms; what they inflate to never does.
   */
  deflate(data: Uint8Array, level: number): Promise<Uint8Array>;
}

/** A dist file could not be read: missing (`missing`), or the read itself failed (I/O, network). */
export class StorageError extends Error {
  constructor(
    readonly path: string,
    readonly missing: boolean,
    message: string,
  ) {
    super(message);
    this.name = "StorageError";
  }
}

/** Bytes were read but are not what their verified parent says: never used, never served. */
export class IntegrityError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path}: ${reason}`);
    this.name = "IntegrityError";
  }
}

const encoder = new TextEncoder();

export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

const decoder = new TextDecoder("utf-8", { fatal: true });

export function fromUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}
