// Load and process helpers of the bench: the server and a sirv baseline as child processes on 127.0.0.1,
// wrk runs (bounded in time), start-up timing and resident memory.

import { type ChildProcess, execFile, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { type AddressInfo, createServer } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { heapFlags } from "../server/settings.js";

const run = promisify(execFile);

export interface Proc {
  child: ChildProcess;
  /** the process that serves (for `make serve`, make's child) */
  pid: number;
  url: string;
  /** ms from spawn to the first 200 of GET /api/health (server) or of any file (sirv) */
  startMs: number;
  stop(): Promise<void>;
}

async function waitFor(url: string, deadlineMs: number): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    try {
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > until) throw new Error(`${url} did not answer within ${deadlineMs} ms`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** A port nobody listens on now (the kernel's choice), for a process that takes its port from PORT. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** The deepest process below `pid` (make -> node): the one whose memory counts. */
function leafOf(pid: number): number {
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
    return children.length ? leafOf(children[0]) : pid;
  } catch {
    return pid;
  }
}

async function startProcess(command: string, args: string[], env: Record<string, string>, probePath: string, stderr?: (text: string) => void): Promise<Proc> {
  const port = await freePort();
  const t0 = performance.now();
  // its own process group, so stopping it stops whatever it started
  const child = spawn(command, args, { env: { ...process.env, ...env, PORT: String(port) }, stdio: ["ignore", "ignore", stderr ? "pipe" : "inherit"], detached: true });
  if (stderr) child.stderr!.on("data", (chunk: Buffer) => stderr(chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}${probePath}`, 30_000);
  const startMs = performance.now() - t0;
  return {
    child,
    pid: leafOf(child.pid!),
    url,
    startMs,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        // the serving process first (it closes cleanly, so make has nothing to report), then the whole group
        const signal = (pid: number, name: NodeJS.Signals) => {
          try {
            process.kill(pid, name);
          } catch {
            // already gone
          }
        };
        signal(leafOf(child.pid!), "SIGTERM");
        setTimeout(() => child.exitCode === null && signal(-child.pid!, "SIGKILL"), 3000).unref();
      }),
  };
}

/** The server exactly as a maintainer starts it: `make serve` (the built bundle, its flags); `env` adds settings. */
export function startServer(dist: string, env: Record<string, string> = {}, stderr?: (text: string) => void): Promise<Proc> {
  return startProcess("make", ["--no-print-directory", "-s", "serve", `DIST=${dist}`], { LOG: "0", ...env }, "/api/health", stderr);
}

/** A server bundle (SERVER_JS or another build of it) started with make serve's node flags: for A/B runs of two builds. */
export function startServerBundle(bundle: string, dist: string, env: Record<string, string> = {}, stderr?: (text: string) => void): Promise<Proc> {
  return startProcess("node", [...heapFlags(env), bundle], { LOG: "0", DIST: dist, HOST: "127.0.0.1", ...env }, "/api/health", stderr);
}

/** The floor of any start: node starting a bare HTTP server that answers 200 (on this machine, now). */
export function startBareNode(): Promise<Proc> {
  return startProcess("node", ["-e", 'require("http").createServer((q, r) => r.end("ok")).listen(Number(process.env.PORT), "127.0.0.1")'], {}, "/");
}

/** sirv serving `dir` as static files, precompressed .br/.gz siblings included: the floor to compare with. */
export async function startStatic(dir: string, probeFile: string): Promise<Proc> {
  const script = join(dir, "..", "static-server.mjs");
  await writeFile(
    script,
    `import http from "node:http"; import sirv from ${JSON.stringify(new URL("../node_modules/sirv/build.mjs", import.meta.url).href)};
     const serve = sirv(${JSON.stringify(dir)}, { etag: true, brotli: true, gzip: true, maxAge: 60 });
     http.createServer((req, res) => serve(req, res)).listen(Number(process.env.PORT), "127.0.0.1");`,
  );
  return startProcess("node", [script], {}, `/${probeFile}`);
}

/** Resident memory of a process now and at its peak, from /proc (MB); `fileMb` is the part that maps files (node's own code pages, touched as new paths run). */
export function readRss(pid: number): { rssMb: number; peakMb: number; fileMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  return { rssMb: kb("VmRSS") / 1024, peakMb: kb("VmHWM") / 1024, fileMb: kb("RssFile") / 1024 };
}

export interface WrkResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

function toMs(text: string): number {
  const m = /([0-9.]+)(us|ms|s)/.exec(text);
  if (!m) return NaN;
  return Number(m[1]) * (m[2] === "us" ? 0.001 : m[2] === "s" ? 1000 : 1);
}

/** wrk, one thread, 10 connections (or `connections`), for `seconds`; a Lua script for POST bodies or varied requests. */
export async function runWrk(url: string, seconds: number, script?: string, headers: Record<string, string> = {}, connections = 10): Promise<WrkResult> {
  const args = ["-t1", `-c${connections}`, `-d${seconds}s`, "--latency", ...(script ? ["-s", script] : [])];
  for (const [k, v] of Object.entries(headers)) args.push("-H", `${k}: ${v}`);
  const { stdout } = await run("wrk", [...args, url], { timeout: (seconds + 30) * 1000 });
  const rps = Number(/Requests\/sec:\s+([0-9.]+)/.exec(stdout)?.[1] ?? 0);
  const p50 = toMs(/\n\s+50%\s+(\S+)/.exec(stdout)?.[1] ?? "");
  const p99 = toMs(/\n\s+99%\s+(\S+)/.exec(stdout)?.[1] ?? "");
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(stdout)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  const errors = non2xx + (socket ? Number(socket[1]) + Number(socket[2]) + Number(socket[3]) + Number(socket[4]) : 0);
  return { rps, p50Ms: p50, p99Ms: p99, errors };
}

/** A wrk Lua script sending one POST body again and again. */
export function postScript(body: string): string {
  return `wrk.method = "POST"\nwrk.body = ${JSON.stringify(body)}\nwrk.headers["Content-Type"] = "application/json"\n`;
}

/**
 * A wrk Lua script sending a different query each time (another place, another date), all of one shape:
 * the computed path, which no answer cache can serve; `endOnLast`: every period ends on the last date.
 */
export function variedQueryScript(
  shape: { width: number; height: number; days: number; format: "json" | "csv" },
  dates: string[],
  cols: [number, number],
  rows: [number, number],
  endOnLast = false,
): string {
  return `local dates = {${dates.map((d) => JSON.stringify(d)).join(",")}}
local n = 0
request = function()
  n = n + 1
  -- every cell of the box in turn, 7919 apart (a prime: the period is the whole box), so no cache holds the places
  local cell = (n * 7919) % ${(cols[1] - cols[0]) * (rows[1] - rows[0])}
  local col = ${cols[0]} + cell % ${cols[1] - cols[0]}
  local row = ${rows[0]} + math.floor(cell / ${cols[1] - cols[0]})
  local i = ${endOnLast ? `#dates - ${shape.days - 1}` : `1 + (n * 31) % (#dates - ${shape.days})`}
  local west = (111975 + 50 * col) / 1000
  local north = (-9975 - 50 * row) / 1000
  local body = string.format('{"variables":["air_temperature_max"],"region":{"bbox":[%.3f,%.3f,%.3f,%.3f],"crs":"EPSG:4326"},"period":{"start":"%s","end":"%s"},"temporal_resolution":"daily","spatial_resolution":"native","units":{"air_temperature_max":"degC"},"data_class":"interpolated_observation","missing_policy":"preserve","source_preference":"silo","format":"${shape.format}"}', west, north - ${shape.height * 0.05}, west + ${shape.width * 0.05}, north, dates[i], dates[i + ${shape.days - 1}])
  return wrk.format("POST", "/api/v1/data/query", {["Content-Type"] = "application/json"}, body)
end
`;
}

/** A wrk Lua script asking for a different tile each time: another date of the year, another lattice tile. */
export function variedTileScript(versionId: string, dates: string[], tiles: string[]): string {
  return `local dates = {${dates.map((d) => JSON.stringify(d.replaceAll("-", ""))).join(",")}}
local tiles = {${tiles.map((t) => JSON.stringify(t)).join(",")}}
local n = 0
request = function()
  n = n + 1
  local path = "/api/v1/layers/${versionId}?tile=" .. dates[1 + (n * 7) % #dates] .. "-" .. tiles[1 + n % #tiles]
  return wrk.format("GET", path)
end
`;
}

export interface CountedRun {
  /** answers by status */
  statuses: Record<number, number>;
  /** 503 answers without Retry-After */
  noRetryAfter: number;
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** requests not answered within the timeout */
  timeouts: number;
  /** connections refused, reset or broken while reading or writing */
  socketErrors: { connect: number; read: number; write: number };
}

/** Lua appended to a request script: counts answers by status and 503s without Retry-After, printed at the end. */
const COUNTING_LUA = `
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) statuses = {} noretry = 0 end
function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
  if status == 503 and headers["Retry-After"] == nil then noretry = noretry + 1 end
end
function done(summary, latency, requests)
  local total = {}
  local nr = 0
  for _, t in ipairs(threads) do
    for k, v in pairs(t:get("statuses")) do total[k] = (total[k] or 0) + v end
    nr = nr + t:get("noretry")
  end
  for k, v in pairs(total) do io.write(string.format("STATUS %d %d\\n", k, v)) end
  io.write(string.format("NORETRY %d\\nMAXUS %d\\n", nr, latency.max))
end
`;

/**
 * wrk with `connections` connections for `seconds`, a request timeout, and every answer counted by status; the
 * script `base` makes the requests (it must not define setup, init, response or done).
 */
export async function runWrkCounting(url: string, seconds: number, connections: number, timeoutS: number, base: string, scriptPath: string): Promise<CountedRun> {
  await writeFile(scriptPath, base + COUNTING_LUA);
  const args = ["-t1", `-c${connections}`, `-d${seconds}s`, "--timeout", `${timeoutS}s`, "--latency", "-s", scriptPath, url];
  const { stdout } = await run("wrk", args, { timeout: (seconds + 60) * 1000, maxBuffer: 1 << 20 });
  const statuses: Record<number, number> = {};
  for (const m of stdout.matchAll(/^STATUS (\d+) (\d+)$/gm)) statuses[Number(m[1])] = Number(m[2]);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  return {
    statuses,
    noRetryAfter: Number(/^NORETRY (\d+)$/m.exec(stdout)?.[1] ?? 0),
    requests: Number(/(\d+) requests in/.exec(stdout)?.[1] ?? 0),
    rps: Number(/Requests\/sec:\s+([0-9.]+)/.exec(stdout)?.[1] ?? 0),
    p50Ms: toMs(/\n\s+50%\s+(\S+)/.exec(stdout)?.[1] ?? ""),
    p99Ms: toMs(/\n\s+99%\s+(\S+)/.exec(stdout)?.[1] ?? ""),
    maxMs: Number(/^MAXUS (\d+)$/m.exec(stdout)?.[1] ?? 0) / 1000,
    timeouts: Number(socket?.[4] ?? 0),
    socketErrors: { connect: Number(socket?.[1] ?? 0), read: Number(socket?.[2] ?? 0), write: Number(socket?.[3] ?? 0) },
  };
}

/** A wrk script asking GET `path` every `delayMs` on each connection (a paced probe: health as a checker asks it). */
export function pacedScript(path: string, delayMs: number, close = false): string {
  return `wrk.path = ${JSON.stringify(path)}\n${close ? 'wrk.headers["Connection"] = "close"\n' : ""}function delay() return ${delayMs} end\n`;
}
