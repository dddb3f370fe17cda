// The orientation layer's job: every tile of z0..max zoom (it covers the world), drawn from each
// zoom's global label placement and line buckets (render/orientation.ts), as RGBA PNGs. Tiles with
// nothing on them (open ocean) are one encoded empty tile, hard-linked.
import { join } from "node:path";
import { paintOrientationTile, zoomLayout } from "../orientation.ts";
import { encodeRgbaPng } from "../png.ts";
import { TILE_SIZE } from "../tiles.ts";
import type { Job } from "./plan.ts";
import type { LeadResult, RenderContext } from "./render-job.ts";

const PROGRESS_EVERY = 256;

export async function renderOrientationJob(ctx: RenderContext, job: Job): Promise<LeadResult[]> {
  const rgba = new Uint8Array(TILE_SIZE * TILE_SIZE * 4);
  const results: LeadResult[] = [];
  let pending = 0;
  for (const lead of job.leads) {
    const result: LeadResult = {
      key: lead.key,
      fingerprint: lead.fingerprint,
      tiles: 0,
      uniform: 0,
      encoded: 0,
      bytes: 0,
      reused: false,
    };
    if (lead.reuse) {
      const linked = ctx.writer.linkTree(lead.reuse.dir, join(ctx.buildDir, lead.dir));
      if (linked === job.tilesPerLead) {
        ctx.onTiles(linked);
        results.push({ ...result, tiles: linked, uniform: lead.reuse.uniform, bytes: lead.reuse.bytes, reused: true });
        continue;
      }
      ctx.writer.removeTree(join(ctx.buildDir, lead.dir));
    }
    const root = join(ctx.buildDir, lead.dir);
    const part = job.part ?? { index: 0, count: 1 };
    const from = Math.floor((part.index * job.tilesPerLead) / part.count);
    const to = Math.floor(((part.index + 1) * job.tilesPerLead) / part.count);
    let empty: string | undefined;
    let seen = 0;
    for (let z = 0; z <= ctx.maxZoom && seen < to; z++) {
      const n = 2 ** z;
      const count = n * n;
      const skip = Math.max(0, from - seen);
      const end = Math.min(count, to - seen);
      seen += count;
      if (skip >= end) continue;
      const layout = await zoomLayout(z);
      let madeX = -1;
      for (let k = skip; k < end; k++) {
        const x = Math.floor(k / n);
        const y = k - x * n;
        const dir = `${root}/${z}/${x}`;
        if (x !== madeX) {
          ctx.writer.ensureDir(dir);
          madeX = x;
        }
        const path = `${dir}/${y}.png`;
        const drawn = paintOrientationTile(layout, x, y, rgba);
        if (!drawn && empty !== undefined) {
          ctx.writer.link(empty, path);
        } else {
          const png = encodeRgbaPng(rgba, TILE_SIZE, TILE_SIZE);
          ctx.writer.write(path, png);
          result.encoded++;
          result.bytes += png.length;
          if (!drawn) empty = path;
        }
        if (!drawn) result.uniform++;
        result.tiles++;
        if (++pending >= PROGRESS_EVERY) {
          ctx.onTiles(pending);
          pending = 0;
        }
      }
    }
    results.push(result);
  }
  ctx.onTiles(pending);
  return results;
}
