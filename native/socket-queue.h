// sendQueue(fd): bytes a TCP socket's kernel still holds for the peer, sent or not, that the peer
// has not acknowledged (SIOCOUTQ). What the process handed the kernel minus this is what the
// client acknowledged, which grows as it reads; the watchdog (src/http/watchdog.ts) judges a slow
// reader by that, because the bytes the kernel accepts from the process move in steps of up to
// half its send buffer (a writer is woken only once that much is free).
#ifndef GRIDCAST_SOCKET_QUEUE_H
#define GRIDCAST_SOCKET_QUEUE_H

#include <errno.h>
#include <linux/sockios.h>
#include <node_api.h>
#include <sys/ioctl.h>

static napi_value send_queue(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  napi_get_cb_info(env, info, &argc, argv, NULL, NULL);
  int32_t fd = -1;
  if (argc < 1 || napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0)
    return throw_type(env, "sendQueue(fd: non-negative integer)");
  int queued = 0;
  double result = ioctl(fd, SIOCOUTQ, &queued) == 0 ? (double)queued : -(double)errno;
  napi_value out;
  napi_create_double(env, result, &out);
  return out;
}

#endif
