// The pages of a DAP2 dataset a person opens in a browser: `.html` (what it holds, and its URL in each tool's
// words, to copy), `.info` (its DDS and DAS as a page), and `.ver` (the protocol and server versions).

import { GRID } from "../../format/grid.js";
import type { GridCube } from "../cube.js";
import { describeAttributes, describeDataset } from "./dataset.js";
import { writeDas, writeDds } from "./wire.js";

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** `.ver`: DAP2's version answer, as servers of the protocol write it. */
export function describeVersion(): string {
  return "Core version: DAP/2.0\nServer version: climate-data-service/dap2\n";
}

/** Each tool's first read of the dataset at `url`: one place over its first 31 dates, and the header. */
function recipes(cube: GridCube, url: string): [tool: string, text: string][] {
  const v = cube.variable.name;
  const days = Math.min(31, cube.days);
  return [
    ["ncdump (the header)", `ncdump -h '${url}'`],
    ["nccopy (a box of the first dates to a file)", `nccopy '${url}?${v}.${v}[0:${days - 1}][300:319][400:419]' box.nc`],
    ["NCO", `ncks -d time,0,${days - 1} -d lat,300,319 -d lon,400,419 -v ${v} '${url}' box.nc`],
    ["CDO", `cdo sinfon '${url}'`],
    ["Python netCDF4", `import netCDF4; values = netCDF4.Dataset("${url}")["${v}"][0:${days}, 300, 400]`],
    ["xarray", `import xarray as xr; ds = xr.open_dataset("${url}", engine="netcdf4"); ds["${v}"].sel(lat=-25, lon=135, method="nearest")`],
    ["R ncdf4", `library(ncdf4); nc <- nc_open("${url}"); ncvar_get(nc, "${v}", start = c(401, 301, 1), count = c(1, 1, ${days}))`],
    ["MATLAB", `ncread('${url}', '${v}', [401 301 1], [1 1 ${days}])`],
    ["Panoply", `File > Open Remote Dataset..., then paste ${url}`],
  ];
}

/** `.html` (the dataset and its URL in each tool) or `.info` (its DDS and DAS). */
export function describePage(cube: GridCube, suffix: "html" | "info", baseUrl: string): string {
  const record = cube.view.record;
  const url = `${baseUrl}/opendap/${record.id}`;
  const { first, last } = cube.view.index.coverage;
  const head = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(record.id)}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}pre,code{font:13px/1.4 ui-monospace,monospace}pre{background:#f4f4f4;padding:.6rem;overflow-x:auto}</style></head><body>`;
  if (suffix === "info") {
    return `${head}<h1>${escapeHtml(record.id)}</h1><h2>DDS</h2><pre>${escapeHtml(writeDds(record.id, describeDataset(cube)))}</pre><h2>DAS</h2><pre>${escapeHtml(writeDas(describeAttributes(cube)))}</pre></body></html>\n`;
  }
  const v = cube.variable;
  const rows = recipes(cube, url).map(([tool, text]) => `<h3>${escapeHtml(tool)}</h3><pre>${escapeHtml(text)}</pre>`).join("\n");
  return `${head}<h1>${escapeHtml(record.title)}</h1>
<p>OPeNDAP (DAP2) dataset <code>${escapeHtml(record.id)}</code>: <code>${escapeHtml(v.name)}</code> (${escapeHtml(v.label)}, ${escapeHtml(v.unit)}), float32 over
<code>time</code> (${cube.days} dates, ${first} to ${last}, days since 1970-01-01), <code>lat</code> (${GRID.height}, north to south) and <code>lon</code> (${GRID.width}, west to east);
NaN where there is no value. ${escapeHtml(record.attribution)}; ${escapeHtml(record.license)}.</p>
<p>Give a tool this URL, without a suffix: <code>${escapeHtml(url)}</code>. It reads
<a href="${escapeHtml(record.id)}.dds">.dds</a>, <a href="${escapeHtml(record.id)}.das">.das</a> and <code>.dods?</code> with index ranges, only what it asks
(at most 10,000,000 values a request; <a href="${escapeHtml(record.id)}.info">.info</a> shows both texts).</p>
${rows}
</body></html>
`;
}
