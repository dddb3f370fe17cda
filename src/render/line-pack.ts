// A compact file of polylines in lon/lat degrees (the orientation layer's admin-1 borders,
// geodata/admin1/): coordinates quantised to 1/scale degree, each line's points as zigzag varint
// deltas from the point before (its first point from 0, 0).
//
//   "GCL1"  u32 LE scale  u32 LE line count
//   per line: varint point count, then per point varint zigzag(Δlon), varint zigzag(Δlat)
//
// A file that is cut short, has another magic, or has bytes left over is an error, never a
// partial set of lines.

export type Line = [number, number][];

const MAGIC = "GCL1";

function pushVarint(out: number[], v: number): void {
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
}

const zigzag = (v: number): number => (v < 0 ? -2 * v - 1 : 2 * v);
const unzigzag = (v: number): number => (v % 2 === 1 ? -(v + 1) / 2 : v / 2);

/** Encodes `lines` (lon, lat degrees) quantised to 1/scale degree; lines of fewer than 2 distinct points are left out. */
export function encodeLines(lines: Line[], scale: number): Uint8Array {
  const body: number[] = [];
  let count = 0;
  for (const line of lines) {
    const q: [number, number][] = [];
    for (const [lon, lat] of line) {
      const p: [number, number] = [Math.round(lon * scale), Math.round(lat * scale)];
      const last = q[q.length - 1];
      if (!last || last[0] !== p[0] || last[1] !== p[1]) q.push(p);
    }
    if (q.length < 2) continue;
    count++;
    pushVarint(body, q.length);
    let px = 0;
    let py = 0;
    for (const [x, y] of q) {
      pushVarint(body, zigzag(x - px));
      pushVarint(body, zigzag(y - py));
      px = x;
      py = y;
    }
  }
  const out = new Uint8Array(12 + body.length);
  out.set(new TextEncoder().encode(MAGIC), 0);
  const view = new DataView(out.buffer);
  view.setUint32(4, scale, true);
  view.setUint32(8, count, true);
  out.set(body, 12);
  return out;
}

/** Decodes a file written by encodeLines; throws on a malformed one. */
export function decodeLines(bytes: Uint8Array): Line[] {
  if (bytes.length < 12 || new TextDecoder().decode(bytes.subarray(0, 4)) !== MAGIC) {
    throw new Error("line file: not a GCL1 file");
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const scale = view.getUint32(4, true);
  const count = view.getUint32(8, true);
  if (scale === 0) throw new Error("line file: scale 0");
  let i = 12;
  const varint = (): number => {
    let v = 0;
    let mul = 1;
    for (;;) {
      if (i >= bytes.length) throw new Error("line file: cut short");
      const b = bytes[i++];
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 128;
      if (mul > 2 ** 49) throw new Error("line file: varint too long");
    }
  };
  const lines: Line[] = [];
  for (let l = 0; l < count; l++) {
    const n = varint();
    const line: Line = [];
    let x = 0;
    let y = 0;
    for (let k = 0; k < n; k++) {
      x += unzigzag(varint());
      y += unzigzag(varint());
      line.push([x / scale, y / scale]);
    }
    lines.push(line);
  }
  if (i !== bytes.length) throw new Error(`line file: ${bytes.length - i} bytes left over`);
  return lines;
}
