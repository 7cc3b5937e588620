// TAP devices for net_tap (tap.cc): /dev/net/tun queues and the per-burst
// readv/writev loops between the tap and mbufs in the heap.
#pragma once
#include <napi.h>

namespace dpkit {
void InitTap(Napi::Env env, Napi::Object exports);
}  // namespace dpkit
