// The HTML API reference at /api/v1/docs in headless Chromium: Redoc's standalone bundle, served by the server itself,
// renders every operation of the served OpenAPI document (the series route's heading among them), asks nothing of any
// other host, and logs no error; the landing page links it.

import { type Browser, chromium } from "playwright-core";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { buildFixture, exchange, type Fixture, type Served, withServer } from "../support/server-fixture.js";

const CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];

let fixture: Fixture;
let browser: Browser;

const reference = suite("API reference");
reference.before(async () => {
  fixture = await buildFixture();
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_FLAGS });
});
reference.after(async () => {
  await browser?.close();
});

reference("reference - /api/v1/docs renders every operation of the OpenAPI document, offline: nothing asked of another host, no error but the CDN logo its policy refuses", async () => {
  await withServer(fixture.dist, async (served: Served) => {
    const document = (await exchange(served, "/api/v1/openapi.json")).json();
    assert.is(document.externalDocs.url, "/api/v1/docs");
    const operations: { id: string; summary: string }[] = [];
    // the methods Redoc draws (the document also states each path's TRACE, a 405, which Redoc leaves out)
    const drawnMethods = ["get", "head", "post", "put", "patch", "delete", "options"];
    for (const item of Object.values(document.paths) as Record<string, { operationId?: string; summary?: string }>[]) {
      for (const [method, op] of Object.entries(item)) if (drawnMethods.includes(method) && op.operationId && op.summary) operations.push({ id: op.operationId, summary: op.summary });
    }
    assert.ok(operations.length > 40, `${operations.length} operations`);
    const series = operations.find((o) => o.id === "getSeries");
    assert.ok(series, "the series route is in the document");

    const page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
    const problems: string[] = [];
    const elsewhere: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(m.text());
    });
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    // every request the page makes: this server's answered, anything else refused and recorded
    await page.route("**/*", (route) => {
      const url = route.request().url();
      if (url.startsWith(`${served.url}/`) || url.startsWith("blob:") || url.startsWith("data:")) return route.continue();
      elsewhere.push(url);
      return route.abort();
    });
    try {
      const answer = await page.goto(`${served.url}/api/v1/docs`);
      assert.is(answer?.status(), 200);
      // Redoc draws each operation as a section named by its operationId, headed by its summary
      const heading = page.locator('[data-section-id="operation/getSeries"] h2').first();
      await heading.waitFor({ timeout: 60_000 });
      assert.is((await heading.textContent())?.trim(), series!.summary);
      const drawn = await page.evaluate(() => [...document.querySelectorAll("[data-section-id^='operation/']")].map((e) => e.getAttribute("data-section-id")!.slice("operation/".length)));
      for (const op of operations) assert.ok(drawn.includes(op.id), `${op.id} is drawn`);
      assert.match((await page.textContent("body"))!, document.info.title);
      assert.equal(elsewhere, [], "no request leaves the server");
      // the one refusal: Redoc's attribution logo from its CDN, refused by the page's Content-Security-Policy
      assert.equal(problems.filter((p) => !/the image 'https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini\.svg' violates the following Content Security Policy/.test(p)), []);
    } finally {
      await page.close();
    }
    // the landing page links the reference
    assert.match((await exchange(served, "/")).text, '<a href="api/v1/docs">The API reference</a>');
  });
});

reference.run();
