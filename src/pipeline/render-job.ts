// One job: the leads of one layer-run. Each lead's (lat, lon) field is read once, then every
// zoom level is sampled through tables solved once per grid and level. Tiles of one colour are
// encoded once per job and hard-linked; a lead whose fingerprint the previous build already has
// is hard-linked from there instead of rendered.
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { BoundedMap } from "../bounded-map.ts";
import { StoreUnavailableError } from "../errors.ts";
import { readBulk, readValues, regionOf } from "../forecast/read.ts";
import { HIDPI_SUFFIX, windPaths } from "../published/layout.ts";
import type { LeadResult } from "../published/manifest.ts";
import { displayUnit, toDisplay } from "../registry/display.ts";
import { arrowSpacing, renderArrows } from "../render/arrows.ts";
import { buildPalette, onAxis, type Palette } from "../render/colormap.ts";
import { finiteRange, prepareContourText } from "../render/contour-labels.ts";
import { renderContours } from "../render/contours.ts";
import { KeptNames } from "../render/label-rank.ts";
import { hatchMissing, MISSING_PALETTE, missingNodes, withHatch } from "../render/no-data.ts";
import { OVERLAY_BYTES } from "../render/overlay-paint.ts";
import { OVERLAY_PALETTE, quantizeOverlay } from "../render/overlay-palette.ts";
import { encodeIndexedPng, type TileBoxes } from "../render/png.ts";
import type { LevelSampler } from "../render/resample.ts";
import { HIDPI_SIZE, TILE_SIZE } from "../render/tiles.ts";
import { isUniform } from "../render/uniform.ts";
import { encodeWindField } from "../render/wind-field.ts";
import type { ForecastGroup, GroupVariable } from "../store/store.ts";
import { coverageKey } from "./coverage.ts";
import { eachLead, eachTile, emptyResult, progress, type RenderContext } from "./job-walk.ts";
import type { Job, LeadJob } from "./jobs.ts";
import { layerHidpiMax } from "./layer-spec.ts";
import { TileWriter } from "./write.ts";

/**
 * Whether a lead is the only one this job renders from its chunks along the lead axis: then its
 * field is read in bulk outside the chunk cache (readBulk: only the part of each chunk it lies in
 * is decoded), else through the cache, so the job's other leads find the chunks decoded.
 */
function aloneInChunks(v: GroupVariable, job: Job, lead: number): boolean {
  const d = v.roles.indexOf("lead");
  if (d < 0) return false;
  const step = v.array.chunks[d];
  const at = Math.floor(lead / step);
  return job.leads.filter((l) => !l.reuse && Math.floor(l.index / step) === at).length === 1;
}

type Field = Float32Array | Float64Array;

/**
 * What this thread read and prepared lately: the parts of a split pyramid (job-split.ts) that land
 * on one thread read their lead's fields, and prepare them for their layer, once. Nothing that
 * draws a field writes into it (prepare and the painters make new arrays), so one array serves all.
 */
const recentFields = new BoundedMap<string, Promise<Field>>(4);
const recentPrepared = new BoundedMap<string, Promise<Field[]>>(4);

/** The kept promise under `key`, else make's (kept unless it fails: the next asks afresh and reports). */
function kept<T>(memo: BoundedMap<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
  let p = memo.get(key);
  if (!p) {
    p = make();
    memo.set(key, p);
    p.catch(() => memo.delete(key));
  }
  return p;
}

/**
 * The (lat, lon) field of one run, lead and level, in C order whatever the storage order, in the
 * units the style is in. Ensemble variables draw the control member (regionOf's default).
 */
function readField(group: ForecastGroup, v: GroupVariable, job: Job, lead: number): Promise<Field> {
  const key = [group.id, v.name, job.run, lead, job.levelIndex].join("\0");
  return kept(recentFields, key, () => readFieldOnce(group, v, job, lead));
}

async function readFieldOnce(
  group: ForecastGroup,
  v: GroupVariable,
  job: Job,
  lead: number,
): Promise<Float32Array | Float64Array> {
  const region = regionOf(group, v, { run: job.run, lead, level: job.levelIndex ?? undefined });
  const field = await (aloneInChunks(v, job, lead) ? readBulk(v, region) : readValues(v, region));
  const latDim = v.roles.indexOf("lat");
  const lonDim = v.roles.indexOf("lon");
  if (latDim < lonDim) return field;
  // Stored (lon, lat): transpose so rows are latitudes.
  const nlat = v.array.shape[latDim];
  const nlon = v.array.shape[lonDim];
  const out = new (field.constructor as Float32ArrayConstructor)(field.length);
  for (let j = 0; j < nlon; j++) for (let i = 0; i < nlat; i++) out[i * nlon + j] = field[j * nlat + i];
  return out;
}

