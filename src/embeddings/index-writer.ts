// Build step: the embedding catalogue (items.json) and the locate indexes, so that serving a
// listing or a locate request never walks the store. Reads item metadata only, never a chunk.
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import pLimit from "p-limit";
import type { Store } from "../store/store.ts";
import { ITEMS_FILE, type ItemsFile, type LocateEntry, type LocateFile, locateFile } from "./index-files.ts";
import { itemGeometry } from "./item-geometry.ts";
import { compareNames, compareVersions, type ItemRef, parseItemPath } from "./names.ts";

/** Item groups whose metadata is fetched at once (matters for an HTTP store). */
const METADATA_CONCURRENCY = 16;

/** The latent's shape and the item's locate entry; undefined for a group without a latent array. */
async function entryFor(store: Store, ref: ItemRef): Promise<LocateEntry | undefined> {
  const base = `embeddings/${ref.path}`;
  const nodes = await store.groupNodes(base);
  const latent = nodes.get(`${base}/latent`);
  if (latent?.kind !== "array" || latent.array?.shape.length !== 3) return undefined;
  const shape = latent.array.shape;
  const g = itemGeometry(ref.tile, nodes.get(base)?.attrs ?? {}, shape);
  return {
    item: ref.name,
    crs: g.crs,
    epsg: g.epsg,
    bbox: g.bbox,
    bbox_utm: g.bbox_utm,
    transform: g.transform,
    shape,
  };
}

async function writeJson(dir: string, rel: string, doc: unknown): Promise<void> {
  const file = join(dir, rel);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(doc)}\n`);
}

/**
 * Write embeddings/items.json and embeddings/locate/<family>~<product>~<period>.json into a build
 * directory. Paths under embeddings/ that are not laid out as items, and item groups without a
 * latent array, are left out: nothing could be served for them.
 */
export async function writeEmbeddingIndexes(store: Store, dir: string): Promise<{ items: number; indexes: number }> {
  const refs = (await store.embeddingItemPaths()).map(parseItemPath).filter((r): r is ItemRef => r !== undefined);
  const limit = pLimit(METADATA_CONCURRENCY);
  const entries = await Promise.all(refs.map((ref) => limit(() => entryFor(store, ref))));

  const names: string[] = [];
  const indexes = new Map<string, LocateFile>();
  const order = refs.map((ref, i) => ({ ref, entry: entries[i] })).sort((a, b) => compareNames(a.ref.name, b.ref.name));
  const versionOf = new Map<string, string>();
  for (const { ref, entry } of order) {
    if (!entry) continue;
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
  return { items: names.length, indexes: indexes.size };
}
