// cellNeighbours: every cell's nearest other cells on an unstructured grid, nearest first, with the
// bounds a tile walk proves its answers with (store/cell-index.ts's neighbourhood() in C). The
// cells are searched through the index's buckets exactly as the JavaScript searches them (caps of
// doubling radius over latitude bands cut into longitude buckets), ranked by the same dot products
// in the same order (doubles, no fused multiply-add), so both give the same lists; the bounds use
// only +, ×, / and square roots, which round the same everywhere.
#ifndef GRIDCAST_CELL_NEIGHBOURS_H
#define GRIDCAST_CELL_NEIGHBOURS_H

#include <math.h>
#include <node_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "napi-args.h"

#define CN_PI 3.141592653589793
#define CN_RAD (CN_PI / 180)

typedef struct {
  const int32_t *cols, *first, *start, *cells;
  int32_t nBands;
  double band;
  int32_t *ranges;  // 4 per band
} cn_index;

static int32_t cn_band_of(int32_t nBands, double lat) {
  double b = floor(((lat * CN_RAD + CN_PI / 2) / CN_PI) * nBands);
  if (b < 0) b = 0;
  if (b > nBands - 1) b = nBands - 1;
  return (int32_t)b;
}

static int32_t cn_col_of(int32_t ncol, double lon) {
  double w = fmod(fmod(lon + 180, 360) + 360, 360);
  double c = floor((w / 360) * ncol);
  if (c > ncol - 1) c = ncol - 1;
  return (int32_t)c;
}

// The runs of the index's cells the buckets a cap of radius r around (lat, lon) touch (CellIndex's
// #capRanges): start, end pairs into ix->ranges; returns the number of entries.
static int32_t cn_cap_ranges(const cn_index *ix, double lat, double lon, double r) {
  double f = lat * CN_RAD;
  int whole = r >= CN_PI;
  int32_t b0 = whole ? 0 : cn_band_of(ix->nBands, lat - r / CN_RAD);
  int32_t b1 = whole ? ix->nBands - 1 : cn_band_of(ix->nBands, lat + r / CN_RAD);
  int polar = fabs(f) + r >= CN_PI / 2;
  double half = whole || polar ? 180 : asin(fmin(1, sin(r) / cos(f))) / CN_RAD;
  int32_t q = 0;
  for (int32_t b = b0; b <= b1; b++) {
    int32_t ncol = ix->cols[b], first = ix->first[b];
    int32_t c0 = 0, c1 = ncol - 1;
    if (half < 180) {
      c0 = cn_col_of(ncol, lon - half);
      c1 = cn_col_of(ncol, lon + half);
      if (c1 < c0 || (c1 == c0 && 2 * half >= 360.0 / ncol)) c1 += ncol;
    }
    if (c1 - c0 >= ncol) {
      c0 = 0;
      c1 = ncol - 1;
    }
    ix->ranges[q++] = ix->start[first + c0];
    ix->ranges[q++] = ix->start[first + (c1 < ncol - 1 ? c1 : ncol - 1) + 1];
    if (c1 >= ncol) {
      ix->ranges[q++] = ix->start[first];
      ix->ranges[q++] = ix->start[first + c1 - ncol + 1];
    }
  }
  return q;
}

// cos(max(0, θ/2 − margin)) for the angle θ whose cosine is d, from θ/2's cosine and sine
// (square roots of (1 ± d)/2) and the margin's: resample-cells' bounds, identical in JavaScript.
static double cn_half_bound(double d, double cosM, double sinM) {
  double c = fmin(1, fmax(-1, d));
  double s = sqrt((1 - c) / 2);
  if (s <= sinM) return 1;
  return sqrt((1 + c) / 2) * cosM + s * sinM;
}

