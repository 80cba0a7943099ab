// The landing page at `/`: what the service is, what it publishes (and whether it is generated), where everything
// is (the explorer, the API reference, the docs: links that answer), and an example query to edit and send, with a curl line that works as pasted (it names this server's address).

import { makeDataRequest } from "../api/query/face.js";
import { type Candidate, candidatesOf } from "../format/catalog.js";
import { type Window, colToLon, rowToLat } from "../format/grid.js";
import { QUERY_VARIABLE } from "../format/records.js";
import type { Snapshot } from "../format/snapshot.js";
import { VARIABLES } from "../format/variables.js";
import { DOCS } from "./docs.js";

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * A request that returns data: 2 x 2 cells at the centre of the newest query candidate's first date (inland
 * Australia on the full grid); null when no version answers queries.
 */
export function exampleQuery(snapshot: Snapshot): object | null {
  const newest = newestQueryCandidate(snapshot);
  if (!newest) return null;
  const [col, row, width, height] = newest.coverage.windowAll;
  const window: Window = [col + Math.max(0, Math.floor(width / 2) - 1), row + Math.max(0, Math.floor(height / 2) - 1), Math.min(2, width), Math.min(2, height)];
  return makeDataRequest(window, newest.coverage.first, newest.coverage.first);
}

/** The newest query candidate holding a cell on every date (the examples' source), or null. */
function newestQueryCandidate(snapshot: Snapshot): Candidate | null {
  const newest = candidatesOf(snapshot.pointer, QUERY_VARIABLE)[0];
  return newest && newest.coverage.windowAll[2] > 0 ? newest : null;
}

