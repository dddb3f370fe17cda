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

/**
 * `fn` remembered by its text argument, for a function of that text alone on a request path (a
 * request path's decision, its segments): at most `max` answers, and only for texts up to
 * `maxText` characters, so what it holds never grows with what clients send. `fn` never returns
 * undefined (use null for "none"); its answers are shared by every caller, so make them frozen.
 */
export function memoByText<V>(fn: (text: string) => V, max: number, maxText: number): (text: string) => V {
  const kept = new BoundedMap<string, V>(max);
  return (text) => {
    let v = kept.get(text);
    if (v === undefined) {
      v = fn(text);
      if (text.length <= maxText) kept.set(text, v);
    }
    return v;
  };
}
