// The soak of `make bench`: 64 connections (8 clients of 8) of mixed routes, valid and invalid requests, for
// BENCH_SOAK_SECONDS (default 600), with a live publish into the served dist half-way. Goals: no error but
// deliberate 503s, no answer mixing two catalogs (nor one going back to the old catalog after the new one was
// seen), and RSS at the end within 10% of RSS after the first minute.

import { execFile } from "node:child_process";
import http from "node:http";
import { promisify } from "node:util";
import { makeDataRequest } from "../api/query/request.js";
import { type Proc, readRss, startServer } from "./load.js";
import type { OperationsContext } from "./tools.js";

const run = promisify(execFile);
const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

interface Ask {
  method: string;
  path: string;
  body?: string;
  type?: string;
}

interface Kind {
  name: string;
  make: (n: number) => Ask;
  /** statuses this request answers (503 with Retry-After is always allowed for computed routes) */
  expect: number[];
  computed: boolean;
}

interface Seen {
  kind: string;
  status: number;
  started: number;
  ended: number;
  version?: string;
  ids?: string;
}

const JSON_TYPE = "application/json";

/** The request mix: every route, valid and invalid, cells and dates varied by the request's number. */
function mixOf(version: string, year: string[]): Kind[] {
  const cell = (n: number): [number, number, number, number] => [300 + ((n * 7919) % 350), 120 + ((n * 104729) % 300), 1, 1];
  const day = (n: number) => year[(n * 31) % (year.length - 31)];
  const query = (body: object): Ask => ({ method: "POST", path: "/api/v1/data/query", body: JSON.stringify(body), type: JSON_TYPE });
  const tile = (n: number) => `${year[(n * 7) % year.length].replaceAll("-", "")}-r${n % 2}-c${1 + (n % 2)}`;
  return [
    { name: "health", make: () => ({ method: "GET", path: "/api/health" }), expect: [200], computed: false },
    { name: "capabilities", make: () => ({ method: "GET", path: "/api/v1/capabilities" }), expect: [200], computed: false },
    { name: "catalog", make: () => ({ method: "GET", path: "/api/v1/datasets?limit=1000" }), expect: [200], computed: true },
    { name: "inspect", make: () => ({ method: "GET", path: `/api/v1/datasets/${version}` }), expect: [200], computed: true },
    { name: "layer page", make: (n) => ({ method: "GET", path: `/api/v1/layers/${version}?limit=${1 + (n % 20)}` }), expect: [200], computed: true },
    { name: "tile", make: (n) => ({ method: "GET", path: `/api/v1/layers/${version}?tile=${tile(n)}` }), expect: [200], computed: true },
    { name: "sample", make: (n) => ({ method: "GET", path: `/api/v1/layers/${version}/sample?tile=${tile(n)}&row=${n % 200}&col=${n % 150}` }), expect: [200], computed: true },
    { name: "series", make: (n) => query(makeDataRequest(cell(n), day(n), year[year.indexOf(day(n)) + 30])), expect: [200], computed: true },
    { name: "box csv", make: (n) => query(makeDataRequest([cell(n)[0], cell(n)[1], 20, 20], day(n), day(n), { format: "csv" })), expect: [200], computed: true },
    { name: "new day", make: (n) => query(makeDataRequest(cell(n), "2003-12-25", "2004-01-01")), expect: [200, 422], computed: true },
    { name: "resolve", make: (n) => ({ ...query(makeDataRequest(cell(n), day(n), day(n))), path: "/api/v1/data/resolve" }), expect: [200], computed: true },
    { name: "validate", make: (n) => ({ ...query(makeDataRequest(cell(n), day(n), day(n))), path: "/api/v1/data/validate" }), expect: [200], computed: false },
    { name: "malformed json", make: () => ({ method: "POST", path: "/api/v1/data/query", body: '{"variables":', type: JSON_TYPE }), expect: [400], computed: false },
    { name: "wrong media", make: () => ({ method: "POST", path: "/api/v1/data/query", body: "{}", type: "text/plain" }), expect: [415], computed: false },
    { name: "too many days", make: (n) => query(makeDataRequest(cell(n), "2003-01-01", "2003-03-01")), expect: [422], computed: false },
    { name: "unknown route", make: () => ({ method: "GET", path: "/api/v1/nothing" }), expect: [404], computed: false },
    { name: "wrong method", make: () => ({ method: "PUT", path: "/api/v1/datasets", body: "{}", type: JSON_TYPE }), expect: [405], computed: false },
    { name: "bad cursor", make: () => ({ method: "GET", path: `/api/v1/layers/${version}?after=forged` }), expect: [400], computed: true },
    { name: "unknown tile", make: () => ({ method: "GET", path: `/api/v1/layers/${version}?tile=19990101-r0-c0` }), expect: [404], computed: true },
    { name: "acquisition", make: () => ({ method: "POST", path: "/api/v1/data/requests", body: "{}", type: JSON_TYPE }), expect: [503], computed: false },
  ];
}

