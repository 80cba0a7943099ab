// OPeNDAP's answers (docs/contract.md §8.6): a pinned version's .dds, .das, .dods, .html, .info and .ver, the newest
// version's by redirect, and every error as a DAP2 error body.

import type { Answer } from "../answer.js";
import type { Context } from "../context.js";
import { VERSION_ID } from "../parameters.js";
import { isVisible } from "../records.js";
import type { ErrorForm } from "../routes.js";
import { type GridCube, latAxis, lonAxis, openCube, readHyperslab, timeAxis } from "../cube.js";
import { HttpError } from "../errors.js";
import type { AxisStep } from "../tiers.js";
import { type Projection, formatSlab, parseConstraint } from "./constraint.js";
import { type Answered, describeAttributes, describeDataset, resolveProjections } from "./dataset.js";
import { describePage, describeVersion } from "./page.js";
import { DAP_HEADERS, DATA_TYPE, DDS_TYPE, DataBody, writeDas, writeDds, writeError } from "./wire.js";

/** What a DAP URL's last segment may end with: the answers of a dataset. */
export const SUFFIXES = ["dds", "das", "dods", "html", "info", "ver"] as const;
export type Suffix = (typeof SUFFIXES)[number];

/** A request checked before its turn: the version (or dataset key) and suffix its path names, and its projections. */
export interface DapAsk {
  name: string;
  suffix: Suffix;
  /** the query as sent, the constraint's text */
  query: string;
  projections: Projection[];
}

export function dapNotFound(what: string): HttpError {
  return new HttpError({ kind: "not_found", message: `${what} is not an OPeNDAP dataset here; GET /api/v1/datasets lists the versions, each at /opendap/<id> (add .dds, .das, .dods or .html).` });
}

const DESCRIPTION: Record<Suffix, string> = { dds: "dods-dds", das: "dods-das", dods: "dods-data", html: "dods-form", info: "dods-info", ver: "dods-version" };

/** The path's dataset and suffix, and the constraint's projections (its text alone: the dataset is read in its turn). */
export function checkDapPath(ctx: Context): DapAsk {
  const file = ctx.params.file;
  const dot = file.lastIndexOf(".");
  const suffix = file.slice(dot + 1) as Suffix;
  if (dot <= 0 || !SUFFIXES.includes(suffix)) {
    throw dapNotFound(`${JSON.stringify(file.slice(0, 140))} (a dataset's URL ends with one of .${SUFFIXES.join(", .")})`);
  }
  // a mirror client's request has its query as form data only: a constraint has no `=`, so its names are its text
  const query = ctx.request.rawQuery ?? [...ctx.query].map(([k, v]) => (v ? `${k}=${v}` : k)).join("&");
  return { name: file.slice(0, dot), suffix, query, projections: suffix === "dds" || suffix === "dods" ? parseConstraint(query) : [] };
}

/** Every error of these routes as a DAP2 error body with the error's status (RouteSpec.errorForm). */
export const DAP_ERRORS: ErrorForm = {
  type: DDS_TYPE,
  description: 'A DAP2 error: `Error { code = <status>; message = "<what was wrong and what is valid>"; };`, with `Content-Description: dods-error`.',
  render: (err) => ({ body: writeError(err.status, err.message), headers: { "Content-Description": "dods-error", ...DAP_HEADERS } }),
};

function textAnswer(ctx: Context, cube: GridCube, suffix: Suffix, body: string, type = DDS_TYPE): Promise<Answer> {
  const headers = { "Content-Description": DESCRIPTION[suffix], ...DAP_HEADERS, "Service-Dataset-Version": cube.view.record.id };
  return ctx.answer(body, { cache: "immutable", type, headers });
}

/**
 * 413: the answer would hold more values than the bound; the message names hyperslabs of the grid that fit, time
 * ranges first: each the grid with its maps, a time step's values and its time beside the latitudes and longitudes.
 */
function tooLarge(cube: GridCube, answered: Answered, bound: number): HttpError {
  const values = answered.sources.find((s) => s.kind === "values");
  let advice = "ask fewer indices";
  if (values?.kind === "values") {
    const { time, lat, lon } = values.slab;
    const steps = Math.floor((bound - lat.count - lon.count) / (lat.count * lon.count + 1));
    const slabText = (a: AxisStep, start = a.start, count = a.count) => formatSlab({ start, stride: a.step, stop: start + a.step * (count - 1) });
    if (steps >= 1) {
      const parts = Math.ceil(time.count / steps);
      const shown = Array.from({ length: Math.min(parts, 3) }, (_, k) => `${cube.variable.name}${slabText(time, time.start + k * steps * time.step, Math.min(steps, time.count - k * steps))}${slabText(lat)}${slabText(lon)}`);
      advice = `ask at most ${steps} time steps at once, as ${parts} requests: ${shown.join(", ")}${parts > 3 ? ", and so on" : ""}`;
    } else advice = "ask fewer latitudes or longitudes";
  }
  return new HttpError({ kind: "response_too_large", message: `This answer would hold ${answered.count} values, over the bound of ${bound} a request; ${advice}.` });
}

