// The embedding catalogue in memory: item names of the published build (items.json) with lookups
// by tile and by family/product/period, built once per build. Item reads check names against it;
// without a published catalogue they fall back to one walk of the store, kept for the process.
import { NotFoundError, StoreUnavailableError } from "../errors.ts";
import type { Store } from "../store/store.ts";
import { ITEMS_FILE, type ItemsFile, type LocateFile, locateFile } from "./index-files.ts";
import { compareNames, compareVersions, type ItemRef, parseItemName, parseItemPath } from "./names.ts";

/** What the catalogue reads of one published build: its JSON documents (published/ owns the files). */
export interface BuildDocuments {
  json<T>(path: string): Promise<T | undefined>;
}

/** The build being served now, undefined before the first publish (published/'s Published). */
export interface ServedBuild {
  current(): Promise<BuildDocuments | undefined>;
}

/** The names that exist: every item read is checked against this before the store is touched. */
export interface KeySpace {
  /** Sorted by code unit. */
  names: readonly string[];
  refs: ReadonlyMap<string, ItemRef>;
}

export interface Offer {
  /** Sorted, oldest first. */
  periods: string[];
  versions: string[];
}

export interface Catalogue extends KeySpace {
  /** Tile → names of the items on it. */
  byTile: ReadonlyMap<string, string[]>;
  /** Family → product → what is published of it. */
  offers: ReadonlyMap<string, ReadonlyMap<string, Offer>>;
  /** The locate index of one family/product/period; undefined when the build has none. */
  locate(family: string, product: string, period: string): Promise<LocateFile | undefined>;
}

const fromBuild = new WeakMap<BuildDocuments, Promise<Catalogue | undefined>>();
const fromStore = new WeakMap<Store, Promise<KeySpace>>();

function keySpace(refs: ItemRef[]): KeySpace {
  const sorted = refs.sort((a, b) => compareNames(a.name, b.name));
  return { names: sorted.map((r) => r.name), refs: new Map(sorted.map((r) => [r.name, r])) };
}

async function loadCatalogue(snap: BuildDocuments): Promise<Catalogue | undefined> {
  const file = await snap.json<ItemsFile>(ITEMS_FILE);
  if (!Array.isArray(file?.items)) return undefined;
  const refs: ItemRef[] = [];
  for (const n of file.items) {
    // A damaged index cannot widen the key space beyond well-formed names.
    if (typeof n !== "string") continue;
    try {
      refs.push(parseItemName(n));
    } catch {}
  }
  const space = keySpace(refs);
  const byTile = new Map<string, string[]>();
  const combos = new Set<string>();
  const offers = new Map<string, Map<string, Offer>>();
  for (const r of space.refs.values()) {
    const onTile = byTile.get(r.tile);
    if (onTile) onTile.push(r.name);
    else byTile.set(r.tile, [r.name]);
    combos.add(locateFile(r.family, r.product, r.period));
    let products = offers.get(r.family);
    if (!products) offers.set(r.family, (products = new Map()));
    let offer = products.get(r.product);
    if (!offer) products.set(r.product, (offer = { periods: [], versions: [] }));
    if (!offer.periods.includes(r.period)) offer.periods.push(r.period);
    if (!offer.versions.includes(r.version)) offer.versions.push(r.version);
  }
  for (const products of offers.values()) {
    for (const o of products.values()) {
      o.periods.sort(compareNames);
      o.versions.sort(compareVersions);
    }
  }
  return {
    ...space,
    byTile,
    offers,
    // Only files the catalogue names are opened, so odd query values never reach the disk.
    locate: async (family, product, period) => {
      const rel = locateFile(family, product, period);
      return combos.has(rel) ? snap.json<LocateFile>(rel) : undefined;
    },
  };
}

function catalogueOf(snap: BuildDocuments): Promise<Catalogue | undefined> {
  let p = fromBuild.get(snap);
  if (!p) {
    p = loadCatalogue(snap);
    fromBuild.set(snap, p);
  }
  return p;
}

/** The published build's catalogue; StoreUnavailableError (503) when there is none yet. */
export async function publishedCatalogue(published: ServedBuild): Promise<Catalogue> {
  const snap = await published.current();
  if (!snap) throw new StoreUnavailableError("no build is published yet; run gridcast build first");
  const cat = await catalogueOf(snap);
  if (!cat) throw new StoreUnavailableError("the published build has no embedding catalogue; rebuild it");
  return cat;
}

/** Published catalogue when there is one, else the items found by walking the store once. */
export async function itemKeySpace(published: ServedBuild, store: Store): Promise<KeySpace> {
  const snap = await published.current();
  const cat = snap && (await catalogueOf(snap));
  if (cat) return cat;
  let s = fromStore.get(store);
  if (!s) {
    s = store
      .embeddingItemPaths()
      .then((paths) => keySpace(paths.map(parseItemPath).filter((r): r is ItemRef => r !== undefined)));
    s.catch(() => fromStore.delete(store));
    fromStore.set(store, s);
  }
  return s;
}

/** A requested item: 400 when the name is malformed, 404 when no such item exists. */
export function requireItem(space: KeySpace, name: string): ItemRef {
  const parsed = parseItemName(name);
  const ref = space.refs.get(parsed.name);
  if (!ref) throw new NotFoundError(`no embedding item "${name}"`, { item: name });
  return ref;
}
