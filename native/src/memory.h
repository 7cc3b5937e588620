// Shared memory a peer process can map (DESIGN §8): memfd, the heap backed by
// a memfd, and a peer's fd mapped into a window of the WebAssembly memory.
// Node can neither create a memfd nor mmap at a fixed address.
#pragma once
#include <napi.h>
#include <v8.h>

#include <memory>

namespace dpkit {
void InitMemory(Napi::Env env, Napi::Object exports);
/** info[i]'s backing store when it is a SharedArrayBuffer (a shared WebAssembly.Memory's buffer), else null: its Data() is the memory's base address. */
std::shared_ptr<v8::BackingStore> MemoryStore(const Napi::CallbackInfo& info, size_t i);
}
