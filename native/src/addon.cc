// dpkit's native shim: only what Node has no API for (DESIGN §8).
// Context-aware, so every lcore worker thread may load it.
#include <napi.h>

#include "affinity.h"
#include "clock.h"
#include "eventfd.h"
#include "memory.h"
#include "netif.h"
#include "unix.h"
#include "watch.h"
#include "xdp.h"
#include "tap.h"

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  dpkit::InitAffinity(env, exports);
  dpkit::InitClock(env, exports);
  dpkit::InitMemory(env, exports);
  dpkit::InitUnix(env, exports);
  dpkit::InitEventfd(env, exports);
  dpkit::InitWatch(env, exports);
  dpkit::InitPacket(env, exports);
  dpkit::InitXdp(env, exports);
  dpkit::InitTap(env, exports);
  return exports;
}

NODE_API_MODULE(dpkit_native, Init)
