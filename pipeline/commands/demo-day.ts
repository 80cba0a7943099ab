// The daily routine on the demo (make demo-day): the next generated day of every demo variable, added to the
// demo's sources folder and published onto the dist as a maintainer's daily publish would be.

import { dateToDayNumber, dayNumberToDate } from "../../format/dates.js";
import { writeDemo } from "../ingest/demo.js";
import { DemoError } from "../errors.js";
import { readPublished } from "../store/catalog.js";
import type { LockOptions } from "../files/lock-file.js";
import type { Progress } from "../progress.js";
import { type PublishSummary, publish } from "../publish/publish.js";

/** The day after the newest date a generated demo version of this dist holds. */
async function findNextDemoDay(dist: string): Promise<string> {
  const published = await readPublished(dist);
  try {
    const ends = (published?.pointer.candidates ?? []).flatMap((c) => (c.record.metadata.synthetic === true ? [c.coverage.last] : []));
    if (ends.length === 0) throw new DemoError(dist, "demo", "holds no generated demo version to add a day to; run make demo (or make publish) first");
    return dayNumberToDate(dateToDayNumber(ends.sort().pop()!) + 1);
  } finally {
    await published?.archive.storage.close?.();
  }
}

/** Generates the next demo day of every variable into `sources` and publishes the grown folder into `dist`. */
export async function publishNextDemoDay(sources: string, dist: string, progress: Progress, lock?: LockOptions): Promise<{ date: string; summary: PublishSummary }> {
  const date = await findNextDemoDay(dist);
  progress.line(`generating ${date}, the next demo day of every variable, into ${sources}`);
  await writeDemo(sources, (line) => progress.status(line), date);
  return { date, summary: await publish({ sources, dist, progress, lock }) };
}
