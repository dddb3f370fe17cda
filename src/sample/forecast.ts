// Forecast groups of the synthetic store: CF coordinates, one array per variable, chunks that span
// all lead times of a spatial block. Fields are evaluated one block row at a time, so memory stays
// bounded by (leads × fields × one block row) whatever the grid size.
import { VARIABLES } from "../registry/variables.ts";
import { T0_MS, type WeatherModel } from "./fields.ts";
import type { GroupLayout, Preset, Step } from "./presets.ts";
import { bitRound, CLOUD_PACKING, packFraction } from "./quantize.ts";
import type { ArrayNode, Fill, Format, GroupNode, Json, ZarrWriter } from "./zarr-writer.ts";

export interface Layout {
  /** Global grid: latitude stored north to south (ECMWF style). */
  latDescending: boolean;
  /** Global grid: longitude stored 0..360 rather than -180..180. */
  lon360: boolean;
}

export interface GroupSummary {
  id: string;
  zarr_format: Format;
  kind: "global" | "regional";
  resolution_deg: number;
  shape: { lat: number; lon: number };
  /** Canonical name → stored array name. */
  variables: Record<string, string>;
  chunks: number;
}

type Field = "t2m" | "u10" | "v10" | "msl" | "tp_1h" | "tcc" | "t";

/** Mantissa bits kept per field: 0.06 K, 8 Pa, ≤ 0.016 m/s, 0.1 % of a rain amount. */
const KEEP_BITS: Record<Exclude<Field, "tcc">, number> = { t2m: 12, t: 12, msl: 13, u10: 10, v10: 10, tp_1h: 10 };

/** Coordinates k·num/den for integer k in [k0, k1], in the given direction. */
function coords(step: Step, k0: number, k1: number, descending = false): Float64Array {
  const n = k1 - k0 + 1;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = ((descending ? k1 - i : k0 + i) * step.num) / step.den;
  return out;
}

function grid(g: GroupLayout, layout: Layout): { lat: Float64Array; lon: Float64Array; canonLon: Float64Array } {
  const per = (deg: number) => Math.round((deg * g.step.den) / g.step.num);
  if (g.kind === "global") {
    const lat = coords(g.step, per(-90), per(90), layout.latDescending);
    const lon = layout.lon360 ? coords(g.step, 0, per(360) - 1) : coords(g.step, per(-180), per(180) - 1);
    // The same physical longitude must give the same double in either convention.
    const canonLon = lon.map((x) => (x >= 180 ? x - 360 : x));
    return { lat, lon, canonLon };
  }
  const lon = coords(g.step, per(g.lon[0]), per(g.lon[1]));
  return { lat: coords(g.step, per(g.lat[0]), per(g.lat[1])), lon, canonLon: lon };
}

function varAttrs(field: Field, format: Format): Json {
  const e = VARIABLES.find((v) => v.name === field)!;
  const attrs: Json = { long_name: e.long_name, units: e.units };
  if (e.standard_name) attrs.standard_name = e.standard_name;
  if (field === "tp_1h") attrs.cell_methods = "time: sum";
  if (field === "tcc") return { ...attrs, ...CLOUD_PACKING };
  attrs._QuantizeBitRoundNumberOfSignificantBits = KEEP_BITS[field];
  // In v2 the array's fill_value already is _FillValue (xarray convention); v3 states it.
  if (format === 3) attrs._FillValue = "NaN";
  return attrs;
}

async function coordArrays(group: GroupNode, preset: Preset, lat: Float64Array, lon: Float64Array, withLevel: boolean) {
  const intFill: Fill = group.format === 3 ? 0 : null;
  const one = (name: string, dtype: "int64" | "int32" | "float64", n: number, attrs: Json, fill: Fill) =>
    group.array(name, { shape: [n], chunks: [n], dtype, dims: [name], fill, attrs });
  await one(
    "time",
    "int64",
    preset.runs.length,
    {
      units: "hours since 1970-01-01 00:00:00",
      calendar: "proleptic_gregorian",
      standard_name: "forecast_reference_time",
      long_name: "initial time of forecast",
    },
    intFill,
  ).writeAll(BigInt64Array.from(preset.runs, (ms) => BigInt(ms / 3_600_000)));
  // xarray decodes a duration from units "hours"; the dtype attribute says it was a timedelta.
  await one(
    "lead_time",
    "int32",
    preset.leads.length,
    {
      units: "hours",
      standard_name: "forecast_period",
      long_name: "time since forecast_reference_time",
      dtype: "timedelta64[ns]",
    },
    intFill,
  ).writeAll(Int32Array.from(preset.leads));
  if (withLevel) {
    await one(
      "level",
      "int32",
      preset.levels.length,
      {
        units: "hPa",
        standard_name: "air_pressure",
        long_name: "pressure level",
        positive: "down",
      },
      intFill,
    ).writeAll(Int32Array.from(preset.levels));
  }
  await one(
    "lat",
    "float64",
    lat.length,
    { units: "degrees_north", standard_name: "latitude", long_name: "latitude", axis: "Y" },
    "NaN",
  ).writeAll(lat);
  await one(
    "lon",
    "float64",
    lon.length,
    { units: "degrees_east", standard_name: "longitude", long_name: "longitude", axis: "X" },
    "NaN",
  ).writeAll(lon);
}

