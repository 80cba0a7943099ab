// The provenance manifest of a query answer (docs/contract.md §3.5): built here only, for the answer itself and
// for the size bound of a 413's plan, so the bound always counts every field the answer has.

import { GRID } from "../../format/grid.js";
import type { Dataset, SourceEntry } from "../../format/records.js";
import { PENDING_SHA256 } from "../bytes.js";
import { QUERY_VERSION, SPATIAL_SELECTION } from "../contract.js";

/** The manifest, fields in the contract's order; `dataSha256` last, so the answer can patch it in place. */
export function buildManifest(record: Dataset, requestSha256: string, rowCount: number, sources: SourceEntry[], dataSha256 = PENDING_SHA256) {
  return {
    datasetVersion: record.id,
    datasetContentSha256: record.content_sha256,
    requestSha256,
    transformVersion: record.transform_version,
    queryVersion: QUERY_VERSION,
    dataClass: record.data_class,
    crs: GRID.crs,
    missingPolicy: "preserve",
    spatialSelection: SPATIAL_SELECTION,
    rowCount,
    sourceManifest: sources,
    license: record.license,
    attribution: record.attribution,
    dataSha256,
  };
}

/** Each source entry's JSON, kept as long as the entry (an index page's, shared by every answer read from it). */
const entryJson = new WeakMap<SourceEntry, string>();

/**
 * The manifest as JSON, pending its `dataSha256`: the same text as JSON.stringify of buildManifest's object, with
 * each source entry's text made once (a month of a point's manifest was a sixteenth of its answer's time).
 */
export function manifestJson(record: Dataset, requestSha256: string, rowCount: number, sources: SourceEntry[]): string {
  const text = JSON.stringify(buildManifest(record, requestSha256, rowCount, []));
  const list = sources.map((entry) => {
    let json = entryJson.get(entry);
    if (json === undefined) entryJson.set(entry, (json = JSON.stringify(entry)));
    return json;
  });
  const at = text.indexOf('"sourceManifest":[]') + '"sourceManifest":['.length;
  return `${text.slice(0, at)}${list.join(",")}${text.slice(at)}`;
}
