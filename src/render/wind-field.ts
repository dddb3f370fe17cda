// The compact 10 m wind a viewer animates: per lead, u and v on the grid's own nodes (every n-th,
// so at most WIND_MAX_COLS × WIND_MAX_ROWS), quantized to one byte each in an RGB PNG, with a JSON
// header that states the grid and each component's offset and scale. A particle needs the flow,
// not the decimal places: a byte per component is 1/255 of the lead's range (about 0.2 m/s).
import { encodeRgbaPng } from "./png.ts";

/** At most 1° spacing over the globe: about 100 KB a lead compressed, ample for particles. */
export const WIND_MAX_COLS = 360;
export const WIND_MAX_ROWS = 181;
export const WIND_FORMAT = "gridcast-wind 1";

export interface WindComponent {
  /** value = offset + scale × byte */
  offset: number;
  scale: number;
}

export interface WindHeader {
  format: typeof WIND_FORMAT;
  /** The PNG beside this header, by file name. */
  png: string;
  width: number;
  height: number;
  /** Longitude of column 0 and the step to the next column (degrees, signed as stored). */
  lon0: number;
  dlon: number;
  /** Latitude of row 0 and the step to the next row (degrees, signed as stored). */
  lat0: number;
  dlat: number;
  /** The columns go round the globe: the last one's east neighbour is column 0. */
  wrap: boolean;
  units: "m/s";
  u: WindComponent;
  v: WindComponent;
  /** How the PNG's channels read. */
  channels: string;
}

export interface WindGrid {
  lat: ArrayLike<number>;
  lon: ArrayLike<number>;
  global: boolean;
}

const CHANNELS =
  "r: u, g: v (each value = offset + scale × byte); b: 255 where both are known, 0 where either is missing; a: 255";

/** Evenly spaced within a thousandth of its step (a grid the header's lon0/dlon can state). */
function even(c: ArrayLike<number>): boolean {
  if (c.length < 2) return false;
  const step = (c[c.length - 1] - c[0]) / (c.length - 1);
  for (let i = 1; i < c.length; i++) if (Math.abs(c[i] - c[i - 1] - step) > Math.abs(step) * 1e-3) return false;
  return step !== 0;
}

function quantizer(values: Float32Array): WindComponent {
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const x of values) {
    if (x < min) min = x;
    if (x > max) max = x;
  }
  if (!(max >= min)) return { offset: 0, scale: 1 };
  return { offset: min, scale: max > min ? (max - min) / 255 : 1 };
}

/**
 * The wind file of one lead from u and v in (lat, lon) C order over `grid`, or undefined when the
 * grid's axes are not evenly spaced (the header could not place the nodes).
 */
export function encodeWindField(
  grid: WindGrid,
  u: Float32Array | Float64Array,
  v: Float32Array | Float64Array,
  pngName: string,
): { header: WindHeader; png: Buffer } | undefined {
  const nlat = grid.lat.length;
  const nlon = grid.lon.length;
  if (!even(grid.lat) || !even(grid.lon) || u.length !== nlat * nlon || v.length !== u.length) return undefined;
  const sy = Math.ceil(nlat / WIND_MAX_ROWS);
  const sx = Math.ceil(nlon / WIND_MAX_COLS);
  const height = Math.ceil(nlat / sy);
  const width = Math.ceil(nlon / sx);
  const us = new Float32Array(width * height);
  const vs = new Float32Array(width * height);
  const known = new Uint8Array(width * height);
  const finiteU: number[] = [];
  const finiteV: number[] = [];
  for (let r = 0; r < height; r++) {
    for (let c = 0; c < width; c++) {
      const at = r * sy * nlon + c * sx;
      const k = r * width + c;
      us[k] = u[at];
      vs[k] = v[at];
      if (Number.isFinite(u[at]) && Number.isFinite(v[at])) {
        known[k] = 1;
        finiteU.push(u[at]);
        finiteV.push(v[at]);
      }
    }
  }
  const qu = quantizer(Float32Array.from(finiteU));
  const qv = quantizer(Float32Array.from(finiteV));
  const byte = (x: number, q: WindComponent) => Math.min(255, Math.max(0, Math.round((x - q.offset) / q.scale)));
  const rgba = new Uint8Array(width * height * 4);
  for (let k = 0; k < width * height; k++) {
    rgba[k * 4] = known[k] ? byte(us[k], qu) : 0;
    rgba[k * 4 + 1] = known[k] ? byte(vs[k], qv) : 0;
    rgba[k * 4 + 2] = known[k] ? 255 : 0;
    rgba[k * 4 + 3] = 255;
  }
  const dlon = ((grid.lon[nlon - 1] - grid.lon[0]) / (nlon - 1)) * sx;
  const dlat = ((grid.lat[nlat - 1] - grid.lat[0]) / (nlat - 1)) * sy;
  // Wraps when the kept columns still step evenly across the seam.
  const wrap = grid.global && Math.abs(Math.abs(dlon) * width - 360) < Math.abs(dlon) * 1e-3;
  const header: WindHeader = {
    format: WIND_FORMAT,
    png: pngName,
    width,
    height,
    lon0: grid.lon[0],
    dlon,
    lat0: grid.lat[0],
    dlat,
    wrap,
    units: "m/s",
    u: qu,
    v: qv,
    channels: CHANNELS,
  };
  // Deflate at zlib's default level: the file is a few tens of KB either way (BENCHMARKS.md).
  return { header, png: encodeRgbaPng(rgba, width, height, { compression: 6 }) };
}
