// A local HTTP server standing in for SILO's bucket (SILO_BASE_URL, SILO_ANNUAL_BASE_URL): a window's daily GeoTIFFs and
// whole-year NetCDF files of any date and variable, made when first asked, the same cells for a date in both forms. As
// S3 does, every file has an ETag and a Last-Modified and a conditional GET of an unchanged one is a 304. As SILO does,
// a daily file can be rewritten in place (a few patches of cells changed, the same size), or rewritten with the same
// cells and other bytes; the newest day can be held back (later days are 404, as before SILO writes them); and paths
// can be made to fail (a 503, or a stall: the request is never answered).

import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Window } from "../../format/grid.js";
import { VARIABLES, findVariable } from "../../format/variables.js";
import { writeSiloTiff } from "../../pipeline/ingest/geotiff.js";

/** A few cells around Alice Springs (133.85, -23.7 is col 437, row 274): small, so a year publishes in moments. */
export const BUCKET_WINDOW: Window = [436, 272, 4, 4];
const MAKE_NETCDF = new URL("../fixtures/make-netcdf-fixtures.py", import.meta.url).pathname;
const SILO_NAMES = new Set(VARIABLES.map((v) => v.silo));
/** When the bucket's files were first written (their Last-Modified); each later write is a second after the one before. */
const FIRST_WRITE_MS = Date.UTC(2026, 0, 1);

/** A rectangle of cells in global indices whose values a rewrite shifts by `delta`. */
export interface Patch {
  col: number;
  row: number;
  width: number;
  height: number;
  delta: number;
}

/**
 * How a path fails: 503 to every request, or never answered (a stall); `times` requests only, then as usual. A 503
 * with `retryAfterS` says Retry-After (0: a client retries at once, as a test of what follows the retries wants).
 */
export interface Failure {
  kind: "503" | "stall";
  times?: number;
  retryAfterS?: number;
}

/** One answer the bucket gave. */
export interface BucketAnswer {
  path: string;
  status: number;
  /** the request carried If-None-Match or If-Modified-Since */
  conditional: boolean;
}

export interface SiloBucket {
  /** stands for https://s3-ap-southeast-2.amazonaws.com/silo-open-data/Official/daily */
  dailyBaseUrl: string;
  /** stands for .../Official/annual */
  annualBaseUrl: string;
  /** the paths asked, oldest first */
  requests: string[];
  /** every answer, oldest first (a stalled request has none) */
  answers: BucketAnswer[];
  /** the newest date the bucket holds daily files of (later days are 404); null: any date */
  lastDate: string | null;
  /** paths (`/daily/max_temp/2026/20260101.max_temp.tif`) that fail */
  failures: Map<string, Failure>;
  /** the bucket's path of a daily file */
  dailyPath(variable: string, date: string): string;
  /** the file on disk behind a path (made if not yet), for GDAL to read as the bucket holds it */
  fileOf(path: string): Promise<string>;
  /** rewrites a daily file in place: the patches' cells shifted, every other byte as GDAL would read it the same, the same size */
  revise(variable: string, date: string, patches: Patch[]): Promise<void>;
  /** rewrites a daily file with the very same cells and other bytes (its trailer), the same size */
  rewriteSame(variable: string, date: string): Promise<void>;
  close(): Promise<void>;
}

/** Tenths (21.0..44.0) of a cell on a date, as make-netcdf-fixtures.py's tenths() gives them. */
function tenths(date: string, col: number, row: number): number {
  const day = Date.parse(`${date}T00:00:00Z`) / 86_400_000;
  return 250 + ((col * 37 + row * 53 + day * 29) % 191) - ((col * row + day) % 41);
}

/**
 * Tenths added to a variable's cells so that 21.0..44.0 lies inside its plausible range, a unit clear of its ends:
 * none for most, -100 for the evaporation estimates (0..35 mm), +8600 for sea level pressure (880..1060 hPa).
 */
export function offsetTenths(silo: string): number {
  const [low, high] = findVariable(silo)!.plausible;
  return high < 45 ? (high - 45) * 10 : low > 20 ? (low - 20) * 10 : 0;
}

