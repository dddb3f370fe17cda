// Byte-shuffled Blosc chunks unshuffled straight into the runs of the region they feed (decodeRuns,
// jobs.h): each block's byte planes, decoded into the thread's block scratch, are interleaved
// directly into their places in the caller's array, so no decoded chunk is assembled and then
// copied run by run. The runs are those of a copyRuns geometry (regions.h) whose source positions
// rise from one run to the next without overlapping, as every region of a chunk stored in C order
// does; blocks are handed over in chunk order, so one cursor walks the runs once.
#ifndef GRIDCAST_RUN_SINK_H
#define GRIDCAST_RUN_SINK_H

#include <stddef.h>

#include "codecs.h"
#include "regions.h"

typedef struct {
  char *dst;
  size_t item;
  /** Items a run; outer counts and strides (source, output), as in the geometry. */
  long long n;
  int k;
  long long cnt[MAX_OUTER], ss[MAX_OUTER], ds[MAX_OUTER], idx[MAX_OUTER];
  /** The current run's first item in the chunk and in dst, and how many of its items are done. */
  long long s, t, done;
  /** The window of chunk items placed, [w0, w1): items of the runs outside it are left alone. */
  long long w0, w1;
  /** Every run placed; a run found behind the block being placed (never, for rising runs). */
  int finished, bad;
} RunCursor;

// Whether a checked, non-empty geometry's runs rise through the source without overlapping: every
// outer stride (where its count is above 1) at least the span of everything inside it.
static int runs_rise(const double *g) {
  int k = (int)g[3];
  double span = g[2];
  for (int d = k - 1; d >= 0; d--) {
    double cnt = g[4 + d], ss = g[4 + k + d];
    if (cnt > 1) {
      if (ss < span) return 0;
      span += (cnt - 1) * ss;
    }
  }
  return 1;
}

static void run_cursor_next(RunCursor *c);

// A cursor over a geometry's runs, placing only the chunk items in [w0, w1).
static void run_cursor_init(RunCursor *c, char *dst, size_t item, const double *g, long long w0, long long w1) {
  c->dst = dst;
  c->item = item;
  c->n = (long long)g[2];
  c->k = (int)g[3];
  for (int d = 0; d < c->k; d++) {
    c->cnt[d] = (long long)g[4 + d];
    c->ss[d] = (long long)g[4 + c->k + d];
    c->ds[d] = (long long)g[4 + 2 * c->k + d];
    c->idx[d] = 0;
  }
  c->s = (long long)g[0];
  c->t = (long long)g[1];
  c->done = 0;
  c->finished = 0;
  c->bad = 0;
  c->w0 = w0;
  c->w1 = w1;
  // Runs wholly before the window are skipped; one it starts inside is entered at its start.
  while (!c->finished && c->s + c->n <= w0) run_cursor_next(c);
  if (!c->finished && c->s < w0) c->done = w0 - c->s;
  if (!c->finished && c->s + c->done >= w1) c->finished = 1;
}

// The next run, as move_runs steps (the last outer dimension fastest).
static void run_cursor_next(RunCursor *c) {
  c->done = 0;
  int d = c->k - 1;
  while (d >= 0) {
    c->s += c->ss[d];
    c->t += c->ds[d];
    if (++c->idx[d] < c->cnt[d]) return;
    c->s -= c->cnt[d] * c->ss[d];
    c->t -= c->cnt[d] * c->ds[d];
    c->idx[d] = 0;
    d--;
  }
  c->finished = 1;
}

// A block (its byte planes, or its elements in order): the parts of runs inside it unshuffled or
// copied into their places.
static void run_sink_block(void *ctx, const unsigned char *data, size_t size, size_t ts, size_t first, int planes) {
  RunCursor *c = (RunCursor *)ctx;
  long long e0 = (long long)(first / ts), m = (long long)(size / ts), e1 = e0 + m;
  while (!c->finished) {
    long long at = c->s + c->done;
    if (at >= c->w1) {
      c->finished = 1;
      return;
    }
    if (at >= e1) return;
    long long end = c->s + c->n < e1 ? c->s + c->n : e1;
    if (end > c->w1) end = c->w1;
    if (at < e0) {
      // Only when the runs do not rise (the caller checked they do); never read before the block.
      c->bad = 1;
      c->finished = 1;
      return;
    }
    unsigned char *to = (unsigned char *)c->dst + (size_t)(c->t + c->done) * c->item;
    if (planes) {
      unshuffle_part(data, (size_t)m, (size_t)(at - e0), (size_t)(end - at), to, ts);
    } else {
      memcpy(to, data + (size_t)(at - e0) * ts, (size_t)(end - at) * ts);
    }
    c->done += end - at;
    if (c->s + c->done >= c->w1) {
      c->finished = 1;
      return;
    }
    if (c->done < c->n) return;
    run_cursor_next(c);
  }
}

// The items of the chunk a rising geometry reads: [*lo, *hi).
static void runs_span(const double *g, size_t *lo, size_t *hi) {
  int k = (int)g[3];
  double end = g[0] + g[2];
  for (int d = 0; d < k; d++) {
    if (g[4 + d] > 1) end += (g[4 + d] - 1) * g[4 + k + d];
  }
  *lo = (size_t)g[0];
  *hi = (size_t)end;
}

// Whether decodeRuns can place this Blosc chunk's blocks straight into the runs: byte-shuffled,
// bit-shuffled, unshuffled or stored as is (not both shuffles, no delta filter), Blosc's element
// size that of the output's items, blocks of whole elements, and runs that rise through the chunk.
static int blosc_runs_ok(const unsigned char *src, size_t src_len, size_t item, const double *g) {
  if (src_len < HEADER) return 0;
  unsigned flags = src[2], ts = src[3];
  size_t blocksize = u32le(src + 8);
  int both = (flags & DO_SHUFFLE) && (flags & DO_BITSHUFFLE);
  return !both && !(flags & DO_DELTA) && ts == item && blocksize > 0 && blocksize % ts == 0 && runs_rise(g);
}

#endif
