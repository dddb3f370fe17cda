// The orientation layer's job: every tile of z0..max zoom (it covers the world), drawn from each
// zoom's global label placement and line buckets (render/orientation.ts), as RGBA PNGs. Tiles with
// nothing on them (open ocean) are one encoded empty tile, hard-linked.
import { join } from "node:path";
import type { LeadResult } from "../published/manifest.ts";
import { paintOrientationTile, zoomLayout } from "../render/orientation.ts";
import { encodeRgbaPng } from "../render/png.ts";
import { TILE_SIZE } from "../render/tiles.ts";
import { eachLead, eachTile, emptyResult, progress, type RenderContext } from "./job-walk.ts";
import type { Job } from "./jobs.ts";

export async function renderOrientationJob(ctx: RenderContext, job: Job): Promise<LeadResult[]> {
  const rgba = new Uint8Array(TILE_SIZE * TILE_SIZE * 4);
  const counter = progress(ctx);
  const results = await eachLead(ctx, job, 0, async (lead) => {
    const result = emptyResult(lead);
    let empty: string | undefined;
    let layout: Awaited<ReturnType<typeof zoomLayout>>;
    const begin = async (z: number) => {
      layout = await zoomLayout(z);
    };
    const visit = (_z: number, x: number, y: number, dir: string) => {
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
      counter.tick();
    };
    await eachTile(ctx, job, join(ctx.buildDir, lead.dir), (z) => 4 ** z, visit, begin);
    return result;
  });
  counter.flush();
  return results;
}
