// Build step: the embedding catalogue (items.json), the locate indexes and the STAC index, so that
// serving a listing, a locate request or a STAC search never walks the store. Reads item metadata and the items' small
// coordinate arrays, never a latent chunk. Every array below embeddings/ is accounted for: served
// as (part of) an item, or reported with the reason it is not.
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import pLimit from "p-limit";
import { GridcastError } from "../errors.ts";
import type { Store } from "../store/store.ts";
import { ITEMS_FILE, type ItemsFile, type LocateFile, locateFile, type SurveyEntry } from "./index-files.ts";
import { openItem } from "./item.ts";
import { compareNames, compareVersions, type ItemRef, parseItemPath } from "./names.ts";
import { stacIndexes } from "./stac/index-writer.ts";

export type { SurveyEntry };

/** Item groups whose metadata is fetched at once (matters for an HTTP store). */
const METADATA_CONCURRENCY = 16;
/** How deep below embeddings/ the walk looks for arrays (items sit at 7, their arrays at 8). */
const MAX_DEPTH = 12;
const LAYOUT = "<family>/rf/<version>/base/<product>/<YYYY_MM_DD>_<YYYY_MM_DD>/<MGRS tile>";

/** Something below embeddings/ that is not served, and why. */
export interface SkippedEmbedding {
  /** Store path of the array or item group. */
  path: string;
  reason: string;
}

export interface EmbeddingSurvey {
  entries: SurveyEntry[];
  skipped: SkippedEmbedding[];
}

/** Every array below embeddings/ (store paths), and the groups at item depth holding none. */
async function walk(store: Store): Promise<{ arrays: string[]; groups: string[] }> {
  const arrays: string[] = [];
  const groups: string[] = [];
  const limit = pLimit(METADATA_CONCURRENCY);
  const visit = async (path: string, depth: number): Promise<void> => {
    const meta = await limit(() => store.node(path));
    if (meta?.kind === "array") {
      arrays.push(path);
      return;
    }
    if (depth === 7) groups.push(path);
    if (depth >= MAX_DEPTH) return;
    const kids = await limit(() => store.children(path));
    await Promise.all(kids.map((k) => visit(`${path}/${k}`, depth + 1)));
  };
  // Writers of Zarr v2 need not write .zgroup for the groups above an item: a directory will do.
  const present =
    (await store.node("embeddings")) !== undefined ||
    (await store.children("").catch(() => [] as string[])).includes("embeddings");
  if (!present) return { arrays, groups };
  await visit("embeddings", 0);
  return { arrays: arrays.sort(), groups: groups.sort() };
}

/**
 * What the store's embeddings come to: a locate entry per servable item, and every array or item
 * group that is not served with the reason. Item names are the item paths, so they stay the same
 * from one build to the next.
 */
export async function surveyEmbeddings(store: Store): Promise<EmbeddingSurvey> {
  const { arrays, groups } = await walk(store);
  const skipped: SkippedEmbedding[] = [];
  const items = new Map<string, ItemRef>();
  for (const path of arrays) {
    const parts = path.split("/").slice(1);
    const ref = parts.length >= 8 ? parseItemPath(parts.slice(0, 7).join("/")) : undefined;
    if (!ref) {
      skipped.push({ path, reason: `not inside an item group embeddings/${LAYOUT}` });
    } else if (parts.length > 8) {
      skipped.push({
        path,
        reason: `nested below item ${ref.name}: an item's arrays are direct children of its group`,
      });
    } else {
      items.set(ref.name, ref);
    }
  }
  for (const g of groups) {
    const ref = parseItemPath(g.split("/").slice(1).join("/"));
    if (ref && !items.has(ref.name)) skipped.push({ path: g, reason: `item group ${ref.name} holds no arrays` });
  }
  const limit = pLimit(METADATA_CONCURRENCY);
  const refs = [...items.values()];
  const opened = await Promise.all(
    refs.map((ref) =>
      limit(async () => {
        try {
          return await openItem(store, ref);
        } catch (e) {
          if (!(e instanceof GridcastError)) throw e;
          skipped.push({ path: `embeddings/${ref.path}`, reason: e.message });
          return undefined;
        }
      }),
    ),
  );
  const entries: EmbeddingSurvey["entries"] = [];
  for (const item of opened) {
    if (!item) continue;
    const g = item.geometry;
    for (const u of item.layout.unused)
      skipped.push({ path: `embeddings/${item.ref.path}/${u.name}`, reason: u.reason });
    entries.push({
      ref: item.ref,
      entry: {
        item: item.ref.name,
        crs: g.crs,
        epsg: g.epsg,
        proj: g.proj,
        bbox: g.bbox,
        bbox_utm: g.bbox_utm,
        transform: g.transform,
        shape: [...item.layout.axes.shape],
      },
      latent: { dims: [...item.layout.axes.names], dtype: item.latent.dtype, quantization: item.layout.scheme.kind },
    });
  }
  skipped.sort((a, b) => compareNames(a.path, b.path));
  return { entries, skipped };
}

async function writeJson(dir: string, rel: string, doc: unknown): Promise<void> {
  const file = join(dir, rel);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(doc)}\n`);
}

/**
 * Write embeddings/items.json and embeddings/locate/<family>~<product>~<period>.json into a build
 * directory; returns the counts and what was not served (with reasons) for the build's report.
 */
export async function writeEmbeddingIndexes(
  store: Store,
  dir: string,
): Promise<{ items: number; indexes: number; skipped: SkippedEmbedding[] }> {
  const { entries, skipped } = await surveyEmbeddings(store);
  const names: string[] = [];
  const indexes = new Map<string, LocateFile>();
  const order = entries.sort((a, b) => compareNames(a.ref.name, b.ref.name));
  const versionOf = new Map<string, string>();
  for (const { ref, entry } of order) {
    names.push(ref.name);
    const rel = locateFile(ref.family, ref.product, ref.period);
    let index = indexes.get(rel);
    if (!index) {
      index = { family: ref.family, product: ref.product, period: ref.period, tiles: {} };
      indexes.set(rel, index);
    }
    // One entry per tile: with several versions of an item, the highest version is located.
    const key = `${rel}|${ref.tile}`;
    const seen = versionOf.get(key);
    if (seen === undefined || compareVersions(ref.version, seen) > 0) {
      index.tiles[ref.tile] = entry;
      versionOf.set(key, ref.version);
    }
  }
  const items: ItemsFile = { items: names };
  await writeJson(dir, ITEMS_FILE, items);
  for (const [rel, index] of indexes) await writeJson(dir, rel, index);
  // The STAC index comes from the same survey: no second walk of the store.
  for (const [rel, doc] of stacIndexes(order)) await writeJson(dir, rel, doc);
  return { items: names.length, indexes: indexes.size, skipped };
}
