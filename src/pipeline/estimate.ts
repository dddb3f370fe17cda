// What a build will take on disk, worked out before it runs (gridcast start says it): from the
// same plan the build runs, counted the way a file system stores it (whole blocks per file,
// directories too). Tile sizes cannot be known without drawing, so a few tiles of every layer and zoom are drawn by
// the build's own renderers into memory, measured and scaled to the zoom's tile count; the point
// copies are packed on a few block rows; the documents (catalog, TileJSON, legends, WMTS, the
// viewer, their compressed twins, the embedding indexes) are written for real into a scratch
// directory and measured.
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeEmbeddingIndexes } from "../embeddings/index-writer.ts";
import { HIDPI_SUFFIX, MANIFEST } from "../published/layout.ts";
import { diskBytes } from "../published/measure.ts";
import { writePlaces } from "../published/places.ts";
import { precompressBuild } from "../published/precompress.ts";
import { copyViewerVendor } from "../published/vendor.ts";
import { loadPlaces, ORIENTATION_LAYER_ID } from "../render/orientation.ts";
import type { Store } from "../store/store.ts";
import { writeBuildDocs } from "./catalog.ts";
import type { CoverageCache } from "./coverage.ts";
import type { RenderContext } from "./job-walk.ts";
import type { Job } from "./jobs.ts";
import type { BuildManifest } from "./layer-spec.ts";
import { layerHidpiMax } from "./layer-spec.ts";
import { renderOrientationJob } from "./orientation-job.ts";
import type { Plan } from "./plan.ts";
import { estimateCopyFiles } from "./point-copy.ts";
import { renderJob } from "./render-job.ts";

/** Tiles drawn per layer and zoom to measure (fewer where the zoom has fewer). */
export const SAMPLES_PER_ZOOM = 24;

/** Bytes on disk of each part of a build, in whole blocks. */
export interface DiskEstimate {
  block: number;
  /** 256 px tile files (one-colour tiles are hard links: no blocks of their own). */
  tiles: number;
  /** 512 px @2x tile files. */
  hidpi: number;
  /** The folders of the tile tree (tiles/<layer>/<run>/<lead>/<z>/<x>/). */
  dirs: number;
  point_copies: number;
  /** Catalog, TileJSON, legends, WMTS, manifest, viewer and vendor files, compressed twins, embedding indexes. */
  documents: number;
  total: number;
  /** Tiles drawn to measure. */
  sampled: number;
}

export interface EstimateOptions {
  store: Store;
  /** The coverage the plan was made with (its levels are solved already). */
  coverage: CoverageCache;
  /** File-system block size where the build goes. */
  block: number;
  /** Base layers' @2x tiles up to this zoom (-1: none), as the build's. */
  hidpiMax: number;
  /** Point copies made (default true, as a build). */
  pointCopy?: boolean;
  /** The viewer's directory copied into the build (null: none). */
  webDir?: string | null;
}

const blocksOf = (bytes: number, block: number) => Math.ceil(bytes / block) * block;

/** A directory entry's bytes on ext4 (8 bytes and the name, in 4-byte steps). */
const entryBytes = (name: string) => 8 + Math.ceil(name.length / 4) * 4;

/**
 * A directory's bytes on disk: one block while its entries fit (with "." and ".."), else an
 * indexed directory (a root block and leaves filled about three quarters).
 */
function dirBytes(entries: number, nameBytes: number, block: number): number {
  const bytes = 24 + entries * nameBytes;
  return bytes <= block ? block : block * (1 + Math.ceil(bytes / (0.75 * block)));
}

/** The file writer a sample renders through: nothing is written, sizes are kept by path. */
class Measured {
  readonly sizes = new Map<string, number>();
  ensureDir(): void {}
  write(path: string, bytes: Uint8Array): void {
    this.sizes.set(path, bytes.length);
  }
  link(_src: string, dst: string): void {
    // A one-colour tile: a hard link in the build, no blocks of its own.
    this.sizes.set(dst, 0);
  }
  linkTree(): undefined {
    return undefined;
  }
  removeTree(): void {}
}

