// `make publish`: sources -> day pieces (every core) -> index tree -> record -> catalog tree -> manifest ->
// catalog.json, in that order. Whatever the dist already holds is reused by content hash.

import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type Snapshot } from "../format/snapshot.js";
import { openVersion, type RasterView } from "../format/versions.js";
import { CATALOG_FILE } from "../format/objects.js";
import { type Dataset } from "../format/records.js";
import { addToCatalog, readPublished, updateCandidates, writeCatalog } from "./catalog.js";
import { findSiloFiles } from "./discover.js";
import { type ExplorerFiles, makeExplorer, writeExplorer } from "./explorer.js";
import { PublishError } from "./errors.js";
import { ObjectStore } from "./files.js";
import { JOURNAL_FILE, PublishJournal, isNoSpace, noSpaceError, recoverJournal } from "./journal.js";
import { publishObservations } from "./observations.js";
import { NOAA_WEATHER } from "../sources/noaa-weather.js";
import { createProgress, type Progress } from "./progress.js";
import { labelRaster, type RasterLabels } from "./provenance.js";
import { publishRaster, RASTER_TRANSFORM_VERSION } from "./raster.js";
import type { Coverage } from "../format/coverage.js";

export interface PublishOptions {
  sources: string; // folder of SILO daily max_temp GeoTIFFs
  dist: string;
  observations?: boolean; // also publish the NOAA observation table (default true)
  datasetKey?: string;
  accessLevel?: Dataset["access_level"];
  /** add the folder's days to the newest compatible version instead of publishing the folder alone */
  extend?: boolean;
  /** record missing dates as gaps instead of refusing them */
  allowGaps?: boolean;
  /** decoding threads (default: one per core) */
  workers?: number;
  /**
   * write the browser explorer into the dist (default true; a golden test pins the data format alone; tests
   * give other files to see an explorer replaced)
   */
  explorer?: boolean | (() => Promise<ExplorerFiles>);
  /** told when writes of a new stage begin (tests fill a disk up to a stage) */
  onStage?: (stage: string) => void;
  progress?: Progress;
  log?: (line: string) => void; // plain lines instead of a Progress
  publishedAt?: string; // default: SOURCE_DATE_EPOCH if set, else now
}

export interface PublishSummary {
  added: Dataset[]; // versions new to this dist
  unchanged: Dataset[]; // versions it already held
  days: number;
  decoded: number;
  reused: number;
  tiles: number;
  observations: number;
  /** objects this publish added (their .br copies not counted) */
  objectsWritten: number;
  /** every byte this publish wrote, .br copies included */
  bytesWritten: number;
  /** bytes of the day pieces among them (the rest is index, catalog and manifest) */
  dayBytesWritten: number;
  ms: number;
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

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** One publish at a time per dist: two would race on the manifest and the catalog swap. */
async function lockDist(dist: string): Promise<() => Promise<void>> {
  const file = join(dist, ".publish.lock");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await writeFile(file, String(process.pid), { flag: "wx" });
      return () => rm(file, { force: true });
    } catch (err) {
      if (isNoSpace(err)) {
        await rm(file, { force: true }); // created, but its pid could not be written
        throw await noSpaceError(dist, file, "lock", { written: 0, failing: 16, remaining: 0 });
      }
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const holder = Number(await readFile(file, "utf8").catch(() => ""));
      if (holder && isRunning(holder)) {
        throw new PublishError(file, "lock", `another publish (pid ${holder}) is writing this dist; wait for it to finish`);
      }
      await rm(file, { force: true }); // left by a publish that was killed
    }
  }
  throw new PublishError(file, "lock", "cannot take the publish lock");
}

/**
 * What the first step of every publish does, alone: under the publish lock (a killed publisher's lock is taken
 * over), a killed publish's journal is undone or finished. Returns what was done, or null when nothing was left.
 */
export async function recoverDist(dist: string): Promise<string | null> {
  const unlock = await lockDist(dist);
  try {
    const previous = await readPublished(dist);
    previous?.archive.storage.close?.();
    return await recoverJournal(dist, previous?.sha256 ?? null);
  } finally {
    await unlock();
  }
}

export async function publish(options: PublishOptions): Promise<PublishSummary> {
  const started = Date.now();
  await mkdir(options.dist, { recursive: true });
  options.onStage?.("lock");
  const unlock = await lockDist(options.dist);
  const progress = options.progress ?? (options.log ? { line: options.log, status: () => {}, done: () => {} } : createProgress());
  try {
    return await publishLocked(options, progress, started);
  } finally {
    progress.done();
    await unlock();
  }
}

/**
 * Under the lock: what a killed publish left is cleaned up first, then this publish runs with a journal. On
 * success the journal is closed; on any failure everything it wrote is taken back (catalog.json is swapped
 * last, so nothing refers to it), and the dist is exactly as it was.
 */
