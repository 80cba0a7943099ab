// `make upgrade`: a climate-dist-2 dist rewritten as climate-dist-3 in place, every version kept with its id, content
// hash, provenance and publish time. The one place that still reads climate-dist-2: its day and series piece headers.
//
// Every day piece and series piece is copied into the new layout (block and chunk bytes as stored, new directories),
// every index page, record and the catalog tree written anew, and a new manifest chain started listing every file
// the versions reach; catalog.json is replaced last, so readers see the old dist or the new one. The old objects are
// then unreachable: prune's collect step lists them at once and a later `make prune` deletes them after its grace
// period (a reader holding the old catalog keeps working until then).

import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { Archive } from "../../format/archive.js";
import type { BlockCodec } from "../../format/cells.js";
import type { CatalogLeaf, CatalogRoot } from "../../format/catalog.js";
import type { Coverage } from "../../format/coverage.js";
import { assembleDayPiece } from "../../format/day-piece.js";
import { ENTRY_BYTES, bytesToHex, readEntry } from "../../format/entries.js";
import { dateToDayNumber } from "../../format/dates.js";
import type { Window } from "../../format/grid.js";
import { sha256Hex } from "../../format/hash.js";
import { LocalStorage, nodePlatform } from "../../format/local.js";
import { CATALOG_FILE, DIST_FORMAT, type FileEntry, type Ref, objectPath } from "../../format/objects.js";
import type { Dataset } from "../../format/records.js";
import { GroupLattice, type SeriesSpan, groupRecordBytes } from "../../format/series.js";
import type { DayEntry, IndexNode, MonthPage, ObservationIndex, RasterIndex, YearPage } from "../../format/version-index.js";
import { assertValid } from "../../schemas/validate.js";
import { PublishError } from "../errors.js";
import { addToCatalog, updateCandidates, writeCatalog } from "../dist/catalog.js";
import { ObjectStore, hashFile } from "../dist/files.js";
import { PublishJournal } from "../dist/journal.js";
import { type LockOptions, lockDist } from "../dist/lock.js";
import { type PruneReport, pruneLocked, reachFrom } from "./prune.js";
import type { Progress } from "../progress.js";
import { storeExplorer } from "../publish/explorer.js";
import { type PieceGroup, writeSeriesPiece } from "../publish/series-piece.js";
import { planSpans } from "../publish/series.js";

const OLD_FORMAT = "climate-dist-2";
const STAGE = "upgrade";

export interface UpgradeReport {
  /** the format the dist had: climate-dist-2, or climate-dist-3 when there was nothing to do */
  from: string;
  versions: number;
  objectsWritten: number;
  bytesWritten: number;
  /** the old objects, now unreachable, waiting for make prune's grace period */
  waiting: PruneReport["waiting"];
  ms: number;
}

export async function upgrade(dist: string, progress: Progress, options: { lock?: LockOptions; graceMs?: number } = {}): Promise<UpgradeReport> {
  const started = Date.now();
  const unlock = await lockDist(dist, "upgrade", (line) => progress.line(line), options.lock);
  try {
    const pointerBytes = await readFile(join(dist, CATALOG_FILE)).catch(() => {
      throw new PublishError(join(dist, CATALOG_FILE), STAGE, "is missing: there is no dist to upgrade here");
    });
    const pointer = parsePointer(pointerBytes, join(dist, CATALOG_FILE));
    const waiting = { files: 0, bytes: 0, firstDueAt: null };
    if (pointer.format === DIST_FORMAT) return { from: DIST_FORMAT, versions: 0, objectsWritten: 0, bytesWritten: 0, waiting, ms: Date.now() - started };
    const journal = await PublishJournal.open(dist, sha256Hex(pointerBytes));
    const store = new ObjectStore(dist, 0, new Set(), journal);
    try {
      const versions = await rewrite(dist, pointer, store, progress);
      await journal.commit();
      const collected = await pruneLocked({ dist, rule: { keepDays: 0, keepIds: new Set(), dropVersions: false }, graceMs: options.graceMs });
      return { from: OLD_FORMAT, versions, objectsWritten: store.added.length, bytesWritten: store.bytesWritten, waiting: collected.waiting, ms: Date.now() - started };
    } catch (err) {
      await journal.rollback();
      throw err;
    }
  } finally {
    progress.done();
    await unlock();
  }
}

interface OldPointer {
  format: string;
  catalog: Ref;
  manifest: Ref;
  explorer?: Ref;
}

