// The browser explorer of a mirror: a map of one date, a cell's series and its files (CSV, APSIM), a box's CSV, and
// where it all comes from. It talks to nothing but the mirror it was loaded from, through the client library (every
// piece verified): the files are the series route's answers, computed here from the mirror's static files.

import { AnswerError, type MirrorAnswer, createMirrorClient } from "../client/index.js";
import { makeDataRequest } from "../api/query/face.js";
import { seriesPath } from "../api/series/face.js";
import { dateToDayNumber, dayNumberToDate } from "../format/dates.js";
import { GRID, type Window, bboxToWindow, colToLon, rowToLat, tileId, windowToTiles } from "../format/grid.js";
import type { Dataset } from "../format/records.js";
import { QUERY_VARIABLE } from "../format/records.js";
import { APSIM_REQUIRED, type Variable, VARIABLES } from "../format/variables.js";
import { pointerToCell } from "./pointer.js";

/** A colour scale: a value's place between min and max (after `shape`), mapped through the stops. */
interface Scale {
  min: number;
  max: number;
  stops: [number, [number, number, number]][];
  /** the fraction of the scale a value takes: linear by default; rain's is logarithmic (most wet days are light) */
  shape?: (value: number, scale: Scale) => number;
  /** a colour of its own for exactly 0 (a dry day), never a colour of the scale and never the missing hatch */
  zero?: { colour: [number, number, number]; label: string };
}

// Missing cells always stay transparent over the hatch behind the map: no colour of any scale means "no data".
const COLD_TO_HOT: Scale["stops"] = [
  [0, [49, 54, 149]],
  [0.2, [69, 117, 180]],
  [0.35, [116, 173, 209]],
  [0.5, [254, 224, 144]],
  [0.65, [253, 174, 97]],
  [0.8, [244, 109, 67]],
  [1, [165, 0, 38]],
];
// evaporative demand and dryness rise from pale to deep orange; humidity from pale to deep blue
const DRYING: Scale["stops"] = [[0, [255, 255, 212]], [0.35, [254, 217, 142]], [0.7, [254, 153, 41]], [1, [153, 52, 4]]];
const MOISTENING: Scale["stops"] = [[0, [255, 255, 217]], [0.4, [127, 205, 187]], [0.75, [29, 145, 192]], [1, [12, 44, 132]]];
const SCALES: Record<string, Scale> = {
  air_temperature_max: { min: -10, max: 50, stops: COLD_TO_HOT },
  air_temperature_min: { min: -15, max: 35, stops: COLD_TO_HOT },
  precipitation_amount: {
    min: 0.1,
    max: 100,
    shape: (v, s) => Math.log(v / s.min) / Math.log(s.max / s.min),
    stops: [[0, [199, 233, 180]], [0.35, [65, 182, 196]], [0.7, [34, 94, 168]], [1, [8, 29, 88]]],
    zero: { colour: [255, 250, 232], label: "0 mm (no rain)" },
  },
  surface_downwelling_shortwave_flux_in_air: { min: 0, max: 35, stops: [[0, [37, 37, 60]], [0.4, [153, 52, 4]], [0.75, [236, 112, 20]], [1, [255, 237, 111]]] },
  water_vapor_partial_pressure_in_air: { min: 0, max: 40, stops: [[0, [247, 252, 185]], [0.4, [120, 198, 121]], [0.75, [35, 132, 67]], [1, [0, 69, 41]]] },
  water_vapor_saturation_deficit_in_air: { min: 0, max: 80, stops: DRYING },
  relative_humidity_at_max_temperature: { min: 0, max: 100, stops: MOISTENING },
  relative_humidity_at_min_temperature: { min: 0, max: 100, stops: MOISTENING },
  air_pressure_at_mean_sea_level: { min: 990, max: 1030, stops: [[0, [94, 60, 153]], [0.5, [247, 247, 247]], [1, [230, 97, 1]]] },
};

/**
 * A variable's scale: its own above, else (evaporation and evapotranspiration, and any variable the table adds) its
 * plausible range, capped at 20 mm for evaporation: real days rarely pass it, and a map spread over 0..35 is flat.
 */
function scaleOf(variable: Variable): Scale {
  const [min, max] = variable.plausible;
  return SCALES[variable.name] ?? { min, max: variable.unit === "mm" ? Math.min(max, 20) : max, stops: DRYING };
}

