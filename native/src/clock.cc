// clockBind(into: Float64Array): a function of no arguments that writes
// CLOCK_MONOTONIC in nanoseconds into into[0] and returns undefined, so a
// reading allocates nothing on the JS heap. The slot is bound once and held
// by the function, which each thread makes for itself: no state is shared.
// (Passing the array on every call costs ~3x: its buffer is looked up each time.)
#include "clock.h"

#include <time.h>

#include "common.h"

namespace dpkit {
namespace {

struct Slot {
  double* at;
  napi_ref array;  // keeps the buffer alive as long as the function
};

napi_value Read(napi_env env, napi_callback_info info) {
  void* data;
  if (napi_get_cb_info(env, info, nullptr, nullptr, nullptr, &data) != napi_ok) return nullptr;
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  // Exact in a double up to 2^53 ns (104 days of uptime), as eal/clock.ts says.
  *static_cast<Slot*>(data)->at = static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
  return nullptr;
}

void FreeSlot(napi_env env, void* data, void*) {
  Slot* s = static_cast<Slot*>(data);
  napi_delete_reference(env, s->array);
  delete s;
}

Napi::Value ClockBind(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* usage = "clockBind(into: Float64Array)";
  if (info.Length() != 1 || !info[0].IsTypedArray()) return ThrowUsage(env, usage);
  Napi::TypedArray a = info[0].As<Napi::TypedArray>();
  if (a.TypedArrayType() != napi_float64_array || a.ElementLength() < 1) return ThrowUsage(env, usage);
  // Data() moves a small on-heap array's bytes out of the heap once; from then on they stay put.
  Slot* s = new Slot{a.As<Napi::Float64Array>().Data(), nullptr};
  napi_create_reference(env, a, 1, &s->array);
  napi_value fn;
  if (napi_create_function(env, "clockRead", NAPI_AUTO_LENGTH, Read, s, &fn) != napi_ok || napi_add_finalizer(env, fn, s, FreeSlot, nullptr, nullptr) != napi_ok) {
    FreeSlot(env, s, nullptr);
    Napi::Error::New(env, "clockBind: Node-API refused to make the read function").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  return Napi::Value(env, fn);
}

}  // namespace

void InitClock(Napi::Env env, Napi::Object exports) {
  exports.Set("clockBind", Napi::Function::New(env, ClockBind, "clockBind"));
}

}  // namespace dpkit