/**
 * Draws one tile's palette indices into `out`; an overlay painter answers the boxes of its marks
 * (isobars' line labels and H/L, arrows' heads; tile pixels), which the tile's PNG carries for the
 * viewer's place names to avoid.
 */
type TilePainter = (
  sampler: LevelSampler,
  x: number,
  y: number,
  fields: Field[],
  out: Uint8Array,
  scale?: number,
  size?: number,
) => TileBoxes | undefined;

/**
 * How a job's recipe turns source fields into tile indices, and with which palette. Overlays are
 * drawn anti-aliased in RGBA, then quantised to OVERLAY_PALETTE (shades × alpha levels).
 */
function painterOf(
  job: Job,
  cellDeg: number,
  maxZoom: number,
): { palette: Pick<Palette, "rgba">; prepare: (fields: Field[]) => Promise<Field[]>; paint: TilePainter } {
  const { recipe } = job;
  // The big places' names overlays give way to, per screen zoom, at scale 1 and 2 (@2x quarters):
  // placed before the first lead is drawn (once per thread), looked up synchronously while painting.
  const names = new Map<string, KeptNames>();
  const keepReady = async () => {
    if (!recipe.keep_names) return;
    for (let z = 0; z <= maxZoom; z++) {
      for (const k of [1, 2]) if (!names.has(`${z}@${k}`)) names.set(`${z}@${k}`, await KeptNames.of(z, k));
    }
  };
  const keepAt = (screenZ: number, k: number) => (recipe.keep_names ? names.get(`${screenZ}@${k}`) : undefined);
  const ramp = buildPalette(job.style);
  const overlay = { rgba: OVERLAY_PALETTE };
  const rgba1x = new Uint8Array(OVERLAY_BYTES);
  let rgba2x: Uint8Array | undefined;
  const rgbaOf = (size: number) => (size === HIDPI_SIZE ? (rgba2x ??= new Uint8Array(size * size * 4)) : rgba1x);
  // The data's cell in world pixels at a zoom level (overlays adapt their lattices to it).
  const cellPx = (z: number) => (cellDeg / 360) * TILE_SIZE * 2 ** z;
  const withMissing = (drawn: Field, values: Field): Field[] => {
    const missing = missingNodes(values);
    return missing ? [drawn, missing] : [drawn];
  };
  const missingIndices = new Uint8Array(TILE_SIZE * TILE_SIZE);
  const paintBase = (s: LevelSampler, x: number, y: number, f: Field, missing: Field | undefined, out: Uint8Array) => {
    s.renderTile(x, y, f, ramp, out, recipe.resample);
    if (missing) {
      s.renderTile(x, y, missing, MISSING_PALETTE, missingIndices, recipe.resample);
      hatchMissing(out, missingIndices, x * TILE_SIZE, y * TILE_SIZE, TILE_SIZE);
    }
    return undefined;
  };
  switch (recipe.kind) {
    case "field":
      return {
        palette: ramp,
        // A stepped ramp is sampled on its class axis (one pass per lead), a smooth one on the value;
        // a field with missing nodes brings the field that hatches them (no-data.ts).
        prepare: async ([f]) => withMissing(onAxis(ramp, f), f),
        paint: (s, x, y, [f, missing], out) => paintBase(s, x, y, f, missing, out),
      };
    case "speed":
      return {
        palette: ramp,
        // Speed once per node, then drawn like any stored field.
        prepare: async ([u, v]) => {
          const speed = new Float32Array(u.length);
          for (let i = 0; i < u.length; i++) speed[i] = Math.hypot(u[i], v[i]);
          return withMissing(onAxis(ramp, speed), speed);
        },
        paint: (s, x, y, [f, missing], out) => paintBase(s, x, y, f, missing, out),
      };
    case "arrows": {
      const base = recipe.spacing_px ?? 40;
      return {
        palette: overlay,
        prepare: async (f) => {
          await keepReady();
          return f;
        },
        // At scale 2 the sampler is the next zoom's: the lattice of the zoom on screen, twice as wide.
        // The arrow heads' boxes ride in the PNG, as the isobars' marks do.
        paint: (s, x, y, [u, v], out, k = 1, size = TILE_SIZE) => {
          const screenZ = s.z - Math.log2(k);
          const spacing = k * arrowSpacing(base, screenZ, cellPx(screenZ));
          const heads: TileBoxes = [];
          const rgba = rgbaOf(size);
          renderArrows(s, x, y, u, v, { spacing, scale: k, keep: keepAt(screenZ, k) }, rgba, heads, size);
          quantizeOverlay(rgba, out);
          return heads;
        },
      };
    }
    case "orientation":
      throw new Error("the orientation layer is rendered by renderOrientationJob");
    case "contours": {
      const unit = displayUnit(job.style, "");
      const interval = recipe.interval!;
      const label = (value: number) => String(Math.round(toDisplay(unit, value)));
      // Contour lattice: two thirds of a data cell, 3..24 world pixels: finer only traces the
      // kinks of bilinear interpolation between nodes, which the smoothing then cannot hide.
      const step = (z: number) => Math.min(24, Math.max(3, Math.round(cellPx(z) / 1.5)));
      return {
        palette: overlay,
        prepare: async ([f]) => {
          const [min, max] = finiteRange(f);
          await prepareContourText(min, max, { interval, label }, [1, 2]);
          await keepReady();
          return [f];
        },
        paint: (s, x, y, [f], out, k = 1, size = TILE_SIZE) => {
          const marks: TileBoxes = [];
          const keep = keepAt(s.z - Math.log2(k), k);
          const rgba = rgbaOf(size);
          renderContours(s, x, y, f, { interval, label, step: step(s.z), scale: k, keep }, rgba, marks, size);
          quantizeOverlay(rgba, out);
          return marks;
        },
      };
    }
  }
}

