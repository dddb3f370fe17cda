// PNG rows for indexed map tiles: pngRows prepares an indexed PNG's rows (filter Up, the colours in
// use numbered densely) in C, sixteen pixels at a time, where the JavaScript takes two passes per
// pixel; deflateRle then
// deflates them as zlib's run-length strategy tokenizes, in one dynamic block (deflate-rle.h, the
// coder itself).
#ifndef GRIDCAST_PNG_ROWS_H
#define GRIDCAST_PNG_ROWS_H

#include <node_api.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "deflate-rle.h"
#include "napi-args.h"
#include "thread-buffers.h"

#ifdef __SSE2__
// Bit k of the result: a[k] differs from b[k] and, when c is given, from c[k] too (k < 64).
static inline uint64_t png_differ64(const unsigned char *a, const unsigned char *b, const unsigned char *c) {
  uint64_t m = 0;
  for (int k = 0; k < 4; k++) {
    __m128i v = _mm_loadu_si128((const __m128i *)(a + 16 * k));
    __m128i same = _mm_cmpeq_epi8(v, _mm_loadu_si128((const __m128i *)(b + 16 * k)));
    if (c) same = _mm_or_si128(same, _mm_cmpeq_epi8(v, _mm_loadu_si128((const __m128i *)(c + 16 * k))));
    m |= (uint64_t)((unsigned)_mm_movemask_epi8(same) ^ 0xffffu) << (16 * k);
  }
  return m;
}
#endif

// The colours a tile uses, marked in `seen`. A pixel equal to the one before it or to the one
// above has a colour already marked (by induction in raster order), so only the others are looked
// at: 64 pixels compared at a time with those one and one row back, and the set bits of that mask
// visited four at a time whether or not there are four (a spare visit marks the block's last
// pixel, whose colour is in the tile anyway): no branch per pixel or per change, so a lat/lon
// tile's repeated rows and a projected one's cells cost a few compares per 64 pixels.
static void png_colours(const unsigned char *src, size_t w, size_t h, unsigned char *seen) {
  const size_t n = w * h;
  seen[src[0]] = 1;
  for (size_t k = 1; k < w; k++)
    if (src[k] != src[k - 1]) seen[src[k]] = 1;
  size_t k = w;
#ifdef __SSE2__
  for (; k + 64 <= n; k += 64) {
    uint64_t m = png_differ64(src + k, src + k - w, src + k - 1);
    do {
      for (int j = 0; j < 4; j++) {
        seen[src[k + (size_t)__builtin_ctzll(m | 1ULL << 63)]] = 1;
        m &= m - 1;
      }
    } while (m);
  }
#endif
  for (; k < n; k++)
    if (src[k] != src[k - w] && src[k] != src[k - 1]) seen[src[k]] = 1;
}

