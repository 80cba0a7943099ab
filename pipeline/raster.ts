// Raster stage: SILO day files -> day pieces (decoded on every core) -> the version's index tree -> its record.
//
// Every day already in the dist is reused by content hash: a file whose sha256 equals the source of the same
// date in the base version is not decoded again, and its piece is not written again. Extending a version
// takes every day of the base and adds or replaces the days of the folder; whole months and years the
// folder does not touch are reused as index nodes, so extending costs the new days, not the archive.

import { availableParallelism } from "node:os";
import { type RasterView } from "../format/versions.js";
import { dateToDayNumber, dayNumberToDate } from "../format/dates.js";
import { GRID, TILE_SIDE, windowBbox } from "../format/grid.js";
import { sha256Hex } from "../format/hash.js";
import { BLOCK_SIDE } from "../format/blocks.js";
import { type Coverage } from "../format/coverage.js";
import { DIST_FORMAT, objectPath } from "../format/objects.js";
import { type Dataset, versionId } from "../format/records.js";
import { type DayEntry, type IndexNode, type MonthPage, type RasterIndex, type YearPage, rasterContentText } from "../format/version-index.js";
import { assertValid } from "../schemas/validate.js";
import { SILO_TMAX } from "../sources/silo.js";
import type { DayResult, DayTask } from "./day-worker.js";
import type { SiloFile } from "./discover.js";
import { PublishError } from "./errors.js";
import type { ObjectStore } from "./files.js";
import { IndexTreeWriter } from "./index-tree.js";
import { formatBytes, formatEta, type Progress } from "./progress.js";
import { type Provenance, type RasterLabels, describeRaster } from "./provenance.js";
import { WorkerPool } from "./pool.js";

export const RASTER_TRANSFORM_VERSION = "silo-cells-v2";
/**
 * Decoding threads: one per core, at most 8. Each thread holds about 20 file descriptors (its module loader),
 * so the cap keeps a publish under an open-file limit of 256 on any machine.
 */
const MAX_WORKERS = 8;
/** More gap ranges than this make a record too long to stay bounded (decisions.md 7); refuse instead. */
const MAX_GAP_RANGES = 500;

export interface RasterInput {
  files: SiloFile[];
  labels: RasterLabels;
  /** the version whose days are reused by sha256 (and, when extending, included) */
  base: RasterView | null;
  extend: boolean;
  allowGaps: boolean;
  workers?: number;
}

export interface RasterSummary {
  record: Dataset;
  coverage: Coverage;
  days: number;
  decoded: number;
  reused: number;
  tiles: number;
}

type Item =
  | { kind: "year" | "month"; node: IndexNode }
  | { kind: "day"; date: string; base: DayEntry | null; file: SiloFile | null; task: Promise<DayResult> | null };

/** Inclusive [first, last] day-number runs of the dates a version would hold. */
type Runs = [number, number][];

function mergeRuns(runs: Runs): Runs {
  const sorted = [...runs].sort((a, b) => a[0] - b[0]);
  const out: Runs = [];
  for (const [s, e] of sorted) {
    const last = out[out.length - 1];
    if (last && s <= last[1] + 1) last[1] = Math.max(last[1], e);
    else out.push([s, e]);
  }
  return out;
}

function coverageRuns(coverage: Coverage): Runs {
  const runs: Runs = [];
  let start = dateToDayNumber(coverage.first);
  for (const [s, e] of coverage.gaps) {
    runs.push([start, dateToDayNumber(s) - 1]);
    start = dateToDayNumber(e) + 1;
  }
  runs.push([start, dateToDayNumber(coverage.last)]);
  return runs;
}

function describeRanges(ranges: [string, string][]): string {
  const shown = ranges.slice(0, 8).map(([s, e]) => (s === e ? s : `${s}..${e}`));
  return shown.join(", ") + (ranges.length > shown.length ? ` and ${ranges.length - shown.length} more ranges` : "");
}

/**
 * Dates between the first and last the new version would hold that it would lack. Gaps the base already
 * recorded (allowed when it was published) stay allowed; any other stops the publish unless gaps are allowed.
 */
