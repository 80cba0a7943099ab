// `make bench`, the sources rows (alone: BENCH_ONLY=sources node_modules/.bin/tsx bench/run.ts): one full-grid
// annual NetCDF file against the same 365 days as GeoTIFFs (publish time, peak memory, the same version), a
// re-fetched annual file in which 30 days changed, and one more day onto the 20,000-day archive by the
// grown-folder recipe, with the remembered file hashes and with REHASH=1 (every file read and every touched page
// planned again, as a publish did before it remembered them). Each publish runs in its own process.

import { MAX_TEMP } from "../format/variables.js";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, rename, rm, stat, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { formatBytes } from "../pipeline/progress.js";
import { dateToMemberPath } from "../sources/silo.js";
import { type PublishedYear, linkFolder, runProbe } from "./tools.js";
import { BENCH_CACHE, YEAR_CACHE, listDays, makeFullGridDays, makeSiloLikeWindowDays } from "./sources.js";

const run = promisify(execFile);
const MAKE_NETCDF = "test/fixtures/make-netcdf-fixtures.py";
const REVISED_DAYS = 30;

export interface BenchContext {
  work: string;
  say: (line?: string) => void;
  log: (line: string) => void;
  figures: Record<string, number>;
}

const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** The year's GeoTIFF days as one packed annual file (as SILO ships it), and a copy with 30 days revised; made once. */
async function makeAnnualFiles(yearCache: string, year: string[], log: (line: string) => void): Promise<{ annual: string; revised: string }> {
  const folder = join(BENCH_CACHE, "annual");
  const annual = join(folder, `${year[0].slice(0, 4)}.max_temp.nc`);
  const revised = join(folder, `revised-${REVISED_DAYS}`, `${year[0].slice(0, 4)}.max_temp.nc`);
  await mkdir(join(revised, ".."), { recursive: true });
  if (!existsSync(annual)) {
    log(`making ${annual} from the year's GeoTIFFs (once; kept for later runs)`);
    await run("/usr/bin/python3", [MAKE_NETCDF, "from-tiffs", `${annual}.part`, year[0].slice(0, 4), ...year.map((d) => join(yearCache, dateToMemberPath(d, MAX_TEMP)))], { maxBuffer: 1 << 20 });
    await rename(`${annual}.part`, annual);
  }
  if (!existsSync(revised)) {
    log(`making ${revised}: ${REVISED_DAYS} days one tenth warmer (once)`);
    await run("/usr/bin/python3", [MAKE_NETCDF, "revise", annual, `${revised}.part`, String(REVISED_DAYS)]);
    await rename(`${revised}.part`, revised);
  }
  return { annual, revised };
}

/**
 * One full-grid annual file against the same 365 days as GeoTIFFs, then the same file re-fetched with 30 days revised.
 * Returns the GeoTIFFs' publish (a baseline of the five-variable rows).
 */
export async function benchAnnual(ctx: BenchContext, yearCache: string, year: string[]): Promise<PublishedYear> {
  const { say, log, work, figures } = ctx;
  const { annual, revised } = await makeAnnualFiles(yearCache, year, log);
  const tiffs = await linkFolder(join(work, "src-tiffs"), yearCache, year);
  const annualFolder = join(work, "src-annual");
  await mkdir(annualFolder, { recursive: true });
  await symlink(resolve(annual), join(annualFolder, "2003.max_temp.nc"));
  log("publishing the year as 365 GeoTIFFs, then as one annual file");
  const fromTiffs = runProbe(tiffs, join(work, "dist-src-tiffs"));
  const fromAnnual = runProbe(annualFolder, join(work, "dist-src-annual"));
  await rm(join(annualFolder, "2003.max_temp.nc"));
  await symlink(resolve(revised), join(annualFolder, "2003.max_temp.nc"));
  const revisedRun = runProbe(annualFolder, join(work, "dist-src-annual"));
  const sameId = fromTiffs.id === fromAnnual.id;
  Object.assign(figures, {
    tiffs_year_publish_s: fromTiffs.wallMs / 1000,
    tiffs_year_peak_mb: fromTiffs.maxRssMb,
    annual_year_publish_s: fromAnnual.wallMs / 1000,
    annual_year_peak_mb: fromAnnual.maxRssMb,
    annual_same_version: sameId ? 1 : 0,
    revised_annual_s: revisedRun.wallMs / 1000,
    revised_annual_pieces: revisedRun.decoded,
    revised_annual_bytes: revisedRun.bytesWritten,
  });
  const size = (await stat(annual)).size;
  say();
  say(`sources: one full-grid year (841 x 681 x 365 days) published from each form, a new process each (start-up included)`);
  say(`  365 daily GeoTIFFs (COG, baseline)            ${fmt(fromTiffs.wallMs / 1000, 1)} s, peak memory ${fmt(fromTiffs.maxRssMb)} MB`);
  say(`  one annual NetCDF file (${formatBytes(size)}, int16)     ${fmt(fromAnnual.wallMs / 1000, 1)} s, peak memory ${fmt(fromAnnual.maxRssMb)} MB   ratio ${fmt(fromAnnual.wallMs / fromTiffs.wallMs, 2)}  same version id: ${sameId ? "yes" : "NO"}`);
  say(`  the annual file re-fetched, ${REVISED_DAYS} days revised     ${fmt(revisedRun.wallMs / 1000, 1)} s   ratio ${fmt(revisedRun.wallMs / fromAnnual.wallMs, 2)} of the first  ${revisedRun.decoded} new pieces, ${revisedRun.reused} days reused, ${formatBytes(revisedRun.bytesWritten)} written (day pieces ${formatBytes(revisedRun.dayBytesWritten)})`);
  if (!sameId) throw new Error(`the annual file published ${fromAnnual.id}, its GeoTIFFs ${fromTiffs.id}`);
  return { folder: tiffs, dist: join(work, "dist-src-tiffs"), wallMs: fromTiffs.wallMs, maxRssMb: fromTiffs.maxRssMb };
}

