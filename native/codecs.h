// Decoding stored chunks: Blosc chunks (the chunk format: header, block table, split streams; byte
// shuffle, bit shuffle and BloscLZ in our own C) and whole Zstandard frames. LZ4, Zstandard and
// zlib streams go to the system's runtime libraries (liblz4.so.1, libzstd.so.1, libz.so.1), opened
// with dlopen when the addon loads (load_codec_libraries) and called through the few stable
// functions declared below, so no -dev package is needed to build: a C compiler and Node's own
// headers are enough. A compressor whose library is missing at run time (or snappy, or the delta
// filter) makes a decode return UNAVAILABLE before anything is decoded, and JavaScript decodes
// that chunk instead.
//
// Zstandard is the system's libzstd.so.1 when there is one (it decodes with fewer instructions),
// else the copy Node itself exports when it does (Node 24 does); the system libraries are opened
// with RTLD_DEEPBIND so that their calls to their own functions do not bind to the same names
// Node exports (its own Zstandard and zlib, other versions). A whole
// Zstandard frame decodes into a buffer the caller owns (node:zlib can only return new buffers,
// and bulk reads decode into reused ones); ZSTD_decompressDCtx never writes past the capacity it
// is given and fails instead.
//
// JavaScript has already checked the header, the block table and every stream length against the
// chunk and the decoded-size bound the array's metadata allows; this code checks them again
// itself, and never reads or writes outside the buffers it is given. It keeps no state but a
// Zstandard context and a scratch buffer per thread, so decodes may run in parallel.
#ifndef GRIDCAST_CODECS_H
#define GRIDCAST_CODECS_H

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "thread-buffers.h"

// ---- The compression libraries, found at run time -------------------------------------------
// Prototypes of the stable entry points used, declared here instead of taken from -dev headers
// (they have kept these signatures across every release with the sonames below).
typedef int (*lz4_decompress_safe_t)(const char *src, char *dst, int src_size, int dst_capacity);
typedef int (*lz4_decompress_partial_t)(const char *src, char *dst, int src_size, int target, int dst_capacity);
typedef const char *(*version_string_t)(void);
typedef void *(*zstd_create_dctx_t)(void);
typedef size_t (*zstd_free_dctx_t)(void *dctx);
typedef size_t (*zstd_decompress_dctx_t)(void *dctx, void *dst, size_t cap, const void *src, size_t len);
typedef unsigned (*zstd_is_error_t)(size_t code);
typedef int (*zlib_uncompress_t)(unsigned char *dst, unsigned long *dst_len, const unsigned char *src,
                                 unsigned long src_len);

static struct {
  lz4_decompress_safe_t lz4;
  /** LZ4_decompress_safe_partial (LZ4 1.8.3 and later; NULL before): a stream's first bytes only. */
  lz4_decompress_partial_t lz4_partial;
  version_string_t lz4_version;
  zstd_create_dctx_t zstd_create;
  zstd_free_dctx_t zstd_free;
  zstd_decompress_dctx_t zstd_decompress;
  zstd_is_error_t zstd_is_error;
  version_string_t zstd_version;
  zlib_uncompress_t zlib;
  version_string_t zlib_version;
} lib;

static pthread_key_t zstd_key;

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

