// Raster stage: SILO days (daily GeoTIFFs, days of annual NetCDF files) -> the days of the new version (planned,
// decoded on every core ahead of use) -> day pieces and the index tree -> the version's index root and record.
//
// Every day already in the dist is reused by content hash: a source whose sha256 equals the source of the same
// date in the base version is not decoded again, and a day whose decoded cells equal the base's is not encoded or
// written again (a re-fetched annual file costs its decoding, not a year of pieces). Extending a version takes
// every day of the base and adds or replaces the days of the folder; whole months and years the folder does not
// touch, or whose files did not change, are reused as index nodes, so a publish costs the new days, not the archive.

import { Archive } from "../../format/archive.js";
import { BLOCK_SIDE } from "../../format/blocks.js";
import type { Coverage } from "../../format/coverage.js";
import { GRID, TILE_SIDE, windowBbox } from "../../format/grid.js";
import { sha256Hex } from "../../format/hash.js";
import { LocalStorage, nodePlatform } from "../../format/local.js";
import { DIST_FORMAT, type Ref, objectPath } from "../../format/objects.js";
import { type Dataset, versionId } from "../../format/records.js";
import type { Variable } from "../../format/variables.js";
import type { SeriesSpan } from "../../format/series.js";
import { type DayEntry, type IndexNode, type RasterIndex, rasterContentText } from "../../format/version-index.js";
import type { RasterView } from "../../format/versions.js";
import { assertValid } from "../../schemas/validate.js";
import { SILO } from "../../sources/silo.js";
import { type DaySource, type DayInput, type Prefer, cellsKey } from "./day-sources.js";
import type { SiloFile, YearFile } from "../ingest/discover.js";
import type { KnownFile } from "./source-cache.js";
import { type VersionNotes, describeChanges } from "./changes.js";
import type { DayResult, DayTask, InspectResult, InspectTask, ReleaseResult, ReleaseTask, SourceTask } from "./day-worker.js";
import { type IsUnchanged, type PlanItem, type PlannedDay, planDays } from "./day-plan.js";
import { PublishError } from "../errors.js";
import type { ObjectStore } from "../store/objects.js";
import { checkGaps } from "./gaps.js";
import { type IndexTree, IndexTreeWriter, type WrittenTree } from "./index-tree.js";
import { NETCDF_LIBRARY } from "../ingest/netcdf.js";
import { WorkerPool } from "../pool.js";
import { type Progress, formatBytes, formatEta } from "../progress.js";
import { type Provenance, type RasterLabels, describeRaster } from "../ingest/provenance.js";
import { type SeriesSummary, buildSeries } from "./series.js";
import { assembleDay } from "./pieces.js";

export const RASTER_TRANSFORM_VERSION = "silo-cells-v2";
/** Decoding tasks started ahead of the writer, per thread: every core stays busy, memory stays bounded. */
const TASKS_AHEAD_PER_WORKER = 4;

export interface RasterInput {
  days: DayInput[];
  labels: RasterLabels;
  /** the version whose days are reused by sha256 (and, when extending, included) */
  base: RasterView | null;
  extend: boolean;
  allowGaps: boolean;
  /** which form wins a date held in both forms with different cells; null: such a date stops the publish */
  prefer: Prefer | null;
  /** the base's years and months whose files did not change since they were published: taken whole */
  isUnchanged?: IsUnchanged;
  /** told each source's sha256 when a decoding thread has read it, and a daily file's cells (cellsKey) */
  onRead?: (source: DaySource, sha256: string, cells?: string) => void;
  /** the decoding threads (startDayPool), closed once the days are written (the caller closes them on a failure) */
  pool: DayPool;
  /** the series encoders' threads (pipeline/pool.ts publishThreads) */
  threads: number;
}

export interface RasterSummary {
  record: Dataset;
  coverage: Coverage;
  /** the index root's years and the months of the year pages written, as written (the source memory takes them) */
  years: IndexNode[];
  months: Map<string, IndexNode[]>;
  days: number;
  decoded: number;
  reused: number;
  tiles: number;
  series: SeriesSummary;
}

/** A planned item with the decoding of its file, when it has one, already under way. */
interface DecodingItem {
  item: PlanItem;
  task: Promise<DayResult> | null;
}

