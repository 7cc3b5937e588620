// eventfd (DESIGN §8): vhost-user kick and call, memif interrupts. Node has no
// eventfd, and reading one with fs would block a thread of libuv's pool.
#pragma once
#include <napi.h>

namespace dpkit {
void InitEventfd(Napi::Env env, Napi::Object exports);
}