export async function renderJob(ctx: RenderContext, job: Job): Promise<LeadResult[]> {
  const group = await ctx.store.forecastGroup(job.group);
  const sources = job.recipe.sources.map((name) => {
    const v = group.variables.get(name);
    if (!v) throw new StoreUnavailableError(`${name} is no longer in ${job.group}`);
    return v;
  });
  // Each variable is drawn over its own grid (a group may hold several).
  const grid = sources[0].grid;
  const coverage = coverageKey(group, sources[0]);
  const { palette, prepare, paint } = painterOf(job, grid.dlon, ctx.maxZoom);
  const indices = new Uint8Array(TILE_SIZE * TILE_SIZE);
  // Base layers as far as the build's @2x zoom; overlays, drawn at twice the scale, less far.
  const overlay2x = job.recipe.kind === "arrows" || job.recipe.kind === "contours";
  const hidpiMax = layerHidpiMax(job.recipe.kind, Math.min(ctx.hidpiMaxZoom, ctx.maxZoom));
  const marks2x = new Set<string>();
  const big = new Uint8Array(HIDPI_SIZE * HIDPI_SIZE);
  const quarter = new Uint8Array(TILE_SIZE * TILE_SIZE);
  const uniformBig = new Map<number, string>();
  let hidpiPerLead = 0;
  for (let z = 0; z <= hidpiMax; z++) hidpiPerLead += ctx.coverage.level(coverage, grid, z).tiles.length;
  const overlayRows = palette.rgba === OVERLAY_PALETTE ? ({ rows: "none" } as const) : {};
  // Palette index → the first file written with that one colour, for this job's hard links.
  const uniformFiles = new Map<number, string>();
  const counter = progress(ctx);

  const renderLead = async (lead: LeadJob): Promise<LeadResult> => {
    const result = emptyResult(lead);
    const fields = await kept(recentPrepared, [job.layer, job.run, lead.index].join("\0"), async () => {
      // Components stored along a projected grid's axes come turned to east/north (readValues),
      // so arrows point the true way.
      const read = await Promise.all(sources.map((v) => readField(group, v, job, lead.index)));
      return prepare(read);
    });
    // A base field with missing nodes is drawn with the hatch in its palette (no-data.ts).
    const rgba = palette.rgba !== OVERLAY_PALETTE && fields.length > 1 ? withHatch(palette.rgba) : palette.rgba;
    // A wind-arrow lead also writes the 10 m wind the viewer animates (once, by the pyramid's first part).
    if (job.recipe.kind === "arrows" && (job.part?.index ?? 0) === 0) writeWind(ctx, lead, fields, grid);
    let sampler: LevelSampler;
    const level = (z: number) => {
      const at = ctx.coverage.level(coverage, grid, z);
      sampler = at.sampler;
      return at.tiles;
    };
    const visit = (z: number, x: number, y: number, dir: string) => {
      const path = `${dir}/${y}.png`;
      const marks = paint(sampler, x, y, fields, indices);
      // A tile that carries marks is written with them, even if a mark's box only grazes it.
      const uniform = isUniform(indices) && !marks?.length;
      const first = uniform ? uniformFiles.get(indices[0]) : undefined;
      if (first !== undefined) {
        ctx.writer.link(first, path);
      } else {
        // Overlays' anti-aliased rows compress better unfiltered.
        const png = encodeIndexedPng(indices, TILE_SIZE, TILE_SIZE, rgba, {
          ...overlayRows,
          ...(marks?.length ? { boxes: marks } : {}),
        });
        ctx.writer.write(path, png);
        result.encoded++;
        result.bytes += png.length;
        if (uniform) uniformFiles.set(indices[0], path);
      }
      if (uniform) result.uniform++;
      result.tiles++;
      if (z <= hidpiMax) {
        // The 512 px tile is the four z+1 tiles below this one, sampled at their own zoom.
        // An overlay's is drawn whole at twice the scale (lines, text and spacing) over the z+1
        // world pixels of those four tiles: one tracing, one label placement and one search for
        // centres rather than four with their margins. Marks are kept in the 1x tile's frame.
        const child = ctx.coverage.sampler(coverage, grid, z + 1);
        marks2x.clear();
        if (overlay2x) {
          for (const b of paint(child, x, y, fields, big, 2, HIDPI_SIZE) ?? []) {
            marks2x.add([Math.floor(b[0] / 2), Math.floor(b[1] / 2), Math.ceil(b[2] / 2), Math.ceil(b[3] / 2)].join());
          }
        } else {
          // A base layer's quarters, each the z+1 tile itself.
          for (let q = 0; q < 4; q++) {
            const dx = q & 1;
            const dy = q >> 1;
            paint(child, 2 * x + dx, 2 * y + dy, fields, quarter);
            for (let r = 0; r < TILE_SIZE; r++) {
              big.set(
                quarter.subarray(r * TILE_SIZE, (r + 1) * TILE_SIZE),
                (dy * TILE_SIZE + r) * HIDPI_SIZE + dx * TILE_SIZE,
              );
            }
          }
        }
        const path2x = `${dir}/${y}${HIDPI_SUFFIX}.png`;
        const flat = isUniform(big) && marks2x.size === 0;
        const same = flat ? uniformBig.get(big[0]) : undefined;
        if (same !== undefined) ctx.writer.link(same, path2x);
        else {
          const boxes = [...marks2x].map((b) => b.split(",").map(Number) as TileBoxes[number]);
          const png = encodeIndexedPng(big, HIDPI_SIZE, HIDPI_SIZE, rgba, {
            ...overlayRows,
            ...(boxes.length ? { boxes } : {}),
          });
          ctx.writer.write(path2x, png);
          result.encoded++;
          result.bytes += png.length;
          if (flat) uniformBig.set(big[0], path2x);
        }
        result.hidpi = (result.hidpi ?? 0) + 1;
      }
      counter.tick();
    };
    await eachTile(ctx, job, join(ctx.buildDir, lead.dir), level, visit);
    return result;
  };

  const results = await eachLead(ctx, job, hidpiPerLead, renderLead);
  counter.flush();
  if (job.recipe.kind === "arrows") {
    // A lead linked from the previous build takes its wind file too (a build before them had none).
    for (const lead of job.leads) {
      if (!lead.reuse || !results.find((r) => r.key === lead.key)?.reused) continue;
      const from = windPaths(lead.reuse.dir);
      const to = windPaths(join(ctx.buildDir, lead.dir));
      try {
        mkdirSync(dirname(to.json), { recursive: true });
        windFiles.link(from.png, to.png);
        windFiles.link(from.json, to.json);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
        writeWind(ctx, lead, await Promise.all(sources.map((v) => readField(group, v, job, lead.index))), grid);
      }
    }
  }
  return results;
}

/**
 * Wind files are plain files whatever the build's tile format (an archive build's writer takes
 * tiles only), written and linked with the same care as tiles (its
 * directory memo unused: builds come and go in one process).
 */
const windFiles = new TileWriter();

/** The lead's u/v as the viewer's wind file (wind-field.ts), beside its tile directory. */
function writeWind(ctx: RenderContext, lead: LeadJob, [u, v]: Field[], grid: GroupVariable["grid"]): void {
  // Projected and unstructured grids have no lat/lon axes the header could state.
  if (grid.projection || grid.cells) return;
  const paths = windPaths(join(ctx.buildDir, lead.dir));
  const wind = encodeWindField(grid, u, v, paths.png.slice(paths.png.lastIndexOf("/") + 1));
  if (!wind) return;
  mkdirSync(dirname(paths.json), { recursive: true });
  windFiles.write(paths.png, wind.png);
  windFiles.write(paths.json, Buffer.from(`${JSON.stringify(wind.header)}\n`));
}
