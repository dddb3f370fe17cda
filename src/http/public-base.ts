// The base URL a live document writes into its links (WMTS ResourceURLs, the catalog's
// public_url): the public_url setting when set; else, only when trust_proxy says the proxy in
// front sets them honestly, the request's X-Forwarded-Proto/-Host (or its Host). Otherwise none:
// a Host header any client can forge never ends up in a document a CDN may cache for everyone.
// A host taken from the request is a DNS name or an IP address with an optional port, never
// longer than a DNS name allows: anything else is a 400, so one request cannot make a document
// (written once per base and cached) hundreds of times its size.
import type { IncomingMessage } from "node:http";
import { checkedPublicUrl, type Settings } from "../config.ts";
import { InvalidParameterError } from "../errors.ts";

/** Longest DNS name (RFC 1035: 253 characters written out). */
export const MAX_HOST_NAME = 253;
/** Longest host[:port] a base URL is taken from: a DNS name and ":65535". */
export const MAX_FORWARDED_HOST = MAX_HOST_NAME + ":65535".length;

const LABEL = "(?!-)[A-Za-z0-9-]{1,63}(?<!-)";
const HOST_PORT = new RegExp(`^(?:${LABEL}(?:\\.${LABEL})*\\.?|\\[[0-9A-Fa-f:.]{2,45}\\])(?::(\\d{1,5}))?$`);

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

/** A host[:port] from a request header, refused (400, its length named, not echoed) unless valid. */
function checkedHost(host: string, header: string): string {
  const m = host.length <= MAX_FORWARDED_HOST ? HOST_PORT.exec(host) : null;
  const name = m ? host.slice(0, host.length - (m[1] === undefined ? 0 : m[1].length + 1)) : "";
  const port = m?.[1] === undefined ? 1 : Number(m[1]);
  if (!m || name.replace(/\.$/, "").length > MAX_HOST_NAME || port < 1 || port > 65535) {
    throw new InvalidParameterError(
      header,
      `${header} is not a host name or address with an optional port of at most ${MAX_FORWARDED_HOST} characters ` +
        `(it has ${host.length}); links are written on it because trust_proxy is 1 and public_url is not set`,
      { limit: MAX_FORWARDED_HOST },
    );
  }
  return host;
}

/**
 * The base URL (no trailing slash), or "" when it is not known. Throws InvalidParameterError (400)
 * for a host header it would take that is not a valid host[:port].
 */
export function publicBase(settings: Settings, req: IncomingMessage): string {
  if (settings.public_url) return settings.public_url;
  if (settings.trust_proxy !== 1) return "";
  const forwarded = first(req.headers["x-forwarded-host"]);
  const raw = forwarded ?? first(req.headers.host);
  if (!raw) return "";
  const host = checkedHost(raw, forwarded ? "X-Forwarded-Host" : "Host");
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