/** Block rows (bands of chunk rows) of a group: the unit a part of its writing can take. */
export function blockRows(g: GroupLayout, layout: Layout): number {
  return Math.ceil(grid(g, layout).lat.length / g.chunk[0]);
}

/**
 * Write a forecast group, or the block rows `bands` of it (default all). A writer without metadata
 * (another part writes the group's documents and coordinates) writes only those chunks.
 */
export async function writeForecastGroup(
  w: ZarrWriter,
  model: WeatherModel,
  preset: Preset,
  g: GroupLayout,
  layout: Layout,
  progress: (line: string) => void,
  bands?: number[],
): Promise<GroupSummary> {
  const id = `forecast/${g.name}`;
  const { lat, lon, canonLon } = grid(g, layout);
  const resolution = g.step.num / g.step.den;
  const group = w.group(id, g.format, {
    title: g.title,
    model: g.model,
    model_version: "2026.11-synthetic",
    institution: "gridcast synthetic",
    source: "gridcast sample: synthetic weather, not a real forecast",
    kind: g.kind,
    resolution_deg: resolution,
    Conventions: "CF-1.10",
  });
  const fields = Object.keys(g.variables) as Field[];
  if (w.metadata) await coordArrays(group, preset, lat, lon, fields.includes("t"));

  const nLead = preset.leads.length;
  const [CH, CW] = g.chunk;
  const arrays = new Map<Field, ArrayNode>();
  for (const f of fields) {
    const lev = f === "t";
    arrays.set(
      f,
      group.array(g.variables[f], {
        shape: lev
          ? [preset.runs.length, nLead, preset.levels.length, lat.length, lon.length]
          : [preset.runs.length, nLead, lat.length, lon.length],
        chunks: lev ? [1, nLead, 1, CH, CW] : [1, nLead, CH, CW],
        dtype: f === "tcc" ? "int16" : "float32",
        dims: lev ? ["time", "lead_time", "level", "lat", "lon"] : ["time", "lead_time", "lat", "lon"],
        fill: f === "tcc" ? CLOUD_PACKING._FillValue : "NaN",
        attrs: varAttrs(f, g.format),
      }),
    );
  }

  const detail = g.kind === "regional";
  const nBands = Math.ceil(lat.length / CH);
  const colBlocks = Math.ceil(lon.length / CW);
  let chunks = 0;
  for (const b of bands ?? Array.from({ length: nBands }, (_, i) => i)) {
    progress(`${id}: block row ${b + 1}/${nBands}`);
    const rows = lat.subarray(b * CH, Math.min(lat.length, (b + 1) * CH));
    const surf = model.surface(rows, canonLon, detail);
    for (let r = 0; r < preset.runs.length; r++) {
      // perLead[field][level or 0][lead] = block-row values
      const perLead = new Map<Field, Float32Array[][]>(
        fields.map((f) => [f, f === "t" ? preset.levels.map(() => []) : [[]]]),
      );
      for (const lead of preset.leads) {
        const tau = (preset.runs[r] - T0_MS) / 3_600_000 + lead;
        const fs = model.evaluate(rows, canonLon, surf, tau, detail);
        const byField: Record<Field, Float32Array[]> = {
          t2m: [fs.t2m],
          u10: [fs.u10],
          v10: [fs.v10],
          msl: [fs.msl],
          tcc: [fs.tcc],
          // Accumulation starts at the run: nothing has fallen yet at lead 0.
          tp_1h: [lead === 0 ? new Float32Array(fs.t2m.length) : model.rain(rows, canonLon, surf, tau, detail)],
          t: preset.levels.map((p) => (p === 500 ? fs.t500 : fs.t850)),
        };
        for (const f of fields) {
          byField[f].forEach((a, li) => {
            if (f !== "tcc") bitRound(a, KEEP_BITS[f]);
            perLead.get(f)![li].push(a);
          });
        }
      }
      for (const f of fields) {
        const arr = arrays.get(f)!;
        for (const [li, leads] of perLead.get(f)!.entries()) {
          for (let cb = 0; cb < colBlocks; cb++) {
            const buf = arr.chunkBuffer();
            const c0 = cb * CW;
            const c1 = Math.min(lon.length, c0 + CW);
            leads.forEach((vals, l) => {
              for (let i = 0; i < rows.length; i++) {
                const src = i * lon.length;
                const dst = (l * CH + i) * CW;
                if (f === "tcc") {
                  for (let j = c0; j < c1; j++) buf[dst + j - c0] = packFraction(vals[src + j]);
                } else {
                  (buf as Float32Array).set(vals.subarray(src + c0, src + c1), dst);
                }
              }
            });
            await arr.writeChunk(f === "t" ? [r, 0, li, b, cb] : [r, 0, b, cb], buf);
            chunks++;
          }
        }
      }
    }
  }
  group.close();
  return {
    id,
    zarr_format: g.format,
    kind: g.kind,
    resolution_deg: resolution,
    shape: { lat: lat.length, lon: lon.length },
    variables: { ...(g.variables as Record<string, string>) },
    chunks,
  };
}
