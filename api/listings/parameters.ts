// The listings' query parameters, each route's one JSON Schema (api/parameters.ts): a page's limit and cursor, a tile,
// a cell within it, the version a revision is compared with (docs/contract.md §1.1, §4.3, §8.4).

import { VERSION_ID_PATTERN } from "../../schemas/validate.js";
import { LIMITS } from "../contract.js";
import type { ParamsOf } from "../parameters.js";

const SCHEMA = "https://json-schema.org/draft/2020-12/schema";
const CURSOR_RULE = "pass the nextCursor of the preceding page as it came, or omit after for the first page";
const LIMIT_RULE = `must be an integer from 1 to ${LIMITS.maxPageLimit} (default ${LIMITS.defaultPageLimit})`;
/** A tile id's length; the ids the lattice makes are 14 characters ("YYYYMMDD-r0-c0"). */
const TILE_ID_MAX = 128;
const TILE_RULE = `must be a tile id of 1 to ${TILE_ID_MAX} characters: use one GET /api/v1/layers/{id} lists`;

const limit = {
  description: `Items per page; the response is also capped at ${LIMITS.maxResponseBytes} bytes.`,
  type: "integer",
  minimum: 1,
  maximum: LIMITS.maxPageLimit,
  default: LIMITS.defaultPageLimit,
  "x-messages": { "*": LIMIT_RULE },
} as const;
const after = {
  description: "Opaque `nextCursor` of the preceding page; omit for the first page.",
  type: "string",
  maxLength: LIMITS.maxCursorLength,
  "x-messages": { maxLength: `must be at most ${LIMITS.maxCursorLength} characters: ${CURSOR_RULE}` },
} as const;
/** A tile id: the same rule on layers and sample (an empty one is no tile id, not an omitted parameter). */
const tile = (description: string) =>
  ({ description, type: "string", minLength: 1, maxLength: TILE_ID_MAX, "x-messages": { "*": TILE_RULE, required: "is required: a tile id from GET /api/v1/layers/{id}" } }) as const;
/** A zero-based row or column within a tile. */
const cellIndex = (name: "row" | "column", side: "height" | "width") => {
  const rule = `an integer from 0 to the tile's ${side} - 1 (the zero-based ${name} within the tile)`;
  return { description: `Zero-based ${name} within the tile.`, type: "integer", minimum: 0, "x-messages": { "*": `must be ${rule}`, required: `is required: ${rule}` } } as const;
};

/** limit and after of every page (docs/contract.md §4.3, §4); other parameters are ignored, as they always were. */
export const PAGE = { $schema: SCHEMA, $id: "page-parameters.schema.json", title: "Page parameters", description: "A page of a list: its size and where it starts.", type: "object", properties: { limit, after } } as const;
export type PageParams = ParamsOf<typeof PAGE>;

export const LAYERS = {
  ...PAGE,
  $id: "layers-parameters.schema.json",
  title: "Layers parameters",
  description: "A page of tile metadata, or one tile with its cells.",
  properties: { limit, after, tile: tile("A tile id from the layer index; omit to list tile metadata (an empty value is 400).") },
} as const;
export type LayersParams = ParamsOf<typeof LAYERS>;

export const SAMPLE = {
  $schema: SCHEMA,
  $id: "sample-parameters.schema.json",
  title: "Sample parameters",
  description: "One cell: a tile and a row and column within it.",
  type: "object",
  properties: { tile: tile("Tile id from the layer index."), row: cellIndex("row", "height"), col: cellIndex("column", "width") },
  required: ["tile", "row", "col"],
} as const;
export type SampleParams = ParamsOf<typeof SAMPLE>;

export const REVISIONS = {
  $schema: SCHEMA,
  $id: "revisions-parameters.schema.json",
  title: "Revisions parameters",
  description: "The version a pinned one is compared with.",
  type: "object",
  properties: {
    against: {
      description: "The version to compare with (of the same dataset); default: the newest, the one a request without a pin reads.",
      $ref: "common.schema.json#/$defs/version-id",
      "x-messages": { pattern: `{value} does not match ${VERSION_ID_PATTERN}: use a version id GET /api/v1/datasets lists` },
    },
  },
} as const;
export type RevisionsParams = ParamsOf<typeof REVISIONS>;