function parsePointer(bytes: Uint8Array, where: string): OldPointer {
  let pointer: OldPointer;
  try {
    pointer = JSON.parse(new TextDecoder().decode(bytes)) as OldPointer;
  } catch {
    throw new PublishError(where, STAGE, "is not JSON; run make verify on it");
  }
  if (pointer?.format !== OLD_FORMAT && pointer?.format !== DIST_FORMAT) {
    throw new PublishError(where, STAGE, `is a ${String(pointer?.format)} dist; make upgrade turns ${OLD_FORMAT} into ${DIST_FORMAT}: republish older dists`);
  }
  return pointer;
}

/** Every version's objects written anew, then the catalog tree, a new manifest chain and catalog.json. */
async function rewrite(dist: string, pointer: OldPointer, store: ObjectStore, progress: Progress): Promise<number> {
  const archive = new Archive(new LocalStorage(dist, { maxOpenFiles: 32 }), nodePlatform, { cacheBytes: 64 << 20 });
  try {
    const root = await archive.readJson<CatalogRoot>(pointer.catalog);
    const records: Dataset[] = [];
    for (const leaf of root.leaves) records.push(...(await archive.readJson<CatalogLeaf>(leaf.ref)).datasets);
    const converter = new Converter(archive, store);
    const fresh: { record: Dataset; coverage: Coverage }[] = [];
    const upgraded: Dataset[] = [];
    for (const [i, record] of records.entries()) {
      progress.status(`upgrade ${i + 1}/${records.length} versions: ${record.id}`, `upgrade ${record.id}`);
      const { record: next, coverage } = await converter.version(record);
      upgraded.push(next);
      if (coverage) fresh.push({ record: next, coverage });
    }
    store.stage = "catalog";
    const catalog = await addToCatalog(store, null, upgraded);
    const explorer = (await storeExplorer(store)) ?? (pointer.explorer && (await exists(dist, objectPath(pointer.explorer.sha256, "html"))) ? pointer.explorer : null);
    const reached = await reachFrom(archive, upgraded);
    if (explorer) reached.add(objectPath(explorer.sha256, "html"));
    const kept = await listKept(dist, reached, new Set(store.added.map((f) => f.path)));
    await writeCatalog(store, dist, null, { catalog, candidates: updateCandidates([], fresh), explorer, kept });
    return upgraded.length;
  } finally {
    await archive.storage.close?.();
  }
}

const exists = (dist: string, path: string) => stat(join(dist, path)).then(() => true, () => false);

/** The files the new chain lists beside what the upgrade wrote: objects it shares with the old dist (observation chunks, sources lists). */
async function listKept(dist: string, reached: Set<string>, added: Set<string>): Promise<FileEntry[]> {
  const kept: FileEntry[] = [];
  for (const path of [...reached].sort()) {
    if (added.has(path)) continue;
    const found = await stat(join(dist, path)).catch(() => null);
    if (found) kept.push({ path, size: found.size, sha256: await hashFile(join(dist, path)) });
  }
  return kept;
}

/** Old objects to new, each converted once however many versions share it. */
class Converter {
  private readonly days = new Map<string, Promise<Pick<DayEntry, "piece" | "header">>>();
  private readonly pages = new Map<string, Promise<Ref>>();

  constructor(
    private readonly archive: Archive,
    private readonly store: ObjectStore,
  ) {}

  async version(record: Dataset): Promise<{ record: Dataset; coverage: Coverage | null }> {
    const ref = record.metadata.index;
    const index = await this.archive.readJson<RasterIndex | ObservationIndex>(ref);
    const next = index.kind === "raster" ? await this.raster(index) : await this.putIndex({ ...index, format: DIST_FORMAT }, "dist-observation-index.schema.json");
    const path = objectPath(next.sha256, "json");
    const upgraded: Dataset = {
      ...record,
      source_manifest: record.source_manifest.map((s) => (s.kind === "source-index" ? { ...s, sha256: next.sha256, member_path: path } : s)),
      metadata: { ...record.metadata, index: { ...ref, path, sha256: next.sha256, size: next.size } },
    };
    assertValid("dataset.schema.json", upgraded, `record of ${record.id}`);
    return { record: upgraded, coverage: index.kind === "raster" ? index.coverage : null };
  }

  private putIndex(index: object, schema: string): Promise<Ref> {
    assertValid(schema, index, "upgraded index");
    return this.store.putJson(index);
  }

  private async raster(index: RasterIndex): Promise<Ref> {
    const years: IndexNode[] = [];
    for (const year of index.years) years.push({ ...year, ref: await this.page(year.ref, (page: YearPage) => this.yearPage(page)) });
    // a span's basis names the index pages it was built from: the new pages give the basis a publish would compute
    const basisOf = new Map<string, string>();
    for (const planned of await planSpans({ years, days: index.days, tiles: index.tiles, coverage: index.coverage }, this.archive)) {
      for (const day of await planned.loadDays()) basisOf.set(day.date, planned.basis);
    }
    const series: SeriesSpan[] = [];
    for (const span of index.series) series.push({ ...(await this.span(span)), basis: basisOf.get(span.first)! });
    return this.putIndex({ ...index, format: DIST_FORMAT, years, series }, "dist-raster-index.schema.json");
  }

