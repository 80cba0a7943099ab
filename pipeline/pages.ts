// Paged lists (tile metadata, observations) as static page files a mirror can serve as they are.

import { type ListKind, PAGE_SIZE, encodeCursor, pagePath } from "../schemas/dist.js";
import { assertValid } from "../schemas/validate.js";
import type { DistWriter } from "./files.js";

export async function writePages<T>(
  writer: DistWriter,
  id: string,
  kind: ListKind,
  items: T[],
  wrap: (items: T[], nextCursor: string | null) => object,
  schemaId: string,
): Promise<number> {
  let pages = 0;
  for (let offset = 0; offset === 0 || offset < items.length; offset += PAGE_SIZE) {
    const next = offset + PAGE_SIZE < items.length ? encodeCursor(id, kind, offset + PAGE_SIZE) : null;
    const body = wrap(items.slice(offset, offset + PAGE_SIZE), next);
    const path = pagePath(id, kind, offset === 0 ? null : encodeCursor(id, kind, offset));
    assertValid(schemaId, body, path);
    await writer.write(path, JSON.stringify(body));
    pages++;
  }
  return pages;
}
