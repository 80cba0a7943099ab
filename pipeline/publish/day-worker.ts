// Worker thread of the publish (pipeline/pool.ts runs one per core). A day task: one date's sources (a daily
// GeoTIFF, a day of an annual NetCDF file, or both) -> their sha256 and, unless the base version holds those very
// files or those very cells, the decoded, checked and encoded day piece. An inspect task: an annual file's sha256
// and dates.

import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { parentPort } from "node:worker_threads";
import { sha256Hex } from "../../format/hash.js";
import type { Window } from "../../format/grid.js";
import { float32ToJson } from "../../format/number-text.js";
import { type Variable, findVariable } from "../../format/variables.js";
import type { Prefer } from "./day-sources.js";
import { PublishError, describeError } from "../errors.js";
import { decodeSiloTiff } from "../ingest/geotiff.js";
import { type NetcdfYear, openAnnualFile } from "../ingest/netcdf.js";
import { type EncodedDay, cellsSha256, encodeDayBlocks } from "./pieces.js";
import type { SiloDay } from "../ingest/silo-values.js";

export type SourceTask =
  | { kind: "daily"; path: string; memberPath: string }
  | { kind: "annual"; path: string; memberPath: string; index: number; sha256: string };

export interface DayTask {
  kind: "day";
  date: string;
  sources: SourceTask[];
  /** the sha256 of each source the base version published this date from: the same files are not decoded again */
  baseSha256: string[] | null;
  /** the base day's window and cells: the same cells are not encoded again */
  baseCells: { window: Window; cells: string } | null;
  prefer: Prefer | null;
  /** the SILO name of the day's variable (format/variables.ts): its plausible range, its NetCDF variable */
  variable: string;
}

export interface InspectTask {
  kind: "inspect";
  path: string;
  variable: string;
}

/** Closes the annual files this thread holds open: a variable's raster stage is done, and its series reads want the descriptors. */
export interface ReleaseTask {
  kind: "release";
}

type Failure = { ok: false; file: string; stage: string; reason: string };

export type DayResult =
  | {
      ok: true;
      /** the sha256 of each source, in the task's order */
      sha256: string[];
      /** the sources the day records: all, or the winner of two forms that differ */
      kept: number[];
      /** null: the base version's piece holds these cells (same files, or same cells) */
      decoded: EncodedDay | null;
      /** when one form won over the other: what was set aside, for the publish log */
      overruled?: string;
    }
  | Failure;

export type InspectResult = { ok: true; sha256: string; dates: string[] } | Failure;

export type ReleaseResult = { ok: true; closed: number };

/** Annual files open in this thread (each thread opens its own; a day is a few chunks of one). */
const openYears = new Map<string, Promise<NetcdfYear>>();
const OPEN_YEARS = 2;

function openYear(path: string, variable: Variable): Promise<NetcdfYear> {
  let year = openYears.get(path);
  if (!year) {
    year = openAnnualFile(path, variable);
    year.catch(() => openYears.delete(path));
    openYears.set(path, year);
    for (const [old, handle] of openYears) {
      if (openYears.size <= OPEN_YEARS) break;
      openYears.delete(old);
      void handle.then((y) => y.close(), () => undefined);
    }
  }
  return year;
}

async function readBytes(path: string): Promise<Buffer> {
  try {
    return await readFile(path);
  } catch (err) {
    throw new PublishError(path, "read", `cannot read the file (${(err as NodeJS.ErrnoException).code ?? describeError(err)})`);
  }
}

async function decodeSource(source: SourceTask, bytes: Buffer | null, variable: Variable): Promise<SiloDay & { window: Window }> {
  if (source.kind === "daily") return decodeSiloTiff(source.path, bytes!, variable.plausible);
  const year = await openYear(source.path, variable);
  return { ...year.readDay(source.index), window: year.window };
}

/** The variable a task names; a name the thread does not know is a bug of the caller, reported as such. */
function toVariable(silo: string): Variable {
  const variable = findVariable(silo);
  if (!variable) throw new Error(`unknown variable ${silo}`);
  return variable;
}

