// Numbers on the wire (docs/contract.md §2): float32 cells as their shortest round-tripping decimal.

const shortest = new Map<number, number>();

/** The shortest decimal that reads back as the same float32, as a JS number; null for missing (NaN). */
export function float32ToShortest(v: number): number | null {
  if (Number.isNaN(v)) return null;
  let hit = shortest.get(v);
  if (hit === undefined) {
    hit = v;
    for (let p = 1; p <= 9; p++) {
      const candidate = Number(v.toPrecision(p));
      if (Math.fround(candidate) === v) {
        hit = candidate;
        break;
      }
    }
    // SILO values cluster on one decimal, so this cache stays small (a few thousand entries at most).
    if (shortest.size < 1 << 16) shortest.set(v, hit);
  }
  return hit;
}
