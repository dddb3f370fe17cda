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
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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
  double result;
} Job;

static napi_value throw_type(napi_env env, const char *msg) {
  napi_throw_type_error(env, NULL, msg);
  return NULL;
}

// The bytes behind a Uint8Array (or any typed array / Buffer) argument.
static int bytes_of(napi_env env, napi_value v, void **data, size_t *len) {
  bool is_typed = false;
  if (napi_is_typedarray(env, v, &is_typed) != napi_ok || !is_typed) return 0;
  napi_typedarray_type type;
  size_t length = 0;
  napi_value ab;
  size_t offset = 0;
  if (napi_get_typedarray_info(env, v, &type, &length, data, &ab, &offset) != napi_ok) return 0;
  if (type != napi_uint8_array) return 0;
  *len = length;
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

// readFile(path, dst): a whole regular file read into dst on libuv's pool, in one job instead of
// the four (open, fstat, read, close) node:fs makes of it. Resolves to the bytes read, or a
// negative number: -errno, TOO_BIG when the file is larger than dst (nothing read), CHANGED when
// it ended before its stated size. The caller has already confined and resolved the path.
#define TOO_BIG -100000
#define CHANGED -100001

static double read_into(const char *path, void *dst, size_t cap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -errno;
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
  job->result = job->path ? read_into(job->path, job->dst, job->dst_len)
                          : run(job->zstd, job->src, job->src_len, job->dst, job->dst_len);
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

static napi_value read_file(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  size_t path_len = 0;
  napi_valuetype t;
  if (argc < 2 || napi_typeof(env, argv[0], &t) != napi_ok || t != napi_string ||
      napi_get_value_string_utf8(env, argv[0], NULL, 0, &path_len) != napi_ok) {
    return throw_type(env, "readFile(path: string, dst: Uint8Array)");
  }
  Job *job = (Job *)calloc(1, sizeof(Job));
  char *path = job ? (char *)malloc(path_len + 1) : NULL;
  if (!path) {
    free(job);
    napi_throw_error(env, NULL, "readFile: out of memory");
    return NULL;
  }
  napi_get_value_string_utf8(env, argv[0], path, path_len + 1, &path_len);
  // A path with a NUL inside would name another file than the one confined in JavaScript.
  if (strlen(path) != path_len || !bytes_of(env, argv[1], &job->dst, &job->dst_len)) {
    free(path);
    free(job);
    return throw_type(env, "readFile(path: string, dst: Uint8Array)");
  }
  job->path = path;
  return queue(env, job, NULL, argv[1]);
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
#ifdef GRIDCAST_ZSTD
      {"zstdDecode", NULL, zstd_async, NULL, NULL, NULL, napi_default, NULL},
      {"zstdDecodeSync", NULL, zstd_sync, NULL, NULL, NULL, napi_default, NULL},
#endif
  };
  napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props);
  return exports;
}
