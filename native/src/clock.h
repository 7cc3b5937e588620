// CLOCK_MONOTONIC without garbage (DESIGN §8): Node 20's performance.now()
// and Date.now() box each reading in a fresh 16-byte heap number, so an lcore
// that polls the clock fills the young generation and stalls in scavenges.
#pragma once
#include <napi.h>

namespace dpkit {
void InitClock(Napi::Env env, Napi::Object exports);
}
