// Reading a dist through a Storage: catalog.json, then only verified objects, cached by content hash
// (docs/format.md §2).
//
// Trust flows down from catalog.json (schema-checked): every object is read by a Ref a verified parent gave,
// and its bytes are hashed before use; a day piece is read by ranges (its header, then only the blocks a
// request needs), each block checked against the header's sha256. Objects never change, so everything
// verified is cached by hash in cost-bounded LRUs, shared by every catalog snapshot. Nothing is read at start.

import { formatPath, toIssues, validatorFor } from "../schemas/validate.js";
import { type BlockPart, BlockOrder } from "./blocks.js";
import { LruCache } from "./cache.js";
import type { CatalogPointer } from "./catalog.js";
import { BlockCodec, type StoredBlock, decodeTenthsCell, rawBlockBytes, readBlockCodes, readBlockRow, readBlockRowBigEndian, readBlockRows, toStoredBlock } from "./cells.js";
import { dateToDayNumber } from "./dates.js";
import { type DayHeader, decodeDayHeader } from "./day-piece.js";
import { type StoredEntry, lineageOf } from "./entries.js";
import { type Window, containsWindow } from "./grid.js";
import { CATALOG_FILE, DIST_FORMAT, type ObjectKind, type Ref, objectPath } from "./objects.js";
import { type ChunkPatch, ChunkOrder, GroupLattice, type SeriesSpan, SpanLayout, applyChunkPatch, checkGroupEntries, decodeChunkPatch, decodeSeriesHeader, groupEntry, headerToLayout, patchBytesBound, verifyGroupRecord } from "./series.js";
import { IntegrityError, type Platform, type Storage, StorageError, fromUtf8 } from "./storage.js";
import type { DayEntry } from "./version-index.js";

export interface ArchiveOptions {
  /** bytes of verified objects and decoded blocks kept in memory (default 16 MiB: a quarter objects, the rest blocks) */
  cacheBytes?: number;
  /**
   * bytes of that for decoded blocks and chunks instead of three quarters (the rest for objects): 0 for a reader
   * that reads each block once (a series strip of the publish), whose cache would only churn the collector
   */
  blockCacheBytes?: number;
  /** blocks of one piece closer than this are read in one range (default 32 KiB) */
  coalesceBytes?: number;
}

/**
 * catalog.json cannot be used; the message says what is wrong and what fixes it. `missing`: there is no catalog.json
 * (no dist published there yet), as against one that cannot be read or is damaged.
 */
export class CatalogError extends Error {
  readonly missing: boolean;

  constructor(
    readonly path: string,
    reason: string,
    options: { missing?: boolean } = {},
  ) {
    super(`${path}: ${reason}`);
    this.name = "CatalogError";
    this.missing = options.missing ?? false;
  }
}

interface PendingBlock {
  part: BlockPart;
  entry: StoredEntry;
  /** the piece of the day's lineage that stores it */
  path: string;
  resolve: (block: StoredBlock) => void;
  reject: (err: unknown) => void;
  /** a block read once: decoded into the shared scratch and used at once, before anything else can decode */
  use?: (block: StoredBlock) => void;
}

/** The tenths codes of the block being used at once (PendingBlock.use): one array, so a map allocates none a block. */
let scratch = new Int16Array(0);
function scratchCodes(cells: number): Int16Array {
  if (scratch.length < cells) scratch = new Int16Array(cells);
  return scratch;
}

/** Block-local rows [row0, row1) and columns [col0, col1) of a block inside an area, and the area row and column of its first cell. */
interface AreaPart {
  block: StoredBlock;
  row0: number;
  row1: number;
  col0: number;
  col1: number;
  /** the area row and column its first cell lands on */
  row: number;
  col: number;
}

/**
 * Whether a read's blocks go into the block cache ("cache") or are read for this answer alone ("once"): a whole
 * tile (a Zarr maps chunk, a tile answer) is answered whole and its answer cached, and its 16 blocks would only push
 * out the blocks boxes and points share (a varied maps chunk 740 -> 850 answers a second; docs/performance-history.md
 * "Computed answers beside sirv").
 */
export type BlockReuse = "cache" | "once";

/** Where an area's cells go: `out` from index `at`, a row every `stride` cells (a chunk wider than the area). */
export interface CellTarget {
  out: Float32Array;
  at: number;
  stride: number;
  /** the cells' bits byte-swapped (big-endian words, as OPeNDAP's XDR sends them), not float32 in the host's order */
  bigEndian?: boolean;
}

