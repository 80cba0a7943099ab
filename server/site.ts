// The server's front door beside the interface: a landing page at `/`, the explorer at `/explorer/`, and the dist
// files the explorer reads (catalog.json, objects), taken from the same Storage as every answer, so the explorer
// works over a local or a remote dist alike. Only the files a dist gives its readers are served
// (format/objects.ts isReaderFile, on the path exactly as sent); anything else falls through to the interface's 404.

import type { IncomingMessage, ServerResponse } from "node:http";
import { type Answer, CACHE_CONTROL, makeAnswer } from "../api/answer.js";
import { HttpError } from "../api/errors.js";
import { makeErrorAnswer } from "../api/service.js";
import { CATALOG_FILE, isReaderFile, objectPath } from "../format/objects.js";
import type { Snapshot } from "../format/snapshot.js";
import { type Platform, type Storage, StorageError } from "../format/storage.js";
import { type BodyState, sendAnswer } from "./http.js";
import { landingPage } from "./landing.js";
import { readRangeHeader } from "./ranges.js";

const HTML_TYPE = "text/html; charset=utf-8";
const TYPES: Record<string, string> = {
  json: "application/json; charset=utf-8",
  html: HTML_TYPE,
  js: "text/javascript; charset=utf-8",
  day: "application/octet-stream",
  ser: "application/octet-stream",
};

/** Pieces are sent in reads of this size: a whole series piece (tens of MB) never sits in memory at once. */
const PIECE_READ_BYTES = 1 << 20;

/**
 * A single closed byte range `bytes=a-b` (what the mirror client and browsers' readers send); null for none, or
 * for one this server ignores by sending the whole piece (RFC 9110 §14.2: open, suffix and multiple ranges): a
 * piece's size is not known before it is read to its end.
 */
function closedRange(header: string | undefined): { start: number; end: number } | null {
  const asked = readRangeHeader(header);
  if (!asked || asked.first === null || asked.last === null || asked.last < asked.first) return null;
  return { start: asked.first, end: asked.last };
}

export interface Site {
  storage: Storage;
  platform: Platform;
  snapshot(): Promise<Snapshot>;
}

/** Whether the site (not the interface) answers a GET or HEAD of `path`, the path exactly as sent. */
export function isSitePath(path: string): boolean {
  return path === "/" || path === "/favicon.ico" || path === "/explorer" || path === "/explorer/" || isReaderFile(path.slice(1));
}

/**
 * Answers GET and HEAD of `/`, `/explorer` and the dist's reader files; false for every other request (the
 * interface answers it). A file the storage does not have answers false too, so its 404 is the contract's.
 */
export async function answerSite(site: Site, req: IncomingMessage, res: ServerResponse, path: string, body: BodyState): Promise<boolean> {
  if ((req.method !== "GET" && req.method !== "HEAD") || !isSitePath(path)) return false;
  if (path === "/") {
    // a catalog that cannot be read leaves the page without its example, never without the page
    const snapshot = await site.snapshot().catch(() => null);
    const answer = await makeAnswer(site.platform, landingPage(snapshot, requestBase(req)), { type: HTML_TYPE, cache: snapshot ? "short" : "no-store" });
    await sendAnswer(req, res, answer, body);
    return true;
  }
  if (path === "/favicon.ico") {
    // no icon, said once a day: browsers ask for one beside every page they show (the JSON ones too)
    res.writeHead(204, { "Cache-Control": "public, max-age=86400" }).end();
    return true;
  }
  if (path === "/explorer") {
    res.writeHead(301, { Location: "/explorer/", "Content-Length": "0", "Cache-Control": CACHE_CONTROL.short }).end();
    return true;
  }
  let file = path.slice(1);
  if (path === "/explorer/") {
    // the page the dist's catalog.json names (docs/format.md §1): the same one every static mirror of it shows
    const explorer = (await site.snapshot().catch(() => null))?.pointer.explorer;
    if (!explorer) return false;
    file = objectPath(explorer.sha256, "html");
  }
  const kind = file.slice(file.lastIndexOf(".") + 1);
  try {
    if (kind === "day" || kind === "ser") await sendPiece(site.storage, req, res, file);
    else await sendAnswer(req, res, await readWhole(site, file, TYPES[kind]), body);
  } catch (err) {
    if (err instanceof StorageError && err.missing && !res.headersSent) return false;
    if (res.headersSent) res.destroy();
    else if (err instanceof StorageError) await sendAnswer(req, res, await makeErrorAnswer(site.platform, unreadable(file)), body);
    else throw err;
  }
  return true;
}

