// Whether a folder's lock reaches every host that can write there (docs/operating.md "What the lock guarantees"): a
// local disk's and a locking network filesystem's do; NFS mounted without locking, SMB mounted nobrl, FUSE, 9p and
// virtiofs keep flock(2) on this host, so two hosts' writers would both take it.

import { readFile, realpath } from "node:fs/promises";
import { release } from "node:os";

/** A line of /proc/self/mountinfo: where a filesystem is mounted, its type and every option (mount and superblock). */
export interface Mount {
  mountPoint: string;
  fsType: string;
  options: string[];
}

/**
 * `disk`: a filesystem of this machine (every writer is on this host, or in one of its containers); `server`: a
 * network filesystem whose server keeps the locks (every client sees them); `host-only`: a filesystem other
 * hosts may write while its locks stay on this one, with `why` and what to do.
 */
export type LockReach = { reach: "disk" | "server" } | { reach: "host-only"; why: string };

/** mountinfo escapes space, tab, newline and backslash in paths as three octal digits. */
function unescapeMountPath(text: string): string {
  return text.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** The mounts of /proc/self/mountinfo (proc(5)): fields 5 and 6, then after " - " the type and superblock options. */
export function parseMountInfo(text: string): Mount[] {
  const mounts: Mount[] = [];
  for (const line of text.split("\n")) {
    const [left, right] = line.split(" - ");
    if (!right) continue;
    const fields = left.split(" ");
    const [fsType, , superOptions = ""] = right.split(" ");
    mounts.push({ mountPoint: unescapeMountPath(fields[4]), fsType, options: [...fields[5].split(","), ...superOptions.split(",")] });
  }
  return mounts;
}

/** The mount a real path lies on: the longest mount point above it, the last mounted when several share it. */
export function findMount(mounts: Mount[], path: string): Mount | null {
  let found: Mount | null = null;
  for (const m of mounts) {
    const above = m.mountPoint === "/" || path === m.mountPoint || path.startsWith(`${m.mountPoint}/`);
    if (above && (!found || m.mountPoint.length >= found.mountPoint.length)) found = m;
  }
  return found;
}

/** Whether a kernel release string ("6.1.0-18-amd64") is at least major.minor. */
function isKernelAtLeast(kernel: string, major: number, minor: number): boolean {
  const [a, b] = kernel.split(/[.-]/).map(Number);
  return a > major || (a === major && b >= minor);
}

/** How far flock(2) on this mount reaches (flock(2) NOTES: NFS since Linux 2.6.12, SMB since 5.5). */
export function judgeMount(mount: Mount, kernel: string): LockReach {
  const { fsType, options } = mount;
  const localLock = options.find((o) => o.startsWith("local_lock="))?.slice("local_lock=".length);
  if (fsType === "nfs" || fsType === "nfs4") {
    if (options.includes("nolock") || localLock === "flock" || localLock === "all") {
      return { reach: "host-only", why: `this NFS mount keeps file locks on this host (${options.includes("nolock") ? "nolock" : `local_lock=${localLock}`}); mount it with locking (local_lock=none, the default)` };
    }
    return { reach: "server" };
  }
  if (fsType === "cifs" || fsType === "smb3") {
    if (options.includes("nobrl")) return { reach: "host-only", why: "this SMB mount keeps file locks on this host (nobrl); mount it without nobrl" };
    if (!isKernelAtLeast(kernel, 5, 5)) return { reach: "host-only", why: `Linux ${kernel} keeps flock on SMB mounts on this host (5.5 and later send it to the server)` };
    return { reach: "server" };
  }
  if (fsType === "fuse" || fsType.startsWith("fuse.") || fsType === "9p" || fsType === "virtiofs") {
    return { reach: "host-only", why: `a ${fsType} filesystem keeps flock on this host unless it implements locking itself, which cannot be told from here` };
  }
  return { reach: "disk" };
}

/**
 * How far a lock in `folder` reaches, and the mount it lies on; null where that cannot be told (Linux only: elsewhere
 * there is no mountinfo to read).
 */
export async function findLockReach(folder: string): Promise<{ mountPoint: string; judged: LockReach } | null> {
  const text = await readFile("/proc/self/mountinfo", "utf8").catch(() => null);
  if (text === null) return null;
  const path = await realpath(folder).catch(() => null); // a missing folder: the lock file's open says so
  const mount = path === null ? null : findMount(parseMountInfo(text), path);
  return mount && { mountPoint: mount.mountPoint, judged: judgeMount(mount, release()) };
}