export async function publishRaster(input: RasterInput, store: ObjectStore, progress: Progress): Promise<RasterSummary> {
  const { days, base, extend } = input;
  const folder = days[0] ? days[0].sources[0].file.path.replace(/[/\\][^/\\]*$/, "") : "sources";
  checkGaps(days.map((d) => d.date), folder, extend ? base?.index.coverage : undefined, input.allowGaps);
  const { pool } = input;
  const plan = planDays(days, base, extend, input.isUnchanged);
  const items = decodeAhead(plan, (item) => startDecoding(item, pool, input, progress), pool.size * TASKS_AHEAD_PER_WORKER);
  const written = await writeDays(items, store, input.labels, base?.archive ?? null, new DayProgress(progress, days.length, store));
  await releaseDayPool(pool); // before the series: its reads want the descriptors the threads hold
  const { tree } = written;
  // few descriptors: a publish may run under an open-file limit of 256, its decoding threads holding some
  const archive = new Archive(new LocalStorage(store.root, { maxOpenFiles: 32, reads: "threadpool" }), nodePlatform, { cacheBytes: 64 << 20 });
  let series: SeriesSummary;
  let notes: VersionNotes;
  try {
    series = await buildSeries(tree, base, archive, store, input.threads, (text) => progress.status(text));
    notes = await describeChanges(base, archive, tree);
  } finally {
    // at once, failure or not: a descriptor kept open would hold the space of a file a rollback deletes
    await archive.storage.close?.();
  }
  const indexRef = await writeIndex(store, input.labels, tree, series.spans);
  const record = describeVersion(input, tree, indexRef, notes);
  // reused: the folder's days that needed no new piece (same files, same cells, or a whole unchanged month or year)
  return { record, coverage: tree.coverage, years: tree.years, months: tree.months, days: tree.days, decoded: written.decoded, reused: days.length - written.decoded, tiles: tree.tiles, series };
}

export type DayPool = WorkerPool<DayTask | InspectTask | ReleaseTask, DayResult | InspectResult | ReleaseResult>;

/**
 * Decoding threads (started as tasks arrive), with the NetCDF library loaded first when there are annual files: one
 * pool for a publish's files of every variable. A pool per variable started two threads for each of SILO's 18, each
 * spending about half a second of CPU starting (its modules and the NetCDF library) for a few days' work.
 */
export function startDayPool(files: SiloFile[], threads: number): DayPool {
  const annual = files.filter((f) => f.kind === "annual").length;
  // an annual file is hundreds of days: count it as a year's worth of work for the number of threads
  const size = Math.min(threads, Math.max(1, files.length + 365 * annual));
  return new WorkerPool(new URL(`./day-worker${import.meta.url.slice(-3)}`, import.meta.url), size, annual > 0 ? [NETCDF_LIBRARY] : []);
}

/** Every decoding thread closes the annual files it holds open (a thread keeps two, for the days that follow). */
async function releaseDayPool(pool: DayPool): Promise<void> {
  await pool.each({ kind: "release" });
}

/** An annual file's sha256 and dates, read and checked on a decoding thread. */
export async function inspectAnnualFile(pool: DayPool, file: YearFile): Promise<KnownFile> {
  const result = (await pool.run({ kind: "inspect", path: file.path, variable: file.variable.silo })) as InspectResult;
  if (!result.ok) throw new PublishError(result.file, result.stage, result.reason, file.variable);
  return { sha256: result.sha256, dates: result.dates };
}

/** Starts decoding each planned day, at most `ahead` tasks before the consumer, and yields items in order. */
async function* decodeAhead(items: AsyncIterable<PlanItem>, start: (item: PlanItem) => Promise<DayResult> | null, ahead: number): AsyncGenerator<DecodingItem> {
  const queue: DecodingItem[] = [];
  let running = 0;
  try {
    for await (const item of items) {
      const task = start(item);
      task?.catch(() => undefined); // settled in order by the consumer; never unhandled meanwhile
      queue.push({ item, task });
      if (task) running++;
      while (running >= ahead) {
        const next = queue.shift()!;
        if (next.task) running--;
        yield next;
      }
    }
    while (queue.length > 0) yield queue.shift()!;
  } finally {
    // the consumer stopped early (a failure): let the tasks started settle before the pool closes
    await Promise.allSettled(queue.map((q) => q.task));
  }
}

