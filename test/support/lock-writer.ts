// A dist writer in a process of its own, for test/pipeline/lock.test.ts: holds the lock until SIGTERM, tries it once,
// takes it in rounds noting when it enters and leaves, or publishes. One JSON line per event on stdout.
//   node --import tsx test/support/lock-writer.ts hold <dist>
//   node --import tsx test/support/lock-writer.ts try <dist>
//   node --import tsx test/support/lock-writer.ts rounds <dist> <rounds> <log file> <token>
//   node --import tsx test/support/lock-writer.ts publish <sources> <dist> <wait seconds>

import { appendFileSync } from "node:fs";
import { lockDist } from "../../pipeline/store/lock.js";
import { publish } from "../../pipeline/publish/publish.js";

/** Milliseconds since the epoch, to the microsecond: events of several processes on one machine are ordered by it. */
const now = () => performance.timeOrigin + performance.now();
const emit = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify({ ...event, pid: process.pid, at: now() })}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function hold(dist: string): Promise<void> {
  const release = await lockDist(dist, "publish");
  // a handler, so that SIGTERM reaches a holder that is PID 1 of its own namespace
  process.on("SIGTERM", () => void release().then(() => (emit({ event: "released" }), process.exit(0))));
  emit({ event: "locked" });
  setInterval(() => {}, 1 << 30);
}

async function tryOnce(dist: string): Promise<void> {
  try {
    await (await lockDist(dist, "publish"))();
    emit({ event: "locked" });
  } catch (err) {
    emit({ event: "refused", message: (err as Error).message });
  }
}

async function rounds(dist: string, count: number, log: string, token: string): Promise<void> {
  emit({ event: "started", token });
  for (let i = 0; i < count; i++) {
    const release = await lockDist(dist, "prune", undefined, { waitSec: 120 });
    appendFileSync(log, `enter ${token}\n`);
    await sleep(2 + Math.random() * 10);
    appendFileSync(log, `leave ${token}\n`);
    await release();
    await sleep(Math.random() * 3);
  }
  emit({ event: "done" });
}

async function publishInto(sources: string, dist: string, waitSec: number): Promise<void> {
  const summary = await publish({
    sources,
    dist,
    observations: false,
    explorer: false,
    publishedAt: "2024-06-01T00:00:00Z",
    log: (line) => emit({ event: "log", line }),
    onStage: (stage) => emit({ event: "stage", stage }),
    lock: { waitSec },
  });
  emit({ event: "done", added: summary.added.map((d) => d.id) });
}

const [mode, ...args] = process.argv.slice(2);
const run: Record<string, () => Promise<void>> = {
  hold: () => hold(args[0]),
  try: () => tryOnce(args[0]),
  rounds: () => rounds(args[0], Number(args[1]), args[2], args[3]),
  publish: () => publishInto(args[0], args[1], Number(args[2])),
};
run[mode]().catch((err) => {
  emit({ event: "error", message: String((err as Error)?.message ?? err) });
  process.exit(1);
});
