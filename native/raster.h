// Raster sampling of map tiles: 256 × 256 palette indices sampled from a decoded field.
// bilinearTile samples a regular lat/lon grid with the bracketing tables render/resample-tables.ts
// solves once per grid and level; projectedTile samples a projected grid bilinearly over the per-pixel
// tables render/resample-projected.ts keeps per tile, and gatherTile and gatherRuns sample it nearest,
// as a gather of per-node palette indices. Each runs the JavaScript's arithmetic in the same order
// (doubles, no fused multiply-add) with its missing-value rule, so it gives the same indices as
// the JavaScript it stands in for; every table entry is checked against the field first.
#ifndef GRIDCAST_RASTER_H
#define GRIDCAST_RASTER_H

#include <math.h>
#include <node_api.h>
#include <stdint.h>
#include <string.h>

#include "napi-args.h"

// A map tile's side in pixels.
#define TILE 256

// One palette index: 0 at or below `below` (NaN too), else the value's step clamped to 1..top.
static inline unsigned char index_of(double v, double scale, double offset, double below, double top) {
  if (!(v > below)) return 0;
  double t = v * scale + offset;
  return t < 1 ? 1 : t >= top ? (unsigned char)top : (unsigned char)(int32_t)t;
}

#define BILINEAR(NAME, T)                                                                                       \
  static void NAME(const T *f, const Pairs *cols, const Pairs *rows, size_t col0, size_t row0,                  \
                   const int32_t *runs, int nruns, double scale, double offset, double below, double top,       \
                   unsigned char *out) {                                                                          \
    const float *cw = cols->w;                                                                                    \
    for (size_t r = 0; r < TILE; r++) {                                                                           \
      unsigned char *o = out + r * TILE;                                                                          \
      size_t R = row0 + r;                                                                                        \
      int32_t r0 = rows->a[R];                                                                                    \
      if (r0 < 0) {                                                                                               \
        memset(o, 0, TILE);                                                                                       \
        continue;                                                                                                 \
      }                                                                                                           \
      int32_t r1 = rows->b[R];                                                                                    \
      double wy = rows->w[R];                                                                                     \
      if (r > 0 && r0 == rows->a[R - 1] && r1 == rows->b[R - 1] && rows->w[R] == rows->w[R - 1]) {              \
        memcpy(o, o - TILE, TILE);                                                                                \
        continue;                                                                                                 \
      }                                                                                                           \
      for (int k = 0; k < nruns; k++) {                                                                           \
        int32_t from = runs[k * 4], to = runs[k * 4 + 1], a = runs[k * 4 + 2], b = runs[k * 4 + 3];              \
        if (a < 0) {                                                                                              \
          memset(o + from, 0, (size_t)(to - from));                                                               \
          continue;                                                                                               \
        }                                                                                                         \
        double va = (double)f[r0 + a] * (1 - wy) + (double)f[r1 + a] * wy;                                        \
        double dv = (double)f[r0 + b] * (1 - wy) + (double)f[r1 + b] * wy - va;                                   \
        if (!isnan(dv)) {                                                                                         \
          unsigned char i0 = index_of(va + dv * (double)cw[col0 + from], scale, offset, below, top);              \
          unsigned char i1 = index_of(va + dv * (double)cw[col0 + to - 1], scale, offset, below, top);            \
          if (i0 == i1) {                                                                                         \
            memset(o + from, i0, (size_t)(to - from));                                                            \
            continue;                                                                                             \
          }                                                                                                       \
          for (int32_t c = from; c < to; c++) o[c] = index_of(va + dv * (double)cw[col0 + c], scale, offset, below, top); \
          continue;                                                                                               \
        }                                                                                                         \
        for (int32_t c = from; c < to; c++) {                                                                     \
          double wx = cw[col0 + c];                                                                               \
          double p00 = f[r0 + a], p01 = f[r0 + b], p10 = f[r1 + a], p11 = f[r1 + b];                              \
          double v = (p00 + (p01 - p00) * wx) * (1 - wy) + (p10 + (p11 - p10) * wx) * wy;                        \
          if (isnan(v)) v = f[(wy <= 0.5 ? r0 : r1) + (wx <= 0.5 ? a : b)];                                       \
          o[c] = index_of(v, scale, offset, below, top);                                                          \
        }                                                                                                         \
      }                                                                                                           \
    }                                                                                                             \
  }

