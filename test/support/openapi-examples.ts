// The OpenAPI document's examples (api/examples.ts), recorded: the requests each operation is shown with, asked of
// the demo dist the tests build, their answers cut where they run long and written to api/examples.json; and how a
// stored example is held to what the server answers now. Record them again (then read the diff) with:
//   node_modules/.bin/tsx test/support/openapi-examples.ts [a demo dist; default: the tests' own]

import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { bboxToWindow } from "../../format/grid.js";
import type { Exchange, Examples } from "../../api/examples.js";
import { makeDataRequest } from "../../api/query/request.js";
import { type Answer, type Served, buildDemoDist, readRecords, request, withServer } from "./server-fixture.js";

/** The demo's address: the examples' curl lines name it, and its links are made of it (the capabilities'). */
export const EXAMPLE_HOST = "127.0.0.1:8080";
export const EXAMPLES_FILE = join(import.meta.dirname, "../../api/examples.json");

/** Where a long body is cut: arrays to their first items, objects to some keys (by dotted path, "" the root), text to its first lines. */
interface Cut {
  items?: Record<string, number>;
  keys?: Record<string, string[]>;
  lines?: number;
}

/** A request to record, and how its answer is cut. */
interface Ask {
  title: string;
  method?: string;
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  cut?: Cut;
}

/** Alice Springs in January 2003, as a person writes the box (not on cell edges): the demo holds it. */
const ALICE_SPRINGS: [number, number, number, number] = [133.8, -23.8, 133.95, -23.65];
export const DATA_REQUEST = { ...makeDataRequest(bboxToWindow(ALICE_SPRINGS)!, "2003-01-01", "2003-01-31", { format: "json" }), region: { bbox: ALICE_SPRINGS, crs: "EPSG:4326" } };
const PLACE = "lat=-23.7&lon=133.87";
/** The headers an example shows, by status: a redirect's target, what a path allows. */
const SHOWN_HEADERS: Record<number, string[]> = {
  204: ["allow", "access-control-allow-methods", "access-control-allow-headers", "access-control-max-age"],
  302: ["location"],
  405: ["allow"],
};

/** Every operation's requests, by operationId: those that answer first, then at least one error. */
function listAsks(ids: { tmax: string; tmin: string; noaa: string }): Record<string, Ask[]> {
  const { tmax, tmin, noaa } = ids;
  return {
    getCapabilities: [{ title: "The capabilities", path: "/api/v1/capabilities" }],
    getHealth: [{ title: "The process's status", path: "/api/health" }],
    getOpenApi: [{ title: "This document", path: "/api/v1/openapi.json", cut: { keys: { "": ["openapi", "info", "paths"], info: ["title", "version"], paths: [] } } }],
    listDatasets: [
      { title: "The first page of one version", path: "/api/v1/datasets?limit=1" },
      { title: "A limit out of range", path: "/api/v1/datasets?limit=0" },
    ],
    getDataset: [
      { title: "A version's record", path: `/api/v1/datasets/${tmax}` },
      { title: "A dataset key, not a version id", path: "/api/v1/datasets/silo-tmax" },
    ],
    getLayers: [
      { title: "The first tile of a version", path: `/api/v1/layers/${tmax}?limit=1` },
      { title: "A tile the version does not hold", path: `/api/v1/layers/${tmax}?tile=20030101-r9-c9` },
    ],
    getSample: [
      { title: "A cell at Alice Springs", path: `/api/v1/layers/${tmax}/sample?tile=20030101-r1-c1&row=18&col=181` },
      { title: "A negative row", path: `/api/v1/layers/${tmax}/sample?tile=20030101-r1-c1&row=-1&col=181` },
    ],
    listObservations: [
      { title: "The first two observations", path: `/api/v1/datasets/${noaa}/observations?limit=2` },
      { title: "A cursor the service did not issue", path: `/api/v1/datasets/${noaa}/observations?after=nope` },
    ],
    getRevisions: [
      { title: "The newest version: nothing revised", path: `/api/v1/datasets/${tmax}/revisions` },
      { title: "A version of another dataset", path: `/api/v1/datasets/${tmax}/revisions?against=${tmin}` },
    ],
    ...listPostAsks(),
    getSeries: [
      { title: "A place as CSV", path: `/api/v1/series?${PLACE}&start=2003-01-01&end=2003-01-03` },
      { title: "A box as JSON", path: "/api/v1/series?bbox=133.8,-23.8,133.9,-23.7&start=2003-01-01&end=2003-01-02&variables=max_temp&format=json" },
      { title: "An APSIM weather file", path: `/api/v1/series?${PLACE}&start=2003-01-01&end=2003-01-31&format=met`, cut: { lines: 24 } },
      { title: "A box as NetCDF", path: "/api/v1/series?bbox=133.8,-23.8,133.95,-23.65&variables=max_temp,min_temp&format=netcdf" },
      { title: "An APSIM file of an ocean cell", path: "/api/v1/series?lat=-30&lon=112&start=2003-01-01&end=2003-01-05&format=met" },
    ],
    getZarrGroupKey: [
      { title: "A group's consolidated metadata", path: `/zarr/v2/${tmax}/maps/.zmetadata`, cut: { keys: { metadata: [".zgroup", ".zattrs", "air_temperature_max/.zarray"] } } },
      { title: "A version that is not published", path: "/zarr/v2/silo-tmax-20030101-20030131-0000000000000000/maps/.zmetadata" },
    ],
    getZarrArrayKey: [
      { title: "An array's metadata", path: `/zarr/v2/${tmax}/maps/air_temperature_max/.zarray` },
      { title: "A chunk: a day's tile", path: `/zarr/v2/${tmax}/maps/air_temperature_max/0.1.1` },
      { title: "A chunk outside the array", path: `/zarr/v2/${tmax}/maps/air_temperature_max/99.0.0` },
    ],
    getZarrLatest: [
      { title: "The newest version's array metadata", path: "/zarr/v2/latest/silo-tmax/maps/air_temperature_max/.zarray" },
      { title: "A dataset that is not published", path: "/zarr/v2/latest/silo-nope/maps/air_temperature_max/.zarray" },
    ],
    getOpendap: [
      { title: "A version's structure", path: `/opendap/${tmax}.dds` },
      { title: "One cell's structure, constrained", path: `/opendap/${tmax}.dds?air_temperature_max[0:30][274][437]` },
      { title: "A name the dataset does not have", path: `/opendap/${tmax}.dds?tmax` },
    ],
    getOpendapLatest: [
      { title: "The newest version's structure", path: "/opendap/latest/silo-tmax.dds" },
      { title: "A dataset that is not published", path: "/opendap/latest/silo-nope.dds" },
    ],
  };
}

