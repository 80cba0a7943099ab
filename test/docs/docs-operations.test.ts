// The examples of docs/operating.md, docs/mirrors.md and docs/performance.md, run as written in a checkout of their
// own: the cron table's jobs as cron runs them (yesterday's files from a local stand-in for SILO's bucket), the
// systemd units checked by systemd-analyze and their commands run as systemd would, the servers started as shown
// and stopped by their signal, make sync and rclone against nginx and a local remote. Only the documented addresses
// and paths are replaced (/srv/... by temp folders, the origin and CDN by nginx). The bench's commands run for many
// minutes: they are checked instead (the scripts, and the variables and rows they name, exist).

import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { VARIABLES } from "../../format/variables.js";
import { dateToDayNumber, dayNumberToDate } from "../../format/dates.js";
import { lockDist } from "../../pipeline/store/lock.js";
import { docBlock, localize, REPO } from "./doc-blocks.js";
import { freePort, makeCheckout, READER_ENV, runBash, startUntilAnswered } from "./doc-run.js";
import { readCronTable, readUnit, unitCommand, unitEnvironment } from "./doc-units.js";
import { freshDirs, makeWorkDir } from "../support/helpers.js";
import { type Nginx, startNginx } from "../support/nginx.js";
import { type SiloBucket, startSiloBucket } from "../support/silo-bucket.js";

const fresh = freshDirs(makeWorkDir("docs-operations"));
const run = promisify(execFile);
const checkout = makeCheckout(fresh("srv-climate"));
/** The hosts' folders of the docs, here: /srv/climate is the checkout, the others temp folders. */
const SRV = { "/srv/climate": checkout, "/srv/silo": fresh("srv-silo"), "/srv/dist": fresh("srv-dist"), "/srv/mirror": fresh("srv-mirror") };
let bucket: SiloBucket;
/** nginx serving a folder whose climate/ is /srv/dist: the origin (https://origin.example/climate/) and the CDN of the docs */
let origin: Nginx;
const siloEnv = () => ({ SILO_BASE_URL: bucket.dailyBaseUrl, SILO_ANNUAL_BASE_URL: bucket.annualBaseUrl });
/** The day the cron job and the unit fetch, as their `date -d yesterday` gives it (the machine's time zone) */
const yesterday = execFileSync("date", ["-d", "yesterday", "+%F"], { encoding: "utf8" }).trim();

function catalogIds(dist: string): string[] {
  return JSON.parse(readFileSync(join(dist, "catalog.json"), "utf8")).candidates.map((c: { id: string }) => c.id).sort();
}

/** Every file under dir, relative to it, with its size, sorted. */
function listTree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => `${join(e.parentPath, e.name).slice(dir.length + 1)} ${readFileSync(join(e.parentPath, e.name)).length}`)
    .sort();
}