BILINEAR(bilinear_f32, float)
BILINEAR(bilinear_f64, double)

// bilinearTile(field, colsA, colsB, colsW, rowsA, rowsB, rowsW, col0, row0, palette, out):
// palette is a Float64Array [scale, offset, below, top]; out receives 256 × 256 indices. Every
// field offset the tables name for this tile is checked against the field first (RangeError).
static napi_value bilinear_tile(napi_env env, napi_callback_info info) {
  size_t argc = 11;
  napi_value argv[11];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  const char *usage = "bilinearTile(field, colsA, colsB, colsW, rowsA, rowsB, rowsW, col0, row0, palette, out)";
  const void *fp;
  void *op;
  const double *pal = NULL;
  size_t flen, olen;
  int f32;
  Pairs cols, rows;
  uint32_t col0 = 0, row0 = 0;
  if (argc < 11 || !field_of(env, argv[0], &fp, &flen, &f32) || !pairs_of(env, argv[1], argv[2], argv[3], &cols) ||
      !pairs_of(env, argv[4], argv[5], argv[6], &rows) || napi_get_value_uint32(env, argv[7], &col0) != napi_ok ||
      napi_get_value_uint32(env, argv[8], &row0) != napi_ok || !(pal = palette_of(env, argv[9])) ||
      !array_of(env, argv[10], napi_uint8_array, &op, &olen)) {
    return throw_type(env, usage);
  }
  if (olen != TILE * TILE || (size_t)col0 + TILE > cols.len || (size_t)row0 + TILE > rows.len || !palette_top_ok(pal)) {
    napi_throw_range_error(env, NULL, "bilinearTile: sizes do not match");
    return NULL;
  }
  // Runs of columns sharing their two lon nodes, and the furthest field offset any pixel reads.
  int32_t runs[TILE * 4];
  int nruns = 0;
  int64_t reach_col = 0, reach_row = 0;
  for (int c = 0; c < TILE; c++) {
    int32_t a = cols.a[col0 + c], b = cols.b[col0 + c];
    if (a >= 0) {
      if (b < 0) goto bad;
      if (a > reach_col) reach_col = a;
      if (b > reach_col) reach_col = b;
    }
    if (nruns > 0 && runs[(nruns - 1) * 4 + 2] == a && runs[(nruns - 1) * 4 + 3] == b) {
      runs[(nruns - 1) * 4 + 1] = c + 1;
    } else {
      runs[nruns * 4] = c;
      runs[nruns * 4 + 1] = c + 1;
      runs[nruns * 4 + 2] = a;
      runs[nruns * 4 + 3] = b;
      nruns++;
    }
  }
  for (int r = 0; r < TILE; r++) {
    int32_t a = rows.a[row0 + r], b = rows.b[row0 + r];
    if (a < 0) continue;
    if (b < 0) goto bad;
    if (a > reach_row) reach_row = a;
    if (b > reach_row) reach_row = b;
  }
  if (reach_row + reach_col >= (int64_t)flen) goto bad;
  if (f32) {
    bilinear_f32((const float *)fp, &cols, &rows, col0, row0, runs, nruns, pal[0], pal[1], pal[2], pal[3],
                 (unsigned char *)op);
  } else {
    bilinear_f64((const double *)fp, &cols, &rows, col0, row0, runs, nruns, pal[0], pal[1], pal[2], pal[3],
                 (unsigned char *)op);
  }
  return NULL;
bad:
  napi_throw_range_error(env, NULL, "bilinearTile: the tables point outside the field");
  return NULL;
}