/** Writes the cells of an area's blocks into `target`. */
function fillCells(parts: AreaPart[], { out, at: base, stride, bigEndian }: CellTarget): Float32Array {
  const words = bigEndian ? new Uint32Array(out.buffer, out.byteOffset, out.length) : null;
  for (const p of parts) {
    for (let row = p.row0, at = base + p.row * stride + p.col; row < p.row1; row++, at += stride) {
      if (words) readBlockRowBigEndian(p.block, row, p.col0, p.col1, words, at);
      else readBlockRow(p.block, row, p.col0, p.col1, out, at);
    }
  }
  return out;
}

/** Writes the tenths codes of an area `width` cells wide into `out`; false at the first block that holds other values. */
function fillCodes(parts: AreaPart[], out: Int16Array, width: number): boolean {
  for (const p of parts) {
    for (let row = p.row0, at = p.row * width + p.col; row < p.row1; row++, at += width) if (!readBlockCodes(p.block, row, p.col0, p.col1, out, at)) return false;
  }
  return true;
}

/** A series chunk's key in the block cache: where its bytes lie, so the versions sharing a chunk share its entry. */
const chunkKey = (pack: string, entry: StoredEntry) => `chunk:${pack}@${entry.offset}`;

export class Archive {
  private readonly objects: LruCache<Promise<unknown>>;
  private readonly blocks: LruCache<Promise<StoredBlock>>;
  private readonly coalesceBytes: number;
  private readonly orders = new LruCache<BlockOrder>(256);
  /**
   * How often point reads lately decoded one cell of a chunk (each entry costing the chunk's decoded size, within an
   * eighth of the block cache's budget): the third point read of a chunk still here decodes it whole and keeps it.
   * Measured both ways (docs/performance.md): over places anywhere, a chunk asked twice within a larger reach is
   * seldom asked a third time before the cache drops it, and decoding it whole cost a fifth more CPU an answer.
   */
  private readonly pointChunks: LruCache<number>;

  constructor(
    readonly storage: Storage,
    readonly platform: Platform,
    options: ArchiveOptions = {},
  ) {
    const total = options.cacheBytes ?? 16 << 20;
    const blocks = Math.min(total, options.blockCacheBytes ?? (total / 4) * 3);
    this.objects = new LruCache(total - blocks);
    this.blocks = new LruCache(blocks);
    this.pointChunks = new LruCache(blocks / 8);
    this.coalesceBytes = options.coalesceBytes ?? 32 << 10;
  }

  /** catalog.json, read fresh, schema-checked; its sha256 identifies this state of the dist (bytes: as read). */
  async readPointer(): Promise<{ pointer: CatalogPointer; sha256: string; bytes: Uint8Array }> {
    const where = this.storage.describe(CATALOG_FILE);
    let bytes: Uint8Array;
    try {
      bytes = await this.storage.read(CATALOG_FILE);
    } catch (err) {
      const missing = err instanceof StorageError && err.missing;
      const reason = missing ? "is missing" : `cannot be read (${(err as Error).message})`;
      throw new CatalogError(where, `${reason}; publish a dist with \`make publish\``, { missing });
    }
    let pointer: unknown;
    try {
      pointer = JSON.parse(fromUtf8(bytes));
    } catch (err) {
      throw new CatalogError(where, `is not JSON (${(err as Error).message}); republish with \`make publish\``);
    }
    const format = (pointer as { format?: unknown } | null)?.format;
    if (typeof format === "string" && format !== DIST_FORMAT && /^climate-dist-\d+$/.test(format)) {
      // the one place a reader meets another format: it names the command, never reads on with other rules
      throw new CatalogError(where, `is a ${format} dist; this reader reads ${DIST_FORMAT}: upgrade it with \`make upgrade DIST=<dir>\` (docs/publishing.md "Upgrading a dist"), or republish`);
    }
    const check = validatorFor("dist-catalog-pointer.schema.json");
    if (!check(pointer)) {
      const issues = toIssues(check.errors, pointer).slice(0, 3).map((i) => `${formatPath(i.path)} ${i.message}`);
      throw new CatalogError(where, `is not a ${DIST_FORMAT} catalog (${issues.join("; ")}); republish with \`make publish\``);
    }
    return { pointer: pointer as CatalogPointer, sha256: await this.platform.sha256Hex(bytes), bytes };
  }

