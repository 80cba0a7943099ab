// The reading side of one version: its index, its days and cells, its observation chunks. Every read below a
// version that fails verification (or cannot be read) is reported as that version's failure, so a caller can
// answer 503 for that version alone (docs/contract.md §4.6).

import { formatPath, toIssues, validatorFor } from "../schemas/validate.js";
import { LruCache } from "./cache.js";
import type { Archive, BlockReuse, CellTarget } from "./archive.js";
import { type Window, countTiles } from "./grid.js";
import type { Dataset, SourceEntry } from "./records.js";
import type { SeriesSpan } from "./series.js";
import { IntegrityError, StorageError } from "./storage.js";
import { type DayEntry, type MonthPage, type ObservationIndex, type RasterIndex, type VersionIndex, type YearPage, indexRefOf } from "./version-index.js";

/** Bytes of a version failed their check or could not be read: the version is unavailable, not the dist. */
export class VersionReadError extends Error {
  constructor(
    readonly versionId: string,
    override readonly cause: IntegrityError | StorageError,
  ) {
    super(`dataset ${versionId}: ${cause.message}`);
    this.name = "VersionReadError";
  }
}

/** Runs a read of version `id`, reporting a failure of its bytes as that version's. */
async function readOf<T>(id: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof IntegrityError || err instanceof StorageError) throw new VersionReadError(id, err);
    throw err;
  }
}

export type VersionView = RasterView | ObservationView;

/**
 * An index root this reader does not know the shape of (written by a newer pipeline, say) makes its version
 * unavailable (503), never a failure halfway through an answer: readers are upgraded before the pipeline.
 */
function checkIndexShape(index: VersionIndex, where: string): void {
  const check = validatorFor(index.kind === "raster" ? "dist-raster-index.schema.json" : "dist-observation-index.schema.json");
  if (check(index)) return;
  const issues = toIssues(check.errors, index).slice(0, 3).map((i) => `${formatPath(i.path)} ${i.message}`);
  throw new IntegrityError(where, `is not an index of the format this reader knows (${issues.join("; ")}); a newer publish needs a newer server or client`);
}

const views = new WeakMap<Archive, LruCache<Promise<VersionView>>>();

/** The reading side of a catalog record, its index verified; one view per version and archive, kept while used. */
export function openVersion(archive: Archive, record: Dataset): Promise<VersionView> {
  let known = views.get(archive);
  if (!known) views.set(archive, (known = new LruCache(256)));
  const ref = indexRefOf(record);
  return known.getOrLoad(`${record.id}/${ref.sha256}`, 1, () =>
    readOf(record.id, async () => {
      const index = await archive.readJson<VersionIndex>(ref);
      if (index.kind !== ref.kind) throw new IntegrityError(archive.storage.describe(ref.path), `is a ${index.kind} index, the record says ${ref.kind}`);
      checkIndexShape(index, archive.storage.describe(ref.path));
      return index.kind === "raster" ? new RasterView(archive, record, index) : new ObservationView(archive, record, index);
    }),
  );
}

export class RasterView {
  readonly kind = "raster";
  /** day lookups of this version, bounded (a month page read once serves every later request) */
  private readonly days = new LruCache<Promise<DayEntry | null>>(8192);

  constructor(
    readonly archive: Archive,
    readonly record: Dataset,
    readonly index: RasterIndex,
  ) {}

  /** The day entry of `date`, or null when this version does not hold it. */
  findDay(date: string): Promise<DayEntry | null> {
    return this.days.getOrLoad(date, 1, () => readOf(this.record.id, () => this.lookUpDay(date)));
  }

  private async lookUpDay(date: string): Promise<DayEntry | null> {
    const year = this.index.years.find((y) => y.key === date.slice(0, 4));
    if (!year) return null;
    const page = await this.archive.readJson<YearPage>(year.ref);
    const month = page.months.find((m) => m.key === date.slice(0, 7));
    if (!month) return null;
    const days = await this.archive.readJson<MonthPage>(month.ref);
    return days.days.find((d) => d.date === date) ?? null;
  }

  /** Cells of `area` on one day of this version (inside the day's window), row-major, NaN for missing; into `target` when given. */
  readCells(day: DayEntry, area: Window, target?: CellTarget, reuse?: BlockReuse): Promise<Float32Array> {
    return readOf(this.record.id, () => this.archive.readCells(day, area, target, reuse));
  }

  /** The cells of `area` on one day as tenths codes, or as float32 when a block holds values tenths cannot. */
  readCodesOrCells(day: DayEntry, area: Window, reuse?: BlockReuse): Promise<Int16Array | Float32Array> {
    return readOf(this.record.id, () => this.archive.readCodesOrCells(day, area, reuse));
  }

  /** The source lists of a series span's dates, in date order. */
  readSpanSources(span: SeriesSpan): Promise<SourceEntry[][]> {
    const { sources } = span;
    if (Array.isArray(sources)) return Promise.resolve(sources);
    return readOf(this.record.id, () => this.archive.readJson<SourceEntry[][]>(sources));
  }

  /** One cell's values on the days [from, to) of one of this version's series spans, into `out` from `at`. */
  readSeriesPoint(span: SeriesSpan, col: number, row: number, from: number, to: number, out: Float32Array, at: number): Promise<void> {
    return readOf(this.record.id, () => this.archive.readSeriesPoint(span, col, row, from, to, out, at));
  }

  /** Cells of `area` on the days [from, to) of one of this version's series spans, one array per day (views of `into` when given). */
  readSeries(span: SeriesSpan, area: Window, from: number, to: number, into?: Float32Array): Promise<Float32Array[]> {
    return readOf(this.record.id, () => this.archive.readSeries(span, area, from, to, into));
  }

  /**
   * Days in date order starting with the one that holds layer item `offset` (tiles are listed date by date,
   * lattice order within a date), each with how many of its tiles come before `offset`.
   */
  async *daysFromTile(offset: number): AsyncGenerator<{ day: DayEntry; skip: number }> {
    let before = 0;
    for (const year of this.index.years) {
      if (before + year.tiles <= offset) {
        before += year.tiles;
        continue;
      }
      for (const month of (await this.readJson<YearPage>(year.ref)).months) {
        if (before + month.tiles <= offset) {
          before += month.tiles;
          continue;
        }
        for (const day of (await this.readJson<MonthPage>(month.ref)).days) {
          const tiles = countTiles(day.window);
          if (before + tiles > offset) yield { day, skip: Math.max(0, offset - before) };
          before += tiles;
        }
      }
    }
  }

  /** An index page of this version, verified. */
  readJson<T>(ref: RasterIndex["years"][number]["ref"]): Promise<T> {
    return readOf(this.record.id, () => this.archive.readJson<T>(ref));
  }
}

export class ObservationView {
  readonly kind = "observation";
  constructor(
    readonly archive: Archive,
    readonly record: Dataset,
    readonly index: ObservationIndex,
  ) {}

  /** JSON array text of chunk `i` (items i*PAGE_SIZE onwards). */
  chunkText(i: number): Promise<string> {
    return readOf(this.record.id, () => this.archive.readText(this.index.chunks[i]));
  }
}
