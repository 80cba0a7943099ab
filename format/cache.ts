// A cost-bounded cache with LRU-like eviction in O(1) and no work on a hit: two generations (the quick-lru
// scheme). Hits come from `recent`; a hit in `old` is promoted; when `recent` fills, it becomes `old` and the
// previous `old` is dropped. Memory stays under twice `maxCost`, however much of the archive is read.

export class LruCache<V> {
  private recent = new Map<string, { value: V; cost: number }>();
  private old = new Map<string, { value: V; cost: number }>();
  private recentCost = 0;
  private readonly generationCost: number;

  constructor(maxCost: number) {
    this.generationCost = maxCost / 2;
  }

  get(key: string): V | undefined {
    const hit = this.recent.get(key);
    if (hit) return hit.value;
    const aged = this.old.get(key);
    if (!aged) return undefined;
    this.old.delete(key);
    this.put(key, aged);
    return aged.value;
  }

  /**
   * The value of `key`, loaded on a miss: concurrent callers share one load, and a load that fails is dropped,
   * so the next caller tries again (a failure is never cached).
   */
  getOrLoad<T extends V & Promise<unknown>>(key: string, cost: number, load: () => T): T {
    const hit = this.get(key);
    if (hit !== undefined) return hit as T;
    const loading = load();
    this.set(key, loading, cost);
    loading.catch(() => {
      if (this.peek(key) === loading) this.delete(key);
    });
    return loading;
  }

  private peek(key: string): V | undefined {
    return this.recent.get(key)?.value ?? this.old.get(key)?.value;
  }

  /** Whether an entry of `cost` is ever kept: one entry never evicts most of the cache. */
  admits(cost: number): boolean {
    return cost <= this.generationCost / 4;
  }

  set(key: string, value: V, cost: number): void {
    if (!this.admits(cost)) return;
    this.delete(key);
    this.put(key, { value, cost });
  }

  delete(key: string): void {
    const hit = this.recent.get(key);
    if (hit) {
      this.recent.delete(key);
      this.recentCost -= hit.cost;
    }
    this.old.delete(key);
  }

  private put(key: string, entry: { value: V; cost: number }): void {
    if (this.recentCost + entry.cost > this.generationCost) {
      this.old = this.recent;
      this.recent = new Map();
      this.recentCost = 0;
    }
    this.recent.set(key, entry);
    this.recentCost += entry.cost;
  }
}
