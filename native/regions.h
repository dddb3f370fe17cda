// Region copies: runs of items moved between two typed arrays (a decoded chunk and the region it
// feeds) as a geometry describes them, one memmove per run where JavaScript pays a subarray view or
// a scalar loop per run. copyRuns does it on the calling thread; decodeRuns (jobs.h) does it on
// libuv's pool after decoding the chunk, with the same geometry checked the same way here. Every
// run is bounds-checked against both arrays before the first byte moves.
//
// A geometry is a Float64Array [srcStart, dstStart, n, k, count_1..k, srcStride_1..k,
// dstStride_1..k] (values after those are ignored), all in items: runs of n items, one for every
// index of the k outer dimensions (the first varying slowest).
#ifndef GRIDCAST_REGIONS_H
#define GRIDCAST_REGIONS_H

#include <node_api.h>
#include <stdio.h>
#include <string.h>

#include "napi-args.h"

#define MAX_OUTER 16

// Runs of `item`-byte items from src to dst as geom describes (checked by the caller).
static void move_runs(const char *src, char *dst, size_t item, const double *g) {
  const size_t run = (size_t)g[2] * item;
  const int k = (int)g[3];
  long long s = (long long)g[0], t = (long long)g[1];
  long long idx[16] = {0};
  long long cnt[16], ss[16], ds[16];
  for (int d = 0; d < k; d++) {
    cnt[d] = (long long)g[4 + d];
    ss[d] = (long long)g[4 + k + d];
    ds[d] = (long long)g[4 + 2 * k + d];
  }
  for (;;) {
    memmove(dst + t * (long long)item, src + s * (long long)item, run);
    int d = k - 1;
    while (d >= 0) {
      s += ss[d];
      t += ds[d];
      if (++idx[d] < cnt[d]) break;
      s -= cnt[d] * ss[d];
      t -= cnt[d] * ds[d];
      idx[d] = 0;
      d--;
    }
    if (d < 0) break;
  }
}

// lo/hi: the lowest and highest item a copy touches, given its start, run length and outer dims.
static int reach_ok(double start, double n, int k, const double *count, const double *stride, size_t len) {
  double lo = start, hi = start + n - 1;
  for (int d = 0; d < k; d++) {
    double r = (count[d] - 1) * stride[d];
    if (r < 0) lo += r; else hi += r;
  }
  return lo >= 0 && hi < (double)len;
}

// A geometry of `len` values (at least 4) checked for what `fn` needs: whole numbers, a run length
// and an outer rank it can hold, and all its counts and strides present. 0 after throwing a
// TypeError naming `fn`.
static int runs_geometry_ok(napi_env env, const char *fn, const double *g, size_t len) {
  char msg[96];
  for (size_t i = 0; i < len; i++) {
    if (!whole(g[i])) {
      snprintf(msg, sizeof msg, "%s: geom holds a value that is not a whole number", fn);
      throw_type(env, msg);
      return 0;
    }
  }
  int k = (int)g[3];
  if (g[2] < 0 || k < 0 || k > MAX_OUTER || len < (size_t)(4 + 3 * k)) {
    snprintf(msg, sizeof msg, "%s: geom does not describe a copy", fn);
    throw_type(env, msg);
    return 0;
  }
  return 1;
}

// Whether a checked geometry copies nothing (no items a run, or an outer count of none).
static int runs_empty(const double *g) {
  int empty = g[2] == 0;
  for (int d = 0, k = (int)g[3]; d < k; d++) empty = empty || g[4 + d] <= 0;
  return empty;
}

// Whether every run of a checked, non-empty geometry lies inside both arrays (in items).
static int runs_inside(const double *g, size_t src_items, size_t dst_items) {
  int k = (int)g[3];
  return reach_ok(g[0], g[2], k, g + 4, g + 4 + k, src_items) && reach_ok(g[1], g[2], k, g + 4, g + 4 + 2 * k, dst_items);
}

// copyRuns(src, dst, geom): the runs geom describes copied from src to dst, which must have the
// same item size. RangeError, nothing copied, when a run lies outside either array.
static napi_value copy_runs(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  char *src = NULL, *dst = NULL, *gp = NULL;
  size_t src_len = 0, dst_len = 0, glen = 0, src_item = 0, dst_item = 0, gitem = 0;
  napi_typedarray_type st, dt, gt;
  if (argc < 3 || !items_of(env, argv[0], &src, &src_len, &src_item, &st) ||
      !items_of(env, argv[1], &dst, &dst_len, &dst_item, &dt) || !items_of(env, argv[2], &gp, &glen, &gitem, &gt)) {
    return throw_type(env, "copyRuns(src: TypedArray, dst: TypedArray, geom: Float64Array)");
  }
  const double *g = (const double *)gp;
  if (gt != napi_float64_array || src_item != dst_item || glen < 4) {
    return throw_type(env, "copyRuns: geom must be a Float64Array and both arrays of one item size");
  }
  if (!runs_geometry_ok(env, "copyRuns", g, glen) || runs_empty(g)) return NULL;
  if (!runs_inside(g, src_len, dst_len)) {
    napi_throw_range_error(env, NULL, "copyRuns: a run lies outside an array");
    return NULL;
  }
  move_runs(src, dst, src_item, g);
  return NULL;
}

#endif
