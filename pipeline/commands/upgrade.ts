// `make upgrade`: a climate-dist-3 dist rewritten as climate-dist-4 in place, every version kept with its id, content
// hash, provenance and publish time. The one place that still reads climate-dist-3: its day pieces, whose blocks
// stored tenths as differences along a row (codec 1), decoded here alone.
//
// Every day piece is decoded and stored again with climate-dist-4's codecs (a day shared by versions is converted
// once; its cells are checked against the day entry's `cells` hash), every index page written anew, each version's
// series tier built again from its new pages (spans of equal basis shared between versions, as a publish shares them),
// then the records, the catalog tree and a new manifest chain; catalog.json is replaced last, so readers see the old
// dist or the new one. Observation chunks and source lists are kept as they are. The old objects are then unreachable:
// prune's collect step lists them at once and a later `make prune` deletes them after its grace period.

import { publishThreads } from "../pool.js";
import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { inflateRawSync } from "node:zlib";
import { Archive } from "../../format/archive.js";
import { BlockCodec } from "../../format/cells.js";
import type { CatalogLeaf, CatalogRoot } from "../../format/catalog.js";
import type { Coverage } from "../../format/coverage.js";
import { listBlocks } from "../../format/blocks.js";
import { decodeDayHeader } from "../../format/day-piece.js";
import { lineageOf } from "../../format/entries.js";
import { sha256Hex } from "../../format/hash.js";
import { LocalStorage, nodePlatform } from "../../format/local.js";
import { CATALOG_FILE, DIST_FORMAT, type FileEntry, type Ref, objectPath } from "../../format/objects.js";
import type { Dataset } from "../../format/records.js";
import type { DayEntry, IndexNode, MonthPage, ObservationIndex, RasterIndex, YearPage } from "../../format/version-index.js";
import { RasterView } from "../../format/versions.js";
import { assertValid } from "../../schemas/validate.js";
import { UpgradeError } from "../errors.js";
import { addToCatalog, updateCandidates, writeCatalog } from "../store/catalog.js";
import { ObjectStore } from "../store/objects.js";
import { hashFile } from "../files/write.js";
import { PublishJournal } from "../store/journal.js";
import type { LockOptions } from "../files/lock-file.js";
import { lockDist } from "../store/lock.js";
import { type PruneReport, pruneLocked, reachFrom } from "./prune.js";
import type { Progress } from "../progress.js";
import { storeExplorer } from "../publish/explorer.js";
import { assembleDay, encodeDayBlocks, hashCells } from "../publish/pieces.js";
import { buildSeries } from "../publish/series.js";

const OLD_FORMAT = "climate-dist-3";
/** climate-dist-3's day pieces: the layout of climate-dist-4's, with codec 1 for tenths */
const OLD_DAY_MAGIC = "CDSDAY03";
const OLD_TENTHS = 1;
const OLD_CODECS: ReadonlySet<number> = new Set([BlockCodec.Empty, OLD_TENTHS, BlockCodec.Float32]);
const STAGE = "upgrade";

export interface UpgradeReport {
  /** the format the dist had: climate-dist-3, or climate-dist-4 when there was nothing to do */
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
      throw new UpgradeError(join(dist, CATALOG_FILE), STAGE, "is missing: there is no dist to upgrade here");
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
    throw new UpgradeError(where, STAGE, "is not JSON; run make verify on it");
  }
  if (pointer?.format !== OLD_FORMAT && pointer?.format !== DIST_FORMAT) {
    throw new UpgradeError(where, STAGE, `is a ${String(pointer?.format)} dist; make upgrade turns ${OLD_FORMAT} into ${DIST_FORMAT}: upgrade an older dist to ${OLD_FORMAT} first with make upgrade of commit 6304b50, or republish it`);
  }
  return pointer;
}

