// POST validate, resolve and query (docs/contract.md §1.1, §3) and the reserved acquisition route.

import { tileId, windowToTiles } from "../../format/grid.js";
import { type Answer, CSV_TYPE, assertResponseSize } from "../answer.js";
import { ByteSink, writeHashedData } from "../bytes.js";
import type { Context } from "../context.js";
import { LIMITS } from "../contract.js";
import { HttpError } from "../errors.js";
import { manifestJson } from "./manifest.js";
import { planRequests } from "./plan.js";
import { type RequestConfig, type SeriesCallHint, checkRequest, hashRequest, parseJsonBody } from "./request.js";
import { type Selection, type UnavailableReason, resolveRequest } from "./selection.js";
import { writeCsvRows, writeJsonRows } from "./serialize.js";
import { readSelectedCells } from "./selected-days.js";

/**
 * The contract check of a data request's body (docs/contract.md §3.1, §4.1), run before the request waits for a
 * turn: cheap, and what most bad requests fail. Its 422s point to the series call that answers the request.
 */
export function checkDataRequest(seriesCall: SeriesCallHint): (ctx: Context) => RequestConfig {
  return (ctx) => checkRequest(parseJsonBody(ctx.request.contentType, ctx.body), seriesCall);
}

export async function answerValidate(ctx: Context, config: RequestConfig): Promise<Answer> {
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
    const manifest = manifestJson(record, requestSha256, selection.rowCount, selection.days.flatMap((d) => d.sources));
    body = await writeHashedData(manifest, (out) => writeJsonRows(out, selection.window, days), (bytes) => ctx.platform.sha256Hex(bytes));
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

export async function answerResolve(ctx: Context, config: RequestConfig): Promise<Answer> {
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

export async function answerQuery(ctx: Context, config: RequestConfig): Promise<Answer> {
  const resolved = await resolveRequest(ctx, config);
  if (!resolved.available) {
    if (resolved.reason === "request_too_large" && resolved.selection) {
      const { summary, members } = planRequests(config, resolved.selection, ctx.bound("planBytes"));
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
    const { summary, members } = planRequests(config, resolved.selection, ctx.bound("planBytes"));
    assertResponseSize(body.byteLength, `${advice}. ${summary.replace(/\.$/, "")}`, members);
  }
  return ctx.answer(body, { cache: "no-store", type: config.format === "csv" ? CSV_TYPE : undefined, headers });
}

export async function answerAcquisition(): Promise<Answer> {
  throw new HttpError({ kind: "acquisition_not_ready", message: "Acquisition is not enabled: this route never charges or queues work. POST the same data request to /api/v1/data/query for published demo data." });
}
