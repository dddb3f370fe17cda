// What every render job shares: the context it writes through, the leads a previous build already
// holds (hard-linked instead of rendered), the slice of a lead's pyramid one part of a job renders,
// and progress reported in batches. render-job.ts (fields and overlays) and orientation-job.ts
// (places and borders) differ only in what they paint.
import { join } from "node:path";
import type { LeadResult } from "../published/manifest.ts";
import type { Store } from "../store/store.ts";
import type { CoverageCache } from "./coverage.ts";
import type { Job, LeadJob } from "./jobs.ts";
import type { TileWriter } from "./write.ts";

export interface RenderContext {
  store: Store;
  /** Absolute build directory being written. */
  buildDir: string;
  maxZoom: number;
  /** Base layers also get 512 px `{y}@2x.png` tiles up to this zoom (-1: none; archives hold none). */
  hidpiMaxZoom: number;
  coverage: CoverageCache;
  /** z/x/y files (TileWriter) or archive parts (published/archive-sink.ts): the same calls. */
  writer: Pick<TileWriter, "ensureDir" | "write" | "link" | "linkTree" | "removeTree">;
  /** Called with the number of tiles just written (progress). */
  onTiles: (n: number) => void;
}

const PROGRESS_EVERY = 256;

/** Counts tiles and reports them every PROGRESS_EVERY; flush() reports the rest. */
export function progress(ctx: RenderContext): { tick(): void; flush(): void } {
  let pending = 0;
  return {
    tick() {
      if (++pending >= PROGRESS_EVERY) {
        ctx.onTiles(pending);
        pending = 0;
      }
    },
    flush() {
      ctx.onTiles(pending);
      pending = 0;
    },
  };
}

export function emptyResult(lead: LeadJob): LeadResult {
  return { key: lead.key, fingerprint: lead.fingerprint, tiles: 0, uniform: 0, encoded: 0, bytes: 0, reused: false };
}

/**
 * Each lead of the job in order: hard-linked from the previous build when that holds every file of
 * it (`job.tilesPerLead` tiles and `hidpiPerLead` @2x tiles), else rendered by `render`. A previous
 * build missing files (trimmed by hand, say) is rendered again.
 */
export async function eachLead(
  ctx: RenderContext,
  job: Job,
  hidpiPerLead: number,
  render: (lead: LeadJob) => Promise<LeadResult>,
): Promise<LeadResult[]> {
  const results: LeadResult[] = [];
  for (const lead of job.leads) {
    if (lead.reuse) {
      const dir = join(ctx.buildDir, lead.dir);
      const linked = ctx.writer.linkTree(lead.reuse.dir, dir);
      if (linked === job.tilesPerLead + hidpiPerLead) {
        // Progress counts 256 px tiles, as the plan does (a rendered lead ticks once per tile,
        // its @2x file included), so the @2x files linked here are not counted again.
        ctx.onTiles(job.tilesPerLead);
        const { uniform, bytes } = lead.reuse;
        const hidpi = hidpiPerLead > 0 ? { hidpi: hidpiPerLead } : {};
        results.push({ ...emptyResult(lead), tiles: job.tilesPerLead, uniform, bytes, ...hidpi, reused: true });
        continue;
      }
      ctx.writer.removeTree(dir);
    }
    results.push(await render(lead));
  }
  return results;
}

/**
 * The tiles of one lead that this job's part renders: a part is one contiguous run of the pyramid,
 * counted z by z in coverage order. `level(z)` gives the zoom's covered tiles as indices x·2^z + y,
 * or their count when every tile of the zoom is covered (in that order); `begin(z)` runs before
 * the first tile of a zoom the part has tiles in; `visit` gets each tile with `<root>/z/x` made.
 */
export async function eachTile(
  ctx: RenderContext,
  job: Job,
  root: string,
  level: (z: number) => ArrayLike<number> | number,
  visit: (z: number, x: number, y: number, dir: string) => void,
  begin?: (z: number) => Promise<void>,
): Promise<void> {
  const part = job.part ?? { index: 0, count: 1 };
  const from = Math.floor((part.index * job.tilesPerLead) / part.count);
  const to = Math.floor(((part.index + 1) * job.tilesPerLead) / part.count);
  let seen = 0;
  for (let z = 0; z <= ctx.maxZoom && seen < to; z++) {
    const got = level(z);
    const tiles = typeof got === "number" ? undefined : got;
    const count = tiles ? tiles.length : (got as number);
    const skip = Math.max(0, from - seen);
    const end = Math.min(count, to - seen);
    seen += count;
    if (skip >= end) continue;
    await begin?.(z);
    const n = 2 ** z;
    let madeX = -1;
    let dir = "";
    for (let k = skip; k < end; k++) {
      const t = tiles ? tiles[k] : k;
      const x = Math.floor(t / n);
      if (x !== madeX) {
        dir = `${root}/${z}/${x}`;
        ctx.writer.ensureDir(dir);
        madeX = x;
      }
      visit(z, x, t - x * n, dir);
    }
  }
}
