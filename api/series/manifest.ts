// The provenance manifest of a JSON series answer (docs/contract.md §8.2): each variable's version, content hash,
// license and attribution, and its dates' source lists by reference (the objects that hold them, a few per year),
// never the lists themselves: an answer over 137 years would otherwise carry 50,000 entries a variable.

import { GRID, colToLon, rowToLat } from "../../format/grid.js";
import { objectPath } from "../../format/objects.js";
import type { Dataset } from "../../format/records.js";
import { indexRefOf } from "../../format/version-index.js";
import { SPATIAL_SELECTION } from "../contract.js";
import { type SeriesConfig, countPlaces } from "./call.js";
import type { SeriesChoice, SeriesSelection } from "./select.js";

export const SERIES_QUERY_VERSION = "silo-cell-series-v1";
export const PLACE_RULE = "silo_cell_area_holds_point_east_or_north_on_edges";

/** A reference to the source lists of a range of dates: the object (a dist file) that holds them, and where in it. */
interface SourcesRef {
  first: string;
  last: string;
  path: string;
  sha256: string;
  size: number;
  /** JSON pointer inside the object, when the lists are a member of a larger object (the index root) */
  pointer?: string;
}

function indexOf(record: Dataset): { path: string; sha256: string; size: number } {
  const ref = indexRefOf(record);
  return { path: objectPath(ref.sha256, "json"), sha256: ref.sha256, size: ref.size };
}

/** Where a choice's dates find their sources: each span's list object, or its entry in the index root. */
function referSources(choice: SeriesChoice, selection: SeriesSelection): SourcesRef[] {
  const index = indexOf(choice.view.record);
  const spans = choice.view.index.series;
  return choice.slices.map(({ span }) =>
    Array.isArray(span.sources)
      ? { first: span.first, last: span.last, ...index, pointer: `/series/${spans.indexOf(span)}/sources` }
      : { first: span.first, last: span.last, path: objectPath(span.sources.sha256, "json"), sha256: span.sources.sha256, size: span.sources.size },
  );
}

function describeVariable(choice: SeriesChoice, selection: SeriesSelection) {
  const record = choice.view.record;
  return {
    name: choice.variable.name,
    silo: choice.variable.silo,
    unit: choice.variable.unit,
    datasetVersion: record.id,
    datasetContentSha256: record.content_sha256,
    transformVersion: record.transform_version,
    dataClass: record.data_class,
    license: record.license,
    attribution: record.attribution,
    describedBy: `/api/v1/datasets/${record.id}`,
    sourceIndex: indexOf(record),
    sources: referSources(choice, selection),
  };
}

/** The manifest, fields in order; `dataSha256` last, so the answer can patch its hex digits in place. */
export function buildSeriesManifest(config: SeriesConfig, selection: SeriesSelection, requestSha256: string, dataSha256: string) {
  return {
    queryVersion: SERIES_QUERY_VERSION,
    requestSha256,
    crs: GRID.crs,
    missingPolicy: "preserve",
    ...(config.box ? { spatialSelection: SPATIAL_SELECTION, bbox: config.box.bbox } : { placeRule: PLACE_RULE }),
    start: selection.start,
    end: selection.end,
    ...(selection.asked ? { asked: selection.asked } : {}),
    days: selection.days,
    ...(config.places ? { places: config.places.map((p) => ({ lat: p.lat, lon: p.lon, longitude: colToLon(p.col), latitude: rowToLat(p.row) })) } : {}),
    variables: selection.choices.map((c) => describeVariable(c, selection)),
    valueCount: countPlaces(config) * selection.days * selection.choices.length,
    dataSha256,
  };
}
