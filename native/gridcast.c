// gridcast's Node-API addon: C for the work JavaScript does slowest, each function standing in for
// JavaScript that gives the same results (the tests compare both) and that runs whenever the addon
// is not built or not loaded. This file is the whole compilation unit: it includes each part (one
// header per responsibility, below), sets the addon up once per process, and registers the
// functions JavaScript sees (src/native.ts types them). No compression library is linked or needed
// to build it: codecs.h opens the system's runtime libraries when the addon loads.
//
//   napi-args.h       reading and checking a call's arguments (typed arrays, strings, palettes)
//   thread-buffers.h  per-thread working buffers (block scratch, decoded chunks)
//   codecs.h          Blosc chunks (framing, shuffles, BloscLZ) and Zstandard frames; the LZ4,
//                     Zstandard and zlib libraries found at run time
//   regions.h         copyRuns: runs of items between typed arrays, and their geometry checks
//   beneath.h         opening a store file without leaving the store's root
//   jobs.h            decode, zstdDecode, readFile and decodeRuns on libuv's thread pool
//   raster.h          bilinearTile, projectedTile, gatherTile, gatherRuns, runsOf: map tiles sampled
//                     from a field, and nearest-node tables as runs
//   cell-walk.h       walkCells: the nearest cell of a tile's pixels on an unstructured grid
//   cell-neighbours.h cellNeighbours: each cell's nearest others on an unstructured grid
//   deflate-rle.h     a run-length deflate coder for PNG rows
//   png-rows.h        pngRows and deflateRle
//   socket-queue.h    sendQueue: the bytes a TCP socket's peer has not acknowledged yet
#include <node_api.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "napi-args.h"
#include "thread-buffers.h"
#include "codecs.h"
#include "regions.h"
#include "jobs.h"
#include "raster.h"
#include "cell-walk.h"
#include "cell-neighbours.h"
#include "png-rows.h"
#include "socket-queue.h"

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;

// Once per process, before any function runs: the per-thread buffers' keys, the deflate coder's
// tables, and the compression libraries this machine has.
static void setup(void) {
  thread_buffers_init();
  dr_init();
  load_codec_libraries();
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
  pthread_once(&setup_once, setup);
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
      {"gatherRuns", NULL, gather_runs, NULL, NULL, NULL, napi_default, NULL},
      {"walkCells", NULL, walk_cells, NULL, NULL, NULL, napi_default, NULL},
      {"cellNeighbours", NULL, cell_neighbours, NULL, NULL, NULL, napi_default, NULL},
      {"runsOf", NULL, runs_of, NULL, NULL, NULL, napi_default, NULL},
      {"sendQueue", NULL, send_queue, NULL, NULL, NULL, napi_default, NULL},
      // Only when Zstandard was found (Node's own or libzstd.so.1): callers test for these.
      {"zstdDecode", NULL, zstd_async, NULL, NULL, NULL, napi_default, NULL},
      {"zstdDecodeSync", NULL, zstd_sync, NULL, NULL, NULL, napi_default, NULL},
  };
  size_t n = sizeof(props) / sizeof(props[0]);
  napi_define_properties(env, exports, lib.zstd_decompress ? n : n - 2, props);
  return exports;
}
