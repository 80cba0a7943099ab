// The browser explorer in headless Chromium, loaded from a static mirror (make mirror's server): it draws the
// map, shows a cell's series, downloads a box's CSV equal to the server's answer, and logs no console error.

import { readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, type Page, chromium } from "playwright-core";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { startMirrorServer } from "../client/mirror-server.js";
import { makeDataRequest } from "../api/request.js";
import type { Window } from "../format/grid.js";
import { buildFixture, copyDist, type Fixture, post, withServer } from "./server-fixture.js";

const CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];

let fixture: Fixture;
let browser: Browser;

const explorer = suite("explorer");
explorer.before(async () => {
  fixture = await buildFixture();
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
  const page = await browser.newPage({ viewport: { width: 1300, height: 900 }, acceptDownloads: true });
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  await page.goto(`${mirror.url}explorer/`);
  await page.waitForSelector("body[data-status=ready], body[data-status=error]", { state: "attached", timeout: 60_000 });
  return {
    page,
    problems,
    close: async () => {
      await page.close();
      await mirror.close();
    },
  };
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

    // a click: the series of that cell over the whole published period, as the server answers it
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
      assert.ok((await page.textContent("#provenance"))!.includes(expected.manifest.dataSha256), "the series' dataSha256 is shown");

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

explorer("explorer - a mirror that cannot be read shows a readable error and data-status=error", async () => {
  const dist = await copyDist(fixture);
  await writeFile(join(dist, "catalog.json"), "{ not json");
  const opened = await openExplorer(dist);
  try {
    assert.is(await opened.page.getAttribute("body", "data-status"), "error");
    const message = (await opened.page.textContent("#error")) ?? "";
    assert.match(message, /catalog\.json: is not JSON/);
    assert.is(await opened.page.isVisible("#error"), true);
  } finally {
    await opened.close();
  }
});

explorer.run();