// the dist's folder: the page is served at <dist>/explorer/ by make serve and make mirror, and is itself the object
// <dist>/objects/<aa>/<sha256>.html that catalog.json names on any static host
const DIST_URL = new URL(/\/objects\/[0-9a-f]{2}\/[0-9a-f]{64}\.html$/.test(location.pathname) ? "../../" : "../", location.href).href;
const client = createMirrorClient({ baseUrl: DIST_URL });
const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

function colourOf(value: number, scale: Scale): [number, number, number] {
  if (value === 0 && scale.zero) return scale.zero.colour;
  const { stops } = scale;
  const place = scale.shape ? scale.shape(value, scale) : (value - scale.min) / (scale.max - scale.min);
  const t = Math.min(1, Math.max(0, place));
  for (let i = 1; i < stops.length; i++) {
    const [t1, c1] = stops[i];
    const [t0, c0] = stops[i - 1];
    if (t <= t1) {
      const f = (t - t0) / (t1 - t0);
      return [0, 1, 2].map((k) => Math.round(c0[k] + f * (c1[k] - c0[k]))) as [number, number, number];
    }
  }
  return stops[stops.length - 1][1];
}

function showError(err: unknown): void {
  const message = err instanceof AnswerError ? err.message : err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  const box = $("error");
  box.textContent = `Something failed: ${message}`;
  box.style.display = "block";
  document.body.dataset.status = "error";
  $("status").textContent = "Failed; see the message below.";
}

function setStatus(text: string): void {
  $("status").textContent = text;
}

interface Version {
  record: Dataset;
  variable: Variable;
  window: Window;
  gaps: [string, string][];
}

/** The newest version of each variable the mirror publishes (the one a request without a pin uses), in table order. */
async function findVersions(): Promise<Version[]> {
  const versions: Version[] = [];
  for (const variable of VARIABLES) {
    const newest = await client.newestVersion(variable.name);
    const window = newest?.bbox ? bboxToWindow(newest.bbox) : null;
    if (!newest || !window) continue;
    versions.push({ record: newest, variable, window, gaps: (newest.metadata.gaps as [string, string][] | undefined) ?? [] });
  }
  if (versions.length === 0) throw new Error("this mirror publishes no SILO daily version");
  return versions;
}

interface SeriesAnswer {
  /** first..last date of the call */
  period: string;
  manifest: Record<string, unknown>;
  digest: string;
}

/** Date ranges as text: "2004-01-03, 2004-01-05..2004-01-09". */
const rangesText = (ranges: [string, string][]) => ranges.map(([s, e]) => (s === e ? s : `${s}..${e}`)).join(", ");

/** What the version changed against the one it was built from (metadata.changes), in words. */
function describeChanges(r: Dataset): [string, string][] {
  const changes = r.metadata.changes as { added: [string, string][]; revised: [string, string][]; removed: [string, string][]; exact: boolean } | undefined;
  const base = r.metadata.built_from as string | null | undefined;
  if (!changes) return [];
  const parts = (["added", "revised", "removed"] as const).filter((k) => changes[k].length > 0).map((k) => `${k} ${rangesText(changes[k])}`);
  const said = parts.length > 0 ? parts.join("; ") : "no date's cells changed";
  return [
    ["built from", base ?? "no earlier version (the first of its dataset here)"],
    ["changes", `${said}${changes.exact ? "" : " (ranges merged to stay short: npm run mirror -- diff lists each date)"}`],
  ];
}

function describeProvenance(version: Version, series: SeriesAnswer[] = []): void {
  const r = version.record;
  const rows: [string, string][] = [
    ["version", r.id],
    ...(typeof r.metadata.citation === "string" ? [["cite as", r.metadata.citation] as [string, string]] : []),
    ...describeChanges(r),
    ["content sha256", r.content_sha256],
    ["period", `${r.period_start} .. ${r.period_end}${version.gaps.length ? ` (${version.gaps.length} gaps)` : ""}`],
    ["license", r.license],
    ["attribution", r.attribution],
    ["data", r.metadata.synthetic ? "GENERATED demo values, not observations" : `SILO (${(r.metadata.provenance as string[] | undefined)?.join(", ") ?? "fetched"})`],
    ["read from", DIST_URL],
  ];
  const list = $("provenance");
  list.replaceChildren(...rows.flatMap(([k, v]) => [Object.assign(document.createElement("dt"), { textContent: k }), Object.assign(document.createElement("dd"), { textContent: v })]));
  if (series.length > 0) list.append(Object.assign(document.createElement("dt"), { textContent: "series" }), describeQueries(series));
  void describeOpendap(r.id, list);
}

