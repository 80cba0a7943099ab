// Reading a dist through a Storage: catalog.json, then only verified objects, cached by content hash.
//
// Trust flows down from catalog.json (schema-checked): every object is read by a Ref a verified parent gave,
// and its bytes are hashed before use; a day piece is read by ranges (its header, then only the blocks a
// request needs), each block checked against the header's sha256. Objects never change, so everything
// verified is cached by hash in cost-bounded LRUs, shared by every catalog snapshot. Nothing is read at start.

import { LruCache } from "./cache.js";
import { type StoredBlock, rawBlockBytes, readBlockRow, toStoredBlock } from "../schemas/cells.js";
import { containsWindow, type Window } from "../schemas/grid.js";
import {
  BLOCK_SIDE,
  BlockCodec,
  CATALOG_FILE,
  type BlockSlot,
  type CatalogLeaf,
  type CatalogPointer,
  type CatalogRoot,
  type Dataset,
  type DayEntry,
  type DayHeader,
  type MonthPage,
  type ObservationIndex,
  type RasterIndex,
  type Ref,
  type VersionIndex,
  type YearPage,
  countTiles,
  decodeDayHeader,
  indexRefOf,
  listBlocks,
  objectPath,
} from "../schemas/layout.js";
import { formatPath, toIssues, validatorFor } from "../schemas/validate.js";
import { IntegrityError, type Platform, type Storage, StorageError, fromUtf8 } from "./storage.js";

export interface ArchiveOptions {
  /** bytes of verified objects and decoded blocks kept in memory (default 16 MiB) */
  cacheBytes?: number;
  /** blocks of one piece closer than this are read in one range (default 32 KiB) */
  coalesceBytes?: number;
}

/** catalog.json cannot be used; the message says what is wrong and what fixes it. */
export class CatalogError extends Error {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`${path}: ${reason}`);
    this.name = "CatalogError";
  }
}

export class Archive {
  private readonly objects: LruCache<Promise<unknown>>;
  private readonly blocks: LruCache<Promise<StoredBlock>>;
  private readonly coalesceBytes: number;
  private readonly layouts = new Map<string, BlockLayout>();
  /** version views by record id and index hash (their day lookups are memoized) */
  readonly views = new LruCache<VersionView>(256);

  constructor(
    readonly storage: Storage,
    readonly platform: Platform,
    options: ArchiveOptions = {},
  ) {
    const total = options.cacheBytes ?? 16 << 20;
    this.objects = new LruCache(total / 4);
    this.blocks = new LruCache((total / 4) * 3);
    this.coalesceBytes = options.coalesceBytes ?? 32 << 10;
  }

  /** catalog.json, read fresh, schema-checked; its sha256 identifies this state of the dist. */
  async readPointer(): Promise<{ pointer: CatalogPointer; sha256: string }> {
    let bytes: Uint8Array;
    try {
      bytes = await this.storage.read(CATALOG_FILE);
    } catch (err) {
      const reason = err instanceof StorageError && err.missing ? "is missing" : `cannot be read (${(err as Error).message})`;
      throw new CatalogError(this.storage.describe(CATALOG_FILE), `${reason}; publish a dist with \`make publish\``);
    }
    let pointer: unknown;
    try {
      pointer = JSON.parse(fromUtf8(bytes));
    } catch (err) {
      throw new CatalogError(this.storage.describe(CATALOG_FILE), `is not JSON (${(err as Error).message}); republish with \`make publish\``);
    }
    const check = validatorFor("dist-catalog-pointer.schema.json");
    if (!check(pointer)) {
      const issues = toIssues(check.errors, pointer).slice(0, 3).map((i) => `${formatPath(i.path)} ${i.message}`);
      throw new CatalogError(this.storage.describe(CATALOG_FILE), `is not a climate-dist-2 catalog (${issues.join("; ")}); republish with \`make publish\``);
    }
    return { pointer: pointer as CatalogPointer, sha256: await this.platform.sha256Hex(bytes) };
  }

