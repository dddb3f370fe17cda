// A Map that holds at most `max` entries: once full, the next new key empties it first. For the
// memos on request paths (ETags by body, parsed queries, point answers), where what is asked for
// again soon comes back within a few requests and an eviction order would cost more than it saves.
export class BoundedMap<K, V> extends Map<K, V> {
  readonly max: number;

  constructor(max: number) {
    super();
    this.max = max;
  }

  override set(key: K, value: V): this {
    if (this.size >= this.max && !this.has(key)) this.clear();
    return super.set(key, value);
  }
}
