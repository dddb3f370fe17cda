// The one place that decides which static paths are public. It works on the path exactly as it
// will be served: percent-decoded once, segment by segment, with empty segments collapsed; anything
// a file server could read differently from how the guard read it (dot segments, backslashes,
// NUL, encoded slashes, malformed escapes) is refused outright. The static servers then receive
// the normalised path re-encoded, so they decode to the very string checked here.

/** Prefixes of the published build that back keyed routes and are never public static files. */
const PRIVATE_PREFIXES = ["embeddings", "point"];

/**
 * Whether a file may be served from where it really is (its segments below the build root, after
 * symlinks): a link inside the build to a private file (an embedding index) or a dotfile is refused.
 */
export function isPublicLocation(segments: string[]): boolean {
  if (segments.some((s) => s === "" || s.startsWith("."))) return false;
  return !PRIVATE_PREFIXES.includes((segments[0] ?? "").toLowerCase());
}

export type PublicPath =
  | {
      ok: true /** decoded, normalised, starting with "/" */;
      path: string /** the same, safely re-encoded */;
      url: string;
    }
  | { ok: false; status: 400 | 404 };

export function publicPath(rawPath: string): PublicPath {
  const segments: string[] = [];
  for (const raw of rawPath.split("/")) {
    if (raw === "") continue;
    let seg: string;
    try {
      seg = decodeURIComponent(raw);
    } catch {
      return { ok: false, status: 400 };
    }
    // Control characters, separators smuggled in by encoding, and dot segments are never names.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
    if (/[/\\\u0000-\u001f\u007f]/.test(seg) || seg === "." || seg === "..") return { ok: false, status: 400 };
    segments.push(seg);
  }
  const first = (segments[0] ?? "").toLowerCase();
  if (PRIVATE_PREFIXES.includes(first)) return { ok: false, status: 404 };
  // A trailing slash is kept: it selects a directory index.
  const trailing = rawPath.endsWith("/") && segments.length > 0 ? "/" : "";
  const path = `/${segments.join("/")}${trailing}`;
  const url = `/${segments.map(encodeURIComponent).join("/")}${trailing}`;
  return { ok: true, path, url };
}
