// Everything no route claims, as files: the build's own (published/static.ts), the vendored
// front-end packages from node_modules, then the viewer; each path decided on its decoded,
// normalised form (public-path.ts) and served exactly as decided.
import { realpathSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join, resolve } from "node:path";
import sirv from "sirv";
import { memoByText } from "../bounded-map.ts";
import type { Snapshot } from "../published/snapshot.ts";
import { pathParts } from "../published/static.ts";
import { StaticCache } from "../published/static-cache.ts";
import { sendCached } from "../published/static-reply.ts";
import type { AppContext } from "./context.ts";
import { sendProblem, simpleProblem } from "./problem.ts";
import { isPublicLocation, publicPath } from "./public-path.ts";

const MODULES = resolve(import.meta.dirname, "../../node_modules");

/** Front-end packages served from node_modules so docs and the viewer work offline. */
export const VENDOR_MOUNTS = [
  { prefix: "/vendor/swagger-ui/", dir: join(MODULES, "swagger-ui-dist") },
  { prefix: "/vendor/redoc/", dir: join(MODULES, "redoc/bundles") },
  { prefix: "/vendor/leaflet/", dir: join(MODULES, "leaflet/dist") },
  { prefix: "/vendor/world-atlas/", dir: join(MODULES, "world-atlas") },
  { prefix: "/vendor/topojson-client/", dir: join(MODULES, "topojson-client/dist") },
  { prefix: "/vendor/pmtiles/", dir: join(MODULES, "pmtiles/dist") },
];

/** Vendor files change only with node_modules, i.e. with a new release of the server. */
export const VENDOR_CACHE_CONTROL = "public, max-age=86400";
/** Bytes each vendor mount may keep in memory (the largest bundle, Redoc's, is about 1 MB). */
const VENDOR_CACHE_BYTES = 16 * 1024 * 1024;

/** A mount's files from memory once read, compressed: undefined when the package is not installed. */
function vendorCache(dir: string): StaticCache | undefined {
  try {
    return new StaticCache(realpathSync(dir), undefined, VENDOR_CACHE_BYTES);
  } catch {
    return undefined;
  }
}

/** A vendor mount as served: its prefix, its files in memory (when installed) and sirv for the rest. */
export interface VendorMount {
  prefix: string;
  files: StaticCache | undefined;
  serve: ReturnType<typeof sirv>;
}

/** The vendor mounts of one app, their caches empty. */
export function vendorMounts(): VendorMount[] {
  return VENDOR_MOUNTS.map(({ prefix, dir }) => ({
    prefix,
    files: vendorCache(dir),
    serve: sirv(dir, { dev: false, etag: true, maxAge: 86400 }),
  }));
}

/** The vendor mount `path` (decided, normalised) is below, if any. */
export function mountOf(vendor: readonly VendorMount[], path: string): VendorMount | undefined {
  return vendor.find((m) => path.startsWith(m.prefix));
}

/** publicPath's answer by request path (a function of the path alone); frozen, shared by requests. */
export const decidedPath = memoByText((path) => Object.freeze(publicPath(path)), 4096, 512);

/**
 * The static file server of an app: answers a GET or HEAD at `path` (the request's path, no query)
 * from the build, a vendor mount or the viewer, or with a problem; `onError` takes failures of
 * the build's files.
 */
export function staticFiles(
  ctx: AppContext,
  onError: (err: unknown, req: IncomingMessage, res: ServerResponse) => void,
  vendor: VendorMount[] = vendorMounts(),
): (req: IncomingMessage, res: ServerResponse, path: string) => void {
  const webStatic = sirv(ctx.webDir, { dev: false, etag: true, dotfiles: false });
  // sirv (the viewer and vendor files) answers "bytes=-n" with the first n+1 bytes as a 206:
  // wrong content. Without the header the whole file goes out (200), which RFC 9110 allows for
  // any Range request. The build's own files (published/static.ts) answer suffixes correctly.
  const noSuffixRange = (req: IncomingMessage) => {
    if (/^\s*bytes=\s*-/i.test(req.headers.range ?? "")) delete req.headers.range;
  };
  const notFound = (res: ServerResponse, path: string) =>
    sendProblem(res, simpleProblem(404, "not-found", "no such resource", { instance: path }));
  /** The build's file at `decided` (the normalised path), else the viewer's, else a 404 naming `path`. */
  const serveBuild = (
    snap: Snapshot | undefined,
    req: IncomingMessage,
    res: ServerResponse,
    decided: string,
    path: string,
  ) => {
    const fallback = () => {
      noSuffixRange(req);
      webStatic(req, res, () => notFound(res, path));
    };
    if (snap) snap.serveStatic(req, res, decided, fallback, (e) => onError(e, req, res), isPublicLocation);
    else fallback();
  };
  return (req, res, path) => {
    // Decide on the decoded, normalised path, and serve exactly that path (see public-path.ts).
    const decided = decidedPath(path);
    if (!decided.ok) {
      if (decided.status === 400) sendProblem(res, simpleProblem(400, "bad-path", "the request path is not valid"));
      else notFound(res, path);
      return;
    }
    const q = req.url?.indexOf("?") ?? -1;
    req.url = q < 0 ? decided.url : decided.url + req.url!.slice(q);
    const mount = mountOf(vendor, decided.path);
    if (mount) {
      const { prefix, files, serve } = mount;
      const query = q < 0 ? "" : req.url.slice(decided.url.length);
      const viaSirv = () => {
        req.url = decided.url.slice(prefix.length - 1) + query;
        noSuffixRange(req);
        serve(req, res, () => notFound(res, path));
      };
      // Files of the package from memory, compressed (static-cache.ts); what the cache does not
      // hold as a file (a directory, a large file, nothing) goes to sirv as before.
      const named = pathParts(decided.path.slice(prefix.length - 1));
      const hit = named && files?.peek(named.key);
      if (hit && hit !== "large") {
        sendCached(req, res, hit, VENDOR_CACHE_CONTROL);
        return;
      }
      if (!named || !files || hit === "large") {
        viaSirv();
        return;
      }
      files.load(named.key, named.parts).then(
        (found) => {
          if (found && found !== "large") sendCached(req, res, found, VENDOR_CACHE_CONTROL);
          else viaSirv();
        },
        () => viaSirv(),
      );
      return;
    }
    // A build already open is served in this turn: a warm file goes out without a promise.
    const open = ctx.published.now();
    if (open) serveBuild(open, req, res, decided.path, path);
    else
      ctx.published.current().then(
        (snap) => serveBuild(snap, req, res, decided.path, path),
        (e) => onError(e, req, res),
      );
  };
}
