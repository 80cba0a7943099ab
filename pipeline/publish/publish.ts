// `make publish`: sources -> day pieces (every core) -> index tree -> record -> catalog tree -> manifest ->
// catalog.json, in that order. Whatever the dist already holds is reused by content hash.

import { mkdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { type Snapshot } from "../../format/snapshot.js";
import { openVersion, type RasterView } from "../../format/versions.js";
import { CATALOG_FILE } from "../../format/objects.js";
import { type Dataset } from "../../format/records.js";
import { addToCatalog, currentCandidates, readPublished, updateCandidates, writeCatalog } from "../store/catalog.js";
import { citeVersion } from "./changes.js";
import { collectDays, type DayInput, type Prefer } from "./day-sources.js";
import type { Variable } from "../../format/variables.js";
import { findSiloFiles, type SiloFile } from "../ingest/discover.js";
import { storeExplorer } from "./explorer.js";
import { PublishError } from "../errors.js";
import type { LockOptions } from "../files/lock-file.js";
import { lockDist } from "../store/lock.js";
import { readUnreachable } from "../store/pending.js";
import { ObjectStore } from "../store/objects.js";
import { JOURNAL_FILE, PublishJournal, isNoSpace, noSpaceError } from "../store/journal.js";
import { publishObservations } from "./observations.js";
import { NOAA_WEATHER } from "../../sources/noaa-weather.js";
import { createProgress, formatEta, type Progress } from "../progress.js";
import { publishThreads } from "../pool.js";
import { labelRaster, type RasterLabels } from "../ingest/provenance.js";
import { type DayPool, inspectAnnualFile, publishRaster, RASTER_TRANSFORM_VERSION, type RasterSummary, startDayPool } from "./raster.js";
import { type NodeDay, nodeFingerprints, SourceCache } from "./source-cache.js";
import type { Coverage } from "../../format/coverage.js";

export interface PublishOptions {
  sources: string; // folder of SILO files of any variables: daily GeoTIFFs, annual NetCDF files
  dist: string;
  observations?: boolean; // also publish the NOAA observation table (default true)
  /** the dataset key of the version (default: the variable's, format/variables.ts); only for a folder of one variable */
  datasetKey?: string;
  accessLevel?: Dataset["access_level"];
  /** add the folder's days to the newest compatible version instead of publishing the folder alone */
  extend?: boolean;
  /** record missing dates as gaps instead of refusing them */
  allowGaps?: boolean;
  /** which form wins a date the folder holds both as a daily GeoTIFF and in an annual file, when their cells differ */
  prefer?: Prefer;
  /** read and hash every source file, trusting no size and times remembered from an earlier publish */
  rehash?: boolean;
  /** publish only these variables' files of the folder (default: every variable it holds); make update's completed ones */
  variables?: Variable[];
  /** threads for decoding and for the series (default: one per core, at most 8; pipeline/pool.ts publishThreads) */
  threads?: number;
  /**
   * the explorer page to store in the dist and name in catalog.json (default: the one `make install` built; false:
   * none, and catalog.json keeps naming the one it named: a golden test pins the data format alone)
   */
  explorer?: string | false;
  /** told when writes of a new stage begin (tests fill a disk up to a stage) */
  onStage?: (stage: string) => void;
  progress?: Progress;
  log?: (line: string) => void; // plain lines instead of a Progress
  publishedAt?: string; // default: SOURCE_DATE_EPOCH if set, else now
  /** how long to wait for another writer of the dist (default: refuse at once) */
  lock?: LockOptions;
}

export interface PublishSummary {
  added: Dataset[]; // versions new to this dist
  unchanged: Dataset[]; // versions it already held
  days: number;
  decoded: number;
  reused: number;
  tiles: number;
  /** source files this publish read (hashed, inspected or decoded); unchanged files are not read */
  filesRead: number;
  observations: number;
  /** objects this publish added (their .br copies not counted) */
  objectsWritten: number;
  /** every byte this publish wrote, .br copies included */
  bytesWritten: number;
  /** bytes of the day pieces among them (the rest is series, index, catalog and manifest) */
  dayBytesWritten: number;
  /** series spans built whole, revised and reused, and the bytes the written ones took (pieces and source lists) */
  series: { built: number; revised: number; reused: number; bytesWritten: number };
  ms: number;
}

/** A record as published: its status, publish time, and the citation that names them (docs/publishing.md "What a publish writes", step 8). */
function stampPublished(record: Dataset, publishedAt: string): Dataset {
  const stamped: Dataset = { ...record, status: "published", published_at: publishedAt };
  return { ...stamped, metadata: { ...stamped.metadata, citation: citeVersion(stamped) } };
}

/** The bundled NOAA table as published, brotli copies included (measured: 3.9 MB), for a full disk's message. */
const OBSERVATION_TABLE_BYTES = 4 << 20;

function choosePublishTime(given?: string): string {
  if (given) return given;
  const epoch = process.env.SOURCE_DATE_EPOCH;
  return (epoch ? new Date(Number(epoch) * 1000) : new Date()).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/**
 * The newest published version these sources can build on: the first query candidate of the same key,
 * transform, access level and kind (generated or real); its days are reused by sha256, or extended.
 */
async function findBase(previous: Snapshot | null, labels: RasterLabels): Promise<RasterView | null> {
  for (const candidate of previous?.pointer.candidates ?? []) {
    const record = await previous!.findRecord(candidate.id);
    if (
      record &&
      record.dataset_key === labels.datasetKey &&
      record.transform_version === RASTER_TRANSFORM_VERSION &&
      record.access_level === labels.accessLevel &&
      (record.metadata.synthetic === true) === (labels.provenance === "generated")
    ) {
      const view = await openVersion(previous!.archive, record);
      if (view.kind === "raster") return view;
    }
  }
  return null;
}

/**
 * What the first step of every publish does, alone: under the publish lock (a killed publisher's lock is taken
 * over), a killed publish's journal is undone or finished. Returns what was done, or null when nothing was left.
 */
export async function recoverDist(dist: string): Promise<string | null> {
  let recovered: string | null = null;
  const unlock = await lockDist(dist, "publish", (line) => (recovered = line));
  await unlock();
  return recovered;
}

export async function publish(options: PublishOptions): Promise<PublishSummary> {
  const started = Date.now();
  await mkdir(options.dist, { recursive: true });
  const progress = options.progress ?? (options.log ? { line: options.log, status: () => {}, done: () => {} } : createProgress());
  options.onStage?.("lock");
  const unlock = await lockDist(options.dist, "publish", (line) => progress.line(line), { log: (line) => progress.line(line), ...options.lock }).catch((err) => {
    progress.done();
    throw err;
  });
  try {
    return await publishLocked(options, progress, started);
  } finally {
    progress.done();
    await unlock();
  }
}

/**
 * Under the lock (what a killed publish left already cleaned up), this publish runs with a journal. On
 * success the journal is closed; on any failure everything it wrote is taken back (catalog.json is swapped
 * last, so nothing refers to it), and the dist is exactly as it was.
 */
async function publishLocked(options: PublishOptions, progress: Progress, started: number): Promise<PublishSummary> {
  const previous = await readPublished(options.dist);
  try {
    const catalogTime = previous ? (await stat(join(options.dist, CATALOG_FILE))).mtimeMs : 0;
    options.onStage?.("journal");
    const journal = await PublishJournal.open(options.dist, previous?.sha256 ?? null).catch(async (err) => {
      if (!isNoSpace(err)) throw err;
      await rm(join(options.dist, JOURNAL_FILE), { force: true });
      throw await noSpaceError(options.dist, join(options.dist, JOURNAL_FILE), "journal", { written: 0, failing: 64, remaining: 0 });
    });
    const store = new ObjectStore(options.dist, catalogTime, await readUnreachable(options.dist), journal);
    store.onStage = options.onStage ?? null;
    try {
      const summary = await publishInto(store, previous, options, progress, started);
      // nothing new: what the run wrote (an index with other provenance for cells already published, say) is
      // reachable from no catalog, so it is taken back and the dist is left exactly as it was
      if (summary.added.length === 0) await journal.rollback();
      else await journal.commit();
      return summary;
    } catch (err) {
      await journal.rollback();
      throw err;
    }
  } finally {
    await previous?.archive.storage.close?.();
  }
}

async function publishInto(store: ObjectStore, previous: Snapshot | null, options: PublishOptions, progress: Progress, started: number): Promise<PublishSummary> {
  const summary: PublishSummary = {
    added: [], unchanged: [], days: 0, decoded: 0, reused: 0, tiles: 0, filesRead: 0, observations: 0, objectsWritten: 0, bytesWritten: 0, dayBytesWritten: 0, ms: 0,
    series: { built: 0, revised: 0, reused: 0, bytesWritten: 0 },
  };
  const fresh: { record: Dataset; coverage: Coverage | null }[] = [];
  const isPublished = async (id: string) => (await previous?.findRecord(id)) ?? null;

  const found = await findSiloFiles(options.sources);
  const byVariable = selectVariables(found, options);
  const all = [...byVariable.values()].flat();
  for (const [variable, files] of byVariable) progress.line(`found ${variable.silo}: ${describeFiles(files)} in ${options.sources}`);
  if (options.datasetKey && byVariable.size > 1) {
    throw new PublishError(options.sources, "discover", `holds ${byVariable.size} variables; a dataset key of one's own (${options.datasetKey}) names one variable's versions`);
  }
  const bases = await findBases(previous, byVariable, options);
  // what a full disk's message counts on: a file a day (an annual file holds up to a year), the observation table
  // when this dist has none yet (it comes after the days)
  store.expect("day pieces", all.reduce((n, f) => n + (f.kind === "annual" ? 366 : 1), 0));
  const tableBytes = options.observations !== false && !(await previous?.listRecords(null, 1, (d) => d.dataset_key === NOAA_WEATHER.datasetKey))?.records.length;
  store.laterBytes = tableBytes ? OBSERVATION_TABLE_BYTES : 0;
  // every file of the folder, asked for or not: what the cache remembers of the others is kept for their next publish
  const cache = await SourceCache.open(options.dist, options.sources, [...found.values()].flat(), options.rehash ?? false);
  const remembers = await publishFolders(byVariable, bases, cache, { options, store, progress }, async (raster) => {
    addRasterSummary(summary, raster);
    const existing = await isPublished(raster.record.id);
    if (existing) summary.unchanged.push(existing);
    else fresh.push({ record: raster.record, coverage: raster.coverage });
  });
  summary.filesRead = cache.read.size;

  if (options.observations !== false) {
    store.stage = "observations";
    const first = async (keep: (record: Dataset) => boolean) => (await previous?.listRecords(null, 1, keep))?.records[0] ?? null;
    const table = await publishObservations(store, { first, find: isPublished });
    if ("written" in table) {
      summary.observations = table.written.observations;
      fresh.push({ record: table.written.record, coverage: null });
    } else summary.unchanged.push(table.published);
  }

  // the publish ends at the catalog swap; then only its memory of the folder is written (from what it kept while
  // writing, never read back; a memory it cannot write costs the next publish a re-read, never this one)
  if (fresh.length > 0) {
    summary.added = await publishRecords(store, previous, fresh, options);
    for (const remember of remembers) remember();
  }
  const note = await cache.save(store);
  if (note) progress.line(note);
  countWritten(summary, store);
  summary.ms = Date.now() - started;
  return summary;
}

/**
 * Each variable's raster version in turn (publishFolder), on one pool of decoding threads for them all; `done` takes
 * each one's summary. What each remembers of its files, to be kept once the catalog swap is done.
 */
async function publishFolders(
  byVariable: Map<Variable, SiloFile[]>,
  bases: Map<Variable, { labels: RasterLabels; base: RasterView | null }>,
  cache: SourceCache,
  run: Omit<PublishRun, "pool">,
  done: (raster: RasterSummary) => Promise<void>,
): Promise<(() => void)[]> {
  const remembers: (() => void)[] = [];
  const pool = startDayPool([...byVariable.values()].flat(), publishThreads(run.options.threads));
  // the whole publish's time left (a backfill is hours): each variable weighed by its days, an annual file's 365
  const daysOf = (files: SiloFile[]) => files.reduce((n, f) => n + (f.kind === "annual" ? 365 : 1), 0);
  const total = [...byVariable.values()].reduce((n, files) => n + daysOf(files), 0);
  const started = Date.now();
  let published = 0;
  try {
    for (const [variable, files] of byVariable) {
      const { labels, base } = bases.get(variable)!;
      if (base) run.progress.line(`${variable.silo}: ${run.options.extend ? "extending" : "reusing days of"} ${base.record.id}`);
      const { raster, remember } = await publishFolder(files, labels, base, cache, { ...run, pool });
      await done(raster);
      remembers.push(remember);
      published += daysOf(files);
      if (byVariable.size > 1 && published < total) run.progress.line(`${remembers.length} of ${byVariable.size} variables published: ${formatEta(published, total, Date.now() - started).replace("/s", " days/s")}`);
    }
  } finally {
    await pool.close();
  }
  return remembers;
}

/** What a publish that added versions wrote, for its summary (one that added none took back what it wrote). */
function countWritten(summary: PublishSummary, store: ObjectStore): void {
  if (summary.added.length === 0) return;
  summary.objectsWritten = store.added.filter((f) => !f.path.endsWith(".br")).length;
  summary.bytesWritten = store.bytesWritten;
  summary.dayBytesWritten = store.added.filter((f) => f.path.endsWith(".day")).reduce((n, f) => n + f.size, 0);
}

/** The folder's files of the variables asked for; a variable asked for that the folder does not hold stops the publish. */
function selectVariables(byVariable: Map<Variable, SiloFile[]>, options: PublishOptions): Map<Variable, SiloFile[]> {
  if (options.variables === undefined) return byVariable;
  const missing = options.variables.filter((v) => !byVariable.has(v));
  if (missing.length > 0) {
    const held = [...byVariable.keys()].map((v) => v.silo).join(", ");
    throw new PublishError(options.sources, "discover", `holds no files of ${missing.map((v) => v.silo).join(", ")} (it holds ${held}); fetch them first, or leave them out of VARIABLES`);
  }
  return new Map([...byVariable].filter(([v]) => options.variables!.includes(v)));
}

/**
 * Each variable's labels and the version it builds on, found before anything is written: extending a variable
 * that has no version to extend stops the publish at once, naming it.
 */
async function findBases(previous: Snapshot | null, byVariable: Map<Variable, SiloFile[]>, options: PublishOptions): Promise<Map<Variable, { labels: RasterLabels; base: RasterView | null }>> {
  const out = new Map<Variable, { labels: RasterLabels; base: RasterView | null }>();
  for (const variable of byVariable.keys()) {
    const labels = await labelRaster(options.sources, variable, options);
    const base = await findBase(previous, labels);
    if (options.extend && !base) {
      throw new PublishError(
        options.sources,
        "extend",
        `no published ${labels.accessLevel} version of ${labels.datasetKey} (${variable.silo}, ${labels.provenance === "generated" ? "generated" : "real SILO"} data) to extend in ${options.dist}; publish a folder of its files first (make publish SOURCES=..)`,
      );
    }
    out.set(variable, { labels, base });
  }
  return out;
}

function addRasterSummary(summary: PublishSummary, raster: RasterSummary): void {
  summary.days += raster.days;
  summary.decoded += raster.decoded;
  summary.reused += raster.reused;
  summary.tiles += raster.tiles;
  summary.series.built += raster.series.built;
  summary.series.revised += raster.series.revised;
  summary.series.reused += raster.series.reused;
  summary.series.bytesWritten += raster.series.bytesWritten;
}

/** The new records stamped; the explorer page, the catalog tree, the manifest and catalog.json, last. */
async function publishRecords(store: ObjectStore, previous: Snapshot | null, fresh: { record: Dataset; coverage: Coverage | null }[], options: PublishOptions): Promise<Dataset[]> {
  const publishedAt = choosePublishTime(options.publishedAt);
  const records = fresh.map(({ record }) => stampPublished(record, publishedAt));
  store.stage = "explorer";
  const explorer = (await storeExplorer(store, options.explorer)) ?? previous?.pointer.explorer ?? null;
  store.stage = "catalog";
  const root = await addToCatalog(store, previous, records);
  const candidates = updateCandidates(
    currentCandidates(previous),
    records.flatMap((record, i) => (fresh[i].coverage ? [{ record, coverage: fresh[i].coverage! }] : [])),
  );
  await writeCatalog(store, options.dist, previous?.pointer.manifest ?? null, { catalog: root, candidates, explorer });
  return records;
}

function describeFiles(files: SiloFile[]): string {
  const daily = files.flatMap((f) => (f.kind === "daily" ? [f.date] : []));
  const annual = files.flatMap((f) => (f.kind === "annual" ? [f.year] : []));
  return [
    daily.length > 0 ? `${daily.length} daily files (${daily[0]} .. ${daily[daily.length - 1]})` : "",
    annual.length > 0 ? `${annual.length} annual files (${annual[0]}${annual.length > 1 ? ` .. ${annual[annual.length - 1]}` : ""})` : "",
  ].filter(Boolean).join(" and ");
}

interface FolderRaster {
  raster: RasterSummary;
  /** after the catalog swap: remembers what this publish learned of the variable's files for the next one */
  remember: () => void;
}

interface PublishRun {
  options: PublishOptions;
  store: ObjectStore;
  progress: Progress;
  /** the publish's decoding threads, shared by its variables */
  pool: DayPool;
}

/**
 * The raster version of one variable's files in the sources folder: its days (with the sha256 and dates
 * remembered from earlier publishes for files whose size and times did not change), then the raster stage,
 * taking whole every year and month of the base whose files did not change.
 */
async function publishFolder(files: SiloFile[], labels: RasterLabels, base: RasterView | null, cache: SourceCache, { options, store, progress, pool }: PublishRun): Promise<FolderRaster> {
  const prefer = options.prefer ?? null;
  const scope = labels.variable.silo;
  const fingerprints = (days: DayInput[]) => nodeFingerprints(days.map((d) => toNodeDay(d, labels)), `${RASTER_TRANSFORM_VERSION} prefer=${prefer ?? "none"}`);
  const days = await collectDays(files, cache, (file) => inspectAnnualFile(pool, file));
  if (days.length === 0) throw new PublishError(options.sources, "discover", `its annual ${scope} files hold no days`);
  const planned = fingerprints(days);
  const raster = await publishRaster(
    {
      days, labels, base, prefer, pool,
      threads: publishThreads(options.threads),
      extend: options.extend ?? false,
      allowGaps: options.allowGaps ?? false,
      isUnchanged: (key, node) => cache.isUnchanged(scope, key, planned.get(key), node),
      onRead: (source, sha256, cells) => {
        source.sha256 = sha256;
        if (source.file.kind === "daily") cache.remember(source.file, { sha256, ...(cells ? { cells } : {}) });
        else cache.read.add(source.file.memberPath);
      },
    },
    store,
    progress,
  );
  const remember = () => {
    // the nodes that held a file not hashed before the publish: their fingerprints, now that every file is hashed
    const unplanned = days.filter((d) => !planned.has(d.date.slice(0, 4)) || !planned.has(d.date.slice(0, 7)));
    const known = new Map([...planned, ...fingerprints(unplanned)]);
    cache.recordNodes(scope, raster.years, known, raster.months);
  };
  return { raster, remember };
}

/** A day's source entries as the publish would record them; null for a file not hashed yet. */
function toNodeDay(day: DayInput, labels: RasterLabels): NodeDay {
  return { date: day.date, entries: day.sources.map((s) => (s.sha256 === null ? null : labels.sourceEntry({ ...s, sha256: s.sha256 }))) };
}

