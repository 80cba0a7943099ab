// The bytes of the listings: a page of a list (catalog, observations, layers), tile metadata, and a tile with its
// cells (docs/contract.md §1.2, §4.3). Values are their shortest float32 decimals (docs/contract.md §2).

import { GRID, type TilePart, tileId, windowBbox, windowTransform } from "../../format/grid.js";
import { valueBytes, valueWords } from "../../format/number-text.js";
import { ByteSink, asciiBytes } from "../bytes.js";

/** A value in a JSON answer (null when missing), as the query's rows write it. */
const JSON_VALUE = valueBytes("", "", "null");
/** A tile's tenths codes as JSON values each after its comma: the same text as JSON_VALUE's. */
const JSON_WORDS = valueWords(",", "null");

/** What a raster version's cells are: its one variable and unit (its index root says). */
export interface CellMeaning {
  variable: string;
  unit: string;
}

/** Tile metadata as the layers list has it (docs/contract.md §1.2), fields in the contract's order. */
export function describeTile(meaning: CellMeaning, date: string, part: TilePart): Record<string, unknown> {
  const [col, row, width, height] = part.window;
  return {
    id: tileId(date, part.tileRow, part.tileCol),
    variable: meaning.variable,
    unit: meaning.unit,
    observed_on: date,
    width,
    height,
    crs: GRID.crs,
    transform: windowTransform(col, row),
    bbox: windowBbox(part.window),
  };
}

/** GET /api/v1/layers/{id}?tile= (docs/contract.md §4.3): the tile with its cells, row-major. */
export function writeTile(versionId: string, meaning: CellMeaning, date: string, part: TilePart, cells: Float32Array | Int16Array): Uint8Array {
  const meta = JSON.stringify({ ...describeTile(meaning, date, part), dataset_version_id: versionId, source_window: part.window });
  const out = new ByteSink();
  out.text(`{"datasetVersion":${JSON.stringify(versionId)},"tile":${meta.slice(0, -1)},"cells":[`);
  if (cells instanceof Int16Array) out.write(cells.length * 8 + 8, (buffer, at) => writeCodesJson(cells, buffer, at));
  else {
    const comma = asciiBytes(",");
    for (let i = 0; i < cells.length; i++) {
      if (i > 0) out.put(comma);
      out.put(JSON_VALUE.of(cells[i]));
    }
  }
  out.text("]}}");
  return out.finish();
}

/** Tenths codes as JSON values separated by commas, from `at` (the byte before it is "["); returns where they end. */
function writeCodesJson(codes: Int16Array, buffer: Uint8Array, at: number): number {
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  // every value is written with its comma; the first one's lands on the "[" before it, put back at the end
  const open = buffer[at - 1];
  const p = JSON_WORDS.putCodes(view, at - 1, codes);
  buffer[at - 1] = open;
  return codes.length === 0 ? at : p;
}

/**
 * A page of a list (docs/contract.md §4.3): its fields, already JSON text, in order, then `nextCursor`. The one
 * envelope of the catalog, observation and layer pages.
 */
export function writePage(fields: Record<string, string>, nextCursor: string | null): string {
  const parts = Object.entries(fields).map(([name, json]) => `${JSON.stringify(name)}:${json}`);
  return `{${parts.join(",")},"nextCursor":${JSON.stringify(nextCursor)}}`;
}
