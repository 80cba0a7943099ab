// A fixed pool of worker threads, one per core, each running one task at a time.

import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { availableParallelism } from "node:os";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";

/** A package export a worker imports first, before anything else (see startWorker). */
export interface Preload {
  name: string;
  subpath: string;
}

/**
 * Under tsx (tests, `make publish` from sources) a worker's TypeScript entry needs tsx's loader registered in
 * that thread first; built JavaScript starts directly. A large plain-JavaScript package is imported before the
 * loader: through it, tsx would rewrite every byte of the package in every thread.
 */
function startWorker(entry: URL, preload: Preload[]): Worker {
  // geotiff loads the web-worker package, which in any worker thread reads workerData.mod; an empty
  // workerData tells it this thread is not one of its own.
  const workerData = {};
  if (!entry.pathname.endsWith(".ts")) return new Worker(entry, { workerData });
  const built = builtEntry(entry);
  if (built) return new Worker(built, { workerData });
  const loader = resolveImport("tsx", "./esm/api");
  const first = preload.map((p) => `import(${JSON.stringify(resolveImport(p.name, p.subpath))})`).join(", ");
  const boot = `Promise.all([${first}]).then(() => import(${JSON.stringify(loader)})).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(boot, { eval: true, workerData });
}

/**
 * The entry built as JavaScript in the folder PIPELINE_WORKERS names (the project's paths under it), when there is
 * one: make test builds every pipeline worker there first (test/support/worker-bundles.ts), since a thread under tsx spends
 * about half a second of CPU on its loader and compiling, and the tests start hundreds of threads.
 */
function builtEntry(entry: URL): URL | null {
  const folder = process.env.PIPELINE_WORKERS;
  if (!folder) return null;
  const root = fileURLToPath(new URL("..", import.meta.url));
  const file = join(folder, relative(root, fileURLToPath(entry)).replace(/\.ts$/, ".js"));
  return existsSync(file) ? pathToFileURL(file) : null;
}

/**
 * A package's ESM entry for `subpath`, from its package.json: not import.meta.resolve, because test runners may
 * load this module as CommonJS, and not require.resolve, which would pick a CommonJS build (or none).
 */
function resolveImport(name: string, subpath: string): string {
  const require = createRequire(import.meta.url);
  const dir = (require.resolve.paths(name) ?? []).map((d) => join(d, name)).find((d) => existsSync(join(d, "package.json")));
  if (!dir) throw new Error(`cannot find the ${name} package; run make install`);
  const exports = (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { exports: Record<string, { import: { default: string } | string }> }).exports;
  const entry = exports[subpath].import;
  return pathToFileURL(join(dir, typeof entry === "string" ? entry : entry.default)).href;
}

interface Job<T, R> {
  task: T;
  resolve: (result: R) => void;
  reject: (err: Error) => void;
}

/**
 * Threads start as tasks arrive, up to `size`: a publish that decodes one day starts one thread, and one that
 * decodes nothing starts none.
 */
/**
 * A publish's threads, for its decoding pool and its series encoders alike: one per core by default, at most 8. A
 * decoding thread holds about 20 file descriptors (its module loader), so the cap keeps a publish under an open-file
 * limit of 256 on any machine; an encoder holds a strip of its span, about 80 MB for a full-grid year.
 * docs/publishing.md "The backfill" measures how the publish scales with them.
 */
export function publishThreads(requested?: number): number {
  return Math.max(1, requested ?? Math.min(availableParallelism(), 8));
}

export class WorkerPool<T, R> {
  private readonly idle: Worker[] = [];
  private readonly queue: Job<T, R>[] = [];
  private readonly busy = new Map<Worker, Job<T, R>>();
  /** jobs for one thread each (each): taken by that thread before the shared queue */
  private readonly pinned = new Map<Worker, Job<T, R>[]>();
  private readonly workers: Worker[] = [];
  /** set when a worker dies: every job after that fails with it rather than wait forever */
  private failure: Error | null = null;
  private closing = false;

  constructor(
    private readonly entry: URL,
    readonly size = availableParallelism(),
    private readonly preload: Preload[] = [],
  ) {
    this.size = Math.max(1, size);
  }

  /** threads started so far */
  get started(): number {
    return this.workers.length;
  }

  run(task: T): Promise<R> {
    return new Promise((resolve, reject) => {
      if (this.failure) return reject(this.failure);
      this.queue.push({ task, resolve, reject });
      this.dispatch();
    });
  }

  /** Runs `task` once on every thread started so far, each after the task it is running; no thread is started for it. */
  each(task: T): Promise<R[]> {
    return Promise.all(
      this.workers.map(
        (worker) =>
          new Promise<R>((resolve, reject) => {
            if (this.failure) return reject(this.failure);
            this.pinned.set(worker, [...(this.pinned.get(worker) ?? []), { task, resolve, reject }]);
            this.dispatch();
          }),
      ),
    );
  }

  private start(): void {
    const worker = startWorker(this.entry, this.preload);
    worker.on("message", (result: R) => this.finish(worker, (job) => job.resolve(result)));
    worker.on("error", (err) => this.fail(err));
    worker.on("exit", (code) => {
      if (!this.closing) this.fail(new Error(`a decoding thread stopped (exit code ${code})`));
    });
    this.workers.push(worker);
    this.idle.push(worker);
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const job of [...this.busy.values(), ...this.queue.splice(0), ...[...this.pinned.values()].flat()]) job.reject(this.failure);
    this.busy.clear();
    this.pinned.clear();
  }

  private finish(worker: Worker, settle: (job: Job<T, R>) => void): void {
    const job = this.busy.get(worker);
    this.busy.delete(worker);
    this.idle.push(worker);
    if (job) settle(job);
    this.dispatch();
  }

  private dispatch(): void {
    while (this.queue.length > this.idle.length && this.workers.length < this.size && !this.closing) this.start();
    for (let i = this.idle.length - 1; i >= 0; i--) {
      const worker = this.idle[i];
      const job = this.pinned.get(worker)?.shift() ?? this.queue.shift();
      if (!job) continue;
      this.idle.splice(i, 1);
      this.busy.set(worker, job);
      worker.postMessage(job.task);
    }
  }

  /** Stops every thread; closing again does nothing. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
