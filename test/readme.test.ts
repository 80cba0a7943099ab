// README stays true: every make target is documented, its example requests pass the contract check, every curl
// example runs as written against a live server on the published demo, and the mirror command's examples run
// against a mirror of it.

import { execFile } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { checkRequest } from "../api/request.js";
import { validatorFor } from "../schemas/validate.js";
import { startMirrorServer } from "../client/mirror-server.js";
import { buildDemoDist, withServer } from "./server-fixture.js";

// README's examples and docs/clients.md's, in that reading order (B and ID are set in clients.md's first block)
const readme = ["../docs/clients.md", "../README.md"].map((f) => readFileSync(new URL(f, import.meta.url), "utf8")).join("\n");
const allDocs = readme + ["publishing", "operating", "mirrors"].map((f) => readFileSync(new URL(`../docs/${f}.md`, import.meta.url), "utf8")).join("\n");
const makefile = readFileSync(new URL("../Makefile", import.meta.url), "utf8");
const docs = suite("readme");

/** The address the README's examples use: `make demo` serves there. */
const README_BASE = "http://127.0.0.1:8080";

docs("readme - documents every make target and variable", () => {
  const targets = [...makefile.matchAll(/^([a-z]+):.*## /gm)].map((m) => m[1]);
  assert.ok(targets.length >= 10, `targets: ${targets}`);
  for (const t of targets) assert.ok(allDocs.includes(`make ${t}`), `make ${t} is not in README or docs/`);
  for (const v of ["SOURCES", "DIST", "FROM", "TO", "PORT", "HOST"]) assert.ok(allDocs.includes(`\`${v}\``), v);
});

docs("readme - every example data request is a valid contract request", () => {
  const bodies = [...readme.matchAll(/(?:-d|echo) '(\{[^']*\})'/g)].map((m) => m[1]);
  assert.ok(bodies.length >= 3, `found ${bodies.length} example bodies`);
  for (const body of bodies) {
    const spec = JSON.parse(body);
    assert.ok(validatorFor("data-request.schema.json")(spec), body);
    assert.is(checkRequest(spec).region.bbox.length, 4);
  }
});

/** The shell code blocks that call curl, in README order: one script, so B and ID carry from block to block. */
function curlBlocks(): string[] {
  return [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]).filter((block) => /\bcurl\b/.test(block));
}

// Each curl reports its status, media type and exit code on stderr, whatever the example does with its output.
const CURL_PROBE = `curl() {
  command curl --write-out '%{stderr}@@answer %{http_code} %{content_type}\\n' "$@"
  local rc=$?
  echo "@@exit $rc" >&2
  return $rc
}
`;

docs("readme - every curl example runs against a live demo server and answers 2xx JSON or CSV; the mirror command runs against a mirror", async () => {
  const root = await mkdtemp(join(tmpdir(), "readme-test-"));
  try {
    const dist = await buildDemoDist();
    const work = join(root, "work");
    await mkdir(work);
    const blocks = curlBlocks();
    assert.ok(blocks.length >= 3, `${blocks.length} blocks with curl`);
    const commands = blocks.join("\n").match(/\bcurl\b/g)?.length ?? 0;
    await withServer(dist, async (served) => {
      const script = CURL_PROBE + blocks.join("\n").replaceAll(README_BASE, served.url);
      const { stdout, stderr } = await promisify(execFile)("bash", ["-c", script], { cwd: work, maxBuffer: 64 << 20, timeout: 120_000 });
      const answers = [...stderr.matchAll(/^@@answer (\d{3}) (.*)$/gm)].map((m) => ({ status: Number(m[1]), type: m[2] }));
      const exits = [...stderr.matchAll(/^@@exit (\d+)$/gm)].map((m) => Number(m[1]));
      assert.ok(answers.length >= commands, `${answers.length} answers for ${commands} curl commands:\n${stderr}`);
      assert.equal(exits, answers.map(() => 0), `every curl exits 0:\n${stderr}`);
      for (const answer of answers) assert.match(answer.type, /^(application\/json|text\/csv|text\/plain)/, stderr);
      // the only non-2xx are the 413s of the plan example, whose plan and planRest the next lines follow (the
      // server's 413 bound is scaled down so that the chain has several links)
      const refused = answers.filter((a) => a.status < 200 || a.status > 299);
      assert.ok(refused.length >= 2 && refused.every((a) => a.status === 413), stderr);
      const first = JSON.parse(readFileSync(join(work, "answer.json"), "utf8"));
      assert.ok(Array.isArray(first.plan) && first.plan.length >= 1 && first.planRest, "big.json is answered with a plan and planRest");
      // every row of big.json, once, by following the plan example
      const rows = [...stdout.matchAll(/^"(2003-01-0[12])","([0-9.]+)","(-[0-9.]+)",/gm)].filter((m) => +m[2] >= 133 && +m[2] < 139 && +m[3] >= -25 && +m[3] < -19);
      assert.is(rows.length, 28_800);
      assert.is(new Set(rows.map((m) => m[0])).size, 28_800);
      // the digest example prints the header and the recomputed digest: they agree
      const digests = stdout.match(/sha-256=:[A-Za-z0-9+/=]+:/g) ?? [];
      assert.ok(digests.length >= 2, stdout.slice(-500));
      assert.is(digests[digests.length - 1], digests[digests.length - 2]);
    }, { planBytes: 3000 });

    // the mirror command's block, as written, in a folder whose package.json has the project's mirror script
    const mirrorBlock = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]).find((b) => b.includes("npm run --silent mirror") && b.includes("POST /api/v1/data/query"));
    assert.ok(mirrorBlock, "README shows the mirror command");
    const repo = fileURLToPath(new URL("..", import.meta.url));
    await writeFile(join(work, "package.json"), JSON.stringify({ private: true, scripts: { mirror: `tsx ${join(repo, "client", "cli.ts")}` } }));
    const mirror = await startMirrorServer({ dist, port: 0 });
    try {
      const env = { ...process.env, PATH: `${join(repo, "node_modules", ".bin")}:${process.env.PATH}` };
      const { stderr } = await promisify(execFile)("bash", ["-e", "-c", mirrorBlock!.replaceAll("http://127.0.0.1:8081/", mirror.url)], { cwd: work, env, timeout: 120_000 });
      assert.equal(stderr.match(/^HTTP \d{3}/gm), ["HTTP 200", "HTTP 200"], stderr);
      const rows = JSON.parse(readFileSync(join(work, "rows.json"), "utf8"));
      assert.is(rows.manifest.rowCount, rows.data.length);
      assert.ok(rows.data.length > 0);

      // the Node example, as written, with its import pointing at this checkout's client
      const snippet = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]).find((b) => b.includes("createMirrorClient"));
      assert.ok(snippet, "README shows the client in Node");
      const example = join(work, "mirror-example.mjs");
      await writeFile(example, snippet!.replace('"./client/index.js"', JSON.stringify(join(repo, "client", "index.ts"))).replaceAll("http://127.0.0.1:8081/", mirror.url));
      const { stdout } = await promisify(execFile)(join(repo, "node_modules", ".bin", "tsx"), [example], { cwd: work, timeout: 60_000 });
      assert.match(stdout, /^silo-tmax-20030101-20030131-[0-9a-f]{16} date,longitude,latitude,variable,value,unit,tile,row,col\r\n"2003-01-01","133",/);
    } finally {
      await mirror.close();
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

docs.run();