  /** A whole object, verified against its Ref. */
  async readObject(ref: Ref, kind: "json" | "day"): Promise<Uint8Array> {
    const path = objectPath(ref.sha256, kind);
    const bytes = await this.storage.read(path);
    if (bytes.byteLength !== ref.size || (await this.platform.sha256Hex(bytes)) !== ref.sha256) {
      throw new IntegrityError(this.storage.describe(path), `does not match its sha256 ${ref.sha256} (${ref.size} bytes)`);
    }
    return bytes;
  }

  private cached<T>(key: string, cost: number, load: () => Promise<T>): Promise<T> {
    const hit = this.objects.get(key) as Promise<T> | undefined;
    if (hit) return hit;
    const loading = load();
    this.objects.set(key, loading, cost);
    loading.catch(() => this.objects.delete(key)); // a failure is never cached: the next read checks again
    return loading;
  }

  /** A verified JSON object, parsed once and shared (callers must not mutate it). */
  readJson<T>(ref: Ref): Promise<T> {
    return this.cached(`json:${ref.sha256}`, ref.size * 3, async () => {
      const bytes = await this.readObject(ref, "json");
      try {
        return JSON.parse(fromUtf8(bytes)) as T;
      } catch (err) {
        throw new IntegrityError(this.storage.describe(objectPath(ref.sha256, "json")), `is not JSON (${(err as Error).message})`);
      }
    });
  }

  /** A verified JSON object as text (observation chunks are sent as they are stored). */
  readText(ref: Ref): Promise<string> {
    return this.cached(`text:${ref.sha256}`, ref.size * 2, async () => fromUtf8(await this.readObject(ref, "json")));
  }

  /** The block directory of a day piece: its first bytes, checked against the month page's header Ref. */
  readHeader(day: DayEntry): Promise<DayHeader> {
    return this.cached(`header:${day.header.sha256}`, day.header.size * 2, async () => {
      const path = objectPath(day.piece.sha256, "day");
      const bytes = await this.storage.read(path, 0, day.header.size);
      if (bytes.byteLength !== day.header.size || (await this.platform.sha256Hex(bytes)) !== day.header.sha256) {
        this.storage.forget?.(path);
        throw new IntegrityError(this.storage.describe(path), `header does not match its sha256 ${day.header.sha256}`);
      }
      try {
        return decodeDayHeader(bytes, day.window);
      } catch (err) {
        throw new IntegrityError(this.storage.describe(path), (err as Error).message);
      }
    });
  }

  /** The blocks of a day window and where each lattice position is (memoized: a dist has few distinct windows). */
  private layoutOf(window: Window): BlockLayout {
    const key = `${window[0]},${window[1]},${window[2]},${window[3]}`;
    let layout = this.layouts.get(key);
    if (!layout) {
      layout = new BlockLayout(window);
      if (this.layouts.size > 256) this.layouts.clear();
      this.layouts.set(key, layout);
    }
    return layout;
  }

  /** Cells of `area` (inside the day's window), row-major, NaN for missing; reads only the blocks it touches. */
  async readCells(day: DayEntry, area: Window): Promise<Float32Array> {
    if (!containsWindow(day.window, area)) throw new Error(`area ${area.join(",")} is outside the window of ${day.date}`);
    const header = await this.readHeader(day);
    const slots = this.layoutOf(day.window).select(area);
    const blocks = await this.readBlocks(day, header, slots);
    const [ac, ar, aw, ah] = area;
    const out = new Float32Array(aw * ah);
    slots.forEach((slot, i) => {
      const [bc, br, bw, bh] = slot.window;
      const c0 = Math.max(ac, bc);
      const c1 = Math.min(ac + aw, bc + bw);
      for (let r = Math.max(ar, br); r < Math.min(ar + ah, br + bh); r++) {
        readBlockRow(blocks[i], r - br, c0 - bc, c1 - bc, out, (r - ar) * aw + (c0 - ac));
      }
    });
    return out;
  }

