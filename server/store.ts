// Loads dist/ at start and hands out only bytes verified against the manifest (decisions.md 4, 5).
//
// Verification scheme: catalog.json is schema-checked, the manifest it names must match its sha256, and
// every served version's dataset.json and index.json are hashed before listen. cells.f32 files are hashed
// in the background after start (a request that needs one waits for it) and re-hashed when fstat shows a
// new size or mtime. Page and tile files are hashed on every read, before their bytes are sent. A version
// whose file fails is marked unavailable (503) and the others keep serving.

import { createHash } from "node:crypto";
import { fstatSync } from "node:fs";
import { open, readFile, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import {
  CATALOG_FILE,
  DIST_FORMAT,
  cellsPath,
  datasetPath,
  indexPath,
  manifestPath,
  pagePath,
  sha256Hex,
  tilePath,
  encodeCursor,
  type CatalogFile,
  type Dataset,
  type FileEntry,
  type ListKind,
  type Manifest,
  type RasterDate,
  type RasterIndex,
  type VersionIndex,
} from "../schemas/dist.js";
import { TILE_SIDE, cellToTile, isInsideGrid, parseTileId, windowToTiles, type TileSlot } from "../schemas/grid.js";
import { formatPath, toIssues, validatorFor } from "../schemas/validate.js";
import { HttpError } from "./errors.js";

/** dist/ cannot be served at all; the message names the file and the command that rebuilds it. */
export class DistError extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`${file}: ${reason}. Build it with \`make publish\` (or point DIST at a published dist directory).`);
    this.name = "DistError";
  }
}

interface VerifiedCells {
  handle: FileHandle;
  size: number;
  mtimeMs: number;
}

export interface VersionEntry {
  readonly id: string;
  /** the catalog record, with status and published_at */
  readonly record: Dataset;
  /** why this version answers 503; null while every file checked so far matched the manifest */
  failure: string | null;
  /** verified dataset.json bytes: the inspect body, sent as they are */
  datasetBody: Buffer | null;
  datasetSha256: string | null;
  index: VersionIndex | null;
  /** raster dates by YYYY-MM-DD (empty for observation versions) */
  dates: Map<string, RasterDate>;
  cellsCheck: Promise<VerifiedCells | null> | null;
}

export interface VerifiedFile {
  bytes: Buffer;
  sha256: string;
}

type Warn = (message: string) => void;

const HASH_CHUNK_BYTES = 1 << 20;

function describeError(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  return e.code ? `${e.code}` : String(e.message ?? err);
}

/** A visible record: published and not restricted (interface.md 3.1; decisions.md 4). */
export function isVisible(record: Dataset): boolean {
  return record.status === "published" && record.access_level !== "restricted";
}

export class Store {
  private closed = false;
  private background: Promise<void> = Promise.resolve();

  private constructor(
    readonly dist: string,
    private readonly files: Map<string, FileEntry>,
    readonly versions: Map<string, VersionEntry>,
    /** GET /api/v1/datasets body, built once */
    readonly catalogBody: Buffer,
    private readonly warn: Warn,
  ) {}

  /** Reads and checks everything a request may need before the server listens; throws DistError if dist is unusable. */
  static async open(dist: string, warn: Warn = (m) => console.error(m)): Promise<Store> {
    const catalog = await readCatalog(dist);
    const files = await readManifest(dist, catalog.manifest);
    const versions = new Map<string, VersionEntry>();
    for (const record of catalog.datasets) {
      // Restricted and unpublished versions are never served, so they are not even loaded (interface.md 3.1).
      if (!isVisible(record)) continue;
      if (versions.has(record.id)) {
        warn(`${join(dist, CATALOG_FILE)}: dataset ${record.id} is listed twice; serving the first record`);
        continue;
      }
      versions.set(record.id, {
        id: record.id,
        record,
        failure: null,
        datasetBody: null,
        datasetSha256: null,
        index: null,
        dates: new Map(),
        cellsCheck: null,
      });
    }
    const visible = [...versions.values()].map((v) => v.record);
    const store = new Store(dist, files, versions, Buffer.from(JSON.stringify({ datasets: visible })), warn);
    await Promise.all([...versions.values()].map((v) => store.loadVersion(v)));
    store.background = store.verifyAllCells();
    return store;
  }

