// PNG rows for indexed map tiles: pngRows prepares an indexed PNG's rows (filter Up, the colours in
// use numbered densely) in one pass of C instead of two of JavaScript per pixel; deflateRle then
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
  const unsigned char *src = (const unsigned char *)src_p;
  unsigned char *raw = (unsigned char *)raw_p, *used = (unsigned char *)used_p;
  unsigned char seen[256] = {0}, remap[256];
  // Eight pixels at a time are compared with the eight above: where they match, their colours were
  // seen in the row above and their Up bytes are zeros, so only the parts of a row that change
  // cost a pass per pixel (a projected grid's rows change a little everywhere, never repeat).
  for (size_t i = 0; i < w; i++) seen[src[i]] = 1;
  for (size_t y = 1; y < h; y++) {
    const unsigned char *row = src + y * w, *above = row - w;
    size_t i = 0;
    for (; i + 8 <= w; i += 8) {
      uint64_t a, b;
      memcpy(&a, row + i, 8);
      memcpy(&b, above + i, 8);
      if (a == b) continue;
      for (size_t j = i; j < i + 8; j++) seen[row[j]] = 1;
    }
    for (; i < w; i++) seen[row[i]] = 1;
  }
  uint32_t n = 0;
  for (int c = 0; c < 256; c++) {
    if (seen[c]) {
      remap[c] = (unsigned char)n;
      used[n++] = (unsigned char)c;
    }
  }
  raw[0] = 0;
  for (size_t i = 0; i < w; i++) raw[1 + i] = remap[src[i]];
  if (n == (uint32_t)used[n - 1] - used[0] + 1) {
    // The colours used are a run (the usual tile of a smooth field): renumbering subtracts the
    // first, so the Up bytes are plain differences of the indices, sixteen at a time.
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
#endif
      for (; i < w; i++) out[i] = (unsigned char)(row[i] - above[i]);
    }
    napi_value result;
    napi_create_uint32(env, n, &result);
    return result;
  }
  const uint64_t zero = 0;
  for (size_t y = 1; y < h; y++) {
    const unsigned char *row = src + y * w, *above = row - w;
    unsigned char *out = raw + y * (w + 1) + 1;
    out[-1] = 2;
    size_t i = 0;
    for (; i + 8 <= w; i += 8) {
      uint64_t a, b;
      memcpy(&a, row + i, 8);
      memcpy(&b, above + i, 8);
      if (a == b) {
        memcpy(out + i, &zero, 8);
        continue;
      }
      for (size_t j = i; j < i + 8; j++) out[j] = (unsigned char)(remap[row[j]] - remap[above[j]]);
    }
    for (; i < w; i++) out[i] = (unsigned char)(remap[row[i]] - remap[above[i]]);
  }
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
  uint16_t *tokens = (uint16_t *)scratch_of((src_len + 2) * sizeof(uint16_t));
  if (!tokens) {
    napi_throw_error(env, NULL, "deflateRle: out of memory");
    return NULL;
  }
  size_t n = deflate_rle((const unsigned char *)src, src_len, (unsigned char *)dst, dst_len, tokens);
  napi_value result;
  napi_create_double(env, (double)n, &result);
  return result;
}

#endif