  private readBlocks(day: DayEntry, header: DayHeader, slots: BlockSlot[]): Promise<StoredBlock[]> {
    const path = objectPath(day.piece.sha256, "day");
    const wanted: { slot: BlockSlot; resolve: (v: StoredBlock) => void; reject: (e: unknown) => void }[] = [];
    const results = slots.map((slot) => {
      const key = `${day.piece.sha256}:${slot.index}`;
      const hit = this.blocks.get(key);
      if (hit) return hit;
      const entry = header.block(slot.index);
      if (entry.codec === BlockCodec.Empty) return Promise.resolve(toStoredBlock(entry.codec, null, slot.window[2], slot.window[3]));
      const loading = new Promise<StoredBlock>((resolve, reject) => wanted.push({ slot, resolve, reject }));
      this.blocks.set(key, loading, rawBlockBytes(entry.codec, slot.window[2] * slot.window[3]) + 64);
      loading.catch(() => this.blocks.delete(key));
      return loading;
    });
    // Neighbouring blocks are read in one range (a tile's blocks are contiguous); each is verified on its own.
    let i = 0;
    while (i < wanted.length) {
      let j = i + 1;
      const start = header.block(wanted[i].slot.index).offset;
      let end = start + header.block(wanted[i].slot.index).length;
      while (j < wanted.length && header.block(wanted[j].slot.index).offset - end <= this.coalesceBytes) {
        const e = header.block(wanted[j].slot.index);
        end = e.offset + e.length;
        j++;
      }
      const group = wanted.slice(i, j);
      this.storage.read(path, start, end - start).then(
        async (bytes) => {
          for (const w of group) {
            try {
              const entry = header.block(w.slot.index);
              const piece = bytes.subarray(entry.offset - start, entry.offset - start + entry.length);
              if (piece.byteLength !== entry.length || (await this.platform.sha256Hex(piece)) !== entry.sha256) {
                this.storage.forget?.(path);
                throw new IntegrityError(this.storage.describe(path), `block ${w.slot.index} does not match its sha256 ${entry.sha256}`);
              }
              const [, , bw, bh] = w.slot.window;
              const raw = await this.platform.inflateRaw(piece, rawBlockBytes(entry.codec, bw * bh)).catch((err) => {
                throw new IntegrityError(this.storage.describe(path), `block ${w.slot.index} does not inflate (${(err as Error).message})`);
              });
              // its own exact buffer: the inflated bytes may sit in a larger one, which a cache would keep alive
              w.resolve(toStoredBlock(entry.codec, raw.slice(), bw, bh));
            } catch (err) {
              w.reject(err instanceof IntegrityError ? err : new IntegrityError(this.storage.describe(path), (err as Error).message));
            }
          }
        },
        (err) => group.forEach((w) => w.reject(err)),
      );
      i = j;
    }
    return Promise.all(results);
  }
}

/** A day window's blocks, with the piece index of each 64-cell lattice position, so selecting is arithmetic. */
class BlockLayout {
  readonly slots: BlockSlot[];
  private readonly col0: number;
  private readonly row0: number;
  private readonly cols: number;
  private readonly at: Int32Array;

  constructor(window: Window) {
    this.slots = listBlocks(window);
    this.col0 = Math.floor(window[0] / BLOCK_SIDE);
    this.row0 = Math.floor(window[1] / BLOCK_SIDE);
    this.cols = Math.floor((window[0] + window[2] - 1) / BLOCK_SIDE) - this.col0 + 1;
    const rows = Math.floor((window[1] + window[3] - 1) / BLOCK_SIDE) - this.row0 + 1;
    this.at = new Int32Array(this.cols * rows);
    for (const slot of this.slots) {
      const bc = Math.floor(slot.window[0] / BLOCK_SIDE) - this.col0;
      const br = Math.floor(slot.window[1] / BLOCK_SIDE) - this.row0;
      this.at[br * this.cols + bc] = slot.index;
    }
  }

  /** Blocks that hold cells of `area` (inside the window), in piece order. */
  select(area: Window): BlockSlot[] {
    const out: BlockSlot[] = [];
    const r1 = Math.floor((area[1] + area[3] - 1) / BLOCK_SIDE);
    const c1 = Math.floor((area[0] + area[2] - 1) / BLOCK_SIDE);
    for (let br = Math.floor(area[1] / BLOCK_SIDE); br <= r1; br++) {
      for (let bc = Math.floor(area[0] / BLOCK_SIDE); bc <= c1; bc++) out.push(this.slots[this.at[(br - this.row0) * this.cols + (bc - this.col0)]]);
    }
    return out.sort((a, b) => a.index - b.index);
  }
}