/** The version's OPeNDAP URL, when a server answers it here (a static host has none: make serve's does). */
async function describeOpendap(id: string, list: HTMLElement): Promise<void> {
  const url = `${DIST_URL}opendap/${id}`;
  const answered = await fetch(`${url}.ver`).then((r) => r.ok, () => false);
  if (!answered || list.querySelector("#opendap")) return;
  const link = Object.assign(document.createElement("a"), { href: `${url}.html`, textContent: url, id: "opendap" });
  const dd = document.createElement("dd");
  dd.append(link, " (give this URL to ncdump, CDO, NCO, MATLAB, R's ncdf4 or Panoply)");
  list.append(Object.assign(document.createElement("dt"), { textContent: "OPeNDAP" }), dd);
}

/** The series calls (one per range of held dates), folded: each one's period, dataSha256, requestSha256 and Content-Digest. */
function describeQueries(series: SeriesAnswer[]): HTMLElement {
  const details = document.createElement("details");
  details.append(Object.assign(document.createElement("summary"), { textContent: `${series.length} call${series.length === 1 ? "" : "s"} of GET /api/v1/series, each verified` }));
  for (const { period, manifest, digest } of series) {
    const line = `${period}: dataSha256 ${String(manifest.dataSha256)}; requestSha256 ${String(manifest.requestSha256)}; Content-Digest ${digest}`;
    details.append(Object.assign(document.createElement("div"), { textContent: line, className: "query" }));
  }
  const dd = document.createElement("dd");
  dd.append(details);
  return dd;
}

function drawLegend(version: Version): void {
  const { variable } = version;
  const scale = scaleOf(variable);
  const canvas = $<HTMLCanvasElement>("scale");
  const ctx = canvas.getContext("2d")!;
  for (let x = 0; x < canvas.width; x++) {
    const t = x / (canvas.width - 1);
    // the legend runs evenly along the scale's own shape (rain's is logarithmic)
    const value = scale.shape ? scale.min * (scale.max / scale.min) ** t : scale.min + (scale.max - scale.min) * t;
    const [r, g, b] = colourOf(value, { ...scale, zero: undefined });
    ctx.fillStyle = `rgb(${r},${g},${b})`;
    ctx.fillRect(x, 0, 1, canvas.height);
  }
  $("scale-min").textContent = `≤ ${scale.min} ${variable.unit}`;
  $("scale-max").textContent = `≥ ${scale.max} ${variable.unit}`;
  const zero = $("zero");
  zero.style.display = scale.zero ? "inline" : "none";
  if (scale.zero) {
    $("zero-swatch").style.background = `rgb(${scale.zero.colour.join(",")})`;
    $("zero-label").textContent = scale.zero.label;
  }
  const said = version.record.metadata.variable as { observed?: string } | undefined;
  $("convention").textContent = `${variable.label} (${variable.name}, SILO ${variable.silo}), ${variable.unit}: the value of a date is for ${said?.observed ?? variable.observed}.`;
}

const inGap = (version: Version, date: string) => version.gaps.some(([s, e]) => date >= s && date <= e);