  /**
   * Throws unless `bytes` are exactly what `ref` names: the one size-and-hash check of every read. `what` says
   * which part of the file failed; a failed read also drops what the storage keeps open for the file.
   */
  private async verify(bytes: Uint8Array, ref: Ref, path: string, what: string): Promise<void> {
    if (bytes.byteLength === ref.size && (await this.platform.sha256Hex(bytes)) === ref.sha256) return;
    this.storage.forget?.(path);
    const size = what === "" ? ` (${ref.size} bytes)` : "";
    throw new IntegrityError(this.storage.describe(path), `${what}does not match its sha256 ${ref.sha256}${size}`);
  }

  /** A whole object, verified against its Ref. */
  async readObject(ref: Ref, kind: ObjectKind): Promise<Uint8Array> {
    const path = objectPath(ref.sha256, kind);
    const bytes = await this.storage.read(path);
    await this.verify(bytes, ref, path, "");
    return bytes;
  }

  /** A verified JSON object, parsed once and shared (callers must not mutate it). */
  readJson<T>(ref: Ref): Promise<T> {
    return this.objects.getOrLoad(`json:${ref.sha256}`, ref.size * 3, async () => {
      const bytes = await this.readObject(ref, "json");
      try {
        return JSON.parse(fromUtf8(bytes)) as T;
      } catch (err) {
        throw new IntegrityError(this.storage.describe(objectPath(ref.sha256, "json")), `is not JSON (${(err as Error).message})`);
      }
    }) as Promise<T>;
  }

  /** A verified JSON object as text (observation chunks are sent as they are stored). */
  readText(ref: Ref): Promise<string> {
    return this.objects.getOrLoad(`text:${ref.sha256}`, ref.size * 2, async () => fromUtf8(await this.readObject(ref, "json"))) as Promise<string>;
  }

  /** The block directory of a day piece: its first bytes, checked against the month page's header Ref. */
  readHeader(day: DayEntry): Promise<DayHeader> {
    // a decoded header is a copy of its bytes (DayHeader reads entries from them): it costs what a block does, its
    // bytes and 64, so a year of full-grid headers (2.8 MB) stays within the default cache's reach
    return this.objects.getOrLoad(`header:${day.header.sha256}`, day.header.size + 64, async () => {
      const path = objectPath(day.piece.sha256, "day");
      const bytes = await this.storage.read(path, 0, day.header.size);
      await this.verify(bytes, day.header, path, "header ");
      try {
        return decodeDayHeader(bytes, day.window, lineageOf(day).length);
      } catch (err) {
        throw new IntegrityError(this.storage.describe(path), (err as Error).message);
      }
    }) as Promise<DayHeader>;
  }

  /** The blocks of a day window and where each lattice position is (a dist has few distinct windows). */
  private orderOf(window: Window): BlockOrder {
    const key = window.join(",");
    let order = this.orders.get(key);
    if (!order) this.orders.set(key, (order = new BlockOrder(window)), 1);
    return order;
  }

  /**
   * Cells of `area` (inside the day's window), row-major, NaN for missing; reads only the blocks it touches. Into
   * `target` when given (a Zarr chunk: no array of the area's own, no copy), else into a new array.
   */
  async readCells(day: DayEntry, area: Window, target?: CellTarget, reuse: BlockReuse = "cache"): Promise<Float32Array> {
    const into = target ?? { out: new Float32Array(area[2] * area[3]), at: 0, stride: area[2] };
    // a block read once is written out as soon as it is decoded: no array of codes a block for the collector (a
    // full-grid map is 1.2 MB of them)
    if (reuse === "once") await this.readArea(day, area, reuse, (part) => fillCells([part], into));
    else fillCells(await this.readArea(day, area, reuse), into);
    return into.out;
  }

  /**
   * The tenths codes of `area` into `out` (missing -32768), for a writer that re-encodes cells; false when a block
   * holds values that tenths cannot (then read them with readCells).
   */
  async readCodes(day: DayEntry, area: Window, out: Int16Array): Promise<boolean> {
    return fillCodes(await this.readArea(day, area, "cache"), out, area[2]);
  }

