// make test's runner: every test file in a process of its own, a bounded number at a time, longest first; each
// file's output printed whole, in name order; ends with exactly one line "N passed, N failed".

import { spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { basename, dirname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { checkManifest, preparedFixtures } from "./support/fixture-cache.js";
import { bundleWorkers } from "./support/worker-bundles.js";

const ROOT = resolve(import.meta.dirname, "..");
/** The suites that run a second time over a dist served by nginx (withServer with SERVER_DIST=nginx). */
export const NGINX_SUITES = /^(server\/server-(http|integrity|site)|api\/(server-(read|query|plans|series)|opendap))\.test\.ts$/;
/** What each job took in the last run, for the next run's order. */
const DURATIONS_FILE = join(ROOT, ".cache", "test-durations.json");
/**
 * What each job took in a whole run on 2 cores, committed: the order of a clean clone (CI), which has no
 * .cache/test-durations.json, and of a job the last run did not measure. By size instead, the longest files started
 * late (the docs' examples are short files that run for a minute or more).
 */
const SEED_DURATIONS_FILE = join(ROOT, "test", "durations.json");
/** A test file still running after this long is stopped and counted as failed (a hang must not hold CI forever). */
const DEFAULT_TIMEOUT_SEC = 1200;

export interface Job {
  /** the file name, "typecheck", "fixtures", or "<file> (nginx)" */
  name: string;
  command: string[];
  env?: Record<string, string>;
  /** an uvu process: its summary counts the tests; any other job counts one failure when it exits non-zero */
  uvu: boolean;
  /** waits for the fixtures job (when there is one) before it starts */
  needsFixtures: boolean;
  /** position in the printed output */
  order: number;
}

export interface Outcome {
  job: Job;
  output: string;
  code: number | null;
  signal: string | null;
  seconds: number;
  timedOut: boolean;
}

export interface Tally {
  passed: number;
  failed: number;
  /** one line per job that failed, naming it */
  notes: string[];
}

export interface RunOptions {
  /** the folder of *.test.ts files (default test/) */
  dir?: string;
  /** only files whose name matches */
  pattern?: RegExp;
  jobs?: number;
  typecheck?: boolean;
  /** build the shared fixtures first (test/support/prepare-fixtures.ts) */
  fixtures?: boolean;
  /** start the pipeline's threads from JavaScript built first (test/support/worker-bundles.ts) */
  workers?: boolean;
  /** which files run a second time against nginx; null: none */
  nginx?: RegExp | null;
  timeoutSec?: number;
  /** where measured durations are read and kept (null: neither) */
  durationsFile?: string | null;
  /** durations read (never written) for the jobs durationsFile has none of; null: none (default: test/durations.json, for test/'s own files) */
  seedDurationsFile?: string | null;
  write?: (text: string) => void;
}

const stripAnsi = (text: string) => text.replace(/\x1b\[[0-9;]*m/g, "");

/** uvu's summary of one process: the numbers after "Total:" and "Passed:", or null when it printed none. */
export function readSummary(output: string): { total: number; passed: number } | null {
  const plain = stripAnsi(output);
  const total = /^\s*Total:\s+(\d+)\s*$/m.exec(plain);
  const passed = /^\s*Passed:\s+(\d+)\s*$/m.exec(plain);
  return total && passed ? { total: Number(total[1]), passed: Number(passed[1]) } : null;
}

/** Adds one finished job to the tally: a crash, a timeout or a non-zero exit without failed tests is one failure. */
export function countOutcome(tally: Tally, outcome: Outcome): void {
  const { job, code, signal, timedOut } = outcome;
  const exit = signal ? `killed by ${signal}` : `exit code ${code}`;
  if (timedOut) {
    tally.failed += 1;
    tally.notes.push(`${job.name}: stopped after ${outcome.seconds.toFixed(0)} s (a test hangs?)`);
    return;
  }
  const summary = job.uvu ? readSummary(outcome.output) : null;
  if (summary) tally.passed += summary.passed;
  const failedTests = summary ? summary.total - summary.passed : 0;
  if (failedTests > 0) {
    tally.failed += failedTests;
    tally.notes.push(`${job.name}: ${failedTests} of ${summary!.total} tests failed`);
  } else if (code !== 0) {
    tally.failed += 1;
    const why = !job.uvu ? "failed" : summary ? "failed after its summary" : "crashed before its summary";
    tally.notes.push(`${job.name}: ${why} (${exit})`);
  }
}

/** The *.test.ts files under dir, as paths relative to it ("api/server-read.test.ts"); a pattern matches the path or the file's name. */
function listTestFiles(dir: string, pattern: RegExp | undefined): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((path) => path.split(sep).join("/"))
    .filter((path) => path.endsWith(".test.ts") && !path.startsWith("fixtures/") && (!pattern || pattern.test(path) || pattern.test(basename(path))))
    .sort();
}

/** A file that builds the shared fixtures (directly, or through a suite's useFixture hook) waits for them; any other starts at once. */
function usesSharedFixtures(file: string): boolean {
  return /\b(buildFixture|buildDemoDist)\(|\buseFixture\b/.test(readFileSync(file, "utf8"));
}

/** The jobs of one run, in printed order: the fixtures, the typecheck, every file, then the nginx pass. */
export function planJobs(options: RunOptions): Job[] {
  const dir = options.dir ?? join(ROOT, "test");
  const node = process.execPath;
  const uvu = join(ROOT, "node_modules/uvu/bin.js");
  const jobs: Omit<Job, "order">[] = [];
  // incremental: the last check's state in .cache/ (a fresh clone checks everything; the diagnostics are the same)
  const tsc = [node, join(ROOT, "node_modules/typescript/bin/tsc"), "--noEmit", "-p", ROOT, "--incremental", "--tsBuildInfoFile", join(ROOT, ".cache", "typecheck.tsbuildinfo")];
  if (options.typecheck) jobs.push({ name: "typecheck", command: tsc, uvu: false, needsFixtures: false });
  const files = listTestFiles(dir, options.pattern);
  const uvuJob = (file: string) => [node, uvu, "-r", "tsx", dir, `^${file.replaceAll(".", "\\.")}$`];
  for (const file of files) {
    jobs.push({ name: file, command: uvuJob(file), uvu: true, needsFixtures: usesSharedFixtures(join(dir, file)) });
  }
  for (const file of files.filter((f) => options.nginx?.test(f))) {
    jobs.push({ name: `${file} (nginx)`, command: uvuJob(file), env: { SERVER_DIST: "nginx" }, uvu: true, needsFixtures: true });
  }
  if (options.fixtures && jobs.some((j) => j.needsFixtures)) {
    jobs.unshift({ name: "fixtures", command: [node, join(ROOT, "node_modules/tsx/dist/cli.mjs"), join(ROOT, "test/support/prepare-fixtures.ts")], uvu: false, needsFixtures: false });
  }
  return jobs.map((job, order) => ({ ...job, order }));
}

function readDurations(file: string | null): Record<string, number> {
  if (!file || !existsSync(file)) return {};
  try {
    return JSON.parse(readFileSync(file, "utf8")) as Record<string, number>;
  } catch {
    return {};
  }
}

/**
 * The expected length of a job: last run's measure, else the file's size (a fixed order: longer files hold more
 * tests). Either way longest first, so the slowest file never starts last.
 */
function expectedSeconds(job: Job, durations: Record<string, number>, dir: string): number {
  if (durations[job.name] !== undefined) return durations[job.name];
  const file = join(dir, job.name.replace(/ \(nginx\)$/, ""));
  return existsSync(file) ? readFileSync(file).length / 1000 : 0;
}

/** Runs one job in a process group of its own (so a timeout stops its children too), its output captured whole. */
function runJob(job: Job, timeoutSec: number): Promise<Outcome> {
  const started = performance.now();
  return new Promise((done) => {
    const child = spawn(job.command[0], job.command.slice(1), { cwd: ROOT, env: { ...process.env, ...job.env }, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    running.add(child.pid!);
    const chunks: Buffer[] = [];
    child.stdout.on("data", (c: Buffer) => chunks.push(c));
    child.stderr.on("data", (c: Buffer) => chunks.push(c));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid!);
    }, timeoutSec * 1000);
    const finish = (code: number | null, signal: string | null, extra = "") => {
      clearTimeout(timer);
      running.delete(child.pid!);
      killGroup(child.pid!); // whatever the file left running (a server, a browser) goes with it
      const output = Buffer.concat(chunks).toString("utf8") + extra;
      done({ job, output, code, signal, seconds: (performance.now() - started) / 1000, timedOut });
    };
    child.on("error", (err) => finish(null, null, `\n${job.name}: could not start: ${err.message}\n`));
    child.on("close", (code, signal) => finish(code, signal));
  });
}

const running = new Set<number>();

function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // the group has already exited
  }
}

