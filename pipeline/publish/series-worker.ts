// Worker thread of the series stage: encodes one strip of a large span (pipeline/publish/series-strip.ts), reading the
// day pieces of its dist itself, and hands back the chunks' bytes without copying them.

import { parentPort } from "node:worker_threads";
import { Archive } from "../../format/archive.js";
import type { Window } from "../../format/grid.js";
import { LocalStorage, nodePlatform } from "../../format/local.js";
import { GroupLattice } from "../../format/series.js";
import type { DayEntry } from "../../format/version-index.js";
import { encodeStrip } from "./series-strip.js";

export interface StripTask {
  dist: string;
  days: DayEntry[];
  window: Window;
  chunkSide: number;
  strip: Window;
}

const archives = new Map<string, Archive>();

parentPort!.on("message", (task: StripTask) => {
  let archive = archives.get(task.dist);
  // Reads on this thread, a descriptor open only while its range is read (a publish may run under an open-file limit
  // of 256, and a strip reads every day piece of its span in turn). A strip reads each block once (strips are whole
  // 64-row blocks): blocks are not cached, the day headers are (every strip reads all of them).
  if (!archive) archives.set(task.dist, (archive = new Archive(new LocalStorage(task.dist, { reads: "sync-each-open" }), nodePlatform, { cacheBytes: 16 << 20, blockCacheBytes: 0 })));
  encodeStrip(task.days, new GroupLattice(task.window, task.chunkSide), task.strip, archive).then(
    (result) => parentPort!.postMessage(result, [result.chunks.buffer as ArrayBuffer]),
    (err) => parentPort!.postMessage({ error: `series strip ${task.strip.join(",")}: ${(err as Error)?.message ?? String(err)}` }),
  );
});
