// The bytes of a series answer as CSV and JSON (docs/contract.md §8.2). CSV is tidy, as pandas.read_csv and R's
// read.csv take it: `longitude,latitude,date,<variable>...`, one row per place and date (places in the order asked,
// dates ascending), missing an empty field, LF line ends. JSON is a manifest and the values by place, a column
// a variable. Rows are copied from parts made once per answer (a place, the dates) and per value (cached).

import { colToLon, rowToLat } from "../../format/grid.js";
import { STORE_SLACK, VALUE_TEXT_MAX, putBytes, valueWords } from "../../format/number-text.js";
import { ByteSink, PENDING_SHA256, asciiBytes, writeHashedData } from "../bytes.js";
import { buildSeriesManifest } from "./manifest.js";
import { type SeriesConfig, listPlaces } from "./call.js";
import { type PeriodDates, periodDates } from "./period-dates.js";
import type { SeriesSelection } from "./select.js";

const COMMA = 44;
const NEWLINE = 10;

/** The CSV header line. */
export function seriesCsvHeader(selection: SeriesSelection): string {
  return `longitude,latitude,date,${selection.choices.map((c) => c.variable.name).join(",")}\n`;
}

const CSV_VALUES = valueWords(",", "");
const JSON_VALUES = valueWords(",", "null");

/** One place's rows from `start`: its prefix (`lon,lat,`), the date, each column's value, a line end. */
function writePlaceRows(buffer: Uint8Array, start: number, prefix: Uint8Array, dates: PeriodDates, columns: Float32Array[]): number {
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  // the prefix as words too (its stores spill past it; the date overwrites them)
  const prefixWords = new Uint32Array(Math.ceil(prefix.length / 4));
  new Uint8Array(prefixWords.buffer).set(prefix);
  const n = prefix.length;
  let at = start;
  for (let d = 0; d < dates.days; d++) {
    for (let w = 0; w < prefixWords.length; w++) view.setUint32(at + 4 * w, prefixWords[w], true);
    at = dates.put(view, at + n, d);
    for (let v = 0; v < columns.length; v++) at = CSV_VALUES.put(view, buffer, at, columns[v][d]);
    buffer[at++] = NEWLINE;
  }
  return at;
}

/** CSV: the header, then each place's rows, a date a row. `values[v][p]` as readSeriesValues gives them. */
export function writeSeriesCsv(config: SeriesConfig, selection: SeriesSelection, values: Float32Array[][]): Uint8Array {
  const out = new ByteSink();
  out.text(seriesCsvHeader(selection));
  const dates = periodDates(selection.start, selection.days);
  listPlaces(config).forEach((place, p) => {
    const prefix = asciiBytes(`${colToLon(place.col)},${rowToLat(place.row)},`);
    const columns = values.map((v) => v[p]);
    const rowMost = prefix.length + 4 + 10 + columns.length * (1 + VALUE_TEXT_MAX) + 1;
    out.write(selection.days * rowMost + STORE_SLACK, (buffer, start) => writePlaceRows(buffer, start, prefix, dates, columns));
  });
  return out.finish();
}

/** `[v,v,...]` of one column, null for missing. */
function writeValuesJson(out: ByteSink, column: Float32Array): void {
  out.write(column.length * (VALUE_TEXT_MAX + 1) + 2 + STORE_SLACK, (buffer, start) => {
    const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    // every value is written with a comma before it; the first one's lands where "[" goes, put back after
    let at = start;
    for (let d = 0; d < column.length; d++) at = JSON_VALUES.put(view, buffer, at, column[d]);
    buffer[start] = 91; // [
    if (column.length === 0) at++;
    buffer[at++] = 93; // ]
    return at;
  });
}

/** The `data` member: `{"dates":[...],"places":[{"longitude","latitude","values":{<variable>:[...]}}]}`. */
function writeSeriesData(out: ByteSink, config: SeriesConfig, selection: SeriesSelection, values: Float32Array[][]): void {
  const dates = periodDates(selection.start, selection.days);
  out.write(selection.days * 13 + 12 + STORE_SLACK, (buffer, start) => {
    const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
    let at = putBytes(buffer, start, asciiBytes('{"dates":['));
    for (let d = 0; d < selection.days; d++) {
      if (d > 0) buffer[at++] = COMMA;
      buffer[at++] = 34; // "
      at = dates.put(view, at, d);
      buffer[at++] = 34;
    }
    buffer[at++] = 93; // ]
    return at;
  });
  out.text(',"places":[');
  listPlaces(config).forEach((place, p) => {
    out.text(`${p > 0 ? "," : ""}{"longitude":${colToLon(place.col)},"latitude":${rowToLat(place.row)},"values":{`);
    selection.choices.forEach((choice, v) => {
      out.text(`${v > 0 ? "," : ""}${JSON.stringify(choice.variable.name)}:`);
      writeValuesJson(out, values[v][p]);
    });
    out.text("}}");
  });
  out.text("]}");
}

/** JSON: `{"manifest":{...},"data":{...}}`, the manifest's dataSha256 the sha256 of the `data` text as sent. */
export async function writeSeriesJson(
  config: SeriesConfig,
  selection: SeriesSelection,
  values: Float32Array[][],
  requestSha256: string,
  sha256Hex: (bytes: Uint8Array) => Promise<string>,
): Promise<Uint8Array> {
  const manifest = buildSeriesManifest(config, selection, requestSha256, PENDING_SHA256);
  return writeHashedData(manifest, (out) => writeSeriesData(out, config, selection, values), sha256Hex);
}
