// The serving side of a published build. `Published` follows <out>/current; a `Snapshot` is one
// build, opened by reading its catalog only: nothing lists, walks or indexes its files, so opening
// a build of ten tiles or ten million costs the same. A request takes one snapshot and reads
// everything from it, so it never mixes two builds. Switching is a pointer swap done beside the
// requests: they keep the build they have until the next one is ready, and none waits for it.
import { readlink, realpath } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { join, resolve, sep } from "node:path";
import { readBelow } from "../confined.ts";
import { CorruptDataError, GridcastError } from "../errors.ts";
import { archiveTile, refuseDamagedArchive } from "./archive-reader.ts";
import { ARCHIVE_EXT, type ArchiveCatalogFields, archivePath, type TileFormat } from "./format.ts";
import { type Catalog, CURRENT, EMPTY_TILE, HIDPI_SUFFIX, runPart, tileDir } from "./layout.ts";
import { IMMUTABLE, type LocationCheck, pathParts, SHORT, sendBytes, sendFile } from "./static.ts";
import { type CachedFile, StaticCache } from "./static-cache.ts";
import { sendCached } from "./static-reply.ts";

export type PublishedCatalog = Catalog & ArchiveCatalogFields;

/** Names the build a tile or build file came from: one response never mixes two builds. */
export const BUILD_HEADER = "X-Gridcast-Build";

/** How often a request may trigger a look at where <out>/current points (one readlink). */
export const CHECK_EVERY_MS = 250;

export class Snapshot {
  /** Real path of the build directory. */
  readonly dir: string;
  readonly buildId: string;
  readonly catalog: PublishedCatalog | undefined;
  readonly format: TileFormat;
  /** Parsed JSON documents of this build (catalog, indexes): a handful, loaded on first use. */
  readonly #json = new Map<string, Promise<unknown>>();
  /**
   * This build's files as served, one cache per location check (the static paths' and the tile
   * route's): an entry holds what a confined open under that very check returned.
   */
  readonly #caches = new Map<LocationCheck | undefined, StaticCache>();
  /** Each layer's drawing (the run segment of its tile paths), by layer id; made on first use. */
  #drawings: Map<string, string> | undefined;

  constructor(dir: string, buildId: string, catalog: PublishedCatalog | undefined) {
    this.dir = dir;
    this.catalog = catalog;
    this.buildId = catalog?.build_id ?? buildId;
    this.format = catalog?.tile_format ?? "zxy";
  }

  json<T>(rel: string): Promise<T | undefined> {
    let p = this.#json.get(rel);
    if (!p) {
      p = readBelow(this.dir, join(this.dir, rel))
        .then((b) => (b === undefined ? undefined : (JSON.parse(b.toString("utf8")) as unknown)))
        .catch(() => undefined);
      this.#json.set(rel, p);
    }
    return p as Promise<T | undefined>;
  }

  /**
   * Serves the public file a decoded, normalised request path names, or calls `next` when there
   * is none. What is public (e.g. not the embedding indexes) is decided by the caller, on the
   * request path and, through `isPublic`, on where the file opened really is. A damaged archive
   * (or a tile of one) goes to `fail` before any byte is sent: a logged error, not a 404.
   */
  serveStatic(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    next: () => void,
    fail: (e: unknown) => void,
    isPublic?: LocationCheck,
  ): void {
    const named = pathParts(path);
    if (!named) {
      next();
      return;
    }
    const { parts, key } = named;
    const moved = this.#movedTile(parts);
    if (moved !== undefined) {
      // A tile path pinned under another drawing (an older renderer's URL, or one made before the
      // drawing was in paths): the tile as drawn now, under its own URL. Briefly cached: the
      // next upgrade moves it again.
      res.statusCode = 307;
      res.setHeader("Location", moved);
      res.setHeader("Cache-Control", SHORT);
      res.setHeader(BUILD_HEADER, this.buildId);
      res.end();
      return;
    }
    const cache = cacheControlOf(parts);
    res.setHeader(BUILD_HEADER, this.buildId);
    const archived = this.format === "pmtiles" && isTilePath(parts);
    // A file served before is answered from memory in this turn: no open, no stat, no promise.
    const files = this.#cache(isPublic);
    const hit = archived ? undefined : files.peek(key);
    if (hit && hit !== "large") {
      sendCached(req, res, hit, cache);
      return;
    }
    const served = archived
      ? this.#sendArchived(req, res, parts)
      : this.#sendChecked(req, res, parts, key, cache, isPublic);
    served.then(
      (sent) => {
        if (!sent) {
          res.removeHeader(BUILD_HEADER);
          next();
        }
      },
      (e) => {
        if (res.headersSent) res.destroy();
        else if (e instanceof GridcastError) fail(e);
        else {
          res.removeHeader(BUILD_HEADER);
          next();
        }
      },
    );
  }

