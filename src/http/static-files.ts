// Everything no route claims, as files: the build's own (published/static.ts), the vendored
// front-end packages from node_modules, then the viewer; each path decided on its decoded,
// normalised form (public-path.ts) and served exactly as decided.
import type { IncomingMessage, ServerResponse } from "node:http";
import { join, resolve } from "node:path";
import sirv from "sirv";
import type { Snapshot } from "../published/snapshot.ts";
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

/**
 * The static file server of an app: answers a GET or HEAD at `path` (the request's path, no query)
 * from the build, a vendor mount or the viewer, or with a problem; `onError` takes failures of
 * the build's files.
 */
export function staticFiles(
  ctx: AppContext,
  onError: (err: unknown, req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse, path: string) => void {
  const webStatic = sirv(ctx.webDir, { dev: false, etag: true, dotfiles: false });
  const vendor = VENDOR_MOUNTS.map(({ prefix, dir }) => ({
    prefix,
    serve: sirv(dir, { dev: false, etag: true, maxAge: 86400 }),
  }));
  return (req, res, path) => {
    // sirv (the viewer and vendor files) answers "bytes=-n" with the first n+1 bytes as a 206:
    // wrong content. Without the header the whole file goes out (200), which RFC 9110 allows for
    // any Range request. The build's own files (published/static.ts) answer suffixes correctly.
    const noSuffixRange = () => {
      if (/^\s*bytes=\s*-/i.test(req.headers.range ?? "")) delete req.headers.range;
    };
    const notFound = () => sendProblem(res, simpleProblem(404, "not-found", "no such resource", { instance: path }));
    // Decide on the decoded, normalised path, and serve exactly that path (see public-path.ts).
    const decided = publicPath(path);
    if (!decided.ok) {
      if (decided.status === 400) sendProblem(res, simpleProblem(400, "bad-path", "the request path is not valid"));
      else notFound();
      return;
    }
    const query = req.url?.includes("?") ? req.url.slice(req.url.indexOf("?")) : "";
    req.url = decided.url + query;
    const mount = vendor.find((m) => decided.path.startsWith(m.prefix));
    if (mount) {
      req.url = decided.url.slice(mount.prefix.length - 1) + query;
      noSuffixRange();
      mount.serve(req, res, notFound);
      return;
    }
    const serve = (snap: Snapshot | undefined) => {
      const fallback = () => {
        noSuffixRange();
        webStatic(req, res, notFound);
      };
      if (snap) snap.serveStatic(req, res, decided.path, fallback, (e) => onError(e, req, res), isPublicLocation);
      else fallback();
    };
    // A build already open is served in this turn: a warm file goes out without a promise.
    const open = ctx.published.now();
    if (open) serve(open);
    else ctx.published.current().then(serve, (e) => onError(e, req, res));
  };
}