// Asks the kernel for huge pages under the whole 2 MB stretches of a fresh output array: its first
// write then costs one fault a stretch, not one every 4 kB (tens of megabytes for a large grid).
// Only advice: where the kernel does not take it, nothing changes.
static void cn_advise_huge(void *p, size_t bytes) {
#ifdef MADV_HUGEPAGE
  const uintptr_t huge = 2u << 20;
  uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1), b = ((uintptr_t)p + bytes) & ~(huge - 1);
  if (b > a) madvise((void *)a, b - a, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

// cellNeighbours(x, y, z, cells, start, cols, first, k, cosMargin, sinMargin, list, half, outer)
static napi_value cell_neighbours(napi_env env, napi_callback_info info) {
  size_t argc = 13;
  napi_value argv[13];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  const char *usage =
      "cellNeighbours(x, y, z: Float64Array, cells, start, cols, first: Int32Array, k, cosMargin, sinMargin, list: "
      "Int32Array, half: Float32Array, outer: Float64Array)";
  if (argc < 13) return throw_type(env, usage);
  void *p[7], *lp, *hp, *op;
  size_t len[7], llen, hlen, olen;
  for (int a = 0; a < 7; a++) {
    if (!array_of(env, argv[a], a < 3 ? napi_float64_array : napi_int32_array, &p[a], &len[a]))
      return throw_type(env, usage);
  }
  int32_t k = 0;
  double cosM = 0, sinM = 0;
  if (napi_get_value_int32(env, argv[7], &k) != napi_ok || napi_get_value_double(env, argv[8], &cosM) != napi_ok ||
      napi_get_value_double(env, argv[9], &sinM) != napi_ok || !array_of(env, argv[10], napi_int32_array, &lp, &llen) ||
      !array_of(env, argv[11], napi_float32_array, &hp, &hlen) || !array_of(env, argv[12], napi_float64_array, &op, &olen))
    return throw_type(env, usage);
  size_t n = len[0];
  const int32_t *cells = p[3], *start = p[4], *cols = p[5], *first = p[6];
  size_t nBands = len[5];
  int ok = len[1] == n && len[2] == n && len[3] == n && k >= 1 && (size_t)k < n && nBands >= 1 && len[6] == nBands + 1 &&
           llen == n * (size_t)k && hlen == llen && olen == n;
  // The buckets must hold the cells exactly: every bucket's run within `cells`, in order.
  if (ok) ok = first[0] == 0 && first[nBands] >= 1 && len[4] == (size_t)first[nBands] + 1 && start[0] == 0 &&
               (size_t)start[first[nBands]] == n;
  for (size_t b = 0; ok && b < nBands; b++) ok = cols[b] >= 1 && first[b + 1] == first[b] + cols[b];
  for (int32_t b = 0; ok && b < first[nBands]; b++) ok = start[b + 1] >= start[b];
  for (size_t j = 0; ok && j < n; j++) ok = cells[j] >= 0 && (size_t)cells[j] < n;
  if (!ok) {
    napi_throw_range_error(env, NULL, "cellNeighbours: sizes do not match");
    return NULL;
  }
  const double *X = p[0], *Y = p[1], *Z = p[2];
  int32_t *list = lp;
  float *half = hp;
  double *outer = op;
  int32_t *ranges = malloc(4 * nBands * sizeof(int32_t));
  int32_t *ids = malloc((size_t)k * sizeof(int32_t));
  double *dots = malloc((size_t)k * sizeof(double));
  if (!ranges || !ids || !dots) {
    free(ranges);
    free(ids);
    free(dots);
    napi_throw_error(env, NULL, "cellNeighbours: out of memory");
    return NULL;
  }
  cn_advise_huge(list, llen * sizeof(int32_t));
  cn_advise_huge(half, hlen * sizeof(float));
  cn_advise_huge(outer, olen * sizeof(double));
  cn_index ix = {cols, first, start, cells, (int32_t)nBands, CN_PI / (double)nBands, ranges};
  for (size_t i = 0; i < n; i++) {
    double qx = X[i], qy = Y[i], qz = Z[i];
    double lat = asin(fmax(-1, fmin(1, qz))) / CN_RAD;
    double lon = atan2(qy, qx) / CN_RAD;
    for (double r = 2 * ix.band;; r *= 2) {
      int32_t found = 0;
      int whole = r >= CN_PI;
      int32_t q = cn_cap_ranges(&ix, lat, lon, r);
      for (int32_t e = 0; e < q; e += 2) {
        for (int32_t j = ranges[e], end = ranges[e + 1]; j < end; j++) {
          int32_t m = cells[j];
          if ((size_t)m == i) continue;
          double d = X[m] * qx + Y[m] * qy + Z[m] * qz;
          if (found == k && !(d > dots[k - 1] || (d == dots[k - 1] && m < ids[k - 1]))) continue;
          int32_t at = found < k ? found++ : k - 1;
          while (at > 0 && (dots[at - 1] < d || (dots[at - 1] == d && ids[at - 1] > m))) {
            dots[at] = dots[at - 1];
            ids[at] = ids[at - 1];
            at--;
          }
          dots[at] = d;
          ids[at] = m;
        }
      }
      if (whole || (found == k && acos(fmin(1, dots[k - 1])) <= r)) break;
    }
    for (int32_t j = 0; j < k; j++) {
      size_t e = i * (size_t)k + (size_t)j;
      list[e] = ids[j];
      // The float32 at or above the bound: it proves a little less than it could, never more.
      double v = cn_half_bound(dots[j], cosM, sinM);
      float h = (float)v;
      if ((double)h < v) h = nextafterf(h, INFINITY);
      half[e] = h;
    }
    outer[i] = cn_half_bound(dots[k - 1], cosM, sinM);
  }
  free(ranges);
  free(ids);
  free(dots);
  return NULL;
}

#endif
