// The orientation layer's job: every tile of z0..max zoom (it covers the world), drawn from each
// zoom's global label placement and line buckets (render/orientation.ts), as RGBA PNGs, and up to
// the build's high-DPI zoom the 512 px {y}@2x.png of each, drawn at twice the scale (lines twice
// as wide in pixels, labels rendered at twice the size), so that a dense screen shows them sharp
// at the same size. Tiles with nothing on them (open ocean) are one encoded empty tile per size,
// hard-linked.
import { join } from "node:path";
import { HIDPI_SUFFIX } from "../published/layout.ts";
import type { LeadResult } from "../published/manifest.ts";
import { hidpiLabels, paintOrientationTile, zoomLayout } from "../render/orientation.ts";
import { encodeRgbaPng, type TileBoxes } from "../render/png.ts";
import type { LabelMask } from "../render/text.ts";
import { HIDPI_SIZE, TILE_SIZE } from "../render/tiles.ts";
import { eachLead, eachTile, emptyResult, progress, type RenderContext } from "./job-walk.ts";
import type { Job } from "./jobs.ts";
import { layerHidpiMax } from "./layer-spec.ts";

/** The highest zoom with @2x orientation tiles in a build (-1: none): layerHidpiMax's answer. */
export const orientationHidpiMax = (ctx: Pick<RenderContext, "hidpiMaxZoom" | "maxZoom">): number =>
  layerHidpiMax("orientation", Math.min(ctx.hidpiMaxZoom, ctx.maxZoom));

export async function renderOrientationJob(ctx: RenderContext, job: Job): Promise<LeadResult[]> {
  const rgba = new Uint8Array(TILE_SIZE * TILE_SIZE * 4);
  const big = new Uint8Array(HIDPI_SIZE * HIDPI_SIZE * 4);
  const hidpiMax = orientationHidpiMax(ctx);
  let hidpiPerLead = 0;
  for (let z = 0; z <= hidpiMax; z++) hidpiPerLead += 4 ** z;
  const counter = progress(ctx);
  const results = await eachLead(ctx, job, hidpiPerLead, async (lead) => {
    const result = emptyResult(lead);
    let empty: string | undefined;
    let empty2x: string | undefined;
    let layout: Awaited<ReturnType<typeof zoomLayout>>;
    let masks2x: LabelMask[] | undefined;
    const begin = async (z: number) => {
      layout = await zoomLayout(z);
      masks2x = z <= hidpiMax ? await hidpiLabels(layout) : undefined;
    };
    const write = (
      path: string,
      pixels: Uint8Array,
      size: number,
      drawn: boolean,
      emptyPath: string | undefined,
      boxes: TileBoxes,
    ) => {
      if (!drawn && emptyPath !== undefined) {
        ctx.writer.link(emptyPath, path);
        return emptyPath;
      }
      // The labels' boxes ride in the PNG: the viewer hides a name that meets a weather mark.
      const png = encodeRgbaPng(pixels, size, size, boxes.length ? { boxes } : {});
      ctx.writer.write(path, png);
      result.encoded++;
      result.bytes += png.length;
      return drawn ? emptyPath : path;
    };
    const visit = (_z: number, x: number, y: number, dir: string) => {
      const boxes: TileBoxes = [];
      const drawn = paintOrientationTile(layout, x, y, rgba, undefined, boxes);
      empty = write(`${dir}/${y}.png`, rgba, TILE_SIZE, drawn, empty, boxes);
      if (!drawn) result.uniform++;
      result.tiles++;
      if (masks2x) {
        const boxes2x: TileBoxes = [];
        const drawn2x = paintOrientationTile(layout, x, y, big, masks2x, boxes2x);
        empty2x = write(`${dir}/${y}${HIDPI_SUFFIX}.png`, big, HIDPI_SIZE, drawn2x, empty2x, boxes2x);
        result.hidpi = (result.hidpi ?? 0) + 1;
      }
      counter.tick();
    };
    await eachTile(ctx, job, join(ctx.buildDir, lead.dir), (z) => 4 ** z, visit, begin);
    return result;
  });
  counter.flush();
  return results;
}
