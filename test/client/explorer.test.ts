// The browser explorer in headless Chromium, loaded from a static mirror (make mirror's server): it draws the
// map, shows a cell's series, saves the cell's CSV and APSIM file and a box's CSV, each equal to the server's answer,
// and logs no console error.

import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, type Page, chromium } from "playwright-core";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startMirrorServer } from "../../client/mirror-server.js";
import { makeDataRequest } from "../../api/query/request.js";
import { type Window, colToLon, rowToLat } from "../../format/grid.js";
import { objectPath } from "../../format/objects.js";
import { Archive } from "../../format/archive.js";
import { BlockCodec } from "../../format/cells.js";
import { listDates } from "../../format/dates.js";
import { LocalStorage, nodePlatform } from "../../format/local.js";
import { float32ToShortest } from "../../format/number-text.js";
import { GroupLattice, groupEntry } from "../../format/series.js";
import { openVersion } from "../../format/versions.js";
import { publish } from "../../pipeline/publish/publish.js";
import { DEMO_VARIABLES } from "../../pipeline/ingest/demo.js";
import { writeSiloDays } from "../support/helpers.js";
import { buildDemoDist, copyDist, post, request, withServer, useFixture, fixture } from "../support/server-fixture.js";

const CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];

let browser: Browser;

const explorer = suite("explorer");
explorer.before(async () => {
  await useFixture();
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_FLAGS });
});
explorer.after(async () => {
  await browser?.close();
});

interface Opened {
  page: Page;
  problems: string[];
  close(): Promise<void>;
}

/** The explorer of a mirror of `dist`, loaded and settled (ready or error); console errors collected. */
async function openExplorer(dist: string): Promise<Opened> {
  const mirror = await startMirrorServer({ dist, port: 0 });
  const opened = await openExplorerAt(`${mirror.url}explorer/`);
  return { ...opened, close: async () => (await opened.close(), await mirror.close()) };
}

