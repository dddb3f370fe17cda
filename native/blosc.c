// Blosc chunk decoding in the addon's own C: the chunk format (header, block table, split
// streams), byte shuffle, bit shuffle and BloscLZ are implemented here; LZ4, Zstandard and zlib
// streams go to the system's runtime libraries (liblz4.so.1, libzstd.so.1, libz.so.1), opened
// with dlopen when the addon loads and called through the few stable functions declared below.
// No -dev package is needed to build it: a C compiler and Node's own headers are enough. A
// compressor whose library is missing at run time (or snappy, or the delta filter) makes a call
// return UNAVAILABLE before anything is decoded, and JavaScript decodes that chunk instead.
// JavaScript has already checked the header, the block table and every stream length against the
// chunk and the decoded-size bound the array's metadata allows; this file checks them again
// itself, and never reads or writes outside the buffers it is given. Decoding runs on libuv's
// thread pool (decode) or on the calling thread (decodeSync); it keeps no state but a Zstandard
// context per thread, so calls may run in parallel.
//
// Zstandard is the copy Node itself exports when it does (Node 24 does), else libzstd.so.1; the
// system libraries are opened with RTLD_DEEPBIND so that their calls to their own functions do not
// bind to the same names Node exports (its own Zstandard and zlib, other versions).
//
// With Zstandard present it also decodes whole Zstandard frames into a buffer the caller owns
// (zstdDecode, zstdDecodeSync): node:zlib can only return new buffers, and bulk reads decode into
// reused ones. ZSTD_decompressDCtx never writes past the capacity it is given and fails instead.
//
// bilinearTile samples one 256 × 256 map tile of palette indices from a field with the bracketing
// tables render/resample.ts solved once per grid and level: the same arithmetic in the same order
// (doubles, no fused multiply-add), so the same indices as the JavaScript it stands in for.
//
// pngRows prepares an indexed PNG's rows (filter Up, the colours in use numbered densely) in one
// pass of C instead of two of JavaScript per pixel; deflateRle then deflates them as zlib's
// run-length strategy tokenizes, in one dynamic block (native/deflate-rle.h).
//
// projectedTile and gatherTile sample a tile of a projected grid over the per-pixel tables
// render/resample-projected.ts keeps per tile (bilinear with the JavaScript's arithmetic and
// missing-value rule, nearest as a gather of per-node palette indices).
//
// copyRuns moves runs of items between two typed arrays (a decoded chunk and the region it feeds):
// one memcpy per run where JavaScript pays a subarray view or a scalar loop per run. Every run is
// bounds-checked against both arrays before the first byte moves.
//
// decodeRuns does both in one job on libuv's pool: a stored chunk (Blosc, a Zstandard frame, or
// raw bytes) decoded into a buffer of that pool thread's own, which a chunk of a few MiB leaves in
// its core's cache, then its runs copied into the caller's array. A bulk read (a latent slice)
// thus never makes a decoded chunk of its own, and the main thread copies nothing. The caller's
// array is written only once the whole chunk decoded to exactly its size.
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "beneath.h"
#include "deflate-rle.h"

#include <dlfcn.h>
#include <limits.h>
#include <node_api.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  napi_ref src_ref;
  napi_ref dst_ref;
  const void *src;
  size_t src_len;
  void *dst;
  size_t dst_len;
  int zstd;
  /** Set for a file read (readFile), else the job decodes src into dst. */
  char *path;
  /** For a file read: the store root's real path, `path` then relative to it (or NULL). */
  char *root;
  /** For a file read below `root`: walk component by component even where openat2 exists. */
  int walk;
  /** For decodeRuns: 0 Blosc, 1 Zstandard, 2 stored as is; the decoded chunk's bytes; the item
   * size of both sides; the copy's geometry as in copyRuns. */
  int runs;
  int codec;
  size_t chunk_len;
  size_t item;
  double geom[4 + 3 * 16];
  double result;
} Job;

static napi_value throw_type(napi_env env, const char *msg) {
  napi_throw_type_error(env, NULL, msg);
  return NULL;
}

// The bytes behind a Uint8Array (or Buffer) argument.
static int items_of(napi_env env, napi_value v, char **data, size_t *len, size_t *item,
                    napi_typedarray_type *type_out);

static int bytes_of(napi_env env, napi_value v, void **data, size_t *len) {
  char *p;
  size_t item;
  napi_typedarray_type type;
  if (!items_of(env, v, &p, len, &item, &type) || type != napi_uint8_array) return 0;
  *data = p;
  return 1;
}

// ---- The compression libraries, found at run time -------------------------------------------
// Prototypes of the stable entry points used, declared here instead of taken from -dev headers
// (they have kept these signatures across every release with the sonames below).
typedef int (*lz4_decompress_safe_t)(const char *src, char *dst, int src_size, int dst_capacity);
typedef const char *(*version_string_t)(void);
typedef void *(*zstd_create_dctx_t)(void);
typedef size_t (*zstd_free_dctx_t)(void *dctx);
typedef size_t (*zstd_decompress_dctx_t)(void *dctx, void *dst, size_t cap, const void *src, size_t len);
typedef unsigned (*zstd_is_error_t)(size_t code);
typedef int (*zlib_uncompress_t)(unsigned char *dst, unsigned long *dst_len, const unsigned char *src,
                                 unsigned long src_len);

static struct {
  lz4_decompress_safe_t lz4;
  version_string_t lz4_version;
  zstd_create_dctx_t zstd_create;
  zstd_free_dctx_t zstd_free;
  zstd_decompress_dctx_t zstd_decompress;
  zstd_is_error_t zstd_is_error;
  version_string_t zstd_version;
  zlib_uncompress_t zlib;
  version_string_t zlib_version;
} lib;

static pthread_once_t lib_once = PTHREAD_ONCE_INIT;
static pthread_key_t zstd_key;
static pthread_key_t scratch_key;
static pthread_key_t chunk_key;

