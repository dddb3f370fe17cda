// Cube, area and radius: per parameter (and level) the box the .npy export plans and reads for
// the same bounds, then (area, radius, and a projected grid's window) only the nodes the shape holds.
import { MIB } from "../../config.ts";
import { InvalidParameterError, TooLargeError } from "../../errors.ts";
import { recycleSlab } from "../../read-ahead.ts";
import type { Registry } from "../../registry/registry.ts";
import { isoNoZone } from "../../store/describe.ts";
import type { GridProjection } from "../../store/projected-grid.ts";
import type { ForecastGroup, Store } from "../../store/store.ts";
import { type BoxPlan, boxLeads, planBox } from "../box.ts";
import { nodePosition } from "../grid-projected.ts";
import type { PointCopies } from "../point-copy.ts";
import { convertValue } from "../units-option.ts";
import { type TimeFilter, timeMatches } from "./datetime.ts";
import { inBox, type LatLonBox, type NodeTest } from "./geometry.ts";
import {
  type Answer,
  type Coverage,
  levelsOf,
  metaOf,
  type QueryCommon,
  type Resolved,
  resolveParams,
  zoned,
} from "./query.ts";

export interface BoxQuery extends QueryCommon, LatLonBox {
  /** Area and radius: the nodes kept (the others are left out as missing). */
  keep?: NodeTest;
}

/** Lead indices [first, last] of the group whose valid times the filter keeps (contiguous: one run). */
function leadRange(group: ForecastGroup, run: number, f: TimeFilter | undefined): [number, number] | undefined {
  let first = -1;
  let last = -1;
  for (let i = 0; i < group.leads.length; i++) {
    if (timeMatches(f, group.runs[run] + group.leads[i] * 3_600_000)) {
      if (first < 0) first = i;
      last = i;
    }
  }
  return first < 0 ? undefined : [first, last];
}

/**
 * A cube, area or radius: per parameter (and level) the box planned as the .npy export plans it
 * (the 413 before any chunk is read, here over the whole answer) and read as it reads it.
 * Undefined for an empty intersection (no valid time, no node in the box, none kept).
 */
