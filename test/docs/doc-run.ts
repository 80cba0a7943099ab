// Running the docs' commands as a reader would: in a checkout of this repository's own (so `dist`, `.cache/silo` and
// what make writes land in a temp folder), a block by bash, a long-running command (a server) until it answers.

import { type ChildProcess, execFile, spawn } from "node:child_process";
import { cpSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { REPO } from "./doc-blocks.js";
export { freePort } from "../support/nginx.js";

/** What a checkout needs to run make's targets: the code (copied), the packages and the build (linked); never dist or .cache. */
const CHECKOUT_COPIES = ["Makefile", "package.json", "package-lock.json", "api", "client", "explorer", "format", "pipeline", "schemas", "server", "sources"];
const CHECKOUT_LINKS = ["node_modules", "build"];

/**
 * A folder standing for the reader's checkout: a copy of this repository's code (its times kept, so make sees the
 * linked build as up to date and runs what `make install` built) beside links to its packages and build. The code is
 * copied, not linked: a script that compares import.meta.url with process.argv[1] would not know itself through a link.
 */
export function makeCheckout(dir: string): string {
  mkdirSync(dir, { recursive: true });
  for (const entry of CHECKOUT_COPIES) cpSync(join(REPO, entry), join(dir, entry), { recursive: true, preserveTimestamps: true });
  for (const entry of CHECKOUT_LINKS) symlinkSync(join(REPO, entry), join(dir, entry));
  return dir;
}

/**
 * The environment of a reader's shell: this process's, without what `make test` and uvu add to it (make's
 * MAKELEVEL and MAKEFLAGS would make a nested make say which folder it enters; FORCE_COLOR would colour what node prints).
 */
export const READER_ENV: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !["MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES", "FORCE_COLOR"].includes(name)),
);

export interface Ran {
  stdout: string;
  stderr: string;
}

/** A block run by bash with -e and pipefail: any failing command fails it, with what it printed. */
export async function runBash(script: string, options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<Ran> {
  try {
    return await promisify(execFile)("bash", ["-e", "-o", "pipefail", "-c", script], { cwd: options.cwd, env: options.env ?? READER_ENV, timeout: options.timeoutMs ?? 120_000, maxBuffer: 64 << 20, encoding: "utf8" });
  } catch (err) {
    const e = err as Error & Partial<Ran>;
    throw new Error(`${e.message}\nstdout: ${e.stdout?.slice(-3000)}\nstderr: ${e.stderr?.slice(-3000)}`);
  }
}


export interface Running {
  child: ChildProcess;
  output: () => string;
  /** sends the signal to the command's process group (make and the server it starts), waits for the exit: its code */
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

/** A long-running command (a server) in a process group of its own, once `url` answers 200; what it printed so far on failure. */
export async function startUntilAnswered(argv: string[], url: string, options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<Running> {
  const child = spawn(argv[0], argv.slice(1), { cwd: options.cwd, env: options.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  // its own process group outlives this process unless ended: a failed test must not leave a server behind
  const orphan = () => child.exitCode === null && child.signalCode === null && process.kill(-child.pid!, "SIGKILL");
  process.once("exit", orphan);
  void exited.then(() => process.off("exit", orphan));
  const running: Running = {
    child,
    output: () => output,
    stop: async (signal = "SIGTERM") => {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, signal);
      return exited;
    },
  };
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${argv.join(" ")} exited ${child.exitCode} before ${url} answered:\n${output}`);
    const status = await fetch(url).then((r) => r.status, () => 0);
    if (status === 200) return running;
    await new Promise((r) => setTimeout(r, 100));
  }
  await running.stop("SIGKILL");
  throw new Error(`${url} did not answer 200 within the timeout:\n${output}`);
}
