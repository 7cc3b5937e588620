// Shared memory a peer process can map (DESIGN §8): memfd, the heap backed by
// a memfd, and a peer's fd mapped into a window of the WebAssembly memory.
// Node can neither create a memfd nor mmap at a fixed address.
#pragma once
#include <napi.h>

namespace dpkit {
void InitMemory(Napi::Env env, Napi::Object exports);
}
