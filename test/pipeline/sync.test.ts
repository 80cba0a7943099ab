// make sync against a real static host (nginx): a mirror made from nothing and updated after one more publish
// upstream downloads only that publish's files, verifies under make verify after each, does nothing when nothing
// changed, refuses a tampered upstream object naming its URL with its catalog.json as it was, completes after a
// SIGKILL, and applies an upstream prune only once the pruned catalog is in place; docs/mirrors.md's rclone commands keep a
// folder standing in for a bucket in step.

import { execFile, spawn } from "node:child_process";
import { readFile, readdir, stat, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { dateToDayNumber, listDates } from "../../format/dates.js";
import type { Manifest } from "../../format/catalog.js";
import type { Window } from "../../format/grid.js";
import { CATALOG_FILE, type Ref, objectPath } from "../../format/objects.js";
import { SyncError } from "../../pipeline/errors.js";
import { prune } from "../../pipeline/commands/prune.js";
import { publish } from "../../pipeline/publish/publish.js";
import { type SyncOptions, type SyncReport, sync } from "../../pipeline/commands/sync.js";
import { verifyDist } from "../../pipeline/commands/verify.js";
import { startMirrorServer } from "../../client/mirror-server.js";
import { type Nginx, startNginx } from "../support/nginx.js";
import { freshDirs, makeWorkDir, writeSiloDays } from "../support/helpers.js";
import { docBlock } from "../docs/doc-blocks.js";
import { flipByte } from "../support/server-fixture.js";
import { childArgs } from "../support/child-bundles.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const WORK = makeWorkDir("sync-test");
const freshDir = freshDirs(WORK);
const HOUR = 3_600_000;

/** 30,000 cells of little-compressible tenths: day pieces of some tens of kB, so a slow host is slow. */
const WINDOW: Window = [200, 200, 200, 150];
const DATES = listDates("2004-01-01", "2004-01-20");

/** Each date's cells, scattered by the cell's place in the window and the day so that they compress little. */
function cells(col: number, row: number, date: string): number {
  const i = (row - WINDOW[1]) * WINDOW[2] + (col - WINDOW[0]);
  return Math.fround((((i * 7919 + dateToDayNumber(date) * 104729) % 500) + 50) / 10);
}

async function listTree(root: string, dir = root): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await listTree(root, p)));
    else out.push(relative(root, p));
  }
  return out.sort();
}

const readPointer = async (dist: string) => JSON.parse(await readFile(join(dist, CATALOG_FILE), "utf8")) as { manifest: Ref };
const readManifest = async (dist: string, ref: Ref) => JSON.parse(await readFile(join(dist, objectPath(ref.sha256, "json")), "utf8")) as Manifest;
const quietly = (sources: string, dist: string, publishedAt: string) => publish({ sources, dist, observations: false, log: () => {}, publishedAt });

/** The paths the newest publish of `dist` added, and its manifest's own path: what a mirror one publish behind lacks. */
async function newestFiles(dist: string): Promise<string[]> {
  const ref = (await readPointer(dist)).manifest;
  return [...(await readManifest(dist, ref)).files.map((f) => f.path), objectPath(ref.sha256, "json")].sort();
}

async function assertVerified(dist: string): Promise<void> {
  const report = await verifyDist(dist);
  assert.equal([report.problems, report.unlisted, report.versions.filter((v) => v.problems.length > 0)], [[], [], []]);
  assert.ok(report.versions.length > 0);
}

/** Every file of the origin but its pending list is in the mirror with the same bytes. */
async function assertSameFiles(origin: string, mirror: string): Promise<void> {
  const files = (await listTree(origin)).filter((f) => !f.startsWith("."));
  assert.equal((await listTree(mirror)).filter((f) => !f.startsWith(".")), files);
  for (const f of files) assert.ok((await readFile(join(origin, f))).equals(await readFile(join(mirror, f))), f);
}

const S = { origin: "", folder: "", mirror: "", nginx: null as Nginx | null, day: 0 };
const syncMirror = (options: Partial<SyncOptions> = {}): Promise<SyncReport> => sync({ from: S.nginx!.url, dist: S.mirror, backoffMs: 10, ...options });

/** One more day published upstream from the grown folder. */
async function publishNextDay(): Promise<void> {
  const date = DATES[10 + S.day++];
  await writeSiloDays(S.folder, [date], WINDOW, cells);
  await quietly(S.folder, S.origin, `2026-02-${String(S.day).padStart(2, "0")}T00:00:00Z`);
}

const mirrorSuite = suite("sync from nginx");

mirrorSuite.before(async () => {
  S.origin = freshDir("origin");
  S.folder = freshDir("sources");
  S.mirror = freshDir("mirror");
  await writeSiloDays(S.folder, DATES.slice(0, 10), WINDOW, cells);
  await quietly(S.folder, S.origin, "2026-01-31T00:00:00Z");
  S.nginx = await startNginx(S.origin);
});

mirrorSuite.after(async () => {
  await S.nginx?.stop();
});