  /**
   * The file serveStatic would answer from memory for these path parts, when it is there already
   * (not a tile of an archive build, not a large file); else undefined, and serveStatic decides.
   */
  warmStatic(parts: readonly string[], key: string, isPublic?: LocationCheck): CachedFile | undefined {
    if (this.format === "pmtiles" && isTilePath(parts)) return undefined;
    return this.#caches.get(isPublic)?.warm(key);
  }

  /**
   * Where a tile path of a layer of this build lives when its run segment names another drawing
   * (or none) than the layer's: the same path under the layer's drawing; undefined when it is
   * the layer's own, or not a tile path of a layer with a drawing.
   */
  #movedTile(parts: readonly string[]): string | undefined {
    if (parts[0] !== "tiles" || parts.length < 4) return undefined;
    this.#drawings ??= new Map(
      (this.catalog?.layers ?? []).flatMap((l) => (l.drawing ? [[l.id, l.drawing] as const] : [])),
    );
    const drawing = this.#drawings.get(parts[1]);
    if (drawing === undefined) return undefined;
    const dot = parts[2].indexOf(".");
    const own = runPart(dot < 0 ? parts[2] : parts[2].slice(0, dot), drawing);
    if (parts[2] === own) return undefined;
    return `/${["tiles", parts[1], own, ...parts.slice(3)].map(encodeURIComponent).join("/")}`;
  }

  #cache(isPublic: LocationCheck | undefined): StaticCache {
    let c = this.#caches.get(isPublic);
    if (!c) {
      c = new StaticCache(this.dir, isPublic);
      this.#caches.set(isPublic, c);
    }
    return c;
  }

  /**
   * A build file: from memory once read (static-cache.ts), streamed from disk when large. An
   * archive is never kept (it is checked, and one already found damaged is refused rather than
   * handed out raw).
   */
  async #sendChecked(
    req: IncomingMessage,
    res: ServerResponse,
    parts: string[],
    key: string,
    cache: string,
    isPublic?: LocationCheck,
  ): Promise<boolean> {
    if (parts.at(-1)!.endsWith(ARCHIVE_EXT)) {
      await refuseDamagedArchive(join(this.dir, ...parts));
      return sendFile(req, res, this.dir, parts, cache, isPublic);
    }
    const found = await this.#cache(isPublic).load(key, parts);
    if (found === "large") return sendFile(req, res, this.dir, parts, cache, isPublic);
    if (!found) return false;
    if (res.destroyed) return true;
    sendCached(req, res, found, cache);
    return true;
  }

  /**
   * Answers with one of the build's documents (e.g. catalog.json for the catalog route) exactly as
   * the static path would, compressed twin and all, when it is in memory already: in this turn,
   * no promise. False when it is not (then sendDocument reads it). `vary` as for sendCached.
   */
  sendWarmDocument(req: IncomingMessage, res: ServerResponse, rel: string, cache: string, vary?: string): boolean {
    const found = this.#cache(undefined).peek(rel);
    if (!found || found === "large") return false;
    res.setHeader(BUILD_HEADER, this.buildId);
    sendCached(req, res, found, cache, vary);
    return true;
  }

  /**
   * Answers with one of the build's documents as sendWarmDocument does, reading it (through the
   * confined open and into the cache) when it is not in memory yet; false when the build has no
   * such file.
   */
  async sendDocument(
    req: IncomingMessage,
    res: ServerResponse,
    rel: string,
    cache: string,
    vary?: string,
  ): Promise<boolean> {
    if (this.sendWarmDocument(req, res, rel, cache, vary)) return true;
    const parts = rel.split("/");
    const found = await this.#cache(undefined).load(rel, parts);
    if (found === "large") {
      // Streamed from disk (a document past the cache's size limit): Vary as the cached answer's.
      res.setHeader(BUILD_HEADER, this.buildId);
      if (vary) res.setHeader("Vary", vary);
      return sendFile(req, res, this.dir, parts, cache);
    }
    if (!found || res.destroyed) return found !== undefined;
    res.setHeader(BUILD_HEADER, this.buildId);
    sendCached(req, res, found, cache, vary);
    return true;
  }

  /** A build file's bytes by its path below the root (no leading slash), through the cache. */
  async #bytes(rel: string): Promise<Buffer | undefined> {
    const parts = rel.split("/");
    const found = await this.#cache(undefined).load(rel, parts);
    if (found === "large") return readBelow(this.dir, join(this.dir, ...parts));
    return found?.identity.bytes;
  }

  /** tiles/<layer>/<run>/<lead>/<z>/<x>/<y>.png of an archive build, read from the lead's archive. */
  async #sendArchived(req: IncomingMessage, res: ServerResponse, parts: string[]): Promise<boolean> {
    const [, layer, token, lead, z, x, y] = parts;
    const path = await this.#archive(archivePath(layer, token, Number(lead)));
    const body = path === null ? null : await archiveTile(path, Number(z), Number(x), Number(y.slice(0, -4)));
    if (body === undefined || body === null) return false;
    sendBytes(req, res, body, "image/png", IMMUTABLE);
    return true;
  }

  /** One tile's PNG bytes, or undefined where the build has none (outside a layer's coverage). */
  async tile(
    layer: string,
    token: string,
    hours: number,
    z: number,
    x: number,
    y: number,
    hidpi = false,
    drawing?: string,
  ): Promise<Buffer | undefined> {
    if (hidpi && this.format === "pmtiles") return undefined;
    if (this.format === "pmtiles") {
      const path = await this.#archive(archivePath(layer, token, hours, drawing));
      const tile = path === null ? null : await archiveTile(path, z, x, y);
      // The catalog lists this lead: a build without its archive is broken, not empty there.
      if (tile === null)
        throw new CorruptDataError(`build ${this.buildId} has no archive for ${layer} ${token} +${hours} h`);
      return tile;
    }
    const file = `${y}${hidpi ? HIDPI_SUFFIX : ""}.png`;
    return this.#bytes(`${tileDir(layer, token, hours, drawing)}/${z}/${x}/${file}`);
  }

  /**
   * The archive's real path if it exists under the build's tiles/ (a symlink out of it, or to
   * another of the build's files, is no archive), else null. The reader opens it with
   * openExactly: a directory of it swapped for a symlink later is refused, not followed.
   */
  async #archive(rel: string): Promise<string | null> {
    const real = await realpath(join(this.dir, rel)).catch(() => null);
    return real?.startsWith(this.dir + sep + "tiles" + sep) ? real : null;
  }

  /** The build's transparent tile, if it has one. */
  emptyTile(): Promise<Buffer | undefined> {
    return this.#bytes(EMPTY_TILE);
  }
}