/** Every version's objects written anew, then the catalog tree, a new manifest chain and catalog.json. */
async function rewrite(dist: string, pointer: OldPointer, store: ObjectStore, progress: Progress): Promise<number> {
  const archive = new Archive(new LocalStorage(dist, { maxOpenFiles: 32, reads: "threadpool" }), nodePlatform, { cacheBytes: 64 << 20 });
  try {
    const root = await archive.readJson<CatalogRoot>(pointer.catalog);
    const records: Dataset[] = [];
    for (const leaf of root.leaves) records.push(...(await archive.readJson<CatalogLeaf>(leaf.ref)).datasets);
    const converter = new Converter(archive, store, progress);
    const fresh: { record: Dataset; coverage: Coverage }[] = [];
    const upgraded: Dataset[] = [];
    // in publish order, so a version's series tier shares the spans of the one before it (equal basis)
    const order = [...records].sort((a, b) => (a.published_at ?? "").localeCompare(b.published_at ?? "") || a.id.localeCompare(b.id));
    for (const [i, record] of order.entries()) {
      progress.status(`upgrade ${i + 1}/${records.length} versions: ${record.id}`, `upgrade ${record.id}`);
      const { record: next, coverage } = await converter.version(record);
      upgraded.push(next);
      if (coverage) fresh.push({ record: next, coverage });
    }
    upgraded.sort((a, b) => a.id.localeCompare(b.id));
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

/** The files the new chain lists beside what the upgrade wrote: objects it shares with the old dist (observation chunks, source lists). */
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
  /** new day pieces by the old piece's header (a revised day's header names its lineage too) */
  private readonly days = new Map<string, Promise<Pick<DayEntry, "piece" | "header">>>();
  private readonly pages = new Map<string, Promise<Ref>>();
  /** each dataset's version converted last: its series spans are the next one's to share */
  private readonly lastOf = new Map<string, RasterView>();

  constructor(
    private readonly archive: Archive,
    private readonly store: ObjectStore,
    private readonly progress: Progress,
  ) {}

  async version(record: Dataset): Promise<{ record: Dataset; coverage: Coverage | null }> {
    const ref = record.metadata.index;
    const index = await this.archive.readJson<RasterIndex | ObservationIndex>(ref);
    const next = index.kind === "raster" ? await this.raster(record, index) : await this.putIndex({ ...index, format: DIST_FORMAT }, "dist-observation-index.schema.json");
    const path = objectPath(next.ref.sha256, "json");
    const upgraded: Dataset = {
      ...record,
      source_manifest: record.source_manifest.map((s) => (s.kind === "source-index" ? { ...s, sha256: next.ref.sha256, member_path: path } : s)),
      metadata: { ...record.metadata, index: { ...ref, path, sha256: next.ref.sha256, size: next.ref.size } },
    };
    assertValid("dataset.schema.json", upgraded, `record of ${record.id}`);
    if (index.kind === "raster") this.lastOf.set(record.dataset_key, new RasterView(this.archive, upgraded, next.index as RasterIndex));
    return { record: upgraded, coverage: index.kind === "raster" ? index.coverage : null };
  }

  private async putIndex(index: RasterIndex | ObservationIndex, schema: string): Promise<{ ref: Ref; index: RasterIndex | ObservationIndex }> {
    assertValid(schema, index, "upgraded index");
    return { ref: await this.store.putJson(index), index };
  }

  /** A raster index: its pages converted, then its series tier built from them (sharing the previous version's spans). */
  private async raster(record: Dataset, index: RasterIndex): Promise<{ ref: Ref; index: RasterIndex | ObservationIndex }> {
    const years: IndexNode[] = [];
    for (const year of index.years) years.push({ ...year, ref: await this.page(year.ref, (page: YearPage) => this.yearPage(page)) });
    const tree = { years, days: index.days, tiles: index.tiles, coverage: index.coverage };
    const { spans } = await buildSeries(tree, this.lastOf.get(record.dataset_key) ?? null, this.archive, this.store, publishThreads(), (text) => this.progress.status(`upgrade ${record.id}: ${text}`));
    return this.putIndex({ ...index, format: DIST_FORMAT, years, series: spans }, "dist-raster-index.schema.json");
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
    // a revised day's blocks lay in older pieces too (its packs): it is stored whole again
    for (const day of page.days) {
      const { packs: _packs, ...rest } = day;
      days.push({ ...rest, ...(await this.day(day)) });
    }
    const next: MonthPage = { ...page, format: DIST_FORMAT, days };
    assertValid("dist-month-page.schema.json", next, `month page ${page.month}`);
    return next;
  }

  private day(day: DayEntry): Promise<Pick<DayEntry, "piece" | "header">> {
    let done = this.days.get(day.header.sha256);
    if (!done) this.days.set(day.header.sha256, (done = this.convertDay(day)));
    return done;
  }

  /** A climate-dist-3 day (its piece and the older pieces of its lineage) decoded, checked and stored whole again. */
  private async convertDay(day: DayEntry): Promise<Pick<DayEntry, "piece" | "header">> {
    const cells = await readOldDay(this.archive, day);
    const hashed = hashCells(cells);
    const where = objectPath(day.piece.sha256, "day");
    if (hashed.cells !== day.cells || hashed.missing !== day.missing) throw new UpgradeError(where, STAGE, `its cells of ${day.date} do not hash to the day entry's ${day.cells}; run make verify on the old dist`);
    const { bytes, header } = assembleDay(encodeDayBlocks(day.window, cells, hashed), null);
    return { piece: await this.store.put(bytes, "day"), header: { sha256: sha256Hex(header), size: header.byteLength } };
  }
}

/** The cells of a climate-dist-3 day over its window (float32, NaN missing): every block read, verified and decoded. */
async function readOldDay(archive: Archive, day: DayEntry): Promise<Float32Array> {
  const lineage = lineageOf(day);
  const where = objectPath(day.piece.sha256, "day");
  const headerBytes = await archive.readStored(day.piece.sha256, "day", { offset: 0, length: day.header.size, sha256: day.header.sha256 });
  let header;
  try {
    header = decodeDayHeader(headerBytes, day.window, lineage.length, { magic: OLD_DAY_MAGIC, codecs: OLD_CODECS });
  } catch (err) {
    throw new UpgradeError(where, STAGE, (err as Error).message);
  }
  const [wc, wr, ww, wh] = day.window;
  const cells = new Float32Array(ww * wh).fill(NaN);
  for (const part of listBlocks(day.window)) {
    const entry = header.block(part.index);
    if (entry.codec === BlockCodec.Empty) continue;
    const stored = await archive.readStored(lineage[entry.pack].sha256, "day", entry);
    const [bc, br, bw, bh] = part.window;
    const raw = inflateRawSync(stored);
    const values = decodeOldBlock(entry.codec, raw, bw, bh, where);
    for (let y = 0; y < bh; y++) cells.set(values.subarray(y * bw, (y + 1) * bw), (br - wr + y) * ww + (bc - wc));
  }
  return cells;
}

/** A climate-dist-3 block's cells: codec 1, int16 tenths with each row's differences along it; codec 2, float32. */
function decodeOldBlock(codec: number, raw: Uint8Array, width: number, height: number, where: string): Float32Array {
  const cells = width * height;
  if (codec === BlockCodec.Float32 && raw.byteLength === cells * 4) return new Float32Array(new Uint8Array(raw).buffer);
  if (codec !== OLD_TENTHS || raw.byteLength !== cells * 2) throw new UpgradeError(where, STAGE, `holds a block of codec ${codec} and ${raw.byteLength} bytes for ${cells} cells`);
  const diffs = new Int16Array(new Uint8Array(raw).buffer);
  const out = new Float32Array(cells);
  for (let y = 0; y < height; y++) {
    let k = 0;
    for (let x = 0; x < width; x++) {
      k = ((k + diffs[y * width + x]) << 16) >> 16;
      out[y * width + x] = k === -32768 ? NaN : Math.fround(k / 10);
    }
  }
  return out;
}