async function drawMap(version: Version, date: string): Promise<void> {
  const id = version.record.id;
  $("map-title").textContent = `${version.variable.label} on ${date}`;
  const scale = scaleOf(version.variable);
  const canvas = $<HTMLCanvasElement>("map");
  const ctx = canvas.getContext("2d")!;
  if (inGap(version, date)) {
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    setStatus(`${date} is a gap of ${id}: no cells were published for it.`);
    return;
  }
  setStatus(`Reading the tiles of ${date}…`);
  const image = ctx.createImageData(GRID.width, GRID.height);
  const tiles = windowToTiles(version.window).map((part) => tileId(date, part.tileRow, part.tileCol));
  const answers = await Promise.all(tiles.map((tile) => client.answer({ path: `/api/v1/layers/${id}`, query: { tile } })));
  for (const answer of answers) {
    if (answer.status === 404) continue; // that date's window leaves this lattice tile out
    if (answer.status !== 200) throw new AnswerError(answer);
    const { tile } = answer.json<{ tile: { source_window: Window; cells: (number | null)[] } }>();
    const [c0, r0, w, h] = tile.source_window;
    for (let r = 0; r < h; r++) {
      for (let c = 0; c < w; c++) {
        const v = tile.cells[r * w + c];
        if (v === null) continue; // transparent: the hatch shows through
        const at = ((r0 + r) * GRID.width + (c0 + c)) * 4;
        const [red, green, blue] = colourOf(v, scale);
        image.data[at] = red;
        image.data[at + 1] = green;
        image.data[at + 2] = blue;
        image.data[at + 3] = 255;
      }
    }
  }
  ctx.putImageData(image, 0, 0);
  const { requests, bytes } = client.stats();
  setStatus(`${date}: ${tiles.length} tiles, verified (${requests} requests, ${(bytes / 1e6).toFixed(1)} MB read from the mirror so far).`);
}

/** The global cell under a pointer event (explorer/pointer.ts: the series route's rule), or null off the map. */
function cellAt(event: PointerEvent): { col: number; row: number } | null {
  const rect = $<HTMLCanvasElement>("map").getBoundingClientRect();
  return pointerToCell((event.clientX - rect.left) / rect.width, (event.clientY - rect.top) / rect.height);
}

const dataRequest = (cells: Window, start: string, end: string, version: Version) => makeDataRequest(cells, start, end, { dataset_version: version.record.id });

interface Row {
  date: string;
  longitude: number;
  latitude: number;
  value: number | null;
  tile: string;
  row: number;
  col: number;
}

function drawSeries(rows: Row[], unit: string): void {
  const svg = $("chart") as unknown as SVGSVGElement;
  const values = rows.map((r) => r.value).filter((v): v is number => v !== null);
  svg.replaceChildren();
  if (values.length === 0) return;
  const lo = Math.floor(Math.min(...values)) - 1;
  const hi = Math.ceil(Math.max(...values)) + 1;
  const x = (i: number) => 30 + (i * 360) / Math.max(1, rows.length - 1);
  const y = (v: number) => 150 - ((v - lo) / (hi - lo)) * 140;
  const ns = "http://www.w3.org/2000/svg";
  const el = (name: string, attrs: Record<string, string | number>, text?: string) => {
    const node = document.createElementNS(ns, name);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    if (text) node.textContent = text;
    svg.appendChild(node);
  };
  el("text", { x: 0, y: 14, "font-size": 11 }, `${hi} ${unit}`);
  el("text", { x: 0, y: 152, "font-size": 11 }, `${lo} ${unit}`);
  // a missing day breaks the line: nothing is drawn where there is no value
  let path = "";
  // dots only while each day has room for one (about two months); a longer series is its line
  const dots = rows.length <= 62;
  rows.forEach((r, i) => {
    if (r.value === null) return;
    path += `${path && rows[i - 1]?.value !== null ? "L" : "M"}${x(i).toFixed(1)},${y(r.value).toFixed(1)} `;
    if (dots) el("circle", { cx: x(i), cy: y(r.value), r: 2.5, fill: "#a50026" });
  });
  el("text", { x: 40, y: 159, "font-size": 9 }, rows[0].date);
  el("text", { x: 398, y: 159, "font-size": 9, "text-anchor": "end" }, rows[rows.length - 1].date);
  el("path", { d: path, fill: "none", stroke: "#a50026", "stroke-width": 1.5 });
}

/** The ranges of dates the version holds: its period without its gaps. */
function heldRanges(version: Version): [string, string][] {
  const ranges: [string, string][] = [];
  let start = version.record.period_start;
  for (const [s, e] of version.gaps) {
    if (s > start) ranges.push([start, dayNumberToDate(dateToDayNumber(s) - 1)]);
    start = dayNumberToDate(dateToDayNumber(e) + 1);
  }
  if (start <= version.record.period_end) ranges.push([start, version.record.period_end]);
  return ranges;
}

