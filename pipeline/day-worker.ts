// Worker thread of the publish: one SILO day file -> the sha256 of its bytes and, unless the dist already holds
// that very file, its decoded, checked and encoded day piece. Runs on every core (pipeline/pool.ts).

import { readFile } from "node:fs/promises";
import { parentPort } from "node:worker_threads";
import { sha256Hex } from "../format/hash.js";
import type { Window } from "../format/grid.js";
import type { Ref } from "../format/objects.js";
import { PublishError } from "./errors.js";
import { decodeSiloTiff } from "./geotiff.js";
import { encodeDayPiece } from "./pieces.js";

export interface DayTask {
  path: string;
  /** the sha256 of the source file this date was published from before, if any: equal bytes skip decoding */
  knownSha256: string | null;
  plausible: readonly [number, number];
}

export interface DecodedDay {
  window: Window;
  cells: string;
  missing: number;
  bytes: Uint8Array;
  piece: Ref;
  header: Ref;
}

export type DayResult =
  | { ok: true; sourceSha256: string; decoded: DecodedDay | null }
  | { ok: false; file: string; stage: string; reason: string };

async function runTask(task: DayTask): Promise<{ result: DayResult; transfer: ArrayBuffer[] }> {
  let bytes: Buffer;
  try {
    bytes = await readFile(task.path);
  } catch (err) {
    throw new PublishError(task.path, "read", `cannot read the file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const sourceSha256 = sha256Hex(bytes);
  if (sourceSha256 === task.knownSha256) return { result: { ok: true, sourceSha256, decoded: null }, transfer: [] };
  const grid = await decodeSiloTiff(task.path, bytes, task.plausible);
  const day = encodeDayPiece(grid.window, grid.values);
  const decoded: DecodedDay = { window: grid.window, cells: day.cells, missing: day.missing, bytes: day.bytes, piece: day.piece, header: day.header };
  return { result: { ok: true, sourceSha256, decoded }, transfer: [day.bytes.buffer as ArrayBuffer] };
}

parentPort!.on("message", (task: DayTask) => {
  runTask(task).then(
    ({ result, transfer }) => parentPort!.postMessage(result, transfer),
    (err) => {
      const failure: DayResult =
        err instanceof PublishError
          ? { ok: false, file: err.file, stage: err.stage, reason: err.reason }
          : { ok: false, file: task.path, stage: "decode", reason: `unexpected failure (${(err as Error)?.message ?? String(err)})` };
      parentPort!.postMessage(failure);
    },
  );
});
