// A fixed pool of worker threads, one per core, each running one task at a time.

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { availableParallelism } from "node:os";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";

/**
 * Under tsx (tests, `make publish` from sources) a worker's TypeScript entry needs tsx's loader registered in
 * that thread first; built JavaScript starts directly.
 */
function startWorker(entry: URL): Worker {
  // geotiff loads the web-worker package, which in any worker thread reads workerData.mod; an empty
  // workerData tells it this thread is not one of its own.
  const workerData = {};
  if (!entry.pathname.endsWith(".ts")) return new Worker(entry, { workerData });
  const loader = resolveTsxLoader();
  const boot = `import(${JSON.stringify(loader)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); });`;
  return new Worker(boot, { eval: true, workerData });
}

/**
 * tsx's ESM loader entry, from its package.json: not import.meta.resolve, because test runners may load this
 * module as CommonJS, and not require.resolve, which would pick the CommonJS build.
 */
function resolveTsxLoader(): string {
  const packageFile = createRequire(import.meta.url).resolve("tsx/package.json");
  const exports = (JSON.parse(readFileSync(packageFile, "utf8")) as { exports: Record<string, { import: { default: string } | string }> }).exports;
  const entry = exports["./esm/api"].import;
  return pathToFileURL(join(dirname(packageFile), typeof entry === "string" ? entry : entry.default)).href;
}

interface Job<T, R> {
  task: T;
  resolve: (result: R) => void;
  reject: (err: Error) => void;
}

export class WorkerPool<T, R> {
  private readonly idle: Worker[] = [];
  private readonly queue: Job<T, R>[] = [];
  private readonly busy = new Map<Worker, Job<T, R>>();
  private readonly workers: Worker[] = [];
  /** set when a worker dies: every job after that fails with it rather than wait forever */
  private failure: Error | null = null;
  private closing = false;

  constructor(entry: URL, size = availableParallelism()) {
    for (let i = 0; i < Math.max(1, size); i++) {
      const worker = startWorker(entry);
      worker.on("message", (result: R) => this.finish(worker, (job) => job.resolve(result)));
      worker.on("error", (err) => this.fail(err));
      worker.on("exit", (code) => {
        if (!this.closing) this.fail(new Error(`a decoding thread stopped (exit code ${code})`));
      });
      this.workers.push(worker);
      this.idle.push(worker);
    }
  }

  get size(): number {
    return this.workers.length;
  }

  run(task: T): Promise<R> {
    return new Promise((resolve, reject) => {
      if (this.failure) return reject(this.failure);
      this.queue.push({ task, resolve, reject });
      this.dispatch();
    });
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const job of [...this.busy.values(), ...this.queue.splice(0)]) job.reject(this.failure);
    this.busy.clear();
  }

  private finish(worker: Worker, settle: (job: Job<T, R>) => void): void {
    const job = this.busy.get(worker);
    this.busy.delete(worker);
    this.idle.push(worker);
    if (job) settle(job);
    this.dispatch();
  }

  private dispatch(): void {
    while (this.idle.length > 0 && this.queue.length > 0) {
      const worker = this.idle.pop()!;
      const job = this.queue.shift()!;
      this.busy.set(worker, job);
      worker.postMessage(job.task);
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
