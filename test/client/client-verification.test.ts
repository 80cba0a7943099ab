// What real clients can verify (docs/contract.md §3): a Python client hashing the raw bytes it received against
// Content-Digest (any content coding), and a browser checking manifest.dataSha256 of the data it decoded.

import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { chromium } from "playwright-core";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { requestFor, withServer, useFixture, fixture } from "../support/server-fixture.js";

const run = promisify(execFile);

const clients = suite("client verification");
clients.before(useFixture);

// Python's standard library only (CI has no PyPI): urllib hands over the bytes as sent, compressed or not.
const PYTHON = `
import base64, gzip, hashlib, json, sys, urllib.request
url, body, encoding = sys.argv[1], sys.argv[2].encode(), sys.argv[3]
request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json", "Accept-Encoding": encoding})
with urllib.request.urlopen(request) as response:
    raw = response.read()
    digest = response.headers["Content-Digest"]
    coding = response.headers.get("Content-Encoding")
sent = "sha-256=:" + base64.b64encode(hashlib.sha256(raw).digest()).decode() + ":"
text = (gzip.decompress(raw) if coding == "gzip" else raw).decode()
# dataSha256 hashes the data array exactly as returned: the text after "data": up to the closing brace
data = text[text.index('"data":') + len('"data":'):-1]
manifest = json.loads(text)["manifest"]
print(json.dumps({"coding": coding, "digest_ok": sent == digest, "data_ok": hashlib.sha256(data.encode()).hexdigest() == manifest["dataSha256"], "rows": len(json.loads(data))}))
`;

clients("python - hashes the raw bytes against Content-Digest and the data against dataSha256, plain and gzip", async () => {
  await withServer(fixture.dist, async (served) => {
    const body = JSON.stringify(requestFor({ col: 250, row: 250, width: 10, height: 10 }, "2004-02-01", "2004-02-03"));
    for (const encoding of ["identity", "gzip"]) {
      const { stdout } = await run("python3", ["-c", PYTHON, `${served.url}/api/v1/data/query`, body, encoding]);
      assert.equal(JSON.parse(stdout), { coding: encoding === "gzip" ? "gzip" : null, digest_ok: true, data_ok: true, rows: 300 });
    }
  });
});

clients("browser - fetch (br decoded by the browser) verifies manifest.dataSha256 and reads Content-Digest", async () => {
  const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run"] });
  try {
    await withServer(fixture.dist, async (served) => {
      const page = await browser.newPage();
      await page.goto(`${served.url}/api/health`);
      const body = requestFor({ col: 250, row: 250, width: 10, height: 10 }, "2004-02-01", "2004-02-03");
      const result = await page.evaluate(async ([url, request]) => {
        const response = await fetch(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(request) });
        const text = await response.text();
        const data = text.slice(text.indexOf('"data":') + '"data":'.length, -1);
        const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(data));
        const hex = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
        return { ok: hex === JSON.parse(text).manifest.dataSha256, digest: response.headers.get("Content-Digest"), version: response.headers.get("Service-Dataset-Version") };
      }, [`${served.url}/api/v1/data/query`, body] as const);
      assert.is(result.ok, true);
      assert.match(String(result.digest), /^sha-256=:[A-Za-z0-9+/]{43}=:$/);
      assert.is(result.version, fixture.a.id);
    });
  } finally {
    await browser.close();
  }
});

clients.run();