// GRIDCAST_NATIVE_SKIP (a comma-separated list of lz4, zstd, zlib) leaves a library unopened, as
// on a machine without it: the tests check that such chunks still decode, in JavaScript.
static int skipped(const char *name) {
  const char *list = getenv("GRIDCAST_NATIVE_SKIP");
  size_t n = strlen(name);
  for (const char *p = list; p && *p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (len == n && strncmp(p, name, n) == 0) return 1;
    p = end ? end + 1 : NULL;
  }
  return 0;
}

// RTLD_DEEPBIND: the library's calls to its own exported functions stay inside it. Without it they
// bind to the same names Node exports from its own bundled Zstandard and zlib (another version),
// so a frame was decoded partly by one copy and partly by the other.
#ifndef RTLD_DEEPBIND
#define RTLD_DEEPBIND 0
#endif
// The global scope (the Node executable and what it loaded); glibc and musl both define it as 0.
#ifndef RTLD_DEFAULT
#define RTLD_DEFAULT ((void *)0)
#endif
static void *open_lib(const char *soname, const char *name) {
  return skipped(name) ? NULL : dlopen(soname, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
}

static void free_zstd_ctx(void *ctx) {
  if (ctx) lib.zstd_free(ctx);
}

static void load_libs(void) {
  if (pthread_key_create(&scratch_key, free) != 0 || pthread_key_create(&chunk_key, free) != 0) abort();
  dr_init();
  void *h = open_lib("liblz4.so.1", "lz4");
  if (h) {
    lib.lz4 = (lz4_decompress_safe_t)dlsym(h, "LZ4_decompress_safe");
    lib.lz4_version = (version_string_t)dlsym(h, "LZ4_versionString");
    if (!lib.lz4 || !lib.lz4_version) lib.lz4 = NULL;
  }
  // Zstandard: the copy Node itself carries and exports, when it does (one version throughout, and
  // a newer one than many systems'), else the system's libzstd.so.1.
  int node_zstd = !skipped("zstd") && dlsym(RTLD_DEFAULT, "ZSTD_decompressDCtx") != NULL;
  h = node_zstd ? RTLD_DEFAULT : open_lib("libzstd.so.1", "zstd");
  if (node_zstd || h) {
    lib.zstd_create = (zstd_create_dctx_t)dlsym(h, "ZSTD_createDCtx");
    lib.zstd_free = (zstd_free_dctx_t)dlsym(h, "ZSTD_freeDCtx");
    lib.zstd_decompress = (zstd_decompress_dctx_t)dlsym(h, "ZSTD_decompressDCtx");
    lib.zstd_is_error = (zstd_is_error_t)dlsym(h, "ZSTD_isError");
    lib.zstd_version = (version_string_t)dlsym(h, "ZSTD_versionString");
    if (!lib.zstd_create || !lib.zstd_free || !lib.zstd_decompress || !lib.zstd_is_error || !lib.zstd_version ||
        pthread_key_create(&zstd_key, free_zstd_ctx) != 0) {
      lib.zstd_decompress = NULL;
    }
  }
  h = open_lib("libz.so.1", "zlib");
  if (h) {
    lib.zlib = (zlib_uncompress_t)dlsym(h, "uncompress");
    lib.zlib_version = (version_string_t)dlsym(h, "zlibVersion");
    if (!lib.zlib || !lib.zlib_version) lib.zlib = NULL;
  }
}

// This thread's Zstandard context (freed when the thread ends), or NULL.
static void *zstd_ctx(void) {
  void *ctx = pthread_getspecific(zstd_key);
  if (!ctx) {
    ctx = lib.zstd_create();
    if (ctx && pthread_setspecific(zstd_key, ctx) != 0) {
      lib.zstd_free(ctx);
      ctx = NULL;
    }
  }
  return ctx;
}

// ---- Blosc ------------------------------------------------------------------------------------
#define HEADER 16
#define DO_SHUFFLE 0x1
#define MEMCPYED 0x2
#define DO_BITSHUFFLE 0x4
#define DO_DELTA 0x8
#define DONT_SPLIT 0x10
enum { BLOSCLZ = 0, LZ4 = 1, SNAPPY = 2, ZLIB = 3, ZSTD = 4 };

// Negative results: the header does not fit the buffers, a stream does not decode to its size,
// the compressor is not available here (JavaScript takes the chunk), a Zstandard frame fails,
// no memory.
#define BAD_HEADER -100
#define ZSTD_FAILED -101
#define BAD_STREAM -102
#define UNAVAILABLE -103
#define NO_MEMORY -104

static uint32_t u32le(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

// BloscLZ (a FastLZ variant): a literal run of 1–32 bytes, or a match of 3 or more bytes at a
// distance of up to 8191 (or, escaped, 8192 + 65535) bytes back. 1 when exactly `cap` bytes come out.
static int blosclz_stream(const unsigned char *ip, size_t len, unsigned char *out, size_t cap) {
  if (len == 0) return 0;
  const unsigned char *end = ip + len;
  unsigned char *op = out, *op_end = out + cap;
  size_t ctrl = *ip++ & 31u;
  for (;;) {
    if (ctrl < 32) {
      size_t run = ctrl + 1;
      if (run > (size_t)(end - ip) || run > (size_t)(op_end - op)) return 0;
      memcpy(op, ip, run);
      op += run;
      ip += run;
    } else {
      size_t n = (ctrl >> 5) - 1, high = ctrl & 31u;
      if (n == 6) {
        unsigned char more;
        do {
          if (ip >= end) return 0;
          more = *ip++;
          n += more;
        } while (more == 255);
      }
      if (ip >= end) return 0;
      unsigned char low = *ip++;
      size_t dist = (high << 8) + low + 1;
      if (low == 255 && high == 31) {
        if (end - ip < 2) return 0;
        dist = ((size_t)ip[0] << 8 | ip[1]) + 8192;
        ip += 2;
      }
      n += 3;
      if (dist > (size_t)(op - out) || n > (size_t)(op_end - op)) return 0;
      const unsigned char *ref = op - dist;
      if (dist == 1) {
        memset(op, *ref, n);
      } else if (dist >= n) {
        memcpy(op, ref, n);
      } else {
        for (size_t i = 0; i < n; i++) op[i] = ref[i];
      }
      op += n;
    }
    if (ip >= end) break;
    ctrl = *ip++;
  }
  return op == op_end;
}

// One compressed stream into exactly `cap` bytes: 1, 0 when it does not decode to that.
static int stream(int compressor, const unsigned char *src, size_t len, unsigned char *dst, size_t cap) {
  switch (compressor) {
    case BLOSCLZ:
      return blosclz_stream(src, len, dst, cap);
    case LZ4:
      if (len > INT_MAX || cap > INT_MAX) return 0;
      return lib.lz4((const char *)src, (char *)dst, (int)len, (int)cap) == (int)cap;
    case ZLIB: {
      unsigned long got = cap;
      return lib.zlib(dst, &got, src, len) == 0 && got == cap;
    }
    case ZSTD: {
      void *ctx = zstd_ctx();
      if (!ctx) return 0;
      size_t got = lib.zstd_decompress(ctx, dst, cap, src, len);
      return !lib.zstd_is_error(got) && got == cap;
    }
  }
  return 0;
}

static int available(int compressor) {
  switch (compressor) {
    case BLOSCLZ: return 1;
    case LZ4: return lib.lz4 != NULL;
    case ZLIB: return lib.zlib != NULL;
    case ZSTD: return lib.zstd_decompress != NULL;
  }
  return 0;
}

#ifdef __SSE2__
#include <emmintrin.h>

// 16 elements at a time with SSE2 (every x86-64 has it): the byte planes interleaved by unpacking
// bytes, then pairs, then quads. Returns how many elements it did.
static size_t unshuffle_sse2(const unsigned char *src, unsigned char *dst, size_t n, size_t ts) {
  size_t i = 0;
#define LOAD(j) _mm_loadu_si128((const __m128i *)(src + (j) * n + i))
#define STORE(k, v) _mm_storeu_si128((__m128i *)(dst + ts * i + 16 * (k)), v)
  if (ts == 2) {
    for (; i + 16 <= n; i += 16) {
      __m128i a = LOAD(0), b = LOAD(1);
      STORE(0, _mm_unpacklo_epi8(a, b));
      STORE(1, _mm_unpackhi_epi8(a, b));
    }
  } else if (ts == 4) {
    for (; i + 16 <= n; i += 16) {
      __m128i a = LOAD(0), b = LOAD(1), c = LOAD(2), d = LOAD(3);
      __m128i ab_lo = _mm_unpacklo_epi8(a, b), ab_hi = _mm_unpackhi_epi8(a, b);
      __m128i cd_lo = _mm_unpacklo_epi8(c, d), cd_hi = _mm_unpackhi_epi8(c, d);
      STORE(0, _mm_unpacklo_epi16(ab_lo, cd_lo));
      STORE(1, _mm_unpackhi_epi16(ab_lo, cd_lo));
      STORE(2, _mm_unpacklo_epi16(ab_hi, cd_hi));
      STORE(3, _mm_unpackhi_epi16(ab_hi, cd_hi));
    }
  } else if (ts == 8) {
    for (; i + 16 <= n; i += 16) {
      __m128i p0 = LOAD(0), p1 = LOAD(1), p2 = LOAD(2), p3 = LOAD(3);
      __m128i p4 = LOAD(4), p5 = LOAD(5), p6 = LOAD(6), p7 = LOAD(7);
      __m128i b01l = _mm_unpacklo_epi8(p0, p1), b01h = _mm_unpackhi_epi8(p0, p1);
      __m128i b23l = _mm_unpacklo_epi8(p2, p3), b23h = _mm_unpackhi_epi8(p2, p3);
      __m128i b45l = _mm_unpacklo_epi8(p4, p5), b45h = _mm_unpackhi_epi8(p4, p5);
      __m128i b67l = _mm_unpacklo_epi8(p6, p7), b67h = _mm_unpackhi_epi8(p6, p7);
      // Bytes 0–3 and 4–7 of elements 0–3, 4–7, 8–11, 12–15.
      __m128i lo0 = _mm_unpacklo_epi16(b01l, b23l), lo1 = _mm_unpackhi_epi16(b01l, b23l);
      __m128i lo2 = _mm_unpacklo_epi16(b01h, b23h), lo3 = _mm_unpackhi_epi16(b01h, b23h);
      __m128i hi0 = _mm_unpacklo_epi16(b45l, b67l), hi1 = _mm_unpackhi_epi16(b45l, b67l);
      __m128i hi2 = _mm_unpacklo_epi16(b45h, b67h), hi3 = _mm_unpackhi_epi16(b45h, b67h);
      STORE(0, _mm_unpacklo_epi32(lo0, hi0));
      STORE(1, _mm_unpackhi_epi32(lo0, hi0));
      STORE(2, _mm_unpacklo_epi32(lo1, hi1));
      STORE(3, _mm_unpackhi_epi32(lo1, hi1));
      STORE(4, _mm_unpacklo_epi32(lo2, hi2));
      STORE(5, _mm_unpackhi_epi32(lo2, hi2));
      STORE(6, _mm_unpacklo_epi32(lo3, hi3));
      STORE(7, _mm_unpackhi_epi32(lo3, hi3));
    }
  }
#undef LOAD
#undef STORE
  return i;
}
#endif

// Blosc's byte shuffle undone on one block of `size` bytes: byte j of every element, then byte
// j + 1...; bytes past the last whole element are stored as they are.
static void unshuffle(const unsigned char *src, unsigned char *dst, size_t size, size_t ts) {
  size_t n = size / ts, i = 0;
  if (ts == 1) {
    memcpy(dst, src, size);
    return;
  }
#ifdef __SSE2__
  i = unshuffle_sse2(src, dst, n, ts);
#endif
  for (size_t j = 0; j < ts; j++) {
    const unsigned char *plane = src + j * n;
    for (size_t e = i; e < n; e++) dst[e * ts + j] = plane[e];
  }
  if (n * ts < size) memcpy(dst + n * ts, src + n * ts, size - n * ts);
}

// Blosc's bit shuffle undone on one block: for each group of 8 elements the block holds ts × 8 bit
// rows, row (byte j, bit k) carrying bit k of byte j of every element, 8 elements a byte, lowest
// first. Format-2 writers left a block whose element count is not a multiple of 8 as it was;
// otherwise elements past the last multiple of 8 are stored as they are.
static void bitunshuffle(const unsigned char *src, unsigned char *dst, size_t size, size_t ts, int format) {
  size_t n = size / ts;
  size_t whole = format == 2 && n % 8 != 0 ? 0 : n - n % 8;
  size_t row = whole / 8;
  for (size_t j = 0; j < ts; j++) {
    const unsigned char *r0 = src + j * 8 * row;
    for (size_t g = 0; g < row; g++) {
      const unsigned char *p = r0 + g;
      uint32_t lo = (uint32_t)p[0] | (uint32_t)p[row] << 8 | (uint32_t)p[2 * row] << 16 | (uint32_t)p[3 * row] << 24;
      uint32_t hi = (uint32_t)p[4 * row] | (uint32_t)p[5 * row] << 8 | (uint32_t)p[6 * row] << 16 |
                    (uint32_t)p[7 * row] << 24;
      // The 8 × 8 bit matrix held in (lo, hi) transposed: byte m bit k ← byte k bit m.
      uint32_t t = (lo ^ (lo >> 7)) & 0x00aa00aau;
      lo = lo ^ t ^ (t << 7);
      t = (hi ^ (hi >> 7)) & 0x00aa00aau;
      hi = hi ^ t ^ (t << 7);
      t = (lo ^ (lo >> 14)) & 0x0000ccccu;
      lo = lo ^ t ^ (t << 14);
      t = (hi ^ (hi >> 14)) & 0x0000ccccu;
      hi = hi ^ t ^ (t << 14);
      t = (lo ^ (hi << 4)) & 0xf0f0f0f0u;
      lo ^= t;
      hi ^= t >> 4;
      unsigned char *o = dst + 8 * g * ts + j;
      o[0] = (unsigned char)lo;
      o[ts] = (unsigned char)(lo >> 8);
      o[2 * ts] = (unsigned char)(lo >> 16);
      o[3 * ts] = (unsigned char)(lo >> 24);
      o[4 * ts] = (unsigned char)hi;
      o[5 * ts] = (unsigned char)(hi >> 8);
      o[6 * ts] = (unsigned char)(hi >> 16);
      o[7 * ts] = (unsigned char)(hi >> 24);
    }
  }
  size_t done = whole * ts;
  if (done < size) memcpy(dst + done, src + done, size - done);
}

// This thread's buffer for shuffled blocks, at least `n` bytes (kept, grown to the largest block
// seen, and freed when the thread ends), or NULL.
static unsigned char *scratch_of(size_t n) {
  size_t *held = (size_t *)pthread_getspecific(scratch_key);
  if (held && held[0] >= n) return (unsigned char *)(held + 1);
  size_t *fresh = (size_t *)malloc(sizeof(size_t) + n);
  if (!fresh || pthread_setspecific(scratch_key, fresh) != 0) {
    free(fresh);
    return NULL;
  }
  free(held);
  fresh[0] = n;
  return (unsigned char *)(fresh + 1);
}

// Decoded chunks up to this size keep their pool thread's buffer for the next chunk; a larger one
// gets a buffer of its own, freed after the copy.
#define CHUNK_KEEP ((size_t)64 << 20)

// This thread's buffer for one decoded chunk of `n` bytes (see CHUNK_KEEP), or NULL; *own is set
// when the caller must free it.
static unsigned char *chunk_scratch(size_t n, int *own) {
  *own = 0;
  if (n > CHUNK_KEEP) {
    *own = 1;
    return (unsigned char *)malloc(n ? n : 1);
  }
  size_t *held = (size_t *)pthread_getspecific(chunk_key);
  if (held && held[0] >= n) return (unsigned char *)(held + 1);
  size_t *fresh = (size_t *)malloc(sizeof(size_t) + n);
  if (!fresh || pthread_setspecific(chunk_key, fresh) != 0) {
    free(fresh);
    return NULL;
  }
  free(held);
  fresh[0] = n;
  return (unsigned char *)(fresh + 1);
}

// A Blosc (format 1/2) chunk into dst, which must be exactly the size its header states: the
// bytes written, or one of the negative results above.
static double blosc_chunk(const unsigned char *src, size_t src_len, unsigned char *dst, size_t dst_len) {
  if (src_len < HEADER) return BAD_HEADER;
  unsigned format = src[0], flags = src[2], ts = src[3];
  size_t nbytes = u32le(src + 4), blocksize = u32le(src + 8), cbytes = u32le(src + 12);
  if (format < 1 || format > 2 || ts == 0 || nbytes != dst_len || cbytes < HEADER || cbytes > src_len) {
    return BAD_HEADER;
  }
  if (nbytes == 0) return 0;
  if (flags & MEMCPYED) {
    if (nbytes > cbytes - HEADER) return BAD_HEADER;
    memcpy(dst, src + HEADER, nbytes);
    return (double)nbytes;
  }
  int compressor = flags >> 5;
  if ((flags & DO_DELTA) || !available(compressor)) return UNAVAILABLE;
  if (blocksize == 0) return BAD_HEADER;
  size_t nblocks = nbytes / blocksize + (nbytes % blocksize != 0);
  if (nblocks > (cbytes - HEADER) / 4) return BAD_HEADER;
  size_t table_end = HEADER + 4 * nblocks, leftover = nbytes % blocksize;
  int shuffled = (flags & (DO_SHUFFLE | DO_BITSHUFFLE)) != 0;
  unsigned char *scratch = shuffled ? scratch_of(blocksize < nbytes ? blocksize : nbytes) : NULL;
  if (shuffled && !scratch) return NO_MEMORY;
  double result = (double)nbytes;
  for (size_t b = 0; b < nblocks; b++) {
    int last = b == nblocks - 1 && leftover != 0;
    size_t bsize = last ? leftover : blocksize;
    size_t splits = !(flags & DONT_SPLIT) && !last ? ts : 1;
    size_t at = u32le(src + HEADER + 4 * b);
    if (bsize % splits != 0 || at < table_end || at >= cbytes) {
      result = BAD_HEADER;
      break;
    }
    size_t neblock = bsize / splits;
    unsigned char *dest = dst + b * blocksize, *target = shuffled ? scratch : dest;
    for (size_t s = 0; s < splits && result >= 0; s++) {
      if (cbytes - at < 4) {
        result = BAD_HEADER;
        break;
      }
      size_t csize = u32le(src + at);
      at += 4;
      if (csize > cbytes - at) {
        result = BAD_HEADER;
        break;
      }
      // A stream exactly as long as its decoded size was stored uncompressed.
      if (csize == neblock) {
        memcpy(target + s * neblock, src + at, neblock);
      } else if (!stream(compressor, src + at, csize, target + s * neblock, neblock)) {
        result = BAD_STREAM;
      }
      at += csize;
    }
    if (result < 0) break;
    if (flags & DO_SHUFFLE) {
      unshuffle(scratch, dest, bsize, ts);
    } else if (flags & DO_BITSHUFFLE) {
      bitunshuffle(scratch, dest, bsize, ts, (int)format);
    }
  }
  return result;
}

// Bytes written into dst, or a negative number (above).
static double run(int zstd, const void *src, size_t src_len, void *dst, size_t dst_len) {
  if (zstd) {
    void *ctx = lib.zstd_decompress ? zstd_ctx() : NULL;
    if (!ctx) return UNAVAILABLE;
    size_t n = lib.zstd_decompress(ctx, dst, dst_len, src, src_len);
    return lib.zstd_is_error(n) ? ZSTD_FAILED : (double)n;
  }
  return blosc_chunk((const unsigned char *)src, src_len, (unsigned char *)dst, dst_len);
}

// Runs of `item`-byte items from src to dst as geom describes (copyRuns; checked by the caller).
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

// decodeRuns' job: the chunk decoded into this thread's buffer, then its runs copied into dst.
// The bytes decoded (copied only when exactly chunk_len), or a negative result as run()'s.
static double decode_runs(Job *job) {
  const char *from = (const char *)job->src;
  unsigned char *own = NULL;
  if (job->codec != 2) {
    int mine = 0;
    unsigned char *buf = chunk_scratch(job->chunk_len, &mine);
    if (!buf) return NO_MEMORY;
    if (mine) own = buf;
    double n = run(job->codec == 1, job->src, job->src_len, buf, job->chunk_len);
    if (n != (double)job->chunk_len) {
      free(own);
      return n;
    }
    from = (const char *)buf;
  } else if (job->src_len != job->chunk_len) {
    return (double)job->src_len;
  }
  if (job->geom[2] > 0) move_runs(from, (char *)job->dst, job->item, job->geom);
  free(own);
  return (double)job->chunk_len;
}

static napi_value run_sync(napi_env env, napi_callback_info info, int zstd) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  void *src, *dst;
  size_t src_len, dst_len;
  if (argc < 2 || !bytes_of(env, argv[0], &src, &src_len) || !bytes_of(env, argv[1], &dst, &dst_len)) {
    return throw_type(env, "decodeSync(src: Uint8Array, dst: Uint8Array)");
  }
  napi_value out;
  napi_create_double(env, run(zstd, src, src_len, dst, dst_len), &out);
  return out;
}

static napi_value decode_sync(napi_env env, napi_callback_info info) { return run_sync(env, info, 0); }

// readFile(path, dst, root?, walk?): a whole regular file read into dst on libuv's pool, in one
// job instead of the four (open, fstat, read, close) node:fs makes of it. Resolves to the bytes
// read, or a negative number: -errno, TOO_BIG when the file is larger than dst (nothing read),
// CHANGED when it ended before its stated size, OUTSIDE when, given `root` (the store's real
// path), `path` (then relative to it) would lead out of it (see beneath.h; `walk` forces the
// component walk instead of openat2). The caller has confined the path lexically.
#define TOO_BIG -100000
#define CHANGED -100001
#define OUTSIDE BENEATH_OUTSIDE

// The open file `fd` read into dst and closed.
static double read_fd(int fd, void *dst, size_t cap) {
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return -e;
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
  }
  size_t size = (size_t)st.st_size;
  if (size > cap) {
    close(fd);
    return TOO_BIG;
  }
  size_t at = 0;
  while (at < size) {
    ssize_t n = read(fd, (char *)dst + at, size - at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      close(fd);
      return -e;
    }
    if (n == 0) break;
    at += (size_t)n;
  }
  close(fd);
  return at == size ? (double)at : CHANGED;
}