/** The explorer at `url`, loaded and settled (ready or error); console errors collected. */
async function openExplorerAt(url: string): Promise<Opened> {
  const page = await browser.newPage({ viewport: { width: 1300, height: 900 }, acceptDownloads: true });
  const problems: string[] = [];
  page.on("console", (m) => {
    // the page asks whether a server answers OPeNDAP here: a static host's 404 says no
    if (m.type() === "error" && !/\/opendap\/[^/]+\.ver$/.test(m.location().url)) problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  await page.goto(url);
  await page.waitForSelector("body[data-status=ready], body[data-status=error]", { state: "attached", timeout: 60_000 });
  return { page, problems, close: () => page.close() };
}

/** Page coordinates of the centre of a global cell on the map canvas. */
async function cellPoint(page: Page, col: number, row: number): Promise<{ x: number; y: number }> {
  const box = (await page.locator("#map").boundingBox())!;
  return { x: box.x + ((col + 0.5) / 841) * box.width, y: box.y + ((row + 0.5) / 681) * box.height };
}

const requestFor = (cells: Window, start: string, end: string, version: string, format: "json" | "csv") => makeDataRequest(cells, start, end, { dataset_version: version, format });

explorer("explorer - draws the newest version's last date, shows a cell's series and downloads a box's CSV equal to the server's", async () => {
  const opened = await openExplorer(fixture.dist);
  const { page } = opened;
  try {
    assert.is(await page.getAttribute("body", "data-status"), "ready", await page.textContent("#status") ?? "");
    // the version a query without a pin chooses: newest published_at, ties by id (B before C)
    const b = fixture.b;
    assert.ok((await page.textContent("#provenance"))!.includes(b.id));
    assert.is(await page.inputValue("#date"), b.period_end);
    // drawn cells are opaque colours of the scale; a cell outside every published window stays transparent
    const pixels = await page.evaluate(() => {
      const ctx = (document.getElementById("map") as HTMLCanvasElement).getContext("2d")!;
      return { inside: Array.from(ctx.getImageData(305, 205, 1, 1).data), outside: Array.from(ctx.getImageData(100, 100, 1, 1).data) };
    });
    assert.is(pixels.inside[3], 255);
    assert.equal(pixels.outside, [0, 0, 0, 0]);

    // a click: the series of that cell over the whole published period (the series route), the values the query answers
    const point = await cellPoint(page, 303, 204);
    await page.mouse.click(point.x, point.y);
    await page.waitForSelector("#series-table table");
    const shown = await page.$$eval("#series-table tbody tr", (rows) => rows.map((r) => Array.from(r.children, (td) => td.textContent)));
    await withServer(fixture.dist, async (served) => {
      const expected = (await post(served, "/api/v1/data/query", requestFor([303, 204, 1, 1], b.period_start, b.period_end, b.id, "json"))).json();
      assert.equal(
        shown,
        expected.data.map((r: { date: string; value: number | null; tile: string }) => [r.date, r.value === null ? "missing" : String(r.value), r.tile]),
      );
      // one call of the series route, its provenance shown
      const call = await request(served, `/api/v1/series?lat=${rowToLat(204)}&lon=${colToLon(303)}&start=${b.period_start}&end=${b.period_end}&format=json&dataset_version=${b.id}`);
      assert.is(call.status, 200, call.text);
      assert.ok((await page.textContent("#provenance"))!.includes(call.json().manifest.dataSha256), "the series call's dataSha256 is shown");
      assert.ok((await page.textContent("#provenance"))!.includes(String(call.headers["content-digest"])), "and its Content-Digest");

      // a drag: the box's cells of the chosen date as CSV, byte for byte the server's answer
      const from = await cellPoint(page, 301, 202);
      const to = await cellPoint(page, 306, 208);
      const download = page.waitForEvent("download");
      await page.mouse.move(from.x, from.y);
      await page.mouse.down();
      await page.mouse.move(to.x, to.y, { steps: 5 });
      await page.mouse.up();
      const file = await (await download).path();
      const csv = await readFile(file!, "utf8");
      const answer = await post(served, "/api/v1/data/query", requestFor([301, 202, 6, 7], b.period_end, b.period_end, b.id, "csv"));
      assert.is(answer.status, 200);
      assert.is(csv, answer.text);
    });
    await page.screenshot({ path: join(tmpdir(), "explorer-test.png") });
    assert.equal(opened.problems, [], "no console error");
  } finally {
    await opened.close();
  }
});

explorer("explorer - the provenance panel cites the version and says what it changed against the version it was built from", async () => {
  const root = await mkdtemp(join(tmpdir(), "explorer-changes-"));
  try {
    const dist = join(root, "dist");
    const first = join(root, "first");
    const next = join(root, "next");
    const window: Window = [300, 200, 5, 5];
    await writeSiloDays(first, ["2004-02-01", "2004-02-02", "2004-02-03"], window, () => 20);
    await writeSiloDays(next, ["2004-02-02", "2004-02-03", "2004-02-04", "2004-02-05"], window, (_col, _row, date) => (date === "2004-02-02" ? 21.5 : 20));
    const base = await publish({ sources: first, dist, observations: false, log: () => {}, publishedAt: "2026-02-01T00:00:00Z" });
    // extend: 2 February revised (other cells), 3 February the same cells again, 4 and 5 February new
    const newer = await publish({ sources: next, dist, extend: true, observations: false, log: () => {}, publishedAt: "2026-02-06T00:00:00Z" });
    const opened = await openExplorer(dist);
    try {
      assert.is(await opened.page.getAttribute("body", "data-status"), "ready", (await opened.page.textContent("#status")) ?? "");
      const rows = await opened.page.$$eval("#provenance dt", (dts) => dts.map((dt) => [dt.textContent, dt.nextElementSibling?.textContent]));
      const record = newer.added[0];
      assert.equal(rows.slice(0, 4), [
        ["version", record.id],
        ["cite as", record.metadata.citation],
        ["built from", base.added[0].id],
        ["changes", "added 2004-02-04..2004-02-05; revised 2004-02-02"],
      ]);
      assert.match(String(record.metadata.citation), new RegExp(`Version ${record.id}, content SHA-256 ${record.content_sha256}, published 2026-02-06T00:00:00Z\\.`));
      assert.equal(opened.problems, [], "no console error");
    } finally {
      await opened.close();
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

explorer("explorer - a day SILO revised in a patch, stored as a Patch chunk over its base: the browser's series of a patched cell is the revised one", async () => {
  const root = await mkdtemp(join(tmpdir(), "explorer-patch-"));
  try {
    const dist = join(root, "dist");
    const [first, revised] = [join(root, "first"), join(root, "revised")];
    const window: Window = [300, 200, 12, 10];
    const dates = listDates("2004-03-01", "2004-03-20");
    const tenths = (col: number, row: number, day: number) => 150 + ((col * 3 + row * 5 + day * 7) % 50);
    const patched = (col: number, row: number, day: number) => day === 4 && col >= 302 && col < 305 && row === 203;
    await writeSiloDays(first, dates, window, (col, row, _date, day) => tenths(col, row, day) / 10);
    await writeSiloDays(revised, dates, window, (col, row, _date, day) => (tenths(col, row, day) + (patched(col, row, day) ? 15 : 0)) / 10);
    await publish({ sources: first, dist, observations: false, log: () => {}, publishedAt: "2026-03-21T00:00:00Z" });
    const { added } = await publish({ sources: revised, dist, observations: false, log: () => {}, publishedAt: "2026-03-22T00:00:00Z" });
    const newest = added[0];
    // the revised cell's chunk in the 16-day span is a Patch (one day of sixteen) over the first version's chunk
    const view = await openVersion(new Archive(new LocalStorage(dist), nodePlatform), newest);
    if (view.kind !== "raster") throw new Error("not a raster");
    const span = view.index.series.find((s) => s.first <= "2004-03-05" && "2004-03-05" <= s.last)!;
    const { group, position } = new GroupLattice(span.window, span.chunkSide).locate(303, 203);
    assert.is(groupEntry(await view.archive.readGroup(span, group), position).codec, BlockCodec.Patch);

    const opened = await openExplorer(dist);
    try {
      assert.is(await opened.page.getAttribute("body", "data-status"), "ready", (await opened.page.textContent("#status")) ?? "");
      const point = await cellPoint(opened.page, 303, 203);
      await opened.page.mouse.click(point.x, point.y);
      await opened.page.waitForSelector("#series-table table");
      const shown = await opened.page.$$eval("#series-table tbody tr", (rows) => rows.map((r) => Array.from(r.children, (td) => td.textContent).slice(0, 2)));
      assert.equal(shown, dates.map((date, day) => [date, String(float32ToShortest(Math.fround((tenths(303, 203, day) + (patched(303, 203, day) ? 15 : 0)) / 10)))]));
      assert.equal(opened.problems, [], "no console error");
    } finally {
      await opened.close();
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

explorer("explorer - make serve's own: the landing page's links work, and /explorer/ shows the newest version with no console error", async () => {
  await withServer(fixture.dist, async (served) => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on("console", (m) => void (m.type() === "error" && problems.push(m.text())));
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    try {
      await page.goto(`${served.url}/`);
      assert.is(await page.title(), "Climate data service");
      for (const name of ["The API reference", "the OpenAPI document", "Capabilities", "the catalog", "health", "README.md", "docs/clients.md"]) {
        const response = await Promise.all([page.waitForNavigation(), page.click(`text=${name}`)]).then(([r]) => r);
        assert.is(response?.status(), 200, name);
        await page.goBack();
      }
      await page.click("#run");
      await page.waitForSelector("#answer:not([hidden])");
      // the answer, readable: the status, the rows and the version they came from
      assert.match((await page.textContent("#answer"))!, /^200 OK\n4 rows of silo-tmax-[a-z0-9-]+ \(dataSha256 [0-9a-f]{64}\)\n\d{4}-\d{2}-\d{2}  [0-9.]+  -[0-9.]+  [0-9.]+  degC\n/);
      await Promise.all([page.waitForURL(`${served.url}/explorer/`), page.click("text=The explorer")]);
      await page.waitForSelector("body[data-status=ready], body[data-status=error]", { state: "attached", timeout: 60_000 });
      assert.is(await page.getAttribute("body", "data-status"), "ready", (await page.textContent("#status")) ?? "");
      assert.ok((await page.textContent("#provenance"))!.includes(fixture.b.id));
      assert.equal(problems, [], "no console error");
    } finally {
      await page.close();
    }
  });
});

explorer("explorer - a variable picker over the demo's variables (the table's, as published): each its unit, convention and scale; a dry day is not missing; a click is the cell's rainfall from the series route", async () => {
  const dist = await buildDemoDist();
  const opened = await openExplorer(dist);
  const { page } = opened;
  try {
    assert.is(await page.getAttribute("body", "data-status"), "ready", (await page.textContent("#status")) ?? "");
    const options = await page.$$eval("#variable option", (list) => list.map((o) => o.textContent));
    assert.equal(options, DEMO_VARIABLES.map((v) => `${v.label} (${v.unit})`));
    assert.ok(options.includes("daily Class A pan evaporation (mm)"));
    assert.match((await page.textContent("#convention"))!, /^daily maximum temperature \(air_temperature_max, SILO max_temp\), degC: the value of a date is for the 24 hours from 9 am/);
    await page.selectOption("#variable", { label: "daily rainfall (mm)" });
    await page.waitForFunction(() => document.getElementById("map-title")!.textContent!.startsWith("daily rainfall on 2003-01-31"));
    await page.waitForFunction(() => document.getElementById("status")!.textContent!.startsWith("2003-01-31:"));
    assert.equal([await page.textContent("#scale-min"), await page.textContent("#scale-max"), await page.textContent("#zero-label")], ["≤ 0.1 mm", "≥ 100 mm", "0 mm (no rain)"]);
    assert.match((await page.textContent("#convention"))!, /daily rainfall \(precipitation_amount, SILO daily_rain\), mm: the value of a date is for the 24 hours to 9 am/);
    assert.match((await page.textContent("#provenance"))!, /silo-rain-20030101-20030131-/);
    // one dry cell, one wet cell and one ocean cell of the tile r0-c0 on 2003-01-31, as the server answers them
    const pointer = JSON.parse(await readFile(join(dist, "catalog.json"), "utf8")) as { candidates: { id: string }[] };
    const rainId = pointer.candidates.map((c) => c.id).find((id) => id.startsWith("silo-rain-"))!;
    // the first tile of the day with rain: the monsoon north
    const tile = await withServer(dist, async (served) => {
      for (const id of ["r0-c1", "r0-c2", "r1-c1", "r1-c2", "r0-c0"]) {
        const answer = (await request(served, `/api/v1/layers/${rainId}?tile=20030131-${id}`)).json();
        if (answer.tile.cells.some((v: number | null) => v !== null && v > 2)) return answer;
      }
      return null;
    });
    const [c0, r0, w] = tile.tile.source_window as number[];
    const find = (test: (v: number | null) => boolean) => {
      const i = (tile.tile.cells as (number | null)[]).findIndex(test);
      return [c0 + (i % w), r0 + Math.floor(i / w)];
    };
    const wettest = Math.max(...(tile.tile.cells as (number | null)[]).map((v) => v ?? 0));
    assert.ok(wettest > 2, `some rain in the tile: ${wettest} mm`);
    const cells = { dry: find((v) => v === 0), wet: find((v) => v === wettest), ocean: find((v) => v === null) };
    const pixels = await page.evaluate((at) => {
      const ctx = (document.getElementById("map") as HTMLCanvasElement).getContext("2d")!;
      return Object.fromEntries(Object.entries(at).map(([k, [c, r]]) => [k, Array.from(ctx.getImageData(c, r, 1, 1).data)]));
    }, cells);
    assert.equal(pixels.dry, [255, 250, 232, 255]);
    assert.ok(pixels.wet[2] > pixels.wet[0] && pixels.wet[3] === 255, `${wettest} mm is a blue of the scale: ${pixels.wet}`);
    assert.equal(pixels.ocean, [0, 0, 0, 0]);
    // a click on the wet cell: its rainfall over the whole published period, one call of the series route
    const point = await cellPoint(page, cells.wet[0], cells.wet[1]);
    await page.mouse.click(point.x, point.y);
    await page.waitForSelector("#series-table table");
    const shown = await page.$$eval("#series-table tbody tr", (rows) => rows.map((r) => Array.from(r.children, (td) => td.textContent).slice(0, 2)));
    const [lat, lon] = [rowToLat(cells.wet[1]), colToLon(cells.wet[0])];
    const series = await withServer(dist, async (served) => (await request(served, `/api/v1/series?lat=${lat}&lon=${lon}&variables=daily_rain&format=json&dataset_version=${rainId}`)).json());
    const rain: (number | null)[] = series.data.places[0].values.precipitation_amount;
    assert.equal(shown, series.data.dates.map((date: string, i: number) => [date, rain[i] === null ? "missing" : String(rain[i])]));
    assert.ok(rain.includes(wettest), "the wet day is among them");
    assert.match((await page.textContent("#provenance"))!, series.manifest.dataSha256);
    await page.screenshot({ path: join(tmpdir(), "explorer-rain.png") });
    assert.equal(opened.problems, [], "no console error");
  } finally {
    await opened.close();
  }
});

explorer("explorer - a clicked place's CSV (every variable) and APSIM file, made from a static mirror by the client library: the server's bytes", async () => {
  const dist = await buildDemoDist();
  const opened = await openExplorer(dist);
  const { page } = opened;
  try {
    assert.is(await page.getAttribute("body", "data-status"), "ready", (await page.textContent("#status")) ?? "");
    assert.is(await page.isVisible("#files"), false, "no files before a click");
    // a land cell of the demo: -27.5, 151.9 (the Darling Downs)
    const [col, row] = [(151.9 - 111.975) / 0.05, (-9.975 + 27.5) / 0.05].map(Math.floor);
    const point = await cellPoint(page, col, row);
    await page.mouse.click(point.x, point.y);
    await page.waitForSelector("#files:not([hidden])");
    const calls = (await page.textContent("#files-call"))!.split("\n").map((l) => l.replace(/^GET /, ""));
    const pins = JSON.parse(await readFile(join(dist, "catalog.json"), "utf8")).candidates as { id: string; record: { dataset_key: string } }[];
    const pin = (key: string) => pins.find((c) => c.record.dataset_key === key)!.id;
    const place = `lat=${rowToLat(row)}&lon=${colToLon(col)}`;
    assert.equal(calls, [
      `/api/v1/series?${place}&variables=${DEMO_VARIABLES.map((v) => v.silo).join(",")}&format=csv&dataset_version=${DEMO_VARIABLES.map((v) => pin(v.datasetKey)).join(",")}`,
      `/api/v1/series?${place}&variables=radiation,max_temp,min_temp,daily_rain,evap_pan,vp&format=met&dataset_version=${["silo-radiation", "silo-tmax", "silo-tmin", "silo-rain", "silo-evap_pan", "silo-vp"].map(pin).join(",")}`,
    ]);
    await withServer(dist, async (served) => {
      for (const [button, call, name] of [["#csv-file", calls[0], `silo-${rowToLat(row)}_${colToLon(col)}.csv`], ["#met-file", calls[1], `silo-${rowToLat(row)}_${colToLon(col)}.met`]]) {
        const [download] = await Promise.all([page.waitForEvent("download"), page.click(button)]);
        assert.is(download.suggestedFilename(), name);
        const saved = await readFile((await download.path())!);
        const answer = await request(served, call);
        assert.is(answer.status, 200, answer.text.slice(0, 300));
        assert.ok(saved.equals(answer.bytes), `${button}: the server's bytes`);
        await page.waitForFunction((n) => document.getElementById("status")!.textContent!.startsWith(`${n}: `), name);
      }
      const met = (await request(served, calls[1])).text;
      assert.match(met, /^\[weather\.met\.weather\]\n/);
      assert.match(met, "\n2003 31 ");
    });
    assert.equal(opened.problems, [], "no console error");
  } finally {
    await opened.close();
  }
  // a mirror publishing max_temp alone: its CSV, and no APSIM file, saying why
  const alone = await openExplorer(fixture.dist);
  try {
    const point = await cellPoint(alone.page, 303, 204);
    await alone.page.mouse.click(point.x, point.y);
    await alone.page.waitForSelector("#files:not([hidden])");
    assert.is(await alone.page.isDisabled("#met-file"), true);
    assert.is(await alone.page.textContent("#files-note"), "An APSIM file needs radiation, min_temp, daily_rain too, which this mirror does not publish.");
    assert.equal(alone.problems, []);
  } finally {
    await alone.close();
  }
});

explorer("explorer - a mirror that cannot be read shows a readable error and data-status=error", async () => {
  const dist = await copyDist(fixture);
  // the page as a static host serves it: the object catalog.json named before it was damaged
  const page = objectPath(JSON.parse(await readFile(join(dist, "catalog.json"), "utf8")).explorer.sha256, "html");
  await writeFile(join(dist, "catalog.json"), "{ not json");
  const mirror = await startMirrorServer({ dist, port: 0 });
  const shown = await openExplorerAt(`${mirror.url}${page}`);
  const opened = { ...shown, close: async () => (await shown.close(), await mirror.close()) };
  try {
    assert.is(await opened.page.getAttribute("body", "data-status"), "error");
    const message = (await opened.page.textContent("#error")) ?? "";
    assert.match(message, /catalog\.json: is not JSON/);
    assert.is(await opened.page.isVisible("#error"), true);
  } finally {
    await opened.close();
  }
});

explorer("explorer - served by the server, the provenance names the version's OPeNDAP URL; a static mirror has none", async () => {
  const dist = await buildDemoDist();
  await withServer(dist, async (served) => {
    const shown = await openExplorerAt(`${served.url}/explorer/`);
    try {
      await shown.page.waitForSelector("#opendap");
      const id = (await shown.page.$$eval("#provenance dt", (dts) => dts.find((dt) => dt.textContent === "version")?.nextElementSibling?.textContent)) ?? "";
      assert.is(await shown.page.textContent("#opendap"), `${served.url}/opendap/${id}`);
      assert.is(await shown.page.getAttribute("#opendap", "href"), `${served.url}/opendap/${id}.html`);
      assert.equal(shown.problems, []);
    } finally {
      await shown.close();
    }
  });
  const onMirror = await openExplorer(dist);
  try {
    await onMirror.page.waitForTimeout(300);
    assert.is(await onMirror.page.$("#opendap"), null);
    assert.equal(onMirror.problems, []);
  } finally {
    await onMirror.close();
  }
});

explorer.run();
