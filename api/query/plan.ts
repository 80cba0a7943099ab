// The plan a 413 from a POST route carries (docs/contract.md §3.3): smaller data requests, pinned to the version that
// would answer, each within every limit, whose answers concatenated in order hold exactly the asked rows.
// Split by date first (ranges of whole dates), then a date by latitude bands (whole rows of cells, north to south).
// Sizes are bounded from above without reading cells: every value is counted at its longest possible text.
// The 413 itself is bounded too: the parts of the first dates that fit its byte bound, then `planRest`, the
// original request from the first date not planned; work grows with that bound, never with the box.

import { colToLon, rowToEdgeLat, rowToLat } from "../../format/grid.js";
import { VALUE_TEXT_MAX } from "../../format/number-text.js";
import { QUERY_UNIT, QUERY_VARIABLE } from "../../format/records.js";
import { PENDING_SHA256 } from "../bytes.js";
import { LIMITS } from "../contract.js";
import { buildManifest } from "./manifest.js";
import type { RequestConfig } from "./request.js";
import { CSV_HEADER } from "./serialize.js";
import type { Selection } from "./selection.js";
import type { SelectedDay } from "./selected-days.js";

const TILE_ID_MAX = "YYYYMMDD-r0-c0".length;
const INDEX_MAX = 3; // tile-local row and col are 0..255
/** Room a 413 keeps besides `plan` and `planRest`: its `error` and `message`, and the JSON around them. */
const ERROR_FRAME_BYTES = 2048;

export interface Plan {
  /**
   * The 413 body's members `,"plan":[...]` and, with a plan of the first dates only, `,"planRest":{...}`, as
   * pieces of JSON text in order.
   */
  members: string[];
  /** what the plan holds, for the 413's message */
  summary: string;
}

/** Upper bound of one row's bytes (JSON with its separating comma, CSV with CRLF). */
function rowBound(selection: Selection, format: "json" | "csv"): number {
  const [c0, r0, w, h] = selection.window;
  const lon = Math.max(...[c0, c0 + w - 1].map((c) => String(colToLon(c)).length));
  const lat = Math.max(...[r0, r0 + h - 1].map((r) => String(rowToLat(r)).length));
  const fields = "YYYY-MM-DD".length + lon + lat + QUERY_VARIABLE.length + VALUE_TEXT_MAX + QUERY_UNIT.length + TILE_ID_MAX + 2 * INDEX_MAX;
  // the text around the fields: JSON keys and a separating comma, or nine quoted fields, eight commas and CRLF
  const frame = format === "json" ? '{"date":"","longitude":,"latitude":,"variable":"","value":,"unit":"","tile":"","row":,"col":},' : `${'"",'.repeat(8)}""\r\n`;
  return fields + frame.length;
}

/** Upper bound of what a JSON answer holds besides its rows: the manifest with these days' sources. */
function jsonOverhead(selection: Selection, days: SelectedDay[]): number {
  const manifest = buildManifest(selection.view.record, PENDING_SHA256, LIMITS.maxCells, days.flatMap((d) => d.sources));
  return `{"manifest":${JSON.stringify(manifest)},"data":[]}`.length;
}

function fits(rows: number, bytes: number): boolean {
  return rows <= LIMITS.maxCells && bytes <= LIMITS.maxResponseBytes;
}

/** Marks the box and the period in a part's template (JSON escapes NUL, so no request text holds them). */
const PLACEHOLDERS = { bbox: "\u0000bbox", start: "\u0000start", end: "\u0000end" };
const PLACEHOLDER_TEXT = /"\\u0000(bbox|start|end)"/;

/**
 * Splits the selection's dates into parts: ranges of whole dates while they fit, else one date in latitude bands.
 * Parts differ only in their box and period, so each is written as text from one template of the request
 * (the order of its keys kept): a plan of thousands of parts costs a few milliseconds.
 */
class PartMaker {
  private readonly perRow: number;
  /** the part's JSON text around its placeholders: text, placeholder name, text, ... */
  private readonly template: string[];