/** Rows of a series route's JSON answer at one cell, with the tile, row and column a query names (its lattice tile). */
function toRows(version: Version, col: number, row: number, result: SeriesResult): Row[] {
  const [tileRow, tileCol] = [Math.floor(row / 256), Math.floor(col / 256)];
  const local = { row: row - Math.max(version.window[1], tileRow * 256), col: col - Math.max(version.window[0], tileCol * 256) };
  const place = result.data.places[0];
  const values = Object.values(place.values)[0];
  return result.data.dates.map((date, i) => ({ date, longitude: place.longitude, latitude: place.latitude, value: values[i], tile: tileId(date, tileRow, tileCol), ...local }));
}

interface SeriesResult {
  manifest: Record<string, unknown>;
  data: { dates: string[]; places: { longitude: number; latitude: number; values: Record<string, (number | null)[]> }[] };
}

/** The cell's series over the whole period: one call of the series route per range of held dates, drawn as each arrives. */
async function readWholeSeries(version: Version, col: number, row: number): Promise<{ rows: Row[]; answers: SeriesAnswer[] }> {
  const rows: Row[] = [];
  const answers: SeriesAnswer[] = [];
  for (const [start, end] of heldRanges(version)) {
    const answer = await client.series({ lat: rowToLat(row), lon: colToLon(col), start, end, variables: version.variable.name, format: "json", datasetVersion: version.record.id });
    const result = answer.json<SeriesResult>();
    rows.push(...toRows(version, col, row, result));
    answers.push({ period: `${start}..${end}`, manifest: result.manifest, digest: answer.headers["Content-Digest"] });
    drawSeries(rows, version.variable.unit);
    setStatus(`Reading the series of column ${col}, row ${row}: ${rows.length} of ${version.record.metadata.days} days…`);
  }
  return { rows, answers };
}

async function showSeries(version: Version, col: number, row: number): Promise<void> {
  const [wc, wr, ww, wh] = version.window;
  if (col < wc || row < wr || col >= wc + ww || row >= wr + wh) {
    setStatus(`No cell of ${version.record.id} at column ${col}, row ${row}.`);
    return;
  }
  $("series-empty").style.display = "none";
  const { rows, answers } = await readWholeSeries(version, col, row);
  const cell = rows[0];
  const info: [string, string][] = [
    ["longitude, latitude", `${colToLon(col)}, ${rowToLat(row)} (cell centre)`],
    ["tile, row, col", `${cell.tile.slice(9)} of each date, row ${cell.row}, col ${cell.col}`],
    ["global column, row", `${col}, ${row}`],
    ["days", `${rows.length} (${version.record.period_start} .. ${version.record.period_end}, the whole published period)`],
  ];
  $("cell").replaceChildren(...info.flatMap(([k, v]) => [Object.assign(document.createElement("dt"), { textContent: k }), Object.assign(document.createElement("dd"), { textContent: v })]));
  const table = document.createElement("table");
  table.innerHTML = `<thead><tr><th>date</th><th>value (${version.variable.unit})</th><th>tile</th></tr></thead>`;
  const body = document.createElement("tbody");
  for (const r of rows) {
    const tr = document.createElement("tr");
    for (const text of [r.date, r.value === null ? "missing" : String(r.value), r.tile]) tr.appendChild(Object.assign(document.createElement("td"), { textContent: text }));
    body.appendChild(tr);
  }
  table.appendChild(body);
  $("series-table").replaceChildren(table);
  const marker = $("marker");
  marker.style.left = `${((col + 0.5) / GRID.width) * 100}%`;
  marker.style.top = `${((row + 0.5) / GRID.height) * 100}%`;
  marker.style.display = "block";
  describeProvenance(version, answers);
  offerFiles(col, row);
  const { requests } = client.stats();
  setStatus(`Series of column ${col}, row ${row}: ${rows.length} days in ${answers.length} call${answers.length === 1 ? "" : "s"}, verified (${requests} requests to the mirror so far).`);
}

/** The newest version of each published variable (start() finds them): the versions a place's files are pinned to. */
let published: Version[] = [];

/**
 * The series calls of a place's files, pinned to the versions shown, over the period all of them hold: every
 * published variable as CSV, and the APSIM file when the four variables it needs are published (vp too when it is).
 */
