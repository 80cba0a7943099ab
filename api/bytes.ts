// The bytes every writer of an answer shares: a sink that encodes text as it arrives into reused working buffers,
// ASCII parts and patches, and the one shape of an answer whose manifest hashes its own data (`dataSha256`).

const encoder = new TextEncoder();

/** Working buffers of sinks whose answers were sent, for the next sinks to write in (at most 16, of at most 1 MB). */
const spare: Uint8Array[] = [];
const SPARE_MOST = 16;
const SPARE_BYTES_MOST = 1 << 20;
/** The working buffer behind each body finish() gave, until it is given back. */
const lent = new WeakMap<Uint8Array, Uint8Array>();

/**
 * UTF-8 bytes written as text arrives: short pieces gather in a string and are encoded into one growing working
 * buffer every 16 K characters, so a 1 MB answer is encoded once, in cache-sized steps, never as one huge rope.
 * finish() gives the bytes as a view of the working buffer, no copy: the buffer serves a later sink once the body is
 * given back (giveBackBody, once its answer was sent). Copying each answer out, as before, took 4% of the series
 * route's time, and its collector more.
 */
export class ByteSink {
  private buffer: Uint8Array = spare.pop() ?? new Uint8Array(1 << 16);
  private length = 0;
  private pending = "";

  text(piece: string): void {
    this.pending += piece;
    if (this.pending.length > 16384) this.flush();
  }

  /** Bytes made once and written again and again (the parts of rows): no string, no garbage per row. */
  put(part: Uint8Array): void {
    if (this.pending !== "") this.flush();
    const n = part.length;
    if (this.length + n > this.buffer.length) this.grow(this.length + n);
    const buffer = this.buffer;
    if (n <= 24) for (let i = 0, at = this.length; i < n; i++, at++) buffer[at] = part[i];
    else buffer.set(part, this.length);
    this.length += n;
  }

  private grow(need: number): void {
    const grown = new Uint8Array(Math.max(need, this.buffer.length * 2));
    grown.set(this.buffer.subarray(0, this.length));
    this.buffer = grown;
  }

  /** Writes up to `most` bytes straight into the buffer: `write` puts them from `at` and returns where it ended. */
  write(most: number, write: (buffer: Uint8Array, at: number) => number): void {
    this.flush();
    if (this.length + most > this.buffer.length) this.grow(this.length + most);
    this.length = write(this.buffer, this.length);
  }

  /** Where the next byte will go (after flushing what is pending). */
  get offset(): number {
    this.flush();
    return this.length;
  }

  private flush(): void {
    if (this.pending === "") return;
    const need = this.length + this.pending.length * 3;
    if (need > this.buffer.length) this.grow(need);
    this.length += encoder.encodeInto(this.pending, this.buffer.subarray(this.length)).written;
    this.pending = "";
  }

  /** The bytes written, a view of the working buffer; the sink is done. */
  finish(): Uint8Array {
    this.flush();
    const bytes = this.buffer.subarray(0, this.length);
    lent.set(bytes, this.buffer);
    this.buffer = new Uint8Array(0);
    return bytes;
  }
}

/**
 * Large buffers of bodies already sent (an OPeNDAP .dods: a map is 2.3 MB, the bound 40 MB), for the next large
 * bodies: at most 64 MB of them kept. A fresh buffer each answer is zeroed, and freed only when the collector runs:
 * eight bound-size answers at once left their sent bodies in memory beside the live ones.
 */
const spareLarge: ArrayBuffer[] = [];
const SPARE_LARGE_BYTES_MOST = 40 << 20;
const spareLargeBytes = () => spareLarge.reduce((n, b) => n + b.byteLength, 0);

/**
 * A body of `size` bytes to write into, `offset` bytes into its buffer (a writer aligns a typed view with it): a view
 * of a spare buffer when one is large enough (the smallest that is), else of a new one; lent until giveBackBody.
 * Its bytes are whatever they were: the writer writes every one.
 */
export function borrowBody(size: number, offset = 0): Uint8Array {
  let best = -1;
  for (let i = 0; i < spareLarge.length; i++) {
    if (spareLarge[i].byteLength >= size + offset && (best < 0 || spareLarge[i].byteLength < spareLarge[best].byteLength)) best = i;
  }
  const buffer = best >= 0 ? spareLarge.splice(best, 1)[0] : new ArrayBuffer(size + offset);
  const bytes = new Uint8Array(buffer, offset, size);
  lent.set(bytes, new Uint8Array(buffer));
  return bytes;
}

/** Whether `bytes` is a body finish() gave and giveBackBody has not taken back. */
export function isLentBody(bytes: Uint8Array): boolean {
  return lent.has(bytes);
}

/** Gives a body's working buffer to later sinks: only once nothing reads the body again (its answer sent, not kept). */
export function giveBackBody(bytes: Uint8Array): void {
  const buffer = lent.get(bytes);
  if (!buffer) return;
  lent.delete(bytes);
  if (buffer.byteLength <= SPARE_BYTES_MOST) {
    if (spare.length < SPARE_MOST) spare.push(buffer);
  } else if (spareLargeBytes() + buffer.byteLength <= SPARE_LARGE_BYTES_MOST) spareLarge.push(buffer.buffer as ArrayBuffer);
}

/** The bytes of ASCII text (row parts, keys, digits): one byte a character, no encoder. */
export function asciiBytes(text: string): Uint8Array {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

/** Overwrites ASCII text at `at` of `bytes` (a placeholder of the same length). */
export function patchAscii(bytes: Uint8Array, at: number, ascii: string): void {
  for (let i = 0; i < ascii.length; i++) bytes[at + i] = ascii.charCodeAt(i);
}

/** A sha256 not yet known: 64 characters, as long as the real one. */
export const PENDING_SHA256 = "0".repeat(64);

/**
 * `{"manifest":{...},"data":...}` where the manifest's last field, `dataSha256` (PENDING_SHA256 when given), is the
 * sha256 of the `data` text exactly as written: its 64 hex digits are patched in once the data bytes exist, so the
 * answer is encoded once (the query's and the series route's JSON answers, docs/contract.md §3.5, §8.2). The manifest
 * comes as an object or as its JSON text (api/query/manifest.ts manifestJson).
 */
export async function writeHashedData(manifest: { dataSha256: string } | string, writeData: (out: ByteSink) => void, sha256Hex: (bytes: Uint8Array) => Promise<string>): Promise<Uint8Array> {
  const head = `{"manifest":${typeof manifest === "string" ? manifest : JSON.stringify(manifest)}`;
  if (!head.endsWith(`"dataSha256":"${PENDING_SHA256}"}`)) throw new Error("the manifest's last field must be dataSha256, still pending");
  const out = new ByteSink();
  out.text(head.slice(0, -2 - 64));
  const shaAt = out.offset;
  out.text(`${PENDING_SHA256}"},"data":`);
  const dataAt = out.offset;
  writeData(out);
  out.text("}");
  const body = out.finish();
  patchAscii(body, shaAt, await sha256Hex(body.subarray(dataAt, body.length - 1)));
  return body;
}
