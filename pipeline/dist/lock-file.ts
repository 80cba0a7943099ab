// The dist's lock file, held with flock(2): the kernel lets go of it when its holder's last descriptor closes, so a
// killed, zombie or paused-then-killed writer frees it at once and no PID is ever read to guess who is alive (a
// reused PID, or one from another PID namespace, misleads). While held, the file describes its holder.

import { close, constants, ftruncate, open, readFile, readlinkSync, write } from "node:fs";
import { hostname } from "node:os";
import { promisify } from "node:util";
import * as fsExt from "fs-ext";
import { PublishError } from "../errors.js";

/** The lock of every writer of a dist (publish, prune, sync); kept between writers, empty while none holds it. */
export const LOCK_FILE = ".publish.lock";
/** How often a waiting writer tries again: the wait after a holder lets go is at most this. */
const POLL_MS = 50;

/** Who holds a dist's lock, as the holder wrote it into the lock file. */
export interface Holder {
  writer: string;
  host: string;
  pid: number;
  /** the holder's PID namespace (`pid:[4026531836]`): a PID means nothing outside it */
  pidNamespace: string | null;
  command: string;
  since: string;
}

export interface LockWait {
  /** seconds to wait for another writer before refusing (0: try once) */
  waitSec: number;
  /** told that this writer waits, and when it took the lock */
  onWait: (line: string) => void;
}

function ownPidNamespace(): string | null {
  try {
    return readlinkSync("/proc/self/ns/pid");
  } catch {
    return null;
  }
}

function describeSelf(writer: string): Holder {
  const command = process.argv.map((a) => (/[\s"']/.test(a) ? JSON.stringify(a) : a)).join(" ");
  return { writer, host: hostname(), pid: process.pid, pidNamespace: ownPidNamespace(), command: command.slice(0, 300), since: new Date().toISOString() };
}

/** The holder a lock file describes; null when empty, unreadable (SMB refuses reads of a locked file) or not ours. */
export async function readHolder(file: string): Promise<Holder | null> {
  const text = await promisify(readFile)(file, "utf8").catch(() => "");
  try {
    const h = JSON.parse(text) as Holder;
    return typeof h.writer === "string" && typeof h.host === "string" && Number.isInteger(h.pid) && typeof h.since === "string" ? h : null;
  } catch {
    return null;
  }
}

/** "another publish (pid 7709 on host web-1, since ...: <command>)", or what can be said without a description. */
export function describeHolder(holder: Holder | null): string {
  if (!holder) return "another publish, prune or sync (it has not described itself: its description is being written, or cannot be read here)";
  const namespace = holder.host === hostname() && holder.pidNamespace && holder.pidNamespace !== ownPidNamespace() ? " in another PID namespace" : "";
  return `another ${holder.writer} (pid ${holder.pid}${namespace} on host ${holder.host}, since ${holder.since}: ${holder.command})`;
}

/** One try at the exclusive lock: false while another open file holds it, whichever process or namespace. */
function tryLock(file: string, fd: number): Promise<boolean> {
  return new Promise((resolve, reject) =>
    fsExt.flock(fd, "exnb", (err) => {
      if (!err) resolve(true);
      else if (err.code === "EAGAIN" || err.code === "EWOULDBLOCK") resolve(false);
      else reject(new PublishError(file, "lock", `this folder offers no file lock (flock: ${err.code ?? err.message}), and writers would race; publish into a local folder and copy it there`));
    }),
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits for the lock up to `wait.waitSec`, saying so once; refuses naming the holder when the wait runs out. */
async function waitForLock(file: string, fd: number, writer: string, wait: LockWait): Promise<void> {
  const started = Date.now();
  let told = false;
  while (!(await tryLock(file, fd))) {
    const left = wait.waitSec * 1000 - (Date.now() - started);
    if (left <= 0) {
      throw new PublishError(
        file,
        "lock",
        `${describeHolder(await readHolder(file))} is writing this dist; waited ${wait.waitSec} s for it (LOCK_WAIT). ` +
          `Run make ${writer} again once it has finished, or give LOCK_WAIT more seconds`,
      );
    }
    if (!told) wait.onWait(`waiting for the dist lock: ${describeHolder(await readHolder(file))} is writing this dist; waiting up to ${wait.waitSec} s (LOCK_WAIT)`);
    told = true;
    await sleep(Math.min(POLL_MS, left));
  }
  if (told) wait.onWait(`took the dist lock after ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/**
 * Takes the lock file `file` for `writer` (waiting as `wait` allows), then writes who holds it; returns its release.
 * The file stays: removing it would let a writer that opened it before the removal lock a file no longer there.
 */
export async function takeLockFile(file: string, writer: string, wait: LockWait): Promise<() => Promise<void>> {
  const fd = await promisify(open)(file, constants.O_RDWR | constants.O_CREAT, 0o644);
  const clear = () => promisify(ftruncate)(fd, 0);
  try {
    await waitForLock(file, fd, writer, wait);
    try {
      await clear();
      await promisify(write)(fd, `${JSON.stringify(describeSelf(writer))}\n`, 0, "utf8");
    } catch (err) {
      await clear().catch(() => undefined); // a description cut short (a full disk) is no description
      throw err;
    }
  } catch (err) {
    await promisify(close)(fd);
    throw err;
  }
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    await clear().catch(() => undefined);
    await promisify(close)(fd); // the lock goes with the descriptor
  };
}
