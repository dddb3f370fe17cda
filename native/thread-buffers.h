// Working buffers kept per thread (libuv's pool threads and the main thread), grown to the largest
// size asked of them and freed when the thread ends: the scratch a shuffled Blosc block decodes
// into (also deflateRle's tokens), and the buffer decodeRuns decodes a whole chunk into before
// copying its runs out. thread_buffers_init must run once before either is used (the module's
// one-time set-up in gridcast.c).
#ifndef GRIDCAST_THREAD_BUFFERS_H
#define GRIDCAST_THREAD_BUFFERS_H

#include <pthread.h>
#include <stdlib.h>

static pthread_key_t scratch_key;
static pthread_key_t chunk_key;

static void thread_buffers_init(void) {
  if (pthread_key_create(&scratch_key, free) != 0 || pthread_key_create(&chunk_key, free) != 0) abort();
}

// The buffer this thread holds under `key`, at least `n` bytes (grown when smaller), or NULL.
static unsigned char *held_buffer(pthread_key_t key, size_t n) {
  size_t *held = (size_t *)pthread_getspecific(key);
  if (held && held[0] >= n) return (unsigned char *)(held + 1);
  size_t *fresh = (size_t *)malloc(sizeof(size_t) + n);
  if (!fresh || pthread_setspecific(key, fresh) != 0) {
    free(fresh);
    return NULL;
  }
  free(held);
  fresh[0] = n;
  return (unsigned char *)(fresh + 1);
}

// This thread's buffer for shuffled blocks, at least `n` bytes, or NULL.
static unsigned char *scratch_of(size_t n) { return held_buffer(scratch_key, n); }

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
  return held_buffer(chunk_key, n);
}

#endif
