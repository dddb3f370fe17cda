// walkCells: the nearest cell of every pixel of a map tile on an unstructured grid (ICON, reduced
// Gaussian, anemoi-datasets, HEALPix), row by row, each pixel walked to from the cell of the pixel
// before it through the neighbourhoods the grid's spatial index lists (store/cell-index.ts). An
// answer is written only where the neighbourhood's bounds prove it (half[e]: nearer to cell c than
// to its listed neighbour e and every one after it; outer[c]: the nearest is c or a listed
// neighbour of c). Elsewhere the pixel is
// left -2 for the JavaScript to search. It is render/resample-cells.ts's walk in C, with the same
// arithmetic in the same order (doubles, no fused multiply-add), so both give the same cells; a
// pixel within half the way to its cell's nearest neighbour (most of them) is settled before the
// loop over the neighbours, as the loop's first test would.
#ifndef GRIDCAST_CELL_WALK_H
#define GRIDCAST_CELL_WALK_H

#include <math.h>
#include <node_api.h>
#include <stdint.h>

#include "napi-args.h"

#define WALK_TILE 256
// Steps a pixel's walk may take from the previous pixel's cell before it is left to a search.
#define WALK_STEPS 4

// walkCells(x, y, z, list, half, outer, cosLat, sinLat, cosLon, sinLon, start, reach, off, out):
// returns how many pixels were left -2. `start` is a cell near the tile's first pixel; `reach`
// the grid's reach in radians (Infinity for a global grid: a proven cell farther than it is `off`).
static napi_value walk_cells(napi_env env, napi_callback_info info) {
  size_t argc = 14;
  napi_value argv[14];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  const char *usage =
      "walkCells(x, y, z, list: Int32Array, half: Float32Array, outer, cosLat, sinLat, cosLon, sinLon, start, reach, off, out: Int32Array)";
  void *p[10], *op;
  size_t len[10], olen;
  int32_t start = -1, off = 0;
  double reach = 0;
  if (argc < 14) return throw_type(env, usage);
  for (int a = 0; a < 10; a++) {
    napi_typedarray_type want = a == 3 ? napi_int32_array : a == 4 ? napi_float32_array : napi_float64_array;
    if (!array_of(env, argv[a], want, &p[a], &len[a]))
      return throw_type(env, usage);
  }
  if (napi_get_value_int32(env, argv[10], &start) != napi_ok || napi_get_value_double(env, argv[11], &reach) != napi_ok ||
      napi_get_value_int32(env, argv[12], &off) != napi_ok || !array_of(env, argv[13], napi_int32_array, &op, &olen)) {
    return throw_type(env, usage);
  }
  size_t n = len[0];
  if (len[1] != n || len[2] != n || len[4] != len[3] || len[5] != n || n == 0 || len[3] % n != 0 || len[6] != WALK_TILE ||
      len[7] != WALK_TILE || len[8] != WALK_TILE || len[9] != WALK_TILE || olen != WALK_TILE * WALK_TILE ||
      start >= (int64_t)n) {
    napi_throw_range_error(env, NULL, "walkCells: sizes do not match");
    return NULL;
  }
  const double *restrict X = p[0], *restrict Y = p[1], *restrict Z = p[2], *restrict outer = p[5];
  const float *restrict half = p[4];
  const double *restrict cosLat = p[6], *restrict sinLat = p[7], *restrict cosLon = p[8], *restrict sinLon = p[9];
  const int32_t *restrict list = p[3];
  size_t k = len[3] / n;
  int32_t *restrict out = op;
  int bounded = isfinite(reach);
  uint32_t left = 0;
  int64_t rowStart = start;
  for (int r = 0, q = 0; r < WALK_TILE; r++) {
    double cf = cosLat[r], qz = sinLat[r];
    int64_t cur = rowStart;
    for (int c = 0; c < WALK_TILE; c++, q++) {
      double qx = cf * cosLon[c], qy = cf * sinLon[c];
      int64_t found = -1;
      double foundDot = 0;
      if (cur >= 0) {
        double d = X[cur] * qx + Y[cur] * qy + Z[cur] * qz;
        // Most pixels lie within half the way to the cell's nearest neighbour: proven at once.
        if (d >= (double)half[(size_t)cur * k]) {
          found = cur;
          foundDot = d;
        }
        for (int step = 0; found < 0 && step < WALK_STEPS; step++) {
          int64_t best = cur;
          double bestDot = d;
          int proven = 0;
          const int32_t *nb = list + (size_t)cur * k;
          const float *hb = half + (size_t)cur * k;
          for (size_t j = 0;; j++) {
            if (j == k) {
              proven = d >= outer[cur];
              break;
            }
            if (d >= (double)hb[j]) {
              proven = 1;
              break;
            }
            int64_t m = nb[j];
            if (m < 0 || m >= (int64_t)n) {
              napi_throw_range_error(env, NULL, "walkCells: a neighbour lies outside the grid");
              return NULL;
            }
            double dm = X[m] * qx + Y[m] * qy + Z[m] * qz;
            if (dm > bestDot || (dm == bestDot && m < best)) {
              best = m;
              bestDot = dm;
            }
          }
          if (proven) {
            found = best;
            foundDot = bestDot;
            break;
          }
          if (best == cur) break;
          cur = best;
          d = bestDot;
        }
      }
      if (found >= 0) {
        cur = found;
        out[q] = bounded && acos(fmin(1, fmax(-1, foundDot))) > reach ? off : (int32_t)found;
      } else {
        out[q] = -2;
        left++;
      }
      if (c == 0) rowStart = cur;
    }
  }
  napi_value ret;
  napi_create_uint32(env, left, &ret);
  return ret;
}

#endif
