// A local HTTP server standing in for SILO's bucket (SILO_BASE_URL, SILO_ANNUAL_BASE_URL): a window's daily GeoTIFFs and
// whole-year NetCDF files of any date and variable, made when first asked, the same cells for a date in both forms.

import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Window } from "../format/grid.js";
import { VARIABLES } from "../format/variables.js";
import { writeSiloTiff } from "../pipeline/ingest/geotiff.js";

/** A few cells around Alice Springs (133.85, -23.7 is col 437, row 274): small, so a year publishes in moments. */
export const BUCKET_WINDOW: Window = [436, 272, 4, 4];
const MAKE_NETCDF = new URL("./fixtures/make-netcdf-fixtures.py", import.meta.url).pathname;
const SILO_NAMES = new Set(VARIABLES.map((v) => v.silo));

export interface SiloBucket {
  /** stands for https://s3-ap-southeast-2.amazonaws.com/silo-open-data/Official/daily */
  dailyBaseUrl: string;
  /** stands for .../Official/annual */
  annualBaseUrl: string;
  /** the paths asked, oldest first */
  requests: string[];
  close(): Promise<void>;
}

/** Tenths of a degree (21.0..44.0) of a cell on a date, as make-netcdf-fixtures.py's tenths() gives them: every variable's range holds them. */
function tenths(date: string, col: number, row: number): number {
  const day = Date.parse(`${date}T00:00:00Z`) / 86_400_000;
  return 250 + ((col * 37 + row * 53 + day * 29) % 191) - ((col * row + day) % 41);
}

async function makeDaily(file: string, date: string): Promise<void> {
  const [c0, r0, w, h] = BUCKET_WINDOW;
  const values = new Float32Array(w * h);
  for (let r = 0; r < h; r++) for (let c = 0; c < w; c++) values[r * w + c] = tenths(date, c0 + c, r0 + r) / 10;
  await writeSiloTiff(file, BUCKET_WINDOW, values);
}

async function makeAnnual(folder: string, year: string, variable: string): Promise<void> {
  await promisify(execFile)("/usr/bin/python3", [MAKE_NETCDF, "years", folder, ...BUCKET_WINDOW.map(String), `${year}:${variable}`]);
}

/** The file a bucket path names, made on first request into folder; null when the bucket has no such file. */
async function fileFor(folder: string, path: string): Promise<string | null> {
  const daily = /^\/daily\/([a-z_]+)\/(\d{4})\/(\d{4})(\d\d)(\d\d)\.([a-z_]+)\.tif$/.exec(path);
  const annual = /^\/annual\/([a-z_]+)\/(\d{4})\.([a-z_]+)\.nc$/.exec(path);
  if (daily && daily[1] === daily[6] && daily[2] === daily[3] && SILO_NAMES.has(daily[1])) {
    const file = join(folder, path);
    if (!existsSync(file)) await makeDaily(file, `${daily[3]}-${daily[4]}-${daily[5]}`);
    return file;
  }
  if (annual && annual[1] === annual[3] && SILO_NAMES.has(annual[1])) {
    const file = join(folder, "annual", annual[1], `${annual[2]}.${annual[1]}.nc`);
    if (!existsSync(file)) await makeAnnual(join(folder, "annual"), annual[2], annual[1]);
    return file;
  }
  return null;
}

/** Serves the bucket on a free 127.0.0.1 port, its files made into folder. */
export async function startSiloBucket(folder: string): Promise<SiloBucket> {
  await mkdir(folder, { recursive: true });
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://bucket").pathname;
    requests.push(path);
    fileFor(folder, path).then(
      async (file) => {
        if (!file) return void res.writeHead(404).end();
        const bytes = await readFile(file);
        res.writeHead(200, { "content-type": "application/octet-stream", "content-length": bytes.length, etag: `"${bytes.length}"` }).end(bytes);
      },
      (error: Error) => void res.writeHead(500).end(error.message),
    );
  });
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    dailyBaseUrl: `${base}/daily`,
    annualBaseUrl: `${base}/annual`,
    requests,
    close: () => new Promise((done) => server.close(() => done())),
  };
}