  /** Stops background work and closes kept-open cell files. */
  async close(): Promise<void> {
    this.closed = true;
    await this.background;
    for (const v of this.versions.values()) {
      const state = await v.cellsCheck?.catch(() => null);
      await state?.handle.close().catch(() => undefined);
      v.cellsCheck = null;
    }
  }

  /** Resolves once every cells file has been hashed once (tests and benchmarks wait on it). */
  cellsVerified(): Promise<void> {
    return this.background;
  }

  private fail(v: VersionEntry, reason: string): void {
    if (v.failure === null) this.warn(`dataset ${v.id} is unavailable: ${reason}`);
    v.failure ??= reason;
  }

  private unavailable(v: VersionEntry): HttpError {
    return new HttpError(
      "service_unavailable",
      `Dataset version ${v.id} is temporarily unavailable: its files could not be verified. Retry later with exponential backoff.`,
    );
  }

  /** Throws 503 when the version's files have failed verification. */
  assertAvailable(v: VersionEntry): void {
    if (v.failure !== null) throw this.unavailable(v);
  }

  /**
   * Reads one file of a version whole and checks it against the manifest before anything is sent. A missing
   * entry, a missing file or a mismatch marks the version unavailable; other read errors fail only this request.
   */
  async readVerified(v: VersionEntry, path: string): Promise<VerifiedFile> {
    this.assertAvailable(v);
    const entry = this.files.get(path);
    if (!entry) {
      this.fail(v, `${path} is not in the manifest`);
      throw this.unavailable(v);
    }
    let bytes: Buffer;
    try {
      bytes = await readFile(join(this.dist, path));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "EISDIR") this.fail(v, `${path} cannot be read (${code})`);
      else this.warn(`${join(this.dist, path)}: read failed (${describeError(err)})`);
      throw this.unavailable(v);
    }
    if (bytes.length !== entry.size || sha256Hex(bytes) !== entry.sha256) {
      this.fail(v, `${path} does not match its manifest size and sha256`);
      throw this.unavailable(v);
    }
    return { bytes, sha256: entry.sha256 };
  }

  private async loadVersion(v: VersionEntry): Promise<void> {
    let dataset: VerifiedFile;
    let indexFile: VerifiedFile;
    try {
      dataset = await this.readVerified(v, datasetPath(v.id));
      indexFile = await this.readVerified(v, indexPath(v.id));
    } catch {
      return; // readVerified has marked the version (or logged the read error)
    }
    let parsedDataset: { dataset?: Dataset };
    let index: VersionIndex;
    try {
      parsedDataset = JSON.parse(dataset.bytes.toString("utf8"));
      index = JSON.parse(indexFile.bytes.toString("utf8"));
    } catch (err) {
      this.fail(v, `dataset.json or index.json is not JSON (${describeError(err)})`);
      return;
    }
    const datasetCheck = validatorFor("dataset-response.schema.json");
    if (!datasetCheck(parsedDataset)) {
      this.fail(v, `dataset.json: ${describeIssues(datasetCheck.errors, parsedDataset)}`);
      return;
    }
    const record = parsedDataset.dataset!;
    if (record.id !== v.id || record.content_sha256 !== v.record.content_sha256) {
      this.fail(v, "dataset.json names another id or content_sha256 than its catalog record");
      return;
    }
    const indexCheck = validatorFor("dist-index.schema.json");
    if (!indexCheck(index)) {
      this.fail(v, `index.json: ${describeIssues(indexCheck.errors, index)}`);
      return;
    }
    if (index.kind === "raster") {
      const problem = this.checkRasterIndex(v, index);
      if (problem) {
        this.fail(v, `index.json: ${problem}`);
        return;
      }
      for (const d of index.dates) v.dates.set(d.date, d);
    }
    v.datasetBody = dataset.bytes;
    v.datasetSha256 = dataset.sha256;
    v.index = index;
  }

  /** The arithmetic every raster request relies on must agree with the files before anything is served. */
  private checkRasterIndex(v: VersionEntry, index: RasterIndex): string | null {
    let offset = 0;
    let tiles = 0;
    let previous = "";
    for (const d of index.dates) {
      if (d.date <= previous) return `dates are not strictly ascending at ${d.date}`;
      previous = d.date;
      if (!isInsideGrid(d.window)) return `window of ${d.date} is outside the grid`;
      if (d.offset !== offset) return `offset of ${d.date} is ${d.offset}, expected ${offset}`;
      offset += d.window[2] * d.window[3] * 4;
      tiles += windowToTiles(d.window).length;
    }
    // Tile ids and windows come from grid.ts's fixed lattice; another side would name other tiles.
    if (index.tileSide !== TILE_SIDE) return `tileSide is ${index.tileSide}, the lattice is ${TILE_SIDE}`;
    if (tiles !== index.tileCount) return `tileCount is ${index.tileCount}, the windows make ${tiles}`;
    const cells = this.files.get(cellsPath(v.id));
    if (!cells) return "cells.f32 is not in the manifest";
    if (cells.size !== offset) return `cells.f32 is ${cells.size} bytes, the windows need ${offset}`;
    return null;
  }

  /** Items in a version's list; a raster version has no observations and an observation version no tiles. */
  countItems(v: VersionEntry, kind: ListKind): number {
    const index = v.index;
    if (!index) return 0;
    if (kind === "layers") return index.kind === "raster" ? index.tileCount : 0;
    return index.kind === "observation" ? index.observationCount : 0;
  }

  /** The verified page file that starts at `offset` (a multiple of PAGE_SIZE). */
  readPage(v: VersionEntry, kind: ListKind, offset: number): Promise<VerifiedFile> {
    return this.readVerified(v, pagePath(v.id, kind, offset === 0 ? null : encodeCursor(v.id, kind, offset)));
  }

  /** Where a tile id lies, by arithmetic on the index alone; null when the version has no such tile. */
  locateTile(v: VersionEntry, id: string): { date: RasterDate; slot: TileSlot } | null {
    const parsed = parseTileId(id);
    if (!parsed) return null;
    const date = v.dates.get(parsed.date);
    if (!date) return null;
    const [col, row, width, height] = date.window;
    const side = TILE_SIDE;
    // The slot's own top-left cell, clipped to the window: it must lie inside the window for the tile to exist.
    const c = Math.max(col, parsed.tileCol * side);
    const r = Math.max(row, parsed.tileRow * side);
    if (c >= col + width || r >= row + height || c >= (parsed.tileCol + 1) * side || r >= (parsed.tileRow + 1) * side) {
      return null;
    }
    return { date, slot: cellToTile(c, r, date.window) };
  }

  readTile(v: VersionEntry, id: string): Promise<VerifiedFile> {
    return this.readVerified(v, tilePath(v.id, id));
  }

  /**
   * The descriptor of a version's cells.f32, only once its bytes have been hashed against the manifest, and
   * re-hashed first if fstat shows it changed since. Reads on it are positional (readSync on the fd).
   */
  async cellsFd(v: VersionEntry): Promise<number> {
    for (let attempt = 0; attempt < 3; attempt++) {
      this.assertAvailable(v);
      const check = (v.cellsCheck ??= this.verifyCells(v, null));
      const state = await check;
      if (!state) throw this.unavailable(v);
      const now = fstatSync(state.handle.fd);
      if (now.size === state.size && now.mtimeMs === state.mtimeMs) return state.handle.fd;
      // Changed under us since it was hashed: hash again before serving a byte of it.
      if (v.cellsCheck === check) v.cellsCheck = this.verifyCells(v, state.handle);
    }
    throw this.unavailable(v);
  }

  private async verifyCells(v: VersionEntry, reuse: FileHandle | null): Promise<VerifiedCells | null> {
    const path = cellsPath(v.id);
    const entry = this.files.get(path);
    if (!entry) {
      this.fail(v, `${path} is not in the manifest`);
      return null;
    }
    let handle = reuse;
    try {
      handle ??= await open(join(this.dist, path), "r");
      for (let attempt = 0; attempt < 3; attempt++) {
        const before = await handle.stat();
        const digest = await hashHandle(handle);
        const after = await handle.stat();
        if (before.size !== after.size || before.mtimeMs !== after.mtimeMs) continue; // written while hashing
        if (before.size !== entry.size || digest !== entry.sha256) {
          this.fail(v, `${path} does not match its manifest size and sha256`);
          await handle.close();
          return null;
        }
        return { handle, size: before.size, mtimeMs: before.mtimeMs };
      }
      this.fail(v, `${path} keeps changing while it is verified`);
    } catch (err) {
      this.fail(v, `${path} cannot be read (${describeError(err)})`);
    }
    await handle?.close().catch(() => undefined);
    return null;
  }

  /** One cells file at a time after start, so verification never competes with requests for the disk. */
  private async verifyAllCells(): Promise<void> {
    for (const v of this.versions.values()) {
      if (this.closed) return;
      if (v.failure !== null || v.index?.kind !== "raster" || v.record.access_level !== "demo") continue;
      await (v.cellsCheck ??= this.verifyCells(v, null));
    }
  }
}