static void execute(napi_env env, void *data) {
  (void)env;
  Job *job = (Job *)data;
  if (job->runs) {
    job->result = decode_runs(job);
    return;
  }
  if (!job->path) {
    job->result = run(job->zstd, job->src, job->src_len, job->dst, job->dst_len);
    return;
  }
  int fd;
  if (job->root) {
    fd = open_beneath(job->root, job->path, job->walk);
  } else {
    fd = open(job->path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) fd = -errno;
  }
  if (fd < 0) {
    job->result = fd;
    return;
  }
  job->result = read_fd(fd, job->dst, job->dst_len);
}

static void complete(napi_env env, napi_status status, void *data) {
  Job *job = (Job *)data;
  napi_value out;
  if (status == napi_ok) {
    napi_create_double(env, job->result, &out);
    napi_resolve_deferred(env, job->deferred, out);
  } else {
    napi_value msg;
    napi_create_string_utf8(env, "gridcast native job was cancelled", NAPI_AUTO_LENGTH, &msg);
    napi_create_error(env, NULL, msg, &out);
    napi_reject_deferred(env, job->deferred, out);
  }
  if (job->src_ref) napi_delete_reference(env, job->src_ref);
  napi_delete_reference(env, job->dst_ref);
  napi_delete_async_work(env, job->work);
  free(job->path);
  free(job->root);
  free(job);
}