/** One state of the dist: the catalog.json a request started with, and everything reachable from it. */
export class Snapshot {
  constructor(
    readonly archive: Archive,
    readonly pointer: CatalogPointer,
    /** sha256 of catalog.json */
    readonly sha256: string,
  ) {}

  root(): Promise<CatalogRoot> {
    return this.archive.readJson<CatalogRoot>(this.pointer.catalog);
  }

  /** The catalog record of `id` (with status and published_at), or null. */
  async findRecord(id: string): Promise<Dataset | null> {
    const root = await this.root();
    const at = findLeaf(root, id);
    if (at < 0) return null;
    const leaf = await this.archive.readJson<CatalogLeaf>(root.leaves[at].ref);
    return leaf.datasets.find((d) => d.id === id) ?? null;
  }

  /** Up to `limit` records with id > `after` that `keep` accepts, in id order, and whether more follow. */
  async listRecords(after: string | null, limit: number, keep: (d: Dataset) => boolean): Promise<{ records: Dataset[]; more: boolean }> {
    const root = await this.root();
    const records: Dataset[] = [];
    for (let at = after === null ? 0 : Math.max(0, findLeaf(root, after)); at < root.leaves.length; at++) {
      const leaf = await this.archive.readJson<CatalogLeaf>(root.leaves[at].ref);
      for (const d of leaf.datasets) {
        if ((after !== null && d.id <= after) || !keep(d)) continue;
        if (records.length === limit) return { records, more: true };
        records.push(d);
      }
    }
    return { records, more: false };
  }
}

/** The leaf whose range holds `id`: the last one whose first id is <= id; -1 when id sorts before all. */
function findLeaf(root: CatalogRoot, id: string): number {
  let lo = 0;
  let hi = root.leaves.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (root.leaves[mid].first <= id) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

export type VersionView = RasterView | ObservationView;

/** The reading side of a catalog record: its index, verified; one view per version, kept while it is used. */
export async function openVersion(archive: Archive, record: Dataset): Promise<VersionView> {
  const ref = indexRefOf(record);
  const key = `${record.id}/${ref.sha256}`;
  const known = archive.views.get(key);
  if (known) return known;
  const index = await archive.readJson<VersionIndex>(ref);
  if (index.kind !== ref.kind) throw new IntegrityError(archive.storage.describe(ref.path), `is a ${index.kind} index, the record says ${ref.kind}`);
  const view = index.kind === "raster" ? new RasterView(archive, record, index) : new ObservationView(archive, record, index);
  archive.views.set(key, view, 1);
  return view;
}

export class RasterView {
  readonly kind = "raster";
  /** day lookups of this version, bounded (a month page read once serves every later request) */
  private readonly days = new Map<string, Promise<DayEntry | null>>();

  constructor(
    readonly archive: Archive,
    readonly record: Dataset,
    readonly index: RasterIndex,
  ) {}

  /** The day entry of `date`, or null when this version does not hold it. */
  findDay(date: string): Promise<DayEntry | null> {
    let found = this.days.get(date);
    if (!found) {
      if (this.days.size >= 4096) this.days.clear();
      found = this.lookUpDay(date);
      this.days.set(date, found);
      found.catch(() => this.days.delete(date)); // a failed read is tried again next time
    }
    return found;
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
      for (const month of (await this.archive.readJson<YearPage>(year.ref)).months) {
        if (before + month.tiles <= offset) {
          before += month.tiles;
          continue;
        }
        for (const day of (await this.archive.readJson<MonthPage>(month.ref)).days) {
          const tiles = countTiles(day.window);
          if (before + tiles > offset) yield { day, skip: Math.max(0, offset - before) };
          before += tiles;
        }
      }
    }
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
    return this.archive.readText(this.index.chunks[i]);
  }
}