  /** The cells of `area` as tenths codes when every block holds tenths, else as float32 (NaN for missing): its blocks read once. */
  async readCodesOrCells(day: DayEntry, area: Window, reuse: BlockReuse = "cache"): Promise<Int16Array | Float32Array> {
    const parts = await this.readArea(day, area, reuse);
    const codes = new Int16Array(area[2] * area[3]);
    return fillCodes(parts, codes, area[2]) ? codes : fillCells(parts, { out: new Float32Array(area[2] * area[3]), at: 0, stride: area[2] });
  }

  /**
   * The blocks of `area`, each with the rows and columns of it that lie in `area` and where they start there; or,
   * with `use` (blocks read once), each part given to it as soon as its block is decoded, its codes valid only then.
   */
  private async readArea(day: DayEntry, area: Window, reuse: BlockReuse, use?: (part: AreaPart) => void): Promise<AreaPart[]> {
    if (!containsWindow(day.window, area)) throw new Error(`area ${area.join(",")} is outside the window of ${day.date}`);
    const header = await this.readHeader(day);
    const parts = this.orderOf(day.window).select(area);
    const [ac, ar, aw, ah] = area;
    const placed = parts.map(({ window: [bc, br, bw, bh] }) => {
      const [c0, r0] = [Math.max(ac, bc), Math.max(ar, br)];
      return { row0: r0 - br, row1: Math.min(ar + ah, br + bh) - br, col0: c0 - bc, col1: Math.min(ac + aw, bc + bw) - bc, row: r0 - ar, col: c0 - ac };
    });
    const blocks = await this.readBlocks(day, header, parts, reuse, use && ((i, block) => use({ block, ...placed[i] })));
    return placed.map((p, i) => ({ block: blocks[i], ...p }));
  }

