// A folder's lock file (a dist's, a sources folder's), held with flock(2): the kernel lets go of it when its holder's
// last descriptor closes, so a killed, zombie or paused-then-killed writer frees it at once and no PID is ever read to
// guess who is alive (a reused PID, or one from another PID namespace, misleads). While held, the file describes its
// holder. Its messages name the folder by the noun of what it locks, so each kind of folder reads right.

import { close, constants, ftruncate, open, readFile, readlinkSync, write } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import * as fsExt from "fs-ext";
import { LockError } from "../errors.js";
import { findLockReach } from "./lock-reach.js";

/** A kind of folder's lock: its file, kept between writers (empty while none holds it), and the words of its messages. */
export interface FolderLock {
  /** the lock file's name in the folder */
  name: string;
  /** what the folder is called: "the dist lock", "is writing this dist" */
  noun: string;
  /** what to do where the folder offers no lock that reaches every writer: "publish into a local folder and copy it there" */
  elsewhere: string;
}
/** How often a waiting writer tries again: the wait after a holder lets go is at most this. */
const POLL_MS = 50;

/** Who holds a folder's lock, as the holder wrote it into the lock file. */
interface Holder {
  writer: string;
  host: string;
  pid: number;
  /** the holder's PID namespace (`pid:[4026531836]`): a PID means nothing outside it */
  pidNamespace: string | null;
  command: string;
  since: string;
}

/** How a writer takes a folder's lock: how long it waits for another, and whether a lock of this host alone will do. */
export interface LockOptions {
  /** seconds to wait for another writer before refusing; 0 (when not given) refuses at once: the commands give LOCK_WAIT (pipeline/defaults.ts) */
  waitSec?: number;
  /** take a lock that holds on this host only: this host is the only writer of a folder whose locks stay local */
  localLock?: boolean;
  /** told that this writer waits for another, and when it took the lock */
  log?: (line: string) => void;
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
async function readHolder(file: string): Promise<Holder | null> {
  const text = await promisify(readFile)(file, "utf8").catch(() => "");
  try {
    const h = JSON.parse(text) as Holder;
    return typeof h.writer === "string" && typeof h.host === "string" && Number.isInteger(h.pid) && typeof h.since === "string" ? h : null;
  } catch {
    return null;
  }
}

/** "another publish (pid 7709 on host web-1, since ...: <command>)", or what can be said without a description. */
function describeHolder(holder: Holder | null): string {
  if (!holder) return "another writer (it has not described itself: its description is being written, or cannot be read here)";
  const namespace = holder.host === hostname() && holder.pidNamespace && holder.pidNamespace !== ownPidNamespace() ? " in another PID namespace" : "";
  return `another ${holder.writer} (pid ${holder.pid}${namespace} on host ${holder.host}, since ${holder.since}: ${holder.command})`;
}

/** One try at the exclusive lock: false while another open file holds it, whichever process or namespace. */
function tryLock(file: string, fd: number, lock: FolderLock): Promise<boolean> {
  return new Promise((resolve, reject) =>
    fsExt.flock(fd, "exnb", (err) => {
      if (!err) resolve(true);
      else if (err.code === "EAGAIN" || err.code === "EWOULDBLOCK") resolve(false);
      else reject(new LockError(file, "lock", `this folder offers no file lock (flock: ${err.code ?? err.message}), and writers would race; ${lock.elsewhere}`));
    }),
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits for the lock up to `options.waitSec` (none: try once), saying so once; refuses naming the holder when the wait runs out. */
async function waitForLock(file: string, fd: number, writer: string, lock: FolderLock, options: LockOptions): Promise<void> {
  const { noun } = lock;
  const waitSec = options.waitSec ?? 0;
  const started = Date.now();
  let told = false;
  while (!(await tryLock(file, fd, lock))) {
    const left = waitSec * 1000 - (Date.now() - started);
    if (left <= 0) {
      throw new LockError(
        file,
        "lock",
        `${describeHolder(await readHolder(file))} is writing this ${noun}; waited ${waitSec} s for it (LOCK_WAIT). ` +
          `Run make ${writer} again once it has finished, or give LOCK_WAIT more seconds`,
      );
    }
    if (!told) options.log?.(`waiting for the ${noun} lock: ${describeHolder(await readHolder(file))} is writing this ${noun}; waiting up to ${waitSec} s (LOCK_WAIT)`);
    told = true;
    await sleep(Math.min(POLL_MS, left));
  }
  if (told) options.log?.(`took the ${noun} lock after ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/**
 * Refuses a folder whose lock would hold on this host only, unless `localLock` says this host is its only writer
 * (lock-reach.ts; where the reach cannot be told, the lock is taken as it comes).
 */
async function refuseHostOnly(folder: string, file: string, lock: FolderLock, localLock: boolean): Promise<void> {
  const found = await findLockReach(folder);
  if (!found || found.judged.reach !== "host-only" || localLock) return;
  const elsewhere = lock.elsewhere.charAt(0).toUpperCase() + lock.elsewhere.slice(1);
  throw new LockError(
    file,
    "lock",
    `the ${lock.noun} lock cannot keep writers on other hosts out of ${found.mountPoint}: ${found.judged.why}. ${elsewhere}, ` +
      "or, when this host (with its containers) is the only writer of this folder, run again with LOCAL_LOCK=1",
  );
}

/**
 * Takes `folder`'s lock for `writer`, where it reaches every writer (or LOCAL_LOCK says this host is the only one),
 * waiting as `options` allows; then writes who holds it, and returns its release. The file stays: removing it would
 * let a writer that opened it before the removal lock a file no longer there.
 */
export async function lockFolder(folder: string, lock: FolderLock, writer: string, options: LockOptions = {}): Promise<() => Promise<void>> {
  const file = join(folder, lock.name);
  await refuseHostOnly(folder, file, lock, options.localLock ?? false);
  const fd = await promisify(open)(file, constants.O_RDWR | constants.O_CREAT, 0o644);
  const clear = () => promisify(ftruncate)(fd, 0);
  try {
    await waitForLock(file, fd, writer, lock, options);
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
