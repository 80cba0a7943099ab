// GET catalog, inspect and observations (docs/contract.md §1.1, §4.3).

import { PAGE_SIZE } from "../../format/version-index.js";
import type { ObservationView } from "../../format/versions.js";
import type { Answer } from "../answer.js";
import type { Context } from "../context.js";
import { decodeCatalogCursor, encodeCatalogCursor, encodeOffsetCursor, readOffset } from "../cursors.js";
import { rejectCursor } from "../parameters.js";
import { findVisibleRecord, isVisible, openData, toImmutableRecord } from "../records.js";
import { writePage } from "./pages.js";
import type { PageParams } from "./parameters.js";

const FEWER = "ask for fewer items with a smaller limit, then follow nextCursor";
/** One record is not paged (docs/contract.md §1.1): what is large in it can be read elsewhere. */
const WHOLE_RECORD = "a dataset record is not paged: read its tiles a page at a time with GET /api/v1/layers/{id}?limit=N, or the record itself from the dist's catalog (docs/mirrors.md)";

export async function answerCatalog(ctx: Context, page: PageParams): Promise<Answer> {
  const after = page.after === undefined ? null : await decodeCatalogCursor(ctx.platform, page.after);
  if (page.after !== undefined && after === null) throw rejectCursor();
  const { records, more } = await ctx.snapshot.listRecords(after, page.limit, isVisible);
  const nextCursor = more ? await encodeCatalogCursor(ctx.platform, records[records.length - 1].id) : null;
  const body = writePage({ datasets: `[${records.map((r) => JSON.stringify(r)).join(",")}]` }, nextCursor);
  return ctx.answer(body, { cache: "short", bounded: FEWER });
}

export async function answerInspect(ctx: Context): Promise<Answer> {
  // Paid versions are listed and inspectable; only their data is withheld (docs/contract.md §1.3).
  const record = await findVisibleRecord(ctx, ctx.params.id);
  return ctx.answer(JSON.stringify({ dataset: toImmutableRecord(record) }), { cache: "immutable", bounded: WHOLE_RECORD });
}

export async function answerObservations(ctx: Context, page: PageParams): Promise<Answer> {
  const view = await openData(ctx, ctx.params.id);
  const id = view.record.id;
  const count = view.kind === "observation" ? view.index.count : 0;
  const offset = await readOffset(ctx.platform, id, "observations", page.after ?? null, count);
  const end = Math.min(offset + page.limit, count);
  const nextCursor = end < count ? await encodeOffsetCursor(ctx.platform, id, "observations", end) : null;
  const items = view.kind === "observation" && end > offset ? await readObservations(view, offset, end, page.limit) : "[]";
  const body = writePage({ datasetVersion: JSON.stringify(id), observations: items }, nextCursor);
  return ctx.answer(body, { cache: "immutable", bounded: FEWER });
}

/** JSON array text of observations [offset, end): a default page is one stored chunk as it is. */
async function readObservations(view: ObservationView, offset: number, end: number, limit: number): Promise<string> {
  if (offset % PAGE_SIZE === 0 && end - offset === Math.min(PAGE_SIZE, view.index.count - offset) && limit === PAGE_SIZE) {
    return view.chunkText(offset / PAGE_SIZE);
  }
  const parts: unknown[] = [];
  for (let chunk = Math.floor(offset / PAGE_SIZE); chunk * PAGE_SIZE < end; chunk++) {
    const list = JSON.parse(await view.chunkText(chunk)) as unknown[];
    const start = chunk * PAGE_SIZE;
    parts.push(...list.slice(Math.max(0, offset - start), end - start));
  }
  return JSON.stringify(parts);
}