/** The names of the unit files the docs' blocks say they are (their first line: # /etc/systemd/system/<name>). */
async function writeUnits(dir: string, units: Record<string, string>): Promise<string[]> {
  mkdirSync(dir, { recursive: true });
  const files = Object.entries(units).map(([name, text]) => join(dir, /^# \/etc\/systemd\/system\/(\S+)\n/.exec(text)?.[1] ?? name));
  await Promise.all(files.map((file, i) => writeFile(file, Object.values(units)[i])));
  return files;
}

/** systemd-analyze verify of unit files: no complaint at all (it exits 0 on unknown keys, with a warning). */
async function verifyUnits(files: string[]): Promise<void> {
  const { stderr, stdout } = await run("systemd-analyze", ["verify", ...files]);
  assert.is(stderr + stdout, "", files.join(", "));
}

const operating = suite("docs: operating.md, mirrors.md, performance.md");
operating.before(async () => {
  bucket = await startSiloBucket(fresh("bucket"));
  const root = fresh("origin");
  mkdirSync(root);
  symlinkSync(SRV["/srv/dist"], join(root, "climate"));
  origin = await startNginx(root);
});
operating.after(async () => {
  await bucket.close();
  await origin.stop();
});

/** yesterday, `days` days back (the first day of a revision window of that many days ending yesterday), as YYYYMMDD */
const daysBack = (days: number) => dayNumberToDate(dateToDayNumber(yesterday) - days).replaceAll("-", "");

operating("operating.md - the cron table's jobs run as cron runs them: make update of an empty folder fetches and publishes each revision window up to yesterday, then prune", async () => {
  const { env, jobs } = readCronTable(docBlock("docs/operating.md", "# /etc/cron.d/climate"));
  assert.equal(jobs.map((j) => [j.schedule.join(" "), j.user]), [["15 7 * * *", "climate"], ["45 7 * * 0", "climate"]]);
  // cron's environment: the table's variables, HOME, LOGNAME and SHELL; the bucket's address is the test's
  const cronEnv = { ...env, HOME: READER_ENV.HOME, LOGNAME: "climate", SHELL: "/bin/sh", ...siloEnv() };
  // every variable's revision window (3,596 files) fetched and published: minutes on a shared machine
  const runJob = (command: string) => run("/bin/sh", ["-c", localize(command, SRV, { every: false })], { env: cronEnv, timeout: 600_000 });
  const update = await runJob(jobs[0].command);
  await runJob(jobs[1].command);
  // SILO's revision windows: 366 days of rain, 190 of the others, ending yesterday
  const end = yesterday.replaceAll("-", "");
  assert.equal(catalogIds(SRV["/srv/dist"]).filter((id) => id.startsWith("silo-")).map((id) => id.split("-").slice(0, -1).join("-")),
    VARIABLES.map((v) => `${v.datasetKey}-${daysBack(v.revisionDays - 1)}-${end}`).sort());
  // every variable's window: 366 days of rain and 190 of each of the 17 others
  assert.match(update.stdout, new RegExp(`^update of /.* to \\d{4}-\\d\\d-\\d\\d: ${VARIABLES.reduce((n, v) => n + v.revisionDays, 0)} files downloaded`, "m"));
});

operating("operating.md - the mirror's cron job keeps /srv/mirror in step with the origin (FROM without a closing slash)", async () => {
  const { env, jobs } = readCronTable(docBlock("docs/operating.md", "make sync FROM=https://data.example.org/climate DIST=/srv/mirror"));
  assert.equal(jobs.map((j) => [j.schedule.join(" "), j.user]), [["*/10 * * * *", "mirror"]]);
  const command = localize(jobs[0].command, { ...SRV, "https://data.example.org/climate": `${origin.url}climate` }, { every: false });
  await run("/bin/sh", ["-c", command], { env: { ...READER_ENV, ...env, SHELL: "/bin/sh" }, timeout: 120_000 });
  assert.equal(await readFile(join(SRV["/srv/mirror"], "catalog.json"), "utf8"), await readFile(join(SRV["/srv/dist"], "catalog.json"), "utf8"));
});

operating("operating.md - the publish service and timer verify with systemd-analyze; ExecStart runs as systemd would run it", async () => {
  const service = docBlock("docs/operating.md", "# /etc/systemd/system/climate-publish.service");
  const timer = docBlock("docs/operating.md", "# /etc/systemd/system/climate-publish.timer");
  await verifyUnits(await writeUnits(fresh("units"), { "climate-publish.service": service, "climate-publish.timer": timer }));
  const onCalendar = readUnit(timer).get("Timer")!.get("OnCalendar")!;
  for (const spec of onCalendar) await run("systemd-analyze", ["calendar", spec]);
  const settings = readUnit(service).get("Service")!;
  const argv = unitCommand(settings.get("ExecStart")![0]);
  const env = { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", HOME: READER_ENV.HOME, ...unitEnvironment(settings.get("Environment")!.map((e) => localize(e, SRV, { every: false }))), ...siloEnv() };
  // the same day as the cron job's run, into the same folders: every file a 304, nothing new to publish
  const { stdout } = await run(argv[0], argv.slice(1), { cwd: localize(settings.get("WorkingDirectory")![0], SRV, { every: false }), env, timeout: 600_000 });
  assert.match(stdout, /: 0 files downloaded \(0 B\)$/m);
  const rows = stdout.split("\n").filter((l) => /^ {2}[a-z_]+ +\d{4}-/.test(l)).map((l) => l.trim().split(/\s+/).slice(2).join(" "));
  assert.equal(rows, VARIABLES.map((v) => `0 0 ${v.revisionDays} 0`), stdout);
  assert.match(stdout, /^ {2}nothing new to publish: .* already holds silo-/m);
});

operating("operating.md - the server's unit verifies; its ExecStart serves, and KillSignal stops it with exit 0 within TimeoutStopSec", async () => {
  const unit = docBlock("docs/operating.md", "ExecStart=/usr/bin/node --max-semi-space-size=4");
  await verifyUnits(await writeUnits(fresh("units"), { "climate-server.service": unit }));
  const settings = readUnit(unit).get("Service")!;
  const port = await freePort();
  const environment = settings.get("Environment")!.map((e) => localize(e, { "/srv/climate/dist": SRV["/srv/dist"], "PORT=8080": `PORT=${port}` }));
  const variables = unitEnvironment(environment);
  assert.is(variables.HOST, "0.0.0.0");
  const env = { PATH: READER_ENV.PATH, ...variables };
  const argv = unitCommand(settings.get("ExecStart")![0]);
  const server = await startUntilAnswered(argv, `http://127.0.0.1:${port}/api/v1/datasets`, { cwd: localize(settings.get("WorkingDirectory")![0], SRV, { every: false }), env });
  const started = Date.now();
  const code = await server.stop(settings.get("KillSignal")![0] as NodeJS.Signals);
  assert.is(code, 0, server.output());
  assert.ok(Date.now() - started < Number(settings.get("TimeoutStopSec")![0]) * 1000);
  assert.match(server.output(), /stopped: every begun request answered/);
});

operating("operating.md and mirrors.md - servers over a bucket: the command, as shown on each page, serves the CDN's dist", async () => {
  const block = docBlock("docs/mirrors.md", "node build/server.js   # on each machine");
  assert.is(docBlock("docs/operating.md", "node build/server.js   # on each machine"), block, "both pages show the same command");
  const port = await freePort();
  const command = localize(block, { "https://cdn.example.org/climate/": `${origin.url}climate/`, "PORT=8080": `PORT=${port}` });
  const server = await startUntilAnswered(["bash", "-c", command], `http://127.0.0.1:${port}/api/v1/datasets`, { cwd: checkout, env: { ...READER_ENV, LOG: "0" } });
  try {
    const series = await fetch(`http://127.0.0.1:${port}/api/v1/series?lat=-23.7&lon=133.87&start=${yesterday}&end=${yesterday}`);
    assert.is(series.status, 200);
    assert.match(await series.text(), new RegExp(`^longitude,latitude,date,air_temperature_max\n133.85,-23.7,${yesterday},[0-9.]+\n$`));
    assert.ok((await origin.requests()).some((line) => line.startsWith("GET /climate/objects/")), "the objects came from the CDN");
  } finally {
    assert.is(await server.stop(), 0, server.output());
  }
});

operating("mirrors.md - make sync makes and updates a mirror, make verify checks it; the rclone commands copy it to a bucket, objects first", async () => {
  const mirror = fresh("mirror");
  const srv = { ...SRV, "/srv/mirror": mirror, "https://origin.example/climate/": `${origin.url}climate/` };
  const first = await runBash(localize(docBlock("docs/mirrors.md", "make verify DIST=/srv/mirror"), srv, { every: false }), { cwd: checkout });
  assert.match(first.stdout, /: all verified$/m);
  // rclone's "remote:" is a remote of type local named remote (as rclone config would make it), so remote:bucket/climate
  // is a folder under the working directory
  const config = join(fresh("rclone"), "rclone.conf");
  mkdirSync(join(config, ".."));
  await writeFile(config, "[remote]\ntype = local\n");
  await runBash(localize(docBlock("docs/mirrors.md", "rclone copyto /srv/mirror/catalog.json"), srv, { every: false }), { cwd: checkout, env: { ...READER_ENV, RCLONE_CONFIG: config } });
  const bucketDir = join(checkout, "bucket", "climate");
  assert.equal(listTree(bucketDir), listTree(mirror).filter((f) => !f.startsWith(".")));
});

operating("operating.md - the lock's JSON line shows the fields a writer records, in order", async () => {
  const shown = JSON.parse(docBlock("docs/operating.md", "{\"writer\":\"publish\",\"host\":"));
  const dist = fresh("lock-dist");
  mkdirSync(dist);
  const release = await lockDist(dist, "publish");
  try {
    const written = JSON.parse(await readFile(join(dist, ".publish.lock"), "utf8"));
    assert.equal(Object.keys(shown), Object.keys(written));
    assert.equal(Object.values(shown).map((v) => typeof v), Object.values(written).map((v) => typeof v));
  } finally {
    await release();
  }
  // the command a make publish of /srv/dist runs, as the holder describes it
  const { stdout } = await run("make", ["-n", "publish", "DIST=/srv/dist", "SOURCES=/srv/silo"], { cwd: checkout, env: READER_ENV });
  assert.is(shown.command, `/usr/bin/${stdout.replace(/\\\n\s*/g, " ").replace(/"/g, "").replace(/\s+/g, " ").trim().replace("build/cli.js", "/srv/climate/build/cli.js")}`);
});

operating("performance.md - the bench commands name scripts, variables and rows that exist (they run for many minutes: not run here)", async () => {
  const ab = docBlock("docs/performance.md", "bench/ab.ts");
  const abSource = await readFile(join(REPO, "bench", "ab.ts"), "utf8");
  for (const name of ab.match(/\b[A-Z][A-Z_]+(?==)/g)!) assert.ok(abSource.includes(`process.env.${name}`), `bench/ab.ts reads ${name}`);
  const rows = docBlock("docs/performance.md", "BENCH_ONLY=variables node_modules/.bin/tsx bench/run.ts");
  const alone = await readFile(join(REPO, "bench", "variables-alone.ts"), "utf8");
  for (const only of rows.match(/BENCH_ONLY=(\S+)/g)!.map((m) => m.slice("BENCH_ONLY=".length))) {
    for (const row of only.split(",")) assert.ok(row === "variables" || alone.includes(`wanted("${row.replace(/^variables-/, "")}")`), `bench knows ${row}`);
  }
  assert.ok(alone.includes("process.env.BENCH_LONG_DAYS"));
  for (const script of [...ab.matchAll(/\S+\.ts\b/g), ...rows.matchAll(/\S+\.ts\b/g)]) assert.ok(existsSync(join(REPO, script[0])), script[0]);
});

operating.run();