/** A daily file's first cells, as the bucket first writes them. */
function firstCells(window: Window, date: string, silo: string): Float32Array {
  const [c0, r0, w, h] = window;
  const values = new Float32Array(w * h);
  const offset = offsetTenths(silo);
  for (let r = 0; r < h; r++) for (let c = 0; c < w; c++) values[r * w + c] = (tenths(date, c0 + c, r0 + r) + offset) / 10;
  return values;
}

/** Every daily file is padded to this size (the TIFF and a trailer), so a rewrite of any cells keeps its size, as SILO's often do. */
function paddedBytes(window: Window): number {
  return window[2] * window[3] * 4 + 4096;
}

interface Stored {
  file: string;
  etag: string;
  lastModified: string;
  /** a daily file's cells (row-major over the window) */
  cells?: Float32Array;
  writes: number;
}

async function makeAnnual(folder: string, year: string, variable: string, window: Window): Promise<void> {
  await promisify(execFile)("/usr/bin/python3", [MAKE_NETCDF, "years", folder, ...window.map(String), `${year}:${variable}:${offsetTenths(variable)}`]);
}

const toEtag = (bytes: Buffer) => `"${createHash("md5").update(bytes).digest("hex")}"`;

/** Whether a GET's conditions hold for the stored copy: If-None-Match first (RFC 9110 §13.2.2), else If-Modified-Since. */
function isNotModified(req: IncomingMessage, stored: Stored): boolean {
  const etag = req.headers["if-none-match"];
  if (etag !== undefined) return etag === stored.etag;
  const since = req.headers["if-modified-since"];
  return since !== undefined && Date.parse(since) >= Date.parse(stored.lastModified);
}

class Bucket {
  readonly requests: string[] = [];
  readonly answers: BucketAnswer[] = [];
  readonly failures = new Map<string, Failure>();
  readonly stalled = new Set<Socket>();
  lastDate: string | null = null;
  private readonly stored = new Map<string, Stored>();
  /** first writes under way: two requests of a new path wait for one write */
  private readonly making = new Map<string, Promise<Stored>>();
  private writes = 0;

  constructor(
    readonly folder: string,
    readonly window: Window,
  ) {}

  /** The file a bucket path names, made on first request; null when the bucket has no such file (now). */
  async find(path: string): Promise<Stored | null> {
    const daily = /^\/daily\/([a-z_]+)\/(\d{4})\/(\d{4})(\d\d)(\d\d)\.([a-z_]+)\.tif$/.exec(path);
    const annual = /^\/annual\/([a-z_]+)\/(\d{4})\.([a-z_]+)\.nc$/.exec(path);
    const known = this.stored.get(path);
    if (daily && daily[1] === daily[6] && daily[2] === daily[3] && SILO_NAMES.has(daily[1])) {
      const date = `${daily[3]}-${daily[4]}-${daily[5]}`;
      if (this.lastDate !== null && date > this.lastDate) return null;
      return known ?? this.makeOnce(path, () => this.writeDaily(path, firstCells(this.window, date, daily[1]), 0));
    }
    if (annual && annual[1] === annual[3] && SILO_NAMES.has(annual[1])) {
      const file = join(this.folder, "annual", annual[1], `${annual[2]}.${annual[1]}.nc`);
      return (
        known ??
        this.makeOnce(path, async () => {
          if (!existsSync(file)) await makeAnnual(join(this.folder, "annual"), annual[2], annual[1], this.window);
          return this.remember(path, file, await readFile(file));
        })
      );
    }
    return null;
  }

  private makeOnce(path: string, make: () => Promise<Stored>): Promise<Stored> {
    const pending = this.making.get(path) ?? make().finally(() => this.making.delete(path));
    this.making.set(path, pending);
    return pending;
  }

  /** A daily file's cells written as SILO would (float32 GeoTIFF), padded to one size; the trailer says which rewrite. */
  async writeDaily(path: string, cells: Float32Array, trailer: number): Promise<Stored> {
    const file = join(this.folder, path);
    await mkdir(join(file, ".."), { recursive: true });
    await writeSiloTiff(file, this.window, cells);
    const tiff = await readFile(file);
    const padded = Buffer.alloc(paddedBytes(this.window));
    if (tiff.length + 8 > padded.length) throw new Error(`${path}: a TIFF of ${tiff.length} bytes does not fit the bucket's ${padded.length}`);
    tiff.copy(padded);
    padded.writeUInt32LE(trailer, padded.length - 4);
    await writeFile(file, padded);
    const stored = this.remember(path, file, padded);
    stored.cells = cells;
    return stored;
  }