async function hashHandle(handle: FileHandle): Promise<string> {
  const hash = createHash("sha256");
  const buffer = Buffer.allocUnsafe(HASH_CHUNK_BYTES);
  let position = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) break;
    hash.update(buffer.subarray(0, bytesRead));
    position += bytesRead;
  }
  return hash.digest("hex");
}

function describeIssues(errors: Parameters<typeof toIssues>[0], data: unknown): string {
  const issues = toIssues(errors, data);
  return issues
    .slice(0, 3)
    .map((i) => `${formatPath(i.path)} ${i.message}`)
    .join("; ");
}

async function readCatalog(dist: string): Promise<CatalogFile> {
  const file = join(dist, CATALOG_FILE);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new DistError(file, `cannot be read (${describeError(err)})`);
  }
  let catalog: unknown;
  try {
    catalog = JSON.parse(text);
  } catch (err) {
    throw new DistError(file, `is not JSON (${(err as Error).message})`);
  }
  const check = validatorFor("dist-catalog.schema.json");
  if (!check(catalog)) throw new DistError(file, `is not a ${DIST_FORMAT} catalog: ${describeIssues(check.errors, catalog)}`);
  return catalog as CatalogFile;
}

async function readManifest(dist: string, entry: FileEntry): Promise<Map<string, FileEntry>> {
  const file = join(dist, entry.path);
  if (entry.path !== manifestPath(entry.sha256)) {
    throw new DistError(join(dist, CATALOG_FILE), `names the manifest ${entry.path}, expected ${manifestPath(entry.sha256)}`);
  }
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    throw new DistError(file, `cannot be read (${describeError(err)})`);
  }
  if (bytes.length !== entry.size || sha256Hex(bytes) !== entry.sha256) {
    throw new DistError(file, "does not match the size and sha256 that catalog.json gives for it");
  }
  let manifest: unknown;
  try {
    manifest = JSON.parse(bytes.toString("utf8"));
  } catch (err) {
    throw new DistError(file, `is not JSON (${(err as Error).message})`);
  }
  const check = validatorFor("dist-manifest.schema.json");
  if (!check(manifest)) throw new DistError(file, `is not a ${DIST_FORMAT} manifest: ${describeIssues(check.errors, manifest)}`);
  return new Map((manifest as Manifest).files.map((f) => [f.path, f]));
}