mirrorSuite("sync - into an empty folder: every file of the origin, catalog.json written last; make verify passes", async () => {
  const report = await syncMirror();
  // the origin's writers' files (its lock, the publish's memory of its sources) are no files of the dist
  const files = (await listTree(S.origin)).filter((f) => !f.startsWith("."));
  assert.equal([report.changed, report.newChain, report.held, report.pruned], [true, false, 0, null]);
  assert.equal(report.downloaded.map((f) => f.path).sort(), files.filter((f) => f !== CATALOG_FILE));
  await assertSameFiles(S.origin, S.mirror);
  await assertVerified(S.mirror);
  const catalogTime = (await stat(join(S.mirror, CATALOG_FILE))).mtimeMs;
  for (const f of files) assert.ok((await stat(join(S.mirror, f))).mtimeMs <= catalogTime, `${f} was placed before catalog.json`);
  // one GET each, and nothing else
  const asked = (await S.nginx!.requests()).map((line) => line.split(" ").slice(0, 3).join(" "));
  assert.equal(asked.sort(), files.map((f) => `GET /${f} 200`).sort());
});

mirrorSuite("sync - after one more day upstream: only that publish's files and its manifest are downloaded; make verify passes", async () => {
  await publishNextDay();
  const before = (await S.nginx!.requests()).length;
  const report = await syncMirror();
  const expected = await newestFiles(S.origin);
  assert.equal(report.downloaded.map((f) => f.path).sort(), expected);
  assert.equal([report.manifests, report.newChain, report.requests], [1, false, expected.length + 1]);
  assert.is(report.bytes, (await readFile(join(S.mirror, CATALOG_FILE))).length + report.downloaded.reduce((n, f) => n + f.size, 0));
  const asked = (await S.nginx!.requests()).slice(before).map((line) => line.split(" ")[1].slice(1));
  assert.equal(asked.sort(), [CATALOG_FILE, ...expected].sort());
  await assertSameFiles(S.origin, S.mirror);
  await assertVerified(S.mirror);
});

mirrorSuite("sync - with nothing new upstream: reads catalog.json alone, downloads and writes nothing", async () => {
  // but the lock file: every writer describes itself there while it holds the lock
  const files = (await listTree(S.mirror)).filter((f) => f !== ".publish.lock");
  const times = await Promise.all(files.map(async (f) => (await stat(join(S.mirror, f))).mtimeMs));
  const before = (await S.nginx!.requests()).length;
  const report = await syncMirror();
  assert.equal([report.changed, report.downloaded, report.requests, report.manifests], [false, [], 1, 0]);
  assert.equal((await S.nginx!.requests()).slice(before).map((l) => l.split(" ")[1]), ["/catalog.json"]);
  assert.equal((await listTree(S.mirror)).filter((f) => f !== ".publish.lock"), files);
  assert.equal(await Promise.all(files.map(async (f) => (await stat(join(S.mirror, f))).mtimeMs)), times);
});

mirrorSuite("sync - a tampered upstream object is refused naming its URL; the mirror's catalog.json stays as it was", async () => {
  await publishNextDay();
  const catalog = await readFile(join(S.mirror, CATALOG_FILE));
  const piece = (await newestFiles(S.origin)).find((f) => f.endsWith(".day"))!;
  await flipByte(join(S.origin, piece), 100);
  let refused: unknown = null;
  await syncMirror({ retries: 1 }).catch((err) => (refused = err));
  assert.instance(refused, SyncError);
  const err = refused as SyncError;
  assert.is(err.file, `${S.nginx!.url}${piece}`);
  assert.match(err.reason, /^does not match its sha256 [0-9a-f]{64} \(\d+ bytes\): the host serves a damaged or tampered copy; it was not placed;/);
  assert.ok((await readFile(join(S.mirror, CATALOG_FILE))).equals(catalog), "catalog.json as it was");
  assert.not.ok((await listTree(S.mirror)).includes(piece));
  // the mirror still verifies: the verified files this sync placed are noted as in no manifest, never a problem
  const report = await verifyDist(S.mirror);
  assert.equal([report.problems, report.versions.filter((v) => v.problems.length > 0)], [[], []]);
  // a tampered manifest is refused the same way, before any file is read
  await flipByte(join(S.origin, piece), 100);
  const manifest = objectPath((await readPointer(S.origin)).manifest.sha256, "json");
  const text = await readFile(join(S.origin, manifest), "utf8");
  await writeFile(join(S.origin, manifest), text.replace('"files":[', '"files":[ '));
  const second = (await syncMirror({ retries: 0 }).then(() => null, (e: unknown) => e)) as SyncError;
  assert.instance(second, SyncError);
  assert.is(second.file, `${S.nginx!.url}${manifest}`);
  assert.match(second.reason, /^does not match its sha256 [0-9a-f]{64} \(\d+ bytes\): the host serves a damaged or tampered copy;/);
  await writeFile(join(S.origin, manifest), text);
  await syncMirror();
  await assertSameFiles(S.origin, S.mirror);
  await assertVerified(S.mirror);
});

