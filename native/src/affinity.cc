// Pins the calling thread, as rte_thread_set_affinity does for an lcore.
// An lcore's worker calls this on itself: sched_setaffinity(0, ...) acts on
// the calling thread only, which is what one-thread-per-lcore needs.
#include "affinity.h"

#include <errno.h>
#include <sched.h>
#include <string.h>

namespace dpkit {
namespace {

Napi::Value Fail(Napi::Env env, const char* what, int err) {
  Napi::Error e = Napi::Error::New(env, std::string(what) + ": " + strerror(err));
  e.Set("code", Napi::String::New(env, "EAFFINITY"));
  e.Set("errno", Napi::Number::New(env, err));
  e.ThrowAsJavaScriptException();
  return env.Undefined();
}

// setAffinity(cpus: number[]): pins the calling thread to these CPUs.
Napi::Value SetAffinity(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 1 || !info[0].IsArray()) {
    Napi::TypeError::New(env, "setAffinity(cpus: number[])").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  Napi::Array cpus = info[0].As<Napi::Array>();
  cpu_set_t set;
  CPU_ZERO(&set);
  for (uint32_t i = 0; i < cpus.Length(); i++) {
    Napi::Value v = cpus.Get(i);
    if (!v.IsNumber()) {
      Napi::TypeError::New(env, "setAffinity: cpu ids must be numbers").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    int32_t cpu = v.As<Napi::Number>().Int32Value();
    if (cpu < 0 || cpu >= CPU_SETSIZE) {
      Napi::RangeError::New(env, "setAffinity: cpu " + std::to_string(cpu) + " out of range").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    CPU_SET(cpu, &set);
  }
  if (sched_setaffinity(0, sizeof(set), &set) != 0) return Fail(env, "sched_setaffinity", errno);
  return env.Undefined();
}

// getAffinity(): number[], the CPUs the calling thread may run on.
Napi::Value GetAffinity(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return Fail(env, "sched_getaffinity", errno);
  Napi::Array out = Napi::Array::New(env);
  uint32_t n = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
    if (CPU_ISSET(cpu, &set)) out.Set(n++, Napi::Number::New(env, cpu));
  return out;
}

// currentCpu(): the CPU the calling thread runs on right now.
Napi::Value CurrentCpu(const Napi::CallbackInfo& info) {
  int cpu = sched_getcpu();
  if (cpu < 0) return Fail(info.Env(), "sched_getcpu", errno);
  return Napi::Number::New(info.Env(), cpu);
}

}  // namespace

void InitAffinity(Napi::Env env, Napi::Object exports) {
  exports.Set("setAffinity", Napi::Function::New(env, SetAffinity, "setAffinity"));
  exports.Set("getAffinity", Napi::Function::New(env, GetAffinity, "getAffinity"));
  exports.Set("currentCpu", Napi::Function::New(env, CurrentCpu, "currentCpu"));
}

}  // namespace dpkit