// Opens the compression libraries this machine has (once, from the module's set-up).
static void load_codec_libraries(void) {
  void *h = open_lib("liblz4.so.1", "lz4");
  if (h) {
    lib.lz4 = (lz4_decompress_safe_t)dlsym(h, "LZ4_decompress_safe");
    lib.lz4_version = (version_string_t)dlsym(h, "LZ4_versionString");
    if (!lib.lz4 || !lib.lz4_version) lib.lz4 = NULL;
    lib.lz4_partial = lib.lz4 ? (lz4_decompress_partial_t)dlsym(h, "LZ4_decompress_safe_partial") : NULL;
  }
  // Zstandard: the system's libzstd.so.1 when there is one, else the copy Node itself carries and
  // exports (Node 24 does). The system's decodes the same frames with fewer instructions: Debian's
  // 1.5.4 decoded the latent bench's 16 chunks of 2 MiB in 581 million instructions against 645
  // million for Node 24's 1.5.7 (callgrind), 10-15 % less CPU.
  h = open_lib("libzstd.so.1", "zstd");
  int node_zstd = !h && !skipped("zstd") && dlsym(RTLD_DEFAULT, "ZSTD_decompressDCtx") != NULL;
  if (node_zstd) h = RTLD_DEFAULT;
  if (h) {
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
static int decode_stream(int compressor, const unsigned char *src, size_t len, unsigned char *dst, size_t cap) {
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

// The first `need` bytes of a stream whose whole decoded size is `cap`: LZ4 stops there (its
// partial decoder checks the stream up to that point); the other codecs decode it all. 1, or 0 when
// it does not decode.
static int decode_stream_head(int compressor, const unsigned char *src, size_t len, unsigned char *dst, size_t cap,
                              size_t need) {
  if (need < cap && compressor == LZ4 && lib.lz4_partial && len <= INT_MAX && cap <= INT_MAX) {
    return lib.lz4_partial((const char *)src, (char *)dst, (int)len, (int)need, (int)cap) == (int)need;
  }
  return decode_stream(compressor, src, len, dst, cap);
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
// 16 elements at a time with SSE2 (every x86-64 has it): the byte planes interleaved by unpacking
// bytes, then pairs, then quads. Returns how many elements it did.
// Planes `plane` bytes apart, `n` elements of each read from src onwards.
static size_t unshuffle_sse2(const unsigned char *src, size_t plane, unsigned char *dst, size_t n, size_t ts) {
  size_t i = 0;
#define LOAD(j) _mm_loadu_si128((const __m128i *)(src + (j) * plane + i))
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
// Elements [a, a + m) of a shuffled block whose byte planes are `plane` bytes apart, unshuffled
// into dst (m whole elements of ts bytes).
static void unshuffle_part(const unsigned char *src, size_t plane, size_t a, size_t m, unsigned char *dst, size_t ts) {
  size_t i = 0;
  src += a;
  if (ts == 1) {
    memcpy(dst, src, m);
    return;
  }
#ifdef __SSE2__
  i = unshuffle_sse2(src, plane, dst, m, ts);
#endif
  for (size_t j = 0; j < ts; j++) {
    const unsigned char *p = src + j * plane;
    for (size_t e = i; e < m; e++) dst[e * ts + j] = p[e];
  }
}

static void unshuffle(const unsigned char *src, unsigned char *dst, size_t size, size_t ts) {
  size_t n = size / ts;
  unshuffle_part(src, n, 0, n, dst, ts);
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

// Where a chunk's blocks go instead of into dst (see blosc_chunk_to): called once per block, in
// order, with the block (`size` bytes) and the offset of its first byte in the chunk; `planes` set
// when the block is handed as a byte-shuffled block's byte planes (`size / ts` elements a plane),
// clear when its elements are in order (bit-shuffled blocks unshuffled, blocks stored unshuffled,
// a chunk stored as is, handed as one block).
// `lo`, `hi`: the bytes of the chunk the sink reads ([lo, hi), hi 0 for all of them): blocks outside
// are not decoded at all, and in the last block it reads only the head of each byte plane is (of the
// block, unshuffled; a bit-shuffled block is decoded whole).
typedef struct {
  void (*block)(void *ctx, const unsigned char *data, size_t size, size_t ts, size_t first, int planes);
  void *ctx;
  size_t lo, hi;
} BlockSink;

// A Blosc (format 1/2) chunk into dst, which must be exactly the size its header states: the
// bytes written, or one of the negative results above. With a sink, the chunk's blocks are handed
// to it instead (dst is then not written and may be NULL): a byte-shuffled chunk's unshuffled-not-
// yet, any other's in element order; the caller makes sure its blocks hold whole elements of the
// header's type size (blosc_runs_ok in run-sink.h). On a failure, the blocks before the one that
// failed have been handed over.
static double blosc_chunk_to(const unsigned char *src, size_t src_len, unsigned char *dst, size_t dst_len,
                             const BlockSink *sink) {
  if (src_len < HEADER) return BAD_HEADER;
  unsigned format = src[0], flags = src[2], ts = src[3];
  size_t nbytes = u32le(src + 4), blocksize = u32le(src + 8), cbytes = u32le(src + 12);
  if (format < 1 || format > 2 || ts == 0 || nbytes != dst_len || cbytes < HEADER || cbytes > src_len) {
    return BAD_HEADER;
  }
  if (sink && (blocksize % ts != 0 || nbytes % ts != 0)) return BAD_HEADER;
  if (nbytes == 0) return 0;
  if (flags & MEMCPYED) {
    if (nbytes > cbytes - HEADER) return BAD_HEADER;
    if (sink) {
      sink->block(sink->ctx, src + HEADER, nbytes, ts, 0, 0);
    } else {
      memcpy(dst, src + HEADER, nbytes);
    }
    return (double)nbytes;
  }
  int compressor = flags >> 5;
  if ((flags & DO_DELTA) || !available(compressor)) return UNAVAILABLE;
  if (blocksize == 0) return BAD_HEADER;
  size_t nblocks = nbytes / blocksize + (nbytes % blocksize != 0);
  if (nblocks > (cbytes - HEADER) / 4) return BAD_HEADER;
  size_t table_end = HEADER + 4 * nblocks, leftover = nbytes % blocksize;
  int shuffled = (flags & (DO_SHUFFLE | DO_BITSHUFFLE)) != 0;
  // A bit-shuffled block for a sink is unshuffled into the scratch's second half.
  int bits_to_sink = sink && (flags & DO_BITSHUFFLE) && !(flags & DO_SHUFFLE);
  size_t span = blocksize < nbytes ? blocksize : nbytes;
  unsigned char *scratch = shuffled || sink ? scratch_of(bits_to_sink ? 2 * span : span) : NULL;
  if ((shuffled || sink) && !scratch) return NO_MEMORY;
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
    // Decoded bytes of each stream the sink reads: every plane up to its last element wanted (a
    // single stream holds the planes one after another, so all but the last plane's tail).
    size_t need = neblock;
    if (sink && sink->hi) {
      size_t first = b * blocksize, end = first + bsize;
      if (end <= sink->lo || first >= sink->hi) continue;
      if (sink->hi < end && (flags & DO_SHUFFLE)) {
        size_t elems = (sink->hi - first + ts - 1) / ts, plane = bsize / ts;
        need = splits == ts ? elems : (ts - 1) * plane + elems;
        if (need > neblock) need = neblock;
      } else if (sink->hi < end && !shuffled && splits == 1) {
        // Elements in order: the bytes up to the last one wanted.
        need = sink->hi - first;
      }
    }
    unsigned char *dest = sink ? NULL : dst + b * blocksize, *target = shuffled || sink ? scratch : dest;
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
        memcpy(target + s * neblock, src + at, need);
      } else if (!decode_stream_head(compressor, src + at, csize, target + s * neblock, neblock, need)) {
        result = BAD_STREAM;
      }
      at += csize;
    }
    if (result < 0) break;
    if (sink && (flags & DO_SHUFFLE)) {
      sink->block(sink->ctx, scratch, bsize, ts, b * blocksize, 1);
    } else if (bits_to_sink) {
      bitunshuffle(scratch, scratch + span, bsize, ts, (int)format);
      sink->block(sink->ctx, scratch + span, bsize, ts, b * blocksize, 0);
    } else if (sink) {
      sink->block(sink->ctx, scratch, bsize, ts, b * blocksize, 0);
    } else if (flags & DO_SHUFFLE) {
      unshuffle(scratch, dest, bsize, ts);
    } else if (flags & DO_BITSHUFFLE) {
      bitunshuffle(scratch, dest, bsize, ts, (int)format);
    }
  }
  return result;
}

static double blosc_chunk(const unsigned char *src, size_t src_len, unsigned char *dst, size_t dst_len) {
  return blosc_chunk_to(src, src_len, dst, dst_len, NULL);
}

// A Blosc chunk, or (zstd set) a whole Zstandard frame, decoded into dst: the bytes written, or a
// negative result (above).
static double decode_chunk(int zstd, const void *src, size_t src_len, void *dst, size_t dst_len) {
  if (zstd) {
    void *ctx = lib.zstd_decompress ? zstd_ctx() : NULL;
    if (!ctx) return UNAVAILABLE;
    size_t n = lib.zstd_decompress(ctx, dst, dst_len, src, src_len);
    return lib.zstd_is_error(n) ? ZSTD_FAILED : (double)n;
  }
  return blosc_chunk((const unsigned char *)src, src_len, (unsigned char *)dst, dst_len);
}

#endif
