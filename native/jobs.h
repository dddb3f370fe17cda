// Work on libuv's thread pool, each call a promise of one number: decode (a Blosc chunk into the
// caller's buffer; decodeSync the same on the calling thread), zstdDecode (a whole Zstandard
// frame; zstdDecodeSync), readFile (a whole store file read in one job, confined below the store's
// root by beneath.h) and decodeRuns (a stored chunk decoded into the pool thread's own buffer,
// then its runs copied into the caller's array as regions.h describes).
//
// decodeRuns' decoded chunk, a few MiB, stays in its core's cache for the copy: a bulk read (a
// latent slice) thus never makes a decoded chunk of its own, and the main thread copies nothing.
// A Blosc chunk is not even assembled: each block is unshuffled (or copied) straight into its
// runs (run-sink.h). The caller's array is written only once the whole chunk decoded to exactly
// its size, except there: a chunk whose header does not fit writes nothing, but a block that fails
// (an offset outside the chunk, a stream that does not decode to its size) leaves the runs of the
// blocks before it written; the caller then decodes that chunk another way, which rewrites the same
// runs, or fails.
//
// A job holds references to the arrays it reads and writes until it is done, so the GC cannot free
// them under it.
#ifndef GRIDCAST_JOBS_H
#define GRIDCAST_JOBS_H

#include <errno.h>
#include <fcntl.h>
#include <node_api.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "beneath.h"
#include "codecs.h"
#include "napi-args.h"
#include "regions.h"
#include "run-sink.h"
#include "thread-buffers.h"

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
  /** For decodeRuns: the window of chunk items placed, [win_lo, win_hi). */
  size_t win_lo, win_hi;
  double geom[4 + 3 * MAX_OUTER];
  double result;
} Job;

// decodeRuns' job: a Blosc chunk (any shuffle, or stored as is) placed block by block into its runs in dst,
// only the blocks holding items of the window decoded and only those items placed; any other chunk
// decoded into this thread's buffer, then all its runs copied into dst by the job whose window
// starts at item 0 (a job whose window starts later leaves such a chunk to that one).
// The bytes decoded (copied only when exactly chunk_len), or a negative result as decode_chunk's.
static double decode_runs(Job *job) {
  const char *from = (const char *)job->src;
  unsigned char *own = NULL;
  if (job->codec == 0 && job->geom[2] > 0 &&
      blosc_runs_ok((const unsigned char *)job->src, job->src_len, job->item, job->geom)) {
    size_t lo, hi;
    runs_span(job->geom, &lo, &hi);
    if (lo < job->win_lo) lo = job->win_lo;
    if (hi > job->win_hi) hi = job->win_hi;
    // No item of the runs in the window: nothing to decode or place.
    if (lo >= hi) return (double)job->chunk_len;
    RunCursor c;
    run_cursor_init(&c, (char *)job->dst, job->item, job->geom, (long long)job->win_lo, (long long)job->win_hi);
    BlockSink sink = {run_sink_block, &c, lo * job->item, hi * job->item};
    double n = blosc_chunk_to(job->src, job->src_len, NULL, job->chunk_len, &sink);
    if (n != (double)job->chunk_len) return n;
    return c.finished && !c.bad ? n : BAD_STREAM;
  }
  if (job->win_lo > 0) return (double)job->chunk_len;
  if (job->codec != 2) {
    int mine = 0;
    unsigned char *buf = chunk_scratch(job->chunk_len, &mine);
    if (!buf) return NO_MEMORY;
    if (mine) own = buf;
    double n = decode_chunk(job->codec == 1, job->src, job->src_len, buf, job->chunk_len);
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
    job->result = decode_chunk(job->zstd, job->src, job->src_len, job->dst, job->dst_len);
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

// decodeSync(src, dst) (zstdDecodeSync with zstd set): what decode_chunk returns, on this thread.
static napi_value decode_here(napi_env env, napi_callback_info info, int zstd) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  void *src, *dst;
  size_t src_len, dst_len;
  if (argc < 2 || !bytes_of(env, argv[0], &src, &src_len) || !bytes_of(env, argv[1], &dst, &dst_len)) {
    return throw_type(env, "decodeSync(src: Uint8Array, dst: Uint8Array)");
  }
  napi_value out;
  napi_create_double(env, decode_chunk(zstd, src, src_len, dst, dst_len), &out);
  return out;
}

static napi_value decode_sync(napi_env env, napi_callback_info info) { return decode_here(env, info, 0); }

// decode(src, dst) (zstdDecode with zstd set): a promise of what decode_chunk returns.
static napi_value decode_queued(napi_env env, napi_callback_info info, int zstd) {
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

static napi_value decode_async(napi_env env, napi_callback_info info) { return decode_queued(env, info, 0); }

static napi_value zstd_sync(napi_env env, napi_callback_info info) { return decode_here(env, info, 1); }
static napi_value zstd_async(napi_env env, napi_callback_info info) { return decode_queued(env, info, 1); }

// readFile(path, dst, root?, walk?): see TOO_BIG above.
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

// decodeRuns(codec, src, chunkBytes, dst, geom, from?, to?): codec 0 (Blosc), 1 (Zstandard frame)
// or 2 (raw bytes); src the stored chunk, chunkBytes its decoded size, dst a typed array of the
// chunk's item size, geom as copyRuns' with the chunk's items as the source. With a window [from,
// to) of the chunk's items, a Blosc chunk has only the blocks holding those items
// decoded and only those items of the runs placed, so two jobs on the same stored bytes can place
// a chunk's runs in two parts, each block decoded once when the windows meet on a block boundary;
// any other chunk is placed whole by the job whose window starts at 0, and left alone by the
// others. A promise of the bytes decoded (the runs copied only when that is chunkBytes) or a
// negative result; the geometry is checked here first (RangeError, nothing queued).
static napi_value decode_runs_async(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value argv[7];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  const char *usage =
      "decodeRuns(codec: 0|1|2, src: Uint8Array, chunkBytes: number, dst: TypedArray, geom: Float64Array, "
      "from?: number, to?: number)";
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
  if (!runs_geometry_ok(env, "decodeRuns", g, glen)) return NULL;
  if ((size_t)chunk % dst_item != 0) return throw_type(env, "decodeRuns: geom does not describe a copy");
  int k = (int)g[3];
  // The window, in the chunk's items: all of them unless given.
  double items = chunk / (double)dst_item, from = 0, to = INFINITY;
  if ((argc > 5 && napi_get_value_double(env, argv[5], &from) != napi_ok) ||
      (argc > 6 && napi_get_value_double(env, argv[6], &to) != napi_ok) || !whole(from) || from < 0 ||
      !(to >= from) || (!whole(to) && to != INFINITY)) {
    return throw_type(env, usage);
  }
  if (to > items) to = items;
  if (from > items) from = items;
  int empty = runs_empty(g);
  if (!empty && !runs_inside(g, (size_t)chunk / dst_item, dst_len)) {
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
  job->win_lo = (size_t)from;
  job->win_hi = (size_t)to;
  memcpy(job->geom, g, sizeof(double) * (4 + 3 * (size_t)k));
  if (empty) job->geom[2] = 0;
  return queue(env, job, argv[1], argv[3]);
}

#endif