// Queue a filled-in job on libuv's pool: a promise of its result. The arrays it reads and writes
// (src may be NULL for a file read) are held by references until the work is done, so the GC
// cannot free them under it.
static napi_value queue(napi_env env, Job *job, napi_value src, napi_value dst) {
  napi_value promise, name;
  napi_create_promise(env, &job->deferred, &promise);
  if (src) napi_create_reference(env, src, 1, &job->src_ref);
  napi_create_reference(env, dst, 1, &job->dst_ref);
  napi_create_string_utf8(env, "gridcast-native", NAPI_AUTO_LENGTH, &name);
  napi_create_async_work(env, NULL, name, execute, complete, job, &job->work);
  napi_queue_async_work(env, job->work);
  return promise;
}

// decode(src, dst): a promise of what run() returned.
static napi_value run_async(napi_env env, napi_callback_info info, int zstd) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  Job *job = (Job *)calloc(1, sizeof(Job));
  if (!job) {
    napi_throw_error(env, NULL, "blosc: out of memory");
    return NULL;
  }
  if (argc < 2 || !bytes_of(env, argv[0], (void **)&job->src, &job->src_len) ||
      !bytes_of(env, argv[1], &job->dst, &job->dst_len)) {
    free(job);
    return throw_type(env, "decode(src: Uint8Array, dst: Uint8Array)");
  }
  job->zstd = zstd;
  return queue(env, job, argv[0], argv[1]);
}

