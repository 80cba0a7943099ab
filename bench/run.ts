// `make bench`: every figure beside a baseline measured in the same run, on this machine, now (machines here are
// shared and noisy, so only ratios travel). Bounded: about 75 minutes (issue 44's rows about 30 of them; more the
// first time, to make the inputs); load only on 127.0.0.1; every dist in a temporary folder, removed at the end. Exits 1 when the
// server answers any error under load. The last line is one JSON object with the figures.
//
// Phases: (1) a year of full-grid SILO-format COGs: decoding alone vs publishing, bytes per day, then adding
// one day (a grown folder, and EXTEND); (2) the server on that dist vs sirv serving the very same answer bytes
// as static files, plain and compressed; (2b) an append season of daily publishes across a month and a year
// close, make prune, and what a cold mirror client reads for one place over a month and a year; (2c) make sync of
// one more full-grid day onto a 365-day mirror (bench/sync.ts); (3) a long
// small-window archive: publish time and memory under an open-file limit of 1024, one more day, start-up,
// memory, the largest answer, and a cold mirror client reading one place over thirty years; (3b) the Zarr view
// (bench/zarr.ts) over the year and the long archive; (3c) GET /api/v1/series (bench/series-route.ts) beside sirv;
// (3d) issue 35's rows (bench/speed.ts; alone with BENCH_ONLY=speed): the computed answers clients ask most beside
// sirv, the year-closing daily publish, start-up and memory, each goal counted on the last line.
// The sources rows
// (bench/sources-bench.ts; alone with BENCH_ONLY=sources) follow phases (1) and (3); the five-variable rows
// (bench/variables-bench.ts, bench/variable-long.ts; alone with BENCH_ONLY=variables) follow phases (1), (2b) and
// (3), each beside its max_temp row; the all-variables row (bench/all-variables.ts; alone with
// BENCH_ONLY=all-variables) follows them: every SILO variable over 14 full-grid days against max_temp alone. (4) operations (bench/
// operations.ts): the whole grid's 413, an overload from a cold page cache, SIGTERM during load, a soak with a
// live publish. BENCH_ONLY=operations (or plans, overload, stop, soak, comma-separated) runs those alone, on
// BENCH_DIST when it names a published year (2003) of full-grid days, else on one published here. (3d) a box over
// years on the series route (bench/series-box.ts; alone with BENCH_ONLY=box): CSV and NetCDF, and the memory of 8
// NetCDF answers of the bound's size at once; (3e) OPeNDAP (bench/opendap.ts; alone with BENCH_ONLY=opendap): a place over
// 20,000 days beside the series route, a full-grid map beside sirv, ncdump -h, CDO over 31 steps, 8 bound-size answers;
// (3f) issue 44's rows: the codecs' A/B (bench/codecs.ts; BENCH_ONLY=codecs), a SILO-like year and a long archive
// published by climate-dist-3's build and this one (bench/format-ab.ts; BENCH_ONLY=format-ab, the long archive's row
// alone: long-ab), and a revision night beside an append-only one (bench/revision-night.ts; BENCH_ONLY=revision-night).

