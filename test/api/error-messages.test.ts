// Every 4xx message the hostile suites provoke says what to send instead: the 10,000 generated requests of
// test/server/server-hostile.test.ts, the Zarr view's hostile paths, the series route's, and the mistakes people make
// by hand (a swapped box or period, a missing field, another variable), collected over real HTTP, their distinct
// shapes read once. SHOW_MESSAGES=1 prints every distinct message with a request that produced it.

import http from "node:http";
import fc from "fast-check";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { VARIABLES as ALL_VARIABLES } from "../../format/variables.js";
import { docBlock } from "../docs/doc-blocks.js";
import { BATCH, BATCHES, type HostileRequest, SEED, requestArb, zarrMethodArb, zarrPathArb, zarrRangeArb } from "../support/hostile-requests.js";
import { DATES_A, type Fixture, type Served, assertError, post, requestFor, withServer, useFixture, fixture } from "../support/server-fixture.js";

/** Words a message tells the caller what to do with: a value allowed, an order, an action. */
const SAYS_WHAT_TO_DO =
  /\b(allowed|accepted|one of|only value|swap|send|use|give|omit|retry|narrow|shorten|follow|ask|choose|remove|pass|pin|open|describes|lists|published|name each|is required: |it must be|must be (a|an) \w+ (from|of|matching|within)|must be at most|the formats|from -?\d+ to|at most|at least|instead)\b/i;

interface Collected {
  status: number;
  error: string;
  message: string;
  /** a request that produced it */
  example: string;
}

/** A message with its particulars (numbers, quoted values, ids) blanked, so messages of one kind count once. */
function shapeOf(message: string): string {
  return message
    .replace(/"(?:[^"\\]|\\.)*"/g, '"…"')
    .replace(/(^|\s)\/\S*?(?=[;,)]?(\s|$))/g, "$1<path>")
    .replace(/\b[A-Z]{3,9} <path>/g, "<method> <path>")
    .replace(/\b[0-9a-f]{16,}\b/g, "<hex>")
    .replace(/-?\d+(\.\d+)?(e[+-]?\d+)?/gi, "N")
    .replace(/\bN( N)+\b/g, "N")
    .replace(/(is not valid JSON:).*/, "$1 …");
}

function send(agent: http.Agent, port: number, r: HostileRequest): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...r.headers, "Accept-Encoding": "identity" };
    if (r.body) headers[r.chunked ? "Transfer-Encoding" : "Content-Length"] = r.chunked ? "chunked" : r.body.length;
    const req = http.request({ host: "127.0.0.1", port, method: r.method, path: r.path, headers, agent, timeout: 20_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error("no answer within 20 s")));
    req.on("error", reject);
    req.end(r.body);
  });
}

/** The hand-made mistakes: each names what the caller meant, and the answer must say how to fix it. */
function mistakes(fixture: Fixture): HostileRequest[] {
  const valid = requestFor({ col: 250, row: 250, width: 3, height: 3 }, DATES_A[2], DATES_A[5]);
  const edit = (change: (r: any) => void): HostileRequest => {
    const r = structuredClone(valid) as any;
    change(r);
    return { method: "POST", path: "/api/v1/data/query", headers: { "Content-Type": "application/json" }, body: Buffer.from(JSON.stringify(r)) };
  };
  const get = (path: string): HostileRequest => ({ method: "GET", path, headers: {} });
  return [
    edit((r) => delete r.units),
    edit((r) => (r.units = {})),
    edit((r) => (r.units.air_temperature_max = "K")),
    edit((r) => (r.variables = ["precipitation"])),
    edit((r) => (r.variables = ["daily_rain"])),
    edit((r) => (r.region.bbox = [r.region.bbox[0], r.region.bbox[3], r.region.bbox[2], r.region.bbox[1]])),
    edit((r) => (r.region.bbox = [r.region.bbox[1], r.region.bbox[0], r.region.bbox[3], r.region.bbox[2]])),
    edit((r) => (r.region.bbox = r.region.bbox.slice(0, 3))),
    edit((r) => (r.period = { start: r.period.end, end: r.period.start })),
    edit((r) => (r.period.start = "01/02/2004")),
    edit((r) => (r.format = "xml")),
    edit((r) => (r.temporal_resolution = "monthly")),
    edit((r) => (r.region.crs = "EPSG:3857")),
    edit((r) => (r.dataset_version = "no such version!")),
    edit((r) => (r.extra = 1)),
    get(`/api/v1/datasets/${fixture.a.id}/observations?limit=0`),
    get(`/api/v1/layers/${fixture.a.id}/sample?tile=x&row=-1&col=0`),
    get(`/api/v1/series?lat=-23&lon=124.5&variables=rain_fall`),
    get(`/api/v1/series?lat=-23&lon=124.5&start=2004-03-01&end=2004-02-01`),
    get(`/api/v1/series?lat=-23&lon=124.5&format=xls`),
  ];
}