/**
 * One more day onto a long archive by the grown-folder recipe (the whole folder published again), on two copies of
 * its dist: remembering file hashes and unchanged pages, and with --rehash (what every publish cost before).
 */
export async function benchGrownArchive(ctx: BenchContext, longFolder: string, longDist: string, longCache: string, nextDay: string, openFiles: number): Promise<void> {
  const { say, work, figures } = ctx;
  const [cachedDist, rehashDist] = [join(work, "dist-long-grown"), join(work, "dist-long-rehash")];
  await cp(longDist, cachedDist, { recursive: true });
  await cp(longDist, rehashDist, { recursive: true });
  await linkFolder(longFolder, longCache, [nextDay]);
  const cached = runProbe(longFolder, cachedDist, false, openFiles);
  const rehash = runProbe(longFolder, rehashDist, false, openFiles, {}, ["--rehash"]);
  await rm(cachedDist, { recursive: true, force: true });
  await rm(rehashDist, { recursive: true, force: true });
  Object.assign(figures, { grown_day_s: cached.wallMs / 1000, grown_day_files_read: cached.filesRead, grown_day_rehash_s: rehash.wallMs / 1000, grown_day_rehash_files_read: rehash.filesRead });
  say(`  one more day, the grown folder (${fmt(cached.days)} files), REHASH=1 (baseline)   ${fmt(rehash.wallMs / 1000, 2)} s, ${fmt(rehash.filesRead)} files read`);
  say(`  one more day, the grown folder, remembered hashes   ${fmt(cached.wallMs / 1000, 2)} s, ${fmt(cached.filesRead)} file read, decoded ${cached.decoded}   ratio ${fmt(cached.wallMs / rehash.wallMs, 2)}  (goal <= 2 s)`);
  if (cached.id !== rehash.id) throw new Error(`the grown folder published ${cached.id} remembering hashes, ${rehash.id} with REHASH`);
}

/** The sources rows alone: the year of full-grid days and the long archive (made once in .cache/bench), then both benches. */
export async function benchSourcesAlone(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), "bench-sources-"));
  const lines: string[] = [];
  const ctx: BenchContext = { work, say: (l = "") => (lines.push(l), console.log(l)), log: (l) => process.stderr.write(`${l}\n`), figures: {} };
  try {
    const year = listDays("2003-01-01", 365);
    const yearCache = YEAR_CACHE;
    await makeFullGridDays(yearCache, year, ctx.log);
    ctx.say(`make bench (sources rows alone) on ${new Date().toISOString().slice(0, 16)}Z`);
    await benchAnnual(ctx, yearCache, year);
    const longDays = Number(process.env.BENCH_LONG_DAYS ?? 20_000);
    const long = listDays("1950-01-01", longDays + 1);
    const longCache = join(BENCH_CACHE, "long-silo-like");
    await makeSiloLikeWindowDays(longCache, long, [400, 300, 8, 8], ctx.log);
    const longFolder = await linkFolder(join(work, "long"), longCache, long.slice(0, -1));
    ctx.log(`publishing ${longDays} small-window days`);
    const first = runProbe(longFolder, join(work, "dist-long"), false, 1024);
    ctx.say(`a long archive: ${fmt(longDays)} small-window days (8 x 8 cells), open files limited to 1024; published in ${fmt(first.wallMs / 1000, 1)} s`);
    await benchGrownArchive(ctx, longFolder, join(work, "dist-long"), longCache, long[long.length - 1], 1024);
    console.log(JSON.stringify(Object.fromEntries(Object.entries(ctx.figures).map(([k, v]) => [k, Math.round(v * 100) / 100]))));
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
