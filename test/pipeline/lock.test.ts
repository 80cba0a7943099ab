// One writer at a time per dist, whatever kills it (docs/operating.md "What the lock guarantees"), with real
// processes: a SIGKILLed publish and the publish started right after it, a zombie holder, a lock file naming a
// live process that is no writer, two publishes at once, writers in other PID namespaces, the bounded wait, and
// two mounts of one folder whose locks stay on this host.

import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { Window } from "../../format/grid.js";
import { LockError } from "../../pipeline/errors.js";
import { DIST_LOCK, lockDist } from "../../pipeline/store/lock.js";
import { findLockReach, findMount, judgeMount, parseMountInfo } from "../../pipeline/files/lock-reach.js";
import { prune } from "../../pipeline/commands/prune.js";
import { verifyDist } from "../../pipeline/commands/verify.js";
import { publish } from "../../pipeline/publish/publish.js";
import { childArgs } from "../support/child-bundles.js";
import { writeSiloDays } from "../support/helpers.js";
import { readRecords } from "../support/server-fixture.js";

const REPO = fileURLToPath(new URL("../..", import.meta.url));
const WORK = mkdtempSync(join(tmpdir(), "lock-test-"));
process.on("exit", () => rmSync(WORK, { recursive: true, force: true }));

const WINDOW: Window = [400, 300, 20, 20];
let sources: { base: string; next: string } | null = null;
let serial = 0;

/** Two source folders (three February days, three March days), made once. */
async function useSources(): Promise<NonNullable<typeof sources>> {
  if (sources) return sources;
  const base = join(WORK, "sources-base");
  const next = join(WORK, "sources-next");
  await writeSiloDays(base, ["2004-02-01", "2004-02-02", "2004-02-03"], WINDOW, (col, row, _date, day) => 20 + day + (col - 400) / 10 + (row - 300) / 100);
  await writeSiloDays(next, ["2004-03-01", "2004-03-02", "2004-03-03"], WINDOW, (col, row, _date, day) => 30 + day + (col - 400) / 10 + (row - 300) / 100);
  return (sources = { base, next });
}

async function freshDist(name: string): Promise<string> {
  const dist = join(WORK, `${name}-${serial++}`);
  await mkdir(dist, { recursive: true });
  return dist;
}

/** A dist holding one version of the base days. */
async function makeBase(name: string): Promise<string> {
  const dist = await freshDist(name);
  await publish({ sources: (await useSources()).base, dist, log: () => {}, observations: false, explorer: false, publishedAt: "2024-05-01T00:00:00Z" });
  return dist;
}

interface Event {
  event: string;
  pid: number;
  at: number;
  [key: string]: unknown;
}

/** A process under test: its JSON events as they come, its stderr, and its exit. */
interface Child {
  proc: ChildProcess;
  events: Event[];
  stderr: () => string;
  waitFor: (event: string, timeoutMs?: number) => Promise<Event>;
  exited: Promise<number | null>;
}

function start(command: string, args: string[]): Child {
  const proc = spawn(command, args, { cwd: REPO, stdio: ["ignore", "pipe", "pipe"] });
  const events: Event[] = [];
  const waiters: (() => void)[] = [];
  let out = "";
  let err = "";
  proc.stdout!.on("data", (chunk) => {
    out += chunk;
    const lines = out.split("\n");
    out = lines.pop()!;
    for (const line of lines) if (line.startsWith("{")) events.push(JSON.parse(line) as Event);
    for (const w of waiters.splice(0)) w();
  });
  proc.stderr!.on("data", (chunk) => (err += chunk));
  const exited = new Promise<number | null>((resolve) => proc.on("exit", (code) => (resolve(code), waiters.splice(0).forEach((w) => w()))));
  const waitFor = async (event: string, timeoutMs = 60_000): Promise<Event> => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const found = events.find((e) => e.event === event);
      if (found) return found;
      if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`exited before "${event}": ${JSON.stringify(events)} ${err}`);
      if (Date.now() > until) throw new Error(`no "${event}" within ${timeoutMs} ms: ${JSON.stringify(events)} ${err}`);
      await new Promise<void>((resolve) => (waiters.push(resolve), setTimeout(resolve, 200)));
    }
  };
  return { proc, events, stderr: () => err, waitFor, exited };
}