/** Cache-Control of a build file by its path parts: run tiles never change, the rest each build. */
export function cacheControlOf(parts: readonly string[]): string {
  return parts[0] === "tiles" ? IMMUTABLE : SHORT;
}

const TILE_PARTS = /^\d+$/;

function isTilePath(parts: readonly string[]): boolean {
  return (
    parts.length === 7 &&
    parts[0] === "tiles" &&
    TILE_PARTS.test(parts[4]) &&
    TILE_PARTS.test(parts[5]) &&
    /^\d+\.png$/.test(parts[6]) &&
    Number.isFinite(Number(parts[3]))
  );
}

async function openSnapshot(out: string, target: string): Promise<Snapshot> {
  const dir = await realpath(resolve(out, target));
  const buildId = dir.split(sep).pop() ?? "";
  const catalog = await readBelow(dir, join(dir, "catalog.json"))
    .then((b) => (b === undefined ? undefined : (JSON.parse(b.toString("utf8")) as PublishedCatalog)))
    .catch(() => undefined);
  return new Snapshot(dir, buildId, catalog);
}

export class Published {
  readonly out: string;
  #snap: Snapshot | undefined;
  #target: string | undefined;
  #checkedAt = 0;
  #checking: Promise<Snapshot | undefined> | undefined;

  readonly #onSwitch: (() => void) | undefined;

  /**
   * `onSwitch` hears of every newly adopted build before any request is served from it (the server
   * revalidates the store's metadata then, so routes reading the store move with the catalog).
   */
  constructor(out: string, onSwitch?: () => void) {
    this.out = resolve(out);
    this.#onSwitch = onSwitch;
  }

  /**
   * The published build as of now (undefined before the first publish). Once a build is served,
   * this never waits: a look for a newer one runs beside the request, which keeps the build it got.
   */
  async current(): Promise<Snapshot | undefined> {
    const snap = this.now();
    if (snap) return snap;
    // Nothing open yet: every caller that waits looks at the link (one look in flight at a time),
    // not at the answer of a look made moments before a first publish. /point asks now() for its
    // point copies, so a look may have just found nothing; the map click that follows a publish
    // must still see that build at once.
    this.#checking ??= this.#refresh().finally(() => {
      this.#checking = undefined;
    });
    return this.#checking;
  }

  /**
   * The build being served, without waiting (undefined before the first one is open, when a
   * caller must wait for current()); starts the look for a newer one when it is due, as current().
   */
  now(): Snapshot | undefined {
    if (Date.now() - this.#checkedAt >= CHECK_EVERY_MS) {
      this.#checking ??= this.#refresh().finally(() => {
        this.#checking = undefined;
      });
    }
    return this.#snap;
  }

  async #refresh(): Promise<Snapshot | undefined> {
    this.#checkedAt = Date.now();
    const link = join(this.out, CURRENT);
    let target: string;
    try {
      target = await readlink(link);
    } catch {
      // A plain directory (e.g. synced from elsewhere) also works as the current build.
      try {
        target = await realpath(link);
      } catch {
        this.#snap = undefined;
        this.#target = undefined;
        return undefined;
      }
    }
    if (target === this.#target && this.#snap) return this.#snap;
    try {
      const snap = await openSnapshot(this.out, target);
      this.#onSwitch?.();
      this.#snap = snap;
      this.#target = target;
    } catch {
      // The link moved again or its build was pruned while opening: keep serving what we have.
    }
    return this.#snap;
  }
}
