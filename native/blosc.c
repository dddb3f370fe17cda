// Blosc chunk decoding through the system's c-blosc (Debian's libblosc1, the library numcodecs and
// so zarr-python and xarray use), as a Node-API addon. JavaScript has already checked the header,
// the block table and every stream length against the chunk and against the decoded-size bound
// the array's metadata allows; this file only hands the bytes to blosc_decompress_ctx and reports
// what it produced. Decoding runs on libuv's thread pool (decode) or on the calling thread
// (decodeSync). blosc_decompress_ctx keeps no global state, so calls may run in parallel.
//
// Built with GRIDCAST_ZSTD (when libzstd's headers are there), it also decodes whole Zstandard
// frames into a buffer the caller owns (zstdDecode, zstdDecodeSync): node:zlib can only return
// new buffers, and bulk reads decode into reused ones. ZSTD_decompress never writes past the
// capacity it is given and fails instead.
//
// bilinearTile samples one 256 × 256 map tile of palette indices from a field with the bracketing
// tables render/resample.ts solved once per grid and level: the same arithmetic in the same order
// (doubles, no fused multiply-add), so the same indices as the JavaScript it stands in for.
//
// pngRows prepares an indexed PNG's rows (repeated rows as filter Up, the colours in use numbered
// densely) in one pass of C instead of two of JavaScript per pixel; the caller deflates them.
//
// copyRuns moves runs of items between two typed arrays (a decoded chunk and the region it feeds):
// one memcpy per run where JavaScript pays a subarray view or a scalar loop per run. Every run is
// bounds-checked against both arrays before the first byte moves.
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "beneath.h"

#include <blosc.h>
#ifdef GRIDCAST_ZSTD
#include <zstd.h>
#endif
#include <node_api.h>
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

// The compressed size the header states, read here too: c-blosc trusts the header's cbytes, so
// the source must hold at least that many bytes before it is handed over.
static int fits(const void *src, size_t src_len, size_t dst_len) {
  size_t nbytes = 0, cbytes = 0, blocksize = 0;
  if (src_len < BLOSC_MIN_HEADER_LENGTH) return 0;
  blosc_cbuffer_sizes(src, &nbytes, &cbytes, &blocksize);
  return cbytes <= src_len && nbytes == dst_len;
}

// Bytes written into dst, or a negative number: c-blosc's error code, -100 for a header that
// does not fit, -101 for a Zstandard frame that fails (corrupt, or larger than dst).
static double run(int zstd, const void *src, size_t src_len, void *dst, size_t dst_len) {
#ifdef GRIDCAST_ZSTD
  if (zstd) {
    size_t n = ZSTD_decompress(dst, dst_len, src, src_len);
    return ZSTD_isError(n) ? -101 : (double)n;
  }
#else
  if (zstd) return -102;
#endif
  return fits(src, src_len, dst_len) ? blosc_decompress_ctx(src, dst, dst_len, 1) : -100;
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

// decode(src, dst): a promise of what blosc_decompress_ctx (or ZSTD_decompress) returned.
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

#ifdef GRIDCAST_ZSTD
static napi_value zstd_sync(napi_env env, napi_callback_info info) { return run_sync(env, info, 1); }
static napi_value zstd_async(napi_env env, napi_callback_info info) { return run_async(env, info, 1); }
#endif

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
  const size_t item = src_item, run = (size_t)n * item;
  long long s = (long long)g[0], t = (long long)g[1];
  long long idx[MAX_OUTER] = {0};
  long long cnt[MAX_OUTER], ss[MAX_OUTER], ds[MAX_OUTER];
  for (int d = 0; d < k; d++) {
    cnt[d] = (long long)count[d];
    ss[d] = (long long)sstride[d];
    ds[d] = (long long)dstride[d];
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
  return NULL;
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

// pngRows(indices, width, height, raw, used): `indices` width × height palette indices; `raw`
// receives (width + 1) × height filtered bytes: a row equal to the one above as filter Up (2) and
// zeros, any other as filter None (0) and its indices renumbered densely over the colours used in
// such rows; `used` (256 bytes) receives those colours in ascending order. Returns their number.
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
  for (size_t y = 0; y < h; y++) {
    const unsigned char *row = src + y * w;
    if (y > 0 && memcmp(row, row - w, w) == 0) continue;
    for (size_t i = 0; i < w; i++) seen[row[i]] = 1;
  }
  uint32_t n = 0;
  for (int c = 0; c < 256; c++) {
    if (seen[c]) {
      remap[c] = (unsigned char)n;
      used[n++] = (unsigned char)c;
    }
  }
  for (size_t y = 0; y < h; y++) {
    const unsigned char *row = src + y * w;
    unsigned char *out = raw + y * (w + 1);
    if (y > 0 && memcmp(row, row - w, w) == 0) {
      out[0] = 2;
      memset(out + 1, 0, w);
      continue;
    }
    out[0] = 0;
    for (size_t i = 0; i < w; i++) out[1 + i] = remap[row[i]];
  }
  napi_value result;
  napi_create_uint32(env, n, &result);
  return result;
}

static napi_value version(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
  napi_create_string_utf8(env, blosc_get_version_string(), NAPI_AUTO_LENGTH, &out);
  return out;
}

static napi_value compressors(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
  napi_create_string_utf8(env, blosc_list_compressors(), NAPI_AUTO_LENGTH, &out);
  return out;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor props[] = {
      {"decode", NULL, decode_async, NULL, NULL, NULL, napi_default, NULL},
      {"decodeSync", NULL, decode_sync, NULL, NULL, NULL, napi_default, NULL},
      {"version", NULL, version, NULL, NULL, NULL, napi_default, NULL},
      {"compressors", NULL, compressors, NULL, NULL, NULL, napi_default, NULL},
      {"readFile", NULL, read_file, NULL, NULL, NULL, napi_default, NULL},
      {"copyRuns", NULL, copy_runs, NULL, NULL, NULL, napi_default, NULL},
      {"pngRows", NULL, png_rows, NULL, NULL, NULL, napi_default, NULL},
      {"bilinearTile", NULL, bilinear_tile, NULL, NULL, NULL, napi_default, NULL},
#ifdef GRIDCAST_ZSTD
      {"zstdDecode", NULL, zstd_async, NULL, NULL, NULL, napi_default, NULL},
      {"zstdDecodeSync", NULL, zstd_sync, NULL, NULL, NULL, napi_default, NULL},
#endif
  };
  napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props);
  return exports;
}