/** "[ 12/56  3:20] api/server-read.test.ts: 41 passed, 12.3 s": printed the moment a job ends, so a long run shows it moves. */
export function progressLine(o: Outcome, ended: number, total: number, elapsedMs: number): string {
  const clock = `${Math.floor(elapsedMs / 60_000)}:${String(Math.floor(elapsedMs / 1000) % 60).padStart(2, "0")}`;
  const summary = o.job.uvu ? readSummary(o.output) : null;
  const failedTests = summary ? summary.total - summary.passed : 0;
  const result = o.timedOut
    ? "stopped: timed out"
    : failedTests > 0
      ? `${failedTests} of ${summary!.total} FAILED`
      : o.code !== 0
        ? `failed (${o.signal ? `killed by ${o.signal}` : `exit ${o.code}`})`
        : summary
          ? `${summary.passed} passed`
          : "ok";
  return `[${String(ended).padStart(String(total).length)}/${total} ${clock.padStart(5)}] ${o.job.name}: ${result}, ${o.seconds.toFixed(1)} s\n`;
}

/** Prints finished outputs in job order: each as soon as every job before it has been printed. */
class OrderedPrinter {
  private next = 0;
  private readonly done = new Map<number, Outcome>();
  constructor(private readonly write: (text: string) => void) {}

