// A cost-bounded LRU (insertion-ordered Map): memory stays flat however much of the archive is read.

export class LruCache<V> {
  private readonly entries = new Map<string, { value: V; cost: number }>();
  private total = 0;

  constructor(private readonly maxCost: number) {}

  get(key: string): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    this.entries.delete(key);
    this.entries.set(key, hit);
    return hit.value;
  }

  set(key: string, value: V, cost: number): void {
    if (cost > this.maxCost / 4) return; // one entry never evicts most of the cache
    const old = this.entries.get(key);
    if (old) {
      this.total -= old.cost;
      this.entries.delete(key);
    }
    this.entries.set(key, { value, cost });
    this.total += cost;
    for (const [k, entry] of this.entries) {
      if (this.total <= this.maxCost) break;
      this.entries.delete(k);
      this.total -= entry.cost;
    }
  }

  delete(key: string): void {
    const old = this.entries.get(key);
    if (old) {
      this.total -= old.cost;
      this.entries.delete(key);
    }
  }

  get size(): number {
    return this.total;
  }
}
