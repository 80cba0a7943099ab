// What a series format is (docs/contract.md §8.2): one record a format, one file each, gathered in one table
// (./table.ts). The route, its parameters, its 413 plans, its OpenAPI document, the service's bounds and the mirror
// client all read the table; adding a format is one file and one row (docs/layout.md "Adding a series format").

import type { AnswerStream } from "../../answer.js";
import type { Context } from "../../context.js";
import type { Issue } from "../../errors.js";
import type { Variable } from "../../../format/variables.js";
import type { SeriesConfig, SeriesRequest } from "../call.js";
import type { SeriesSelection } from "../select.js";

/**
 * Values a call may answer: places x days x variables. SILO's whole archive (1889-01-01 on, about 50,400 days in
 * 2026) at one place with the five variables of an APSIM file is about 252,000; this bound keeps that in one call until 2053.
 */
export const MAX_SERIES_VALUES = 300_000;

/** The bound of the formats an answer is built whole for, in memory (csv, json, met): one option for all. */
export const WHOLE_ANSWER_BOUND = { option: "seriesMaxValues", values: MAX_SERIES_VALUES, holder: "a call" } as const;

/** What a format's writer is given: the checked call, the versions and period chosen, and the canonical request. */
export interface SeriesAnswerInput {
  ctx: Context;
  config: SeriesConfig;
  selection: SeriesSelection;
  request: SeriesRequest;
}

export interface SeriesFormatSpec {
  /** the value of `format=` */
  name: string;
  /** Content-Type of its answers */
  type: string;
  /** what it is, in the `format` parameter's description: "tidy: one row per place or cell and date" */
  summary: string;
  /** a word on it in the 400 that lists the formats: "an APSIM weather file" */
  label?: string;
  /**
   * The bound on the values (places x days x variables) of one answer: the service option that sets it (formats
   * share an option when they share a bound), its default, and what holds the values, for the 413's message.
   */
  bound: { option: string; values: number; holder: string };
  /** the variables asked when `variables=` is left out, and whose they are (default: the first variable of the table) */
  defaultVariables?: { whose: string; variables: readonly Variable[] };
  /** rules across parameters a schema cannot state, checked when every other rule holds: issues to add to the 400 */
  check?(config: SeriesConfig, issues: Issue[]): void;
  /** how the parts of a 413's plan join: a box split by dates first (files joined by time), and a note for the summary */
  plan: { splitsBoxByDates?: boolean; joined?: string; eachPart?: string };
  /** the OpenAPI schema of its 200's body */
  openapi: Record<string, unknown>;
  /** the answer's body: bytes made whole, or a stream of known length */
  write(input: SeriesAnswerInput): Promise<Uint8Array | AnswerStream>;
}