/** The newest version of each variable the catalog names, as table rows. */
function describeVariables(snapshot: Snapshot, baseUrl: string): string {
  const rows = VARIABLES.flatMap((v) => {
    const newest: Candidate | undefined = candidatesOf(snapshot.pointer, v.name)[0];
    if (!newest) return [];
    const key = newest.record?.dataset_key;
    const zarr = key ? `zarr/v2/latest/${key}/` : null;
    const links = zarr ? `<a href="${zarr}maps/.zmetadata">maps</a>, <a href="${zarr}series/.zmetadata">series</a>` : "";
    // the URL a DAP client is given (it adds the suffixes): absolute, to copy into ncdump, CDO, MATLAB or Panoply
    const dap = key ? `<a href="opendap/${escapeHtml(newest.id)}.html"><code>${escapeHtml(`${baseUrl}/opendap/latest/${key}`)}</code></a>` : "";
    return [`<tr><td>${v.label}</td><td><code>${v.name}</code> (<code>${v.silo}</code>)</td><td>${escapeHtml(v.unit)}</td><td>${newest.coverage.first} .. ${newest.coverage.last}</td><td><code>${escapeHtml(newest.id)}</code></td><td>${links}</td><td>${dap}</td></tr>`];
  });
  if (rows.length === 0) return "<p>No raster version is published yet.</p>";
  return `<table><thead><tr><th>variable</th><th>API and SILO name</th><th>unit</th><th>period</th><th>newest version</th><th>Zarr view</th><th>OPeNDAP</th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

/** A link to the series route: every published variable at a cell of the example query, its whole period. */
function describeSeries(snapshot: Snapshot): string {
  const newest = newestQueryCandidate(snapshot);
  if (!newest) return "";
  const variables = VARIABLES.filter((v) => candidatesOf(snapshot.pointer, v.name).length > 0).map((v) => v.silo);
  const [col, row, width, height] = newest.coverage.windowAll;
  const place = `lat=${rowToLat(row + Math.floor(height / 2))}&amp;lon=${colToLon(col + Math.floor(width / 2))}`;
  return `<li><a href="api/v1/series?${place}&amp;variables=${variables.join(",")}">A place over the whole published period</a>
(the series route, CSV; <code>&amp;format=json</code> adds its provenance, <code>&amp;format=met</code> makes an APSIM file)</li>`;
}

const SEND_SCRIPT = `<script>
// the answer, readable: its status, then its rows as a table (the first 20) or its error and issues
document.getElementById("run").onclick = async () => {
  const out = document.getElementById("answer");
  let body;
  try { body = JSON.stringify(JSON.parse(document.getElementById("query").value)); } catch (e) { out.textContent = "Not JSON: " + e.message; out.hidden = false; return; }
  const response = await fetch("api/v1/data/query", { method: "POST", headers: { "Content-Type": "application/json" }, body });
  const answer = await response.json();
  const lines = [response.status + " " + response.statusText];
  if (answer.data) {
    lines.push(answer.data.length + " rows of " + answer.manifest.datasetVersion + " (dataSha256 " + answer.manifest.dataSha256 + ")");
    for (const r of answer.data.slice(0, 20)) lines.push([r.date, r.longitude, r.latitude, r.value === null ? "missing" : r.value, r.unit].join("  "));
  } else {
    lines.push(answer.error + ": " + answer.message);
    for (const i of answer.issues || []) lines.push("  " + i.path.join(".") + ": " + i.message);
  }
  out.textContent = lines.join("\\n");
  out.hidden = false;
};
</script>`;

function describeQuery(snapshot: Snapshot | null, baseUrl: string): string {
  const query = snapshot && exampleQuery(snapshot);
  if (!query) return `<p>${snapshot ? "No published version answers queries yet." : "The catalog cannot be read just now; /api/health says more."}</p>`;
  const compact = escapeHtml(JSON.stringify(query));
  return `<h2>A query to try</h2>
<p>Edit it (any box, dates up to 31 days), then send it:</p>
<textarea id="query" rows="14" cols="80" spellcheck="false">${escapeHtml(JSON.stringify(query, null, 2))}</textarea>
<p><button id="run">POST it to /api/v1/data/query</button></p>
<pre id="answer" hidden></pre>
<p>The same with curl, as pasted:</p>
<pre id="curl">curl -sS ${escapeHtml(baseUrl)}/api/v1/data/query -H 'Content-Type: application/json' -d '${compact}'</pre>
${SEND_SCRIPT}`;
}

/** The landing page of the server at `baseUrl` (its scheme and host as the request named them). */
export function landingPage(snapshot: Snapshot | null, baseUrl: string): string {
  const generated = snapshot?.pointer.candidates.some((c) => c.record.metadata.synthetic === true) ?? false;
  const banner = generated
    ? `<p id="banner">Generated demo data: synthetic values on the SILO grid, not observations. <code>make demo-day</code> publishes the next generated day.</p>`
    : "";
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Climate data service</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:64rem;margin:2rem auto;padding:0 1rem}pre,textarea{background:#f4f4f4;padding:.5rem;overflow-x:auto;white-space:pre-wrap;word-break:break-all;font:13px ui-monospace,monospace;width:100%;box-sizing:border-box}#banner{background:#fff3cd;color:#5c4400;padding:.5rem .8rem;font-weight:600;border:1px solid #e6d79b}table{border-collapse:collapse;font-size:14px}td,th{border-bottom:1px solid #ddd;padding:2px 8px;text-align:left}</style>
</head>
<body>
<h1>Climate data service</h1>
${banner}
<p>SILO's daily gridded climate on its 0.05&deg; grid, as immutable, content-hashed versions with their provenance:
a map of one day, a place over decades, or an area for xarray, GDAL, QGIS and R, and every version by URL for
netCDF's own tools (ncdump, NCO, CDO, MATLAB, R's ncdf4, Panoply) through OPeNDAP.</p>
<h2>What is published</h2>
${snapshot ? describeVariables(snapshot, baseUrl) : "<p>The catalog cannot be read just now.</p>"}
<p>Recent days change: SILO re-interpolates them every night as late station reports arrive (rain up to 12 months
back, the other variables 3 to 6 months), and each night's revisions are a new version. A version never changes:
pin one with <code>dataset_version</code> for a result that never moves, and ask
<code>api/v1/datasets/{id}/revisions</code> which of its dates have been revised since.</p>
<h2>Where to go</h2>
<ul>
<li><a href="explorer/">The explorer</a>: a map of any published day of any variable, a cell's whole series, a box as CSV</li>
${snapshot ? describeSeries(snapshot) : ""}
<li><a href="api/v1/docs">The API reference</a> (HTML, rendered from <a href="api/v1/openapi.json">the OpenAPI document</a> of every route)</li>
<li><a href="api/v1/capabilities">Capabilities</a>, <a href="api/v1/datasets">the catalog</a>, <a href="api/health">health</a></li>
</ul>
<h2>Documentation</h2>
<p>The repository's pages, as Markdown text, served by this server from its checkout:</p>
<ul>
${DOCS.map(([page, what]) => `<li><a href="${page}">${page}</a>: ${what}</li>`).join("\n")}
</ul>
${describeQuery(snapshot, baseUrl)}
</body>
</html>
`;
}