export async function boxQuery(
  store: Store,
  registry: Registry,
  q: BoxQuery,
  limitMb: number,
  slabBytes: number,
  scanBytes: number,
  copies?: PointCopies,
): Promise<Answer | undefined> {
  const resolved = resolveParams(registry, q);
  const params = new Map(resolved.map((r) => [r.entry.name, metaOf(r)]));
  const leads = leadRange(q.group, q.run, q.datetime);
  if (!leads) return undefined;
  const plans: { r: Resolved; level: number | undefined; plan: BoxPlan }[] = [];
  let bytes = 0;
  for (const r of resolved) {
    for (const level of levelsOf(q.group, r, q.z) ?? [undefined]) {
      let plan: BoxPlan;
      try {
        plan = await planBox(
          store,
          registry,
          {
            group: q.group.id,
            var: r.entry.name,
            time_index: q.run,
            lead_start: leads[0],
            lead_stop: leads[1],
            lat_min: q.latMin,
            lat_max: q.latMax,
            lon_min: q.lonMin,
            lon_max: q.lonMax,
            level,
          },
          limitMb,
        );
      } catch (e) {
        // A box holding no node of this parameter's grid is an empty intersection for it, not a
        // fault of the request (another parameter's grid may hold nodes there).
        if (e instanceof InvalidParameterError && /holds no/.test(e.message)) continue;
        throw e;
      }
      bytes += plan.bytes;
      plans.push({ r, level, plan });
    }
  }
  if (bytes > limitMb * MIB) {
    throw new TooLargeError(
      `the answer would be ${(bytes / MIB).toFixed(1)} MiB of values, above the ${limitMb} MiB limit`,
      bytes,
      limitMb,
      "narrow the box, the times, the levels or the parameters",
    );
  }
  const t = q.group.leads
    .slice(leads[0], leads[1] + 1)
    .map((h) => zoned(isoNoZone(q.group.runs[q.run] + h * 3_600_000)));
  // One coverage per grid the parameters' boxes lie on (a group may hold several) and level set.
  const coverages = new Map<string, Coverage>();
  const kept = new Map<string, Uint8Array>();
  const empty = new Set<string>();
  for (const r of resolved) {
    const mine = plans.filter((p) => p.r === r);
    if (mine.length === 0) continue;
    const sel = mine[0].plan.sel;
    const levels = mine[0].level === undefined ? undefined : mine.map((p) => p.level!);
    const key = `${sel.lats.join()}|${sel.lons.join()}|${levels ?? ""}`;
    if (empty.has(key)) continue;
    let c = coverages.get(key);
    const proj = r.v.grid.projection;
    if (!c && proj) {
      // A projected or curvilinear window: each node placed by its own latitude/longitude, the
      // nodes the box, polygon or circle does not hold left out.
      c = projectedNodes(proj, mine[0].plan, t, levels, q.keep ?? inBox(q));
      if (!c) {
        empty.add(key);
        continue;
      }
      coverages.set(key, c);
    }
    if (!c) {
      c = { kind: "grid", x: sel.lons, y: sel.lats, t, ...(levels ? { z: levels } : {}), ranges: new Map() };
      coverages.set(key, c);
      if (q.keep) {
        const mask = new Uint8Array(sel.lats.length * sel.lons.length);
        let any = false;
        for (let iy = 0; iy < sel.lats.length; iy++) {
          for (let ix = 0; ix < sel.lons.length; ix++) {
            if (q.keep(sel.lats[iy], sel.lons[ix])) {
              mask[iy * sel.lons.length + ix] = 1;
              any = true;
            }
          }
        }
        if (!any) {
          coverages.delete(key);
          empty.add(key);
          continue;
        }
        kept.set(key, mask);
        c.mask = mask;
      }
    }
    const ny = sel.lats.length;
    const nx = sel.lons.length;
    const nz = mine.length;
    const plane = ny * nx;
    const out = new Float32Array(t.length * nz * plane);
    const mask = kept.get(key);
    for (let zi = 0; zi < nz; zi++) {
      let lead = 0;
      let at = 0;
      // Slabs come in lead order, whole leads (or bands of rows of one lead, south first).
      for await (const slab of boxLeads(mine[zi].plan, slabBytes, scanBytes, false, copies)) {
        if (nz === 1) {
          out.set(slab, lead * plane + at);
          at += slab.length;
          recycleSlab(slab);
          lead += Math.floor(at / plane);
          at %= plane;
          continue;
        }
        for (let k = 0; k < slab.length; k++) {
          const node = at + k;
          const v = slab[k];
          out[(lead + Math.floor(node / plane)) * nz * plane + zi * plane + (node % plane)] = v;
        }
        at += slab.length;
        lead += Math.floor(at / plane);
        at %= plane;
        recycleSlab(slab);
      }
    }
    if (r.choice) for (let i = 0; i < out.length; i++) out[i] = convertValue(r.choice, out[i]) as number;
    if (c.picked) {
      c.ranges.set(r.entry.name, pick(out, plane, c.picked));
      continue;
    }
    if (mask) for (let i = 0; i < out.length; i++) if (!mask[i % plane]) out[i] = Number.NaN;
    c.ranges.set(r.entry.name, out);
  }
  if (coverages.size === 0) return undefined;
  return { params, coverages: [...coverages.values()] };
}

/** The nodes of a projected window a test keeps, each with its latitude/longitude; undefined for none. */
function projectedNodes(
  p: GridProjection,
  plan: BoxPlan,
  t: string[],
  levels: number[] | undefined,
  keep: NodeTest,
): Coverage | undefined {
  const { rows, cols, flipRows } = plan.sel;
  const [, ny, nx] = plan.shape;
  const x: number[] = [];
  const y: number[] = [];
  const picked: number[] = [];
  for (let oy = 0; oy < ny; oy++) {
    const iy = flipRows ? rows[1] - 1 - oy : rows[0] + oy;
    for (let ox = 0; ox < nx; ox++) {
      const [lat, lon] = nodePosition(p, cols[0][0] + ox, iy);
      if (!keep(lat, lon)) continue;
      x.push(lon);
      y.push(lat);
      picked.push(oy * nx + ox);
    }
  }
  if (picked.length === 0) return undefined;
  return {
    kind: "nodes",
    x,
    y,
    t,
    ...(levels ? { z: levels } : {}),
    ranges: new Map(),
    picked: Int32Array.from(picked),
  };
}

/** The picked nodes of each (t, z) plane of `plane` values, in order. */
function pick(values: Float32Array, plane: number, picked: Int32Array): Float32Array {
  const planes = values.length / plane;
  const out = new Float32Array(planes * picked.length);
  for (let k = 0; k < planes; k++) {
    for (let i = 0; i < picked.length; i++) out[k * picked.length + i] = values[k * plane + picked[i]];
  }
  return out;
}