static napi_value decode_async(napi_env env, napi_callback_info info) { return run_async(env, info, 0); }

static napi_value zstd_sync(napi_env env, napi_callback_info info) { return run_sync(env, info, 1); }
static napi_value zstd_async(napi_env env, napi_callback_info info) { return run_async(env, info, 1); }

// A string argument as a new C string; NULL (with *bad set) when it is not a string or holds a
// NUL, which would make C name another file than JavaScript confined.
static char *c_string(napi_env env, napi_value v, int *bad) {
  size_t len = 0;
  napi_valuetype t;
  if (napi_typeof(env, v, &t) != napi_ok || t != napi_string ||
      napi_get_value_string_utf8(env, v, NULL, 0, &len) != napi_ok) {
    *bad = 1;
    return NULL;
  }
  char *s = (char *)malloc(len + 1);
  if (!s) return NULL;
  napi_get_value_string_utf8(env, v, s, len + 1, &len);
  if (strlen(s) != len) {
    free(s);
    *bad = 1;
    return NULL;
  }
  return s;
}

static napi_value read_file(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  const char *usage = "readFile(path: string, dst: Uint8Array, root?: string, walk?: boolean)";
  if (argc < 2) return throw_type(env, usage);
  napi_valuetype rt = napi_undefined;
  if (argc >= 3) napi_typeof(env, argv[2], &rt);
  int bad = 0;
  Job *job = (Job *)calloc(1, sizeof(Job));
  char *path = job ? c_string(env, argv[0], &bad) : NULL;
  char *root = path && rt != napi_undefined ? c_string(env, argv[2], &bad) : NULL;
  int oom = !bad && (!job || !path || (rt != napi_undefined && !root));
  if (bad || oom || !bytes_of(env, argv[1], &job->dst, &job->dst_len)) {
    free(path);
    free(root);
    free(job);
    if (!oom) return throw_type(env, usage);
    napi_throw_error(env, NULL, "readFile: out of memory");
    return NULL;
  }
  job->path = path;
  job->root = root;
  bool walk = false;
  if (argc >= 4) napi_get_value_bool(env, argv[3], &walk);
  job->walk = walk;
  return queue(env, job, NULL, argv[1]);
}

