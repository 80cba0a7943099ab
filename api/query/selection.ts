// Version choice and coverage of a data request (docs/contract.md §3.4): which version answers, which cells and dates,
// or why none can. Decided from catalog.json's candidates and the versions' indexes, never by scanning.

import { candidatesOf } from "../../format/catalog.js";
import type { Coverage } from "../../format/coverage.js";
import { type Window, bboxToWindow, intersectWindows, windowBbox } from "../../format/grid.js";
import { type Dataset, QUERY_VARIABLE, isQueryCompatible } from "../../format/records.js";
import { type RasterView, openVersion } from "../../format/versions.js";
import type { Context } from "../context.js";
import { LIMITS } from "../contract.js";
import { isSupportedGrid, isVisible } from "../records.js";
import { type RequestConfig, listPeriodDates } from "./request.js";
import { type CellSource, type SelectedDay, selectDays } from "./selected-days.js";

export type UnavailableReason = "coverage_unavailable" | "request_too_large" | "no_cell_centers" | "unsupported_grid";

export interface Selection {
  view: RasterView;
  /** global cells selected on every date */
  window: Window;
  days: SelectedDay[];
  /** the tier its cells are read from */
  source: CellSource;
  rowCount: number;
}

export type Resolved =
  | { available: true; selection: Selection }
  | { available: false; reason: UnavailableReason; message: string; selection?: Selection };

interface Candidate {
  id: string;
  coverage: Coverage;
  record: Dataset;
}

/** The box touches the candidate's extent, cell edges included (docs/contract.md §3.4, no_cell_centers). */
function overlapsExtent(bbox: [number, number, number, number], coverage: Coverage): boolean {
  const [w, s, e, n] = windowBbox(coverage.windowAny);
  return bbox[0] <= e && bbox[2] >= w && bbox[1] <= n && bbox[3] >= s;
}

function describePeriods(candidates: Candidate[]): string {
  const shown = candidates.slice(0, 5).map((c) => {
    const gaps = c.coverage.gaps.length ? `, ${c.coverage.gaps.length} gap${c.coverage.gaps.length === 1 ? "" : "s"}` : "";
    const [w, s, e, n] = windowBbox(c.coverage.windowAny);
    return `${c.id} (${c.coverage.first}..${c.coverage.last}${gaps}; box ${w},${s},${e},${n})`;
  });
  return shown.join("; ") + (candidates.length > shown.length ? `; and ${candidates.length - shown.length} more` : "");
}

const unavailable = (reason: UnavailableReason, message: string): Resolved => ({ available: false, reason, message });

/** The candidates a request may choose from: its pinned version, or the catalog's candidates in choice order. */
async function listCandidates(ctx: Context, config: RequestConfig): Promise<Candidate[] | Resolved> {
  const id = config.dataset_version;
  if (id === undefined) return candidatesOf(ctx.snapshot.pointer, QUERY_VARIABLE).map((c) => ({ id: c.id, coverage: c.coverage, record: c.record }));
  const record = await ctx.snapshot.findRecord(id);
  if (!record || !isVisible(record) || !isQueryCompatible(record)) {
    const why = !record || !isVisible(record) ? "is not a published version here" : "is not a public demo version of SILO daily air_temperature_max in degC";
    return unavailable("coverage_unavailable", `The pinned dataset_version ${id} ${why}; GET /api/v1/datasets lists what is published.`);
  }
  ctx.assertAvailable(id);
  const view = await openVersion(ctx.archive, record);
  if (view.kind !== "raster") return unavailable("coverage_unavailable", `The pinned dataset_version ${id} holds no raster; pin a SILO air_temperature_max version (GET /api/v1/datasets lists them) or omit dataset_version.`);
  return [{ id, coverage: view.index.coverage, record }];
}

/** Why the box cannot be answered by any candidate's grid, or null when some candidate's cells fall inside it. */
function checkBox(bbox: RequestConfig["region"]["bbox"], window: Window | null, candidates: Candidate[]): Resolved | null {
  if (candidates.length === 0) {
    return unavailable("coverage_unavailable", "No public demo version of SILO daily air_temperature_max is published here; GET /api/v1/datasets lists what is, and GET /api/v1/series serves the other variables.");
  }
  const touching = candidates.filter((c) => overlapsExtent(bbox, c.coverage));
  if (touching.length === 0) {
    return unavailable("coverage_unavailable", `The box lies outside every published grid; give a box inside one of these: ${describePeriods(candidates)}.`);
  }
  if (!window || touching.every((c) => intersectWindows(c.coverage.windowAny, window)[2] === 0)) {
    return unavailable(
      "no_cell_centers",
      "The box overlaps a published grid but holds none of its cell centres (west/south inclusive, east/north exclusive); widen it to take in a centre (centres at 112 + 0.05k east, -10 - 0.05k north).",
    );
  }
  return null;
}

/** The version that answers a request and what it selects, or why none can (docs/contract.md §3.4). */
export async function resolveRequest(ctx: Context, config: RequestConfig): Promise<Resolved> {
  const candidates = await listCandidates(ctx, config);
  if (!Array.isArray(candidates)) return candidates;
  const window = bboxToWindow(config.region.bbox);
  const refused = checkBox(config.region.bbox, window, candidates);
  if (refused || !window) return refused!;

  const supported = candidates.filter((c) => isVisible(c.record) && isQueryCompatible(c.record) && isSupportedGrid(c.record));
  if (supported.length === 0) {
    return unavailable("unsupported_grid", "The candidate dataset's grid is not a north-up regular EPSG:4326 grid this service can select from; pin another version with dataset_version (GET /api/v1/datasets lists them).");
  }
  const dates = listPeriodDates(config);
  for (const c of supported) {
    // reading a candidate's index is reading that version: a failure there is that version's (docs/contract.md §4.6)
    const view = await openVersion(ctx.archive, c.record);
    if (view.kind !== "raster") continue;
    const selected = await selectDays(view, c.coverage, window, dates);
    if (!selected) continue;
    ctx.assertAvailable(c.id); // the chosen version is 503 when it failed: never a silent fallback
    return checkRowCount({ view, window, ...selected, rowCount: window[2] * window[3] * dates.length });
  }
  return unavailable(
    "coverage_unavailable",
    `No published public demo version covers every selected cell on every date of ${config.period.start}..${config.period.end}; ask for dates and a box inside one of these (or pin it with dataset_version): ${describePeriods(supported)}.`,
  );
}

/** At most LIMITS.maxCells rows (docs/contract.md §3.3); over it the selection stays, for the 413's plan. */
function checkRowCount(selection: Selection): Resolved {
  const { window, days, rowCount } = selection;
  if (rowCount <= LIMITS.maxCells) return { available: true, selection };
  return {
    available: false,
    reason: "request_too_large",
    message: `The request selects ${rowCount} rows (${window[2] * window[3]} cells x ${days.length} days), over the ${LIMITS.maxCells}-row bound; narrow the box or the period, or follow the plan.`,
    selection,
  };
}
