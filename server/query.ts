// validate -> resolve -> query: the contract check, version choice, cell selection and JSON/CSV serialization.

import { readSync } from "node:fs";
import stableStringify from "fast-json-stable-stringify";
import {
  LIMITS,
  QUERY_DATA_CLASS,
  QUERY_SOURCE,
  QUERY_UNIT,
  QUERY_VARIABLE,
  QUERY_VERSION,
  SPATIAL_SELECTION,
} from "../schemas/contract.js";
import { dateToDayNumber, listDates } from "../schemas/dates.js";
import { sha256Hex, type Dataset, type RasterDate } from "../schemas/dist.js";
import {
  GRID,
  bboxToWindow,
  cellToTile,
  colToLon,
  containsWindow,
  rowToLat,
  tileId,
  windowToTiles,
  windowTransform,
  type Window,
} from "../schemas/grid.js";
import { float32ToShortest } from "../schemas/numbers.js";
import { toIssues, validatorFor } from "../schemas/validate.js";
import { HttpError, type Issue } from "./errors.js";
import type { Store, VersionEntry } from "./store.js";

/** The data request after the contract check, with `format` filled in (interface.md 2.5). */
export interface RequestConfig {
  variables: [typeof QUERY_VARIABLE];
  region: { bbox: [number, number, number, number]; crs: "EPSG:4326" };
  period: { start: string; end: string };
  temporal_resolution: "daily";
  spatial_resolution: "native";
  units: { air_temperature_max: typeof QUERY_UNIT };
  data_class: typeof QUERY_DATA_CLASS;
  format: "json" | "csv";
  missing_policy: "preserve";
  source_preference: typeof QUERY_SOURCE;
  dataset_version?: string;
}

/** Every date of the inclusive period, ascending. */
export function listPeriodDates(config: RequestConfig): string[] {
  return listDates(config.period.start, config.period.end);
}