/** node's arguments that start test/support/lock-writer.ts: built beside the pipeline's built threads, else under tsx. */
let writerArgs: string[] | null = null;

/** A suite's `before` hook: builds the writer once (test/support/child-bundles.ts). */
async function useWriter(): Promise<void> {
  writerArgs ??= await childArgs(join(REPO, "test/support/lock-writer.ts"), "pipeline/publish");
}

/** test/support/lock-writer.ts in a process of its own (node itself, so that a signal reaches the writer). */
const writer = (...args: string[]) => start(process.execPath, [...writerArgs!, ...args]);

/** The same, as PID 1 of new PID (and mount) namespaces; `host` also gives it a UTS namespace with that host name. */
function writerInNamespace(args: string[], host?: string): Child {
  const inner = `${host ? `hostname ${host} && ` : ""}exec ${[process.execPath, ...writerArgs!, ...args].map((a) => `'${a}'`).join(" ")}`;
  return start("unshare", [...(host ? ["--uts"] : []), "--pid", "--fork", "--mount-proc", "--kill-child", "sh", "-c", inner]);
}

/** The PID, in this namespace, of the process unshare forked (its namespace's PID 1). */
function forkedPid(unshare: ChildProcess): number {
  return Number(readFileSync(`/proc/${unshare.pid}/task/${unshare.pid}/children`, "utf8").trim().split(" ")[0]);
}

/** `make publish`'s command (the pipeline's CLI, through tsx): its exit code and what it printed. */
async function publishCli(sourcesDir: string, dist: string, lockWait: number): Promise<{ code: number | null; out: string; err: string }> {
  const child = start(process.execPath, ["--import", "tsx", "pipeline/cli.ts", "publish", "--sources", sourcesDir, "--dist", dist, "--lock-wait", String(lockWait)]);
  let out = "";
  child.proc.stdout!.on("data", (chunk) => (out += chunk));
  const code = await child.exited;
  return { code, out, err: child.stderr() };
}

/** The dist verifies, holds no file a manifest does not list, and its lock is free (an empty file). */
async function assertSettled(dist: string): Promise<void> {
  const report = await verifyDist(dist);
  assert.equal([report.problems, report.unlisted, report.versions.filter((v) => v.problems.length > 0)], [[], [], []]);
  assert.is(await readFile(join(dist, DIST_LOCK.name), "utf8"), "");
}

// ---------------------------------------------------------------------------------------------------------------

const killed = suite("a killed writer");
killed.before(useWriter);

killed("lock - SIGKILL a publish as it writes, then publish at once: the lock is free within a second, the killed publish's files are taken back, the dist verifies", async () => {
  const { next } = await useSources();
  const dist = await makeBase("sigkill");
  const first = start(process.execPath, ["--import", "tsx", "pipeline/cli.ts", "publish", "--sources", next, "--dist", dist]);
  // killed once its journal exists: it holds the lock and has begun to write
  for (let i = 0; i < 3000 && !(await readFile(join(dist, ".publish.journal")).catch(() => null)); i++) await new Promise((r) => setTimeout(r, 5));
  first.proc.kill("SIGKILL");
  const again = await publishCli(next, dist, 5); // started without waiting for the killed process to be reaped
  assert.is(await first.exited, null, "the first publish was killed");
  assert.is(again.code, 0, again.err);
  assert.match(again.err, /cleaned up after an interrupted publish: \d+ files it had written removed/);
  // a killed process lets go of its files once its last thread has exited: at most a moment's wait
  const took = /took the dist lock after ([0-9.]+) s/.exec(again.err);
  assert.ok(!took || Number(took[1]) < 1, again.err);
  assert.match(again.out, /published into .* in [0-9.]+ s\n {2}\+ silo-tmax-20040301-20040303-/);
  await assertSettled(dist);
});

