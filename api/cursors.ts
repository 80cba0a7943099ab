// Opaque page cursors (docs/contract.md §4.3): a position plus a check, so a cursor this service did not issue is
// recognised; computed the same way by the server and by a mirror's client.

import { type Platform, utf8 } from "../format/storage.js";
import { VERSION_ID_TEXT, rejectCursor } from "./parameters.js";

export type ListKind = "layers" | "observations";

/** Layers and observation pages: "<offset>-<check>", the check binding offset to version and list. */
const OFFSET_CURSOR = /^([1-9][0-9]{0,9})-([0-9a-f]{12})$/;
const cursorCheckText = (versionId: string, kind: ListKind, offset: number) => `${versionId}/${kind}/${offset}`;

/** Catalog pages: "<id>.<check>": ids, not offsets, so a publish between two pages skips and repeats nothing. */
const CATALOG_CURSOR = new RegExp(`^(${VERSION_ID_TEXT})\\.([0-9a-f]{12})$`);
const catalogCursorCheckText = (id: string) => `catalog/${id}`;

const check = async (platform: Platform, text: string) => (await platform.sha256Hex(utf8(text))).slice(0, 12);

/** Layers and observation pages of an immutable version: "<offset>-<check>". */
export async function encodeOffsetCursor(platform: Platform, versionId: string, kind: ListKind, offset: number): Promise<string> {
  return `${offset}-${await check(platform, cursorCheckText(versionId, kind, offset))}`;
}

export async function decodeOffsetCursor(platform: Platform, versionId: string, kind: ListKind, cursor: string): Promise<number | null> {
  const m = OFFSET_CURSOR.exec(cursor);
  if (!m) return null;
  const offset = Number(m[1]);
  return (await check(platform, cursorCheckText(versionId, kind, offset))) === m[2] ? offset : null;
}

/**
 * Where a page of an immutable list starts: 0 without a cursor, else the cursor's offset; a cursor this service
 * would not issue for this list (edited, another list's, past the end) is 400 (docs/contract.md §4.3).
 */
export async function readOffset(platform: Platform, versionId: string, kind: ListKind, after: string | null, count: number): Promise<number> {
  if (after === null) return 0;
  const offset = await decodeOffsetCursor(platform, versionId, kind, after);
  if (offset === null || offset >= count) throw rejectCursor();
  return offset;
}

/** Catalog pages: "<last id>.<check>", so versions published between two pages shift nothing. */
export async function encodeCatalogCursor(platform: Platform, id: string): Promise<string> {
  return `${id}.${await check(platform, catalogCursorCheckText(id))}`;
}

export async function decodeCatalogCursor(platform: Platform, cursor: string): Promise<string | null> {
  const m = CATALOG_CURSOR.exec(cursor);
  if (!m) return null;
  return (await check(platform, catalogCursorCheckText(m[1]))) === m[2] ? m[1] : null;
}