#define MAX_OUTER 16

// Items of a typed array argument, their size and where they start.
static int items_of(napi_env env, napi_value v, char **data, size_t *len, size_t *item,
                    napi_typedarray_type *type_out) {
  bool is_typed = false;
  if (napi_is_typedarray(env, v, &is_typed) != napi_ok || !is_typed) return 0;
  napi_typedarray_type type;
  napi_value ab;
  size_t offset = 0;
  void *p = NULL;
  if (napi_get_typedarray_info(env, v, &type, len, &p, &ab, &offset) != napi_ok) return 0;
  switch (type) {
    case napi_int8_array: case napi_uint8_array: case napi_uint8_clamped_array: *item = 1; break;
    case napi_int16_array: case napi_uint16_array: *item = 2; break;
    case napi_int32_array: case napi_uint32_array: case napi_float32_array: *item = 4; break;
    default: *item = 8; break;
  }
  *data = (char *)p;
  *type_out = type;
  return 1;
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

static int whole(double x) { return isfinite(x) && x == floor(x) && fabs(x) < 9007199254740992.0; }

// copyRuns(src, dst, geom): geom is a Float64Array [srcStart, dstStart, n, k, count_1..k,
// srcStride_1..k, dstStride_1..k] (values after those are ignored), all in items: runs of n items,
// one for every index of the k outer dimensions (the first varying slowest). Both arrays must have
// the same item size.
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
  for (size_t i = 0; i < glen; i++) {
    if (!whole(g[i])) return throw_type(env, "copyRuns: geom holds a value that is not a whole number");
  }
  double n = g[2];
  int k = (int)g[3];
  if (n < 0 || k < 0 || k > MAX_OUTER || glen < (size_t)(4 + 3 * k)) {
    return throw_type(env, "copyRuns: geom does not describe a copy");
  }
  const double *count = g + 4, *sstride = g + 4 + k, *dstride = g + 4 + 2 * k;
  for (int d = 0; d < k; d++) {
    if (count[d] <= 0) return NULL;  // nothing to copy
  }
  if (n == 0) return NULL;
  if (!reach_ok(g[0], n, k, count, sstride, src_len) || !reach_ok(g[1], n, k, count, dstride, dst_len)) {
    napi_throw_range_error(env, NULL, "copyRuns: a run lies outside an array");
    return NULL;
  }
  move_runs(src, dst, src_item, g);
  return NULL;
}

