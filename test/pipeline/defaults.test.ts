// Each default is stated once, in the code: make help prints every target and the defaults pipeline/defaults.ts and
// server/settings.ts hold, and every default README and docs/ state (a settings table's row, `VAR` (default N), a
// command's [VAR=N]) is the code's.

import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { DEFAULTS, MAKE_DEFAULTS } from "../../pipeline/defaults.js";
import { DEFAULT_LIMITS, SERVE_DEFAULTS, heapFlags, readServeConfig } from "../../server/settings.js";
import { listDocFiles, REPO } from "../docs/doc-blocks.js";
import { READER_ENV } from "../docs/doc-run.js";
import { findVariable } from "../../format/variables.js";

/**
 * Every default a reader may meet in the docs, as the code has it: a make variable's (pipeline/defaults.ts) or a
 * server setting's (server/settings.ts); a list for a variable whose default depends on where it is used.
 */
const CODE: Record<string, string[]> = {
  ...Object.fromEntries([...new Set(MAKE_DEFAULTS.map((d) => d.variable))].map((v) => [v, MAKE_DEFAULTS.filter((d) => d.variable === v).map((d) => d.value)])),
  PORT: [String(SERVE_DEFAULTS.port)],
  HOST: [SERVE_DEFAULTS.host],
  CACHE_MB: [String(SERVE_DEFAULTS.cacheMb)],
  READS: [SERVE_DEFAULTS.reads],
  SERVICE_ENVIRONMENT: [SERVE_DEFAULTS.environment],
  CATALOG_POLL_MS: [String(SERVE_DEFAULTS.catalogPollMs.folder), String(SERVE_DEFAULTS.catalogPollMs.url)],
  WORK_QUEUE: [String(DEFAULT_LIMITS.queue)],
  WORK_QUEUE_PER_CLIENT: [String(DEFAULT_LIMITS.queuePerClient)],
  WORK_QUEUE_MS: [String(DEFAULT_LIMITS.queueMs)],
  RETRY_AFTER_S: [String(DEFAULT_LIMITS.retryAfterS)],
  SHED_PAUSE_MS: [String(DEFAULT_LIMITS.shedPauseMs)],
  DRAIN_TIMEOUT_MS: [String(DEFAULT_LIMITS.drainMs)],
  DRAIN_WINDOW_MS: [String(DEFAULT_LIMITS.drainWindowMs)],
  HEADERS_TIMEOUT_MS: [String(DEFAULT_LIMITS.headersMs)],
  BODY_TIMEOUT_MS: [String(DEFAULT_LIMITS.bodyMs)],
  IDLE_TIMEOUT_MS: [String(DEFAULT_LIMITS.idleMs)],
  SEND_TIMEOUT_MS: [String(DEFAULT_LIMITS.sendMs)],
  SEND_HELD_MB: [String(DEFAULT_LIMITS.sendBytes / 2 ** 20)],
};
/** make mirror's port: the mirror's own default, in client/mirror-server.ts (it exports none, so its source is read). */
const MIRROR_PORT = /readFlag\(args, "--port"\) \?\? (\d+)/.exec(readFileSync(join(REPO, "client", "mirror-server.ts"), "utf8"))![1];
CODE["PORT (make mirror)"] = [MIRROR_PORT];
/** A default the docs say in words: the code's value behind each is asserted below. */
const IN_WORDS: Record<string, string> = { WORK_ACTIVE: "the number of cores", CLIENT_HEADER: "none", LOG: "on" };

interface Mention {
  where: string;
  variable: string;
  /** the values the text gives, in its order */
  values: string[];
}

const line = (text: string, at: number) => text.slice(0, at).split("\n").length;

/** `N s` of a *_MS setting (`DRAIN_TIMEOUT_MS`, 10 s) in milliseconds; otherwise the text without backticks. */
function toValue(variable: string, text: string): string {
  const seconds = /^([\d.]+) s$/.exec(text.trim());
  return seconds && variable.endsWith("_MS") ? String(Number(seconds[1]) * 1000) : text.replaceAll("`", "").trim();
}