// Projected grids (render/resample-projected.ts): per-pixel tables solved once per tile.
#define PROJECTED(NAME, T)                                                                                    \
  static int NAME(const T *f, size_t flen, size_t nx, const int32_t *base, const uint16_t *wxq,               \
                  const uint16_t *wyq, double scale, double offset, double below, double top,                 \
                  unsigned char *out) {                                                                        \
    const double unit = 1.0 / 65535.0;                                                                         \
    for (size_t k = 0; k < TILE * TILE; k++) {                                                                \
      int32_t b = base[k];                                                                                    \
      if (b < 0) {                                                                                            \
        out[k] = 0;                                                                                           \
        continue;                                                                                             \
      }                                                                                                       \
      if ((size_t)b + nx + 1 >= flen) return 0;                                                               \
      double fx = wxq[k] * unit, fy = wyq[k] * unit;                                                          \
      double p00 = f[b], p01 = f[b + 1], p10 = f[b + nx], p11 = f[b + nx + 1];                                 \
      double v = (p00 + (p01 - p00) * fx) * (1 - fy) + (p10 + (p11 - p10) * fx) * fy;                          \
      if (isnan(v)) {                                                                                         \
        double wx = wxq[k] / 65535.0, wy = wyq[k] / 65535.0;                                                  \
        v = (p00 + (p01 - p00) * wx) * (1 - wy) + (p10 + (p11 - p10) * wx) * wy;                               \
        if (isnan(v)) v = f[b + (wy <= 0.5 ? 0 : nx) + (wx <= 0.5 ? 0 : 1)];                                  \
      }                                                                                                       \
      out[k] = index_of(v, scale, offset, below, top);                                                        \
    }                                                                                                         \
    return 1;                                                                                                 \
  }

PROJECTED(projected_f32, float)
PROJECTED(projected_f64, double)

// projectedTile(field, nx, base, wx, wy, palette, out): one 256 × 256 tile of palette indices
// sampled bilinearly over per-pixel tables (render/resample-projected.ts in C, same arithmetic in
// the same order): base is the field offset of each pixel's cell (-1 off the grid), wx and wy its
// weights in 1/65535. RangeError when a cell lies outside the field.
static napi_value projected_tile(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value argv[7];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  const char *usage = "projectedTile(field, nx, base: Int32Array, wx: Uint16Array, wy: Uint16Array, palette, out)";
  const void *fp;
  void *bp, *xp, *yp, *op;
  const double *pal = NULL;
  size_t flen, blen, xlen, ylen, olen;
  int f32;
  uint32_t nx = 0;
  if (argc < 7 || !field_of(env, argv[0], &fp, &flen, &f32) || napi_get_value_uint32(env, argv[1], &nx) != napi_ok ||
      !array_of(env, argv[2], napi_int32_array, &bp, &blen) || !array_of(env, argv[3], napi_uint16_array, &xp, &xlen) ||
      !array_of(env, argv[4], napi_uint16_array, &yp, &ylen) || !(pal = palette_of(env, argv[5])) ||
      !array_of(env, argv[6], napi_uint8_array, &op, &olen)) {
    return throw_type(env, usage);
  }
  if (blen != TILE * TILE || xlen != blen || ylen != blen || olen != blen || nx < 2 || !palette_top_ok(pal)) {
    napi_throw_range_error(env, NULL, "projectedTile: sizes do not match");
    return NULL;
  }
  int ok = f32
               ? projected_f32((const float *)fp, flen, nx, (const int32_t *)bp, (const uint16_t *)xp,
                               (const uint16_t *)yp, pal[0], pal[1], pal[2], pal[3], (unsigned char *)op)
               : projected_f64((const double *)fp, flen, nx, (const int32_t *)bp, (const uint16_t *)xp,
                               (const uint16_t *)yp, pal[0], pal[1], pal[2], pal[3], (unsigned char *)op);
  if (!ok) napi_throw_range_error(env, NULL, "projectedTile: the tables point outside the field");
  return NULL;
}

// gatherTile(colours, nodes, out): out[k] = colours[nodes[k]] (nearest sampling of a projected
// grid: the palette index of every node, gathered by a per-pixel table whose off-grid pixels name a
// last, transparent entry). RangeError when a node lies outside `colours` (`out` is then partly
// written).
static napi_value gather_tile(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  void *cp, *np, *op;
  size_t clen, nlen, olen;
  if (argc < 3 || !bytes_of(env, argv[0], &cp, &clen) || !array_of(env, argv[1], napi_int32_array, &np, &nlen) ||
      !bytes_of(env, argv[2], &op, &olen)) {
    return throw_type(env, "gatherTile(colours: Uint8Array, nodes: Int32Array, out: Uint8Array)");
  }
  if (nlen != olen || clen == 0 || clen > UINT32_MAX) {
    napi_throw_range_error(env, NULL, "gatherTile: sizes do not match");
    return NULL;
  }
  const unsigned char *colours = (const unsigned char *)cp;
  const uint32_t *nodes = (const uint32_t *)np;
  unsigned char *out = (unsigned char *)op;
  for (size_t k = 0; k < nlen; k++) {
    uint32_t i = nodes[k];  // a negative node reads as a huge one
    if (i >= clen) {
      napi_throw_range_error(env, NULL, "gatherTile: the table points outside the field");
      return NULL;
    }
    out[k] = colours[i];
  }
  return NULL;
}