/** The POST routes' requests: the Alice Springs data request, and one that breaks a rule. */
function listPostAsks(): Record<string, Ask[]> {
  const post = (path: string, body: unknown) => ({ method: "POST", path, body });
  const reversed = { ...DATA_REQUEST, period: { start: "2003-01-31", end: "2003-01-01" } };
  const west = { ...DATA_REQUEST, region: { ...DATA_REQUEST.region, bbox: [133.95, -23.8, 133.8, -23.65] } };
  return {
    validateDataRequest: [
      { title: "The data request of Alice Springs", ...post("/api/v1/data/validate", DATA_REQUEST) },
      { title: "A period that ends before it starts", ...post("/api/v1/data/validate", reversed) },
    ],
    resolveDataRequest: [
      { title: "The data request of Alice Springs", ...post("/api/v1/data/resolve", DATA_REQUEST), cut: { items: { "selection.tileIds": 2 } } },
      { title: "A box whose west is east of its east", ...post("/api/v1/data/resolve", west) },
    ],
    queryData: [
      { title: "Alice Springs as JSON", ...post("/api/v1/data/query", DATA_REQUEST), cut: { items: { "manifest.sourceManifest": 2, data: 2 } } },
      { title: "Alice Springs as CSV", ...post("/api/v1/data/query", { ...DATA_REQUEST, format: "csv" }), cut: { lines: 4 } },
      { title: "A period the demo does not hold", ...post("/api/v1/data/query", { ...DATA_REQUEST, period: { start: "2004-01-01", end: "2004-01-31" } }) },
    ],
    createAcquisitionRequest: [{ title: "Any body", ...post("/api/v1/data/requests", DATA_REQUEST) }],
  };
}

/** The value at a dotted path ("" the root). */
function valueAt(value: unknown, path: string): unknown {
  return path === "" ? value : path.split(".").reduce<unknown>((v, key) => (v as Record<string, unknown> | undefined)?.[key], value);
}

