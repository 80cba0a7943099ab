// The documentation a running server serves beside the interface: the README and docs/*.md of the checkout it runs from,
// as text/markdown at their repository paths (so the pages' relative links resolve on the server as in the
// repository), and the HTML API reference at /api/v1/docs: the OpenAPI document rendered in the browser by Redoc's
// standalone bundle from npm (build/redoc.standalone.js, which make install takes from the package), served by this
// server, so the page needs no network beyond it.

import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { type Answer, makeAnswer } from "../api/answer.js";
import type { Platform } from "../format/storage.js";

/** The checkout: server/ when run by tsx, build/ when bundled (make serve); both sit at its top. */
const REPOSITORY = resolve(import.meta.dirname, "..");

export const REFERENCE_PATH = "/api/v1/docs";
const REDOC_PATH = `${REFERENCE_PATH}/redoc.standalone.js`;
const MARKDOWN_TYPE = "text/markdown; charset=utf-8";

/** The README and a docs page: a name of lowercase letters, digits and hyphens, so no path leaves docs/. */
const PAGE = /^\/(README\.md|docs\/[a-z0-9-]+\.md)$/;

/** The pages for each reader, in the order the landing page lists them. */
export const DOCS: [string, string][] = [
  ["README.md", "the first five minutes"],
  ["docs/clients.md", "curl, Python, R, the series route (CSV, JSON, APSIM), the Zarr view, the mirror client"],
  ["docs/publishing.md", "fetching and publishing SILO's files, the daily routine"],
  ["docs/mirrors.md", "hosting a dist on a static host or CDN"],
  ["docs/operating.md", "running the server and unattended publishes"],
  ["docs/performance.md", "the latest benchmark run"],
  ["docs/contract.md", "the interface's rules"],
  ["docs/format.md", "the bytes of a dist"],
  ["docs/glossary.md", "the words"],
];

export function isDocsPath(path: string): boolean {
  return path === REFERENCE_PATH || path === REDOC_PATH || PAGE.test(path);
}

// Relative URLs: the page works behind a proxy that serves the interface under another prefix.
const REFERENCE_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Climate Data Service: API reference</title>
<style>body{margin:0}</style>
</head>
<body>
<redoc spec-url="openapi.json"></redoc>
<script src="docs/redoc.standalone.js"></script>
</body>
</html>
`;

/**
 * Nothing but this server: Redoc's side menu shows its attribution with a logo from Redocly's CDN, which this policy
 * refuses (the link's text stays). Styles are inline (styled-components), the search index runs in a blob: worker.
 */
const REFERENCE_POLICY = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; worker-src blob:; connect-src 'self'";

/** The page and the bundle, made once: a repeated request reuses their hash and compressed forms (server/http.ts). */
let reference: Promise<Answer> | null = null;
let redoc: Promise<Answer> | null = null;

async function readRedoc(platform: Platform): Promise<Answer> {
  const file = join(REPOSITORY, "build", "redoc.standalone.js");
  return makeAnswer(platform, await readFile(file), { type: "text/javascript; charset=utf-8", cache: "short" });
}

/** The answer of a docs path, or null when there is no such page (the interface's 404). */
export async function answerDocs(platform: Platform, path: string): Promise<Answer | null> {
  if (path === REFERENCE_PATH) return (reference ??= makeAnswer(platform, REFERENCE_PAGE, { type: "text/html; charset=utf-8", cache: "short", headers: { "Content-Security-Policy": REFERENCE_POLICY } }));
  if (path === REDOC_PATH) return (redoc ??= readRedoc(platform).catch((err) => ((redoc = null), Promise.reject(err))));
  try {
    // read when asked: a checkout's docs change with it, and the page is small
    return await makeAnswer(platform, await readFile(join(REPOSITORY, path.slice(1))), { type: MARKDOWN_TYPE, cache: "short" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
}
