// `make publish`: sources -> decoded grids -> tiles -> hashed files -> indexes -> catalog, in that order.

import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Dataset } from "../schemas/dist.js";
import { readPublished, writeCatalog } from "./catalog.js";
import { findSiloFiles } from "./discover.js";
import { DistWriter, hashFile } from "./files.js";
import { OBSERVATION_TRANSFORM_VERSION, publishObservations } from "./observations.js";
import { createProgress, type Progress } from "./progress.js";
import { labelRaster } from "./provenance.js";
import { publishRaster, RASTER_TRANSFORM_VERSION } from "./raster.js";
import { NOAA_WEATHER } from "../sources/noaa-weather.js";
import { PublishError } from "./errors.js";

export interface PublishOptions {
  sources: string; // folder of SILO daily max_temp GeoTIFFs
  dist: string;
  observations?: boolean; // also publish the NOAA observation table (default true)
  datasetKey?: string;
  accessLevel?: Dataset["access_level"];
  progress?: Progress;
  log?: (line: string) => void; // plain lines instead of a Progress
  publishedAt?: string; // default: SOURCE_DATE_EPOCH if set, else now
}

export interface PublishSummary {
  added: Dataset[]; // versions new to this dist
  unchanged: Dataset[]; // versions it already held
  days: number;
  tiles: number;
  cells: number;
  missingCells: number;
  observations: number;
  filesWritten: number;
  bytesWritten: number;
  ms: number;
}

function choosePublishTime(given?: string): string {
  if (given) return given;
  const epoch = process.env.SOURCE_DATE_EPOCH;
  return (epoch ? new Date(Number(epoch) * 1000) : new Date()).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** A version already published from the very same source bytes by the same transform: nothing to redo. */
function findSamePublished(datasets: Dataset[], key: string, transform: string, access: string, shas: string[]): Dataset | undefined {
  return datasets.find(
    (d) =>
      d.dataset_key === key &&
      d.transform_version === transform &&
      d.access_level === access &&
      d.source_manifest.length === shas.length &&
      d.source_manifest.every((s, i) => s.sha256 === shas[i]),
  );
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

export async function publish(options: PublishOptions): Promise<PublishSummary> {
  const started = Date.now();
  await mkdir(options.dist, { recursive: true });
  const unlock = await lockDist(options.dist);
  try {
    return await publishLocked(options, started);
  } finally {
    await unlock();
  }
}

async function publishLocked(options: PublishOptions, started: number): Promise<PublishSummary> {
  const progress =
    options.progress ?? (options.log ? { line: options.log, status: () => {}, done: () => {} } : createProgress());
  const previous = await readPublished(options.dist);
  const published = previous?.catalog.datasets ?? [];
  const writer = new DistWriter(options.dist);
  const summary: PublishSummary = {
    added: [], unchanged: [], days: 0, tiles: 0, cells: 0, missingCells: 0, observations: 0, filesWritten: 0, bytesWritten: 0, ms: 0,
  };
  const fresh: Dataset[] = [];
  const keep = (d: Dataset) => (published.some((p) => p.id === d.id) ? summary.unchanged : summary.added).push(d);

  try {
    const files = await findSiloFiles(options.sources);
    progress.line(`found ${files.length} SILO day files in ${options.sources} (${files[0].date} .. ${files[files.length - 1].date})`);
    const labels = await labelRaster(options.sources, options);
    const sourceShas = await Promise.all(files.map((f) => hashFile(f.path)));
    const same = findSamePublished(published, labels.datasetKey, RASTER_TRANSFORM_VERSION, labels.accessLevel, sourceShas);
    if (same) keep(same);
    else {
      const raster = await publishRaster(files, labels, writer, progress);
      Object.assign(summary, { days: raster.days, tiles: raster.tiles, cells: raster.cells, missingCells: raster.missingCells });
      fresh.push(raster.dataset);
      keep(raster.dataset);
    }

    if (options.observations !== false) {
      const csvSha = await hashFile(NOAA_WEATHER.csvPath);
      const sameTable = findSamePublished(published, NOAA_WEATHER.datasetKey, OBSERVATION_TRANSFORM_VERSION, "demo", [csvSha]);
      if (sameTable) keep(sameTable);
      else {
        const table = await publishObservations(writer);
        summary.observations = table.observations;
        fresh.push(table.dataset);
        keep(table.dataset);
      }
    }

    if (summary.added.length > 0) {
      await writeCatalog(writer, previous, fresh, choosePublishTime(options.publishedAt));
    }
  } finally {
    progress.done();
    await rm(join(options.dist, ".staging"), { recursive: true, force: true });
  }
  summary.filesWritten = writer.written;
  summary.bytesWritten = writer.bytes;
  summary.ms = Date.now() - started;
  return summary;
}