/** The .dods body: the constrained DDS, then each array's values, the grid's read once from its tier into the body itself. */
async function answerData(ctx: Context, cube: GridCube, projections: Projection[]): Promise<Answer> {
  const answered = resolveProjections(cube, projections);
  const bound = ctx.bound("values");
  if (answered.count > bound) throw tooLarge(cube, answered, bound);
  const valuesAt = answered.sources.findIndex((s) => s.kind === "values");
  const body = new DataBody(cube.view.record.id, answered.variables, valuesAt);
  const axes = { time: () => timeAxis(cube), lat: latAxis, lon: lonAxis };
  for (const [i, source] of answered.sources.entries()) {
    if (source.kind === "crs") body.set(i, [0]);
    else if (source.kind === "axis") {
      const all = axes[source.axis]();
      body.set(i, Array.from({ length: source.step.count }, (_, k) => all[source.step.start + k * source.step.step]));
    } else await readHyperslab(cube, source.slab, body.values(i), { bigEndian: true });
  }
  const headers = { "Content-Description": "dods-data", ...DAP_HEADERS, "Service-Dataset-Version": cube.view.record.id };
  return ctx.answer(body.bytes, { cache: "immutable", type: DATA_TYPE, compressible: true, headers });
}

/** GET /opendap/:file: a pinned version's answer. */
export async function answerDap(ctx: Context, ask: DapAsk): Promise<Answer> {
  const cube = await openCube(ctx, ask.name, dapNotFound);
  const id = cube.view.record.id;
  switch (ask.suffix) {
    case "dds":
      return textAnswer(ctx, cube, "dds", writeDds(id, ask.projections.length > 0 ? resolveProjections(cube, ask.projections).variables : describeDataset(cube)));
    case "das":
      return textAnswer(ctx, cube, "das", writeDas(describeAttributes(cube)));
    case "dods":
      return answerData(ctx, cube, ask.projections);
    case "ver":
      return textAnswer(ctx, cube, "ver", describeVersion());
    default:
      return textAnswer(ctx, cube, ask.suffix, describePage(cube, ask.suffix, ctx.request.baseUrl), "text/html; charset=utf-8");
  }
}

/** The cookie naming the version a client's session of the newest alias of `datasetKey` reads. */
const sessionCookie = (datasetKey: string) => `opendap-${datasetKey}`;
/** A session's version is kept a day: longer than any read a client makes of one open dataset. */
const SESSION_SECONDS = 86_400;

/** The version id a request's Cookie header names for the dataset, if any. */
function sessionVersion(cookie: string | undefined, datasetKey: string): string | null {
  const name = sessionCookie(datasetKey);
  for (const part of (cookie ?? "").split(";")) {
    const [key, value] = part.trim().split("=");
    if (key === name && value) return decodeURIComponent(value);
  }
  return null;
}

/**
 * GET /opendap/latest/:file: 302 to the same answer of the dataset's newest version (docs/contract.md §8.6). netCDF-C
 * follows it on .dds, .das and .dods alike, but asks the alias again for each; it keeps cookies for an open dataset,
 * so the first answer's cookie keeps the rest of that session on the version it began with, however many publishes
 * come between (a version no longer published, or not public demo data, gives way to the newest). The Location is relative, so it holds behind
 * any prefix.
 */
export async function answerDapLatest(ctx: Context, ask: DapAsk): Promise<Answer> {
  const newest = ctx.snapshot.pointer.candidates.find((c) => c.record.dataset_key === ask.name);
  if (!newest) throw dapNotFound(`Dataset ${JSON.stringify(ask.name.slice(0, 140))} (no published version)`);
  // the session's version, while the catalog still publishes it (a newer version shadows it as a candidate at once)
  const pinned = sessionVersion(ctx.request.cookie, ask.name);
  const record = pinned && pinned !== newest.id && VERSION_ID.test(pinned) ? await ctx.snapshot.findRecord(pinned) : null;
  const id = record && isVisible(record) && record.access_level === "demo" && record.dataset_key === ask.name ? record.id : newest.id;
  const headers = {
    Location: `../${encodeURIComponent(id)}.${ask.suffix}${ask.query ? `?${ask.query}` : ""}`,
    "Set-Cookie": `${sessionCookie(ask.name)}=${encodeURIComponent(id)}; Path=/opendap/latest/; Max-Age=${SESSION_SECONDS}; SameSite=Lax`,
    ...DAP_HEADERS,
    "Service-Dataset-Version": id,
  };
  return ctx.answer("", { status: 302, cache: "no-store", etag: false, headers });
}
