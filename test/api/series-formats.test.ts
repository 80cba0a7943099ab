// A series format is one file and one row (docs/layout.md "Adding a series format"): the docs' example format,
// tab-separated values with a bound of its own, registered on a route table of its own, is answered by the server and the mirror
// client over real HTTP with its media type, its 400 enum, its 413 bound and plan, and its OpenAPI content; the
// interface's own table does not know it.

import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { ROUTES } from "../../api/interface.js";
import type { RouteTable } from "../../api/routes.js";
import type { SeriesFormatSpec } from "../../api/series/formats/format.js";
import { SERIES_FORMATS } from "../../api/series/formats/table.js";
import { seriesRoutes } from "../../api/series/route.js";
import { createMirrorClient } from "../../client/index.js";
import { startMirrorServer } from "../../client/mirror-server.js";
import { docBlock, localize } from "../docs/doc-blocks.js";
import { makeWorkDir } from "../support/helpers.js";
import { assertError, request, withServer, useFixture, fixture } from "../support/server-fixture.js";

const ROOT = resolve(import.meta.dirname, "../..");

/**
 * docs/layout.md's example format, as a file of api/series/formats/ would hold it: its imports point there from a
 * scratch folder, and tsx loads it as the server would.
 */
async function loadDocFormat(): Promise<SeriesFormatSpec> {
  const folder = join(ROOT, "api/series/formats");
  const text = localize(docBlock("docs/layout.md", "export const TSV_FORMAT"), {
    '"../read.js"': JSON.stringify(join(folder, "../read.ts")),
    '"../write.js"': JSON.stringify(join(folder, "../write.ts")),
    '"./format.js"': JSON.stringify(join(folder, "format.ts")),
  });
  const file = join(work, "tsv.ts");
  writeFileSync(file, text);
  return (await import(pathToFileURL(file).href)).TSV_FORMAT;
}

/** The interface's routes with the series route built over the table with one more row. */
let routes: RouteTable;
const work = makeWorkDir("series-formats");
const formats = suite("series formats");
formats.before(async () => {
  await useFixture();
  const table = [...SERIES_FORMATS, await loadDocFormat()];
  routes = ROUTES.map((route) => (route.path === "/api/v1/series" ? seriesRoutes(table)[0] : route));
});

const CALL = "/api/v1/series?lat=-23&lon=124.5&start=2004-02-01&end=2004-02-03";

formats("a format of its own: one file and one row answer it with its type; the interface's table refuses it", async () => {
  await withServer(
    fixture.dist,
    async (s) => {
      const csv = await request(s, CALL);
      const tsv = await request(s, `${CALL}&format=tsv`);
      assert.is(tsv.status, 200, tsv.text);
      assert.is(tsv.headers["content-type"], "text/tab-separated-values; charset=utf-8");
      assert.is(tsv.text, csv.text.replaceAll(",", "\t"));
      assert.is(tsv.text.split("\n")[0], "longitude\tlatitude\tdate\tair_temperature_max");
      assert.is(tsv.headers["service-dataset-version"], csv.headers["service-dataset-version"]);
      const other = assertError(await request(s, `${CALL}&format=xlsx`), 400, "invalid_parameters");
      assert.is(other.issues[0].message, "\"xlsx\" is not a format here; the formats allowed are csv (default), json, met (an APSIM weather file), netcdf, tsv");
    },
    { routes },
  );
  await withServer(fixture.dist, async (s) => {
    const refused = assertError(await request(s, `${CALL}&format=tsv`), 400, "invalid_parameters");
    assert.is(refused.issues[0].message, "\"tsv\" is not a format here; the formats allowed are csv (default), json, met (an APSIM weather file), netcdf");
  });
});

formats("its bound by its option name, its 413 plan in its own format, its OpenAPI content and parameter", async () => {
  await withServer(
    fixture.dist,
    async (s) => {
      const over = assertError(await request(s, `${CALL}&format=tsv`), 413, "request_too_large");
      assert.is(
        over.message,
        "The call asks for 3 values (1 place x 3 days x 1 variable), over the bound of 2 values a TSV answer. The plan holds 2 calls, each within the bound, whose answers in order hold exactly these values (TSV: keep the first header line only).",
      );
      assert.equal(over.plan, [
        `/api/v1/series?lat=-23&lon=124.5&start=2004-02-01&end=2004-02-02&variables=air_temperature_max&format=tsv&dataset_version=${fixture.a.id}`,
        `/api/v1/series?lat=-23&lon=124.5&start=2004-02-03&end=2004-02-03&variables=air_temperature_max&format=tsv&dataset_version=${fixture.a.id}`,
      ]);
      const parts = await Promise.all(over.plan.map((path: string) => request(s, path)));
      assert.equal(parts.map((p) => p.status), [200, 200]);
      // the other formats keep their own bound
      assert.is((await request(s, CALL)).status, 200);
      const document = JSON.parse((await request(s, "/api/v1/openapi.json")).text);
      const series = document.paths["/api/v1/series"].get;
      assert.equal(Object.keys(series.responses["200"].content), ["text/csv", "application/json", "text/plain", "application/x-netcdf", "text/tab-separated-values"]);
      assert.equal(series.responses["200"].content["text/tab-separated-values"].schema, { type: "string", description: "Tidy TSV." });
      const format = series.parameters.find((p: { name: string }) => p.name === "format");
      assert.equal(format.schema.enum, ["csv", "json", "met", "netcdf", "tsv"]);
      assert.ok(format.description.endsWith(", or `tsv` (tidy, tab-separated)."), format.description);
    },
    { routes, bounds: { seriesTsvMaxValues: 2 } },
  );
});

formats("the mirror client answers the format from a static mirror, byte for byte as the server", async () => {
  const mirror = await startMirrorServer({ dist: fixture.dist });
  try {
    const client = createMirrorClient({ baseUrl: mirror.url, routes });
    const answer = await client.series({ lat: -23, lon: 124.5, start: "2004-02-01", end: "2004-02-03", format: "tsv" as never });
    await withServer(fixture.dist, async (s) => assert.is(answer.text(), (await request(s, `${CALL}&format=tsv`)).text), { routes });
    assert.is(answer.headers["Content-Type"], "text/tab-separated-values; charset=utf-8");
  } finally {
    await mirror.close();
  }
});

formats.run();
