// What the EDR tests share: reading each encoding back into (lon, lat, time, z) → value, and the
// .npy export's body as numbers.
import assert from "node:assert/strict";

// biome-ignore lint/suspicious/noExplicitAny: CoverageJSON documents are read field by field
type Json = any;

export interface Cell {
  lon: number;
  lat: number;
  t: string;
  z?: number;
  param: string;
  value: number | null;
}

/** Every value of a Coverage or CoverageCollection placed by its axes (t, z, y, x). */
export function covCells(doc: Json): Cell[] {
  const coverages = doc.type === "CoverageCollection" ? doc.coverages : [doc];
  const out: Cell[] = [];
  for (const c of coverages) {
    const { z, t, composite } = c.domain.axes;
    // A MultiPointSeries places node k at composite.values[k]; a grid by its x and y axes.
    const x = composite ? { values: composite.values.map((v: number[]) => v[0]) } : c.domain.axes.x;
    const y = composite ? { values: composite.values.map((v: number[]) => v[1]) } : c.domain.axes.y;
    for (const [param, r] of Object.entries(c.ranges) as [string, Json][]) {
      const names = r.axisNames as string[];
      const shape = r.shape as number[];
      assert.equal(
        r.values.length,
        shape.reduce((a: number, b: number) => a * b, 1),
      );
      const axis: Record<string, unknown[]> = {
        t: t.values,
        z: z?.values,
        y: y.values,
        x: x.values,
        composite: x.values,
      };
      for (const [i, n] of names.entries()) assert.equal(axis[n]!.length, shape[i], `axis ${n} of ${param}`);
      for (let k = 0; k < r.values.length; k++) {
        let rest = k;
        const at: Record<string, number> = {};
        for (let d = names.length - 1; d >= 0; d--) {
          at[names[d]] = rest % shape[d];
          rest = Math.floor(rest / shape[d]);
        }
        const cell: Cell = {
          lon: x.values[at.composite ?? at.x],
          lat: y.values[at.composite ?? at.y],
          t: t.values[at.t],
          param,
          value: r.values[k],
        };
        if (z) cell.z = z.values[at.z];
        out.push(cell);
      }
    }
  }
  return out;
}

/** The cells of a GeoJSON answer: one per feature and parameter. */
export function geoCells(doc: Json): Cell[] {
  const out: Cell[] = [];
  for (const f of doc.features) {
    const [lon, lat, z] = f.geometry.coordinates;
    for (const param of f.properties["parameter-name"]) {
      const cell: Cell = { lon, lat, t: f.properties.datetime, param, value: f.properties[param] };
      if (z !== undefined) cell.z = z;
      out.push(cell);
    }
  }
  return out;
}

/** The cells of a CSV answer: one per row and parameter column (an empty field is null). */
export function csvCells(text: string): Cell[] {
  const lines = text.trimEnd().split("\r\n");
  const head = lines[0].split(",");
  assert.deepEqual(head.slice(0, 3), ["lon", "lat", "datetime"]);
  const withZ = head[3] === "z";
  const params = head.slice(withZ ? 4 : 3);
  const out: Cell[] = [];
  for (const line of lines.slice(1)) {
    const f = line.split(",");
    for (const [i, param] of params.entries()) {
      const raw = f[(withZ ? 4 : 3) + i];
      const cell: Cell = {
        lon: Number(f[0]),
        lat: Number(f[1]),
        t: f[2],
        param,
        value: raw === "" ? null : Number(raw),
      };
      if (withZ) cell.z = Number(f[3]);
      out.push(cell);
    }
  }
  return out;
}

export const cellKey = (c: Cell) => `${c.param}|${c.lon}|${c.lat}|${c.t}|${c.z ?? ""}`;

/** The cells as key → value, non-missing only (area and radius leave the nodes outside out). */
export function present(cells: Cell[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const c of cells) if (c.value !== null) m.set(cellKey(c), c.value);
  return m;
}

export function npy(body: Buffer): { shape: number[]; data: Float32Array } {
  assert.equal(body.subarray(1, 6).toString("latin1"), "NUMPY");
  const len = body.readUInt16LE(8);
  const header = body.subarray(10, 10 + len).toString("latin1");
  const shape = header
    .match(/'shape': \(([^)]*)\)/)![1]
    .split(",")
    .filter((s) => s.trim())
    .map(Number);
  const data = body.subarray(10 + len);
  const out = new Float32Array(data.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = data.readFloatLE(i * 4);
  return { shape, data: out };
}

/** Great-circle distance, km, written here apart from the server's (spherical law of cosines). */
export function distanceKm(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const r = Math.PI / 180;
  const c =
    Math.sin(lat1 * r) * Math.sin(lat2 * r) + Math.cos(lat1 * r) * Math.cos(lat2 * r) * Math.cos((lon2 - lon1) * r);
  return 6371.0088 * Math.acos(Math.max(-1, Math.min(1, c)));
}