function checkGaps(input: RasterInput): void {
  const runs: Runs = input.files.map((f) => [dateToDayNumber(f.date), dateToDayNumber(f.date)]);
  const baseCoverage = input.extend ? input.base?.index.coverage : undefined;
  if (baseCoverage) runs.push(...coverageRuns(baseCoverage));
  const merged = mergeRuns(runs);
  const gaps: [string, string][] = [];
  for (let i = 1; i < merged.length; i++) gaps.push([dayNumberToDate(merged[i - 1][1] + 1), dayNumberToDate(merged[i][0] - 1)]);
  const allowed = (g: [string, string]) => baseCoverage?.gaps.some(([s, e]) => s <= g[0] && e >= g[1]) ?? false;
  const fresh = gaps.filter((g) => !allowed(g));
  if (fresh.length > 0 && !input.allowGaps) {
    const days = fresh.reduce((n, [s, e]) => n + dateToDayNumber(e) - dateToDayNumber(s) + 1, 0);
    throw new PublishError(
      input.files[0] ? input.files[0].path.replace(/[/\\][^/\\]*$/, "") : "sources",
      "gaps",
      `${days} date${days === 1 ? "" : "s"} missing between the first and last day: ${describeRanges(fresh)}; ` +
        "fetch them (make fetch FROM=.. TO=..), or publish with ALLOW_GAPS=1 to record them as gaps",
    );
  }
  if (gaps.length > MAX_GAP_RANGES) {
    throw new PublishError("sources", "gaps", `${gaps.length} separate gaps (at most ${MAX_GAP_RANGES}); publish the runs of consecutive days as separate versions`);
  }
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

const sortedKeys = (...sets: Iterable<string>[]) => [...new Set(sets.flatMap((s) => [...s]))].sort();

export async function publishRaster(input: RasterInput, store: ObjectStore, progress: Progress): Promise<RasterSummary> {
  checkGaps(input);
  const { files, labels, base, extend } = input;
  const archive = base?.archive;
  const pool = files.length > 0 ? new WorkerPool<DayTask, DayResult>(new URL(`./day-worker${import.meta.url.slice(-3)}`, import.meta.url), Math.min(input.workers ?? Math.min(availableParallelism(), MAX_WORKERS), files.length)) : null;
  const tree = new IndexTreeWriter(store);
  const started = Date.now();
  let done = 0;
  let decoded = 0;
  let reused = 0;

  async function* produce(): AsyncGenerator<Item> {
    const filesByYear = groupBy(files, (f) => f.date.slice(0, 4));
    const baseYears = new Map((base?.index.years ?? []).map((y) => [y.key, y]));
    for (const year of sortedKeys(filesByYear.keys(), extend ? baseYears.keys() : [])) {
      const yearFiles = filesByYear.get(year) ?? [];
      const baseYear = baseYears.get(year);
      if (yearFiles.length === 0) {
        yield { kind: "year", node: baseYear! };
        continue;
      }
      const baseMonths = new Map((baseYear ? (await archive!.readJson<YearPage>(baseYear.ref)).months : []).map((m) => [m.key, m]));
      const filesByMonth = groupBy(yearFiles, (f) => f.date.slice(0, 7));
      for (const month of sortedKeys(filesByMonth.keys(), extend ? baseMonths.keys() : [])) {
        const monthFiles = filesByMonth.get(month) ?? [];
        const baseMonth = baseMonths.get(month);
        if (monthFiles.length === 0) {
          yield { kind: "month", node: baseMonth! };
          continue;
        }
        const baseDays = new Map((baseMonth ? (await archive!.readJson<MonthPage>(baseMonth.ref)).days : []).map((d) => [d.date, d]));
        const fileByDate = new Map(monthFiles.map((f) => [f.date, f]));
        for (const date of sortedKeys(fileByDate.keys(), extend ? baseDays.keys() : [])) {
          const file = fileByDate.get(date) ?? null;
          const baseDay = baseDays.get(date) ?? null;
          const known = baseDay?.sources.length === 1 ? baseDay.sources[0].sha256 : null;
          const task = file ? pool!.run({ path: file.path, knownSha256: known, plausible: SILO_TMAX.plausible }) : null;
          yield { kind: "day", date, base: baseDay, file, task };
        }
      }
    }
  }

  async function consume(item: Item): Promise<void> {
    if (item.kind !== "day") return item.kind === "year" ? tree.addYear(item.node) : tree.addMonth(item.node);
    if (!item.task || !item.file) return tree.addDay(item.base!); // an extended version's unchanged day
    const result = await item.task;
    if (!result.ok) throw new PublishError(result.file, result.stage, result.reason);
    const sources = [labels.sourceEntry(item.file, result.sourceSha256)];
    let day: DayEntry;
    if (result.decoded) {
      const { window, cells, missing, bytes, header } = result.decoded;
      day = { date: item.date, window, cells, missing, piece: await store.put(bytes, "day"), header, sources };
      decoded++;
    } else {
      day = { ...item.base!, sources };
      reused++;
    }
    await tree.addDay(day);
    done++;
    const elapsed = Date.now() - started;
    progress.status(
      `raster ${done}/${files.length} days (decoded ${decoded}, reused ${reused})  ${formatBytes(store.bytesWritten)} written  ${formatEta(done, files.length, elapsed)}`,
      done % 500 === 0 || done === files.length ? `raster ${done}/${files.length} days  ${formatEta(done, files.length, elapsed)}` : undefined,
    );
  }

  try {
    // Tasks run ahead of the consumer, a few per worker, so every core stays busy while memory stays bounded.
    const ahead = (pool?.size ?? 1) * 4;
    const queue: Item[] = [];
    let running = 0;
    const next = async () => {
      const item = queue.shift()!;
      if (item.kind === "day" && item.task) running--;
      await consume(item);
    };
    try {
      for await (const item of produce()) {
        queue.push(item);
        if (item.kind === "day" && item.task) {
          item.task.catch(() => undefined); // settled in order by consume; never unhandled meanwhile
          running++;
        }
        while (running >= ahead) await next();
      }
      while (queue.length > 0) await next();
    } catch (err) {
      await Promise.allSettled(queue.map((i) => (i.kind === "day" ? i.task : null)));
      throw err;
    }
  } finally {
    await pool?.close();
  }

  const built = await tree.finish();
  const contentSha256 = sha256Hex(rasterContentText(RASTER_TRANSFORM_VERSION, built.years));
  const index: RasterIndex = {
    format: DIST_FORMAT,
    kind: "raster",
    variable: SILO_TMAX.variable,
    unit: SILO_TMAX.unit,
    crs: GRID.crs,
    tileSide: TILE_SIDE,
    blockSide: BLOCK_SIDE,
    days: built.days,
    tiles: built.tiles,
    coverage: built.coverage,
    years: built.years,
  };
  assertValid("dist-raster-index.schema.json", index, "raster index");
  const indexRef = await store.putJson(index);
  const indexPath = objectPath(indexRef.sha256, "json");

  const baseKinds = extend ? ((base?.record.metadata.provenance as Provenance[] | undefined) ?? []) : [];
  const description = describeRaster([...baseKinds, labels.provenance]);
  const { first, last, gaps } = built.coverage;
  const record: Dataset = {
    id: versionId(labels.datasetKey, first, last, contentSha256),
    dataset_key: labels.datasetKey,
    title: description.title,
    content_sha256: contentSha256,
    source_manifest: [
      {
        sha256: indexRef.sha256,
        member_path: indexPath,
        kind: "source-index",
        description: "This version's index: every date's source files with their sha256, in its year and month pages.",
      },
    ],
    transform_version: RASTER_TRANSFORM_VERSION,
    data_class: SILO_TMAX.dataClass,
    variables: { [SILO_TMAX.variable]: SILO_TMAX.unit },
    temporal_resolution: SILO_TMAX.temporalResolution,
    spatial_support: { ...SILO_TMAX.spatialSupport },
    bbox: windowBbox(built.coverage.windowAny),
    period_start: first,
    period_end: last,
    license: description.license,
    attribution: description.attribution,
    access_level: labels.accessLevel,
    metadata: {
      source: SILO_TMAX.source,
      synthetic: description.synthetic,
      ...description.metadata,
      days: built.days,
      tiles: built.tiles,
      gaps,
      tile_side: TILE_SIDE,
      block_side: BLOCK_SIDE,
      index: { path: indexPath, sha256: indexRef.sha256, size: indexRef.size, kind: "raster" },
    },
  };
  assertValid("dataset.schema.json", record, `record of ${record.id}`);
  return { record, coverage: built.coverage, days: built.days, decoded, reused, tiles: built.tiles };
}