  /** A JSON page converted once by `convert`, its new Ref. */
  private page<T>(ref: Ref, convert: (page: T) => Promise<object>): Promise<Ref> {
    let done = this.pages.get(ref.sha256);
    if (!done) this.pages.set(ref.sha256, (done = this.archive.readJson<T>(ref).then(convert).then((page) => this.store.putJson(page))));
    return done;
  }

  private async yearPage(page: YearPage): Promise<YearPage> {
    const months: IndexNode[] = [];
    for (const month of page.months) months.push({ ...month, ref: await this.page(month.ref, (p: MonthPage) => this.monthPage(p)) });
    const next: YearPage = { ...page, format: DIST_FORMAT, months };
    assertValid("dist-year-page.schema.json", next, `year page ${page.year}`);
    return next;
  }

  private async monthPage(page: MonthPage): Promise<MonthPage> {
    const days: DayEntry[] = [];
    for (const day of page.days) days.push({ ...day, ...(await this.day(day)) });
    const next: MonthPage = { ...page, format: DIST_FORMAT, days };
    assertValid("dist-month-page.schema.json", next, `month page ${page.month}`);
    return next;
  }

  private day(day: DayEntry): Promise<Pick<DayEntry, "piece" | "header">> {
    let done = this.days.get(day.piece.sha256);
    if (!done) this.days.set(day.piece.sha256, (done = this.convertDay(day)));
    return done;
  }

  /** A climate-dist-2 day piece (CDSDAY02: 40-byte entries, blocks at cumulative offsets) as a whole climate-dist-3 piece. */
  private async convertDay(day: DayEntry): Promise<Pick<DayEntry, "piece" | "header">> {
    const old = await this.archive.readObject(day.piece, "day");
    const where = objectPath(day.piece.sha256, "day");
    const view = new DataView(old.buffer, old.byteOffset, old.byteLength);
    if (String.fromCharCode(...old.subarray(0, 8)) !== "CDSDAY02") throw new PublishError(where, STAGE, "is not a climate-dist-2 day piece");
    const count = view.getUint32(28, true);
    let at = 32 + 40 * count;
    const blocks = Array.from({ length: count }, (_, i) => {
      const entry = 32 + 40 * i;
      const length = view.getUint32(entry + 4, true);
      const bytes = old.subarray(at, at + length);
      at += length;
      return { codec: view.getUint32(entry, true) as BlockCodec, sha256: bytesToHex(old.subarray(entry + 8, entry + 40)), bytes };
    });
    const { bytes, header } = assembleDayPiece(day.window, blocks, 0);
    return { piece: await this.store.put(bytes, "day"), header: { sha256: sha256Hex(header), size: header.byteLength } };
  }

  /** A climate-dist-2 series piece (CDSSER01: a 76-byte header, then every group's record) as a whole climate-dist-3 piece. */
  private async span(span: SeriesSpan): Promise<SeriesSpan> {
    const old = await this.archive.readObject(span.piece, "ser");
    const where = objectPath(span.piece.sha256, "ser");
    if (String.fromCharCode(...old.subarray(0, 8)) !== "CDSSER01") throw new PublishError(where, STAGE, "is not a climate-dist-2 series piece");
    const view = new DataView(old.buffer, old.byteOffset, old.byteLength);
    const [count, depth] = [view.getInt32(36, true), view.getInt32(40, true)];
    const lattice = new GroupLattice(span.window as Window, span.chunkSide);
    if (count !== lattice.count) throw new PublishError(where, STAGE, `lists ${count} groups, its span ${lattice.count}`);
    const recordBytes = groupRecordBytes(depth);
    const chunksAt = 76 + count * recordBytes;
    const groups: PieceGroup[] = Array.from({ length: count }, (_, group) => {
      const entriesAt = 76 + group * recordBytes + depth * 32;
      const entries = Array.from({ length: 64 }, (_, position) => {
        const e = readEntry(old, entriesAt + position * ENTRY_BYTES);
        return { ...e, pack: 0, offset: e.length > 0 ? e.offset - chunksAt : 0 };
      });
      return { group, entries };
    });
    const days = dateToDayNumber(span.last) - dateToDayNumber(span.first) + 1;
    const piece = await writeSeriesPiece({ lattice, firstDay: dateToDayNumber(span.first), days, older: [], map: null, groups, chunks: [old.subarray(chunksAt)] }, this.store);
    return { ...span, piece: piece.ref, root: piece.root };
  }
}
