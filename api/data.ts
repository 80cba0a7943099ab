// POST validate, resolve and query (docs/contract.md §1.1, §3) and the reserved acquisition route.

import { tileId, windowToTiles } from "../format/grid.js";
import { type Answer, CSV_TYPE, assertResponseSize } from "./answer.js";
import type { Context } from "./context.js";
import { LIMITS } from "./contract.js";
import { HttpError } from "./errors.js";
import { PENDING_SHA256, buildManifest } from "./manifest.js";
import { planRequests } from "./plan.js";
import { type RequestConfig, checkRequest, hashRequest, parseJsonBody } from "./request.js";
import { type Selection, type UnavailableReason, resolveRequest } from "./selection.js";
import { ByteSink, patchAscii, writeCsvRows, writeJsonRows } from "./serialize.js";
import { readSelectedCells } from "./tiers.js";

/** Each request's checked data request, made once (the precheck and the answer share its context). */
const configs = new WeakMap<Context, RequestConfig>();

function readDataRequest(ctx: Context): RequestConfig {
  let config = configs.get(ctx);
  if (!config) configs.set(ctx, (config = checkRequest(parseJsonBody(ctx.request.contentType, ctx.body))));
  return config;
}

/**
 * The contract check of a data request's body (docs/contract.md §3.1, §4.1), run before the request waits for a
 * turn: cheap, and what most bad requests fail; the answer reuses what it checked.
 */
export function precheckDataRequest(ctx: Context): void {
  readDataRequest(ctx);
}

export async function answerValidate(ctx: Context): Promise<Answer> {
  const config = readDataRequest(ctx);
  return ctx.answer(
    JSON.stringify({
      valid: true,
      request: config,
      coverageVerified: false,
      acquisitionEnabled: false,
      message:
        "The request matches the contract. This is not a coverage guarantee, quote or purchase: POST it to /api/v1/data/resolve to check coverage, then to /api/v1/data/query for the data.",
    }),
    { cache: "no-store" },
  );
}

/** The answer body of a selection in the request's format, with its provenance headers. */
async function writeQueryBody(ctx: Context, config: RequestConfig, selection: Selection): Promise<{ body: Uint8Array; headers: Record<string, string> }> {
  const days = await readSelectedCells(selection.view, selection.window, selection.days, selection.source);
  const requestSha256 = await hashRequest(ctx.platform, config);
  const record = selection.view.record;
  let body: Uint8Array;
  if (config.format === "csv") {
    const out = new ByteSink();
    writeCsvRows(out, selection.window, days);
    body = out.finish();
  } else {
    // only the sources of the dates answered, in date order (docs/contract.md §3.5)
    const manifest = buildManifest(record, requestSha256, selection.rowCount, selection.days.flatMap((d) => d.sources));
    // dataSha256 is the last field: its 64 hex digits are patched in once the data bytes exist (one encoding)
    const head = `{"manifest":${JSON.stringify(manifest)}`;
    const out = new ByteSink();
    out.text(head.slice(0, -2 - 64));
    const shaAt = out.offset;
    out.text(`${PENDING_SHA256}"},"data":`);
    const dataAt = out.offset;
    writeJsonRows(out, selection.window, days);
    out.text("}");
    body = out.finish();
    patchAscii(body, shaAt, await ctx.platform.sha256Hex(body.subarray(dataAt, body.length - 1)));
  }
  return {
    body,
    headers: {
      "Service-Dataset-Version": record.id,
      "Service-Request-SHA256": requestSha256,
      Link: `</api/v1/datasets/${record.id}>; rel="describedby"`,
    },
  };
}

function listSelectionTiles(selection: Selection): string[] {
  const ids = new Set<string>();
  for (const d of selection.days) {
    for (const part of windowToTiles(selection.window)) ids.add(tileId(d.date, part.tileRow, part.tileCol));
  }
  return [...ids].sort();
}

export async function answerResolve(ctx: Context): Promise<Answer> {
  const config = readDataRequest(ctx);
  const resolved = await resolveRequest(ctx, config);
  let reason: UnavailableReason | "available" = resolved.available ? "available" : resolved.reason;
  // Resolve and query never disagree (docs/contract.md §3.3): an answer over the byte bound is not available either.
  if (resolved.available && (await writeQueryBody(ctx, config, resolved.selection)).body.byteLength > LIMITS.maxResponseBytes) reason = "request_too_large";
  const body =
    resolved.available && reason === "available"
      ? {
          available: true,
          reason,
          selection: {
            datasetVersion: resolved.selection.view.record.id,
            tileIds: listSelectionTiles(resolved.selection),
            rowCount: resolved.selection.rowCount,
          },
          acquisitionEnabled: false,
        }
      : { available: false, reason, selection: null, acquisitionEnabled: false };
  return ctx.answer(JSON.stringify(body), { cache: "no-store" });
}

export async function answerQuery(ctx: Context): Promise<Answer> {
  const config = readDataRequest(ctx);
  const resolved = await resolveRequest(ctx, config);
  if (!resolved.available) {
    if (resolved.reason === "request_too_large" && resolved.selection) {
      const { summary, members } = planRequests(config, resolved.selection, ctx.planBytes);
      throw new HttpError({ kind: "request_too_large", message: `${resolved.message} ${summary}`, members });
    }
    throw new HttpError({ kind: resolved.reason, message: resolved.message });
  }
  const { body, headers } = await writeQueryBody(ctx, config, resolved.selection);
  const advice =
    config.format === "json"
      ? "narrow the box or shorten the period (a JSON row is about 150 bytes; a CSV row about 95), or follow the plan"
      : "narrow the box or shorten the period, or follow the plan";
  if (body.byteLength > LIMITS.maxResponseBytes) {
    const { summary, members } = planRequests(config, resolved.selection, ctx.planBytes);
    assertResponseSize(body.byteLength, `${advice}. ${summary.replace(/\.$/, "")}`, members);
  }
  return ctx.answer(body, { cache: "no-store", type: config.format === "csv" ? CSV_TYPE : undefined, headers });
}

export async function answerAcquisition(): Promise<Answer> {
  throw new HttpError({ kind: "acquisition_not_ready", message: "Acquisition is not enabled: this route never charges or queues work. POST the same data request to /api/v1/data/query for published demo data." });
}