/** Every place a page states a default of a variable the code has one for. */
function findMentions(file: string): Mention[] {
  const text = readFileSync(join(REPO, file), "utf8");
  const known = (v: string) => v in CODE || v in IN_WORDS;
  const out: Mention[] = [];
  // a settings table's row: | `A`, `B` | `a`, `b` | ... (variables and their defaults, in the same order)
  for (const m of text.matchAll(/^\| ((?:`[A-Z_]+`(?:, )?)+) \| ([^|]+) \|/gm)) {
    const variables = [...m[1].matchAll(/`([A-Z_]+)`/g)].map((v) => v[1]);
    const values = variables.length > 1 ? m[2].split(/, /) : [m[2]];
    variables.forEach((variable, i) => {
      if (!known(variable)) return;
      const cell = variable in IN_WORDS ? values[i] : values[i].replace(/ \(a (folder|URL)\)/g, "");
      out.push({ where: `${file}:${line(text, m.index!)}`, variable, values: variable in IN_WORDS ? [cell.trim()] : [...cell.matchAll(/`([^`]+)`/g)].map((c) => c[1]) });
    });
  }
  // prose: `VAR` ... (default N ...), `VAR` (N s), (`VAR`, N s), VAR (default N) and `VAR=N` (the default)
  const prose = [/`([A-Z_]+)`[^`.()]{0,40}\((?:default )?(`?[\w.:/]+`?(?: s)?)[;,)]/g, /\(`([A-Z_]+)`, ([\d.]+ s)\)/g, /\b([A-Z][A-Z_]+) \(default ([\w.]+)\)/g];
  for (const m of prose.flatMap((pattern) => [...text.matchAll(pattern)])) {
    if (known(m[1]) && !(m[1] in IN_WORDS) && /\d|`/.test(m[2])) out.push({ where: `${file}:${line(text, m.index!)}`, variable: m[1], values: [toValue(m[1], m[2])] });
  }
  for (const m of text.matchAll(/`([A-Z_]+)=([^`\s]+)` \(the default\)/g)) if (known(m[1])) out.push({ where: `${file}:${line(text, m.index!)}`, variable: m[1], values: [m[2]] });
  // a command's synopsis: `make X [VAR=N]` (a placeholder such as [DIST=dir] or [KEEP_FILE=file] names no default)
  for (const command of text.matchAll(/`make ([a-z-]+)([^`]*)`/g)) {
    for (const m of command[2].matchAll(/\[([A-Z_]+)=([^\]\s]+)\]/g)) {
      const variable = command[1] === "mirror" && m[1] === "PORT" ? "PORT (make mirror)" : m[1];
      if (known(variable) && !/^(dir|file|n|url|\.\.\.)$/.test(m[2])) out.push({ where: `${file}:${line(text, command.index!)}`, variable, values: [m[2]] });
    }
  }
  return out;
}

const defaults = suite("defaults: stated once, in the code");

defaults("defaults - the docs state each default as the code has it, and every default is stated somewhere", () => {
  const mentions = listDocFiles().flatMap(findMentions);
  const wrong: string[] = [];
  for (const { where, variable, values } of mentions) {
    if (variable in IN_WORDS) {
      if (!values[0].startsWith(IN_WORDS[variable])) wrong.push(`${where}: ${variable} "${values[0]}", the code's is ${IN_WORDS[variable]}`);
      continue;
    }
    const code = CODE[variable];
    // a table row gives every value (the demo's and SILO's SOURCES, a folder's and a URL's poll); prose one of them
    const folder = (text: string) => text.replace(/\/$/, ""); // `.cache/demo/` is the folder .cache/demo
    const ok = values.length > 1 ? values.map(folder).join() === code.join() : code.includes(folder(values[0]));
    if (!ok) wrong.push(`${where}: ${variable} ${values.join(", ")}, the code's is ${code.join(", ")}`);
  }
  assert.equal(wrong, []);
  const stated = new Set(mentions.map((m) => m.variable));
  assert.equal([...Object.keys(CODE), ...Object.keys(IN_WORDS)].filter((v) => !stated.has(v)), [], "defaults no page states");
});

defaults("defaults - what the docs say in words is what the code does: a thread of work per core, no client header, the log on", () => {
  assert.is(DEFAULT_LIMITS.active, availableParallelism());
  assert.is(DEFAULT_LIMITS.clientHeader, null);
  assert.is(readServeConfig({}).log, true);
  // the code's own defaults reach the server and the heap make serve gives it
  const config = readServeConfig({});
  assert.equal([config.dist, config.port, config.host, config.cacheMb, config.catalogMs], [SERVE_DEFAULTS.dist, SERVE_DEFAULTS.port, SERVE_DEFAULTS.host, SERVE_DEFAULTS.cacheMb, SERVE_DEFAULTS.catalogPollMs.folder]);
  assert.equal(heapFlags({}), ["--max-semi-space-size=4", `--max-old-space-size=${64 + 2 * SERVE_DEFAULTS.cacheMb}`]);
  assert.equal(heapFlags({ CACHE_MB: "100" }), ["--max-semi-space-size=4", "--max-old-space-size=264"]);
  assert.is(config.reads, "sync");
  assert.is(readServeConfig({ READS: "threadpool" }).reads, "threadpool");
  assert.throws(() => readServeConfig({ READS: "async" }), /^READS=async is neither sync \(the page cache holds the dist\) nor threadpool \(a dist larger than memory\)$/);
  assert.is(DEFAULTS.dist, SERVE_DEFAULTS.dist, "the pipeline writes the dist the server serves");
});

defaults("defaults - make help lists every target, then each variable's default from the code", async () => {
  const makefile = readFileSync(join(REPO, "Makefile"), "utf8");
  const phony = /^\.PHONY: (.+)$/m.exec(makefile)![1].split(" ");
  const { stdout } = await promisify(execFile)("make", ["--no-print-directory", "help"], { cwd: REPO, env: READER_ENV });
  const listed = stdout.split("\n").map((l) => /^([a-z-]+) {2,}\S/.exec(l)?.[1]).filter(Boolean);
  assert.equal([...listed].sort(), [...phony].sort());
  const shown = new Map(stdout.split("\n").flatMap((l) => {
    const m = /^ {2}([A-Z_]+) +(.+)$/.exec(l);
    return m ? [[m[1], m[2]] as const] : [];
  }));
  for (const [variable, values] of Object.entries(CODE).filter(([v]) => shown.has(v))) for (const value of values) assert.ok(shown.get(variable)!.includes(value), `${variable}: ${shown.get(variable)}`);
  assert.equal([...shown.keys()], ["DIST", "SOURCES", "LOCK_WAIT", "KEEP_DAYS", "GRACE_HOURS", "DROP_VERSIONS", "PRUNE", "REVISION_DAYS", "PORT", "HOST", "CACHE_MB"]);
  assert.match(shown.get("REVISION_DAYS")!, `${findVariable("daily_rain")!.revisionDays} (daily_rain)`);
});

defaults.run();