/**
 * The decoding of a planned day with sources: none needed when the base published this date from files with the
 * very sha256 the folder's files are known to have; else a task on a decoding thread.
 */
function startDecoding(item: PlanItem, pool: DayPool, input: RasterInput, progress: Progress): Promise<DayResult> | null {
  if (item.kind !== "day" || !item.input) return null;
  const sources = item.input.sources;
  const known = sources.map((s) => s.sha256);
  const unchanged = { ok: true as const, sha256: known as string[], kept: sources.map((_, i) => i), decoded: null };
  if (item.base && !known.includes(null) && isSameSet(known as string[], item.base.sources.map((s) => s.sha256))) return Promise.resolve(unchanged);
  // files a publish decoded before to the base's very cells (SILO rewrote them with the same cells): not again
  const baseCells = item.base ? cellsKey(item.base) : null;
  if (baseCells && !known.includes(null) && sources.every((s) => s.cells === baseCells)) return Promise.resolve(unchanged);
  return (pool.run(toTask(item, input.prefer)) as Promise<DayResult>).then((result) => {
    if (result.ok) {
      const cells = result.decoded ? cellsKey(result.decoded) : (baseCells ?? undefined);
      sources.forEach((s, i) => input.onRead?.(s, result.sha256[i], s.file.kind === "daily" && result.kept.includes(i) ? cells : undefined));
      if (result.overruled) progress.line(result.overruled);
    }
    return result;
  });
}

function isSameSet(a: string[], b: string[]): boolean {
  return a.length === b.length && [...a].sort().join() === [...b].sort().join();
}

function toSourceTask({ file, index, sha256 }: DaySource): SourceTask {
  if (file.kind === "daily") return { kind: "daily", path: file.path, memberPath: file.memberPath };
  return { kind: "annual", path: file.path, memberPath: file.memberPath, index: index!, sha256: sha256! };
}

function toTask(day: PlannedDay, prefer: Prefer | null): DayTask {
  const base = day.base;
  return {
    kind: "day",
    date: day.date,
    sources: day.input!.sources.map(toSourceTask),
    // the files this date was published from before: equal bytes are not decoded again, equal cells not encoded
    baseSha256: base ? base.sources.map((s) => s.sha256) : null,
    baseCells: base ? { window: base.window, cells: base.cells } : null,
    prefer,
    variable: day.input!.sources[0].file.variable.silo,
  };
}

interface WrittenDays {
  tree: WrittenTree;
  decoded: number;
  reused: number;
}

/**
 * Writes each new day's piece and the index tree's month and year pages as the days arrive, in date order; a revised
 * day's piece shares its unchanged blocks with the base's (read through `baseArchive`).
 */
async function writeDays(items: AsyncIterable<DecodingItem>, store: ObjectStore, labels: RasterLabels, baseArchive: Archive | null, progress: DayProgress): Promise<WrittenDays> {
  const tree = new IndexTreeWriter(store);
  let decoded = 0;
  let reused = 0;
  for await (const { item, task } of items) {
    if (item.kind !== "day") await (item.kind === "year" ? tree.addYear(item.node) : tree.addMonth(item.node));
    else if (!task) await tree.addDay(item.base!); // an extended version's unchanged day
    else {
      const result = await task;
      // a decoding thread's refusal, named with the variable whose file it was (make update publishes the others)
      if (!result.ok) throw new PublishError(result.file, result.stage, result.reason, labels.variable);
      const day = await toDayEntry(item, result, store, labels, baseArchive);
      if (result.decoded) decoded++;
      else reused++;
      await tree.addDay(day);
      progress.add(decoded, reused);
    }
  }
  return { tree: await tree.finish(), decoded, reused };
}