  /** The blocks of `parts`; with `use`, each given to it as soon as it is decoded (see readArea). */
  private readBlocks(day: DayEntry, header: DayHeader, parts: BlockPart[], reuse: BlockReuse, use?: (i: number, block: StoredBlock) => void): Promise<StoredBlock[]> {
    const lineage = lineageOf(day);
    const wanted: PendingBlock[] = [];
    const results = parts.map((part, i) => {
      const entry = header.block(part.index);
      let block: Promise<StoredBlock>;
      if (entry.codec === BlockCodec.Empty) block = Promise.resolve(toStoredBlock(entry.codec, null, part.window[2], part.window[3]));
      else {
        const cost = rawBlockBytes(entry.codec, part.window[2] * part.window[3]) + 64;
        const pack = lineage[entry.pack].sha256;
        // keyed by where the bytes lie, so a block shared by the versions of a revised day is read once
        const key = `${pack}@${entry.offset}`;
        const load = (used?: PendingBlock["use"]) => new Promise<StoredBlock>((resolve, reject) => wanted.push({ part, entry, path: objectPath(pack, "day"), resolve, reject, use: used }));
        if (reuse === "cache") block = this.blocks.getOrLoad(key, cost, () => load());
        else {
          const cached = this.blocks.get(key);
          // a block read here is given to `use` as it is decoded, into the scratch array
          if (!cached && use) return load((b) => use(i, b));
          block = cached ?? load();
        }
      }
      return use ? block.then((b) => (use(i, b), b)) : block;
    });
    // Neighbouring blocks of one piece are read in one range (a tile's blocks are contiguous); each is verified on its own.
    wanted.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.entry.offset - b.entry.offset));
    for (let i = 0; i < wanted.length; ) {
      let j = i + 1;
      let end = wanted[i].entry.offset + wanted[i].entry.length;
      while (j < wanted.length && wanted[j].path === wanted[i].path && wanted[j].entry.offset - end <= this.coalesceBytes) {
        end = Math.max(end, wanted[j].entry.offset + wanted[j].entry.length);
        j++;
      }
      void this.readAdjacentBlocks(wanted.slice(i, j), end);
      i = j;
    }
    return Promise.all(results);
  }

  /** One range read for blocks that lie close together in one piece, then each block verified and inflated on its own. */
  private async readAdjacentBlocks(adjacent: PendingBlock[], end: number): Promise<void> {
    const { path } = adjacent[0];
    const start = adjacent[0].entry.offset;
    let bytes: Uint8Array;
    try {
      bytes = await this.storage.read(path, start, end - start);
    } catch (err) {
      for (const w of adjacent) w.reject(err);
      return;
    }
    for (const w of adjacent) {
      try {
        const { entry } = w;
        const piece = bytes.subarray(entry.offset - start, entry.offset - start + entry.length);
        await this.verify(piece, { sha256: entry.sha256, size: entry.length }, path, `block ${w.part.index} `);
        const [, , bw, bh] = w.part.window;
        const raw = await this.platform.inflateRaw(piece, rawBlockBytes(entry.codec, bw * bh)).catch((err) => {
          throw new IntegrityError(this.storage.describe(path), `block ${w.part.index} does not inflate (${(err as Error).message})`);
        });
        if (!w.use) w.resolve(toStoredBlock(entry.codec, raw, bw, bh));
        else {
          const block = toStoredBlock(entry.codec, raw, bw, bh, [bw, bh], scratchCodes(bw * bh));
          w.use(block);
          w.resolve(block);
        }
      } catch (err) {
        w.reject(err instanceof IntegrityError ? err : new IntegrityError(this.storage.describe(path), (err as Error).message));
      }
    }
  }

  /** Bytes `[offset, offset + length)` of an object, checked against `sha256` (a writer copying a stored chunk). */
  async readStored(sha: string, kind: ObjectKind, entry: Pick<StoredEntry, "offset" | "length" | "sha256">): Promise<Uint8Array> {
    const path = objectPath(sha, kind);
    const bytes = await this.storage.read(path, entry.offset, entry.length);
    await this.verify(bytes, { sha256: entry.sha256, size: entry.length }, path, `bytes ${entry.offset}+${entry.length} `);
    return bytes;
  }

  /**
   * Where a span's group records lie: from its index entry alone when it is one piece, else from its newest piece's
   * header (one range read, checked against the entry's header Ref and against the span).
   */
  readSpanLayout(span: SeriesSpan): Promise<SpanLayout> {
    const lattice = new GroupLattice(span.window, span.chunkSide);
    if (!span.header) return Promise.resolve(SpanLayout.whole(lattice, span.root));
    const ref = span.header;
    return this.objects.getOrLoad(`layout:${ref.sha256}`, ref.size * 2, async () => {
      const path = objectPath(span.piece.sha256, "ser");
      const bytes = await this.storage.read(path, 0, ref.size);
      await this.verify(bytes, ref, path, "header ");
      try {
        const header = decodeSeriesHeader(bytes);
        const days = dateToDayNumber(span.last) - dateToDayNumber(span.first) + 1;
        const described = [...header.window, header.firstDay, header.days, header.chunkSide].join();
        if (described !== [...span.window, dateToDayNumber(span.first), days, span.chunkSide].join()) throw new Error(`its header describes ${described}, not the span`);
        if (header.packs.length !== lineageOf(span).length || header.packs[header.packs.length - 1].root !== span.root) throw new Error("its header names another lineage than the span's");
        return headerToLayout(header, lattice);
      } catch (err) {
        throw new IntegrityError(this.storage.describe(path), (err as Error).message);
      }
    }) as Promise<SpanLayout>;
  }

  /**
   * A group directory of a series span: one range read in the piece its layout names, proved against that piece's
   * root by its Merkle path; its entries' bytes, in their own buffer (an entry is decoded when a chunk is read).
   */
  async readGroup(span: SeriesSpan, group: number): Promise<Uint8Array> {
    const layout = await this.readSpanLayout(span);
    const at = layout.locate(group);
    const pack = lineageOf(span)[at.pack].sha256;
    return this.objects.getOrLoad(`group:${pack}:${at.record}`, at.size, async () => {
      const path = objectPath(pack, "ser");
      const record = await this.storage.read(path, at.offset, at.size);
      const entries = await verifyGroupRecord(record, at.record, at.depth, layout.packs[at.pack].root, (b) => this.platform.sha256Hex(b));
      if (!entries) {
        this.storage.forget?.(path);
        throw new IntegrityError(this.storage.describe(path), `group ${group} does not prove against its root ${layout.packs[at.pack].root}`);
      }
      try {
        // a record names only pieces that existed when it was written: its own and older ones
        checkGroupEntries(entries, at.pack + 1);
      } catch (err) {
        throw new IntegrityError(this.storage.describe(path), (err as Error).message);
      }
      return entries.slice(); // the record may be a view of a larger read, which the cache would keep alive
    }) as Promise<Uint8Array>;
  }

  /**
   * One chunk of a series span, verified against its group's entry and decoded, a Patch applied over its base; with
   * its entry (whose order says how the block's rows run).
   */
  private async readChunk(span: SeriesSpan, lattice: GroupLattice, group: number, position: number, days: number): Promise<{ block: StoredBlock; entry: StoredEntry }> {
    const entry = groupEntry(await this.readGroup(span, group), position);
    const [, , cw, ch] = lattice.chunkWindow(group, position);
    if (entry.codec !== BlockCodec.Patch) return { block: await this.readWholeChunk(span, entry, [cw, ch], days, `chunk ${group}/${position}`), entry };
    const lineage = lineageOf(span);
    const pack = lineage[entry.pack].sha256;
    const where = `chunk ${group}/${position}`;
    const block = await this.blocks.getOrLoad(chunkKey(pack, entry), rawBlockBytes(BlockCodec.Tenths, cw * ch * days) + 64, async () => {
      const raw = await this.readChunkBytes(pack, entry, patchBytesBound(cw * ch, days), where);
      let patch: ChunkPatch;
      try {
        patch = decodeChunkPatch(raw, days, lineage.length);
      } catch (err) {
        throw new IntegrityError(this.storage.describe(objectPath(pack, "ser")), `${where}: ${(err as Error).message}`);
      }
      const base = await this.readWholeChunk(span, patch.base, [cw, ch], days, `${where}'s base`);
      try {
        return applyChunkPatch(base, patch.base.order as ChunkOrder, patch, [cw, ch], days);
      } catch (err) {
        throw new IntegrityError(this.storage.describe(objectPath(pack, "ser")), `${where}: ${(err as Error).message}`);
      }
    });
    // a patched block is days-major whatever its base's order
    return { block, entry: { ...entry, order: ChunkOrder.Days } };
  }

  /** A chunk's stored bytes in their pack, verified against its entry and inflated (at most `bound` bytes). */
  private async readChunkBytes(pack: string, entry: StoredEntry, bound: number, where: string): Promise<Uint8Array> {
    const path = objectPath(pack, "ser");
    const bytes = await this.storage.read(path, entry.offset, entry.length);
    await this.verify(bytes, { sha256: entry.sha256, size: entry.length }, path, `${where} `);
    return this.platform.inflateRaw(bytes, bound).catch((err) => {
      throw new IntegrityError(this.storage.describe(path), `${where} does not inflate (${(err as Error).message})`);
    });
  }

  /** A whole (not a Patch) chunk of `plane` cells over `days` days, decoded and kept in the block cache. */
  private async readWholeChunk(span: SeriesSpan, entry: StoredEntry, plane: [number, number], days: number, where: string): Promise<StoredBlock> {
    const cells = plane[0] * plane[1];
    const [width, height] = entry.order === ChunkOrder.Cells ? [days, cells] : [cells, days];
    if (entry.codec === BlockCodec.Empty) return toStoredBlock(entry.codec, null, width, height);
    const pack = lineageOf(span)[entry.pack].sha256;
    // tenths are planes of the chunk's cells, a day each: a chunk stored so is days-major
    if (entry.codec === BlockCodec.Tenths && entry.order !== ChunkOrder.Days) throw new IntegrityError(this.storage.describe(objectPath(pack, "ser")), `${where} stores tenths cells-major`);
    return this.blocks.getOrLoad(chunkKey(pack, entry), rawBlockBytes(entry.codec, cells * days) + 64, async () => {
      const raw = await this.readChunkBytes(pack, entry, rawBlockBytes(entry.codec, cells * days), where);
      try {
        return toStoredBlock(entry.codec, raw, width, height, plane);
      } catch (err) {
        throw new IntegrityError(this.storage.describe(objectPath(pack, "ser")), `${where}: ${(err as Error).message}`);
      }
    });
  }

  /**
   * One cell's values on the span's days [from, to) into `out` from `at`, NaN for missing: one group directory and one
   * chunk, and no array a day (a place over a century reads about 140 spans this way).
   */
  async readSeriesPoint(span: SeriesSpan, col: number, row: number, from: number, to: number, out: Float32Array, at: number): Promise<void> {
    if (!containsWindow(span.window, [col, row, 1, 1])) throw new Error(`cell ${col},${row} is outside the series span ${span.first}..${span.last}`);
    const days = dateToDayNumber(span.last) - dateToDayNumber(span.first) + 1;
    const lattice = new GroupLattice(span.window, span.chunkSide);
    const { group, position } = lattice.locate(col, row);
    const chunk = lattice.chunkWindow(group, position);
    const cell = (row - chunk[1]) * chunk[2] + (col - chunk[0]);
    const stored = groupEntry(await this.readGroup(span, group), position);
    const pack = lineageOf(span)[stored.pack]?.sha256;
    // A whole tenths chunk asked by a point read: only this cell's days decoded, nothing kept (a place anywhere asks
    // another chunk, and would push out what boxes share); asked a third time within reach (the same place, or one of
    // its 15 neighbours), it is decoded whole and kept, so places asked again read from memory.
    const key = chunkKey(pack, stored);
    const bytes = rawBlockBytes(stored.codec, chunk[2] * chunk[3] * days);
    const seen = this.pointChunks.get(key) ?? 0;
    if (stored.codec === BlockCodec.Tenths && stored.order === ChunkOrder.Days && seen < 2 && !this.blocks.get(key)) {
      this.pointChunks.set(key, seen + 1, bytes);
      const where = `chunk ${group}/${position}`;
      const raw = await this.readChunkBytes(pack, stored, bytes, where);
      try {
        return decodeTenthsCell(raw, chunk[2], chunk[3], days, cell, from, to, out, at);
      } catch (err) {
        throw new IntegrityError(this.storage.describe(objectPath(pack, "ser")), `${where}: ${(err as Error).message}`);
      }
    }
    // a whole chunk from its entry at hand (readChunk would find the group's record again)
    const { block, entry } = stored.codec === BlockCodec.Patch ? await this.readChunk(span, lattice, group, position, days) : { block: await this.readWholeChunk(span, stored, [chunk[2], chunk[3]], days, `chunk ${group}/${position}`), entry: stored };
    if (entry.order === ChunkOrder.Cells) readBlockRow(block, cell, from, to, out, at);
    else readBlockRows(block, from, to, cell, cell + 1, out, at, 1);
  }

  /**
   * Cells of `area` (inside the span's window) on the span's days [from, to) (0 = its first date): one row-major
   * array per day, NaN for missing; reads one group directory and one chunk per chunk the area touches. The days are
   * views of one buffer, `into` when given (days x cells: a writer's slab, filled in place).
   */
  async readSeries(span: SeriesSpan, area: Window, from: number, to: number, into?: Float32Array): Promise<Float32Array[]> {
    if (!containsWindow(span.window, area)) throw new Error(`area ${area.join(",")} is outside the series span ${span.first}..${span.last}`);
    const days = dateToDayNumber(span.last) - dateToDayNumber(span.first) + 1;
    const lattice = new GroupLattice(span.window, span.chunkSide);
    // one buffer for every day's cells: a point over a year is one allocation, not 365
    const cells = area[2] * area[3];
    const all = into ?? new Float32Array(cells * (to - from));
    const out = Array.from({ length: to - from }, (_, d) => all.subarray(d * cells, (d + 1) * cells));
    const chunks = lattice.select(area);
    const read = await Promise.all(chunks.map(({ group, position }) => this.readChunk(span, lattice, group, position, days)));
    const values = new Float32Array(to - from);
    chunks.forEach(({ group, position }, k) => {
      const { block, entry } = read[k];
      const chunk = lattice.chunkWindow(group, position);
      const [c0, r0, c1, r1] = [Math.max(chunk[0], area[0]), Math.max(chunk[1], area[1]), Math.min(chunk[0] + chunk[2], area[0] + area[2]), Math.min(chunk[1] + chunk[3], area[1] + area[3])];
      for (let r = r0; r < r1; r++) {
        const first = (r - chunk[1]) * chunk[2] + (c0 - chunk[0]);
        const at = (r - area[1]) * area[2] + (c0 - area[0]);
        // days-major: a run of the row's cells a day, in one call for every day
        if (entry.order === ChunkOrder.Days) readBlockRows(block, from, to, first, first + (c1 - c0), all, at, cells);
        else {
          for (let c = 0; c < c1 - c0; c++) {
            readBlockRow(block, first + c, from, to, values, 0);
            for (let d = 0; d < to - from; d++) all[d * cells + at + c] = values[d];
          }
        }
      }
    });
    return out;
  }
}
