// Name resolution over the registry data: canonical names and aliases, case-insensitive.
import { UnknownVariableError } from "../errors.ts";
import { VARIABLES, type VariableEntry } from "./variables.ts";

export class Registry {
  readonly entries: readonly VariableEntry[];
  readonly #byName = new Map<string, VariableEntry>();

  constructor(entries: readonly VariableEntry[] = VARIABLES) {
    this.entries = entries;
    for (const e of entries) {
      for (const n of [e.name, ...e.aliases]) {
        const key = n.toLowerCase();
        const prior = this.#byName.get(key);
        if (prior && prior !== e) throw new Error(`registry: "${n}" names both ${prior.name} and ${e.name}`);
        this.#byName.set(key, e);
      }
    }
  }

  /** The entry for a canonical name or alias, or undefined. */
  lookup(name: string): VariableEntry | undefined {
    return this.#byName.get(name.trim().toLowerCase());
  }

  /** The entry for a name; an unknown name throws with the closest registered names. */
  resolve(name: string): VariableEntry {
    const e = this.lookup(name);
    if (e) return e;
    throw new UnknownVariableError(`"${name}" is not a registered variable name`, {
      param: "var",
      suggestions: this.closest(name),
    });
  }

  /** Registered names (canonical and aliases) nearest to `name` by edit distance. */
  closest(name: string, count = 3): string[] {
    const q = name.trim().toLowerCase();
    return [...this.#byName.keys()]
      .map((k) => ({ k, d: editDistance(q, k) - (k.startsWith(q) || q.startsWith(k) ? 1 : 0) }))
      .sort((a, b) => a.d - b.d || a.k.localeCompare(b.k))
      .slice(0, count)
      .map((x) => x.k);
  }
}

export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length];
}

export const registry = new Registry();
export type { DisplayUnit, MapStyle, Temporal, VariableEntry } from "./variables.ts";
