// GET catalog, inspect and observations (interface.md 4.3, 4.4, 4.7.1; decisions.md 4).

import { PAGE_SIZE } from "../schemas/layout.js";
import type { Answer } from "./answer.js";
import { decodeCatalogCursor, encodeCatalogCursor, encodeOffsetCursor, readOffset } from "./cursors.js";
import { readPageParams, rejectCursor } from "./params.js";
import { isVisible, toImmutableRecord } from "./records.js";
import type { Context } from "./service.js";

const FEWER = "ask for fewer items with a smaller limit";

export async function answerCatalog(ctx: Context): Promise<Answer> {
  const page = readPageParams(ctx.query);
  const after = page.after === null ? null : await decodeCatalogCursor(ctx.platform, page.after);
  if (page.after !== null && after === null) throw rejectCursor();
  const { records, more } = await (await ctx.snapshot()).listRecords(after, page.limit, isVisible);
  const nextCursor = more ? await encodeCatalogCursor(ctx.platform, records[records.length - 1].id) : null;
  const body = `{"datasets":[${records.map((r) => JSON.stringify(r)).join(",")}],"nextCursor":${JSON.stringify(nextCursor)}}`;
  return ctx.answer(body, { cache: "short", bounded: FEWER });
}

export async function answerInspect(ctx: Context): Promise<Answer> {
  // Paid versions are listed and inspectable; only their data is withheld (decisions.md 4).
  const record = await ctx.findRecord(ctx.params.id);
  return ctx.answer(JSON.stringify({ dataset: toImmutableRecord(record) }), { cache: "immutable", bounded: FEWER });
}

export async function answerObservations(ctx: Context): Promise<Answer> {
  const page = readPageParams(ctx.query);
  const view = await ctx.openData(ctx.params.id);
  const id = view.record.id;
  const count = view.kind === "observation" ? view.index.count : 0;
  const offset = await readOffset(ctx.platform, id, "observations", page.after, count);
  const end = Math.min(offset + page.limit, count);
  const nextCursor = end < count ? await encodeOffsetCursor(ctx.platform, id, "observations", end) : null;
  let items = "[]";
  if (view.kind === "observation" && end > offset) {
    if (offset % PAGE_SIZE === 0 && end - offset === Math.min(PAGE_SIZE, count - offset) && page.limit === PAGE_SIZE) {
      items = await view.chunkText(offset / PAGE_SIZE); // the stored chunk is exactly this page's items
    } else {
      const parts: unknown[] = [];
      for (let chunk = Math.floor(offset / PAGE_SIZE); chunk * PAGE_SIZE < end; chunk++) {
        const list = JSON.parse(await view.chunkText(chunk)) as unknown[];
        const start = chunk * PAGE_SIZE;
        parts.push(...list.slice(Math.max(0, offset - start), end - start));
      }
      items = JSON.stringify(parts);
    }
  }
  const body = `{"datasetVersion":${JSON.stringify(id)},"observations":${items},"nextCursor":${JSON.stringify(nextCursor)}}`;
  return ctx.answer(body, { cache: "immutable", bounded: FEWER });
}
