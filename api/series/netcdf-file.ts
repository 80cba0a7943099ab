// The series route's NetCDF answer (docs/contract.md §8.2, docs/netcdf.md): a box's cells, or one
// place's cell, over the answered period, described for api/series/netcdf.ts and streamed a slab of days at a time
// straight from the series tier (format/archive.ts readSeries gives days x cells, the file's own order).

import { dateToDayNumber } from "../../format/dates.js";
import { type Window, colToLon, rowToLat } from "../../format/grid.js";
import type { AnswerStream } from "../answer.js";
import type { SpanSlice } from "../tiers.js";
import { type NetcdfDescription, type NetcdfVariable, layoutNetcdf, streamNetcdf } from "./netcdf.js";
import type { SeriesConfig, SeriesRequest } from "./call.js";
import type { SeriesChoice, SeriesSelection } from "./select.js";

export const NETCDF_TYPE = "application/x-netcdf";
/** SILO's page, as CF's `source` names where the data come from (api/ reads no sources/: the record carries the rest). */
const SOURCE = "SILO gridded data (https://www.longpaddock.qld.gov.au/silo/)";

/** The cells a NetCDF answer holds: its box's window, or its one place's cell. */
export function netcdfWindow(config: SeriesConfig): Window {
  const { box, places } = config;
  return box ? box.window : [places[0].col, places[0].row, 1, 1];
}

/** A variable of the file, from the one table of variables (format/variables.ts). */
function describeVariable({ variable: v }: SeriesChoice): NetcdfVariable {
  return { name: v.name, units: v.unit, longName: v.label, ...(v.standardName ? { standardName: v.standardName } : {}), ...(v.cellMethods ? { cellMethods: v.cellMethods } : {}), attributes: { comment: `SILO's value of a date covers ${v.observed}` } };
}

/** Each distinct text of the versions, in variable order, joined: a license or an attribution they share is said once. */
const distinct = (texts: string[]) => [...new Set(texts)].join(" ");

/** What the file holds: coordinates, variables, and global attributes carrying each version, its hash, license and attribution. */
export function describeSeriesNetcdf(config: SeriesConfig, selection: SeriesSelection, request: SeriesRequest): NetcdfDescription {
  const [c0, r0, width, height] = netcdfWindow(config);
  const first = dateToDayNumber(selection.start);
  const records = selection.choices.map((c) => c.view.record);
  const extra: Record<string, string> = { attribution: distinct(records.map((r) => r.attribution)) };
  for (const { variable, view } of selection.choices) {
    extra[`${variable.name}_dataset_version`] = view.record.id;
    extra[`${variable.name}_content_sha256`] = view.record.content_sha256;
  }
  extra.request_sha256 = request.sha256;
  if (selection.asked) extra.period_asked = `${selection.asked.start}/${selection.asked.end}`;
  return {
    days: Array.from({ length: selection.days }, (_, t) => first + t),
    lat: Array.from({ length: height }, (_, r) => rowToLat(r0 + r)),
    lon: Array.from({ length: width }, (_, c) => colToLon(c0 + c)),
    variables: selection.choices.map(describeVariable),
    globals: {
      title: config.box ? "SILO daily climate grids, a box over days" : "SILO daily climate grids, a place over days",
      institution: "Queensland Government, Department of Environment, Science and Innovation (SILO)",
      source: SOURCE,
      license: distinct(records.map((r) => r.license)),
      // the request, not the clock: the same call over the same versions is the same bytes (its ETag and digest)
      history: `GET /api/v1/series ${request.text}`,
      extra,
    },
  };
}

/** Spans smaller than this are read together in one slab (a place over a century: a slab, not 100). */
const SLAB_JOIN_BYTES = 1 << 20;
/**
 * A span larger than this is read in parts, each reading the span's chunks again: a box of up to 11,000 cells over a
 * year (16 MiB) reads each chunk once a pass; a bound-size answer of a wider box, at most three times.
 */
const SLAB_MAX_BYTES = 16 << 20;

/**
 * A variable's slabs (streamNetcdf's edges) on its series spans' edges, so each chunk is decoded once a pass over
 * the file (two passes in all: its digest, then its sending): small spans joined, large ones cut.
 */
export function planSlabs(slices: readonly SpanSlice[], cells: number): number[] {
  const dayBytes = cells * 4;
  const edges = [0];
  let at = 0;
  for (const { from, to } of slices) {
    const days = to - from;
    const open = edges[edges.length - 1];
    if (at > open && (at + days - open) * dayBytes > SLAB_JOIN_BYTES) edges.push(at);
    const parts = Math.ceil((days * dayBytes) / SLAB_MAX_BYTES);
    for (let k = 1; k < parts; k++) edges.push(at + Math.round((k * days) / parts));
    at += days;
    if (parts > 1) edges.push(at);
  }
  if (edges[edges.length - 1] !== at) edges.push(at);
  return edges;
}

/** Days [t0, t1) of one choice over `window`, day-major (the file's order): from each series span they fall in. */
async function readDays(choice: SeriesChoice, window: Window, t0: number, t1: number): Promise<Float32Array> {
  const cells = window[2] * window[3];
  const out = new Float32Array((t1 - t0) * cells);
  let at = 0; // the period's day at which this slice starts
  for (const { span, from, to } of choice.slices) {
    const [a, b] = [Math.max(t0, at), Math.min(t1, at + to - from)];
    if (a < b) await choice.view.readSeries(span, window, from + a - at, from + b - at, out.subarray((a - t0) * cells));
    at += to - from;
  }
  return out;
}

/** The file as a streamed body: its layout (and so its length) now, its bytes each time it is opened. */
export function streamSeriesNetcdf(config: SeriesConfig, selection: SeriesSelection, request: SeriesRequest): AnswerStream {
  const layout = layoutNetcdf(describeSeriesNetcdf(config, selection, request));
  const window = netcdfWindow(config);
  const byName = new Map(selection.choices.map((c) => [c.variable.name, c]));
  const cells = window[2] * window[3];
  const slabs = new Map(selection.choices.map((c) => [c.variable.name, planSlabs(c.slices, cells)]));
  // a slab's values and their big-endian bytes
  const largest = Math.max(...[...slabs.values()].flatMap((edges) => edges.slice(1).map((e, k) => e - edges[k])));
  return {
    byteLength: layout.byteLength,
    heldBytes: 2 * largest * cells * 4,
    open: () => streamNetcdf(layout, (name, t0, t1) => readDays(byName.get(name)!, window, t0, t1), (name) => slabs.get(name)!),
  };
}
