// The one pipeline error: names the file, the stage and what to do; the entry point prints it and exits non-zero.

export class PublishError extends Error {
  constructor(
    readonly file: string,
    readonly stage: string,
    readonly reason: string,
  ) {
    super(`${file}: ${reason} [${stage}]`);
    this.name = "PublishError";
  }
}

/** The message of anything thrown, for a line of text. */
export function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
