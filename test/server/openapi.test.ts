// The served OpenAPI document: a valid OpenAPI 3.1 document (swagger-parser), lint clean (redocly, with the repo's
// redocly.yaml), only the contract's schemas, and every operation it documents answered as documented over HTTP.

import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import SwaggerParser from "@apidevtools/swagger-parser";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { buildOpenApi } from "../../api/openapi.js";
import { DATA_REQUEST_EXAMPLE } from "../../api/query/routes.js";
import { checkRequest } from "../../api/query/request.js";
import { describeSeriesCall } from "../../api/series/hint.js";
import { ROUTES } from "../../api/interface.js";
import { CONTRACT_SCHEMAS, DIST_SCHEMAS } from "../../schemas/validate.js";
import { type Fixture, buildFixture, post, request, requestFor, withServer } from "../support/server-fixture.js";

const run = promisify(execFile);
const root = join(import.meta.dirname, "../..");

let fixture: Fixture;

async function useFixture(): Promise<void> {
  fixture = await buildFixture();
}

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

document("openapi - publishes the contract's schemas only, no security scheme, a license, the data request example", () => {
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
  assert.equal(body.example, DATA_REQUEST_EXAMPLE);
  assert.equal(checkRequest(structuredClone(DATA_REQUEST_EXAMPLE), describeSeriesCall).region.bbox, [133.8, -23.8, 133.95, -23.65]);
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

document("openapi - every path documents HEAD for GET, OPTIONS, and a 405 with Allow for each other method", () => {
  const doc: any = buildOpenApi(ROUTES);
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
    for (const method of methods) assert.ok(item[method], `${method} ${path}`);
    const answered = ROUTES.filter((r) => r.path.replace(/:([a-z]+)/g, "{$1}") === path).map((r) => r.method.toLowerCase());
    if (answered.includes("get")) assert.ok(item.head.responses["200"] ?? item.head.responses["302"], `HEAD ${path}`);
    assert.ok(item.options.responses["204"], `OPTIONS ${path}`);
    for (const method of methods.filter((m) => !answered.includes(m) && m !== "options" && !(m === "head" && answered.includes("get")))) {
      assert.equal(Object.keys(item[method].responses), ["405"], `${method} ${path}`);
    }
  }
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

live("openapi - every documented operation of every path answers one of its documented statuses", async () => {
  const doc: any = buildOpenApi(ROUTES);
  const body = requestFor({ col: 250, row: 250, width: 2, height: 2 }, "2004-02-01", "2004-02-01");
  await withServer(fixture.dist, async (served) => {
    for (const [template, item] of Object.entries<any>(doc.paths)) {
      for (const [method, operation] of Object.entries<any>(item)) {
        if (method === "parameters") continue;
        // request() fails on any answer the document does not hold; here each must also be a 2xx or the 405 it promises
        const answer = await request(served, concretePath(template), {
          method: method.toUpperCase(),
          ...(method === "post" ? { body: JSON.stringify(body), headers: { "Content-Type": "application/json" } } : {}),
        });
        const expected = Object.keys(operation.responses).filter((s) => /^(2|405)/.test(s) || (s === "302" && template.includes("latest")));
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
      const answer = await request(served, path, { method: "POST", body: JSON.stringify(DATA_REQUEST_EXAMPLE) });
      assert.is(answer.status, 415);
      const { message } = answer.json();
      assert.ok(message.includes("-H 'Content-Type: application/json'"), message);
      assert.match(message, /\/api\/v1\/openapi\.json/);
      const sent = await post(served, path, DATA_REQUEST_EXAMPLE, { "Content-Type": "text/plain" });
      assert.is(sent.status, 415);
    }
  });
});

document.run();
live.run();