// decodeRuns(codec, src, chunkBytes, dst, geom): codec 0 (Blosc), 1 (Zstandard frame) or 2 (raw
// bytes); src the stored chunk, chunkBytes its decoded size, dst a typed array of the chunk's item
// size, geom as copyRuns' with the chunk's items as the source. A promise of the bytes decoded
// (the runs copied only when that is chunkBytes) or a negative result; the geometry is checked
// here first (RangeError, nothing queued).
static napi_value decode_runs_async(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  const char *usage = "decodeRuns(codec: 0|1|2, src: Uint8Array, chunkBytes: number, dst: TypedArray, geom: Float64Array)";
  if (argc < 5) return throw_type(env, usage);
  int32_t codec = -1;
  double chunk = -1;
  if (napi_get_value_int32(env, argv[0], &codec) != napi_ok || codec < 0 || codec > 2 ||
      (codec == 1 && !lib.zstd_decompress) || napi_get_value_double(env, argv[2], &chunk) != napi_ok ||
      !whole(chunk) || chunk < 0) {
    return throw_type(env, usage);
  }
  void *src;
  size_t src_len;
  char *dst = NULL, *gp = NULL;
  size_t dst_len = 0, glen = 0, dst_item = 0, gitem = 0;
  napi_typedarray_type dt, gt;
  if (!bytes_of(env, argv[1], &src, &src_len) || !items_of(env, argv[3], &dst, &dst_len, &dst_item, &dt) ||
      !items_of(env, argv[4], &gp, &glen, &gitem, &gt) || gt != napi_float64_array || glen < 4) {
    return throw_type(env, usage);
  }
  const double *g = (const double *)gp;
  for (size_t i = 0; i < glen; i++) {
    if (!whole(g[i])) return throw_type(env, "decodeRuns: geom holds a value that is not a whole number");
  }
  int k = (int)g[3];
  if (g[2] < 0 || k < 0 || k > MAX_OUTER || glen < (size_t)(4 + 3 * k) || (size_t)chunk % dst_item != 0) {
    return throw_type(env, "decodeRuns: geom does not describe a copy");
  }
  int empty = g[2] == 0;
  for (int d = 0; d < k; d++) empty = empty || g[4 + d] <= 0;
  size_t chunk_items = (size_t)chunk / dst_item;
  if (!empty && (!reach_ok(g[0], g[2], k, g + 4, g + 4 + k, chunk_items) ||
                 !reach_ok(g[1], g[2], k, g + 4, g + 4 + 2 * k, dst_len))) {
    napi_throw_range_error(env, NULL, "decodeRuns: a run lies outside an array");
    return NULL;
  }
  Job *job = (Job *)calloc(1, sizeof(Job));
  if (!job) {
    napi_throw_error(env, NULL, "decodeRuns: out of memory");
    return NULL;
  }
  job->runs = 1;
  job->codec = codec;
  job->src = src;
  job->src_len = src_len;
  job->dst = dst;
  job->dst_len = dst_len * dst_item;
  job->chunk_len = (size_t)chunk;
  job->item = dst_item;
  memcpy(job->geom, g, sizeof(double) * (4 + 3 * (size_t)k));
  if (empty) job->geom[2] = 0;
  return queue(env, job, argv[1], argv[3]);
}

#define TILE 256

typedef struct {
  const int32_t *a, *b;
  const float *w;
  size_t len;
} Pairs;

