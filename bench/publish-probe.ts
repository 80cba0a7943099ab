// A publish in its own process, for the bench: prints one JSON line with its wall time, peak memory and summary.
// usage: tsx bench/publish-probe.ts <sources> <dist> [--extend] [--rehash]   (PUBLISH_THREADS=N: its threads)

import { publish } from "../pipeline/publish/publish.js";

const [sources, dist, ...flags] = process.argv.slice(2);
const started = performance.now();
const summary = await publish({ sources, dist, observations: false, extend: flags.includes("--extend"), rehash: flags.includes("--rehash"), threads: process.env.PUBLISH_THREADS ? Number(process.env.PUBLISH_THREADS) : undefined, log: () => {} });
console.log(
  JSON.stringify({
    ms: performance.now() - started,
    maxRssMb: process.resourceUsage().maxRSS / 1024,
    // every thread's CPU time (the worker threads' too): steadier than wall time on a shared machine
    cpuMs: (process.resourceUsage().userCPUTime + process.resourceUsage().systemCPUTime) / 1000,
    days: summary.days,
    decoded: summary.decoded,
    reused: summary.reused,
    filesRead: summary.filesRead,
    objectsWritten: summary.objectsWritten,
    bytesWritten: summary.bytesWritten,
    dayBytesWritten: summary.dayBytesWritten,
    seriesBuilt: summary.series.built,
    seriesBytesWritten: summary.series.bytesWritten,
    id: summary.added[0]?.id ?? null,
    added: summary.added.length,
  }),
);