killed("lock - a holder killed with SIGKILL frees the lock at once: the next writer has it within a second, five times out of five", async () => {
  const dist = await freshDist("kill-measure");
  const waits: number[] = [];
  for (let i = 0; i < 5; i++) {
    const holder = writer("hold", dist);
    await holder.waitFor("locked");
    const killedAt = performance.now();
    holder.proc.kill("SIGKILL");
    const release = await lockDist(dist, "publish", undefined, { waitSec: 10 });
    waits.push(performance.now() - killedAt);
    await release();
    await holder.exited;
  }
  console.log(`  SIGKILL of the holder to the lock taken: ${waits.map((ms) => ms.toFixed(1)).join(", ")} ms`);
  assert.ok(Math.max(...waits) < 1000, waits.join(", "));
});

killed("lock - a zombie holder (killed, never reaped, still listed) blocks nothing: the next writer takes the lock while it is still listed", async () => {
  const dist = await freshDist("zombie");
  // the holder's parent becomes `sleep`, which never reaps a child: once killed, the holder stays a zombie
  const parent = start("sh", ["-c", `${process.execPath} --import tsx test/support/lock-writer.ts hold '${dist}' & exec sleep 120`]);
  try {
    const { pid } = await parent.waitFor("locked");
    assert.is((JSON.parse(await readFile(join(dist, DIST_LOCK.name), "utf8")) as { pid: number }).pid, pid);
    process.kill(pid, "SIGKILL");
    const stateOf = () => readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1][0];
    for (let i = 0; i < 200 && stateOf() !== "Z"; i++) await new Promise((r) => setTimeout(r, 10));
    assert.is(stateOf(), "Z", "the killed holder is a zombie");
    process.kill(pid, 0); // still listed: a PID check would call it alive and refuse
    // its main thread is a zombie at once; the lock goes when its last thread has exited, moments later
    const began = performance.now();
    const release = await lockDist(dist, "publish", undefined, { waitSec: 10 });
    const ms = performance.now() - began;
    assert.is(stateOf(), "Z", "the lock was taken while the holder is still a zombie");
    console.log(`  zombie holder to the lock taken: ${ms.toFixed(1)} ms`);
    assert.ok(ms < 1000, `${ms} ms`);
    await release();
  } finally {
    parent.proc.kill("SIGKILL");
    await parent.exited;
  }
});

killed.run();

// ---------------------------------------------------------------------------------------------------------------

const stale = suite("a lock file naming a process that is no writer");

stale("lock - a lock file naming a live process of this host that holds no lock (a reused PID) blocks nothing: make publish with LOCK_WAIT=0 goes ahead", async () => {
  const { next } = await useSources();
  const dist = await makeBase("reused-pid");
  const unrelated = start("sleep", ["120"]);
  try {
    const pid = unrelated.proc.pid!;
    process.kill(pid, 0); // alive
    const left = { writer: "publish", host: hostname(), pid, pidNamespace: null, command: "node build/cli.js publish --dist dist", since: "2026-01-01T00:00:00.000Z" };
    await writeFile(join(dist, DIST_LOCK.name), `${JSON.stringify(left)}\n`);
    const run = await publishCli(next, dist, 0);
    assert.is(run.code, 0, run.err);
    assert.not.match(run.err, /waiting for the dist lock|is writing this dist/);
    await assertSettled(dist);
  } finally {
    unrelated.proc.kill("SIGKILL");
    await unrelated.exited;
  }
});

stale.run();

// ---------------------------------------------------------------------------------------------------------------

const together = suite("writers at the same time");
together.before(useWriter);

