// Suggestions for a name that means nothing to a request, drawn from what is actually served (a
// group's variables, a store's map layers), never from the whole registry: "wind" should lead to
// the wind a store has, not to registered names that merely look alike. Two ways to be near:
// by meaning (every word of the request stands in the candidate's names, long name or CF standard
// name: "wind" → u10, v10, wind_speed; "temp" → t2m) and by spelling (edit distance to a name,
// alias or stored name: "2tm" → t2m).
import { editDistance } from "./registry.ts";

/** What a suggestion can be made from: its canonical name and the words it is known by. */
export interface Suggestible {
  name: string;
  aliases?: readonly string[];
  stored?: string;
  long_name?: string;
  standard_name?: string;
}

/** Suggestions given at the most. */
export const MAX_SUGGESTIONS = 5;

function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);
}

/** True when every word of the query (of at least 3 letters) is a word, or the start of one, of `c`. */
function meaningMatch(query: string[], c: Suggestible): boolean {
  if (query.length === 0) return false;
  const own = new Set(
    words([c.name, c.stored ?? "", c.long_name ?? "", c.standard_name ?? "", ...(c.aliases ?? [])].join(" ")),
  );
  return query.every((q) => own.has(q) || (q.length >= 4 && [...own].some((w) => w.startsWith(q))));
}

/** Canonical names of the candidates nearest to `query`: meaning first, then spelling. */
export function suggestAmong(query: string, candidates: readonly Suggestible[], count = MAX_SUGGESTIONS): string[] {
  const q = query.trim().toLowerCase();
  const qWords = words(q).filter((w) => w.length >= 3);
  const out: string[] = [];
  const add = (n: string) => {
    if (!out.includes(n) && out.length < count) out.push(n);
  };
  for (const c of [...candidates].sort((a, b) => (a.name < b.name ? -1 : 1))) if (meaningMatch(qWords, c)) add(c.name);
  const spelled = candidates
    .map((c) => {
      const names = [c.name, c.stored, ...(c.aliases ?? [])]
        .filter((n): n is string => !!n)
        .map((n) => n.toLowerCase());
      return { name: c.name, d: Math.min(...names.map((n) => editDistance(q, n))) };
    })
    .filter((x) => x.d <= Math.max(2, Math.floor(q.length / 3)))
    .sort((a, b) => a.d - b.d || (a.name < b.name ? -1 : 1));
  for (const s of spelled) add(s.name);
  return out;
}

/** "; did you mean a, b or c?" for a message, or "" when there is nothing to suggest. */
export function didYouMean(suggestions: readonly string[]): string {
  if (suggestions.length === 0) return "";
  const list =
    suggestions.length === 1 ? suggestions[0] : `${suggestions.slice(0, -1).join(", ")} or ${suggestions.at(-1)}`;
  return `; did you mean ${list}?`;
}
