// The server's settings: every one an environment variable with a default for a small machine (2 cores), read and
// checked once at start. Each default is stated here alone (READS's is every storage's, in format/local.ts): make serve
// passes a variable only when it is set, make help prints them, and docs/operating.md "Limits and settings" lists them
// (test/pipeline/defaults.test.ts holds it to these).

import { availableParallelism } from "node:os";
import { DEFAULT_READS } from "../format/local.js";

export interface ServeConfig {
  /** a folder, or the http(s) URL of a dist on a static host */
  dist: string;
  /** how often catalog.json is checked for a new publish (ms) */
  catalogMs: number;
  port: number;
  host: string;
  log: boolean;
  environment: string;
  /** memory for caches, MiB: three quarters for verified pieces and blocks, a quarter for computed answers */
  cacheMb: number;
  /** where a folder's files are read: on the event loop's thread (its page cache) or libuv's threadpool (format/local.ts StorageReads) */
  reads: "sync" | "threadpool";
  limits: ServeLimits;
}

/** Load shedding, fairness and timeouts: the transport's bounds (the contract's limits are not among them). */
export interface ServeLimits {
  /** computed answers being worked on at once */
  active: number;
  /** computed answers waiting for a turn, over all clients, and for one client */
  queue: number;
  queuePerClient: number;
  /** longest wait for a turn before 503 */
  queueMs: number;
  /** Retry-After of a 503 (seconds) */
  retryAfterS: number;
  /**
   * after a 503 for load, the connection's next request is read this much later: a client that ignores
   * Retry-After cannot keep the server busy answering 503s (and busy event-loop turns would delay accepting
   * new connections: Node accepts one connection per turn)
   */
  shedPauseMs: number;
  /** request header naming the client (behind a trusted proxy: X-Forwarded-For); null: the peer's address */
  clientHeader: string | null;
  /** SIGTERM/SIGINT: the longest the stop takes, its drain window included */
  drainMs: number;
  /**
   * SIGTERM/SIGINT: how long the server goes on accepting and answering (every answer with `Connection: close`) before
   * it closes its listener, so that clients and load balancers move on and no connection the kernel accepted is reset
   */
  drainWindowMs: number;
  /** a request's line and headers must arrive within this */
  headersMs: number;
  /** a body must arrive within this, once its headers have */
  bodyMs: number;
  /** an idle keep-alive connection is closed after this */
  idleMs: number;
  /** a connection with no progress either way (a client that stops reading) is closed after this */
  sendMs: number;
  /** bytes of answers being sent past which computed answers wait for a turn (server/admission.ts) */
  sendBytes: number;
}

/** What is served and where, and the caches' memory, when the environment does not say. */
export const SERVE_DEFAULTS = {
  dist: "dist",
  port: 8080,
  host: "127.0.0.1",
  /** what /api/health reports */
  environment: "demo",
  cacheMb: 32,
  /** the one default of every storage's reads, stated beside them (format/local.ts) */
  reads: DEFAULT_READS,
  /** how often catalog.json is looked at: a folder's costs a stat, a URL's a request to the host */
  catalogPollMs: { folder: 500, url: 5000 },
} as const;

export const DEFAULT_LIMITS: ServeLimits = {
  // one computed answer per core: the work is CPU on one event loop (reads too, READS=sync), and more at once
  // only lengthens the event loop's turns (measured: 2 on 2 cores answered more, and health faster, than 4 or 8)
  active: availableParallelism(),
  queue: 64,
  queuePerClient: 16,
  queueMs: 500,
  retryAfterS: 1,
  shedPauseMs: 500,
  clientHeader: null,
  drainMs: 10_000,
  // long enough for keep-alive clients to learn Connection: close and for connections queued in a busy turn to be
  // taken; short, because a restart waits for it (a load balancer's deregistration delay wants it longer)
  drainWindowMs: 1000,
  headersMs: 10_000,
  bodyMs: 10_000,
  idleMs: 5_000,
  sendMs: 30_000,
  // a series call's answer is up to about 10 MB, an OPeNDAP .dods up to 40 MB: a few series answers at once fit, and
  // memory stays bounded however many read slowly (8 bound-size .dods at once: peak RSS 258 MB at 64, 180 at 32, as fast)
  sendBytes: 32 << 20,
};

