// Hostile paths and headers against the Zarr view (fast-check, fixed seed): unknown versions and keys, chunk
// indices out of range, malformed and huge, dots and percent-encoded traversal, odd Range headers. Every answer is
// one the OpenAPI document holds (request() checks it), never a 500, and only a well-formed key of a held chunk
// or metadata document is a 200.

import fc from "fast-check";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { request, withServer, useFixture, fixture } from "../support/server-fixture.js";
import { zarrMethodArb, zarrPathArb, zarrRangeArb } from "../support/hostile-requests.js";

const SEED = Number(process.env.HOSTILE_SEED ?? 20261125);
const RUNS = 1500;
const STATUSES = new Set([200, 206, 302, 304, 404, 405, 416]);


const hostile = suite("zarr hostile");
hostile.before(useFixture);

hostile(`zarr hostile - ${RUNS} generated paths, methods and ranges: documented answers, never a 500`, async () => {
  await withServer(fixture.dist, async (served) => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(zarrPathArb(fixture), zarrMethodArb, zarrRangeArb, async (path, verb, asked) => {
        const answer = await request(served, path, { method: verb, headers: asked === undefined ? {} : { Range: asked } });
        seen.set(answer.status, (seen.get(answer.status) ?? 0) + 1);
        assert.ok(STATUSES.has(answer.status) || (verb === "OPTIONS" && answer.status === 204), `${verb} ${path} (Range ${asked}): ${answer.status} ${answer.text.slice(0, 200)}`);
        if (answer.status === 200 && verb === "GET") assert.ok(/\/(\.z(metadata|group|attrs|array)|[0-9.]+)$/.test(path), `${path} answered 200`);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    // the generator reaches every kind of answer, not only 404s
    for (const status of [200, 206, 302, 404, 405]) assert.ok((seen.get(status) ?? 0) > 0, `no ${status} in ${JSON.stringify([...seen])}`);
  });
});

hostile.run();