// gatherRuns(colours, nodes, lengths, out): gatherTile over a table kept as runs of pixels (in
// row-major order) that share their node: run r fills lengths[r] + 1 pixels with colours[nodes[r]].
// Zoomed in, a cell spans several pixels of a row, so the runs are a few times fewer than the
// pixels and the table a few times smaller. RangeError when a node lies outside `colours` or the
// runs do not cover `out` exactly (`out` is then partly written).
static napi_value gather_runs(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  void *cp, *np, *lp, *op;
  size_t clen, nlen, llen, olen;
  if (argc < 4 || !bytes_of(env, argv[0], &cp, &clen) || !array_of(env, argv[1], napi_int32_array, &np, &nlen) ||
      !bytes_of(env, argv[2], &lp, &llen) || !bytes_of(env, argv[3], &op, &olen)) {
    return throw_type(env, "gatherRuns(colours: Uint8Array, nodes: Int32Array, lengths: Uint8Array, out: Uint8Array)");
  }
  if (nlen != llen || clen == 0 || clen > UINT32_MAX) {
    napi_throw_range_error(env, NULL, "gatherRuns: sizes do not match");
    return NULL;
  }
  const unsigned char *colours = (const unsigned char *)cp;
  const uint32_t *nodes = (const uint32_t *)np;
  const unsigned char *lengths = (const unsigned char *)lp;
  unsigned char *out = (unsigned char *)op;
  size_t pos = 0;
  for (size_t r = 0; r < nlen; r++) {
    uint32_t i = nodes[r];  // a negative node reads as a huge one
    size_t len = (size_t)lengths[r] + 1;
    if (i >= clen || len > olen - pos) {
      napi_throw_range_error(env, NULL, "gatherRuns: the table points outside the field or the tile");
      return NULL;
    }
    uint64_t v = (uint64_t)colours[i] * 0x0101010101010101ULL;
    unsigned char *o = out + pos, *end = o + len;
    if (olen - pos >= len + 15) {
      // Sixteen bytes a store: the few past the run's end lie inside `out` and the next runs,
      // which cover the rest of it, write them again.
      do {
        memcpy(o, &v, 8);
        memcpy(o + 8, &v, 8);
        o += 16;
      } while (o < end);
    } else {
      memset(o, (int)(v & 0xff), len);
    }
    pos += len;
  }
  if (pos != olen) {
    napi_throw_range_error(env, NULL, "gatherRuns: the runs do not cover the tile");
    return NULL;
  }
  return NULL;
}

// runsOf(nodes: Int32Array, runNodes: Int32Array, runLengths: Uint8Array): the nodes as runs of
// equal ones, at most 256 long (run r: runNodes[r], runLengths[r] + 1 pixels), as
// render/resample-projected.ts's nearestRuns makes them; returns the number of runs. runNodes and
// runLengths hold at least as many items as nodes.
static napi_value runs_of(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  void *np, *rp, *lp;
  size_t nlen, rlen, llen;
  if (argc < 3 || !array_of(env, argv[0], napi_int32_array, &np, &nlen) ||
      !array_of(env, argv[1], napi_int32_array, &rp, &rlen) || !bytes_of(env, argv[2], &lp, &llen)) {
    return throw_type(env, "runsOf(nodes: Int32Array, runNodes: Int32Array, runLengths: Uint8Array)");
  }
  if (rlen < nlen || llen < nlen || nlen > UINT32_MAX) {
    napi_throw_range_error(env, NULL, "runsOf: sizes do not match");
    return NULL;
  }
  const int32_t *nodes = np;
  int32_t *runNodes = rp;
  unsigned char *lengths = lp;
  size_t r = 0;
  for (size_t k = 0; k < nlen;) {
    int32_t v = nodes[k];
    size_t end = k + 1, most = nlen - k < 256 ? nlen : k + 256;
    while (end < most && nodes[end] == v) end++;
    runNodes[r] = v;
    lengths[r] = (unsigned char)(end - k - 1);
    r++;
    k = end;
  }
  napi_value ret;
  napi_create_uint32(env, (uint32_t)r, &ret);
  return ret;
}

#endif