mirrorSuite("sync - killed with SIGKILL mid-way and run again (make sync's command): completes, and verifies", async () => {
  const slow = await startNginx(S.origin, { limitRate: "2k" });
  try {
    for (let i = 0; i < 3; i++) await publishNextDay();
    const catalog = await readFile(join(S.mirror, CATALOG_FILE));
    // node itself, not the tsx wrapper: SIGKILL must reach the process that syncs (bundled first when make test runs,
    // test/support/child-bundles.ts)
    const cli = await childArgs(join(REPO, "pipeline/cli.ts"), "pipeline/publish");
    const child = spawn(process.execPath, [...cli, "sync", "--from", slow.url, "--dist", S.mirror], { cwd: REPO, stdio: "ignore" });
    const exited = new Promise<NodeJS.Signals | null>((done) => child.once("exit", (_code, signal) => done(signal)));
    // killed once it has received a file besides catalog.json and the three manifests, while receiving others
    // (at 2 kB/s, sent 1 kB at a time, a file of the few kB these are cannot complete between this look and the kill)
    for (;;) {
      await new Promise((r) => setTimeout(r, 20));
      const receiving = (await readdir(join(S.mirror, ".sync")).catch(() => [])).some((f) => f.endsWith(".part"));
      if (receiving && (await slow.requests()).length >= 5) break;
    }
    child.kill("SIGKILL");
    assert.is(await exited, "SIGKILL");
    assert.ok((await readFile(join(S.mirror, CATALOG_FILE))).equals(catalog), "the killed sync never replaced catalog.json");
    const leftovers = await listTree(join(S.mirror, ".sync")).catch(() => []);
    assert.ok(leftovers.length > 0, "it was receiving files when killed");
    const { stdout } = await promisify(execFile)(process.execPath, [...cli, "sync", "--from", S.nginx!.url, "--dist", S.mirror], { cwd: REPO });
    assert.match(stdout, /^synced .* from http:\/\/127\.0\.0\.1:\d+\/: \d+ files placed \(.*\), \d+ already here, 3 publish manifests read, catalog\.json replaced last/, stdout);
    await assertSameFiles(S.origin, S.mirror);
    await assertVerified(S.mirror);
  } finally {
    await slow.stop();
  }
});

mirrorSuite("sync - an upstream prune reaches the mirror after its new catalog: unreachable files wait out the grace period, then go", async () => {
  const now = new Date("2026-03-01T00:00:00Z");
  // the origin keeps its newest version alone and deletes what it no longer reaches at once
  await prune({ dist: S.origin, rule: { keepDays: 0, keepIds: new Set(), dropVersions: true }, graceMs: 0, now });
  const first = await syncMirror({ now, graceMs: HOUR });
  assert.equal([first.changed, first.newChain, first.downloaded.length > 0], [true, true, true]);
  assert.ok(first.pruned && first.pruned.waiting.files > 0 && first.pruned.deleted.files === 0, JSON.stringify(first.pruned));
  assert.ok((await readFile(join(S.mirror, CATALOG_FILE))).equals(await readFile(join(S.origin, CATALOG_FILE))));
  const waiting = await verifyDist(S.mirror);
  assert.equal([waiting.problems, waiting.unlisted, waiting.pruned.length], [[], [], first.pruned!.waiting.files]);
  // the next sync after the grace period deletes them: the mirror holds what the origin holds
  await publishNextDay();
  const later = await syncMirror({ now: new Date(now.getTime() + 2 * HOUR), graceMs: HOUR });
  assert.equal([later.newChain, later.pruned?.deleted.files, later.pruned?.waiting.files], [false, first.pruned!.waiting.files, 0]);
  await assertSameFiles(S.origin, S.mirror);
  await assertVerified(S.mirror);
});

mirrorSuite("sync - from make mirror's host, which labels the .br copies Content-Encoding br: every file arrives as stored", async () => {
  const host = await startMirrorServer({ dist: S.origin });
  try {
    const copy = freshDir("from-sirv");
    const report = await sync({ from: host.url, dist: copy });
    assert.ok(report.downloaded.some((f) => f.path.endsWith(".json.br")), "the dist has .br copies");
    await assertSameFiles(S.origin, copy);
    await assertVerified(copy);
  } finally {
    await host.close();
  }
});

mirrorSuite("sync - docs/mirrors.md's rclone commands keep a folder standing in for a bucket in step: objects first, catalog.json last", async () => {
  const block = docBlock("docs/mirrors.md", "rclone copyto /srv/mirror/catalog.json");
  const bucket = freshDir("bucket");
  const script = block
    .split("\n")
    .filter((line) => line.startsWith("rclone "))
    .join("\n")
    .replaceAll("/srv/mirror", S.mirror)
    .replaceAll("remote:bucket/climate", bucket);
  await promisify(execFile)("bash", ["-e", "-c", script], { env: { ...process.env, RCLONE_CONFIG: join(WORK, "rclone.conf") } });
  await assertSameFiles(S.mirror, bucket);
  await assertVerified(bucket);
});

mirrorSuite.run();