async function publishLocked(options: PublishOptions, progress: Progress, started: number): Promise<PublishSummary> {
  const previous = await readPublished(options.dist);
  try {
    const recovered = await recoverJournal(options.dist, previous?.sha256 ?? null);
    if (recovered) progress.line(recovered);
    const catalogTime = previous ? (await stat(join(options.dist, CATALOG_FILE))).mtimeMs : 0;
    options.onStage?.("journal");
    const journal = await PublishJournal.open(options.dist, previous?.sha256 ?? null).catch(async (err) => {
      if (!isNoSpace(err)) throw err;
      await rm(join(options.dist, JOURNAL_FILE), { force: true });
      throw await noSpaceError(options.dist, join(options.dist, JOURNAL_FILE), "journal", { written: 0, failing: 64, remaining: 0 });
    });
    const store = new ObjectStore(options.dist, catalogTime, journal);
    store.onStage = options.onStage ?? null;
    try {
      const summary = await publishInto(store, previous, options, progress, started);
      await journal.commit();
      return summary;
    } catch (err) {
      await journal.rollback();
      throw err;
    }
  } finally {
    previous?.archive.storage.close?.();
  }
}

async function publishInto(store: ObjectStore, previous: Snapshot | null, options: PublishOptions, progress: Progress, started: number): Promise<PublishSummary> {
  const summary: PublishSummary = {
    added: [], unchanged: [], days: 0, decoded: 0, reused: 0, tiles: 0, observations: 0, objectsWritten: 0, bytesWritten: 0, dayBytesWritten: 0, ms: 0,
  };
  const fresh: { record: Dataset; coverage: Coverage | null }[] = [];
  const isPublished = async (id: string) => (await previous?.findRecord(id)) ?? null;

  const files = await findSiloFiles(options.sources);
  progress.line(`found ${files.length} SILO day files in ${options.sources} (${files[0].date} .. ${files[files.length - 1].date})`);
  const labels = await labelRaster(options.sources, options);
  const base = await findBase(previous, labels);
  if (options.extend && !base) {
    throw new PublishError(
      options.sources,
      "extend",
      `no published ${labels.accessLevel} version of ${labels.datasetKey} (${labels.provenance === "generated" ? "generated" : "real SILO"} data) to extend in ${options.dist}; publish a folder first (make publish SOURCES=..)`,
    );
  }
  if (base) progress.line(`${options.extend ? "extending" : "reusing days of"} ${base.record.id}`);
  store.expect("day pieces", files.length);
  // the observation table, when this dist has none yet, comes after the days (for a full disk's message)
  const tableBytes = options.observations !== false && !(await previous?.listRecords(null, 1, (d) => d.dataset_key === NOAA_WEATHER.datasetKey))?.records.length;
  store.laterBytes = tableBytes ? OBSERVATION_TABLE_BYTES : 0;
  const raster = await publishRaster({ files, labels, base, extend: options.extend ?? false, allowGaps: options.allowGaps ?? false, workers: options.workers }, store, progress);
  Object.assign(summary, { days: raster.days, decoded: raster.decoded, reused: raster.reused, tiles: raster.tiles });
  const existing = await isPublished(raster.record.id);
  if (existing) summary.unchanged.push(existing);
  else fresh.push({ record: raster.record, coverage: raster.coverage });

  if (options.observations !== false) {
    store.stage = "observations";
    let sameTable: Dataset | null = null;
    const table = await publishObservations(store, async (id) => (sameTable = await isPublished(id)) !== null);
    if (table) {
      summary.observations = table.observations;
      fresh.push({ record: table.record, coverage: null });
    } else if (sameTable) summary.unchanged.push(sameTable);
  }

  if (fresh.length > 0) {
    const publishedAt = choosePublishTime(options.publishedAt);
    const records = fresh.map(({ record }): Dataset => ({ ...record, status: "published", published_at: publishedAt }));
    store.stage = "catalog";
    const root = await addToCatalog(store, previous, records);
    const candidates = updateCandidates(
      previous?.pointer.candidates ?? [],
      records.flatMap((record, i) => (fresh[i].coverage ? [{ record, coverage: fresh[i].coverage! }] : [])),
    );
    const explorer = options.explorer === false ? [] : await (options.explorer === true || options.explorer === undefined ? makeExplorer : options.explorer)();
    const explorerFiles = await writeExplorer(store, explorer);
    await writeCatalog(store, options.dist, previous, root, candidates, explorerFiles);
    summary.added = records;
  }
  summary.objectsWritten = store.added.filter((f) => !f.path.endsWith(".br")).length;
  summary.bytesWritten = store.bytesWritten;
  summary.dayBytesWritten = store.added.filter((f) => f.path.endsWith(".day")).reduce((n, f) => n + f.size, 0);
  summary.ms = Date.now() - started;
  return summary;
}
