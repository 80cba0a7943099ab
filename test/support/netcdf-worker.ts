// Test helper: a worker thread that opens an annual NetCDF file with pipeline/ingest/netcdf.ts and posts back its dates,
// window and the days asked for (h5wasm loads in worker threads only, as in a publish: see pipeline/pool.ts).

import { parentPort } from "node:worker_threads";
import { PublishError } from "../../pipeline/errors.js";
import { openAnnualFile } from "../../pipeline/ingest/netcdf.js";
import { MAX_TEMP } from "../../format/variables.js";

export interface NetcdfRequest {
  path: string;
  days: number[];
}

export type NetcdfReply =
  | { ok: true; dates: string[]; window: [number, number, number, number]; days: { values: Float32Array; missing: number }[] }
  | { ok: false; file: string; stage: string; reason: string };

parentPort!.on("message", async ({ path, days }: NetcdfRequest) => {
  try {
    const file = await openAnnualFile(path, MAX_TEMP);
    try {
      const read = days.map((d) => file.readDay(d));
      parentPort!.postMessage({ ok: true, dates: file.dates, window: file.window, days: read } satisfies NetcdfReply);
    } finally {
      file.close();
    }
  } catch (err) {
    const e = err instanceof PublishError ? err : new PublishError(path, "test", String(err));
    parentPort!.postMessage({ ok: false, file: e.file, stage: e.stage, reason: e.reason } satisfies NetcdfReply);
  }
});
