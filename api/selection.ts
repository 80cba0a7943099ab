// Version choice and coverage of a data request (decisions.md 3): which version answers, which cells and dates,
// or why none can. Decided from catalog.json's candidates and the versions' indexes, never by scanning.

import { LIMITS, isQueryCompatible } from "../schemas/contract.js";
import { GRID, bboxToWindow, containsWindow, type Window, windowBbox, windowTransform } from "../schemas/grid.js";
import { type Coverage, type Dataset, type DayEntry, holdsDate, intersectWindows } from "../schemas/layout.js";
import { type RasterView, openVersion } from "./archive.js";
import { isVisible } from "./records.js";
import { type RequestConfig, listPeriodDates } from "./request.js";
import type { Context } from "./service.js";

export type UnavailableReason = "coverage_unavailable" | "request_too_large" | "no_cell_centers" | "unsupported_grid";

export interface Selection {
  view: RasterView;
  /** global cells selected on every date */
  window: Window;
  days: DayEntry[];
  rowCount: number;
}

export type Resolved =
  | { available: true; selection: Selection }
  | { available: false; reason: UnavailableReason; message: string; selection?: Selection };

interface Candidate {
  id: string;
  coverage: Coverage;
  record?: Dataset;
}

/**
 * The candidate's grid must be the north-up regular EPSG:4326 grid whose arithmetic grid.ts does: the SILO
 * grid itself (decisions.md 3, unsupported_grid). Any other grid cannot be selected by these cell rules.
 */
export function isSupportedGrid(record: Dataset): boolean {
  const support = record.spatial_support as { crs?: unknown; grid_transform?: unknown };
  const transform = support.grid_transform;
  if (support.crs !== GRID.crs || !Array.isArray(transform) || transform.length !== 6) return false;
  const [a, b, , d, e] = transform as number[];
  if (a <= 0 || b !== 0 || d !== 0 || e >= 0) return false;
  return windowTransform(0, 0).every((x, i) => x === transform[i]);
}

/** The box touches the candidate's extent, cell edges included (decisions.md 3, no_cell_centers). */
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

/** Whether the version holds every cell of `window` on every date, and the day entries if so. */
async function findCoveredDays(view: RasterView, coverage: Coverage, window: Window, dates: string[]): Promise<DayEntry[] | null> {
  if (!dates.every((d) => holdsDate(coverage, d)) || !containsWindow(coverage.windowAny, window)) return null;
  const days: DayEntry[] = [];
  for (const date of dates) {
    const day = await view.findDay(date);
    if (!day || !containsWindow(day.window, window)) return null;
    days.push(day);
  }
  return days;
}

export async function resolveRequest(ctx: Context, config: RequestConfig): Promise<Resolved> {
  const snapshot = await ctx.snapshot();
  const bbox = config.region.bbox;
  let candidates: Candidate[];
  if (config.dataset_version !== undefined) {
    const id = config.dataset_version;
    const record = await snapshot.findRecord(id);
    if (!record || !isVisible(record) || !isQueryCompatible(record)) {
      const why = !record || !isVisible(record) ? "is not a published version here" : "is not a public demo version of SILO daily air_temperature_max in degC";
      return { available: false, reason: "coverage_unavailable", message: `The pinned dataset_version ${id} ${why}; GET /api/v1/datasets lists what is published.` };
    }
    ctx.versionId = id;
    ctx.service.assertAvailable(id);
    const view = await openVersion(ctx.archive, record);
    if (view.kind !== "raster") return { available: false, reason: "coverage_unavailable", message: `The pinned dataset_version ${id} holds no raster.` };
    candidates = [{ id, coverage: view.index.coverage, record }];
  } else {
    candidates = snapshot.pointer.candidates.map((c) => ({ id: c.id, coverage: c.coverage }));
  }
  if (candidates.length === 0) {
    return { available: false, reason: "coverage_unavailable", message: "No public demo version of SILO daily air_temperature_max is published here." };
  }

  const window = bboxToWindow(bbox);
  const touching = candidates.filter((c) => overlapsExtent(bbox, c.coverage));
  if (touching.length === 0) {
    return {
      available: false,
      reason: "coverage_unavailable",
      message: `The box lies outside every published grid; published: ${describePeriods(candidates)}.`,
    };
  }
  if (!window || touching.every((c) => intersectWindows(c.coverage.windowAny, window)[2] === 0)) {
    return {
      available: false,
      reason: "no_cell_centers",
      message: "The box overlaps a published grid but holds none of its cell centres (west/south inclusive, east/north exclusive); widen it to take in a centre (centres at 112 + 0.05k east, -10 - 0.05k north).",
    };
  }

  for (const c of candidates) c.record ??= (await snapshot.findRecord(c.id)) ?? undefined;
  const supported = candidates.filter((c) => c.record && isVisible(c.record) && isQueryCompatible(c.record) && isSupportedGrid(c.record));
  if (supported.length === 0) {
    return { available: false, reason: "unsupported_grid", message: "The candidate dataset's grid is not a north-up regular EPSG:4326 grid this service can select from." };
  }

  const dates = listPeriodDates(config);
  const rowCount = window[2] * window[3] * dates.length;
  for (const c of supported) {
    // reading a candidate's index is reading that version: a failure there marks it (decisions.md 4)
    ctx.versionId = c.id;
    const view = await openVersion(ctx.archive, c.record!);
    if (view.kind !== "raster") continue;
    const days = await findCoveredDays(view, c.coverage, window, dates);
    if (!days) continue;
    ctx.service.assertAvailable(c.id); // the chosen version is 503 when it failed: never a silent fallback
    const selection: Selection = { view, window, days, rowCount };
    if (rowCount > LIMITS.maxCells) {
      return {
        available: false,
        reason: "request_too_large",
        message: `The request selects ${rowCount} rows (${window[2] * window[3]} cells x ${dates.length} days), over the ${LIMITS.maxCells}-row bound; narrow the box or the period, or follow the plan.`,
        selection,
      };
    }
    return { available: true, selection };
  }
  ctx.versionId = null;
  return {
    available: false,
    reason: "coverage_unavailable",
    message: `No published public demo version covers every selected cell on every date of ${config.period.start}..${config.period.end}; closest: ${describePeriods(supported)}.`,
  };
}
