// Resampling of a regular lat/lon grid onto mercator tiles: nearest node (categorical fields) or
// bilinear (continuous ones). All geometry is solved once per zoom level: tables from world pixel
// column to lon index (or the two bracketing indices and a weight) and from world pixel row to the
// offset of a lat row in the field. A tile is then table slices, a few multiplies per pixel and a
// palette lookup.
//
// The tables are made in resample-tables.ts, the tiles painted from them in resample-paint.ts;
// this file holds the sampler one grid and level hand out, and chooses the addon when it is built.
import { InvalidParameterError } from "../errors.ts";
import { nativeAddon } from "../native.ts";
import { PALETTE_COLORS, type Palette } from "./colormap.ts";
import { cellValue, renderBilinear, renderNearest } from "./resample-paint.ts";
import { columnPairs, columnTable, type PairTable, rowPairs, rowTable } from "./resample-tables.ts";
import { SAMPLE_MAX_ZOOM, TILE_SIZE, validateTile } from "./tiles.ts";

export interface LatLonGrid {
  /** Node latitudes, strictly ascending or strictly descending. */
  lat: ArrayLike<number>;
  /** Node longitudes, monotonic in either direction; 0..360, -180..180, or a patch crossing the antimeridian. */
  lon: ArrayLike<number>;
}

export interface LevelSampler {
  readonly z: number;
  /** Whether any pixel of the tile falls on the grid (false: the tile is fully transparent). */
  covers(x: number, y: number): boolean;
  /** Palette indices of tile (x, y), row-major; `field` is in (lat, lon) C order. */
  renderTile(
    x: number,
    y: number,
    field: Float32Array | Float64Array,
    palette: Palette,
    out?: Uint8Array,
    method?: Resample,
  ): Uint8Array;
  /**
   * Bilinear value at world pixel centre (col, row) of this level (fractional positions allowed
   * only through the tables' pixel grid, so integers), NaN off the grid. A cell with a missing
   * corner gives its nearest corner's value, as the smooth tiles do.
   */
  valueAt(col: number, row: number, field: Float32Array | Float64Array): number;
}

export type Resample = "nearest" | "bilinear";

function anyCovered(table: Int32Array, from: number): boolean {
  for (let i = from; i < from + TILE_SIZE; i++) if (table[i] >= 0) return true;
  return false;
}

/** The palette's arithmetic as the addon takes it: scale, offset, below, top. */
const paletteArgs = new Float64Array(4);

export function createLevelSampler(grid: LatLonGrid, z: number): LevelSampler {
  validateTile(z, 0, 0, SAMPLE_MAX_ZOOM);
  const nlat = grid.lat.length;
  const nlon = grid.lon.length;
  const cols = columnTable(grid.lon, z);
  const rows = rowTable(grid.lat, nlon, z);
  // Bilinear tables are made on first use: a categorical-only grid never needs them.
  let pairs: { cols: PairTable; rows: PairTable } | undefined;
  const smooth = () => {
    pairs ??= { cols: columnPairs(grid.lon, z), rows: rowPairs(grid.lat, nlon, z) };
    return pairs;
  };

  return {
    z,
    covers(x, y) {
      validateTile(z, x, y, SAMPLE_MAX_ZOOM);
      return anyCovered(cols, x * TILE_SIZE) && anyCovered(rows, y * TILE_SIZE);
    },
    valueAt(col, row, field) {
      const { cols: cp, rows: rp } = smooth();
      if (!(col >= 0 && col < cp.a.length && row >= 0 && row < rp.a.length)) return Number.NaN;
      const r0 = rp.a[row];
      const c0 = cp.a[col];
      if (r0 < 0 || c0 < 0) return Number.NaN;
      return cellValue(field, r0, rp.b[row], rp.w[row], c0, cp.b[col], cp.w[col]);
    },
    renderTile(x, y, field, palette, out = new Uint8Array(TILE_SIZE * TILE_SIZE), method = "nearest") {
      validateTile(z, x, y, SAMPLE_MAX_ZOOM);
      if (field.length !== nlat * nlon) {
        throw new InvalidParameterError("field", `field has ${field.length} values, grid needs ${nlat}×${nlon}`);
      }
      if (out.length !== TILE_SIZE * TILE_SIZE) throw new RangeError(`out must hold ${TILE_SIZE * TILE_SIZE} indices`);
      if (method === "bilinear") {
        const p = smooth();
        // The addon runs the same arithmetic in C when it is built (native/raster.h, bilinearTile).
        const addon = nativeAddon();
        if (addon) {
          const { scale, offset, below } = palette;
          paletteArgs[0] = scale;
          paletteArgs[1] = offset;
          paletteArgs[2] = below;
          paletteArgs[3] = PALETTE_COLORS;
          const { cols: c, rows: r } = p;
          addon.bilinearTile(field, c.a, c.b, c.w, r.a, r.b, r.w, x * TILE_SIZE, y * TILE_SIZE, paletteArgs, out);
        } else renderBilinear(p.cols, p.rows, x, y, field, palette, out);
        return out;
      }
      renderNearest(cols, rows, x, y, field, palette, out);
      return out;
    },
  };
}
