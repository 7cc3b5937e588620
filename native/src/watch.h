// Readiness callbacks on the calling thread's libuv loop (DESIGN §8). Node
// watches only the fds it opened itself (net, fs); a control socket or an
// eventfd from this shim needs a uv_poll_t of its own.
#pragma once
#include <napi.h>

namespace dpkit {
void InitWatch(Napi::Env env, Napi::Object exports);
}