function placeFiles(col: number, row: number): { csv: string; met: string | null; lacks: string[] } {
  const call = (versions: Version[], format: "csv" | "met") =>
    seriesPath({ lats: [rowToLat(row)], lons: [colToLon(col)], variables: versions.map((v) => v.variable.silo), format, pins: versions.map((v) => v.record.id) });
  const met = published.filter((v) => v.variable.apsim).sort((a, b) => a.variable.apsim!.order - b.variable.apsim!.order);
  const lacks = APSIM_REQUIRED.filter((r) => !met.some((v) => v.variable === r)).map((v) => v.silo);
  return { csv: call(published, "csv"), met: lacks.length === 0 ? call(met, "met") : null, lacks };
}

/** One of a place's files, made by the client library from this mirror (the server's answer, byte for byte), saved. */
async function saveFile(path: string, name: string): Promise<void> {
  setStatus(`Making ${name} from this mirror…`);
  const answer = await client.answer({ path });
  if (answer.status !== 200) {
    setStatus(`${name} cannot be made: ${new AnswerError(answer).message}`);
    return;
  }
  const link = $<HTMLAnchorElement>("file-link");
  if (link.href.startsWith("blob:")) URL.revokeObjectURL(link.href);
  link.href = URL.createObjectURL(new Blob([answer.body as Uint8Array<ArrayBuffer>], { type: answer.headers["Content-Type"] }));
  link.download = name;
  link.click();
  setStatus(`${name}: ${answer.body.byteLength} bytes of ${answer.headers["Service-Dataset-Version"]}, verified (${answer.headers["Content-Digest"]}).`);
}

/** The buttons that save the clicked place's CSV and APSIM file, with the series call each one is. */
function offerFiles(col: number, row: number): void {
  const { csv, met, lacks } = placeFiles(col, row);
  const name = `silo-${rowToLat(row)}_${colToLon(col)}`;
  const csvButton = $<HTMLButtonElement>("csv-file");
  const metButton = $<HTMLButtonElement>("met-file");
  csvButton.onclick = () => void saveFile(csv, `${name}.csv`).catch(showError);
  metButton.disabled = met === null;
  metButton.onclick = met ? () => void saveFile(met, `${name}.met`).catch(showError) : null;
  $("files-call").textContent = `GET ${csv}${met ? `\nGET ${met}` : ""}`;
  $("files-note").textContent = met ? "" : `An APSIM file needs ${lacks.join(", ")} too, which this mirror does not publish.`;
  $("files").hidden = false;
}

/**
 * The CSV answers of a 413's plan, in order, then of its `planRest` (the dates after the plan's, answered by the
 * next 413), until a 413 has no planRest (docs/contract.md §3.3).
 */
async function followPlan(refused: MirrorAnswer): Promise<string[]> {
  const texts: string[] = [];
  const ask = (body: object) => client.answer({ method: "POST", path: "/api/v1/data/query", body });
  for (let step: MirrorAnswer | null = refused; step; ) {
    const { plan, planRest }: { plan: object[]; planRest?: object } = step.json();
    for (const part of plan) {
      const answer = await ask(part);
      if (answer.status !== 200) throw new AnswerError(answer);
      texts.push(answer.text());
    }
    step = planRest ? await ask(planRest) : null;
    if (step && step.status !== 413) {
      if (step.status !== 200) throw new AnswerError(step);
      texts.push(step.text());
      step = null;
    }
  }
  return texts;
}

/** The box's cells as one CSV: the query's answer, or the answers of its 413 plan concatenated (one header). */
async function downloadBox(version: Version, cells: Window, date: string): Promise<void> {
  if (version.variable.name !== QUERY_VARIABLE) {
    setStatus(`A box's CSV comes from the query route, which answers ${QUERY_VARIABLE} only: choose it above, or read ${version.variable.name} through the series route or the Zarr view.`);
    return;
  }
  setStatus(`Reading ${cells[2]} x ${cells[3]} cells of ${date} as CSV…`);
  const request = { ...dataRequest(cells, date, date, version), format: "csv" };
  const answer = await client.answer({ method: "POST", path: "/api/v1/data/query", body: request });
  let csv: string;
  if (answer.status === 413 && answer.json<{ plan?: object[] }>().plan) {
    const texts = await followPlan(answer);
    csv = texts.map((text, i) => (i === 0 ? text : text.slice(text.indexOf("\r\n") + 2))).join("");
  } else {
    if (answer.status !== 200) {
      setStatus(`That box cannot be downloaded: ${new AnswerError(answer).message}`);
      return;
    }
    csv = answer.text();
  }
  const link = $<HTMLAnchorElement>("download");
  URL.revokeObjectURL(link.href);
  link.href = URL.createObjectURL(new Blob([csv], { type: "text/csv" }));
  link.download = `${version.record.id}-${date}-c${cells[0]}-r${cells[1]}-${cells[2]}x${cells[3]}.csv`;
  link.textContent = `Download CSV: ${cells[2]} x ${cells[3]} cells of ${date} (${csv.split("\r\n").length - 2} rows)`;
  link.style.display = "inline";
  link.click();
  setStatus(`CSV of ${cells[2] * cells[3]} cells ready (${(csv.length / 1000).toFixed(1)} kB), verified.`);
}