  add(outcome: Outcome): void {
    this.done.set(outcome.job.order, outcome);
    for (let o = this.done.get(this.next); o; o = this.done.get(this.next)) {
      const status = o.timedOut ? "stopped: timed out" : o.signal ? `killed by ${o.signal}` : `exit ${o.code}`;
      this.write(`\n=== ${o.job.name} (${o.seconds.toFixed(1)} s, ${status})\n`);
      this.write(o.output.endsWith("\n") || o.output === "" ? o.output : `${o.output}\n`);
      this.done.delete(this.next++);
    }
  }
}

/** Starts jobs while fewer than `concurrency` run: the fixtures first, then the longest ready job; resolves when all have ended. */
async function runPool(jobs: Job[], concurrency: number, expected: (job: Job) => number, timeoutSec: number, onDone: (o: Outcome) => void): Promise<Outcome[]> {
  const waiting = [...jobs].sort((a, b) => (a.name === "fixtures" ? -1 : b.name === "fixtures" ? 1 : expected(b) - expected(a) || a.order - b.order));
  const fixturesPending = () => jobs.some((j) => j.name === "fixtures") && !outcomes.some((o) => o.job.name === "fixtures");
  const outcomes: Outcome[] = [];
  let active = 0;
  return new Promise((allDone) => {
    const fill = () => {
      while (active < concurrency) {
        const i = waiting.findIndex((j) => !j.needsFixtures || !fixturesPending());
        if (i < 0) break;
        const [job] = waiting.splice(i, 1);
        active++;
        void runJob(job, timeoutSec).then((outcome) => {
          active--;
          outcomes.push(outcome);
          onDone(outcome);
          if (waiting.length === 0 && active === 0) allDone(outcomes);
          else fill();
        });
      }
    };
    if (jobs.length === 0) allDone(outcomes);
    else fill();
  });
}

/** Every job's publishes start their threads from built JavaScript; when the build fails, from TypeScript as alone. */
async function useBuiltWorkers(write: (text: string) => void): Promise<void> {
  try {
    process.env.PIPELINE_WORKERS = await bundleWorkers();
  } catch (err) {
    write(`could not build the pipeline's workers (the typecheck will say why), so threads start under tsx: ${(err as Error).message}\n`);
  }
}