/** The day entry of a decoded (or recognised) day: its piece written, its sources recorded. */
async function toDayEntry(day: PlannedDay, result: Extract<DayResult, { ok: true }>, store: ObjectStore, labels: RasterLabels, baseArchive: Archive | null): Promise<DayEntry> {
  const sources = result.kept.map((i) => labels.sourceEntry({ ...day.input!.sources[i], sha256: result.sha256[i] }));
  if (!result.decoded) return { ...day.base!, sources };
  const { window, cells, missing } = result.decoded;
  const base = day.base && baseArchive ? { entry: day.base, header: await baseArchive.readHeader(day.base) } : null;
  const { bytes, header, packs } = assembleDay(result.decoded, base);
  const entry: DayEntry = { date: day.date, window, cells, missing, piece: await store.put(bytes, "day"), header: { sha256: sha256Hex(header), size: header.byteLength }, sources };
  return packs.length > 0 ? { ...entry, packs } : entry;
}

/** Progress of the days of a publish: counts, bytes written, rate and time left. */
class DayProgress {
  private readonly started = Date.now();
  private done = 0;

  constructor(
    private readonly progress: Progress,
    private readonly total: number,
    private readonly store: ObjectStore,
  ) {}

  add(decoded: number, reused: number): void {
    this.done++;
    const eta = formatEta(this.done, this.total, Date.now() - this.started);
    this.progress.status(
      `raster ${this.done}/${this.total} days (decoded ${decoded}, reused ${reused})  ${formatBytes(this.store.bytesWritten)} written  ${eta}`,
      this.done % 500 === 0 || this.done === this.total ? `raster ${this.done}/${this.total} days  ${eta}` : undefined,
    );
  }
}

/** The version's index root, checked against its schema and written. */
async function writeIndex(store: ObjectStore, labels: RasterLabels, tree: IndexTree, series: SeriesSpan[]): Promise<Ref> {
  const index: RasterIndex = {
    format: DIST_FORMAT,
    kind: "raster",
    variable: labels.variable.name,
    unit: labels.variable.unit,
    crs: GRID.crs,
    tileSide: TILE_SIDE,
    blockSide: BLOCK_SIDE,
    days: tree.days,
    tiles: tree.tiles,
    coverage: tree.coverage,
    years: tree.years,
    series,
  };
  assertValid("dist-raster-index.schema.json", index, "raster index");
  return store.putJson(index);
}

/**
 * The version's catalog record: its id and content hash from the cells, its labels from where the days came from,
 * what it changed relative to its base (the notes enter neither the hash nor the id).
 */
function describeVersion(input: RasterInput, tree: IndexTree, indexRef: Ref, notes: VersionNotes): Dataset {
  const { labels, base, extend } = input;
  const contentSha256 = sha256Hex(rasterContentText(RASTER_TRANSFORM_VERSION, tree.years));
  const indexPath = objectPath(indexRef.sha256, "json");
  const baseKinds = extend ? ((base?.record.metadata.provenance as Provenance[] | undefined) ?? []) : [];
  const { variable } = labels;
  const description = describeRaster([...baseKinds, labels.provenance], variable);
  const { first, last, gaps } = tree.coverage;
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
    data_class: SILO.dataClass,
    variables: { [variable.name]: variable.unit },
    temporal_resolution: SILO.temporalResolution,
    spatial_support: { ...SILO.spatialSupport },
    bbox: windowBbox(tree.coverage.windowAny),
    period_start: first,
    period_end: last,
    license: description.license,
    attribution: description.attribution,
    access_level: labels.accessLevel,
    metadata: {
      source: SILO.source,
      variable: describeVariable(variable),
      synthetic: description.synthetic,
      ...description.metadata,
      days: tree.days,
      tiles: tree.tiles,
      gaps,
      built_from: notes.built_from,
      changes: notes.changes,
      tile_side: TILE_SIDE,
      block_side: BLOCK_SIDE,
      index: { path: indexPath, sha256: indexRef.sha256, size: indexRef.size, kind: "raster" },
    },
  };
  assertValid("dataset.schema.json", record, `record of ${record.id}`);
  return record;
}

/**
 * What a record says of its variable (inspect and the catalog show it): its names, unit, plausible range, CF attributes,
 * observation time and SILO's first date of it (nothing before it exists).
 */
function describeVariable(v: Variable): Record<string, unknown> {
  return {
    name: v.name,
    silo_name: v.silo,
    unit: v.unit,
    plausible_range: [...v.plausible],
    standard_name: v.standardName,
    cell_methods: v.cellMethods,
    observed: v.observed,
    first_date: v.firstDate,
  };
}