// The filtered rows of pngRows (below) into `raw`, the colours used into `used`; returns their
// number.
static uint32_t png_rows_fill(const unsigned char *src, size_t w, size_t h, unsigned char *raw, unsigned char *used) {
  unsigned char seen[256] = {0}, remap[256];
  png_colours(src, w, h, seen);
  uint32_t n = 0;
  for (int c = 0; c < 256; c++) {
    if (seen[c]) {
      remap[c] = (unsigned char)n;
      used[n++] = (unsigned char)c;
    }
  }
  raw[0] = 0;
  for (size_t i = 0; i < w; i++) raw[1 + i] = remap[src[i]];
  // When the colours used are a run (the usual tile of a smooth field) renumbering subtracts the
  // first, so the Up bytes are plain differences of the indices, sixteen at a time. Else they are
  // differences of the new numbers: sixteen plain differences stored (zeros where a pixel equals
  // the one above), then the pixels that differ, found 64 at a time, rewritten eight at a time
  // whether or not there are eight (a spare rewrite gives the block's last byte its own value).
  const int run = n == (uint32_t)used[n - 1] - used[0] + 1;
  for (size_t y = 1; y < h; y++) {
    const unsigned char *row = src + y * w, *above = row - w;
    unsigned char *out = raw + y * (w + 1) + 1;
    out[-1] = 2;
    size_t i = 0;
#ifdef __SSE2__
    for (; i + 16 <= w; i += 16) {
      __m128i a = _mm_loadu_si128((const __m128i *)(row + i)), b = _mm_loadu_si128((const __m128i *)(above + i));
      _mm_storeu_si128((__m128i *)(out + i), _mm_sub_epi8(a, b));
    }
    if (!run) {
      for (i = 0; i + 64 <= w; i += 64) {
        uint64_t m = png_differ64(row + i, above + i, NULL);
        do {
          for (int j = 0; j < 8; j++) {
            size_t at = i + (size_t)__builtin_ctzll(m | 1ULL << 63);
            out[at] = (unsigned char)(remap[row[at]] - remap[above[at]]);
            m &= m - 1;
          }
        } while (m);
      }
    }
#endif
    if (run)
      for (; i < w; i++) out[i] = (unsigned char)(row[i] - above[i]);
    else
      for (; i < w; i++) out[i] = (unsigned char)(remap[row[i]] - remap[above[i]]);
  }
  return n;
}

// pngRows(indices, width, height, raw, used): `indices` width × height palette indices; `raw`
// receives (width + 1) × height filtered bytes over the indices renumbered densely over the colours
// used: the first row as filter None (0), every other as filter Up (2), each byte minus the one
// above (zeros for a repeated row); `used` (256 bytes) receives those colours in ascending order.
// Returns their number.
static napi_value png_rows(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  void *src_p = NULL, *raw_p = NULL, *used_p = NULL;
  size_t src_len = 0, raw_len = 0, used_len = 0;
  uint32_t width = 0, height = 0;
  const char *usage = "pngRows(indices: Uint8Array, width, height, raw: Uint8Array, used: Uint8Array)";
  if (argc < 5 || !bytes_of(env, argv[0], &src_p, &src_len) || napi_get_value_uint32(env, argv[1], &width) != napi_ok ||
      napi_get_value_uint32(env, argv[2], &height) != napi_ok || !bytes_of(env, argv[3], &raw_p, &raw_len) ||
      !bytes_of(env, argv[4], &used_p, &used_len)) {
    return throw_type(env, usage);
  }
  const size_t w = width, h = height;
  if (w == 0 || h == 0 || src_len != w * h || raw_len < (w + 1) * h || used_len < 256) {
    napi_throw_range_error(env, NULL, "pngRows: sizes do not match");
    return NULL;
  }
  uint32_t n = png_rows_fill((const unsigned char *)src_p, w, h, (unsigned char *)raw_p, (unsigned char *)used_p);
  napi_value result;
  napi_create_uint32(env, n, &result);
  return result;
}

// deflateRle(raw, out): a zlib stream of `raw` in `out` (native/deflate-rle.h): its length, or 0
// when it does not fit (the caller then deflates with zlib).
static napi_value deflate_rle_js(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  void *src = NULL, *dst = NULL;
  size_t src_len = 0, dst_len = 0;
  if (argc < 2 || !bytes_of(env, argv[0], &src, &src_len) || !bytes_of(env, argv[1], &dst, &dst_len)) {
    return throw_type(env, "deflateRle(raw: Uint8Array, out: Uint8Array)");
  }
  uint32_t *starts = (uint32_t *)scratch_of((src_len + 64) * sizeof(uint32_t));
  if (!starts) {
    napi_throw_error(env, NULL, "deflateRle: out of memory");
    return NULL;
  }
  size_t n = deflate_rle((const unsigned char *)src, src_len, (unsigned char *)dst, dst_len, starts);
  napi_value result;
  napi_create_double(env, (double)n, &result);
  return result;
}

#endif