/** Every request of the suites whose 4xx messages are read here. */
function allRequests(fixture: Fixture): HostileRequest[] {
  const generated = fc.sample(fc.array(requestArb(fixture), { minLength: BATCH, maxLength: BATCH }), { numRuns: BATCHES, seed: SEED }).flat();
  const zarr = fc.sample(fc.tuple(zarrPathArb(fixture), zarrMethodArb, zarrRangeArb), { numRuns: 1500, seed: 20261125 });
  const zarrRequests = zarr.map(([path, method, range]): HostileRequest => ({ method, path, headers: range === undefined ? {} : { Range: range } }));
  return [...mistakes(fixture), ...generated, ...zarrRequests].filter((r) => r.method !== "HEAD");
}

/** Distinct messages (by shape) of every 4xx answer, top-level and per issue. */
async function collectMessages(served: Served, requests: HostileRequest[]): Promise<Map<string, Collected>> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const found = new Map<string, Collected>();
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < requests.length) {
        const r = requests[next++];
        const { status, text } = await send(agent, served.port, r);
        if (status < 400 || status >= 500) continue;
        const body = JSON.parse(text) as { error: string; message: string; issues?: { message: string; path: unknown[] }[] };
        const example = `${r.method} ${r.path.slice(0, 160)} ${r.body ? r.body.toString("utf8").slice(0, 300) : ""}`;
        const messages = [body.message, ...(body.issues ?? []).map((i) => `[${JSON.stringify(i.path)}] ${i.message}`)];
        for (const message of messages) {
          const key = `${status} ${body.error} ${shapeOf(message)}`;
          if (!found.has(key)) found.set(key, { status, error: body.error, message, example });
        }
      }
    }),
  );
  agent.destroy();
  return found;
}

const messages = suite("error messages");
messages.before(useFixture);

messages("error messages - every distinct 4xx message of the hostile suites says what to send instead", async () => {
  await withServer(fixture.dist, async (served) => {
    const found = await collectMessages(served, allRequests(fixture));
    if (process.env.SHOW_MESSAGES) {
      for (const [key, c] of [...found].sort()) console.log(`${key}\n    ${c.message}\n    <- ${c.example}`);
    }
    const vague = [...found.values()].filter((c) => !SAYS_WHAT_TO_DO.test(c.message)).map((c) => `${c.status} ${c.error}: ${c.message}  <- ${c.example}`);
    if (process.env.SHOW_MESSAGES) console.log(`vague:\n${vague.join("\n")}`);
    assert.ok(found.size > 40, `only ${found.size} distinct messages: the generator reaches too little`);
    assert.equal(vague, []);
  });
});

/** A request of the fixture (box 124.475..124.625 x -22.625..-22.475, 2004-02-03..06), changed by `change`. */
function changed(change: (r: any) => void): any {
  const r = structuredClone(requestFor({ col: 250, row: 250, width: 3, height: 3 }, DATES_A[2], DATES_A[5])) as any;
  change(r);
  return r;
}

const BBOX = "bbox is [west, south, east, north] in degrees";
/** Every variable of format/variables.ts, as the messages list them: "air_temperature_max (max_temp), ..." (18). */
const VARIABLES = ALL_VARIABLES.map((v) => `${v.name} (${v.silo})`).join(", ");

