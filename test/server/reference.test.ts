// The HTML API reference at /api/v1/docs in headless Chromium, as a reader sees it: Redoc's standalone bundle, served
// by the server itself, draws a sidebar of one entry per route of the table, grouped under the tags of api/tags.ts in
// their order, and each operation with its request samples; it asks nothing of any other host and logs no error; the
// landing page links it.

import { type Browser, chromium } from "playwright-core";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { ROUTES } from "../../api/interface.js";
import { TAGS } from "../../api/tags.js";
import { exchange, type Served, withServer, useFixture, fixture } from "../support/server-fixture.js";

const CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];

let browser: Browser;

const reference = suite("API reference");
reference.before(async () => {
  await useFixture();
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_FLAGS });
});
reference.after(async () => {
  await browser?.close();
});

/** Redoc's id of a tag in its sidebar: its name, spaces as hyphens. */
const tagId = (name: string) => `tag/${name.replaceAll(" ", "-")}`;

reference("reference - /api/v1/docs shows one sidebar entry per route, grouped under the tags in order, each drawn with its request samples; offline, no error but the CDN logo its policy refuses", async () => {
  await withServer(fixture.dist, async (served: Served) => {
    const document = (await exchange(served, "/api/v1/openapi.json")).json();
    assert.is(document.externalDocs.url, "/api/v1/docs");
    const series = document.paths["/api/v1/series"].get;

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
      assert.is((await heading.textContent())?.trim(), series.summary);
      // the sidebar as a reader sees it: its tags, and the operations under each, in order
      const entries = await page.evaluate(() => [...document.querySelectorAll("li[data-item-id]")].map((e) => e.getAttribute("data-item-id")!));
      const tags = entries.filter((id) => /^tag\/[^/]+$/.test(id));
      const operations = entries.filter((id) => id.includes("/operation/"));
      assert.equal(tags, TAGS.map((t) => tagId(t.name)));
      assert.is(operations.length, ROUTES.length, "one entry per route");
      const byTag = TAGS.flatMap((t) => ROUTES.filter((r) => r.tag === t.name).map((r) => `${tagId(t.name)}/operation/${r.operationId}`));
      assert.equal(operations, byTag);
      // each operation drawn, with its request samples (the series route's first: a place as CSV)
      const drawn = await page.evaluate(() => [...document.querySelectorAll("[data-section-id^='operation/']")].map((e) => e.getAttribute("data-section-id")!.slice("operation/".length)));
      assert.equal([...drawn].sort(), ROUTES.map((r) => r.operationId).sort());
      const section = page.locator('[data-section-id="operation/getSeries"]').first();
      assert.match((await section.textContent())!, "Request samples");
      assert.match((await section.textContent())!, series["x-codeSamples"][0].source.slice(0, 40));
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
