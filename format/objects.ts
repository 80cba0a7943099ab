// Where things live in a dist: catalog.json and the content-addressed objects (docs/format.md §1).
//
// dist/
//   catalog.json                      the one mutable file (CatalogPointer), replaced atomically, last
//   objects/<aa>/<sha256>.json        immutable JSON objects, named by the sha256 of their bytes
//   objects/<aa>/<sha256>.day         immutable day pieces: one date's cells as compressed 64 x 64 blocks
//   objects/<aa>/<sha256>.ser         immutable series pieces: a span of dates, time-major, in chunks
//   objects/<aa>/<sha256>.html        the browser explorer, one self-contained page, named by catalog.json
//   objects/<aa>/<sha256>.json.br     a brotli copy of a JSON object, for static hosts

export const DIST_FORMAT = "climate-dist-4";
export const CATALOG_FILE = "catalog.json";

export type ObjectKind = "json" | "day" | "ser" | "html";

// An object's path: the shard folder is its name's first two hex digits.
const OBJECT_FILE = /^objects\/([0-9a-f]{2})\/(\1[0-9a-f]{62})\.(json|day|ser|html|json\.br)$/;

/** The sha256 and kind an object's path names (a .json.br copy names its JSON object's hash), or null. */
export function parseObjectPath(path: string): { sha256: string; kind: ObjectKind | "json.br" } | null {
  const m = OBJECT_FILE.exec(path);
  return m ? { sha256: m[2], kind: m[3] as ObjectKind | "json.br" } : null;
}

/**
 * Whether `path` (relative, as written: no decoding, no normalising) names a file a dist gives its readers (a static
 * host publishes exactly these); never the lock, journal, pending list or a sync's partial files beside them.
 */
export function isReaderFile(path: string): boolean {
  if (path === CATALOG_FILE) return true;
  const object = parseObjectPath(path);
  return object !== null && object.kind !== "json.br";
}

/** Whether a publish manifest may list `path`: an object (or its brotli copy) under its hash. */
export function isListedFile(path: string): boolean {
  return parseObjectPath(path) !== null;
}

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