together("lock - two publishes waiting at once for a third writer: when it lets go, one writes, then the other; both versions are published and the dist verifies", async () => {
  const { base, next } = await useSources();
  const dist = await freshDist("two");
  const gate = writer("hold", dist);
  const { pid: gatePid } = await gate.waitFor("locked");
  const a = writer("publish", base, dist, "120");
  const b = writer("publish", next, dist, "120");
  const waitingFor = (c: Child, pid: number) => c.events.some((e) => e.event === "log" && String(e.line).startsWith(`waiting for the dist lock: another publish (pid ${pid} on host `));
  for (let i = 0; i < 600 && !(waitingFor(a, gatePid) && waitingFor(b, gatePid)); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(waitingFor(a, gatePid) && waitingFor(b, gatePid), a.stderr() + b.stderr());
  gate.proc.kill("SIGTERM");
  assert.equal([await a.exited, await b.exited, await gate.exited], [0, 0, 0], a.stderr() + b.stderr());
  const journalAt = (c: Child) => c.events.find((e) => e.stage === "journal")!.at;
  const [first, second] = journalAt(a) < journalAt(b) ? [a, b] : [b, a];
  for (const c of [a, b]) assert.is(c.events.filter((e) => e.event === "log" && /^took the dist lock after [0-9.]+ s$/.test(String(e.line))).length, 1);
  // the second's first write (its journal) comes after the first's last stage began (catalog.json, swapped last)
  const lastOfFirst = first.events.filter((e) => e.event === "stage").at(-1)!;
  assert.is(lastOfFirst.stage, "catalog.json");
  assert.ok(second.events.find((e) => e.stage === "journal")!.at > lastOfFirst.at);
  const added = [a, b].flatMap((c) => c.events.find((e) => e.event === "done")!.added as string[]);
  assert.equal((await readRecords(dist)).map((r) => r.id).sort(), added.sort());
  assert.is(added.length, 2);
  await assertSettled(dist);
});

together("lock - four writers taking the lock in rounds, two of them PID 1 of PID namespaces of their own: never two inside at once", async () => {
  const dist = await freshDist("rounds");
  const log = join(WORK, `rounds-${serial++}.log`);
  await writeFile(log, "");
  const children = [
    writer("rounds", dist, "12", log, "root-a"),
    writer("rounds", dist, "12", log, "root-b"),
    writerInNamespace(["rounds", dist, "12", log, "ns-a"]),
    writerInNamespace(["rounds", dist, "12", log, "ns-b"]),
  ];
  assert.equal(await Promise.all(children.map((c) => c.exited)), [0, 0, 0, 0], children.map((c) => c.stderr()).join(""));
  assert.equal(children.map((c) => c.events.find((e) => e.event === "started")!.pid === 1), [false, false, true, true]);
  const lines = (await readFile(log, "utf8")).trim().split("\n");
  assert.is(lines.length, 4 * 12 * 2);
  for (let i = 0; i < lines.length; i += 2) {
    const token = lines[i].slice("enter ".length);
    assert.equal([lines[i], lines[i + 1]], [`enter ${token}`, `leave ${token}`], `line ${i + 1}: another writer came in`);
  }
  for (const token of ["root-a", "root-b", "ns-a", "ns-b"]) assert.is(lines.filter((l) => l === `enter ${token}`).length, 12, token);
});

together.run();

// ---------------------------------------------------------------------------------------------------------------

const namespaces = suite("another PID namespace");
namespaces.before(useWriter);

namespaces("lock - a holder that is PID 1 of another PID namespace on another host name: make publish refuses naming it, a waiting publish proceeds once it is killed", async () => {
  const { next } = await useSources();
  const dist = await makeBase("namespace-holder");
  const holder = writerInNamespace(["hold", dist], "lock-test-other");
  try {
    assert.is((await holder.waitFor("locked")).pid, 1);
    const refused = await publishCli(next, dist, 0);
    assert.is(refused.code, 1);
    assert.match(refused.err, /^error: .*\.publish\.lock: another publish \(pid 1 on host lock-test-other, since [0-9T:.-]+Z: .*lock-writer\.ts hold .*\) is writing this dist; waited 0 s for it \(LOCK_WAIT\)\. Run make publish again once it has finished, or give LOCK_WAIT more seconds \[lock\]\n$/);
    const waiting = writer("publish", next, dist, "60");
    await new Promise<void>((resolve) => {
      const poll = () => (waiting.events.some((e) => e.event === "log" && String(e.line).startsWith("waiting for the dist lock: another publish (pid 1 on host lock-test-other")) ? resolve() : setTimeout(poll, 20));
      poll();
    });
    const killedAt = performance.timeOrigin + performance.now();
    process.kill(forkedPid(holder.proc), "SIGKILL");
    assert.is(await waiting.exited, 0, waiting.stderr());
    const journal = waiting.events.find((e) => e.stage === "journal")!;
    console.log(`  SIGKILL of the holder in the other namespace to the waiting publish's first write: ${(journal.at - killedAt).toFixed(0)} ms`);
    assert.ok(journal.at > killedAt);
    await assertSettled(dist);
  } finally {
    holder.proc.kill("SIGKILL");
    await holder.exited;
  }
});

namespaces("lock - a writer in another PID namespace refuses while this process holds the lock, naming this process", async () => {
  const dist = await freshDist("namespace-writer");
  const release = await lockDist(dist, "sync");
  try {
    const inner = writerInNamespace(["try", dist]);
    const { message } = await inner.waitFor("refused");
    assert.match(String(message), new RegExp(`another sync \\(pid ${process.pid} in another PID namespace on host ${hostname()}, since `));
    await inner.exited;
  } finally {
    await release();
  }
  const after = writerInNamespace(["try", dist]);
  await after.waitFor("locked");
  assert.is(await after.exited, 0);
});

namespaces.run();

// ---------------------------------------------------------------------------------------------------------------

const bounded = suite("the wait");
bounded.before(useWriter);

bounded("lock - a second writer (make prune) waits up to LOCK_WAIT, saying whom it waits for, then refuses naming the holder", async () => {
  const dist = await makeBase("bounded");
  const holder = writer("hold", dist);
  try {
    const { pid } = await holder.waitFor("locked");
    const lines: string[] = [];
    const began = performance.now();
    const err = await prune({ dist, rule: { keepDays: 30, keepIds: new Set(), dropVersions: true }, lock: { waitSec: 1, log: (l) => lines.push(l) } }).then(() => null, (e) => e);
    const ms = performance.now() - began;
    assert.instance(err, LockError);
    assert.is(err.stage, "lock");
    assert.match(err.reason, new RegExp(`^another publish \\(pid ${pid} on host ${hostname()}, since [0-9T:.-]+Z: .*lock-writer\\.ts hold .*\\) is writing this dist; waited 1 s for it \\(LOCK_WAIT\\)\\. Run make prune again`));
    assert.is(lines.length, 1);
    assert.match(lines[0], new RegExp(`^waiting for the dist lock: another publish \\(pid ${pid} on host ${hostname()}, since [0-9T:.-]+Z: .*lock-writer\\.ts hold .*\\) is writing this dist; waiting up to 1 s \\(LOCK_WAIT\\)$`));
    assert.ok(ms >= 1000 && ms < 2500, `${ms} ms`);
  } finally {
    holder.proc.kill("SIGTERM");
    assert.equal((await holder.waitFor("released")).event, "released");
    await holder.exited;
  }
  await assertSettled(dist);
});

bounded.run();

// ---------------------------------------------------------------------------------------------------------------

const shared = suite("folders whose locks stay on this host");

shared("lock - two FUSE mounts of one folder (as two hosts mount a share) do not see each other's locks: each refuses, and LOCAL_LOCK=1 would let both in at once", async () => {
  const folder = join(WORK, "shared-folder");
  const mounts = [join(WORK, "mount-a"), join(WORK, "mount-b")];
  for (const dir of [folder, ...mounts]) await mkdir(dir, { recursive: true });
  try {
    for (const m of mounts) execFileSync("bindfs", [folder, m], { stdio: "pipe" });
  } catch (err) {
    console.log(`  skipped: cannot mount ${folder} twice with bindfs (${String((err as { stderr?: Buffer }).stderr ?? err).trim()}); test/run.sh installs bindfs, FUSE needs /dev/fuse`);
    return;
  }
  try {
    for (const m of mounts) {
      const err = await lockDist(m, "publish").then(() => null, (e) => e);
      assert.instance(err, LockError);
      assert.is(err.reason, `the dist lock cannot keep writers on other hosts out of ${m}: a fuse filesystem keeps flock on this host unless it implements locking itself, which cannot be told from here. Publish into a local folder and copy it there, or, when this host (with its containers) is the only writer of this folder, run again with LOCAL_LOCK=1`);
    }
    // what the refusal prevents: with LOCAL_LOCK=1 on both mounts, both writers hold "the" lock at the same time
    const a = await lockDist(mounts[0], "publish", undefined, { localLock: true });
    const b = await lockDist(mounts[1], "publish", undefined, { localLock: true });
    await a();
    await b();
  } finally {
    for (const m of mounts) execFileSync("umount", [m]);
  }
});

shared("lock - how far a mount's locks reach, from /proc/self/mountinfo: NFS and SMB with and without locking, FUSE, 9p, virtiofs, local disks", () => {
  const info = [
    "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard",
    "40 27 0:50 / /srv/nfs4 rw,relatime - nfs4 files:/export rw,vers=4.2,rsize=1048576,hard,proto=tcp,local_lock=none,addr=10.0.0.2",
    "41 27 0:51 / /srv/nfs3 rw,relatime - nfs files:/export rw,vers=3,hard,nolock,proto=tcp,local_lock=all,addr=10.0.0.2",
    "42 27 0:52 / /srv/nfs-flock rw,relatime - nfs4 files:/export rw,vers=4.1,local_lock=flock,addr=10.0.0.2",
    "43 27 0:53 / /srv/smb rw,relatime - cifs //files/share rw,vers=3.1.1,cache=strict,uid=0",
    "44 27 0:54 / /srv/smb-nobrl rw,relatime - cifs //files/share rw,vers=3.1.1,nobrl,uid=0",
    "45 27 0:55 / /srv/sshfs rw,nosuid,nodev - fuse.sshfs me@files:/data rw,user_id=0,group_id=0",
    "46 27 0:56 / /srv/host rw,relatime - virtiofs mount0 rw",
    "47 27 0:57 / /srv/with\\040space rw,relatime - 9p share rw,trans=virtio",
    "48 27 0:58 / /srv/tmp rw,relatime - tmpfs tmpfs rw,size=14m",
    "49 45 0:59 / /srv/sshfs/local rw,relatime - ext4 /dev/vdb rw",
  ].join("\n");
  const mounts = parseMountInfo(info);
  assert.is(mounts.length, 11);
  const judge = (path: string, kernel = "6.1.0-18-amd64") => {
    const judged = judgeMount(findMount(mounts, path)!, kernel);
    return judged.reach === "host-only" ? `host-only: ${judged.why}` : judged.reach;
  };
  assert.is(judge("/work/dist"), "disk");
  assert.is(judge("/srv/nfs4/dist"), "server");
  assert.is(judge("/srv/nfs3/dist"), "host-only: this NFS mount keeps file locks on this host (nolock); mount it with locking (local_lock=none, the default)");
  assert.is(judge("/srv/nfs-flock"), "host-only: this NFS mount keeps file locks on this host (local_lock=flock); mount it with locking (local_lock=none, the default)");
  assert.is(judge("/srv/smb/dist"), "server");
  assert.is(judge("/srv/smb/dist", "5.4.0-150-generic"), "host-only: Linux 5.4.0-150-generic keeps flock on SMB mounts on this host (5.5 and later send it to the server)");
  assert.is(judge("/srv/smb-nobrl/dist"), "host-only: this SMB mount keeps file locks on this host (nobrl); mount it without nobrl");
  assert.match(judge("/srv/sshfs/dist"), /^host-only: a fuse\.sshfs filesystem keeps flock on this host/);
  assert.match(judge("/srv/host/dist"), /^host-only: a virtiofs filesystem/);
  assert.match(judge("/srv/with space/dist"), /^host-only: a 9p filesystem/);
  assert.is(judge("/srv/tmp"), "disk");
  assert.is(judge("/srv/sshfs/local/dist"), "disk", "the innermost mount decides");
  assert.is(judge("/srv/smbx"), "disk", "a mount point is a whole path segment");
});

shared("lock - a dist on this machine's own disk is judged a disk, and its lock is taken", async () => {
  const dist = await freshDist("own-disk");
  assert.equal((await findLockReach(dist))?.judged, { reach: "disk" });
  await (await lockDist(dist, "publish"))();
});

shared.run();
