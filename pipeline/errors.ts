// The pipeline's errors: each names the file, the stage and what to do about it, and its kind says whose failure it
// is (a command's, or a floor's under every command); the entry point prints any of them one way and exits non-zero.

import type { Variable } from "../format/variables.js";

/** A pipeline failure: `<file>: <reason> [<stage>]`. */
export abstract class PipelineError extends Error {
  constructor(
    readonly file: string,
    readonly stage: string,
    readonly reason: string,
  ) {
    super(`${file}: ${reason} [${stage}]`);
    this.name = new.target.name;
  }
}

/** make publish refused a source file or its folder; `variable` is the one whose file it refused, when a file of one was. */
export class PublishError extends PipelineError {
  constructor(
    file: string,
    stage: string,
    reason: string,
    readonly variable: Variable | null = null,
  ) {
    super(file, stage, reason);
  }
}

/** make fetch (and the fetch of make update): the bucket's files, silo.lock.json, the options of a fetch. */
export class FetchError extends PipelineError {}
/** make update's own: its options, and the staging folder a night's downloads move in from. */
export class UpdateError extends PipelineError {}
/** make sync: the remote dist, its manifests and files. */
export class SyncError extends PipelineError {}
/** make prune: its keep file, a dist with nothing to prune. */
export class PruneError extends PipelineError {}
/** make upgrade: the old dist it reads. */
export class UpgradeError extends PipelineError {}
/** make demo and make demo-day: the generated days. */
export class DemoError extends PipelineError {}
/** A flag of the command line, missing or malformed. */
export class ArgumentError extends PipelineError {}
/** A folder's lock (files/lock-file.ts), whichever command takes it: held by another writer, or unable to hold. */
export class LockError extends PipelineError {}
/** The dist's store (store/): an object whose bytes disagree with its name, a damaged catalog, a full disk. */
export class StoreError extends PipelineError {}

/** The message of anything thrown, for a line of text. */
export function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