import { MAX_TEMP } from "../format/variables.js";
import { execFileSync } from "node:child_process";
import { cp, mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { findSiloFiles } from "../pipeline/ingest/discover.js";
import { readSiloTiff } from "../pipeline/ingest/geotiff.js";
import { formatBytes } from "../pipeline/progress.js";
import { publish } from "../pipeline/publish/publish.js";
import { makeDataRequest } from "../api/query/request.js";
import type { Window } from "../format/grid.js";
import { dateToMemberPath } from "../sources/silo.js";
import { type Proc, type WrkResult, postScript, readRss, runWrk, startBareNode, startServer, startStatic, variedQueryScript, variedTileScript } from "./load.js";
import { benchAnnual, benchGrownArchive, benchSourcesAlone } from "./sources-bench.js";
import { BENCH_CACHE, YEAR_CACHE, listDays, makeFullGridDays, makeSiloLikeWindowDays } from "./sources.js";
import { addDays, appendSeason, measureMirrorReads, pointQuery, seriesRead } from "./series.js";
import { benchRemote } from "./remote.js";
import { benchSync } from "./sync.js";
import { benchSeriesRoute } from "./series-route.js";
import { benchSeriesBox } from "./series-box.js";
import { type OperationsContext, linkFolder, runProbe, sizeOfTree } from "./tools.js";
import { runOperations } from "./operations.js";
import { benchVariableLong } from "./variable-long.js";
import { makeFullGridVariableDays, makeSmallVariableDays } from "./variable-sources.js";
import { benchVariablesAlone } from "./variables-alone.js";
import { benchAllVariables } from "./all-variables.js";
import { type VariablesContext, benchVariableSeason, benchVariableYear } from "./variables-bench.js";
import { benchZarr } from "./zarr.js";
import { benchSpeed } from "./speed.js";
import { benchOpendap } from "./opendap.js";
import { benchRevisionNight } from "./revision-night.js";
import { benchCodecs } from "./codecs.js";
import { benchFormatAb } from "./format-ab.js";
import { type RevisionContext, benchRevisionLength, benchRevisionSeason } from "./revisions.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const YEAR = listDays("2003-01-01", 365);
const NEXT_DAY = "2004-01-01";
/** 349 days, then a day at a time through a month close and a year close: 2003-01-01 .. 2004-01-20 */
const SEASON = listDays("2003-01-01", 385);
const LONG_DAYS = Number(process.env.BENCH_LONG_DAYS ?? 20_000);
const LONG = listDays("1950-01-01", LONG_DAYS + 1); // the last one is the day added afterwards
const log = (line: string) => process.stderr.write(`${line}\n`);
const lines: string[] = [];
const say = (line = "") => {
  lines.push(line);
  console.log(line);
};
let failures = 0;
/** the goals of the rows that count them (bench/speed.ts): how many, and how many met, for the last line */
let goals = 0;
let goalsMet = 0;
const ONLY = process.env.BENCH_ONLY ?? "";

const dataRequest = (window: Window, start: string, end: string, format: "json" | "csv") => JSON.stringify(makeDataRequest(window, start, end, { format }));

const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

// ---------------------------------------------------------------------------------------------------------------

if (process.env.BENCH_ONLY === "sources") {
  await benchSourcesAlone();
  process.exit(0);
}
if (ONLY === "variables" || ONLY.startsWith("variables-")) process.exit((await benchVariablesAlone(ONLY)) > 0 ? 1 : 0);

const work = await mkdtemp(join(tmpdir(), "bench-"));
if (ONLY === "box") {
  // the box rows alone (bench/series-box.ts), with their own last line of figures
  let failed = 0;
  const boxFigures: Record<string, number> = {};
  say(`bench box on ${new Date().toISOString().slice(0, 16)}Z, ${execFileSync("nproc", { encoding: "utf8" }).trim()} cores, node ${process.version}`);
  try {
    await benchSeriesBox({ work, say, log, figures: boxFigures, fail: (why) => (failed++, say(`  !! ${why}: a goal is not met`)) });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  console.log(JSON.stringify({ ...Object.fromEntries(Object.entries(boxFigures).map(([k, v]) => [k, Math.round(v * 100) / 100])), failures: failed }));
  process.exit(failed > 0 ? 1 : 0);
}
const procs: Proc[] = [];
const figures: Record<string, number> = {};
if (ONLY === "opendap") process.exit((await benchOpendapAlone()) > 0 ? 1 : 0);
if (ONLY === "codecs") process.exit((await benchAlone("codecs", () => benchCodecs({ say, log, figures }))) > 0 ? 1 : 0);
if (ONLY === "format-ab") process.exit((await benchAlone("format-ab", (fail) => benchFormatAb({ work, say, log, figures, fail }))) > 0 ? 1 : 0);
if (ONLY === "mirror-ab") process.exit((await benchAlone("mirror-ab", (fail) => benchFormatAb({ work, say, log, figures, fail }, "mirror"))) > 0 ? 1 : 0);
if (ONLY === "long-ab") process.exit((await benchAlone("long-ab", (fail) => benchFormatAb({ work, say, log, figures, fail }, "long"))) > 0 ? 1 : 0);
if (ONLY === "revision-night") process.exit((await benchAlone("revision-night", (fail) => benchRevisionNight({ work, say, log, figures, fail }))) > 0 ? 1 : 0);
if (ONLY === "revisions" || ONLY.startsWith("revisions-")) process.exit((await benchRevisionsAlone(ONLY)) > 0 ? 1 : 0);
const fail = (why: string) => {
  failures++;
  say(`  !! ${why}: a goal is not met`);
};
const variablesContext = (): VariablesContext => ({ work, say, log, figures, fail });
const goal = (met: boolean, why: string) => {
  goals++;
  if (met) goalsMet++;
  else fail(why);
};
/** The last line: every figure, the goals met of the rows that count them, and the failures. */
const lastLine = () => JSON.stringify({ ...Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, Math.round(v * 100) / 100])), goals_met: goalsMet, goals, failures });
if (ONLY === "speed") {
  // issue 35's rows alone (bench/speed.ts): a year published here, the long archive of a 64 x 64 window
  try {
    say(`bench speed on ${new Date().toISOString().slice(0, 16)}Z, ${execFileSync("nproc", { encoding: "utf8" }).trim()} cores, node ${process.version}, ${SECONDS} s per load run`);
    await benchSpeed({ work, say, log, figures, seconds: SECONDS, goal });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  say(`goals met: ${goalsMet} of ${goals}`);
  console.log(lastLine());
  process.exit(failures > 0 ? 1 : 0);
}
if (ONLY === "all-variables") {
  say(`make bench (the all-variables row) on ${new Date().toISOString().slice(0, 16)}Z`);
  await benchAllVariables(variablesContext());
  await rm(work, { recursive: true, force: true });
  console.log(JSON.stringify({ ...Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, Math.round(v * 100) / 100])), failures }));
  process.exit(failures > 0 ? 1 : 0);
}
const operations = (dist: string, nextDay: string): OperationsContext => ({
  dist,
  nextDay,
  year: YEAR,
  work,
  say,
  log,
  figures,
  fail,
});
if (ONLY) {
  // the operations phases alone, on a year of full-grid days
  try {
    const yearCache = YEAR_CACHE;
    await makeFullGridDays(yearCache, [...YEAR, NEXT_DAY], log);
    let dist = process.env.BENCH_DIST ?? "";
    if (!dist) {
      dist = join(work, "dist-year");
      log("publishing a year of full-grid days (set BENCH_DIST to a published one to skip this)");
      await publish({ sources: await linkFolder(join(work, "year"), yearCache, YEAR), dist, observations: false, log: () => {} });
    }
    say(`bench ${ONLY} on ${new Date().toISOString().slice(0, 16)}Z, ${execFileSync("nproc", { encoding: "utf8" }).trim()} cores, node ${process.version}`);
    await runOperations(operations(dist, await linkFolder(join(work, "next"), yearCache, [NEXT_DAY])), ONLY);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  const rounded = Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, Math.round(v * 100) / 100]));
  console.log(JSON.stringify({ ...rounded, failures }));
  process.exit(failures > 0 ? 1 : 0);
}
try {
  say(`make bench on ${new Date().toISOString().slice(0, 16)}Z, ${execFileSync("nproc", { encoding: "utf8" }).trim()} cores, node ${process.version}, ${SECONDS} s per load run`);

  // (1) A year of full-grid days ----------------------------------------------------------------------------
  const yearCache = YEAR_CACHE;
  await makeFullGridDays(yearCache, SEASON, log);
  await makeFullGridVariableDays(yearCache, SEASON, log);
  const yearFolder = await linkFolder(join(work, "year"), yearCache, YEAR);
  const sample = (await findSiloFiles(yearFolder)).get(MAX_TEMP)!.filter((_, i) => i % 18 === 0);
  const decodeMs: number[] = [];
  for (const f of sample) {
    const t = performance.now();
    await readSiloTiff(f.path, MAX_TEMP.plausible);
    decodeMs.push(performance.now() - t);
  }
  decodeMs.sort((a, b) => a - b);
  const decodeDay = decodeMs[Math.floor(decodeMs.length / 2)];
  const dist = join(work, "dist-year");
  log("publishing a year of full-grid days");
  // in its own process from the bundle, as make publish runs it (in this process its threads would start under tsx,
  // compiling their code first: about 6 s more for a year)
  const year = runProbe(yearFolder, dist);
  const yearMs = year.ms;
  const yearBytes = await sizeOfTree(dist);
  // the operations phases start from the year alone (the days added below would leave their live publish nothing to add)
  const opsDist = join(work, "dist-ops");
  await cp(dist, opsDist, { recursive: true });
  const perDay = yearMs / year.days;
  Object.assign(figures, {
    decode_ms_per_day: decodeDay,
    publish_ms_per_day: perDay,
    publish_ratio: perDay / decodeDay,
    year_publish_s: yearMs / 1000,
    bytes_per_day: yearBytes / year.days,
  });
  const sourceBytes = (await Promise.all(YEAR.map((d) => stat(join(yearCache, dateToMemberPath(d, MAX_TEMP)))))).reduce((n, s) => n + s.size, 0);
  say();
  say("publish: 365 full-grid days (841 x 681), COG DEFLATE + floating-point predictor as SILO ships them");
  say(`  decode one day alone, one core (baseline)   ${fmt(decodeDay, 1)} ms`);
  say(`  publish per day, every core                 ${fmt(perDay, 1)} ms   ratio ${fmt(perDay / decodeDay, 2)}  (goal <= 1.0)`);
  say(`  the year                                    ${fmt(yearMs / 1000, 1)} s   (goal <= 45 s)`);
  say(`  dist per day, everything counted            ${formatBytes(yearBytes / year.days)}   sources per day ${formatBytes(sourceBytes / 365)}  (goal <= 1.2 MB)`);

  const extendCopy = join(work, "dist-year-extend");
  await cp(dist, extendCopy, { recursive: true });
  await linkFolder(yearFolder, yearCache, [NEXT_DAY]);
  const grown = runProbe(yearFolder, dist);
  const nextOnly = await linkFolder(join(work, "next"), yearCache, [NEXT_DAY]);
  const extended = runProbe(nextOnly, extendCopy, true);
  await rm(extendCopy, { recursive: true, force: true });
  Object.assign(figures, { add_day_s: grown.wallMs / 1000, add_day_bytes: grown.bytesWritten, extend_day_s: extended.wallMs / 1000, extend_day_bytes: extended.bytesWritten });
  say("adding one full-grid day to the 365-day version (a new process each: start-up included)");
  say(`  the grown folder (366 files)                ${fmt(grown.wallMs / 1000, 2)} s  decoded ${grown.decoded}, reused ${grown.reused}  ${formatBytes(grown.bytesWritten)} written (day piece ${formatBytes(grown.dayBytesWritten)})  (goal <= 8 s)`);
  say(`  EXTEND=1 with the new file alone            ${fmt(extended.wallMs / 1000, 2)} s  decoded ${extended.decoded}  ${formatBytes(extended.bytesWritten)} written (day piece ${formatBytes(extended.dayBytesWritten)})`);
  const tiffsYear = await benchAnnual({ work, say, log, figures }, yearCache, YEAR);
  await benchVariableYear(variablesContext(), yearCache, YEAR, tiffsYear);
  await benchAllVariables(variablesContext());

  // (2) The server against sirv serving the same bytes ----------------------------------------------------
  const bare = await startBareNode();
  await bare.stop();
  figures.bare_node_start_ms = bare.startMs;
  const server = await startServer(dist);
  procs.push(server);
  const id = grown.id;
  const query = (body: string) => fetch(`${server.url}/api/v1/data/query`, { method: "POST", headers: { "content-type": "application/json" }, body });
  const firstQuery = performance.now();
  await (await query(dataRequest([500, 300, 1, 1], "2003-06-01", "2003-07-01", "json"))).arrayBuffer();
  const firstQueryMs = performance.now() - firstQuery;
  const staticDir = join(work, "static");
  await mkdir(staticDir);
  const workloads: { name: string; file: string; server: (headers: Record<string, string>) => Promise<WrkResult>; key?: string }[] = [];
  const addPost = async (name: string, file: string, body: string, key?: string) => {
    const res = await query(body);
    if (res.status !== 200) throw new Error(`${name}: ${res.status} ${await res.text()}`);
    const bytes = new Uint8Array(await res.arrayBuffer());
    await writeStatic(file, bytes);
    const script = join(work, `${file}.lua`);
    await writeFile(script, postScript(body));
    workloads.push({ name: `${name} (${formatBytes(bytes.byteLength)})`, file, key, server: (h) => runWrk(`${server.url}/api/v1/data/query`, SECONDS, script, h) });
  };
  async function writeStatic(file: string, bytes: Uint8Array): Promise<void> {
    // what a static host serves: the file, and precompressed forms at their best levels
    await writeFile(join(staticDir, file), bytes);
    await writeFile(join(staticDir, `${file}.gz`), gzipSync(bytes, { level: 9 }));
    await writeFile(join(staticDir, `${file}.br`), brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
  }
  // Each shape twice: the same request again and again (served by the answer cache after the first), and a
  // different place and date every time (computed from the pieces: the figures that count).
  const addVaried = async (name: string, file: string, key: string, script: string) => {
    const path = join(work, `${key}.lua`);
    await writeFile(path, script);
    workloads.push({ name, file, key, server: (h) => runWrk(server.url, SECONDS, path, h) });
  };
  const LAND: [[number, number], [number, number]] = [[300, 650], [120, 420]];
  await addPost("point series, 1 cell x 31 days, JSON, repeated", "point.json", dataRequest([500, 300, 1, 1], "2003-06-01", "2003-07-01", "json"), "point_series_repeated");
  await addVaried("  ... another cell and period each request", "point.json", "point_series", variedQueryScript({ width: 1, height: 1, days: 31, format: "json" }, YEAR, ...LAND));
  await addVaried("  ... another cell, period ending on the newest day", "point.json", "point_series_newest", variedQueryScript({ width: 1, height: 1, days: 31, format: "json" }, [...YEAR, NEXT_DAY], ...LAND, true));
  await addPost("50 x 50 cells x 1 day, JSON, repeated", "box50.json", dataRequest([450, 250, 50, 50], "2003-06-15", "2003-06-15", "json"), "small_box_repeated");
  await addVaried("  ... another box and date each request", "box50.json", "small_box", variedQueryScript({ width: 50, height: 50, days: 1, format: "json" }, YEAR, ...LAND));
  await addPost("78 x 78 cells x 1 day, JSON, repeated", "box78.json", dataRequest([450, 250, 78, 78], "2003-06-15", "2003-06-15", "json"), "max_json_repeated");
  await addVaried("  ... another box and date each request", "box78.json", "max_json", variedQueryScript({ width: 78, height: 78, days: 1, format: "json" }, YEAR, ...LAND));
  await addPost("100 x 100 cells x 1 day, CSV, repeated", "box100.csv", dataRequest([450, 250, 100, 100], "2003-06-15", "2003-06-15", "csv"), "max_csv_repeated");
  await addVaried("  ... another box and date each request", "box100.csv", "max_csv", variedQueryScript({ width: 100, height: 100, days: 1, format: "csv" }, YEAR, ...LAND));
  const tilePath = `/api/v1/layers/${id}?tile=20030615-r1-c1`;
  const tile = new Uint8Array(await (await fetch(`${server.url}${tilePath}`)).arrayBuffer());
  await writeStatic("tile.json", tile);
  workloads.push({ name: `one 256 x 256 tile, GET, repeated (${formatBytes(tile.byteLength)})`, file: "tile.json", key: "tile_repeated", server: (h) => runWrk(`${server.url}${tilePath}`, SECONDS, undefined, h) });
  await addVaried("  ... another full tile and date each request", "tile.json", "tile", variedTileScript(id, YEAR, ["r0-c1", "r0-c2", "r1-c1", "r1-c2"]));

  const sirv = await startStatic(staticDir, "point.json");
  procs.push(sirv);
  say();
  say(`server vs sirv serving the same answer bytes as static files (wrk, 1 thread, 10 connections, ${SECONDS} s each)`);
  say("  (repeated: the answer cache serves it after the first; another ... each request: computed from the pieces)");
  say(`  ${"workload".padEnd(58)} ${"server req/s".padStart(12)} ${"p99 ms".padStart(7)} ${"sirv req/s".padStart(11)} ${"ratio".padStart(6)}`);
  for (const encoding of ["identity", "gzip, br"]) {
    const headers: Record<string, string> = encoding === "identity" ? {} : { "Accept-Encoding": "gzip, br" };
    say(`  Accept-Encoding: ${encoding}`);
    for (const w of workloads) {
      const s = await w.server(headers);
      const base = await runWrk(`${sirv.url}/${w.file}`, SECONDS, undefined, headers);
      if (s.errors > 0) {
        failures++;
        say(`  !! ${w.name}: the server answered ${s.errors} errors`);
      }
      const ratio = s.rps / base.rps;
      say(`  ${w.name.padEnd(58)} ${fmt(s.rps).padStart(12)} ${fmt(s.p99Ms, 1).padStart(7)} ${fmt(base.rps).padStart(11)} ${fmt(ratio, 2).padStart(6)}`);
      if (w.key && encoding === "identity") {
        figures[`${w.key}_rps`] = s.rps;
        figures[`${w.key}_p99_ms`] = s.p99Ms;
        figures[`${w.key}_ratio`] = ratio;
        if (w.key === "point_series") figures.static_small_rps = base.rps;
      }
      if (w.key && encoding !== "identity") figures[`${w.key}_br_ratio`] = ratio;
    }
  }
  if (!(await benchRemote(dist, server, join(work, "point_series.lua"), SECONDS, say, figures))) {
    failures++;
    say("  !! the server over a remote dist: a goal is not met");
  }
  const yearRss = readRss(server.pid);
  Object.assign(figures, { startup_ms: server.startMs, first_query_ms: server.startMs + firstQueryMs, rss_mb: yearRss.rssMb, peak_rss_mb: yearRss.peakMb });
  say(`  make serve to first 200: ${fmt(server.startMs)} ms (baseline: a bare node HTTP server ${fmt(bare.startMs)} ms); first query answered ${fmt(firstQueryMs)} ms later`);
  say(`  server memory after the runs: RSS ${fmt(yearRss.rssMb)} MB, peak ${fmt(yearRss.peakMb)} MB (goal <= 150 MB)`);
  await Promise.all(procs.splice(0).map((p) => p.stop()));

  // (2b) An append season, then what a cold mirror client reads -------------------------------------------
  log("an append season of daily publishes");
  const seasonDist = await appendSeason(work, yearCache, SEASON, 349, say, figures);
  say();
  say("a cold mirror client over a static host (make mirror), HTTP requests and bytes read");
  const newest = SEASON[SEASON.length - 1];
  await measureMirrorReads(
    seasonDist,
    [
      { name: "1 cell x 31 days inside a closed year", key: "mirror_point_31", goal: "<= 10 requests", read: pointQuery(500, 300, "2003-06-01", "2003-07-01") },
      { name: "1 cell x 31 days ending on the newest day", key: "mirror_point_31_newest", goal: "<= 10 requests", read: pointQuery(500, 300, addDays(newest, -30), newest) },
      { name: `1 cell x ${SEASON.length} days, a year close inside (client.series)`, key: "mirror_point_385", goal: "<= 40 requests", read: seriesRead(500, 300, SEASON[0], newest) },
    ],
    say,
    figures,
  );

  await benchVariableSeason(variablesContext(), yearCache, SEASON, 349, figures.season_dist_bytes_per_day_pruned);

  // (2c) make sync: a 365-day mirror, then one more day from its origin ------------------------------------
  log("make sync: a 365-day full-grid mirror, then one more day");
  await benchSync(work, yearCache, YEAR, NEXT_DAY, say, figures);

  // (2d) A revision season, and a revision night at 365 and 20,000 days ----------------------------------
  failures += await benchRevisions({ work, yearCache, longCache: join(BENCH_CACHE, "long64-silo-like"), say, log, figures });

  // (3) A long small-window archive -------------------------------------------------------------------
  const longCache = join(BENCH_CACHE, "long-silo-like");
  await makeSiloLikeWindowDays(longCache, LONG, [400, 300, 8, 8], log);
  const longFolder = await linkFolder(join(work, "long"), longCache, LONG.slice(0, -1));
  const longDist = join(work, "dist-long");
  log(`publishing ${LONG_DAYS} small-window days under ulimit -n 1024`);
  const longPublish = runProbe(longFolder, longDist, false, 1024);
  const longBase = join(work, "dist-long-base");
  await cp(longDist, longBase, { recursive: true });
  const longOne = runProbe(await linkFolder(join(work, "long-next"), longCache, LONG.slice(-1)), longDist, true, 1024);
  Object.assign(figures, {
    long_days: LONG_DAYS,
    long_publish_s: longPublish.wallMs / 1000,
    long_publish_peak_mb: longPublish.maxRssMb,
    long_add_day_index_bytes: longOne.bytesWritten - longOne.dayBytesWritten,
  });
  say();
  say(`a long archive: ${fmt(LONG_DAYS)} small-window days (8 x 8 cells), open files limited to 1024`);
  say(`  publish                                     ${fmt(longPublish.wallMs / 1000, 1)} s, peak memory ${fmt(longPublish.maxRssMb)} MB`);
  say(`  one more day (EXTEND)                       ${fmt(longOne.wallMs / 1000, 2)} s, ${formatBytes(longOne.bytesWritten - longOne.dayBytesWritten)} written besides the day piece (goal <= 256 kB)`);
  await benchGrownArchive({ work, say, log, figures }, longFolder, longBase, longCache, LONG[LONG.length - 1], 1024);
  await rm(longBase, { recursive: true, force: true });

  const longServer = await startServer(longDist);
  procs.push(longServer);
  const last = LONG[LONG.length - 1];
  const firstDay = LONG[LONG.length - 31];
  const q0 = performance.now();
  const firstAnswer = await fetch(`${longServer.url}/api/v1/data/query`, { method: "POST", headers: { "content-type": "application/json" }, body: dataRequest([400, 300, 8, 8], firstDay, last, "json") });
  await firstAnswer.arrayBuffer();
  const longFirstQuery = longServer.startMs + (performance.now() - q0);
  const catalog = (await (await fetch(`${longServer.url}/api/v1/datasets`)).json()) as { datasets: { id: string }[] };
  const longId = longOne.id;
  const probes = [
    "/api/v1/datasets",
    `/api/v1/datasets/${longId}`,
    `/api/v1/layers/${longId}`,
    `/api/v1/layers/${longId}?limit=1000`,
    `/api/v1/layers/${longId}?tile=${last.replaceAll("-", "")}-r1-c1`,
  ];
  let largest = { bytes: 0, what: "" };
  for (const path of probes) {
    const res = await fetch(`${longServer.url}${path}`);
    const bytes = (await res.arrayBuffer()).byteLength;
    if (res.status !== 200) failures++;
    if (bytes > largest.bytes) largest = { bytes, what: `GET ${path}` };
  }
  for (const format of ["json", "csv"] as const) {
    const res = await fetch(`${longServer.url}/api/v1/data/query`, { method: "POST", headers: { "content-type": "application/json" }, body: dataRequest([400, 300, 8, 8], firstDay, last, format) });
    const bytes = (await res.arrayBuffer()).byteLength;
    if (res.status !== 200) failures++;
    if (bytes > largest.bytes) largest = { bytes, what: `31-day ${format} query of all 64 cells` };
  }
  const recordBytes = (await (await fetch(`${longServer.url}/api/v1/datasets/${longId}`)).arrayBuffer()).byteLength;
  const longRss = readRss(longServer.pid);
  Object.assign(figures, { long_startup_ms: longServer.startMs, long_first_query_ms: longFirstQuery, long_rss_mb: longRss.rssMb, long_largest_response_bytes: largest.bytes, long_record_bytes: recordBytes });
  say(`  make serve to first 200 ${fmt(longServer.startMs)} ms; to the first answered 31-day query ${fmt(longFirstQuery)} ms (goal <= 2000 ms)`);
  say(`  RSS ${fmt(longRss.rssMb)} MB (goal <= 200 MB); the catalog lists ${catalog.datasets.length} versions; dataset record ${formatBytes(recordBytes)} (goal <= 64 kB)`);
  say(`  largest answer ${formatBytes(largest.bytes)}: ${largest.what}`);
  await measureMirrorReads(
    longDist,
    [{ name: "cold mirror client: 1 cell x 30 years (client.series)", key: "mirror_point_30y", goal: "<= 120 requests and 3 MB", read: seriesRead(403, 303, addDays(last, -10957), last) }],
    say,
    figures,
  );
  await Promise.all(procs.splice(0).map((p) => p.stop()));
  await makeSmallVariableDays(longCache, LONG, [400, 300, 8, 8], log);
  await benchVariableLong(variablesContext(), longCache, LONG, 1024);

  // (3b) The Zarr view over the year and the long archive ----------------------------------------------------
  await benchZarr({ say, log, figures, work, seconds: SECONDS }, dist, longDist);

  // (3c) GET /api/v1/series: a place over a year and over the whole archive, many places and variables (bench/series-route.ts)
  await benchSeriesRoute({ work, say, log, figures, seconds: SECONDS, fail: (why) => (failures++, say(`  !! ${why}: a goal is not met`)) });
  await benchSeriesBox({ work, say, log, figures, fail: (why) => (failures++, say(`  !! ${why}: a goal is not met`)) });
  await benchOpendap({ work, say, log, figures, seconds: SECONDS, fail: (why) => (failures++, say(`  !! ${why}: a goal is not met`)) }, dist, longDist);

  // (3d) Issue 35: the computed answers beside sirv, the year-closing publish, start-up and memory (bench/speed.ts)
  await benchSpeed({ work, say, log, figures, seconds: SECONDS, goal });

  // (3f) Issue 44: the codecs' A/B, the publish beside climate-dist-3's build, a revision night ----------------
  await benchCodecs({ say, log, figures });
  await benchFormatAb({ work, say, log, figures, fail });
  await benchRevisionNight({ work, say, log, figures, fail });

  // (4) Operations ------------------------------------------------------------------------------------------
  await runOperations(operations(opsDist, nextOnly), "operations");
} finally {
  await Promise.all(procs.map((p) => p.stop()));
  await rm(work, { recursive: true, force: true });
}

if (failures > 0) say(`FAILED: ${failures} (goals not met or error answers, each marked !! above)`);
say(`goals met: ${goalsMet} of ${goals} (the rows of bench/speed.ts)`);
console.log(lastLine());
process.exit(failures > 0 ? 1 : 0);

/** The revision rows (bench/revisions.ts): the season, then a night onto a short and a long archive (`only`: one of them). */
async function benchRevisions(ctx: RevisionContext, only = ""): Promise<number> {
  let failed = 0;
  if (only !== "revisions-length") {
    log("a revision season: a full-grid year, then nights of make update against nginx as the bucket");
    failed += await benchRevisionSeason(ctx);
  }
  if (only !== "revisions-season") failed += await benchRevisionLength(ctx);
  return failed;
}

/** BENCH_ONLY=revisions (or revisions-season, revisions-length): the revision rows alone, with their own last line of figures. */
async function benchRevisionsAlone(only: string): Promise<number> {
  try {
    say(`bench ${only} on ${new Date().toISOString().slice(0, 16)}Z, ${execFileSync("nproc", { encoding: "utf8" }).trim()} cores, node ${process.version}`);
    const failed = await benchRevisions({ work, yearCache: YEAR_CACHE, longCache: join(BENCH_CACHE, "long64-silo-like"), say, log, figures }, only);
    console.log(JSON.stringify({ ...figures, failures: failed }));
    return failed;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** BENCH_ONLY=opendap: the OPeNDAP rows alone (bench/opendap.ts) over 62 full-grid days and the 20,000-day archive, published here. */
async function benchOpendapAlone(): Promise<number> {
  let failed = 0;
  try {
    say(`bench opendap on ${new Date().toISOString().slice(0, 16)}Z, ${execFileSync("nproc", { encoding: "utf8" }).trim()} cores, node ${process.version}, ${SECONDS} s per load run`);
    const yearCache = YEAR_CACHE;
    const days = YEAR.slice(0, 62);
    await makeFullGridDays(yearCache, days, log);
    const yearDist = join(work, "dist-dap-year");
    log(`publishing ${days.length} full-grid days`);
    runProbe(await linkFolder(join(work, "dap-year"), yearCache, days), yearDist);
    const longCache = join(BENCH_CACHE, "long64-silo-like");
    await makeSiloLikeWindowDays(longCache, LONG, [400, 300, 64, 64], log);
    const longDist = join(work, "dist-dap-long");
    log(`publishing ${LONG_DAYS} days of 64 x 64 cells`);
    runProbe(await linkFolder(join(work, "dap-long"), longCache, LONG.slice(0, -1)), longDist);
    await benchOpendap({ work, say, log, figures, seconds: SECONDS, fail: (why) => (failed++, say(`  !! ${why}: a goal is not met`)) }, yearDist, longDist);
    console.log(JSON.stringify({ ...figures, failures: failed }));
    return failed;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** A phase alone (BENCH_ONLY=<name>), with its own last line of figures: how many goals it missed. */
async function benchAlone(name: string, phase: (fail: (why: string) => void) => Promise<void>): Promise<number> {
  let failed = 0;
  try {
    say(`bench ${name} on ${new Date().toISOString().slice(0, 16)}Z, ${execFileSync("nproc", { encoding: "utf8" }).trim()} cores, node ${process.version}`);
    await phase((why) => (failed++, say(`  !! ${why}: a goal is not met`)));
    console.log(JSON.stringify({ ...figures, failures: failed }));
    return failed;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
