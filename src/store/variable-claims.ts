// Which stored array serves each canonical variable when several claim it. A name says more than a
// CF meaning; among names, the array named exactly as the variable wins over aliases; any other
// tie is refused with every claimant named — never one of them guessed.

/** What a claim needs to know of a variable (forecast-group.ts's GroupVariable has it). */
interface Claimant {
  /** Canonical name claimed. */
  name: string;
  /** Stored array name. */
  stored: string;
  /** The CF rule that recognised it, for claims by meaning. */
  meaning?: string;
}

/** An array ready to serve a variable, and how to list it as left out instead. */
export interface Claim<V extends Claimant = Claimant> {
  v: V;
  skip: (reason: string) => void;
}

/** The variables served, in claim order; each claim not served is skipped with its reason. */
export function servedClaims<V extends Claimant>(byName: Claim<V>[], byMeaning: Claim<V>[]): V[] {
  const served = new Map<string, V>();
  for (const { v, skip } of byName) {
    const rivals = byName.filter((o) => o.v.name === v.name && o.v !== v).map((o) => o.v);
    if (rivals.length === 0) {
      served.set(v.name, v);
      continue;
    }
    const exact = [v, ...rivals].filter((x) => x.stored.toLowerCase() === x.name.toLowerCase());
    if (exact.length === 1) {
      if (exact[0] === v) served.set(v.name, v);
      else skip(`a second array for ${v.name}: ${exact[0].stored} is ${v.name} by its very name and is served`);
      continue;
    }
    skip(
      `${v.stored} and ${rivals.map((r) => r.stored).join(", ")} are all names of ${v.name}: ambiguous, neither ` +
        "is served (rename or remove the one not meant)",
    );
  }
  for (const { v, skip } of byMeaning) {
    const named = served.get(v.name);
    if (named) {
      skip(`its ${v.meaning} means ${v.name}, but ${named.stored} is ${v.name} by name and is served`);
      continue;
    }
    const rivals = byMeaning.filter((o) => o.v.name === v.name && o.v !== v).map((o) => o.v.stored);
    if (rivals.length) {
      skip(
        `its ${v.meaning} means ${v.name}, and so does ${rivals.join(", ")}: ambiguous, neither is served ` +
          `(name the one meant ${v.name}, or remove the other's standard_name)`,
      );
      continue;
    }
    served.set(v.name, v);
  }
  return [...served.values()];
}
