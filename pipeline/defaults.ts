// The pipeline commands' defaults, each stated once: pipeline/cli.ts gives them to the flags the Makefile leaves out
// (it passes a variable only when it is set), `make help` prints them, and test/pipeline/defaults.test.ts holds the docs to them.

export const DEFAULTS = {
  /** the dist every command writes or reads */
  dist: "dist",
  /** make publish and make demo-day without SOURCES: the generated demo's folder */
  demoSources: ".cache/demo",
  /** make fetch and make update without SOURCES: where SILO's files are kept */
  siloSources: ".cache/silo",
  /**
   * seconds a writer waits for another before refusing (docs/operating.md "Waiting for another writer"): longer than
   * a daily publish or a sync takes, so cron jobs that meet take turns instead of failing
   */
  lockWaitSec: 600,
  /** make prune keeps every version published in the last this many days (and the newest and each month's last) */
  keepDays: 30,
  /** an unreachable file is deleted this long after it was first found so: a reader of the previous catalog finishes */
  graceHours: 24,
  /** make prune drops the versions its rule does not keep (0: it only collects, as a mirror following its origin) */
  dropVersions: true,
  /** make sync runs prune's collect step once its new catalog is in place */
  prune: true,
  /** make sync's downloads at once */
  syncConcurrency: 8,
} as const;

/** A make variable and the default the code gives it (`note`: where, or its unit), as `make help` prints it. */
export interface MakeDefault {
  variable: string;
  value: string;
  note?: string;
}

/** The make variables these defaults stand behind (REVISION_DAYS' per-variable ones are pipeline/commands/update.ts's). */
export const MAKE_DEFAULTS: MakeDefault[] = [
  { variable: "DIST", value: DEFAULTS.dist },
  { variable: "SOURCES", value: DEFAULTS.demoSources, note: "publish, demo-day" },
  { variable: "SOURCES", value: DEFAULTS.siloSources, note: "fetch, update" },
  { variable: "LOCK_WAIT", value: String(DEFAULTS.lockWaitSec), note: "seconds" },
  { variable: "KEEP_DAYS", value: String(DEFAULTS.keepDays) },
  { variable: "GRACE_HOURS", value: String(DEFAULTS.graceHours) },
  { variable: "DROP_VERSIONS", value: DEFAULTS.dropVersions ? "1" : "0" },
  { variable: "PRUNE", value: DEFAULTS.prune ? "1" : "0" },
];
