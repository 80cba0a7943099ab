// Where things live in a dist: catalog.json and the content-addressed objects (docs/format.md §1).
//
// dist/
//   catalog.json                      the one mutable file (CatalogPointer), replaced atomically, last
//   objects/<aa>/<sha256>.json        immutable JSON objects, named by the sha256 of their bytes
//   objects/<aa>/<sha256>.day         immutable day pieces: one date's cells as compressed 64 x 64 blocks
//   objects/<aa>/<sha256>.ser         immutable series pieces: a span of dates, time-major, in chunks
//   explorer/                         the browser explorer, written by every publish

export const DIST_FORMAT = "climate-dist-2";
export const CATALOG_FILE = "catalog.json";
export const EXPLORER_FILES = ["explorer/index.html", "explorer/app.js"] as const;

// What readers of a dist are given (a static host publishes exactly these); never the lock, journal, pending list,
// backups or a sync's partial files beside them. The shard folder is the name's first two hex digits.
const READER_FILE = /^(?:catalog\.json|objects\/([0-9a-f]{2})\/\1[0-9a-f]{62}\.(?:json|day|ser)|explorer\/(?:index\.html|app\.js))$/;

/** Whether `path` (relative, as written: no decoding, no normalising) names a file a dist gives its readers. */
export function isReaderFile(path: string): boolean {
  return READER_FILE.test(path);
}

export type ObjectKind = "json" | "day" | "ser";

/** Objects are sharded by the first two hex digits so no folder holds more than 1/256 of them. */
export function objectPath(sha256: string, kind: ObjectKind): string {
  return `objects/${sha256.slice(0, 2)}/${sha256}.${kind}`;
}

/** A content-addressed object: its path follows from sha256 and kind. */
export interface Ref {
  sha256: string;
  size: number;
}

export interface FileEntry {
  path: string;
  size: number;
  sha256: string;
}
