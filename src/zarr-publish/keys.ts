// The key space of a published dataset, checked key by key: the metadata documents that exist, and
// chunk keys whose array exists and whose every index lies inside that array's chunk grid. A key
// is matched against this space only; nothing taken from it is ever used as a path.
import type { PublishedArray } from "./dataset.ts";

export type Target =
  | { kind: "metadata"; bytes: Uint8Array }
  | { kind: "chunk"; array: PublishedArray; coords: number[]; view: 2 | 3 };

/** A chunk index as Zarr writes it: decimal, no sign, no leading zeros; nine digits is plenty. */
const INDEX = /^(0|[1-9][0-9]{0,8})$/;

/** Percent-decode a raw key from the URL once; undefined when it is not valid UTF-8 encoding. */
export function decodeKey(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

function chunkCoords(parts: string[], a: PublishedArray): number[] | undefined {
  if (parts.length !== a.grid.length) return undefined;
  const coords: number[] = [];
  for (let d = 0; d < parts.length; d++) {
    if (!INDEX.test(parts[d])) return undefined;
    const i = Number(parts[d]);
    if (i >= a.grid[d]) return undefined;
    coords.push(i);
  }
  return coords;
}

/** What a (decoded) key names, or undefined when it is not in the key space. */
export function resolveKey(
  key: string,
  documents: Map<string, Uint8Array>,
  arrays: Map<string, PublishedArray>,
): Target | undefined {
  const doc = documents.get(key);
  if (doc) return { kind: "metadata", bytes: doc };
  const slash = key.indexOf("/");
  if (slash <= 0) return undefined;
  const a = arrays.get(key.slice(0, slash));
  if (!a) return undefined;
  const rest = key.slice(slash + 1);
  // A scalar's one chunk: "c" in v3, "0" in v2.
  if (a.grid.length === 0) {
    if (rest === "c") return { kind: "chunk", array: a, coords: [], view: 3 };
    if (rest === "0") return { kind: "chunk", array: a, coords: [], view: 2 };
    return undefined;
  }
  if (rest.startsWith("c/")) {
    const coords = chunkCoords(rest.slice(2).split("/"), a);
    return coords && { kind: "chunk", array: a, coords, view: 3 };
  }
  const coords = chunkCoords(rest.split("."), a);
  return coords && { kind: "chunk", array: a, coords, view: 2 };
}
