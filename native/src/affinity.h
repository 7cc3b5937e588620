// CPU affinity of the calling thread (DESIGN §8): Node has no API for it.
#pragma once
#include <napi.h>

namespace dpkit {
void InitAffinity(Napi::Env env, Napi::Object exports);
}
