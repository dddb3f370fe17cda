// The base URL a live document writes into its links (WMTS ResourceURLs, the catalog's
// public_url): the public_url setting when set; else, only when trust_proxy says the proxy in
// front sets them honestly, the request's X-Forwarded-Proto/-Host (or its Host). Otherwise none:
// a Host header any client can forge never ends up in a document a CDN may cache for everyone.
import type { IncomingMessage } from "node:http";
import { checkedPublicUrl, type Settings } from "../config.ts";

function first(h: string | string[] | undefined): string | undefined {
  const v = Array.isArray(h) ? h[0] : h;
  return v?.split(",")[0]?.trim() || undefined;
}

/** Sent with a document whose base URL came from the proxy headers, so caches keep one per host. */
export const VARY_FORWARDED = { Vary: "X-Forwarded-Host, X-Forwarded-Proto, Host" };

/** Whether publicBase takes the base URL from the request (no public_url, a trusted proxy). */
export function baseFromRequest(settings: Settings): boolean {
  return !settings.public_url && settings.trust_proxy === 1;
}

/** The base URL (no trailing slash), or "" when it is not known. */
export function publicBase(settings: Settings, req: IncomingMessage): string {
  if (settings.public_url) return settings.public_url;
  if (settings.trust_proxy !== 1) return "";
  const host = first(req.headers["x-forwarded-host"]) ?? first(req.headers.host);
  if (!host || !/^[A-Za-z0-9.\-:[\]]+$/.test(host)) return "";
  const proto = first(req.headers["x-forwarded-proto"]) === "https" ? "https" : "http";
  try {
    return checkedPublicUrl(`${proto}://${host}`);
  } catch {
    return "";
  }
}

/**
 * The base URL a live answer writes its links on (absolute when known; else "" and the links are
 * paths, which a client resolves against the URL it asked), and the Vary that answer needs when
 * the base came from the request's headers.
 */
export function linkBase(settings: Settings, req: IncomingMessage): { base: string; headers?: Record<string, string> } {
  return { base: publicBase(settings, req), ...(baseFromRequest(settings) ? { headers: VARY_FORWARDED } : {}) };
}