async function runDay(task: DayTask): Promise<{ result: DayResult; transfer: ArrayBuffer[] }> {
  const bytes = await Promise.all(task.sources.map((s) => (s.kind === "daily" ? readBytes(s.path) : null)));
  const sha256 = task.sources.map((s, i) => (s.kind === "daily" ? sha256Hex(bytes[i]!) : s.sha256));
  const all = task.sources.map((_, i) => i);
  if (task.baseSha256 && isSameSet(sha256, task.baseSha256)) return { result: { ok: true, sha256, kept: all, decoded: null }, transfer: [] };
  const variable = toVariable(task.variable);
  const days = await Promise.all(task.sources.map((s, i) => decodeSource(s, bytes[i], variable)));
  const hashed = days.map((d) => ({ cells: cellsSha256(d.values), missing: d.missing }));
  const { kept, overruled } = settleForms(task, days, hashed.map((h) => h.cells));
  const day = days[kept[0]];
  const { cells, missing } = hashed[kept[0]];
  if (task.baseCells && task.baseCells.cells === cells && task.baseCells.window.join() === day.window.join()) {
    return { result: { ok: true, sha256, kept, decoded: null, overruled }, transfer: [] };
  }
  const decoded = encodeDayBlocks(day.window, day.values, { cells, missing }, day.codes);
  return { result: { ok: true, sha256, kept, decoded, overruled }, transfer: [decoded.data.buffer as ArrayBuffer] };
}

function isSameSet(a: string[], b: string[]): boolean {
  return a.length === b.length && [...a].sort().join() === [...b].sort().join();
}

/**
 * Both forms of one date: the same cells are fine (both recorded); different cells stop the publish naming both
 * files, unless the maintainer said which form wins (docs/contract.md §6.1). Never a silent choice.
 */
function settleForms(task: DayTask, days: (SiloDay & { window: Window })[], cells: string[]): { kept: number[]; overruled?: string } {
  if (days.length === 1 || (cells[0] === cells[1] && days[0].window.join() === days[1].window.join())) return { kept: days.map((_, i) => i) };
  const a = task.sources[0];
  const where = describeDifference(days[0], days[1]);
  if (!task.prefer) {
    const daily = task.sources.find((s) => s.kind === "daily")!;
    throw new PublishError(
      daily.path,
      "sources",
      `${task.date} is also in ${a.memberPath} (time index ${(a as { index: number }).index}) with different cells (${where}); ` +
        "keep one form of this date, or say which form wins with PREFER=daily or PREFER=annual",
    );
  }
  const winner = task.sources.findIndex((s) => s.kind === task.prefer);
  const loser = task.sources[1 - winner];
  return { kept: [winner], overruled: `${task.date}: ${task.sources[winner].memberPath} wins over ${loser.memberPath} (${where}; PREFER=${task.prefer})` };
}

function describeDifference(a: SiloDay & { window: Window }, b: SiloDay & { window: Window }): string {
  if (a.window.join() !== b.window.join()) return `window [${a.window.join(", ")}] against [${b.window.join(", ")}]`;
  let count = 0;
  let first = -1;
  for (let i = 0; i < a.values.length; i++) {
    if (Object.is(a.values[i], b.values[i]) || (a.values[i] !== a.values[i] && b.values[i] !== b.values[i])) continue;
    if (count++ === 0) first = i;
  }
  const [col0, row0, width] = a.window;
  const show = (v: number) => (v === v ? float32ToJson(v) : "missing");
  return `${count} cells differ, first at col ${col0 + (first % width)}, row ${row0 + Math.floor(first / width)}: ${show(a.values[first])} against ${show(b.values[first])}`;
}

async function runInspect(task: InspectTask): Promise<InspectResult> {
  const hash = createHash("sha256");
  try {
    for await (const chunk of createReadStream(task.path)) hash.update(chunk as Buffer);
  } catch (err) {
    throw new PublishError(task.path, "read", `cannot read the file (${(err as NodeJS.ErrnoException).code ?? describeError(err)})`);
  }
  const year = await openAnnualFile(task.path, toVariable(task.variable));
  year.close();
  return { ok: true, sha256: hash.digest("hex"), dates: year.dates };
}

function toFailure(err: unknown, path: string): Failure {
  return err instanceof PublishError
    ? { ok: false, file: err.file, stage: err.stage, reason: err.reason }
    : { ok: false, file: path, stage: "decode", reason: `unexpected failure (${describeError(err)})` };
}

/** Closes every annual file open in this thread; how many. */
async function releaseYears(): Promise<ReleaseResult> {
  const years = [...openYears.values()];
  openYears.clear();
  await Promise.all(years.map((year) => year.then((y) => y.close(), () => undefined)));
  return { ok: true, closed: years.length };
}

parentPort!.on("message", (task: DayTask | InspectTask | ReleaseTask) => {
  if (task.kind === "release") {
    void releaseYears().then((result) => parentPort!.postMessage(result));
    return;
  }
  if (task.kind === "inspect") {
    runInspect(task).then(
      (result) => parentPort!.postMessage(result),
      (err) => parentPort!.postMessage(toFailure(err, task.path)),
    );
    return;
  }
  runDay(task).then(
    ({ result, transfer }) => parentPort!.postMessage(result, transfer),
    (err) => parentPort!.postMessage(toFailure(err, task.sources[0].path)),
  );
});