function rejectRequest(issues: Issue[]): HttpError {
  const first = issues[0];
  const where = first.path.length ? ` at ${first.path.join(".")}` : "";
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more issue${issues.length > 2 ? "s" : ""})` : "";
  return new HttpError("invalid_request", `The data request breaks the contract${where}: ${first.message}${more}.`, issues);
}

/**
 * The contract check shared by validate, resolve and query (decisions.md 3): the schema, then the run-time
 * rules it cannot express. Any violation is 422 invalid_request with issues pointing at the fields.
 */
export function checkRequest(spec: unknown): RequestConfig {
  if (spec === null || typeof spec !== "object" || Array.isArray(spec)) {
    throw rejectRequest([{ code: "type", path: [], message: "the data request must be a JSON object" }]);
  }
  const validate = validatorFor("data-request.schema.json");
  // ajv fills `format` with its default here (useDefaults), on the body we own.
  if (!validate(spec)) throw rejectRequest(toIssues(validate.errors, spec));
  const config = spec as RequestConfig;
  config.format ??= "json";

  const issues: Issue[] = [];
  const [west, south, east, north] = config.region.bbox;
  if (!(west < east)) {
    issues.push({ code: "bbox_order", path: ["region", "bbox", 0], message: "west must be less than east (the antimeridian cannot be crossed)" });
  }
  if (!(south < north)) {
    issues.push({ code: "bbox_order", path: ["region", "bbox", 1], message: "south must be less than north" });
  }
  const days = dateToDayNumber(config.period.end) - dateToDayNumber(config.period.start) + 1;
  if (days < 1) {
    issues.push({ code: "period_order", path: ["period", "end"], message: "the period end must not precede its start" });
  } else if (days > LIMITS.maxDays) {
    issues.push({
      code: "too_many_days",
      path: ["period", "end"],
      message: `the period holds ${days} days; at most ${LIMITS.maxDays} are allowed (inclusive bounds)`,
    });
  }
  if (issues.length > 0) throw rejectRequest(issues);
  return config;
}

/** SHA-256 of the canonical JSON of the checked request (decisions.md 3). */
export function hashRequest(config: RequestConfig): string {
  return sha256Hex(stableStringify(config));
}

export type UnavailableReason = "coverage_unavailable" | "request_too_large" | "no_cell_centers" | "unsupported_grid";

export interface Selection {
  version: VersionEntry;
  /** global cells selected on every date */
  window: Window;
  dates: RasterDate[];
  rowCount: number;
}

export type Resolved = { available: true; selection: Selection } | { available: false; reason: UnavailableReason };

/**
 * What may answer a direct query, from the catalog record alone (decisions.md 3): published demo data of the
 * SILO source, interpolated observations, daily, air_temperature_max in degC.
 */
export function isQueryCompatible(record: Dataset): boolean {
  return (
    record.status === "published" &&
    record.access_level === "demo" &&
    record.metadata?.source === QUERY_SOURCE &&
    record.data_class === QUERY_DATA_CLASS &&
    record.temporal_resolution === "daily" &&
    record.variables?.[QUERY_VARIABLE] === QUERY_UNIT
  );
}

/**
 * The candidate's grid must be the north-up regular EPSG:4326 grid whose arithmetic grid.ts does: the SILO
 * grid itself (decisions.md 3, unsupported_grid). Any other grid cannot be selected by this server's cell rules.
 */
export function isSupportedGrid(v: VersionEntry): boolean {
  const support = v.record.spatial_support as { crs?: unknown; grid_transform?: unknown };
  const transform = support.grid_transform;
  if (support.crs !== GRID.crs || !Array.isArray(transform) || transform.length !== 6) return false;
  const [a, b, , d, e] = transform as number[];
  if (a <= 0 || b !== 0 || d !== 0 || e >= 0) return false;
  const silo = windowTransform(0, 0);
  if (!silo.every((x, i) => x === transform[i])) return false;
  return v.index === null || (v.index.kind === "raster" && v.index.crs === GRID.crs);
}

function coversSelection(v: VersionEntry, window: Window, dates: string[]): RasterDate[] | null {
  if (v.index?.kind !== "raster") return null;
  const covered: RasterDate[] = [];
  for (const date of dates) {
    const entry = v.dates.get(date);
    if (!entry || !containsWindow(entry.window, window)) return null;
    covered.push(entry);
  }
  return covered;
}

/** Newest published_at first, ties by id ascending (decisions.md 3); a missing published_at sorts last. */
function compareCandidates(a: VersionEntry, b: VersionEntry): number {
  const pa = a.record.published_at ?? "";
  const pb = b.record.published_at ?? "";
  if (pa !== pb) return pa < pb ? 1 : -1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * Version choice and coverage (decisions.md 3). Reasons are decided in the order no_cell_centers,
 * unsupported_grid, request_too_large, coverage_unavailable. A chosen version whose files failed is 503,
 * not a silent fallback to another version; so is a candidate whose index could not be verified.
 */
export function resolveRequest(store: Store, config: RequestConfig): Resolved {
  const window = bboxToWindow(config.region.bbox);
  if (!window) return { available: false, reason: "no_cell_centers" };

  let candidates: VersionEntry[];
  if (config.dataset_version !== undefined) {
    const pinned = store.versions.get(config.dataset_version);
    candidates = pinned && isQueryCompatible(pinned.record) ? [pinned] : [];
  } else {
    candidates = [...store.versions.values()].filter((v) => isQueryCompatible(v.record));
  }
  const supported = candidates.filter(isSupportedGrid);
  if (candidates.length > 0 && supported.length === 0) return { available: false, reason: "unsupported_grid" };

  const dates = listPeriodDates(config);
  const rowCount = window[2] * window[3] * dates.length;
  if (rowCount > LIMITS.maxCells) return { available: false, reason: "request_too_large" };

  const covering: { version: VersionEntry; dates: RasterDate[] }[] = [];
  for (const v of supported) {
    const covered = coversSelection(v, window, dates);
    if (covered) covering.push({ version: v, dates: covered });
  }
  if (covering.length === 0) {
    const unverified = supported.find((v) => v.index === null);
    if (unverified) store.assertAvailable(unverified);
    return { available: false, reason: "coverage_unavailable" };
  }
  covering.sort((a, b) => compareCandidates(a.version, b.version));
  const chosen = covering[0];
  store.assertAvailable(chosen.version);
  return { available: true, selection: { version: chosen.version, window, dates: chosen.dates, rowCount } };
}

/** Ids of the tiles the selection touches, sorted and unique (interface.md 2.7). */
export function listSelectionTiles(selection: Selection): string[] {
  const ids = new Set<string>();
  for (const d of selection.dates) {
    for (const slot of windowToTiles(selection.window)) ids.add(tileId(d.date, slot.tileRow, slot.tileCol));
  }
  return [...ids].sort();
}

export interface QueryRow {
  date: string;
  longitude: number;
  latitude: number;
  variable: string;
  value: number | null;
  unit: string;
  tile: string;
  row: number;
  col: number;
}

/**
 * The selected cells, date ascending then north to south then west to east (decisions.md 3), each with its own
 * tile and tile-local row/col. Each selected row of a date is one positional read from the verified cells file.
 */
export async function readSelectionRows(store: Store, selection: Selection): Promise<QueryRow[]> {
  const fd = await store.cellsFd(selection.version);
  const [col0, row0, width, height] = selection.window;
  const longitudes = Array.from({ length: width }, (_, i) => colToLon(col0 + i));
  const latitudes = Array.from({ length: height }, (_, i) => rowToLat(row0 + i));
  const buffer = Buffer.allocUnsafe(width * 4);
  const rows: QueryRow[] = [];
  for (const d of selection.dates) {
    const [dateCol, dateRow, dateWidth] = d.window;
    const tileIds = new Map<string, string>();
    for (let r = 0; r < height; r++) {
      const globalRow = row0 + r;
      const position = d.offset + ((globalRow - dateRow) * dateWidth + (col0 - dateCol)) * 4;
      const read = readSync(fd, buffer, 0, buffer.length, position);
      if (read !== buffer.length) throw new Error(`cells of ${selection.version.id} end early at byte ${position}`);
      for (let c = 0; c < width; c++) {
        const globalCol = col0 + c;
        const slot = cellToTile(globalCol, globalRow, d.window);
        const key = `${slot.tileRow}-${slot.tileCol}`;
        let tile = tileIds.get(key);
        if (tile === undefined) tileIds.set(key, (tile = tileId(d.date, slot.tileRow, slot.tileCol)));
        rows.push({
          date: d.date,
          longitude: longitudes[c],
          latitude: latitudes[r],
          variable: QUERY_VARIABLE,
          value: float32ToShortest(buffer.readFloatLE(c * 4)),
          unit: QUERY_UNIT,
          tile,
          row: globalRow - slot.window[1],
          col: globalCol - slot.window[0],
        });
      }
    }
  }
  return rows;
}

export const CSV_HEADER = "date,longitude,latitude,variable,value,unit,tile,row,col";

function quoteCsv(value: string | number | null): string {
  // decisions.md 3: a null is an empty unquoted field; everything else is quoted, inner quotes doubled.
  if (value === null) return "";
  return `"${String(value).replaceAll('"', '""')}"`;
}

