// The gap rule of a publish (docs/contract.md §5): dates a new version would lack between its first and last day
// stop the publish, unless the maintainer allows them (then they are recorded) or the base version already had them.

import type { Coverage } from "../../format/coverage.js";
import { dateToDayNumber, dayNumberToDate } from "../../format/dates.js";
import { PublishError } from "../errors.js";

/** More gap ranges than this make a record too long to stay bounded (docs/contract.md §5); refuse instead. */
const MAX_GAP_RANGES = 500;

/** Inclusive [first, last] day-number ranges of the dates a version would hold. */
type Ranges = [number, number][];

function mergeRanges(ranges: Ranges): Ranges {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: Ranges = [];
  for (const [s, e] of sorted) {
    const last = out[out.length - 1];
    if (last && s <= last[1] + 1) last[1] = Math.max(last[1], e);
    else out.push([s, e]);
  }
  return out;
}

function coverageRanges(coverage: Coverage): Ranges {
  const ranges: Ranges = [];
  let start = dateToDayNumber(coverage.first);
  for (const [s, e] of coverage.gaps) {
    ranges.push([start, dateToDayNumber(s) - 1]);
    start = dateToDayNumber(e) + 1;
  }
  ranges.push([start, dateToDayNumber(coverage.last)]);
  return ranges;
}

export function describeRanges(ranges: [string, string][]): string {
  const shown = ranges.slice(0, 8).map(([s, e]) => (s === e ? s : `${s}..${e}`));
  return shown.join(", ") + (ranges.length > shown.length ? ` and ${ranges.length - shown.length} more ranges` : "");
}

/**
 * Dates between the first and last the new version would hold that it would lack. Gaps the base already
 * recorded (allowed when it was published) stay allowed; any other stops the publish unless gaps are allowed.
 */
export function checkGaps(dates: string[], folder: string, baseCoverage: Coverage | undefined, allowGaps: boolean): void {
  const ranges: Ranges = dates.map((d) => [dateToDayNumber(d), dateToDayNumber(d)]);
  if (baseCoverage) ranges.push(...coverageRanges(baseCoverage));
  const merged = mergeRanges(ranges);
  const gaps: [string, string][] = [];
  for (let i = 1; i < merged.length; i++) gaps.push([dayNumberToDate(merged[i - 1][1] + 1), dayNumberToDate(merged[i][0] - 1)]);
  const allowed = (g: [string, string]) => baseCoverage?.gaps.some(([s, e]) => s <= g[0] && e >= g[1]) ?? false;
  const fresh = gaps.filter((g) => !allowed(g));
  if (fresh.length > 0 && !allowGaps) {
    const days = fresh.reduce((n, [s, e]) => n + dateToDayNumber(e) - dateToDayNumber(s) + 1, 0);
    throw new PublishError(
      folder,
      "gaps",
      `${days} date${days === 1 ? "" : "s"} missing between the first and last day: ${describeRanges(fresh)}; ` +
        "fetch them (make fetch FROM=.. TO=..), or publish with ALLOW_GAPS=1 to record them as gaps",
    );
  }
  if (gaps.length > MAX_GAP_RANGES) {
    throw new PublishError("sources", "gaps", `${gaps.length} separate gaps (at most ${MAX_GAP_RANGES}); publish the ranges of consecutive days as separate versions`);
  }
}
