// A GeoTIFF writer for float32 rasters, streamed: classic TIFF, one band per sample in separate
// planes, horizontal strips stored uncompressed, the georeferencing as GeoTIFF tie point + pixel
// scale + GeoKeys, no-data and per-band descriptions in GDAL's own tags (GDAL_NODATA,
// GDAL_METADATA), which GDAL, rasterio and QGIS read.
// Uncompressed strips have sizes known from the shape alone, so the header and directory (with
// every strip's offset) are written before any value is read, and the values follow as they are
// read, band after band, rows from the north: the file is never held whole, only the slab being
// sent (deflate would need every strip compressed before its offset is known).
import { type GeoKey, keyDirectory } from "./geotiff-keys.ts";

/** Bytes per strip (at most; a strip is whole rows): small enough to read a window of a band. */
export const STRIP_BYTES = 64 * 1024;
/** A classic TIFF addresses its bytes with 32-bit offsets. */
const MAX_TIFF_BYTES = 2 ** 32 - 1;

/** What the head of a GeoTIFF needs: the shape and the georeferencing, no values. */
export interface GeoTiffLayout {
  width: number;
  height: number;
  bands: number;
  /** Top-left corner of the top-left pixel and the pixel size (both positive), in CRS units. */
  left: number;
  top: number;
  pixelWidth: number;
  pixelHeight: number;
  /** The CRS as GeoKeys (geotiff-keys.ts). */
  geoKeys: GeoKey[];
  /** Dataset-wide metadata items (GDAL_METADATA). */
  metadata: Record<string, string>;
  /** Per band: its description and metadata items. */
  bandInfo: { description: string; units?: string; items: Record<string, string> }[];
}

/**
 * The head of a GeoTIFF file and the size of the whole file: after `head` come the bands' values
 * as little-endian float32, band after band, each `width × height` values, first row north.
 */
export interface GeoTiffHead {
  head: Uint8Array;
  bytes: number;
}

const SHORT = 3;
const LONG = 4;
const ASCII = 2;
const DOUBLE = 12;
const TYPE_SIZE: Record<number, number> = { [ASCII]: 1, [SHORT]: 2, [LONG]: 4, [DOUBLE]: 8 };

interface Tag {
  tag: number;
  type: number;
  values: number[] | string;
}