/** Shows a version: its legend, provenance, the date picker's range, and its map of `date` (or its last date). */
async function showVersion(version: Version, date: string | null): Promise<void> {
  drawLegend(version);
  describeProvenance(version);
  $("series-empty").style.display = "";
  for (const id of ["cell", "series-table"]) $(id).replaceChildren();
  $("files").hidden = true;
  ($("chart") as unknown as SVGSVGElement).replaceChildren();
  $("marker").style.display = "none";
  const picker = $<HTMLInputElement>("date");
  picker.min = version.record.period_start;
  picker.max = version.record.period_end;
  picker.value = date && date >= picker.min && date <= picker.max ? date : version.record.period_end;
  picker.disabled = false;
  await drawMap(version, picker.value);
}

async function start(): Promise<void> {
  const versions = (published = await findVersions());
  const select = $<HTMLSelectElement>("variable");
  select.replaceChildren(...versions.map((v, i) => Object.assign(document.createElement("option"), { value: String(i), textContent: `${v.variable.label} (${v.variable.unit})` })));
  select.disabled = versions.length < 2;
  let version = versions[0];
  if (versions.some((v) => v.record.metadata.synthetic)) {
    const banner = $("banner");
    banner.textContent = "Generated demo data: synthetic values on the SILO grid, not observations.";
    banner.style.display = "block";
  }
  const picker = $<HTMLInputElement>("date");
  await showVersion(version, null);
  document.body.dataset.status = "ready";

  select.addEventListener("change", () => {
    version = versions[Number(select.value)];
    showVersion(version, picker.value).catch(showError);
  });
  picker.addEventListener("change", () => {
    if (picker.value) drawMap(version, picker.value).catch(showError);
  });
  listenForCells(() => version, () => picker.value);
}

/** Click a cell for its series; drag a box for its CSV (of the version shown when the pointer comes up). */
function listenForCells(current: () => Version, date: () => string): void {
  const wrap = $("map-wrap");
  const box = $("box");
  let from: { col: number; row: number } | null = null;
  let to: { col: number; row: number } | null = null;
  const boxOf = (): Window => {
    const c0 = Math.min(from!.col, to!.col);
    const r0 = Math.min(from!.row, to!.row);
    return [c0, r0, Math.abs(to!.col - from!.col) + 1, Math.abs(to!.row - from!.row) + 1];
  };
  wrap.addEventListener("pointerdown", (event) => {
    from = to = cellAt(event);
    wrap.setPointerCapture(event.pointerId);
  });
  wrap.addEventListener("pointermove", (event) => {
    if (!from) return;
    to = cellAt(event) ?? to;
    const [c, r, w, h] = boxOf();
    if (w * h <= 1) return;
    Object.assign(box.style, { display: "block", left: `${(c / GRID.width) * 100}%`, top: `${(r / GRID.height) * 100}%`, width: `${(w / GRID.width) * 100}%`, height: `${(h / GRID.height) * 100}%` });
  });
  wrap.addEventListener("pointerup", () => {
    if (!from || !to) return;
    const cells = boxOf();
    from = to = null;
    box.style.display = "none";
    const action = cells[2] * cells[3] > 1 ? downloadBox(current(), cells, date()) : showSeries(current(), cells[0], cells[1]);
    action.catch(showError);
  });
}

window.addEventListener("unhandledrejection", (event) => showError(event.reason));
start().catch(showError);