/** CSV bytes: unquoted header, quoted fields, CRLF after every line including the last (decisions.md 3). */
export function rowsToCsv(rows: QueryRow[]): string {
  const lines = [CSV_HEADER];
  for (const r of rows) {
    lines.push(
      [r.date, r.longitude, r.latitude, r.variable, r.value, r.unit, r.tile, r.row, r.col].map(quoteCsv).join(","),
    );
  }
  return `${lines.join("\r\n")}\r\n`;
}

/** The JSON body, with `data` serialized once and hashed exactly as embedded (interface.md 2.8). */
export function rowsToJson(selection: Selection, rows: QueryRow[], requestSha256: string): string {
  const record = selection.version.record;
  const data = JSON.stringify(rows);
  const manifest = {
    datasetVersion: record.id,
    datasetContentSha256: record.content_sha256,
    requestSha256,
    transformVersion: record.transform_version,
    queryVersion: QUERY_VERSION,
    dataClass: record.data_class,
    crs: GRID.crs,
    missingPolicy: "preserve",
    spatialSelection: SPATIAL_SELECTION,
    rowCount: rows.length,
    sourceManifest: record.source_manifest,
    license: record.license,
    attribution: record.attribution,
    dataSha256: sha256Hex(data),
  };
  return `{"manifest":${JSON.stringify(manifest)},"data":${data}}`;
}

/** 422 for the reasons a query cannot answer, 413 for too many rows (decisions.md 3). */
export function reasonToError(reason: UnavailableReason): HttpError {
  switch (reason) {
    case "request_too_large":
      return new HttpError(
        "request_too_large",
        `The request selects more than ${LIMITS.maxCells} rows (cells x days); narrow the box or the period.`,
      );
    case "no_cell_centers":
      return new HttpError("no_cell_centers", "The box holds no cell centre of the grid; widen it (west/south inclusive, east/north exclusive).");
    case "unsupported_grid":
      return new HttpError("unsupported_grid", "The candidate dataset's grid is not a north-up regular EPSG:4326 grid this service can select from.");
    case "coverage_unavailable":
      return new HttpError(
        "coverage_unavailable",
        "No published public demo version covers every selected cell on every date of the period; see GET /api/v1/datasets for what is published.",
      );
  }
}
