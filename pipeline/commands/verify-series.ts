// `make verify` of the series tier (docs/format.md §7): the spans hold exactly the version's dates, each piece is
// what its header and its Merkle root say, and every chunk decodes to the cells of the day pieces it came from.

import { holdsDate } from "../../format/coverage.js";
import { dateToDayNumber, listDates } from "../../format/dates.js";
import { type Window, intersectWindows } from "../../format/grid.js";
import { sha256Hex } from "../../format/hash.js";
import { lineageOf } from "../../format/entries.js";
import { GroupLattice, type SeriesSpan, decodeSeriesHeader, seriesHeaderBytes } from "../../format/series.js";
import type { RasterView } from "../../format/versions.js";
import { describeError } from "../errors.js";

/** Problems of a version's series tier; objects already checked for a version above are skipped (`visit`). */
export async function verifySeries(view: RasterView, visit: (sha: string) => boolean): Promise<string[]> {
  const spans = view.index.series;
  const problems = checkSpansCoverDates(view, spans);
  for (const span of spans) {
    const name = `series ${span.first}..${span.last}`;
    try {
      if (visit(span.piece.sha256)) problems.push(...(await checkPiece(view, span)).map((p) => `${name}: ${p}`));
      if (Array.isArray(span.sources) || visit(span.sources.sha256)) problems.push(...(await checkSources(view, span)).map((p) => `${name}: ${p}`));
    } catch (err) {
      problems.push(`${name}: ${describeError(err)}`);
    }
  }
  return problems;
}

/** The spans are in date order, hold no gap, and together hold every date of the version, each once. */
function checkSpansCoverDates(view: RasterView, spans: SeriesSpan[]): string[] {
  const { coverage, days } = view.index;
  const problems: string[] = [];
  let held = 0;
  let previous = "";
  for (const span of spans) {
    if (span.first <= previous || span.last < span.first) problems.push(`series ${span.first}..${span.last} is out of date order`);
    if (!listDates(span.first, span.last).every((d) => holdsDate(coverage, d))) problems.push(`series ${span.first}..${span.last} holds a date the version does not`);
    held += dateToDayNumber(span.last) - dateToDayNumber(span.first) + 1;
    previous = span.last;
  }
  if (held !== days) problems.push(`the series spans hold ${held} dates, the version ${days}`);
  return problems;
}

/**
 * The newest piece's header describes the span and its lineage, every group record proves against the root of the
 * piece it lies in, then every chunk against the day pieces.
 */
async function checkPiece(view: RasterView, span: SeriesSpan): Promise<string[]> {
  const problems: string[] = [];
  const bytes = await view.archive.readObject(span.piece, "ser");
  const header = decodeSeriesHeader(bytes);
  const lattice = new GroupLattice(span.window, span.chunkSide);
  const days = dateToDayNumber(span.last) - dateToDayNumber(span.first) + 1;
  const lineage = lineageOf(span).length;
  const described = { window: header.window, firstDay: header.firstDay, days: header.days, chunkSide: header.chunkSide, groupCount: header.groupCount, pieces: header.packs.length, root: header.packs[header.packs.length - 1].root };
  const expected = { window: span.window, firstDay: dateToDayNumber(span.first), days, chunkSide: span.chunkSide, groupCount: lattice.count, pieces: lineage, root: span.root };
  if (JSON.stringify(described) !== JSON.stringify(expected)) problems.push(`its header ${JSON.stringify(described)} does not describe the span`);
  const size = seriesHeaderBytes(header.packs.length, header.groupCount);
  if (lineage > 1 && (span.header?.size !== size || span.header.sha256 !== sha256Hex(bytes.subarray(0, size)))) problems.push("its header Ref does not match the piece's header");
  if (problems.length > 0) return problems;
  for (let g = 0; g < lattice.count; g++) {
    await view.archive.readGroup(span, g).catch((err) => problems.push(`group ${g}: ${describeError(err)}`));
  }
  if (problems.length > 0) return problems;
  const dates = listDates(span.first, span.last);
  for (const strip of listRowStrips(span.window)) {
    const series = await view.readSeries(span, strip, 0, days);
    for (const [d, date] of dates.entries()) {
      const day = await view.findDay(date);
      if (!day || day.window.join() !== span.window.join()) {
        problems.push(`${date}: the version's day has another window than the span`);
        continue;
      }
      const cells = await view.readCells(day, strip);
      if (!Buffer.from(cells.buffer, cells.byteOffset, cells.byteLength).equals(Buffer.from(series[d].buffer, series[d].byteOffset, series[d].byteLength))) problems.push(`${date}: the series cells of rows ${strip[1]}..${strip[1] + strip[3] - 1} differ from the day piece`);
    }
  }
  return problems;
}

/** Rows of the window 64 at a time: a year of a full-grid strip is about 80 MB of cells. */
function listRowStrips(window: Window): Window[] {
  const strips: Window[] = [];
  for (let row = window[1]; row < window[1] + window[3]; row += 64) strips.push(intersectWindows(window, [window[0], row, window[2], 64]));
  return strips;
}

/** The span's source lists are those of its days, in date order. */
async function checkSources(view: RasterView, span: SeriesSpan): Promise<string[]> {
  const lists = await view.readSpanSources(span);
  const dates = listDates(span.first, span.last);
  if (lists.length !== dates.length) return [`its source lists hold ${lists.length} dates, the span ${dates.length}`];
  const problems: string[] = [];
  for (const [d, date] of dates.entries()) {
    const day = await view.findDay(date);
    if (JSON.stringify(day?.sources) !== JSON.stringify(lists[d])) problems.push(`${date}: the span's source list differs from the day's`);
  }
  return problems;
}
