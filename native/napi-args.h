// Reading a call's arguments: each helper says whether an argument is what the function needs and,
// if it is, where its items are. On a mismatch the caller throws a TypeError with its usage line
// (throw_type), so every exported function reports a wrong argument the same way and none reads
// an argument it has not checked.
#ifndef GRIDCAST_NAPI_ARGS_H
#define GRIDCAST_NAPI_ARGS_H

#include <math.h>
#include <node_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static napi_value throw_type(napi_env env, const char *msg) {
  napi_throw_type_error(env, NULL, msg);
  return NULL;
}

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

// A typed array argument of exactly the type `want`: where its items start and how many.
static int array_of(napi_env env, napi_value v, napi_typedarray_type want, void **data, size_t *len) {
  char *p;
  size_t item;
  napi_typedarray_type type;
  if (!items_of(env, v, &p, len, &item, &type) || type != want) return 0;
  *data = p;
  return 1;
}

// The bytes behind a Uint8Array (or Buffer) argument.
static int bytes_of(napi_env env, napi_value v, void **data, size_t *len) {
  return array_of(env, v, napi_uint8_array, data, len);
}

// A field to sample: a Float32Array or a Float64Array (*is_f32 says which).
static int field_of(napi_env env, napi_value v, const void **data, size_t *len, int *is_f32) {
  char *p;
  size_t item;
  napi_typedarray_type type;
  if (!items_of(env, v, &p, len, &item, &type) || (type != napi_float32_array && type != napi_float64_array)) {
    return 0;
  }
  *data = p;
  *is_f32 = type == napi_float32_array;
  return 1;
}

// A palette argument: a Float64Array of at least [scale, offset, below, top].
static const double *palette_of(napi_env env, napi_value v) {
  void *pal;
  size_t len;
  return array_of(env, v, napi_float64_array, &pal, &len) && len >= 4 ? (const double *)pal : NULL;
}

// Whether a palette's top index is one a byte holds (1..255).
static int palette_top_ok(const double *pal) { return pal[3] >= 1 && pal[3] <= 255; }

// Two Int32Array node tables and a Float32Array of weights, one entry each (a bracketing table).
typedef struct {
  const int32_t *a, *b;
  const float *w;
  size_t len;
} Pairs;

static int pairs_of(napi_env env, napi_value a, napi_value b, napi_value w, Pairs *p) {
  void *pa, *pb, *pw;
  size_t la, lb, lw;
  if (!array_of(env, a, napi_int32_array, &pa, &la) || !array_of(env, b, napi_int32_array, &pb, &lb) ||
      !array_of(env, w, napi_float32_array, &pw, &lw) || la != lb || la != lw) {
    return 0;
  }
  p->a = (const int32_t *)pa;
  p->b = (const int32_t *)pb;
  p->w = (const float *)pw;
  p->len = la;
  return 1;
}

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

// A number that is a whole number JavaScript holds exactly.
static int whole(double x) { return isfinite(x) && x == floor(x) && fabs(x) < 9007199254740992.0; }

#endif
