// The plan a 413 from a POST route carries (docs/contract.md §3.3): smaller data requests, pinned to the version that
// would answer, each within every limit, whose answers concatenated in order hold exactly the asked rows.
// Split by date first (runs of whole dates), then a date by latitude bands (whole rows of cells, north to south).
// Sizes are bounded from above without reading cells: every value is counted at its longest possible text.

import { LIMITS } from "./contract.js";
import { QUERY_UNIT, QUERY_VARIABLE } from "../format/records.js";
import { colToLon, rowToEdgeLat, rowToLat } from "../format/grid.js";
import type { SelectedDay as DayEntry } from "./tiers.js";
import { PENDING_SHA256, buildManifest } from "./manifest.js";
import type { RequestConfig } from "./request.js";
import { CSV_HEADER } from "./serialize.js";
import type { Selection } from "./selection.js";

/** Longest text of a float32 value in the plausible range: "-0.0000123456789" style, 9 significant digits. */
const VALUE_MAX = 17;
const TILE_ID_MAX = "YYYYMMDD-r0-c0".length;
const INDEX_MAX = 3; // tile-local row and col are 0..255

/** Upper bound of one row's bytes (JSON with its separating comma, CSV with CRLF). */
function rowBound(selection: Selection, format: "json" | "csv"): number {
  const [c0, r0, w, h] = selection.window;
  const lon = Math.max(...[c0, c0 + w - 1].map((c) => String(colToLon(c)).length));
  const lat = Math.max(...[r0, r0 + h - 1].map((r) => String(rowToLat(r)).length));
  const fields = "YYYY-MM-DD".length + lon + lat + QUERY_VARIABLE.length + VALUE_MAX + QUERY_UNIT.length + TILE_ID_MAX + 2 * INDEX_MAX;
  // the text around the fields: JSON keys and a separating comma, or nine quoted fields, eight commas and CRLF
  const frame = format === "json" ? '{"date":"","longitude":,"latitude":,"variable":"","value":,"unit":"","tile":"","row":,"col":},' : `${'"",'.repeat(8)}""\r\n`;
  return fields + frame.length;
}

/** Upper bound of what a JSON answer holds besides its rows: the manifest with these days' sources. */
function jsonOverhead(selection: Selection, days: DayEntry[]): number {
  const manifest = buildManifest(selection.view.record, PENDING_SHA256, LIMITS.maxCells, days.flatMap((d) => d.sources));
  return `{"manifest":${JSON.stringify(manifest)},"data":[]}`.length;
}

function fits(rows: number, bytes: number): boolean {
  return rows <= LIMITS.maxCells && bytes <= LIMITS.maxResponseBytes;
}

export function planRequests(config: RequestConfig, selection: Selection): RequestConfig[] {
  const [, r0, w, h] = selection.window;
  const perRow = rowBound(selection, config.format);
  const overhead = (days: DayEntry[]) => (config.format === "json" ? jsonOverhead(selection, days) : CSV_HEADER.length + 2);
  const request = (days: DayEntry[], bbox: RequestConfig["region"]["bbox"]): RequestConfig => ({
    ...config,
    region: { ...config.region, bbox },
    period: { start: days[0].date, end: days[days.length - 1].date },
    dataset_version: selection.view.record.id,
  });

  const plan: RequestConfig[] = [];
  let run: DayEntry[] = [];
  const flush = () => {
    if (run.length > 0) plan.push(request(run, config.region.bbox));
    run = [];
  };
  for (const day of selection.days) {
    const next = [...run, day];
    if (fits(next.length * w * h, overhead(next) + next.length * w * h * perRow)) {
      run = next;
      continue;
    }
    flush();
    if (fits(w * h, overhead([day]) + w * h * perRow)) {
      run = [day];
      continue;
    }
    // One date is too much: bands of whole cell rows, edges on cell edges so each takes exactly its rows.
    let band = h;
    while (band > 1 && !fits(band * w, overhead([day]) + band * w * perRow)) band--;
    const [west, south, east, north] = config.region.bbox;
    for (let top = 0; top < h; top += band) {
      const bottom = Math.min(h, top + band);
      const bandNorth = top === 0 ? north : rowToEdgeLat(r0 + top);
      const bandSouth = bottom === h ? south : rowToEdgeLat(r0 + bottom);
      plan.push(request([day], [west, bandSouth, east, bandNorth]));
    }
  }
  flush();
  return plan;
}