  private remember(path: string, file: string, bytes: Buffer): Stored {
    const stored: Stored = { file, etag: toEtag(bytes), lastModified: new Date(FIRST_WRITE_MS + 1000 * this.writes++).toUTCString(), writes: (this.stored.get(path)?.writes ?? 0) + 1 };
    this.stored.set(path, stored);
    return stored;
  }

  async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://bucket").pathname;
    this.requests.push(path);
    const conditional = req.headers["if-none-match"] !== undefined || req.headers["if-modified-since"] !== undefined;
    res.on("finish", () => this.answers.push({ path, status: res.statusCode, conditional }));
    const failure = this.failures.get(path);
    if (failure && (failure.times === undefined || failure.times-- > 0)) {
      if (failure.kind === "503") {
        const retry = failure.retryAfterS === undefined ? {} : { "retry-after": String(failure.retryAfterS) };
        return void res.writeHead(503, { "content-type": "application/xml", ...retry }).end("<Error><Code>SlowDown</Code></Error>");
      }
      // a stall: the request is read and never answered (the client's stall watch gives up on it)
      if (req.socket) this.stalled.add(req.socket);
      return;
    }
    const stored = await this.find(path);
    if (!stored) return void res.writeHead(404, { "content-type": "application/xml" }).end("<Error><Code>NoSuchKey</Code></Error>");
    const validators = { etag: stored.etag, "last-modified": stored.lastModified };
    if (isNotModified(req, stored)) return void res.writeHead(304, validators).end();
    const bytes = await readFile(stored.file);
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": bytes.length, ...validators }).end(bytes);
  }

  async revise(path: string, patches: Patch[]): Promise<void> {
    const stored = (await this.find(path))!;
    const cells = new Float32Array(stored.cells!);
    const [c0, r0, w] = this.window;
    for (const p of patches) {
      for (let row = p.row; row < p.row + p.height; row++) {
        for (let col = p.col; col < p.col + p.width; col++) cells[(row - r0) * w + (col - c0)] = Math.fround(cells[(row - r0) * w + (col - c0)] + p.delta);
      }
    }
    await this.writeDaily(path, cells, stored.writes);
  }

  async rewriteSame(path: string): Promise<void> {
    const stored = (await this.find(path))!;
    await this.writeDaily(path, stored.cells!, stored.writes);
  }
}

/** Serves the bucket on a free 127.0.0.1 port, its files made into folder; `window` is the cells every file holds. */
export async function startSiloBucket(folder: string, window: Window = BUCKET_WINDOW): Promise<SiloBucket> {
  await mkdir(folder, { recursive: true });
  const bucket = new Bucket(folder, window);
  const server = createServer((req, res) => void bucket.serve(req, res).catch((error: Error) => res.writeHead(500).end(error.message)));
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dailyPath = (variable: string, date: string) => `/daily/${variable}/${date.slice(0, 4)}/${date.replaceAll("-", "")}.${variable}.tif`;
  return {
    dailyBaseUrl: `${base}/daily`,
    annualBaseUrl: `${base}/annual`,
    requests: bucket.requests,
    answers: bucket.answers,
    get lastDate() {
      return bucket.lastDate;
    },
    set lastDate(date: string | null) {
      bucket.lastDate = date;
    },
    failures: bucket.failures,
    dailyPath,
    fileOf: async (path) => (await bucket.find(path))?.file ?? Promise.reject(new Error(`the bucket holds no ${path}`)),
    revise: (variable, date, patches) => bucket.revise(dailyPath(variable, date), patches),
    rewriteSame: (variable, date) => bucket.rewriteSame(dailyPath(variable, date)),
    close: () =>
      new Promise((done) => {
        for (const socket of bucket.stalled) socket.destroy();
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
