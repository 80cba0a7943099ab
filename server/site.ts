// The server's front door beside the interface: a landing page at `/`, the explorer at `/explorer/`, the dist
// files the explorer reads (catalog.json, objects), taken from the same Storage as every answer, so the explorer
// works over a local or a remote dist alike, and the docs (server/docs.ts: the README, docs/*.md, /api/v1/docs).
// Only the files a dist gives its readers are served (format/objects.ts isReaderFile, on the path exactly as sent),
// and the docs' own paths; anything else falls through to the interface's 404.

import type { IncomingMessage, ServerResponse } from "node:http";
import { type Answer, BINARY_TYPE, CACHE_CONTROL, makeAnswer } from "../api/answer.js";
import { HttpError } from "../api/errors.js";
import { makeErrorAnswer } from "../api/service.js";
import { CATALOG_FILE, isReaderFile, objectPath } from "../format/objects.js";
import type { Snapshot } from "../format/snapshot.js";
import { type Platform, type Storage, StorageError } from "../format/storage.js";
import { type BodyState, sendAnswer } from "./http.js";
import { answerDocs, isDocsPath } from "./docs.js";
import { landingPage } from "./landing.js";

const HTML_TYPE = "text/html; charset=utf-8";
const TYPES: Record<string, string> = {
  json: "application/json; charset=utf-8",
  html: HTML_TYPE,
  js: "text/javascript; charset=utf-8",
};

export interface Site {
  storage: Storage;
  platform: Platform;
  snapshot(): Promise<Snapshot>;
}

/** Whether the site (not the interface) answers a GET or HEAD of `path`, the path exactly as sent. */
export function isSitePath(path: string): boolean {
  return path === "/" || path === "/favicon.ico" || path === "/explorer" || path === "/explorer/" || isDocsPath(path) || isReaderFile(path.slice(1));
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
  if (isDocsPath(path)) {
    const answer = await answerDocs(site.platform, path);
    if (!answer) return false;
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
    if (kind === "day" || kind === "ser") await sendPiece(site.storage, req, res, file, body);
    // catalog.json and /explorer/ name what the newest publish chose: a short cache; an object at its own path never changes
    else await sendAnswer(req, res, await readWhole(site, file, TYPES[kind], file === CATALOG_FILE || path === "/explorer/" ? "short" : "immutable"), body);
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
async function readWhole(site: Site, file: string, type: string, cache: "short" | "immutable"): Promise<Answer> {
  return makeAnswer(site.platform, await site.storage.read(file), { type, cache });
}

/**
 * A day or series piece as an answer of the shared path (server/http.ts: its ETag, 304, 206 and 416 are every
 * answer's): immutable, named by its sha256, read from the storage a part at a time as it is sent, never held whole.
 */
function sendPiece(storage: Storage, req: IncomingMessage, res: ServerResponse, file: string, body: BodyState): Promise<void> {
  const sha256 = file.slice(file.lastIndexOf("/") + 1, file.lastIndexOf("."));
  const answer: Answer = { status: 200, type: BINARY_TYPE, cache: "immutable", body: new Uint8Array(0), sha256, etag: true, headers: {}, ranges: true };
  return sendAnswer(req, res, answer, body, { read: (offset, length) => storage.read(file, offset, length) });
}