  constructor(
    private readonly config: RequestConfig,
    private readonly selection: Selection,
  ) {
    this.perRow = rowBound(selection, config.format);
    // one query never mixes versions (docs/contract.md §3.4): every part, and the rest, is pinned
    const marked = { ...config, region: { ...config.region, bbox: PLACEHOLDERS.bbox }, period: { start: PLACEHOLDERS.start, end: PLACEHOLDERS.end }, dataset_version: selection.view.record.id };
    this.template = JSON.stringify(marked).split(PLACEHOLDER_TEXT);
  }

  private overhead(days: SelectedDay[]): number {
    return this.config.format === "json" ? jsonOverhead(this.selection, days) : CSV_HEADER.length + 2;
  }

  /** The JSON text of the request for these dates and this box (finite numbers: String() writes them as JSON does). */
  text(days: SelectedDay[], bbox: RequestConfig["region"]["bbox"] = this.config.region.bbox): string {
    const values: Record<string, string> = { bbox: `[${bbox.join(",")}]`, start: `"${days[0].date}"`, end: `"${days[days.length - 1].date}"` };
    return this.template.map((piece, i) => (i % 2 === 1 ? values[piece] : piece)).join("");
  }

  /** Whether these whole dates fit one answer. */
  holds(days: SelectedDay[]): boolean {
    const cells = this.selection.window[2] * this.selection.window[3];
    return fits(days.length * cells, this.overhead(days) + days.length * cells * this.perRow);
  }

  /** One date too much for one answer: bands of whole cell rows, edges on cell edges so each takes exactly its rows. */
  bands(day: SelectedDay): string[] {
    const [, r0, w, h] = this.selection.window;
    // the tallest band within both bounds (the overhead does not depend on the band's height)
    const byBytes = Math.floor((LIMITS.maxResponseBytes - this.overhead([day])) / (w * this.perRow));
    const band = Math.max(1, Math.min(h, Math.floor(LIMITS.maxCells / w), byBytes));
    const [west, south, east, north] = this.config.region.bbox;
    const parts: string[] = [];
    for (let top = 0; top < h; top += band) {
      const bottom = Math.min(h, top + band);
      const bandNorth = top === 0 ? north : rowToEdgeLat(r0 + top);
      const bandSouth = bottom === h ? south : rowToEdgeLat(r0 + bottom);
      parts.push(this.text([day], [west, bandSouth, east, bandNorth]));
    }
    return parts;
  }
}

/**
 * The plan of a request too large for one answer, whose 413 body stays within `maxBytes`: the parts of the
 * first dates that fit (whole dates only, the first date always), and `planRest` for the dates after them.
 */
export function planRequests(config: RequestConfig, selection: Selection, maxBytes: number = LIMITS.maxResponseBytes): Plan {
  const maker = new PartMaker(config, selection);
  const days = selection.days;
  // what the plan may take: the bound, less the error's own text and the longest planRest
  let room = maxBytes - ERROR_FRAME_BYTES - maker.text(days).length;
  const plan: string[] = [];
  let i = 0;
  while (i < days.length) {
    let parts: string[];
    let next = i + 1;
    if (maker.holds([days[i]])) {
      while (next < days.length && maker.holds(days.slice(i, next + 1))) next++;
      parts = [maker.text(days.slice(i, next))];
    } else {
      parts = maker.bands(days[i]);
    }
    const bytes = parts.reduce((n, p) => n + p.length + 1, 0);
    if (plan.length > 0 && bytes > room) break;
    room -= bytes;
    plan.push(...parts);
    i = next;
  }
  const members = [`,"plan":[`, ...plan.map((p, k) => (k === 0 ? p : `,${p}`)), "]"];
  if (i === days.length) {
    return { members, summary: `The plan holds ${plan.length} smaller requests whose answers, in order, are exactly these rows.` };
  }
  const [first, last, end] = [days[0].date, days[i - 1].date, days[days.length - 1].date];
  return {
    members: [...members, `,"planRest":`, maker.text(days.slice(i))],
    summary:
      `The plan holds ${plan.length} smaller requests for ${first}..${last} (${i} of ${days.length} dates) whose answers, in order, are exactly their rows; ` +
      `planRest asks for ${days[i].date}..${end}, and its 413 carries the next parts.`,
  };
}
