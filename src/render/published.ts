// The serving side of a published build: follows <out>/current, and when it switches, loads the
// new catalog and indexes and a sirv instance for the new directory. An old build keeps being
// served until the link changes, so readers never see a half build.
import { readFile, readlink, realpath } from "node:fs/promises";
import { join, resolve } from "node:path";
import sirv from "sirv";
import { type Catalog, CURRENT } from "./layout.ts";

type Middleware = (
  req: import("node:http").IncomingMessage,
  res: import("node:http").ServerResponse,
  next: () => void,
) => void;

export interface Snapshot {
  dir: string;
  buildId: string;
  catalog: Catalog | undefined;
  static: Middleware;
  /** Parsed JSON files of this build, loaded on first use. */
  json<T>(rel: string): Promise<T | undefined>;
}

const CHECK_EVERY_MS = 250;

export class Published {
  readonly out: string;
  #snap: Snapshot | undefined;
  #target: string | undefined;
  #checkedAt = 0;
  #checking: Promise<Snapshot | undefined> | undefined;

  constructor(out: string) {
    this.out = resolve(out);
  }

  /** The published build as of now (undefined before the first publish). */
  async current(): Promise<Snapshot | undefined> {
    if (Date.now() - this.#checkedAt < CHECK_EVERY_MS) return this.#snap;
    this.#checking ??= this.#refresh().finally(() => {
      this.#checking = undefined;
    });
    return this.#checking;
  }

  async #refresh(): Promise<Snapshot | undefined> {
    this.#checkedAt = Date.now();
    let target: string;
    try {
      target = await readlink(join(this.out, CURRENT));
    } catch {
      // A plain directory (e.g. synced from elsewhere) also works as the current build.
      try {
        target = await realpath(join(this.out, CURRENT));
      } catch {
        this.#snap = undefined;
        this.#target = undefined;
        return undefined;
      }
    }
    if (target === this.#target && this.#snap) return this.#snap;
    const dir = resolve(this.out, target);
    const cache = new Map<string, Promise<unknown>>();
    const json = <T>(rel: string): Promise<T | undefined> => {
      let p = cache.get(rel);
      if (!p) {
        p = readFile(join(dir, rel), "utf8").then(
          (s) => JSON.parse(s) as unknown,
          () => undefined,
        );
        cache.set(rel, p);
      }
      return p as Promise<T | undefined>;
    };
    const catalog = await json<Catalog>("catalog.json");
    this.#snap = {
      dir,
      buildId: catalog?.build_id ?? target.split("/").pop() ?? "",
      catalog,
      static: sirv(dir, { dev: false, etag: true, dotfiles: false, setHeaders: staticHeaders }) as Middleware,
      json,
    };
    this.#target = target;
    return this.#snap;
  }
}

/** Run-specific tiles never change once published; catalogs and indexes change every build. */
function staticHeaders(res: import("node:http").ServerResponse, pathname: string): void {
  res.setHeader("Access-Control-Allow-Origin", "*");
  if (pathname.startsWith("/tiles/")) res.setHeader("Cache-Control", "public, max-age=31536000, immutable");
  else res.setHeader("Cache-Control", "public, max-age=60");
}
