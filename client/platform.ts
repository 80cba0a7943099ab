// The interface's Platform on the web platform: WebCrypto SHA-256, DecompressionStream raw DEFLATE and
// CompressionStream zlib (browsers, Node >= 20).

import type { Platform } from "../format/storage.js";

// The Platform contract hands over plain Uint8Arrays (never over a SharedArrayBuffer), which web APIs take as they are.
const asBuffer = (data: Uint8Array) => data as Uint8Array<ArrayBuffer>;

function toHex(digest: ArrayBuffer): string {
  const bytes = new Uint8Array(digest);
  let hex = "";
  for (let i = 0; i < bytes.length; i++) hex += bytes[i].toString(16).padStart(2, "0");
  return hex;
}

/** Inflates raw DEFLATE chunk by chunk, giving up as soon as the output would pass `maxBytes` (a block's known size). */
async function inflateRaw(data: Uint8Array, maxBytes: number): Promise<Uint8Array> {
  const limit = Math.max(1, maxBytes);
  let inflate: DecompressionStream;
  try {
    inflate = new DecompressionStream("deflate-raw");
  } catch (err) {
    throw new Error(`this runtime cannot inflate raw DEFLATE (DecompressionStream("deflate-raw"): ${(err as Error).message}); use a current browser or Node`);
  }
  const stream = new Blob([asBuffer(data)]).stream().pipeThrough(inflate);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      throw new RangeError(`inflated data passes the bound of ${limit} bytes`);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

/** The zlib format from CompressionStream: its level is the runtime's default, so its bytes are not node's level-1 bytes. */
async function deflate(data: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([asBuffer(data)]).stream().pipeThrough(new CompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

export const webPlatform: Platform = {
  sha256Hex: async (data) => toHex(await crypto.subtle.digest("SHA-256", asBuffer(data))),
  inflateRaw,
  deflate,
};
