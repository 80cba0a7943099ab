// format/local.ts's LocalStorage: ranges read with FileHandle.read on descriptors kept open for the most recent
// files; a descriptor evicted while reads use it closes after them; forget reopens; close, or a while without
// reads, lets every one go; "sync" reads ranges through them on the calling thread; "sync-each-open" reads on the
// calling thread, a descriptor open only during its range.

import { mkdtempSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { mkdir, rename, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { LocalStorage } from "../../format/local.js";
import { StorageError } from "../../format/storage.js";

const WORK = mkdtempSync(join(tmpdir(), "local-storage-test-"));
process.on("exit", () => rmSync(WORK, { recursive: true, force: true }));

/** 4,096 bytes that differ per file and per position. */
const bytesOf = (n: number) => Uint8Array.from({ length: 4096 }, (_, i) => (i * 31 + n * 7) & 0xff);
/** This process's descriptors open on the test's files (others come and go: tsx's cache, the runner's pipes). */
function openDescriptors(): number {
  const targets = readdirSync("/proc/self/fd").map((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      return ""; // closed since the listing
    }
  });
  return targets.filter((t) => t.startsWith(WORK)).length;
}

const local = suite("local storage");

local.before(async () => {
  await mkdir(join(WORK, "pieces"), { recursive: true });
  for (let n = 0; n < 6; n++) await writeFile(join(WORK, "pieces", `${n}.day`), bytesOf(n));
});

// the kept descriptors behave the same whether ranges are read on the threadpool or on the calling thread
for (const mode of ["threadpool", "sync"] as const) {
  local(`local, ${mode} - concurrent ranges of more files than descriptors kept: exact bytes, none read through a closed descriptor`, async () => {
    const before = openDescriptors();
    const storage = new LocalStorage(WORK, { maxOpenFiles: 2, reads: mode });
    const reads = Array.from({ length: 120 }, (_, k) => ({ n: k % 6, offset: (k * 97) % 4000, length: 1 + ((k * 13) % 96) }));
    const got = await Promise.all(reads.map(({ n, offset, length }) => storage.read(`pieces/${n}.day`, offset, length)));
    reads.forEach(({ n, offset, length }, k) => assert.equal(got[k], bytesOf(n).subarray(offset, offset + length), `read ${k}`));
    assert.ok(openDescriptors() <= before + 2, `${openDescriptors() - before} descriptors open, at most 2 kept`);
    await storage.close();
    assert.is(openDescriptors(), before);
  });

  local(`local, ${mode} - a range past the end is the bytes there are; whole files by readFile`, async () => {
    const storage = new LocalStorage(WORK, { reads: mode });
    assert.equal(await storage.read("pieces/1.day", 4090, 100), bytesOf(1).subarray(4090));
    assert.ok(Buffer.from(await storage.read("pieces/2.day")).equals(bytesOf(2)));
    await storage.close();
  });

  local(`local, ${mode} - a missing file is a StorageError marked missing, for a range and for a whole file`, async () => {
    const storage = new LocalStorage(WORK, { reads: mode });
    for (const read of [() => storage.read("pieces/9.day", 0, 10), () => storage.read("pieces/9.day")]) {
      const err = await read().then(
        () => null,
        (e: unknown) => e,
      );
      assert.instance(err, StorageError);
      assert.equal([(err as StorageError).missing, (err as StorageError).message], [true, `${join(WORK, "pieces/9.day")}: missing`]);
    }
    await storage.close();
  });

  local(`local, ${mode} - forget: a file replaced under its name is read afresh (its old descriptor still reads the old bytes)`, async () => {
    const storage = new LocalStorage(WORK, { reads: mode });
    assert.equal(await storage.read("pieces/3.day", 0, 8), bytesOf(3).subarray(0, 8));
    await writeFile(join(WORK, "restored.tmp"), bytesOf(4));
    await rename(join(WORK, "restored.tmp"), join(WORK, "pieces/3.day"));
    assert.equal(await storage.read("pieces/3.day", 0, 8), bytesOf(3).subarray(0, 8));
    storage.forget("pieces/3.day");
    assert.equal(await storage.read("pieces/3.day", 0, 8), bytesOf(4).subarray(0, 8));
    await storage.close();
    await writeFile(join(WORK, "pieces/3.day"), bytesOf(3)); // as the suite wrote it, for the tests after this one
  });
}

local("local - sync-each-open: the same bytes on the calling thread, no descriptor left open, a missing file marked missing", async () => {
  const before = openDescriptors();
  const storage = new LocalStorage(WORK, { reads: "sync-each-open" });
  for (let n = 0; n < 6; n++) {
    assert.equal(await storage.read(`pieces/${n}.day`, 100 * n, 700), bytesOf(n).subarray(100 * n, 100 * n + 700));
    assert.equal(await storage.read(`pieces/${n}.day`), Buffer.from(bytesOf(n)));
  }
  assert.equal(await storage.read("pieces/1.day", 4000, 500), bytesOf(1).subarray(4000));
  assert.is(openDescriptors(), before, "each range's descriptor is closed once it is read");
  for (const read of [() => storage.read("pieces/none.day", 0, 10), () => storage.read("pieces/none.day")]) {
    const err = await read().then(() => null, (e: unknown) => e);
    assert.ok(err instanceof StorageError && err.missing, String(err));
  }
});

local("local - a storage left open closes its descriptors once no range was read for idleCloseMs (never sooner), and reads again after", async () => {
  const before = openDescriptors();
  const storage = new LocalStorage(WORK, { idleCloseMs: 1000 });
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  let lastRead = 0;
  // reads every 100 ms for 1.5 s: each starts the wait again, so the three stay open throughout
  for (let i = 0; i < 15; i++) {
    if (i > 0) assert.is(openDescriptors(), before + 3, `open at read ${i + 1}`);
    lastRead = performance.now(); // the wait starts as a read begins
    await Promise.all([0, 1, 2].map((n) => storage.read(`pieces/${n}.day`, i, 4)));
    await sleep(100);
  }
  while (openDescriptors() > before && performance.now() - lastRead < 5000) await sleep(10);
  const closedAfterMs = performance.now() - lastRead;
  assert.ok(closedAfterMs >= 1000 && closedAfterMs < 5000, `closed ${closedAfterMs} ms after the last read`);
  assert.is(openDescriptors(), before);
  assert.equal(await storage.read("pieces/1.day", 0, 4), bytesOf(1).subarray(0, 4));
  await storage.close();
  assert.is(openDescriptors(), before);
});

local.run();
