// Bench row of make serve DIST=<url>: the same server over the same dist, once from its folder and once through
// nginx serving that folder (range requests, verified as a local read), each asked another cell and period on every
// request; both servers' caches warmed by a first run. Goal: at least 0.5 of the local server's rate.

import { startNginx } from "../test/support/nginx.js";
import { type Proc, runWrk, startServer } from "./load.js";

type Say = (line?: string) => void;
const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** `local` serves `dist` already; `script` asks wrk for another cell and period each request. Figures: remote_*. */
export async function benchRemote(dist: string, local: Proc, script: string, seconds: number, say: Say, figures: Record<string, number>): Promise<boolean> {
  const host = await startNginx(dist);
  let remote: Proc | null = null;
  try {
    remote = await startServer(host.url);
    // both warm: index pages and series directories verified and cached, connections to nginx open
    await runWrk(local.url, seconds, script);
    await runWrk(remote.url, seconds, script);
    const near = await runWrk(local.url, seconds, script);
    const far = await runWrk(remote.url, seconds, script);
    const ratio = far.rps / near.rps;
    Object.assign(figures, { remote_point_series_rps: far.rps, remote_point_series_p99_ms: far.p99Ms, remote_point_series_ratio: ratio });
    say();
    say(`make serve DIST=<url> (nginx over the same dist, on this machine) vs DIST=<folder>: point series, another cell and period each request`);
    say(`  ${"server".padEnd(30)} ${"req/s".padStart(8)} ${"p99 ms".padStart(7)}`);
    say(`  ${"over the folder".padEnd(30)} ${fmt(near.rps).padStart(8)} ${fmt(near.p99Ms, 1).padStart(7)}`);
    say(`  ${"over nginx (range requests)".padEnd(30)} ${fmt(far.rps).padStart(8)} ${fmt(far.p99Ms, 1).padStart(7)}   ratio ${fmt(ratio, 2)} (goal >= 0.5)`);
    const errors = near.errors + far.errors;
    if (errors > 0) say(`  !! ${errors} errors`);
    return ratio >= 0.5 && errors === 0;
  } finally {
    await remote?.stop();
    await host.stop();
  }
}