/** One exchange; `ids` for a catalog page (which versions it lists), `version` for a query. */
function exchange(url: string, agent: http.Agent, localAddress: string, kind: Kind, ask: Ask): Promise<Seen & { retryAfter: boolean; error?: string }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = ask.body !== undefined ? { "content-type": ask.type ?? JSON_TYPE, "content-length": Buffer.byteLength(ask.body) } : {};
    const req = http.request(`${url}${ask.path}`, { method: ask.method, agent, localAddress, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const seen: Seen & { retryAfter: boolean } = { kind: kind.name, status: res.statusCode ?? 0, started, ended: performance.now(), retryAfter: res.headers["retry-after"] !== undefined };
        if (kind.name === "catalog" && res.statusCode === 200) seen.ids = (JSON.parse(Buffer.concat(chunks).toString()).datasets as { id: string }[]).map((d) => d.id).sort().join(" ");
        if (res.headers["service-dataset-version"]) seen.version = String(res.headers["service-dataset-version"]);
        resolve(seen);
      });
      res.on("error", (err) => resolve({ kind: kind.name, status: 0, started, ended: performance.now(), retryAfter: false, error: err.message }));
    });
    req.on("error", (err) => resolve({ kind: kind.name, status: 0, started, ended: performance.now(), retryAfter: false, error: err.message }));
    req.end(ask.body);
  });
}

interface Tally {
  answers: number;
  shed: number;
  errors: string[];
  seen: Seen[];
}

/** 64 loops (8 client addresses, 8 connections each) asking the mix in turn until `until`. */
async function load(server: Proc, mix: Kind[], until: number): Promise<Tally> {
  const tally: Tally = { answers: 0, shed: 0, errors: [], seen: [] };
  const agents = Array.from({ length: 8 }, () => new http.Agent({ keepAlive: true, maxSockets: 8 }));
  let n = 0;
  await Promise.all(
    Array.from({ length: 64 }, async (_, loop) => {
      while (performance.now() < until) {
        const i = n++;
        const kind = mix[i % mix.length];
        const seen = await exchange(server.url, agents[loop % 8], `127.0.0.${2 + (loop % 8)}`, kind, kind.make(i));
        tally.answers++;
        if (kind.computed && seen.status === 503 && seen.retryAfter) tally.shed++;
        else if (!kind.expect.includes(seen.status)) tally.errors.push(`${kind.name}: ${seen.status} ${seen.error ?? ""}`);
        if (seen.ids || seen.version || kind.name === "new day") tally.seen.push(seen);
      }
    }),
  );
  for (const a of agents) a.destroy();
  return tally;
}

/** Answers that mix catalogs: a catalog page that is neither the old list nor the new, or an answer from the old catalog begun after one from the new had come back. */
function findMixing(seen: Seen[], oldIds: string, newIds: string, oldVersion: string): string[] {
  const problems: string[] = [];
  for (const s of seen) if (s.ids && s.ids !== oldIds && s.ids !== newIds) problems.push(`a catalog page listing ${s.ids}`);
  const isNew = (s: Seen) => (s.ids ? s.ids === newIds : s.kind === "new day" ? s.status === 200 : s.version !== undefined && s.version !== oldVersion);
  const isOld = (s: Seen) => (s.ids ? s.ids === oldIds : s.kind === "new day" ? s.status === 422 : s.version === oldVersion);
  // a loop, not Math.min(...): a soak sees hundreds of thousands of answers, more than a call's arguments can hold
  let firstNew = Infinity;
  for (const s of seen) if (isNew(s) && s.ended < firstNew) firstNew = s.ended;
  for (const s of seen) if (isOld(s) && s.started > firstNew) problems.push(`${s.kind}: the old catalog, begun ${fmt(s.started - firstNew)} ms after the new one answered`);
  return problems;
}

