// make upgrade (docs/publishing.md "Upgrading a dist"): a climate-dist-2 dist (test/fixtures/dist-2, written by the
// pipeline of commit 83d2afe) refused by the server with the command to run, then upgraded in place by the real
// command: every version kept with its id, hash and publish time, every cell as published, publishes build on it,
// and make prune deletes the old objects.

import { execFile } from "node:child_process";
import { cp, readFile, readdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { Window } from "../../format/grid.js";
import { writeSiloTiff } from "../../pipeline/ingest/geotiff.js";
import { verifyDist } from "../../pipeline/commands/verify.js";
import { docBlock } from "../docs/doc-blocks.js";
import { makeCheckout, runBash } from "../docs/doc-run.js";
import { freshDirs, makeWorkDir, publishSilently } from "../support/helpers.js";
import { readRecords, request, withServer } from "../support/server-fixture.js";

const ROOT = resolve(import.meta.dirname, "../..");
const FIXTURE = join(ROOT, "test", "fixtures", "dist-2");
const freshDir = freshDirs(makeWorkDir("upgrade-test"));
const run = promisify(execFile);

// what test/fixtures/make-dist-2.ts wrote: 8 x 8 cells, five days over a year's close, 2003-12-30 revised in a corner
const WINDOW: Window = [436, 272, 8, 8];
const DATES = ["2003-12-29", "2003-12-30", "2003-12-31", "2004-01-01", "2004-01-02"];
const OLD_IDS = [
  "silo-rain-20031229-20040102-c09a4c8007c0d52e",
  "silo-rain-20031229-20040102-d9370ef8175ddf62",
  "silo-tmax-20031229-20040102-1b5ebd2f66f0c32d",
  "silo-tmax-20031229-20040102-a3245b8a9fb3147c",
];

function value(variable: string, date: string, col: number, row: number, revised: boolean): number {
  if (col === WINDOW[0] + 7 && row === WINDOW[1] + 7) return NaN;
  const day = Number(date.slice(8));
  const base = variable === "max_temp" ? 300 + ((col * 7 + row * 3 + day * 11) % 90) : (col * 5 + row * 13 + day * 17) % 120;
  const patch = revised && date === "2003-12-30" && col < WINDOW[0] + 3 && row < WINDOW[1] + 3 ? 5 : 0;
  return (base + patch) / 10;
}

async function writeDays(folder: string, dates: string[]): Promise<void> {
  for (const variable of ["max_temp", "daily_rain"]) {
    for (const date of dates) {
      const values = new Float32Array(64);
      for (let r = 0; r < 8; r++) for (let c = 0; c < 8; c++) values[r * 8 + c] = value(variable, date, WINDOW[0] + c, WINDOW[1] + r, true);
      await writeSiloTiff(join(folder, date.slice(0, 4), `${date.replaceAll("-", "")}.${variable}.tif`), WINDOW, values);
    }
  }
}

const make = (...args: string[]) => run("make", ["--no-print-directory", "-s", ...args], { cwd: ROOT, env: { ...process.env, MAKEFLAGS: "", MAKELEVEL: "" } });

async function upgraded(): Promise<string> {
  const dist = freshDir("dist");
  await cp(FIXTURE, dist, { recursive: true });
  return dist;
}

const upgrade = suite("make upgrade");

upgrade("upgrade - the server refuses a climate-dist-2 dist once, naming make upgrade", async () => {
  const dist = await upgraded();
  const failed = await run("node", [join(ROOT, "build", "server.js")], { env: { ...process.env, DIST: dist, PORT: "0" } }).then(
    () => null,
    (err: { code: number; stderr: string }) => err,
  );
  assert.ok(failed, "the server does not start");
  assert.is(failed!.code, 1);
  assert.ok(failed!.stderr.includes(`${dist}/catalog.json: is a climate-dist-2 dist; this reader reads climate-dist-3: upgrade it with \`make upgrade DIST=<dir>\``), failed!.stderr);
});

upgrade("upgrade - rewrites every version in place: ids, hashes and publish times kept, every cell as published, the old objects left for make prune", async () => {
  const dist = await upgraded();
  const before = JSON.parse(await readFile(join(FIXTURE, "catalog.json"), "utf8")) as { candidates: { id: string; published_at: string }[] };
  const { stdout } = await make("upgrade", `DIST=${dist}`);
  assert.match(stdout, /^upgraded .* from climate-dist-2 to climate-dist-3 in [0-9.]+ s: 4 versions, 47 objects written \(/m);
  assert.match(stdout, /the 50 old objects \([0-9.]+ kB\) are no longer reached: make prune DIST=.* deletes them after /);
  const records = await readRecords(dist);
  assert.equal(records.map((r) => r.id).sort(), OLD_IDS);
  assert.equal(records.map((r) => r.metadata.index.path.startsWith("objects/")), [true, true, true, true]);
  const candidates = JSON.parse(await readFile(join(dist, "catalog.json"), "utf8")).candidates as { id: string; published_at: string }[];
  assert.equal(candidates.map((c) => [c.id, c.published_at]), before.candidates.map((c) => [c.id, c.published_at]));
  const report = await verifyDist(dist);
  assert.equal([report.problems, report.versions.flatMap((v) => v.problems), report.unlisted, report.pruned.length], [[], [], [], 50]);
  await withServer(dist, async (served) => {
    for (const [variable, key] of [["max_temp", "silo-tmax"], ["daily_rain", "silo-rain"]]) {
      for (const id of records.filter((r) => r.dataset_key === key).map((r) => r.id)) {
        const revised = id === candidates.find((c) => c.id.startsWith(key))!.id;
        const csv = (await request(served, `/api/v1/series?lat=-23.6,-23.95&lon=133.8,134.15&variables=${variable}&dataset_version=${id}`)).text;
        const rows = csv.trim().split("\n").slice(1).map((line) => line.split(",")).map(([lon, lat, date, v]) => [Number(lon), Number(lat), date, v]);
        const expected = [[436, 272], [443, 279]].flatMap(([col, row]) =>
          DATES.map((date) => [Number((112 + 0.05 * col).toFixed(9)), Number((-10 - 0.05 * row).toFixed(9)), date, Number.isNaN(value(variable, date, col, row, revised)) ? "" : String(value(variable, date, col, row, revised))]),
        );
        assert.equal(rows, expected, id);
      }
    }
  });
  const again = await make("upgrade", `DIST=${dist}`);
  assert.is(again.stdout.trim(), `${dist} is already climate-dist-3: nothing to upgrade`);
  await make("prune", `DIST=${dist}`, "GRACE_HOURS=0", "KEEP_DAYS=100000");
  const objects = (await readdir(join(dist, "objects"), { recursive: true })).filter((p) => p.includes("."));
  assert.is(objects.length, 47); // what the upgrade wrote: the 46 files its manifest lists, and the manifest

  assert.equal((await verifyDist(dist)).problems, []);
});

upgrade("upgrade - a publish builds on the upgraded dist: the same files publish nothing, a new day reuses every series span but the open month's newest run", async () => {
  const dist = await upgraded();
  await make("upgrade", `DIST=${dist}`);
  const sources = freshDir("sources");
  await writeDays(sources, DATES);
  const same = await publishSilently(sources, dist);
  // the revised versions are the candidates: the newest of each dataset
  const newest = (JSON.parse(await readFile(join(FIXTURE, "catalog.json"), "utf8")).candidates as { id: string }[]).map((c) => c.id).sort();
  assert.equal([same.added.length, same.unchanged.map((d) => d.id).sort()], [0, newest]);
  await writeDays(sources, ["2004-01-03"]);
  const next = await publishSilently(sources, dist);
  // each variable: 2003's span and January's days 1-2 taken as the upgrade wrote them, the run of day 3 built
  assert.equal([next.added.length, next.decoded, next.series.reused, next.series.built], [2, 2, 4, 2]);
  assert.equal((await verifyDist(dist)).problems, []);
});

upgrade("upgrade - docs/publishing.md's upgrade block runs as written in a checkout whose dist is climate-dist-2", async () => {
  const checkout = makeCheckout(freshDir("checkout"));
  await cp(FIXTURE, join(checkout, "dist"), { recursive: true });
  const { stdout } = await runBash(docBlock("docs/publishing.md", "make upgrade DIST=dist"), { cwd: checkout });
  const lines = stdout.trim().split("\n");
  assert.match(lines[0], /^upgraded dist from climate-dist-2 to climate-dist-3 in [0-9.]+ s: 4 versions, 47 objects written/);
  // within the grace period the old objects stay: a reader holding the old catalog.json still finds them
  assert.match(lines[lines.length - 1], /^ {2}50 unreachable files \([0-9.]+ kB\) wait for the grace period: run make prune again after /);
  assert.equal((await verifyDist(join(checkout, "dist"))).problems, []);
});

upgrade.run();
