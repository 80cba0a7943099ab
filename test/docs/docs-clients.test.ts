// docs/clients.md's examples run as written: the contract routes' curl blocks (B and ID carried from block to block,
// the plan followed, the digest checked) against a live server on the demo, the R lines with Rscript, and the mirror
// client's blocks in a checkout of their own against `make mirror`: its command line, Node, the browser bundle and
// page in Chromium. Only the documented addresses are replaced; the series section's curl and Python lines run in
// series-docs.test.ts, the Zarr section's xarray and GDAL blocks in test/api/zarr-readers.test.ts.

import { execFile } from "node:child_process";
import { readFileSync, symlinkSync } from "node:fs";
import { mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { chromium } from "playwright-core";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { DEMO_VARIABLES } from "../../pipeline/ingest/demo.js";
import { docBlock, localize } from "./doc-blocks.js";
import { freePort, makeCheckout, READER_ENV, runBash, startUntilAnswered } from "./doc-run.js";
import { freshDirs, makeWorkDir } from "../support/helpers.js";
import { startMirrorServer } from "../../client/mirror-server.js";
import { type Served, assertSchema, buildDemoDist, buildFixture, request, withServer } from "../support/server-fixture.js";

const run = promisify(execFile);
const fresh = freshDirs(makeWorkDir("docs-clients"));
/** The address `make demo` serves on, as the page writes it; and `make mirror`'s. */
const SERVER = "http://127.0.0.1:8080";
const MIRROR = "http://127.0.0.1:8081/";
const CONTRACT_BLOCKS = [
  docBlock("docs/clients.md", "curl -s $B/api/v1/capabilities"),
  docBlock("docs/clients.md", "-d @big.json > answer.json"),
  docBlock("docs/clients.md", "openssl dgst -sha256 -binary tile.json"),
];

// Each curl reports its status, media type and exit code on stderr, whatever the example does with its output, and
// keeps what it wrote to stdout in .bodies/<n> (n counted in files: a curl in $(...) runs in a subshell).
const CURL_PROBE = `BODIES="$PWD/.bodies"; mkdir -p "$BODIES"
curl() {
  local n=$(( $(ls "$BODIES" | wc -l) + 1 ))
  command curl --write-out '%{stderr}@@answer %{http_code} %{content_type}\\n' "$@" | tee "$BODIES/$(printf %04d "$n")"
  local rc=\${PIPESTATUS[0]}
  echo "@@exit $rc" >&2
  return $rc
}
`;

/** What the first block's curls printed, in order: capabilities, the catalog (twice), two tiles' metadata, a sample, a resolution. */
async function checkFirstBlock(served: Served, bodies: string[]): Promise<void> {
  const [capabilities, catalog, again, layers, sample, resolution] = bodies.slice(0, 6).map((b) => JSON.parse(b));
  assertSchema("capabilities.schema.json", capabilities);
  assert.equal(again, catalog);
  const tmax = catalog.datasets.find((d: { dataset_key: string }) => d.dataset_key === "silo-tmax");
  assert.ok(tmax, "the catalog lists the demo's maximum temperature");
  assert.is(catalog.datasets.filter((d: { dataset_key: string }) => d.dataset_key.startsWith("silo-")).length, DEMO_VARIABLES.length);
  assertSchema("layers-page.schema.json", layers);
  assert.is(layers.tiles.length, 2, "limit=2");
  assert.is(layers.dataset.id, tmax.id);
  // the sample: tile r1-c1's row 18, col 180 is the global cell 436, 274 (133.8, -23.7): the series route's value
  assertSchema("pixel-sample.schema.json", sample);
  const series = (await request(served, `/api/v1/series?lat=-23.7&lon=133.8&start=2003-01-01&end=2003-01-01&dataset_version=${tmax.id}`)).text;
  assert.is(sample.value, Number(series.trim().split("\n")[1].split(",")[3]));
  assert.equal([sample.datasetVersion, sample.date, sample.unit], [tmax.id, "2003-01-01", "degC"]);
  // the box 133.8..133.95 x -23.8..-23.65 holds 3 x 3 cell centres, over 31 days
  assert.equal([resolution.available, resolution.selection.rowCount, resolution.selection.datasetVersion], [true, 279, tmax.id]);
}

const contract = suite("docs: clients.md, the contract routes and R");

contract("clients.md - the contract routes' curl blocks run against a live demo server: what each prints (capabilities, catalog, tiles, a sample's value, a resolution's row count), the plan followed, the digest agrees", async () => {
  const work = fresh("work");
  await mkdir(work);
  await withServer(await buildDemoDist(), async (served) => {
    // one script, so B and ID set in the first block carry to the next ones
    const script = CURL_PROBE + localize(CONTRACT_BLOCKS.join("\n"), { [SERVER]: served.url });
    const { stdout, stderr } = await runBash(script, { cwd: work });
    const bodyFiles = (await readdir(join(work, ".bodies"))).sort();
    await checkFirstBlock(served, await Promise.all(bodyFiles.map((f) => readFile(join(work, ".bodies", f), "utf8"))));
    const answers = [...stderr.matchAll(/^@@answer (\d{3}) (.*)$/gm)].map((m) => ({ status: Number(m[1]), type: m[2] }));
    const exits = [...stderr.matchAll(/^@@exit (\d+)$/gm)].map((m) => Number(m[1]));
    assert.ok(answers.length >= (CONTRACT_BLOCKS.join("\n").match(/\bcurl\b/g)?.length ?? 0), stderr);
    assert.equal(exits, answers.map(() => 0), `every curl exits 0:\n${stderr}`);
    for (const answer of answers) assert.match(answer.type, /^(application\/json|text\/csv|text\/plain)/, stderr);
    // the only non-2xx are the 413s of the plan example, whose plan and planRest the next lines follow (the server's
    // 413 bound is scaled down so that the chain has several links)
    const refused = answers.filter((a) => a.status < 200 || a.status > 299);
    assert.ok(refused.length >= 2 && refused.every((a) => a.status === 413), stderr);
    const first = JSON.parse(readFileSync(join(work, "answer.json"), "utf8"));
    assert.ok(Array.isArray(first.plan) && first.plan.length >= 1 && first.planRest, "big.json is answered with a plan and planRest");
    // every row of big.json, once, by following the plan example: box.csv holds one header line, then the rows
    const csv = readFileSync(join(work, "box.csv"), "utf8");
    assert.is(csv.match(/^date,longitude,latitude/gm)?.length, 1, "only the first part's header line is kept");
    const rows = [...csv.matchAll(/^"(2003-01-0[12])","([0-9.]+)","(-[0-9.]+)",/gm)].filter((m) => +m[2] >= 133 && +m[2] < 139 && +m[3] >= -25 && +m[3] < -19);
    assert.is(rows.length, 28_800);
    assert.is(new Set(rows.map((m) => m[0] + m[2] + m[3])).size, 28_800);
    // pandas reads numbers as numbers (a header line inside the rows would make every column text)
    const pandas = "import pandas as pd, json; d = pd.read_csv('box.csv'); print(json.dumps([len(d), str(d['longitude'].dtype), str(d['value'].dtype), float(d['value'].max()), d['longitude'].between(133, 139).all().item()]))";
    const parsed = JSON.parse((await run("/usr/bin/python3", ["-c", pandas], { cwd: work })).stdout);
    const values = csv.split("\n").slice(1).filter((line) => line.trim() !== "").map((line) => line.split(",")[4].replaceAll('"', "")).filter((v) => v !== "").map(Number);
    assert.equal(parsed, [28_800, "float64", "float64", values.reduce((a, b) => Math.max(a, b)), true]);
    // the digest example prints the header and the recomputed digest: they agree
    const digests = stdout.match(/sha-256=:[A-Za-z0-9+/=]+:/g) ?? [];
    assert.ok(digests.length >= 2, stdout.slice(-500));
    assert.is(digests[digests.length - 1], digests[digests.length - 2]);
  }, { bounds: { planBytes: 3000 } });
});

contract("clients.md - the R lines run with Rscript: read.csv of a series, terra's map of a day through GDAL's Zarr driver, cropped", async () => {
  await withServer(await buildDemoDist(), async (served) => {
    const live = (text: string) => localize(text, { [SERVER]: served.url });
    const csv = (await request(served, "/api/v1/series?lat=-23.7&lon=133.87")).text.trim().split("\n");
    const readCsv = live(docBlock("docs/clients.md", "d <- read.csv("));
    const r1 = await run("Rscript", ["-e", `${readCsv}\nwriteLines(paste(nrow(d), d$date[15], d$air_temperature_max[15]))`], { timeout: 60_000 });
    const [, , date15, max15] = csv[15].split(",");
    assert.is(r1.stdout, `31 ${date15} ${max15}\n`);
    const terra = live(docBlock("docs/clients.md", "region <- crop(day, ext(133, 135, -25, -23))"));
    const r2 = await run("Rscript", ["-e", `${terra}\nwriteLines(paste(c(dim(region), as.vector(ext(region)), format(extract(day, cbind(133.85, -23.7))[[1]])), collapse = " "))`], { timeout: 60_000 });
    // terra snaps the box to whole cells: 40 x 40 from the edges nearest 133, 135, -25, -23
    assert.is(r2.stdout, `40 40 1 132.975 134.975 -24.975 -22.975 ${max15}\n`);
  });
});

contract.run();

const mirror = suite("docs: clients.md, the mirror client");

/** A checkout whose dist is the demo (make mirror serves DIST=dist by default). */
async function demoCheckout(): Promise<string> {
  const checkout = makeCheckout(fresh("checkout"));
  symlinkSync(await buildDemoDist(), join(checkout, "dist"));
  return checkout;
}

/** A line of a block that starts a server, run until url answers, on the port given. */
function startMirror(line: string, checkout: string, port: number, env: NodeJS.ProcessEnv = READER_ENV) {
  return startUntilAnswered(["bash", "-c", line], `http://127.0.0.1:${port}/catalog.json`, { cwd: checkout, env });
}

mirror("clients.md - make mirror serves the demo; the command line, series, Node and the one-line series call read it as written", async () => {
  const checkout = await demoCheckout();
  const [plain] = docBlock("docs/clients.md", "make mirror DIST=/tmp/mirror-dist PORT=9000").trim().split("\n");
  const port = await freePort();
  // make mirror's port is PORT from the command line or the environment, else 8081
  const server = await startMirror(plain, checkout, port, { ...READER_ENV, PORT: String(port) });
  try {
    const live = (text: string) => localize(text, { [MIRROR]: `http://127.0.0.1:${port}/` });
    const cli = await runBash(live(docBlock("docs/clients.md", "npm run --silent mirror -- http://127.0.0.1:8081/ POST")), { cwd: checkout });
    assert.equal(cli.stderr.match(/^HTTP \d{3}/gm), ["HTTP 200", "HTTP 200"], cli.stderr);
    const rows = JSON.parse(await readFile(join(checkout, "rows.json"), "utf8"));
    assert.ok(rows.data.length > 0 && rows.manifest.rowCount === rows.data.length);
    const series = await runBash(live(docBlock("docs/clients.md", "mirror -- series http://127.0.0.1:8081/ 133.87 -23.7 > place.csv")), { cwd: checkout });
    assert.is(JSON.parse(series.stdout).data.dates.length, 31);
    assert.match(await readFile(join(checkout, "place.csv"), "utf8"), /^longitude,latitude,date,air_temperature_max\n133.85,-23.7,2003-01-01,/);
    await runBash(live(docBlock("docs/clients.md", "mirror -- series http://127.0.0.1:8081/ 133.0 -27.0 2003-01-01 2003-01-31 > cell.csv")), { cwd: checkout });
    assert.is((await readFile(join(checkout, "cell.csv"), "utf8")).trim().split("\n").length, 32);
    await runNodeExamples(checkout, live);
  } finally {
    await server.stop();
  }
});

/** The Node script, as the page says to run it from the repository's folder, and the one-line series call after its client. */
async function runNodeExamples(checkout: string, live: (text: string) => string): Promise<void> {
  const script = live(docBlock("docs/clients.md", "import { createMirrorClient } from \"./client/index.js\";"));
  await writeFile(join(checkout, "mirror-example.mjs"), script);
  const { stdout } = await run("node_modules/.bin/tsx", ["mirror-example.mjs"], { cwd: checkout, env: READER_ENV, timeout: 60_000 });
  assert.match(stdout, /^silo-tmax-20030101-20030131-[0-9a-f]{16} date,longitude,latitude,variable,value,unit,tile,row,col\r\n"2003-01-01","133",/);
  assert.match(stdout, /\n33\n$/, "the series call: a header, 31 rows and the empty string after the last line end");
  // the one-line call, with the client the script above makes
  const made = script.slice(0, script.indexOf("const { datasets }"));
  const line = docBlock("docs/clients.md", "const answer = await client.series({ lat: -23.7");
  const print = `console.log(answer.status, answer.json().data.dates.length, file.headers["Content-Type"], String.fromCharCode(...file.body.slice(0, 4)));\n`;
  await writeFile(join(checkout, "series-example.mjs"), `${made}${line}${print}`);
  assert.is((await run("node_modules/.bin/tsx", ["series-example.mjs"], { cwd: checkout, env: READER_ENV, timeout: 60_000 })).stdout, "200 31 application/x-netcdf CDF\u0001\n");
}

mirror("clients.md - the browser bundle builds as shown, and the page's script reads a tile through it in Chromium", async () => {
  const checkout = await demoCheckout();
  await runBash(docBlock("docs/clients.md", "node_modules/.bin/esbuild client/index.ts --bundle --format=esm --platform=browser"), { cwd: checkout });
  const id = JSON.parse(await readFile(join(await buildDemoDist(), "catalog.json"), "utf8")).candidates.find((c: { id: string }) => c.id.startsWith("silo-tmax-")).id;
  const host = await startMirrorServer({ dist: await buildDemoDist() });
  // the page and the bundle from a site of their own, the mirror from another origin, as from a CDN
  const html = localize(docBlock("docs/clients.md", "<script type=\"module\">"), { "https://cdn.example.org/climate/": host.url, "<version id>": id });
  const site = createServer((req, res) => {
    const js = req.url === "/mirror-client.js";
    res.writeHead(200, { "content-type": js ? "text/javascript" : "text/html" }).end(js ? readFileSync(join(checkout, "mirror-client.js")) : html);
  });
  await new Promise<void>((ready) => site.listen(0, "127.0.0.1", ready));
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu", "--no-first-run"] });
  try {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(e.message));
    page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
    const ranges: string[] = [];
    page.on("requestfinished", (r) => r.url().startsWith(host.url) && r.headers().range && ranges.push(r.url()));
    await page.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`, { waitUntil: "networkidle" });
    assert.equal(problems, []);
    assert.ok(ranges.some((u) => u.endsWith(".day")), `the tile's blocks were read by range: ${ranges.join(" ")}`);
  } finally {
    await browser.close();
    site.close();
    await host.close();
  }
});

mirror("clients.md - make mirror with a DIST and PORT serves that dist; the diff command lists the dates two of its versions differ on", async () => {
  const fixture = await buildFixture();
  const checkout = makeCheckout(fresh("checkout"));
  const [, other] = docBlock("docs/clients.md", "make mirror DIST=/tmp/mirror-dist PORT=9000").trim().split("\n");
  const port = await freePort();
  const server = await startMirror(localize(other, { "/tmp/mirror-dist": fixture.dist, "PORT=9000": `PORT=${port}` }), checkout, port);
  try {
    const diff = localize(docBlock("docs/clients.md", "npm run --silent mirror -- diff"), { [MIRROR]: `http://127.0.0.1:${port}/`, "<old-id>": fixture.b.id, "<new-id>": fixture.c.id });
    const { stdout } = await runBash(diff, { cwd: checkout });
    assert.equal(stdout.trim().split("\n").map((l) => l.split(/\s+/).slice(0, 2).join(" ")), ["date change", "2004-02-28 revised", "2004-02-29 revised", "2004-03-01 revised"]);
  } finally {
    await server.stop();
  }
});

mirror.run();
