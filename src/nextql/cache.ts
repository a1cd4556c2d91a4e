/** A map that keeps at most `capacity` entries, dropping the least recently used one. */
export class BoundedCache<V> {
  private readonly entries = new Map<string, V>();

  constructor(private readonly capacity: number) {}

  getOrCreate(key: string, create: () => V): V {
    const cached = this.entries.get(key);
    if (cached !== undefined) {
      // Re-inserting moves the entry to the end of the Map's insertion order: the most recent end.
      this.entries.delete(key);
      this.entries.set(key, cached);
      return cached;
    }
    const created = create();
    this.entries.set(key, created);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
    return created;
  }

  get size(): number {
    return this.entries.size;
  }
}
