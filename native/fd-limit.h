// raiseOpenFileLimit(): the process's soft RLIMIT_NOFILE raised to its hard limit where it is
// lower (any process may do that), returned as [soft, hard] afterwards, or [-errno, -errno]. Node
// has no setrlimit; without it a server under a soft limit of 1,024 refuses clients long before
// the hard limit the administrator allowed (src/http/fd-limit.ts).
#ifndef GRIDCAST_FD_LIMIT_H
#define GRIDCAST_FD_LIMIT_H

#include <errno.h>
#include <node_api.h>
#include <sys/resource.h>

static napi_value pair_of(napi_env env, double a, double b) {
  napi_value out, x, y;
  napi_create_array_with_length(env, 2, &out);
  napi_create_double(env, a, &x);
  napi_create_double(env, b, &y);
  napi_set_element(env, out, 0, x);
  napi_set_element(env, out, 1, y);
  return out;
}

// RLIM_INFINITY as a number JavaScript can hold exactly (Number.MAX_SAFE_INTEGER).
static double limit_number(rlim_t v) { return v == RLIM_INFINITY ? 9007199254740991.0 : (double)v; }

static napi_value raise_open_file_limit(napi_env env, napi_callback_info info) {
  (void)info;
  struct rlimit lim;
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return pair_of(env, -errno, -errno);
  if (lim.rlim_cur < lim.rlim_max) {
    struct rlimit raised = {lim.rlim_max, lim.rlim_max};
    // Refused (a sandbox, or a hard limit above the kernel's nr_open): the soft limit stays.
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) lim = raised;
  }
  return pair_of(env, limit_number(lim.rlim_cur), limit_number(lim.rlim_max));
}

#endif