/** The shared fixtures are read-only: a run that changed them fails, and the next run builds them again. */
async function checkFixturesUntouched(tally: Tally): Promise<void> {
  const folder = preparedFixtures();
  if (!folder) return;
  const problems = await checkManifest(folder);
  if (problems.length === 0) return;
  tally.failed += 1;
  tally.notes.push(`a test wrote into the shared fixtures (${folder}; copy them first: copyDist): ${problems.slice(0, 10).join(", ")}`);
  await rm(folder, { recursive: true, force: true });
}

async function keepDurations(file: string | null, outcomes: Outcome[]): Promise<void> {
  if (!file) return;
  const durations = readDurations(file);
  for (const o of outcomes) if (!o.timedOut) durations[o.job.name] = Math.round(o.seconds * 10) / 10;
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(durations, null, 2)}\n`);
}

/** Runs the jobs, prints every output and the failures, and returns the tally (the caller prints the last line). */
export async function runTests(options: RunOptions): Promise<Tally> {
  const write = options.write ?? ((text: string) => process.stdout.write(text));
  const dir = options.dir ?? join(ROOT, "test");
  const jobs = planJobs(options);
  const concurrency = Math.max(1, options.jobs ?? availableParallelism());
  const durationsFile = options.durationsFile === undefined ? DURATIONS_FILE : options.durationsFile;
  const seedFile = options.seedDurationsFile === undefined ? (options.dir ? null : SEED_DURATIONS_FILE) : options.seedDurationsFile;
  const durations = { ...readDurations(seedFile), ...readDurations(durationsFile) };
  const started = performance.now();
  if (options.workers) await useBuiltWorkers(write);
  write(`${jobs.length} jobs, ${concurrency} at a time; a line as each ends, then its output in name order\n`);
  const printer = new OrderedPrinter(write);
  let ended = 0;
  const onDone = (o: Outcome) => {
    write(progressLine(o, ++ended, jobs.length, performance.now() - started));
    printer.add(o);
  };
  const outcomes = await runPool(jobs, concurrency, (job) => expectedSeconds(job, durations, dir), options.timeoutSec ?? DEFAULT_TIMEOUT_SEC, onDone);
  await keepDurations(durationsFile, outcomes);
  const tally: Tally = { passed: 0, failed: 0, notes: [] };
  for (const outcome of [...outcomes].sort((a, b) => a.job.order - b.job.order)) countOutcome(tally, outcome);
  if (options.fixtures) await checkFixturesUntouched(tally);
  const slowest = [...outcomes].sort((a, b) => b.seconds - a.seconds).slice(0, 5);
  write(`\nwall time ${((performance.now() - started) / 1000).toFixed(1)} s; slowest: ${slowest.map((o) => `${o.job.name} ${o.seconds.toFixed(1)} s`).join(", ")}\n`);
  for (const note of tally.notes) write(`FAILED ${note}\n`);
  return tally;
}

function parseArgs(argv: string[]): RunOptions {
  const options: RunOptions = { typecheck: true, fixtures: true, workers: true, nginx: NGINX_SUITES };
  const jobs = Number(process.env.TEST_JOBS);
  if (Number.isInteger(jobs) && jobs > 0) options.jobs = jobs;
  const timeout = Number(process.env.TEST_TIMEOUT_SEC);
  if (timeout > 0) options.timeoutSec = timeout;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--dir") {
      // another folder of test files (the runner's own tests): its durations kept there; no typecheck, no shared
      // fixtures, no nginx pass
      const dir = resolve(argv[++i]);
      Object.assign(options, { dir, durationsFile: join(dir, "durations.json"), typecheck: false, fixtures: false, workers: false, nginx: null });
    } else if (arg === "--no-typecheck") options.typecheck = false;
    else if (arg === "--no-nginx") options.nginx = null;
    else options.pattern = new RegExp(arg);
  }
  return options;
}

async function main(): Promise<void> {
  const stop = () => {
    for (const pid of running) killGroup(pid);
    process.exit(130);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  const tally = await runTests(parseArgs(process.argv.slice(2))).catch((err: Error): Tally => {
    process.stdout.write(`the test runner failed: ${err.stack ?? err}\n`);
    return { passed: 0, failed: 1, notes: [] };
  });
  process.stdout.write(`${tally.passed} passed, ${tally.failed} failed\n`);
  process.exitCode = tally.failed === 0 ? 0 : 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) void main();
