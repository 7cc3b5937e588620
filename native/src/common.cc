#include "common.h"

#include <string.h>

#include <cmath>

namespace dpkit {

Napi::Value ThrowSys(Napi::Env env, const char* syscall, int err, const std::string& what) {
  const char* name = strerrorname_np(err);
  std::string code = name ? name : "E" + std::to_string(err);
  Napi::Error e = Napi::Error::New(env, std::string(syscall) + " " + what + ": " + strerror(err) + " (" + code + ")");
  e.Set("kind", Napi::String::New(env, "sys"));
  e.Set("code", Napi::String::New(env, code));
  e.Set("errno", Napi::Number::New(env, err));
  e.Set("syscall", Napi::String::New(env, syscall));
  e.Set("what", Napi::String::New(env, what));
  e.ThrowAsJavaScriptException();
  return env.Undefined();
}

Napi::Value ThrowRefused(Napi::Env env, const char* code, const std::string& message) {
  Napi::Error e = Napi::Error::New(env, message);
  e.Set("kind", Napi::String::New(env, "refused"));
  e.Set("code", Napi::String::New(env, code));
  e.ThrowAsJavaScriptException();
  return env.Undefined();
}

Napi::Value ThrowUsage(Napi::Env env, const char* signature) {
  Napi::TypeError::New(env, signature).ThrowAsJavaScriptException();
  return env.Undefined();
}

bool ArgFd(const Napi::CallbackInfo& info, size_t i, int* fd) {
  if (i >= info.Length() || !info[i].IsNumber()) return false;
  double d = info[i].As<Napi::Number>().DoubleValue();
  if (!(d >= INT32_MIN && d <= INT32_MAX) || d != std::floor(d)) return false;
  *fd = static_cast<int>(d);
  return true;
}

bool ArgSize(const Napi::CallbackInfo& info, size_t i, uint64_t* out) {
  if (i >= info.Length() || !info[i].IsNumber()) return false;
  double d = info[i].As<Napi::Number>().DoubleValue();
  if (!(d >= 0 && d <= 9007199254740991.0) || d != std::floor(d)) return false;
  *out = static_cast<uint64_t>(d);
  return true;
}

bool ArgBytes(const Napi::CallbackInfo& info, size_t i, uint8_t** data, size_t* length) {
  if (i >= info.Length() || !info[i].IsTypedArray()) return false;
  // napi_get_typedarray_info, not Napi::ArrayBuffer: the latter refuses a SharedArrayBuffer.
  napi_typedarray_type type;
  size_t count;
  void* p;
  if (napi_get_typedarray_info(info.Env(), info[i], &type, &count, &p, nullptr, nullptr) != napi_ok) return false;
  static const size_t kElementSize[] = {1, 1, 1, 2, 2, 4, 4, 4, 8, 8, 8};
  if (type < 0 || type > napi_biguint64_array) return false;
  *data = static_cast<uint8_t*>(p);
  *length = count * kElementSize[type];
  return true;
}

std::string FdName(int fd) { return "fd " + std::to_string(fd); }

}  // namespace dpkit