/** One variable: a whole number in range, else a message naming it. */
function readInt(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const spec = env[name];
  if (spec === undefined || spec === "") return fallback;
  const n = Number(spec);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name}=${spec} is not a whole number from ${min} to ${max}`);
  return n;
}

function readClientHeader(spec: string | undefined): string | null {
  if (!spec) return null;
  if (!/^[A-Za-z0-9-]{1,64}$/.test(spec)) throw new Error(`CLIENT_HEADER=${spec} is not a header name`);
  return spec.toLowerCase();
}

export function readLimits(env: NodeJS.ProcessEnv): ServeLimits {
  const d = DEFAULT_LIMITS;
  const queue = readInt(env, "WORK_QUEUE", d.queue, 0, 100_000);
  return {
    active: readInt(env, "WORK_ACTIVE", d.active, 1, 1024),
    queue,
    queuePerClient: readInt(env, "WORK_QUEUE_PER_CLIENT", Math.min(d.queuePerClient, queue), 0, 100_000),
    queueMs: readInt(env, "WORK_QUEUE_MS", d.queueMs, 1, 600_000),
    retryAfterS: readInt(env, "RETRY_AFTER_S", d.retryAfterS, 0, 86_400),
    shedPauseMs: readInt(env, "SHED_PAUSE_MS", d.shedPauseMs, 0, 60_000),
    clientHeader: readClientHeader(env.CLIENT_HEADER),
    drainMs: readInt(env, "DRAIN_TIMEOUT_MS", d.drainMs, 0, 3_600_000),
    drainWindowMs: readInt(env, "DRAIN_WINDOW_MS", d.drainWindowMs, 0, 3_600_000),
    headersMs: readInt(env, "HEADERS_TIMEOUT_MS", d.headersMs, 100, 3_600_000),
    bodyMs: readInt(env, "BODY_TIMEOUT_MS", d.bodyMs, 100, 3_600_000),
    idleMs: readInt(env, "IDLE_TIMEOUT_MS", d.idleMs, 100, 3_600_000),
    sendMs: readInt(env, "SEND_TIMEOUT_MS", d.sendMs, 100, 3_600_000),
    sendBytes: readInt(env, "SEND_HELD_MB", d.sendBytes / 2 ** 20, 1, 65_536) * 2 ** 20,
  };
}

function readReads(spec: string | undefined, fallback: ServeConfig["reads"]): ServeConfig["reads"] {
  if (spec === undefined || spec === "") return fallback;
  if (spec !== "sync" && spec !== "threadpool") throw new Error(`READS=${spec} is neither sync (the page cache holds the dist) nor threadpool (a dist larger than memory)`);
  return spec;
}

/** Whether DIST names a dist on a static host (read over HTTP) rather than a folder. */
export function isDistUrl(dist: string): boolean {
  return /^https?:\/\//i.test(dist);
}

export function readServeConfig(env: NodeJS.ProcessEnv): ServeConfig {
  const d = SERVE_DEFAULTS;
  const dist = env.DIST || d.dist;
  if (isDistUrl(dist)) {
    try {
      new URL(dist);
    } catch {
      throw new Error(`DIST=${dist} is not a URL this server can read; give a folder, or the http(s) URL of the folder holding catalog.json`);
    }
  }
  return {
    dist,
    catalogMs: readInt(env, "CATALOG_POLL_MS", isDistUrl(dist) ? d.catalogPollMs.url : d.catalogPollMs.folder, 50, 3_600_000),
    port: readInt(env, "PORT", d.port, 0, 65535),
    host: env.HOST || d.host,
    log: env.LOG !== "0",
    environment: env.SERVICE_ENVIRONMENT || d.environment,
    cacheMb: readInt(env, "CACHE_MB", d.cacheMb, 4, 65536),
    reads: readReads(env.READS, d.reads),
    limits: readLimits(env),
  };
}

/**
 * Node's flags that size the server's heap to its caches, as make serve and the bench start it: a young generation of
 * 4 MiB (answers are built per request, and a small nursery keeps memory near the caches at no cost in throughput) and
 * an old generation of 64 MiB plus twice CACHE_MB, so garbage is collected before the process grows (measured in make
 * bench). Make asks the built module (build/settings.js) before it starts the server, so CACHE_MB's default is this file's.
 */
export function heapFlags(env: NodeJS.ProcessEnv): string[] {
  return ["--max-semi-space-size=4", `--max-old-space-size=${64 + 2 * readServeConfig(env).cacheMb}`];
}

/** make serve's variables beside DIST (the pipeline's too) and their defaults, as make help prints them. */
export function describeServeDefaults(): string[] {
  const d = SERVE_DEFAULTS;
  const rows: [string, string | number][] = [["PORT", d.port], ["HOST", d.host], ["CACHE_MB", d.cacheMb]];
  return rows.map(([name, value]) => `${name.padEnd(15)}${value}`);
}