/** A JSON answer cut as `cut` says, and what was left out, said for the reader. */
function cutJson(answer: unknown, cut: Cut): { value: unknown; said: string[] } {
  const value = structuredClone(answer);
  const said: string[] = [];
  for (const [path, count] of Object.entries(cut.items ?? {})) {
    const list = valueAt(value, path) as unknown[];
    said.push(`\`${path}\`: its first ${count} of ${list.length} items`);
    list.splice(count);
  }
  for (const [path, keep] of Object.entries(cut.keys ?? {})) {
    const object = valueAt(value, path) as Record<string, unknown>;
    const all = Object.keys(object);
    said.push(`${path === "" ? "the body" : `\`${path}\``}: ${keep.length === 0 ? "none" : keep.map((k) => `\`${k}\``).join(", ")} of its ${all.length} keys`);
    for (const key of all) if (!keep.includes(key)) delete object[key];
  }
  return { value, said };
}

const essence = (type: unknown) => String(type ?? "").split(";")[0].trim();
const isText = (type: string) => type.startsWith("text/");

/** One exchange as stored: the request, the status, the shown headers, the body cut (none when empty or binary). */
function toExchange(ask: Ask, answer: Answer): Exchange {
  const type = essence(answer.headers["content-type"]);
  const out: Exchange = { title: ask.title, method: ask.method ?? "GET", path: ask.path, ...(ask.body === undefined ? {} : { body: ask.body }), status: answer.status };
  const shown = Object.fromEntries((SHOWN_HEADERS[answer.status] ?? []).map((name) => [name, String(answer.headers[name])]));
  if (Object.keys(shown).length > 0) out.headers = shown;
  if (answer.bytes.length === 0) return out;
  out.type = type;
  if (type === "application/json") {
    const { value, said } = cutJson(answer.json(), ask.cut ?? {});
    out.answer = value;
    if (said.length > 0) out.cut = said.join("; ");
  } else if (isText(type)) {
    const lines = answer.text.split("\n");
    const keep = ask.cut?.lines ?? lines.length;
    out.answer = lines.length > keep ? `${lines.slice(0, keep).join("\n")}\n` : answer.text;
    if (lines.length > keep) out.cut = `its first ${keep} of ${lines.length - 1} lines`;
  }
  return out;
}

/** Asks one request of a served dist, as the examples do: from the demo's address. */
export function askExample(served: Served, ask: Pick<Ask, "method" | "path" | "body" | "headers">): Promise<Answer> {
  const headers = { Host: EXAMPLE_HOST, ...(ask.body === undefined ? {} : { "Content-Type": "application/json" }), ...ask.headers };
  return request(served, ask.path, { method: ask.method ?? "GET", headers, ...(ask.body === undefined ? {} : { body: JSON.stringify(ask.body) }) });
}

/** Every example, asked of the demo dist (or a copy of it) now. */
export async function recordExamples(dist: string): Promise<Examples> {
  const records = await readRecords(dist);
  const idOf = (key: string) => records.find((r) => r.dataset_key === key)!.id;
  const asks = listAsks({ tmax: idOf("silo-tmax"), tmin: idOf("silo-tmin"), noaa: idOf("noaa-weather") });
  return withServer(dist, async (served) => {
    const record = async (ask: Ask) => toExchange(ask, await askExample(served, ask));
    const operations: Record<string, Exchange[]> = {};
    for (const [operationId, list] of Object.entries(asks)) operations[operationId] = await Promise.all(list.map(record));
    const methodNotAllowed = await record({ title: "PUT on a GET path", method: "PUT", path: "/api/v1/datasets" });
    const preflight = await record({ title: "The preflight of the query", method: "OPTIONS", path: "/api/v1/data/query", headers: { Origin: "https://app.example", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type" } });
    return { host: EXAMPLE_HOST, operations, methodNotAllowed, preflight };
  });
}

/**
 * How a stored example departs from the answer the server gives now (nothing: it is that answer, or a cut of it).
 * A cut keeps a prefix of each array, some keys of an object, the first lines of a text.
 */
export function compareExample(stored: Exchange, answer: Answer): string[] {
  const now = toExchange({ title: stored.title, method: stored.method, path: stored.path, body: stored.body }, answer);
  const where = `${stored.method} ${stored.path}`;
  const problems: string[] = [];
  if (now.status !== stored.status) problems.push(`${where}: answers ${now.status}, not ${stored.status}`);
  if (now.type !== stored.type && stored.type !== undefined) problems.push(`${where}: answers ${now.type}, not ${stored.type}`);
  for (const [name, value] of Object.entries(stored.headers ?? {})) if (now.headers?.[name] !== value) problems.push(`${where}: ${name} is ${now.headers?.[name]}, not ${value}`);
  if (stored.answer === undefined) return problems;
  if (typeof stored.answer === "string") {
    const text = answer.text;
    if (!(text === stored.answer || (stored.answer.endsWith("\n") && text.startsWith(stored.answer)))) problems.push(`${where}: the text is not the stored one, nor does it begin with it`);
  } else {
    problems.push(...findUncut(stored.answer, now.answer, where));
  }
  return problems;
}

/** Where `example` is not a cut of `actual`: an array longer or differing, a key the answer lacks, another value. */
function findUncut(example: unknown, actual: unknown, where: string): string[] {
  if (Array.isArray(example)) {
    if (!Array.isArray(actual) || example.length > actual.length) return [`${where}: not a prefix of ${JSON.stringify(actual)?.slice(0, 80)}`];
    return example.flatMap((item, i) => findUncut(item, actual[i], `${where}[${i}]`));
  }
  if (example !== null && typeof example === "object") {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return [`${where}: not an object now`];
    return Object.entries(example).flatMap(([key, value]) => (key in actual ? findUncut(value, (actual as Record<string, unknown>)[key], `${where}.${key}`) : [`${where}: no key ${key} now`]));
  }
  return example === actual ? [] : [`${where}: ${JSON.stringify(actual)}, not ${JSON.stringify(example)}`];
}

/** Records every example into api/examples.json, from the dist named on the command line or the tests' demo. */
async function writeExamples(dist: string | undefined): Promise<void> {
  const examples = await recordExamples(dist ?? (await buildDemoDist()));
  await writeFile(EXAMPLES_FILE, `${JSON.stringify(examples, null, 1)}\n`);
  const count = Object.values(examples.operations).flat().length + 2;
  console.log(`${EXAMPLES_FILE}: ${count} exchanges of ${Object.keys(examples.operations).length} operations`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeExamples(process.argv[2]).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
