// The served OpenAPI document: a valid OpenAPI 3.1 document (swagger-parser), lint clean (redocly, with the repo's
// redocly.yaml), only the contract's schemas, one operation per route under the tags of api/tags.ts, examples the demo
// dist still answers, a client generated from it (openapi-typescript) that typechecks, and every operation, and what
// every path answers besides (HEAD, OPTIONS, 405), answered as documented over HTTP.

import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import SwaggerParser from "@apidevtools/swagger-parser";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { EXAMPLES, type Exchange } from "../../api/examples.js";
import { buildOpenApi } from "../../api/openapi.js";
import { checkRequest } from "../../api/query/request.js";
import { describeSeriesCall } from "../../api/series/hint.js";
import { ROUTES } from "../../api/interface.js";
import { TAGS } from "../../api/tags.js";
import { CONTRACT_SCHEMAS, DIST_SCHEMAS } from "../../schemas/validate.js";
import { DATA_REQUEST, askExample, compareExample } from "../support/openapi-examples.js";
import { buildDemoDist, post, request, requestFor, withServer, useFixture, fixture } from "../support/server-fixture.js";

const run = promisify(execFile);
const root = join(import.meta.dirname, "../..");


async function fetchDocument(): Promise<any> {
  return withServer(fixture.dist, async (served) => {
    const answer = await request(served, "/api/v1/openapi.json");
    assert.is(answer.status, 200);
    return answer.json();
  });
}

const document = suite("openapi document");
document.before(useFixture);

document("openapi - the served document is valid OpenAPI 3.1 for swagger-parser and is the one api/openapi.ts builds", async () => {
  const served = await fetchDocument();
  assert.equal(served, JSON.parse(JSON.stringify(buildOpenApi(ROUTES))));
  const api: any = await SwaggerParser.validate(structuredClone(served));
  assert.is(api.openapi, "3.1.0");
  assert.equal(Object.keys(api.paths).sort(), [...new Set(ROUTES.map((r) => r.path.replace(/:([a-z]+)/g, "{$1}")))].sort());
});