function xmlText(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** GDAL's metadata document: dataset items, then per band its items, description and unit. */
function gdalMetadata(r: GeoTiffLayout): string {
  const items: string[] = [];
  const item = (name: string, value: string, extra = "") =>
    items.push(`<Item name="${xmlText(name)}"${extra}>${xmlText(value)}</Item>`);
  for (const [k, v] of Object.entries(r.metadata)) item(k, v);
  r.bandInfo.forEach((b, i) => {
    for (const [k, v] of Object.entries(b.items)) item(k, v, ` sample="${i}"`);
    item("DESCRIPTION", b.description, ` sample="${i}" role="description"`);
    if (b.units) item("UNITTYPE", b.units, ` sample="${i}" role="unittype"`);
  });
  return `<GDALMetadata>${items.join("")}</GDALMetadata>`;
}

/** The head (header, directory and its values) of the GeoTIFF of a raster, and the file's size. */
export function geoTiffHead(r: GeoTiffLayout): GeoTiffHead {
  const n = r.bands;
  if (n < 1 || r.width < 1 || r.height < 1) throw new Error("a GeoTIFF needs at least one band and one pixel");
  if (r.bandInfo.length !== n) throw new Error("a GeoTIFF needs one band description per band");
  const rowBytes = r.width * 4;
  const rowsPerStrip = Math.max(1, Math.min(r.height, Math.floor(STRIP_BYTES / rowBytes)));
  const stripsPerBand = Math.ceil(r.height / rowsPerStrip);
  const sizes: number[] = [];
  for (let b = 0; b < n; b++) {
    for (let s = 0; s < stripsPerBand; s++) sizes.push(Math.min(rowsPerStrip, r.height - s * rowsPerStrip) * rowBytes);
  }
  const keys = keyDirectory(r.geoKeys);
  const tags: Tag[] = [
    { tag: 256, type: LONG, values: [r.width] },
    { tag: 257, type: LONG, values: [r.height] },
    { tag: 258, type: SHORT, values: new Array(n).fill(32) },
    { tag: 259, type: SHORT, values: [1] }, // no compression
    { tag: 262, type: SHORT, values: [1] }, // min-is-black
    { tag: 273, type: LONG, values: new Array(sizes.length).fill(0) }, // offsets, set below
    { tag: 277, type: SHORT, values: [n] },
    { tag: 278, type: LONG, values: [rowsPerStrip] },
    { tag: 279, type: LONG, values: sizes },
    { tag: 284, type: SHORT, values: [n > 1 ? 2 : 1] }, // separate planes: one band after another
    ...(n > 1 ? [{ tag: 338, type: SHORT, values: new Array(n - 1).fill(0) }] : []),
    { tag: 339, type: SHORT, values: new Array(n).fill(3) }, // IEEE float
    { tag: 33550, type: DOUBLE, values: [r.pixelWidth, r.pixelHeight, 0] },
    { tag: 33922, type: DOUBLE, values: [0, 0, 0, r.left, r.top, 0] },
    { tag: 34735, type: SHORT, values: keys.directory },
    ...(keys.doubles.length ? [{ tag: 34736, type: DOUBLE, values: keys.doubles }] : []),
    { tag: 42112, type: ASCII, values: gdalMetadata(r) },
    { tag: 42113, type: ASCII, values: "nan" },
  ];
  return layout(tags, sizes);
}

function valueBytes(t: Tag): number {
  const count = typeof t.values === "string" ? Buffer.byteLength(t.values) + 1 : t.values.length;
  return count * TYPE_SIZE[t.type];
}

/** Header, the IFD with its out-of-line values; strip offsets filled in as the strips will follow. */
function layout(tags: Tag[], sizes: number[]): GeoTiffHead {
  const ifdBytes = 2 + tags.length * 12 + 4;
  let extra = 0;
  for (const t of tags) if (valueBytes(t) > 4) extra += valueBytes(t) + (valueBytes(t) % 2);
  const dataStart = 8 + ifdBytes + extra;
  let total = dataStart;
  const offsets: number[] = [];
  for (const s of sizes) {
    offsets.push(total);
    total += s;
  }
  if (total > MAX_TIFF_BYTES) throw new Error("the GeoTIFF would exceed 4 GiB");
  (tags.find((t) => t.tag === 273) as Tag).values = offsets;
  const out = new Uint8Array(dataStart);
  const view = new DataView(out.buffer);
  out.set([0x49, 0x49, 42, 0]); // "II", 42: little-endian classic TIFF
  view.setUint32(4, 8, true);
  view.setUint16(8, tags.length, true);
  let entry = 10;
  let spill = 8 + ifdBytes;
  for (const t of tags) {
    const size = valueBytes(t);
    const count = typeof t.values === "string" ? Buffer.byteLength(t.values) + 1 : t.values.length;
    view.setUint16(entry, t.tag, true);
    view.setUint16(entry + 2, t.type, true);
    view.setUint32(entry + 4, count, true);
    const at = size > 4 ? spill : entry + 8;
    if (size > 4) {
      view.setUint32(entry + 8, spill, true);
      spill += size + (size % 2);
    }
    writeValues(view, out, at, t);
    entry += 12;
  }
  view.setUint32(entry, 0, true); // no next IFD
  return { head: out, bytes: total };
}

function writeValues(view: DataView, out: Uint8Array, at: number, t: Tag): void {
  if (typeof t.values === "string") {
    out.set(Buffer.from(t.values, "utf8"), at); // NUL-terminated: the byte after stays 0
    return;
  }
  t.values.forEach((v, i) => {
    if (t.type === SHORT) view.setUint16(at + i * 2, v, true);
    else if (t.type === LONG) view.setUint32(at + i * 4, v, true);
    else view.setFloat64(at + i * 8, v, true);
  });
}
