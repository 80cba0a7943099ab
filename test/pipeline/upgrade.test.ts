// make upgrade (docs/publishing.md "Upgrading a dist"): a climate-dist-3 dist (test/fixtures/dist-3, written by the
// pipeline of commit 6304b50) refused by the server with the command to run, then upgraded in place by the real
// command: every version kept with its id, hash and publish time, and every answer of the server byte for byte what
// 6304b50's server answered from the old dist (test/fixtures/dist-3-answers.json), but for the records' Refs of their
// new index objects; publishes build on it, and make prune deletes the old objects.

import { createHash } from "node:crypto";
import { execFile } from "node:child_process";
import { cp, readFile, readdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { verifyDist } from "../../pipeline/commands/verify.js";
import { docBlock } from "../docs/doc-blocks.js";
import { makeCheckout, runBash } from "../docs/doc-run.js";
import type { Window } from "../../format/grid.js";
import { writeSiloTiff } from "../../pipeline/ingest/geotiff.js";
import { freshDirs, makeWorkDir, publishSilently } from "../support/helpers.js";
import { exchange, withServer } from "../support/server-fixture.js";

const ROOT = resolve(import.meta.dirname, "../..");
const FIXTURE = join(ROOT, "test", "fixtures", "dist-3");
const ANSWERS = join(ROOT, "test", "fixtures", "dist-3-answers.json");
const freshDir = freshDirs(makeWorkDir("upgrade-test"));
const run = promisify(execFile);

const make = (...args: string[]) => run("make", ["--no-print-directory", "-s", ...args], { cwd: ROOT, env: { ...process.env, MAKEFLAGS: "", MAKELEVEL: "" } });

async function copied(): Promise<string> {
  const dist = freshDir("dist");
  await cp(FIXTURE, dist, { recursive: true });
  return dist;
}

/** A record, or a list of them, with what names its index object blanked: `metadata.index`'s Ref and the source-index entry's. */
function withoutIndexRefs(text: string): unknown {
  const blank = (record: { metadata: { index: object }; source_manifest: { kind: string }[] }) => ({
    ...record,
    metadata: { ...record.metadata, index: { ...record.metadata.index, path: "-", sha256: "-", size: 0 } },
    source_manifest: record.source_manifest.map((s) => (s.kind === "source-index" ? { ...s, sha256: "-", member_path: "-" } : s)),
  });
  const body = JSON.parse(text);
  return body.datasets ? { ...body, datasets: body.datasets.map(blank) } : { ...body, dataset: blank(body.dataset) }; // a record, or a layers page
}

const upgrade = suite("make upgrade");

upgrade("upgrade - the server refuses a climate-dist-3 dist once, naming make upgrade", async () => {
  const dist = await copied();
  const failed = await run("node", [join(ROOT, "build", "server.js")], { env: { ...process.env, DIST: dist, PORT: "0" } }).then(
    () => null,
    (err: { code: number; stderr: string }) => err,
  );
  assert.ok(failed, "the server does not start");
  assert.is(failed!.code, 1);
  assert.ok(failed!.stderr.includes(`${dist}/catalog.json: is a climate-dist-3 dist; this reader reads climate-dist-4: upgrade it with \`make upgrade DIST=<dir>\``), failed!.stderr);
});

upgrade("upgrade - rewrites every version in place, and the server answers every request as it did before, byte for byte", async () => {
  const dist = await copied();
  const before = JSON.parse(await readFile(join(FIXTURE, "catalog.json"), "utf8")) as { candidates: { id: string; published_at: string }[] };
  const { stdout } = await make("upgrade", `DIST=${dist}`);
  assert.match(stdout, /^upgraded .* from climate-dist-3 to climate-dist-4 in [0-9.]+ s: 6 versions, \d+ objects written \(/m);
  assert.match(stdout, /the \d+ old objects \([0-9.]+ kB\) are no longer reached: make prune DIST=.* deletes them after /);
  const candidates = JSON.parse(await readFile(join(dist, "catalog.json"), "utf8")).candidates as { id: string; published_at: string }[];
  assert.equal(candidates.map((c) => [c.id, c.published_at]), before.candidates.map((c) => [c.id, c.published_at]));
  const report = await verifyDist(dist);
  assert.equal([report.problems, report.versions.flatMap((v) => v.problems), report.unlisted], [[], [], []]);
  const answers = JSON.parse(await readFile(ANSWERS, "utf8")) as Record<string, { status: number; sha256: string; body?: string }>;
  assert.is(Object.keys(answers).length, 61);
  await withServer(dist, async (served) => {
    for (const [path, was] of Object.entries(answers)) {
      const now = await exchange(served, path, { headers: { "Accept-Encoding": "identity" } });
      assert.is(now.status, was.status, path);
      if (was.body === undefined) assert.is(createHash("sha256").update(now.bytes).digest("hex"), was.sha256, path);
      else assert.equal(withoutIndexRefs(now.text), withoutIndexRefs(was.body), path);
    }
  });
  const again = await make("upgrade", `DIST=${dist}`);
  assert.is(again.stdout.trim(), `${dist} is already climate-dist-4: nothing to upgrade`);
  const written = (await readdir(join(dist, "objects"), { recursive: true })).filter((p) => p.includes(".")).length;
  await make("prune", `DIST=${dist}`, "GRACE_HOURS=0", "KEEP_DAYS=100000");
  const kept = (await readdir(join(dist, "objects"), { recursive: true })).filter((p) => p.includes(".")).length;
  assert.is(written - kept, report.pruned.length, "prune deletes exactly the old objects the upgrade left");
  assert.equal((await verifyDist(dist)).problems, []);
});

upgrade("upgrade - a publish builds on the upgraded dist: a new day reuses the spans the upgrade built but the open month's newest", async () => {
  const dist = await copied();
  await make("upgrade", `DIST=${dist}`);
  const sources = freshDir("sources");
  // the fixture's window, one more day of max_temp
  const window: Window = [436, 250, 40, 36];
  await writeSiloTiff(join(sources, "2004", "20040119.max_temp.tif"), window, Float32Array.from({ length: 40 * 36 }, (_, i) => 30 + (i % 40) / 10));
  const next = await publishSilently(sources, dist, { extend: true, observations: false });
  // 2003's span and January's closed runs taken as the upgrade wrote them, the open month's newest run built
  assert.equal([next.added.length, next.decoded], [1, 1]);
  assert.ok(next.series.reused >= 2 && next.series.built >= 1, JSON.stringify(next.series));
  assert.equal((await verifyDist(dist)).problems, []);
});

upgrade("upgrade - docs/publishing.md's upgrade block runs as written in a checkout whose dist is climate-dist-3", async () => {
  const checkout = makeCheckout(freshDir("checkout"));
  await cp(FIXTURE, join(checkout, "dist"), { recursive: true });
  const { stdout } = await runBash(docBlock("docs/publishing.md", "make upgrade DIST=dist"), { cwd: checkout });
  const lines = stdout.trim().split("\n");
  assert.match(lines[0], /^upgraded dist from climate-dist-3 to climate-dist-4 in [0-9.]+ s: 6 versions, \d+ objects written/);
  // within the grace period the old objects stay: a reader holding the old catalog.json still finds them
  assert.match(lines[lines.length - 1], /^ {2}\d+ unreachable files \([0-9.]+ kB\) wait for the grace period: run make prune again after /);
  assert.equal((await verifyDist(join(checkout, "dist"))).problems, []);
});

upgrade.run();