document("openapi - redocly lint (recommended ruleset, redocly.yaml) reports no errors and no warnings", async () => {
  const served = await fetchDocument();
  const dir = await mkdtemp(join(tmpdir(), "openapi-lint-"));
  try {
    const file = join(dir, "openapi.json");
    await writeFile(file, JSON.stringify(served, null, 2));
    const { stdout } = await run(join(root, "node_modules/.bin/redocly"), ["lint", file, "--config", join(root, "redocly.yaml"), "--format", "json"], {
      cwd: dir,
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" },
      maxBuffer: 16 << 20,
    }).catch((err) => ({ stdout: String(err.stdout) }));
    const report = JSON.parse(stdout.slice(stdout.indexOf("{")));
    const problems = report.problems.map((p: any) => `${p.severity} ${p.ruleId} ${p.location?.[0]?.pointer}: ${p.message}`);
    assert.equal(report.totals, { errors: 0, warnings: 0, ignored: 0 }, problems.join("\n"));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

document("openapi - publishes the contract's schemas only, no security scheme, a license, the recorded data request as the body example", () => {
  const doc: any = buildOpenApi(ROUTES);
  const names = Object.keys(doc.components.schemas);
  for (const schema of DIST_SCHEMAS) {
    const base = (schema as { $id: string }).$id.replace(".schema.json", "");
    assert.not.ok(names.some((n) => n === base || n.startsWith(`${base}.`)), `${base} is a dist schema`);
  }
  const contract = CONTRACT_SCHEMAS.map((s) => (s as { $id: string }).$id.replace(".schema.json", ""));
  for (const name of names) assert.ok(contract.includes(name.split(".")[0]), `${name} comes from a contract schema`);
  assert.equal(doc.security, []);
  assert.is(doc.components.securitySchemes, undefined);
  assert.ok(doc.info.license.name && doc.info.license.identifier);
  const body = doc.paths["/api/v1/data/query"].post.requestBody.content["application/json"];
  assert.equal(body.example, DATA_REQUEST);
  assert.equal(checkRequest(structuredClone(body.example), describeSeriesCall).region.bbox, [133.8, -23.8, 133.95, -23.65]);
  assert.ok(doc.paths["/api/v1/data/query"].post.responses["413"].content["application/json"].schema.allOf[1].properties.plan);
});

document("openapi - the series route documents bbox (four numbers, the query's rule), format=netcdf as application/x-netcdf, Service-Period and box plans", () => {
  const op = (buildOpenApi(ROUTES) as any).paths["/api/v1/series"].get;
  const bbox = op.parameters.find((p: { name: string }) => p.name === "bbox");
  assert.ok(bbox, "bbox is a documented parameter");
  assert.equal([bbox.in, bbox.required ?? false, bbox.schema.type, bbox.schema.minItems, bbox.schema.maxItems, bbox.schema.items.type], ["query", false, "array", 4, 4, "number"]);
  assert.match(bbox.description, "west and south edges inclusive, east and north exclusive");
  const format = op.parameters.find((p: { name: string }) => p.name === "format");
  assert.equal(format.schema.enum, ["csv", "json", "met", "netcdf"]);
  const ok = op.responses["200"];
  assert.equal(ok.content["application/x-netcdf"].schema.format, "binary");
  assert.ok(ok.headers["Service-Period"].required);
  assert.match(op.description, "`bbox=west,south,east,north` instead of places");
  const plan = op.responses["413"].content["application/json"].schema;
  assert.match(JSON.stringify(plan), "(lat|bbox)=");
});

/** Every operation of a document, with its path and method. */
function listOperations(doc: any): { path: string; method: string; operation: any }[] {
  return Object.entries<any>(doc.paths).flatMap(([path, item]) => Object.entries<any>(item).filter(([m]) => m !== "parameters").map(([method, operation]) => ({ path, method, operation })));
}

document("openapi - a path lists only what it does: one operation per GET and POST route, each under its route's tag, the tags and paths in api/tags.ts's order", () => {
  const doc: any = buildOpenApi(ROUTES);
  const operations = listOperations(doc);
  const routes = ROUTES.map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:([a-z]+)/g, "{$1}")} ${r.operationId} ${r.tag}`);
  assert.equal(operations.map(({ path, method, operation }) => `${method} ${path} ${operation.operationId} ${operation.tags.join()}`).sort(), routes.sort());
  assert.equal(doc.tags.map((t: { name: string }) => t.name), TAGS.map((t) => t.name));
  for (const tag of doc.tags) assert.ok(tag.description.length > 40, `${tag.name} says when to use it`);
  // the reader's order: every tag's operations together, the tags in the table's order, each holding one at least
  const order = operations.map(({ operation }) => TAGS.findIndex((t) => t.name === operation.tags[0]));
  assert.equal(order, [...order].sort((a, b) => a - b));
  assert.equal([...new Set(order)], TAGS.map((_, i) => i));
});

/** Summaries still written as a sentence (api/dap/routes.ts's): the sidebar shows them whole. */
document("openapi - every operation has a short summary, a curl sample per answer, the recorded body as its example, and a recorded answer and error under their statuses", () => {
  const doc: any = buildOpenApi(ROUTES);
  for (const { method, operation } of listOperations(doc)) {
    const id = operation.operationId;
    const exchanges = EXAMPLES.operations[id];
    assert.ok(exchanges?.length, `${id} has recorded examples`);
    assert.ok(operation.summary.length <= 40, `${id}: ${operation.summary}`);
    const answered = exchanges.filter((e) => e.status < 400);
    assert.ok(answered.length > 0 || id === "createAcquisitionRequest", `${id} shows an answer`);
    assert.equal(operation["x-codeSamples"].map((c: { label: string }) => c.label), (answered.length > 0 ? answered : exchanges).map((e) => e.title), id);
    for (const sample of operation["x-codeSamples"]) assert.match(sample.source, `curl `);
    if (method === "post") assert.equal(operation.requestBody.content["application/json"].example, exchanges[0].body, id);
    // an error: a recorded one, or (routes that take no input) the one body of every 500
    const recordedError = exchanges.some((e) => e.status >= 400);
    assert.ok(recordedError || operation.responses["500"].content["application/json"].examples.internal_error, `${id} shows an error`);
    for (const exchange of exchanges.filter((e) => e.answer !== undefined)) {
      const shown = Object.values<any>(operation.responses[exchange.status].content[exchange.type!].examples);
      assert.ok(shown.some((e) => e.summary === exchange.title && JSON.stringify(e.value) === JSON.stringify(exchange.answer)), `${id} ${exchange.status} ${exchange.title}`);
    }
  }
});

document("openapi - HEAD, the preflight and 405 are stated once: in the description and contract.md §4.8 (with the recorded 405) and as the shared components; every other component is referenced", async () => {
  const doc: any = buildOpenApi(ROUTES);
  const text = doc.info.description;
  for (const rule of ["**HEAD**", "`Repr-Digest`", "**CORS preflight**", "`Access-Control-Max-Age: 86400`", "**405**", "`GET, HEAD, OPTIONS`", "`POST, OPTIONS`"]) assert.ok(text.includes(rule), rule);
  assert.ok(text.includes(JSON.stringify(EXAMPLES.methodNotAllowed.answer, null, 2)), "the recorded 405 body");
  // and docs/contract.md §4.8 the same, once
  const contract = await readFile(join(root, "docs/contract.md"), "utf8");
  assert.is(contract.split(JSON.stringify(EXAMPLES.methodNotAllowed.answer)).length, 2, "contract.md shows the recorded 405 once");
  assert.is(contract.split("### 4.8 Every path: HEAD, the CORS preflight, 405").length, 2);
  assert.equal(Object.keys(doc.components.responses).sort(), ["MethodNotAllowed", "Preflight"]);
  assert.equal(doc.components.responses.MethodNotAllowed.content["application/json"].example, EXAMPLES.methodNotAllowed.answer);
  assert.equal(doc.components.responses.Preflight.headers.Allow.schema.enum.sort(), ["GET, HEAD, OPTIONS", "POST, OPTIONS"]);
  // redocly.yaml turns no-unused-components off for the two shared answers alone: this holds every other component to it
  const text2 = JSON.stringify(doc.paths) + JSON.stringify(doc.components);
  const unused: string[] = [];
  for (const kind of ["schemas", "headers", "examples"]) {
    for (const name of Object.keys(doc.components[kind])) if (!text2.includes(`"#/components/${kind}/${name}"`)) unused.push(`${kind}/${name}`);
  }
  assert.equal(unused, []);
});

document("openapi - every array schema has items (Spectral's oas rule array-items); period and units say they ignore extra properties, the body and region stay closed; tile has minLength 1 on layers and sample", () => {
  const doc: any = buildOpenApi(ROUTES);
  const bare: string[] = [];
  const walk = (node: unknown, path: string) => {
    if (!node || typeof node !== "object") return;
    const n = node as Record<string, unknown>;
    const types = Array.isArray(n.type) ? n.type : [n.type];
    if (types.includes("array") && !n.items) bare.push(path);
    for (const [key, child] of Object.entries(n)) walk(child, `${path}/${key}`);
  };
  walk(doc, "#");
  assert.equal(bare, []);
  const schemas = doc.components.schemas;
  for (const open of [schemas["data-request.period"], schemas["data-request"].properties.units]) {
    assert.is(open.additionalProperties, true);
    assert.match(open.description, /Other properties are accepted and ignored: they are neither echoed by validate nor part of requestSha256\.$/);
  }
  assert.is(schemas["data-request"].additionalProperties, false);
  assert.is(schemas["data-request.region"].additionalProperties, false);
  for (const path of ["/api/v1/layers/{id}", "/api/v1/layers/{id}/sample"]) {
    const tile = doc.paths[path].get.parameters.find((p: any) => p.name === "tile");
    assert.equal(tile.schema, { type: "string", minLength: 1, maxLength: 128 }, path);
  }
});

const live = suite("openapi over HTTP");
live.before(useFixture);

/** A request path for a documented path: the version A (or NOAA, for observations) id, and a valid sample cell. */
function concretePath(template: string): string {
  const id = template.includes("observations") ? fixture.noaa.id : fixture.a.id;
  // the Zarr view's keys: a group's consolidated metadata, an array's chunk, the latest redirect of a chunk
  const zarr = { "{group}": "maps", "{array}": "air_temperature_max", "{dataset}": "silo-tmax", "{key}": template.includes("{array}") ? "3.1.1" : ".zmetadata" };
  // OPeNDAP's: a version's DDS, and the latest dataset's
  const dap = { "{file}": template.includes("latest") ? "silo-tmax.dds" : `${fixture.a.id}.dds` };
  const path = Object.entries({ ...zarr, ...dap }).reduce((p, [name, value]) => p.replace(name, value), template.replace("{id}", id));
  if (template === "/api/v1/series") return `${path}?lat=-23&lon=124.5`;
  return template.endsWith("/sample") ? `${path}?tile=20040201-r0-c0&row=1&col=1` : path;
}

/** The methods a path item may hold (OpenAPI 3.1): each path answers each of them, as its operations or the rules say. */
const PATH_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

live("openapi - every path answers every method as documented: its operations, HEAD as its GET, OPTIONS 204, any other 405", async () => {
  const doc: any = buildOpenApi(ROUTES);
  const body = requestFor({ col: 250, row: 250, width: 2, height: 2 }, "2004-02-01", "2004-02-01");
  await withServer(fixture.dist, async (served) => {
    for (const [template, item] of Object.entries<any>(doc.paths)) {
      for (const method of PATH_METHODS) {
        // request() fails on any answer the document does not hold, its rules for HEAD, OPTIONS and 405 included
        const answer = await request(served, concretePath(template), {
          method: method.toUpperCase(),
          ...(method === "post" ? { body: JSON.stringify(body), headers: { "Content-Type": "application/json" } } : {}),
        });
        const operation = item[method] ?? (method === "head" ? item.get : undefined);
        const expected = operation ? Object.keys(operation.responses).filter((s) => /^2/.test(s) || (s === "302" && template.includes("latest"))) : [method === "options" ? "204" : "405"];
        if (template === "/api/v1/data/requests" && method === "post") expected.push("503");
        assert.ok(expected.includes(String(answer.status)), `${method.toUpperCase()} ${template}: ${answer.status} ${answer.text.slice(0, 200)}`);
      }
    }
  });
});

live("openapi - the 405 of GET on the query route says to POST a JSON data request and where its example is", async () => {
  await withServer(fixture.dist, async (served) => {
    const answer = await request(served, "/api/v1/data/query");
    assert.is(answer.status, 405);
    assert.is(answer.headers.allow, "POST, OPTIONS");
    const { message } = answer.json();
    assert.match(message, /POST a JSON data request/);
    assert.match(message, /\/api\/v1\/openapi\.json/);
    assert.match(message, /Content-Type: application\/json/);
  });
});

live("openapi - the 415 of a data request without Content-Type names the header to send", async () => {
  await withServer(fixture.dist, async (served) => {
    for (const path of ["/api/v1/data/validate", "/api/v1/data/resolve", "/api/v1/data/query"]) {
      const answer = await request(served, path, { method: "POST", body: JSON.stringify(DATA_REQUEST) });
      assert.is(answer.status, 415);
      const { message } = answer.json();
      assert.ok(message.includes("-H 'Content-Type: application/json'"), message);
      assert.match(message, /\/api\/v1\/openapi\.json/);
      const sent = await post(served, path, DATA_REQUEST, { "Content-Type": "text/plain" });
      assert.is(sent.status, 415);
    }
  });
});

const examples = suite("openapi examples");

examples("openapi - every recorded example is what the demo dist answers now, or a cut of it (api/examples.json)", async () => {
  const stored: Exchange[] = [...Object.values(EXAMPLES.operations).flat(), EXAMPLES.methodNotAllowed, EXAMPLES.preflight];
  const problems: string[] = [];
  await withServer(await buildDemoDist(), async (served) => {
    for (const exchange of stored) problems.push(...compareExample(exchange, await askExample(served, exchange)));
  });
  assert.equal(problems, [], "stale examples: record them again with node_modules/.bin/tsx test/support/openapi-examples.ts, and read the diff");
});

examples("openapi - a cut example is a prefix of the answer: a changed value, a shorter array or a longer text is stale", async () => {
  const stored: Exchange = { title: "t", method: "GET", path: "/x", status: 200, type: "application/json", answer: { a: [1, 2], b: { c: "d" } } };
  const answer = (body: unknown, status = 200) => ({ status, headers: { "content-type": "application/json" }, bytes: Buffer.from(JSON.stringify(body)), text: JSON.stringify(body), json: () => body });
  assert.equal(compareExample(stored, answer({ a: [1, 2, 3], b: { c: "d", e: 1 }, f: 0 })), []);
  assert.equal(compareExample(stored, answer({ a: [1], b: { c: "d" } })).length, 1);
  assert.equal(compareExample(stored, answer({ a: [1, 2], b: { c: "x" } })).length, 1);
  assert.equal(compareExample(stored, answer({ a: [1, 2], b: { c: "d" } }, 404)).length, 1);
  const text: Exchange = { title: "t", method: "GET", path: "/x", status: 200, type: "text/csv", answer: "a,b\n1,2\n" };
  const csv = (body: string) => ({ status: 200, headers: { "content-type": "text/csv" }, bytes: Buffer.from(body), text: body, json: () => null });
  assert.equal(compareExample(text, csv("a,b\n1,2\n3,4\n")), []);
  assert.equal(compareExample(text, csv("a,b\n1,3\n")).length, 1);
});

const clients = suite("openapi clients");
clients.before(useFixture);

/** A client of the service written against the generated types: it must typecheck, and each @ts-expect-error must err. */
function writeClient(operationIds: string[]): string {
  return `import type { operations, paths } from "./api.js";

// every operation of the route table, and no other: a missing or an extra key fails to typecheck
export const EVERY: Record<keyof operations, true> = { ${operationIds.map((id) => `${id}: true`).join(", ")} };

type Capabilities = paths["/api/v1/capabilities"]["get"]["responses"][200]["content"]["application/json"];
type Catalog = paths["/api/v1/datasets"]["get"]["responses"][200]["content"]["application/json"];
type DataRequest = paths["/api/v1/data/query"]["post"]["requestBody"]["content"]["application/json"];
type QueryResult = paths["/api/v1/data/query"]["post"]["responses"][200]["content"]["application/json"];
type SeriesQuery = NonNullable<paths["/api/v1/series"]["get"]["parameters"]["query"]>;
type SeriesProblem = paths["/api/v1/series"]["get"]["responses"][422]["content"]["application/json"];

export async function maxDays(base: string): Promise<number> {
  const capabilities = (await (await fetch(base + "/api/v1/capabilities")).json()) as Capabilities;
  return capabilities.query.limits.maxDays;
}

export async function firstVersion(base: string): Promise<string | null> {
  const page = (await (await fetch(base + "/api/v1/datasets?limit=1")).json()) as Catalog;
  return page.datasets[0]?.id ?? null;
}

export async function query(base: string, body: DataRequest): Promise<number[]> {
  const answer = await fetch(base + "/api/v1/data/query", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  const result = (await answer.json()) as QueryResult;
  return result.data.map((row) => row.value ?? NaN);
}

export const ALICE_SPRINGS: DataRequest = ${JSON.stringify(DATA_REQUEST)};
export const APSIM: SeriesQuery = { lat: [-23.7], lon: [133.87], format: "met" };
export const problem = (p: SeriesProblem): string => p.error + ": " + p.message;

// @ts-expect-error: a path lists only what it does: no PUT
export type NoPut = paths["/api/v1/capabilities"]["put"]["responses"];
// @ts-expect-error: the series route has no such format
export const NOT_A_FORMAT: SeriesQuery = { lat: [-23.7], lon: [133.87], format: "xlsx" };
`;
}

clients("openapi - openapi-typescript types every real operation of the served document, and a client written against its paths typechecks", async () => {
  const served = await fetchDocument();
  const { default: openapiTS, astToString } = await import("openapi-typescript");
  const dir = await mkdtemp(join(tmpdir(), "openapi-client-"));
  try {
    await writeFile(join(dir, "api.d.ts"), astToString(await openapiTS(served)));
    await writeFile(join(dir, "client.ts"), writeClient(ROUTES.map((r) => r.operationId)));
    const options = ["--noEmit", "--strict", "--target", "es2022", "--module", "nodenext", "--moduleResolution", "nodenext", "--lib", "es2022,dom"];
    const { stdout } = await run(join(root, "node_modules/.bin/tsc"), [...options, join(dir, "client.ts")], { cwd: dir }).catch((err) => ({ stdout: `${err.stdout}${err.stderr}` }));
    assert.is(stdout.trim(), "", stdout);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

document.run();
examples.run();
clients.run();
live.run();