/** This server's address as the request named it (its Host), for commands that work as pasted. */
function requestBase(req: IncomingMessage): string {
  const host = req.headers.host && /^[A-Za-z0-9.:[\]-]+$/.test(req.headers.host) ? req.headers.host : "127.0.0.1";
  return `${(req.socket as { encrypted?: boolean }).encrypted ? "https" : "http"}://${host}`;
}

/** A dist file the storage cannot read now (a disk or a remote host failing): the contract's 503, never a 500. */
function unreadable(file: string): HttpError {
  return new HttpError({ kind: "service_unavailable", message: `${file} cannot be read just now; retry later with exponential backoff.`, headers: { "Retry-After": "1" } });
}

/** catalog.json, a JSON object, the explorer page, whole: sent with ETag, 304 and compression as every answer. */
async function readWhole(site: Site, file: string, type: string): Promise<Answer> {
  const bytes = await site.storage.read(file);
  return makeAnswer(site.platform, bytes, { type, cache: file === CATALOG_FILE || file.startsWith("explorer/") ? "short" : "immutable" });
}

/**
 * A day or series piece: the byte range asked for (206), or the whole piece streamed in bounded reads (200). The
 * piece is named by its sha256, which is its ETag. The total length is not known without reading to the end, so
 * a 206 says `/*` (RFC 9110 §14.4), as the mirror client and browsers accept.
 */
async function sendPiece(storage: Storage, req: IncomingMessage, res: ServerResponse, file: string): Promise<void> {
  const etag = `"${file.slice(file.lastIndexOf("/") + 1, file.lastIndexOf("."))}"`;
  const headers = { "Content-Type": TYPES.day, "Cache-Control": CACHE_CONTROL.immutable, ETag: etag, "Accept-Ranges": "bytes" };
  if (req.headers["if-none-match"]?.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag)) {
    res.writeHead(304, headers).end();
    return;
  }
  const range = closedRange(req.headers.range);
  if (range) {
    const bytes = await storage.read(file, range.start, range.end - range.start + 1);
    if (bytes.byteLength === 0) {
      await storage.read(file, 0, 1); // a piece that does not exist is a 404, not a range past its end
      res.writeHead(416, { ...headers, "Content-Length": "0" }).end();
      return;
    }
    const last = range.start + bytes.byteLength - 1;
    res.writeHead(206, { ...headers, "Content-Range": `bytes ${range.start}-${last}/*`, "Content-Length": bytes.byteLength });
    res.end(req.method === "HEAD" ? undefined : bytes);
    return;
  }
  // the first read before the head, so a missing piece is still the interface's 404
  let at = 0;
  let bytes = await storage.read(file, at, PIECE_READ_BYTES);
  res.writeHead(200, headers);
  if (req.method === "HEAD") {
    res.end();
    return;
  }
  for (;;) {
    if (bytes.byteLength > 0 && !res.write(bytes)) await new Promise((resolve) => res.once("drain", resolve));
    if (bytes.byteLength < PIECE_READ_BYTES || res.destroyed) break;
    at += bytes.byteLength;
    bytes = await storage.read(file, at, PIECE_READ_BYTES);
  }
  res.end();
}