/** A mistake, and the first issue's exact message: the allowed value, the order, or what to swap. */
const NAMED: [string, (r: any) => void, (string | number)[], string][] = [
  ["units missing", (r) => delete r.units, ["units"], 'is required: the only value allowed is {"air_temperature_max":"degC"}'],
  ["units empty", (r) => (r.units = {}), ["units", "air_temperature_max"], 'is required: the only value allowed is "degC"'],
  ["another unit", (r) => (r.units.air_temperature_max = "K"), ["units", "air_temperature_max"], '"K" is not allowed; the only value allowed is "degC"'],
  ["an unknown variable", (r) => (r.variables = ["precipitation"]), ["variables", 0], `"precipitation" is not allowed; the only value allowed is "air_temperature_max". The variables published are ${VARIABLES}; the others are answered by GET /api/v1/series`],
  ["north and south swapped", (r) => ([r.region.bbox[1], r.region.bbox[3]] = [r.region.bbox[3], r.region.bbox[1]]), ["region", "bbox", 1], `-22.475 is not less than north -22.625: swap south and north (${BBOX}, longitudes first)`],
  ["east and west swapped", (r) => ([r.region.bbox[0], r.region.bbox[2]] = [r.region.bbox[2], r.region.bbox[0]]), ["region", "bbox", 0], `124.625 is not less than east 124.475: swap west and east (${BBOX}, longitudes first; the antimeridian cannot be crossed)`],
  ["latitudes first", (r) => (r.region.bbox = [-22.625, 124.475, -22.475, 124.625]), ["region", "bbox", 1], `124.475 is out of range; south must be a number from -90 to 90; ${BBOX}; west < east, south < north`],
  ["three numbers", (r) => r.region.bbox.pop(), ["region", "bbox"], "holds 3 items; it must be an array of exactly 4 items [west, south, east, north]"],
  ["start and end swapped", (r) => (r.period = { start: r.period.end, end: r.period.start }), ["period", "end"], "2004-02-03 precedes start 2004-02-06: swap start and end (the period is start to end, both inclusive)"],
  ["a date of another form", (r) => (r.period.start = "03/02/2004"), ["period", "start"], '"03/02/2004" is not a calendar date; it must be a calendar date YYYY-MM-DD (leap years respected)'],
  ["no period", (r) => delete r.period, ["period"], 'is required: it must be an object {"start": "YYYY-MM-DD", "end": "YYYY-MM-DD"}'],
  ["a region of another type", (r) => (r.region = "Queensland"), ["region"], '"Queensland" is not an object; it must be an object {"bbox": [west, south, east, north], "crs": "EPSG:4326"}'],
  ["another format", (r) => (r.format = "xml"), ["format"], '"xml" is not allowed; the values allowed are "json", "csv"'],
  ["an extra field", (r) => (r.limit = 5), ["limit"], 'unknown property "limit": remove it; the properties allowed are variables, region, period, temporal_resolution, spatial_resolution, units, data_class, format, missing_policy, source_preference, dataset_version'],
];

messages("error messages - a missing or wrong field names what is allowed; a swapped box or period says what to swap", async () => {
  await withServer(fixture.dist, async (served) => {
    for (const [what, change, path, message] of NAMED) {
      const body = assertError(await post(served, "/api/v1/data/validate", changed(change)), 422, "invalid_request");
      assert.equal(body.issues[0], { code: body.issues[0].code, path, message }, what);
      const where = path.map((p, i) => (typeof p === "number" ? `[${p}]` : i ? `.${p}` : p)).join("");
      assert.ok(body.message.startsWith(`The data request breaks the contract: ${where} ${message}`), `${what}: ${body.message}`);
    }
  });
});

messages("error messages - docs/clients.md's refused request is the answer the server gives", async () => {
  const shown = JSON.parse(docBlock("docs/clients.md", "The data request breaks the contract: region.bbox[1]"));
  await withServer(fixture.dist, async (served) => {
    const answer = await post(served, "/api/v1/data/query", changed((r) => (r.region.bbox = [-22.625, 124.475, -22.475, 124.625])));
    assert.equal(assertError(answer, 422, "invalid_request"), shown);
  });
});

messages.run();
