// `make mirror`: serves a dist as a CDN would (sirv: range requests, ETag, a year's immutable caching for the
// content-addressed objects/, a minute for catalog.json, precompressed JSON), so the mirror client and the explorer
// can be developed and tested against a static server that is not this project's code. What it serves is the dist
// format's rule (format/objects.ts): catalog.json and the files a manifest may list (objects, their .br copies),
// as a bucket a mirror syncs into holds them; nothing else of the folder (a publish's debris, its journal).

import { existsSync, readFileSync } from "node:fs";
import http from "node:http";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import sirv from "sirv";
import { CACHE_CONTROL } from "../api/answer.js";
import type { CatalogPointer } from "../format/catalog.js";
import { CATALOG_FILE, isListedFile, objectPath } from "../format/objects.js";

export interface MirrorServerOptions {
  dist: string;
  /** 0 picks a free port */
  port?: number;
  /** one line per request on stderr (default false) */
  log?: boolean;
}

export interface MirrorServer {
  server: http.Server;
  url: string;
  port: number;
  close(): Promise<void>;
}

// objects/ are named by their sha256: they never change, so any cache may keep them (docs/contract.md §5). catalog.json is
// replaced by every publish: a minute, as the server's own catalog answers.
const IMMUTABLE = CACHE_CONTROL.immutable;
const SHORT = CACHE_CONTROL.short;

// Browsers read ranges cross-origin: Range (and If-None-Match on catalog.json revalidation) need a preflight, and a
// script reads only exposed headers.
const CORS = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Expose-Headers": "Content-Range, Content-Length, ETag, Accept-Ranges",
};

/** The request handler: GET and HEAD of dist files, CORS preflight, 405 for anything else. */
export function createMirrorHandler(dist: string, log = false): http.RequestListener {
  // dev mode looks each file up when asked, so a publish while serving is seen (a CDN sees new uploads too)
  // brotli: JSON objects have .br siblings written by publish, served to clients that accept br
  const serve = sirv(resolve(dist), { dev: true, etag: true, brotli: true, dotfiles: false });
  return (req, res) => {
    if (log) {
      res.on("finish", () => process.stderr.write(`${req.method} ${req.url} ${req.headers.range ?? ""} ${res.statusCode} ${res.getHeader("Content-Length") ?? ""}\n`));
    }
    for (const [name, value] of Object.entries(CORS)) res.setHeader(name, value);
    if (req.method === "OPTIONS") {
      res.writeHead(204, {
        "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
        "Access-Control-Allow-Headers": "Range, If-None-Match, If-Modified-Since",
        "Access-Control-Max-Age": "86400",
        "Content-Length": "0",
      });
      res.end();
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { Allow: "GET, HEAD, OPTIONS", "Content-Length": "0" });
      res.end();
      return;
    }
    const path = (req.url ?? "/").split("?")[0];
    if (path === "/explorer/" || path === "/explorer") {
      // a convenience a CDN does not offer: the explorer page catalog.json names (on a static host, link that object)
      const location = findExplorer(dist);
      res.writeHead(location ? 302 : 404, { ...(location ? { Location: `/${location}` } : { "Content-Type": "text/plain; charset=utf-8" }), "Cache-Control": "no-store" });
      res.end(location ? "" : "this dist's catalog.json names no explorer page\n");
      return;
    }
    if (path.slice(1) !== CATALOG_FILE && !isListedFile(path.slice(1))) {
      res.writeHead(404, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" });
      res.end("not a file this dist gives its readers\n");
      return;
    }
    // set before sirv: its headers give way to ones already on the response
    res.setHeader("Cache-Control", path.startsWith("/objects/") ? IMMUTABLE : SHORT);
    if (path.endsWith(".day")) res.setHeader("Content-Type", "application/octet-stream");
    serve(req, res, () => {
      res.writeHead(404, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" });
      res.end("not found\n");
    });
  };
}

/** The path of the explorer page the dist's catalog.json names, or null. */
function findExplorer(dist: string): string | null {
  try {
    const pointer = JSON.parse(readFileSync(resolve(dist, CATALOG_FILE), "utf8")) as CatalogPointer;
    return pointer.explorer ? objectPath(pointer.explorer.sha256, "html") : null;
  } catch {
    return null;
  }
}

/** Serves `dist` on 127.0.0.1 (port 0: a free one); resolves once listening. */
export async function startMirrorServer(options: MirrorServerOptions): Promise<MirrorServer> {
  const server = http.createServer(createMirrorHandler(options.dist, options.log ?? false));
  await new Promise<void>((ready, fail) => {
    server.once("error", fail);
    server.listen(options.port ?? 0, "127.0.0.1", () => ready());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}

function readFlag(args: string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
}

async function main(args: string[]): Promise<void> {
  const dist = readFlag(args, "--dist") ?? "dist";
  const port = Number(readFlag(args, "--port") ?? 8081);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port ${readFlag(args, "--port")} is not a port number`);
  if (!existsSync(resolve(dist, "catalog.json"))) throw new Error(`${resolve(dist, "catalog.json")} is missing; build a dist with \`make publish DIST=${dist}\``);
  const mirror = await startMirrorServer({ dist, port, log: true });
  process.stdout.write(`mirror of ${resolve(dist)} at ${mirror.url}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  main(process.argv.slice(2)).catch((err) => {
    process.stderr.write(`mirror: ${(err as Error).message}\n`);
    process.exit(1);
  });
}
