// GET /api/v1/datasets/{id}/revisions: which dates of a pinned version SILO has revised since, by comparing it with
// the newest version of its dataset (or another, `against`): both index trees walked side by side, every year and
// month they share skipped (format/diff.ts), so the answer costs the changes, not the archive.

import { DateRanges, diffIndexTrees } from "../../format/diff.js";
import type { Ref } from "../../format/objects.js";
import type { RasterView } from "../../format/versions.js";
import type { Answer } from "../answer.js";
import type { Context } from "../context.js";
import { rejectParameter } from "../parameters.js";
import { openData } from "../records.js";
import type { RevisionsParams } from "./parameters.js";

async function openRaster(ctx: Context, id: string, param: string): Promise<RasterView> {
  const view = await openData(ctx, id);
  if (view.kind !== "raster") throw rejectParameter(param, "not_raster", `names ${id}, a table of observations: it has no dates to compare; give a raster version`);
  return view;
}

export async function answerRevisions(ctx: Context, params: RevisionsParams): Promise<Answer> {
  const pinned = await openRaster(ctx, ctx.params.id, "id");
  const key = pinned.record.dataset_key;
  const newestId = ctx.snapshot.pointer.candidates.find((c) => c.record.dataset_key === key)?.id ?? pinned.record.id;
  const againstId = params.against ?? newestId;
  const against = await openRaster(ctx, againstId, "against");
  if (against.record.dataset_key !== key) throw rejectParameter("against", "other_dataset", `names a version of ${against.record.dataset_key}, not of ${key}; give a version of the same dataset`);
  const side = (view: RasterView) => ({ years: view.index.years, readPage: <T>(ref: Ref) => view.readJson<T>(ref) });
  const found = { revised: new DateRanges(), added: new DateRanges(), removed: new DateRanges() };
  for await (const change of diffIndexTrees(side(pinned), side(against))) found[change.kind].add(change.date);
  const body = {
    datasetVersion: pinned.record.id,
    comparedWith: against.record.id,
    newest: against.record.id === newestId,
    revised: found.revised.ranges,
    added: found.added.ranges,
    removed: found.removed.ranges,
  };
  return ctx.answer(JSON.stringify(body), { cache: "short", bounded: "the changes between two versions are not paged: compare versions closer in time with against=<id> (GET /api/v1/datasets lists them)" });
}