async function listIds(url: string): Promise<string> {
  const body = (await (await fetch(`${url}/api/v1/datasets?limit=1000`)).json()) as { datasets: { id: string }[] };
  return body.datasets.map((d) => d.id).sort().join(" ");
}

export async function runSoak(ctx: OperationsContext, seconds: number): Promise<void> {
  let stderr = "";
  const server = await startServer(ctx.dist, {}, (text) => (stderr += text));
  try {
    const oldIds = await listIds(server.url);
    const version = oldIds.split(" ").find((id) => id.startsWith("silo-tmax-2003"))!;
    const started = performance.now();
    const rss: [number, number, number][] = [];
    const sampling = setInterval(() => {
      const { rssMb, fileMb } = readRss(server.pid);
      rss.push([(performance.now() - started) / 1000, rssMb, fileMb]);
    }, 5000);
    const publishing = new Promise((r) => setTimeout(r, (seconds * 1000) / 2)).then(async () => {
      const t = performance.now();
      await run("node_modules/.bin/tsx", ["bench/publish-probe.ts", ctx.nextDay, ctx.dist, "--extend"], { maxBuffer: 1 << 20 });
      return performance.now() - t;
    });
    const tally = await load(server, mixOf(version, ctx.year), started + seconds * 1000);
    const publishMs = await publishing;
    clearInterval(sampling);
    const newIds = await listIds(server.url);
    const mixing = findMixing(tally.seen, oldIds, newIds, version);
    const minute = rss.find(([t]) => t >= Math.min(60, seconds / 2)) ?? rss[0];
    const end = rss[rss.length - 1];
    const growth = end[1] / minute[1] - 1;
    Object.assign(ctx.figures, { soak_seconds: seconds, soak_answers: tally.answers, soak_shed_503: tally.shed, soak_errors: tally.errors.length, soak_mixed_catalogs: mixing.length, soak_rss_minute_mb: minute[1], soak_rss_end_mb: end[1] });
    ctx.say();
    ctx.say(`soak: ${fmt(seconds)} s at 64 connections (8 clients), ${mixOf(version, ctx.year).length} kinds of request (valid and invalid), a live publish (EXTEND, ${fmt(publishMs / 1000, 1)} s) half-way`);
    ctx.say(`  ${fmt(tally.answers)} answers (${fmt(tally.answers / seconds)}/s); deliberate 503s (Retry-After) ${fmt(tally.shed)}; errors ${tally.errors.length} (goal 0)${tally.errors.length ? `: ${[...new Set(tally.errors)].slice(0, 5).join("; ")}` : ""}`);
    ctx.say(`  catalogs: ${oldIds === newIds ? "!! the publish was not seen" : "old, then new"}; answers mixing them ${mixing.length} (goal 0)${mixing.length ? `: ${mixing.slice(0, 3).join("; ")}` : ""}`);
    ctx.say(`  RSS ${fmt(minute[1])} MB at ${fmt(minute[0])} s, ${fmt(end[1])} MB at the end: ${growth >= 0 ? "+" : ""}${fmt(growth * 100, 1)}% (goal within 10%); ${(/busy: .*/.exec(stderr) ?? ["no load shed"])[0]}`);
    const byMinute = rss.filter(([t], i) => i === rss.length - 1 || Math.floor(t / 60) !== Math.floor(rss[i + 1][0] / 60));
    ctx.say(`  RSS by minute, MB: ${byMinute.map(([, mb]) => fmt(mb)).join(" ")} (the publish at ${fmt(seconds / 2)} s); of it mapping files: ${byMinute.map(([, , mb]) => fmt(mb)).join(" ")}`);
    if (tally.errors.length > 0 || mixing.length > 0 || oldIds === newIds || Math.abs(growth) > 0.1) ctx.fail("the soak");
  } finally {
    await server.stop();
  }
}
