// The Zarr view's routes (docs/contract.md §8.3): a pinned version's keys (metadata JSON, chunks of float32 as .zarray says), and the
// `latest/<dataset_key>/...` redirects to the newest version's same key. Every unknown key is 404.

import type { Answer } from "../answer.js";
import { BINARY_TYPE } from "../answer.js";
import type { Context } from "../context.js";
import { readChunkBytes, recycleMapsChunk } from "./chunks.js";
import { type ZarrGroup, ZARR_GROUPS, describeArrays, groupDocument, isZarrKeyShape, openZarrVersion, parseChunkKey, zarrNotFound, zarrayOf } from "./view.js";

const isGroup = (group: string): group is ZarrGroup => (ZARR_GROUPS as readonly string[]).includes(group);

/** A metadata document, immutable as its version. */
function answerDocument(ctx: Context, id: string, document: Record<string, unknown>): Promise<Answer> {
  return ctx.answer(JSON.stringify(document), { cache: "immutable", ranges: true, headers: { "Service-Dataset-Version": id } });
}

/** The routes' check, before a turn: a path that cannot be a key of the view is 404 at once. */
export function checkZarrPath(ctx: Context): void {
  const { id, group, array, key, dataset } = ctx.params;
  const ok = dataset !== undefined ? isZarrKeyShape(group, array, key) : id === "latest" ? isZarrKeyShape(array, null, key) : isZarrKeyShape(group, array ?? null, key);
  if (!ok) throw zarrNotFound(`The path ${ctx.request.path.slice(0, 200)}`);
}

/** GET /zarr/v2/:id/:group/:key: .zgroup, .zattrs and the consolidated .zmetadata of a group. */
export async function answerZarrGroupKey(ctx: Context): Promise<Answer> {
  const { id, group, key } = ctx.params;
  if (!isGroup(group)) throw zarrNotFound(`Group ${group}`);
  const zv = await openZarrVersion(ctx, id);
  const document = groupDocument(zv, group, key);
  if (!document) throw zarrNotFound(`Key ${group}/${key} of ${id}`);
  return answerDocument(ctx, id, document);
}

/**
 * GET /zarr/v2/:id/:group/:array/:key: an array's .zarray, .zattrs and chunks. With `latest` for :id the path is
 * /zarr/v2/latest/<dataset_key>/<group>/<key>, a group-level key of the newest version (a redirect).
 */
export async function answerZarrArrayKey(ctx: Context): Promise<Answer> {
  const { id, group, array, key } = ctx.params;
  if (id === "latest") return redirectToNewest(ctx, group, [array, key], 3);
  if (!isGroup(group)) throw zarrNotFound(`Group ${group}`);
  const zv = await openZarrVersion(ctx, id);
  const described = describeArrays(zv, group).get(array);
  if (!described) throw zarrNotFound(`Array ${group}/${array} of ${id}`);
  if (key === ".zarray") return answerDocument(ctx, id, zarrayOf(described));
  if (key === ".zattrs") return answerDocument(ctx, id, described.attrs);
  const index = parseChunkKey(described, key);
  const values = index ? await readChunkBytes(zv, group, array, index) : null;
  if (!values) throw zarrNotFound(`Chunk ${group}/${array}/${key} of ${id} (outside the array, or no cell of it held)`);
  const body = described.compressor ? await ctx.platform.deflate(values, described.compressor.level) : values;
  const answer = await ctx.answer(body, { cache: "immutable", type: BINARY_TYPE, ranges: true, headers: { "Service-Dataset-Version": id } });
  if (body === values && group === "maps") answer.recycle = () => recycleMapsChunk(values);
  return answer;
}

/** GET /zarr/v2/latest/:dataset/:group/:array/:key: an array-level key of the newest version (a redirect). */
export function answerZarrLatest(ctx: Context): Promise<Answer> {
  const { dataset, group, array, key } = ctx.params;
  return redirectToNewest(ctx, dataset, [group, array, key], 4);
}

/**
 * 302 to the same key of the newest published version of `datasetKey` (the catalog's candidates, in choice
 * order). The Location is relative (`up` levels above the key's folder), so it holds behind any host or prefix.
 */
function redirectToNewest(ctx: Context, datasetKey: string, rest: string[], up: number): Promise<Answer> {
  const newest = ctx.snapshot.pointer.candidates.find((c) => c.record.dataset_key === datasetKey);
  if (!newest) throw zarrNotFound(`Dataset ${datasetKey.slice(0, 140)} (no published version)`);
  const location = `${"../".repeat(up)}${[newest.id, ...rest].map(encodeURIComponent).join("/")}`;
  return ctx.answer("", { status: 302, cache: "short", etag: false, headers: { Location: location, "Service-Dataset-Version": newest.id } });
}
