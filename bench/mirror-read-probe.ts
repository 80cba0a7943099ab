// One cold mirror client over a static host of a dist (client/mirror-server.ts): client.series of a place over a period,
// printed as one line of JSON: the answer's status and sha256, the requests and bytes the client fetched. bench/format-ab.ts
// runs it in each build's tree, so each build's client reads its own format.
//
// node_modules/.bin/tsx bench/mirror-read-probe.ts <dist> <lat> <lon> <start> <end>

import { createHash } from "node:crypto";
import { createMirrorClient } from "../client/index.js";
import { startMirrorServer } from "../client/mirror-server.js";

const [dist, lat, lon, start, end] = process.argv.slice(2);
const mirror = await startMirrorServer({ dist });
try {
  const client = createMirrorClient({ baseUrl: mirror.url });
  const answer = await client.series({ lat: Number(lat), lon: Number(lon), start, end });
  const { requests, bytes } = client.stats();
  console.log(JSON.stringify({ status: answer.status, sha256: createHash("sha256").update(answer.body).digest("hex"), requests, bytes }));
} finally {
  await mirror.close();
}
