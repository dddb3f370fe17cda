// Content codings (RFC 9110 §8.4, §12.5.3): which documents are worth compressing, the names their
// pre-compressed twins carry in a build, and the choice among the codings a client accepts. Read
// the same way by the build's files (published/static-cache.ts) and by route replies (http/reply.ts).
import { extname } from "node:path";

export type Coding = "br" | "gzip";
export type Chosen = Coding | "identity";

/** Server preference among codings a client accepts equally: brotli is the smaller. */
const PREFERENCE: readonly Chosen[] = ["br", "gzip", "identity"];

/** The file a coding's twin of `name` is written to beside it. */
export const CODING_SUFFIX: Record<Coding, string> = { br: ".br", gzip: ".gz" };

/** ETag of a coded body: the identity tag with the coding named inside, so each coding has its own. */
export function codedEtag(etag: string, coding: Chosen): string {
  return coding === "identity" ? etag : `${etag.slice(0, -1)}-${coding === "gzip" ? "gz" : "br"}"`;
}

/** Text documents (JSON, HTML, JS, CSS, SVG, source maps, plain text); images are compressed already. */
const COMPRESSIBLE_EXT = new Set([".json", ".html", ".js", ".mjs", ".css", ".svg", ".map", ".txt", ".xml"]);

export function compressibleName(name: string): boolean {
  return COMPRESSIBLE_EXT.has(extname(name).toLowerCase());
}

export function compressibleType(type: string): boolean {
  return /^(application\/(json|[\w.+-]*\+json|xml|[\w.+-]*\+xml)|text\/|image\/svg\+xml)/i.test(type);
}

/** The weight of identity when the header does not name it: acceptable, after anything named. */
const IDENTITY_UNNAMED = 0.001;

/** The q-value of each coding a header names (lower-cased); a missing or broken q is 1. */
function qValues(header: string): Map<string, number> {
  const q = new Map<string, number>();
  for (const item of header.split(",")) {
    const [name, ...params] = item.split(";");
    const coding = name.trim().toLowerCase();
    if (!coding) continue;
    let value = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(p);
      if (m) value = Number(m[1]);
    }
    // The same coding named twice: the most generous weight counts.
    q.set(coding, Math.max(q.get(coding) ?? 0, Math.min(1, value)));
  }
  return q;
}

/**
 * The coding to answer with among `available` (besides identity), by the client's Accept-Encoding.
 * No header: identity (RFC 9110: any coding is acceptable, but a client that sends none may not
 * decode one). Ties go to the server's preference. Identity is acceptable unless excluded by
 * "identity;q=0" or by "*;q=0" without identity named, and when not named it ranks below every
 * coding the client names; when nothing at all is acceptable the identity body is sent anyway,
 * which RFC 9110 allows and a client can still read.
 */
export function chooseCoding(header: string | undefined, available: readonly Coding[]): Chosen {
  if (header === undefined || available.length === 0) return "identity";
  const q = qValues(header);
  const star = q.get("*");
  const weight = (c: Chosen): number => {
    const named = q.get(c) ?? (c === "gzip" ? q.get("x-gzip") : undefined);
    if (named !== undefined) return named;
    // Identity not named stays acceptable, but below any coding the client did name (the lowest
    // weight a qvalue can carry), unless "*" gives it a weight; a coding not named is not acceptable.
    if (c === "identity") return star === undefined || star > 0 ? IDENTITY_UNNAMED : 0;
    return star ?? 0;
  };
  let best: Chosen = "identity";
  let bestQ = weight("identity");
  for (const c of PREFERENCE) {
    if (c === "identity" || !available.includes(c)) continue;
    const w = weight(c);
    if (w > 0 && (w > bestQ || (w === bestQ && PREFERENCE.indexOf(c) < PREFERENCE.indexOf(best)))) {
      best = c;
      bestQ = w;
    }
  }
  return best;
}