static int pairs_of(napi_env env, napi_value a, napi_value b, napi_value w, Pairs *p) {
  char *pa, *pb, *pw;
  size_t la, lb, lw, ia, ib, iw;
  napi_typedarray_type ta, tb, tw;
  if (!items_of(env, a, &pa, &la, &ia, &ta) || !items_of(env, b, &pb, &lb, &ib, &tb) ||
      !items_of(env, w, &pw, &lw, &iw, &tw) || ta != napi_int32_array || tb != napi_int32_array ||
      tw != napi_float32_array || la != lb || la != lw) {
    return 0;
  }
  p->a = (const int32_t *)pa;
  p->b = (const int32_t *)pb;
  p->w = (const float *)pw;
  p->len = la;
  return 1;
}

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
  char *fp, *pp, *op;
  size_t flen, fitem, plen, pitem, olen, oitem;
  napi_typedarray_type ft, pt, ot;
  Pairs cols, rows;
  uint32_t col0 = 0, row0 = 0;
  if (argc < 11 || !items_of(env, argv[0], &fp, &flen, &fitem, &ft) ||
      (ft != napi_float32_array && ft != napi_float64_array) || !pairs_of(env, argv[1], argv[2], argv[3], &cols) ||
      !pairs_of(env, argv[4], argv[5], argv[6], &rows) || napi_get_value_uint32(env, argv[7], &col0) != napi_ok ||
      napi_get_value_uint32(env, argv[8], &row0) != napi_ok || !items_of(env, argv[9], &pp, &plen, &pitem, &pt) ||
      pt != napi_float64_array || plen < 4 || !items_of(env, argv[10], &op, &olen, &oitem, &ot) ||
      ot != napi_uint8_array) {
    return throw_type(env, usage);
  }
  const double *pal = (const double *)pp;
  if (olen != TILE * TILE || (size_t)col0 + TILE > cols.len || (size_t)row0 + TILE > rows.len || !(pal[3] >= 1) ||
      pal[3] > 255) {
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
  if (ft == napi_float32_array) {
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
  char *fp, *bp, *xp, *yp, *pp, *op;
  size_t flen, fitem, blen, bitem, xlen, xitem, ylen, yitem, plen, pitem, olen, oitem;
  napi_typedarray_type ft, bt, xt, yt, pt, ot;
  uint32_t nx = 0;
  if (argc < 7 || !items_of(env, argv[0], &fp, &flen, &fitem, &ft) ||
      (ft != napi_float32_array && ft != napi_float64_array) || napi_get_value_uint32(env, argv[1], &nx) != napi_ok ||
      !items_of(env, argv[2], &bp, &blen, &bitem, &bt) || bt != napi_int32_array ||
      !items_of(env, argv[3], &xp, &xlen, &xitem, &xt) || xt != napi_uint16_array ||
      !items_of(env, argv[4], &yp, &ylen, &yitem, &yt) || yt != napi_uint16_array ||
      !items_of(env, argv[5], &pp, &plen, &pitem, &pt) || pt != napi_float64_array || plen < 4 ||
      !items_of(env, argv[6], &op, &olen, &oitem, &ot) || ot != napi_uint8_array) {
    return throw_type(env, usage);
  }
  const double *pal = (const double *)pp;
  if (blen != TILE * TILE || xlen != blen || ylen != blen || olen != blen || nx < 2 || !(pal[3] >= 1) ||
      pal[3] > 255) {
    napi_throw_range_error(env, NULL, "projectedTile: sizes do not match");
    return NULL;
  }
  int ok = ft == napi_float32_array
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
  char *cp, *np, *op;
  size_t clen, citem, nlen, nitem, olen, oitem;
  napi_typedarray_type ct, nt, ot;
  if (argc < 3 || !items_of(env, argv[0], &cp, &clen, &citem, &ct) || ct != napi_uint8_array ||
      !items_of(env, argv[1], &np, &nlen, &nitem, &nt) || nt != napi_int32_array ||
      !items_of(env, argv[2], &op, &olen, &oitem, &ot) || ot != napi_uint8_array) {
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

// version(): which decoder this is and the library versions found at run time, for the logs.
static napi_value version(napi_env env, napi_callback_info info) {
  (void)info;
  char buf[256];
  snprintf(buf, sizeof buf, "gridcast C (blosclz; lz4 %s; zstd %s; zlib %s)",
           lib.lz4 ? lib.lz4_version() : "missing", lib.zstd_decompress ? lib.zstd_version() : "missing",
           lib.zlib ? lib.zlib_version() : "missing");
  napi_value out;
  napi_create_string_utf8(env, buf, NAPI_AUTO_LENGTH, &out);
  return out;
}

// compressors(): the Blosc compressors decoded here, comma-separated (lz4hc writes LZ4 streams).
static napi_value compressors(napi_env env, napi_callback_info info) {
  (void)info;
  char buf[64] = "blosclz";
  if (lib.lz4) strcat(buf, ",lz4,lz4hc");
  if (lib.zlib) strcat(buf, ",zlib");
  if (lib.zstd_decompress) strcat(buf, ",zstd");
  napi_value out;
  napi_create_string_utf8(env, buf, NAPI_AUTO_LENGTH, &out);
  return out;
}

NAPI_MODULE_INIT() {
  pthread_once(&lib_once, load_libs);
  napi_property_descriptor props[] = {
      {"decode", NULL, decode_async, NULL, NULL, NULL, napi_default, NULL},
      {"decodeSync", NULL, decode_sync, NULL, NULL, NULL, napi_default, NULL},
      {"version", NULL, version, NULL, NULL, NULL, napi_default, NULL},
      {"compressors", NULL, compressors, NULL, NULL, NULL, napi_default, NULL},
      {"readFile", NULL, read_file, NULL, NULL, NULL, napi_default, NULL},
      {"copyRuns", NULL, copy_runs, NULL, NULL, NULL, napi_default, NULL},
      {"decodeRuns", NULL, decode_runs_async, NULL, NULL, NULL, napi_default, NULL},
      {"pngRows", NULL, png_rows, NULL, NULL, NULL, napi_default, NULL},
      {"deflateRle", NULL, deflate_rle_js, NULL, NULL, NULL, napi_default, NULL},
      {"bilinearTile", NULL, bilinear_tile, NULL, NULL, NULL, napi_default, NULL},
      {"projectedTile", NULL, projected_tile, NULL, NULL, NULL, napi_default, NULL},
      {"gatherTile", NULL, gather_tile, NULL, NULL, NULL, napi_default, NULL},
      // Only when Zstandard was found (Node's own or libzstd.so.1): callers test for these.
      {"zstdDecode", NULL, zstd_async, NULL, NULL, NULL, napi_default, NULL},
      {"zstdDecodeSync", NULL, zstd_sync, NULL, NULL, NULL, napi_default, NULL},
  };
  size_t n = sizeof(props) / sizeof(props[0]);
  napi_define_properties(env, exports, lib.zstd_decompress ? n : n - 2, props);
  return exports;
}
