// The server's front door beside the interface: a landing page at `/`, the explorer at `/explorer/`, and the dist
// files the explorer reads (catalog.json, objects), taken from the same Storage as every answer, so the explorer
// works over a local or a remote dist alike. Only the files a dist gives its readers are served
// (format/objects.ts isReaderFile, on the path exactly as sent); anything else falls through to the interface's 404.

import type { IncomingMessage, ServerResponse } from "node:http";
import { type Answer, CACHE_CONTROL, makeAnswer } from "../api/answer.js";
import { makeDataRequest } from "../api/request.js";
import { candidatesOf } from "../format/catalog.js";
import type { Window } from "../format/grid.js";
import { CATALOG_FILE, isReaderFile, objectPath } from "../format/objects.js";
import { QUERY_VARIABLE } from "../format/records.js";
import type { Snapshot } from "../format/snapshot.js";
import { type Platform, type Storage, StorageError } from "../format/storage.js";
import { type BodyState, sendAnswer } from "./http.js";

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
 * A request that returns data: 2 x 2 cells at the centre of the newest query candidate's first date (inland
 * Australia on the full grid); null when no version answers queries.
 */
export function exampleQuery(snapshot: Snapshot): object | null {
  const newest = candidatesOf(snapshot.pointer, QUERY_VARIABLE)[0];
  if (!newest || newest.coverage.windowAll[2] === 0) return null;
  const [col, row, width, height] = newest.coverage.windowAll;
  const window: Window = [col + Math.max(0, Math.floor(width / 2) - 1), row + Math.max(0, Math.floor(height / 2) - 1), Math.min(2, width), Math.min(2, height)];
  return makeDataRequest(window, newest.coverage.first, newest.coverage.first);
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The landing page: what this is, and links to the explorer, the OpenAPI document and a query to try. */
export function landingPage(snapshot: Snapshot | null): string {
  const query = snapshot && exampleQuery(snapshot);
  const queryText = query ? JSON.stringify(query) : null;
  const tryQuery = queryText
    ? `<h2>A query to try</h2>
<pre id="query">${escapeHtml(queryText)}</pre>
<p><button id="run">POST it to /api/v1/data/query</button> or with curl:</p>
<pre>curl -sS -X POST "$BASE/api/v1/data/query" -H 'Content-Type: application/json' -d '${escapeHtml(queryText)}'</pre>
<pre id="answer" hidden></pre>
<script>
document.getElementById("run").onclick = async () => {
  const answer = document.getElementById("answer");
  const response = await fetch("api/v1/data/query", { method: "POST", headers: { "Content-Type": "application/json" }, body: document.getElementById("query").textContent });
  answer.textContent = response.status + " " + response.statusText + "\\n" + (await response.text());
  answer.hidden = false;
};
</script>`
    : `<p>${snapshot ? "No published version answers queries yet." : "The catalog cannot be read just now; /api/health says more."}</p>`;
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Climate data service</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}pre{background:#f4f4f4;padding:.5rem;overflow-x:auto;white-space:pre-wrap;word-break:break-all}</style>
</head>
<body>
<h1>Climate data service</h1>
<p>SILO daily maximum temperature on its 0.05&deg; grid, and station observations: immutable, content-hashed versions.</p>
<ul>
<li><a href="explorer/">The explorer</a>: the map of the newest version, a cell's whole series, a box as CSV</li>
<li><a href="api/v1/openapi.json">The OpenAPI document</a> of every route</li>
<li><a href="api/v1/capabilities">Capabilities</a>, <a href="api/v1/datasets">the catalog</a>, <a href="api/health">health</a></li>
</ul>
${tryQuery}
</body>
</html>
`;
}

/**
 * A single closed byte range `bytes=a-b` (what the mirror client and browsers' readers send); null for none, or
 * for one this server ignores by sending the whole piece (RFC 9110 §14.2: open, suffix and multiple ranges).
 */
function readRange(header: string | undefined): { start: number; end: number } | null {
  const match = header && /^bytes=(\d{1,15})-(\d{1,15})$/.exec(header.trim());
  if (!match) return null;
  const [start, end] = [Number(match[1]), Number(match[2])];
  return end < start ? null : { start, end };
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
    const answer = await makeAnswer(site.platform, landingPage(snapshot), { type: HTML_TYPE, cache: snapshot ? "short" : "no-store" });
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
    else if (err instanceof StorageError) sendUnavailable(res, `${file} cannot be read just now; retry later with exponential backoff.`);
    else throw err;
  }
  return true;
}

/** A dist file the storage cannot read now (a disk or a remote host failing): the contract's 503, never a 500. */
function sendUnavailable(res: ServerResponse, message: string): void {
  const body = JSON.stringify({ error: "service_unavailable", message });
  res.writeHead(503, { "Content-Type": TYPES.json, "Cache-Control": CACHE_CONTROL["no-store"], "Retry-After": "1", "Content-Length": Buffer.byteLength(body) }).end(body);
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
  const range = readRange(req.headers.range);
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