/** Tiles of level `level` at positions spread through its drawing order. */
function picks(count: number): number[] {
  const n = Math.min(count, SAMPLES_PER_ZOOM);
  return [...new Set(Array.from({ length: n }, (_, i) => Math.floor(((i + 0.5) * count) / n)))];
}

/** Distinct x columns among a zoom's tiles (x * 2^z + y, x-major). */
function columns(level: Uint32Array | number, z: number): { columns: number; tiles: number } {
  if (typeof level === "number") return { columns: Math.min(level, 2 ** z), tiles: level };
  const n = 2 ** z;
  let cols = 0;
  let last = -1;
  for (const t of level) {
    const x = Math.floor(t / n);
    if (x !== last) cols++;
    last = x;
  }
  return { columns: cols, tiles: level.length };
}

/**
 * tileBytes with a scratch build directory for what a render job writes beside its tiles as plain
 * files (the wind files), removed afterwards: nothing lands in the working directory.
 */
async function tileBytes(
  plan: Plan,
  o: EstimateOptions,
): Promise<Pick<DiskEstimate, "tiles" | "hidpi" | "dirs" | "sampled">> {
  const scratch = mkdtempSync(join(tmpdir(), "gridcast-estimate-tiles-"));
  try {
    return await tileBytesIn(plan, o, scratch);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Draws a few tiles of every layer and zoom and scales their blocks to the plan's tile counts. */
async function tileBytesIn(
  plan: Plan,
  o: EstimateOptions,
  buildDir: string,
): Promise<Pick<DiskEstimate, "tiles" | "hidpi" | "dirs" | "sampled">> {
  const { block } = o;
  let tiles = 0;
  let hidpi = 0;
  let dirs = 0;
  let sampled = 0;
  const writer = new Measured();
  const ctx: RenderContext = {
    store: o.store,
    buildDir,
    maxZoom: plan.maxZoom,
    hidpiMaxZoom: o.hidpiMax,
    coverage: o.coverage,
    writer,
    onTiles: () => {},
  };
  const leadsOf = new Map<string, number>();
  const runsOf = new Map<string, number>();
  for (const j of plan.jobs) {
    leadsOf.set(j.layer, (leadsOf.get(j.layer) ?? 0) + j.leads.length);
    runsOf.set(j.layer, (runsOf.get(j.layer) ?? 0) + 1);
  }
  for (const layer of plan.layers) {
    const job = plan.jobs.find((j) => j.layer === layer.id);
    const leads = leadsOf.get(layer.id) ?? 0;
    if (!job || leads === 0) continue;
    const top2x = layerHidpiMax(layer.recipe.kind, Math.min(o.hidpiMax, plan.maxZoom));
    const draw = layer.recipe.kind === "orientation" ? renderOrientationJob : renderJob;
    // The layer's folder and its runs' folders, then per lead its own, one per zoom and one per x column.
    dirs += block * (1 + (runsOf.get(layer.id) ?? 0));
    let offset = 0;
    let perLead = block;
    // The leads samples are drawn from (an amount is nothing at lead 0 and fills in later): a
    // few, each sample from one of them in turn, drawn lead by lead so each field is read once.
    const from = [...new Set([0, job.leads.length >> 1, job.leads.length - 1])].map((i) => job.leads[i]);
    const tasks: { z: number; part: number; lead: (typeof from)[number] }[] = [];
    const perZoom: { count: number; drawn: number; one: number; two: number }[] = [];
    for (let z = 0; z <= plan.maxZoom; z++) {
      const level = plan.tileLevel(layer.id, z);
      const { columns: cols, tiles: count } = columns(level, z);
      const names = entryBytes(`${2 ** z - 1}.png`) + (z <= top2x ? entryBytes(`${2 ** z - 1}${HIDPI_SUFFIX}.png`) : 0);
      perLead += dirBytes(cols, entryBytes(String(2 ** z - 1)), block);
      perLead += cols * dirBytes(Math.ceil(count / Math.max(1, cols)), names, block);
      const at = picks(count);
      for (const [i, k] of at.entries()) tasks.push({ z, part: offset + k, lead: from[(z + i) % from.length] });
      perZoom.push({ count, drawn: at.length, one: 0, two: 0 });
      offset += count;
    }
    tasks.sort((a, b) => a.lead.index - b.lead.index);
    for (const t of tasks) {
      writer.sizes.clear();
      const sample: Job = {
        ...job,
        leads: [{ ...t.lead, reuse: undefined }],
        // One tile: the part of the lead's pyramid that is just this tile, in drawing order.
        part: { index: t.part, count: job.tilesPerLead },
      };
      const [drawn] = await draw(ctx, sample);
      sampled++;
      // A one-colour tile is a hard link to the first of its colour in the build: no blocks.
      if ((drawn?.uniform ?? 0) > 0) continue;
      for (const [path, bytes] of writer.sizes) {
        if (path.endsWith(`${HIDPI_SUFFIX}.png`)) perZoom[t.z].two += blocksOf(bytes, block);
        else perZoom[t.z].one += blocksOf(bytes, block);
      }
    }
    for (const q of perZoom) {
      if (q.drawn === 0) continue;
      tiles += (q.one / q.drawn) * q.count * leads;
      hidpi += (q.two / q.drawn) * q.count * leads;
    }
    dirs += perLead * leads;
  }
  return { tiles, hidpi, dirs, sampled };
}

/** The documents a build writes beside its tiles, written into a scratch directory and measured. */
async function documentBytes(plan: Plan, o: EstimateOptions): Promise<number> {
  const scratch = mkdtempSync(join(tmpdir(), "gridcast-estimate-"));
  try {
    const manifest: BuildManifest = {
      format: 1,
      build_id: "estimate",
      created_at: new Date().toISOString(),
      max_zoom: plan.maxZoom,
      hidpi_max_zoom: o.hidpiMax,
      renderer: "",
      plan: plan.hash,
      shard: null,
      shards: 1,
      layers: plan.layers,
      // One entry a lead, as the build's (its figures do not change the manifest's size much).
      entries: plan.jobs.flatMap((j) =>
        j.leads.map((l) => ({
          key: l.key,
          fingerprint: l.fingerprint,
          layer: j.layer,
          run: j.runIso,
          lead: l.hours,
          shard: 1,
          tiles: j.tilesPerLead,
          uniform: 0,
          encoded: j.tilesPerLead,
          bytes: 0,
          reused: false,
        })),
      ),
      totals: { layers: plan.layers.length, entries: 0, rendered: 0, reused: 0, tiles: 0, encoded: 0 },
    };
    writeBuildDocs(scratch, manifest);
    // The viewer's place search, as finalize writes it when the build has the orientation layer.
    if (manifest.layers.some((l) => l.id === ORIENTATION_LAYER_ID)) writePlaces(scratch, loadPlaces());
    writeFileSync(join(scratch, MANIFEST), JSON.stringify(manifest, null, 1));
    await writeEmbeddingIndexes(o.store, scratch);
    if (o.webDir && existsSync(o.webDir)) {
      cpSync(o.webDir, scratch, { recursive: true, dereference: true, force: false, errorOnExist: false });
      copyViewerVendor(scratch);
    }
    precompressBuild(scratch);
    return diskBytes(scratch);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** What the planned build will take on disk, part by part. */
export async function estimateBuild(plan: Plan, o: EstimateOptions): Promise<DiskEstimate> {
  const drawn = await tileBytes(plan, o);
  const copies = o.pointCopy === false ? [] : await estimateCopyFiles(o.store, plan.layers);
  const point_copies = copies.reduce((n, b) => n + blocksOf(b, o.block), copies.length > 0 ? o.block : 0);
  const documents = await documentBytes(plan, o);
  const total = drawn.tiles + drawn.hidpi + drawn.dirs + point_copies + documents;
  return { block: o.block, ...drawn, point_copies, documents, total, sampled: drawn.sampled };
}
