// Shared by every native file: errno -> JS error with context, and argument
// checks. Errors carry `kind`: "sys" (a system call failed: `code` is the errno
// name, `errno`, `syscall`, `path` when there is one) or "refused" (the shim
// declined before any system call: an unsafe mapping request). src/native/
// native.ts turns them into NativeError / MapRefusedError.
#pragma once
#include <napi.h>

#include <cstdint>
#include <string>

namespace dpkit {

/** Throws a "sys" error: `syscall what: strerror (ENAME)`; returns undefined for `return Throw...`. */
Napi::Value ThrowSys(Napi::Env env, const char* syscall, int err, const std::string& what);
/** Throws a "refused" error with code `code` (e.g. "EINVAL") and this message. */
Napi::Value ThrowRefused(Napi::Env env, const char* code, const std::string& message);
/** Throws a TypeError naming the function's signature (a programming error, not a runtime one). */
Napi::Value ThrowUsage(Napi::Env env, const char* signature);

/** info[i] as an fd (any int32: a bad one gets EBADF from the system call); false (nothing thrown) when not an int32. */
bool ArgFd(const Napi::CallbackInfo& info, size_t i, int* fd);
/** info[i] as a non-negative integer below 2^53; false when it is not one. */
bool ArgSize(const Napi::CallbackInfo& info, size_t i, uint64_t* out);

/** info[i]'s bytes when it is a typed array (on an ArrayBuffer or a SharedArrayBuffer). */
bool ArgBytes(const Napi::CallbackInfo& info, size_t i, uint8_t** data, size_t* length);

/** "fd 7" */
std::string FdName(int fd);

}  // namespace dpkit
