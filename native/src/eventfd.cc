// Non-blocking, close-on-exec eventfds: read and write never wait.
#include "eventfd.h"

#include <errno.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common.h"

namespace dpkit {
namespace {

// eventfdCreate(initial: number, semaphore: boolean): fd
Napi::Value EventfdCreate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint64_t initial;
  if (info.Length() != 2 || !ArgSize(info, 0, &initial) || initial > UINT32_MAX || !info[1].IsBoolean())
    return ThrowUsage(env, "eventfdCreate(initial: number (u32), semaphore: boolean)");
  int flags = EFD_NONBLOCK | EFD_CLOEXEC | (info[1].As<Napi::Boolean>() ? EFD_SEMAPHORE : 0);
  int fd = eventfd(static_cast<unsigned>(initial), flags);
  if (fd < 0) return ThrowSys(env, "eventfd", errno, "initial " + std::to_string(initial));
  return Napi::Number::New(env, fd);
}

// eventfdRead(fd): the counter (then reset; 1 in semaphore mode), or 0 when it is 0.
Napi::Value EventfdRead(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd;
  if (info.Length() != 1 || !ArgFd(info, 0, &fd)) return ThrowUsage(env, "eventfdRead(fd: number)");
  uint64_t value;
  ssize_t n;
  do n = read(fd, &value, sizeof value);
  while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Napi::Number::New(env, 0);
  if (n < 0) return ThrowSys(env, "read", errno, FdName(fd));
  if (n != sizeof value) return ThrowSys(env, "read", EINVAL, FdName(fd) + ": not an eventfd");
  return Napi::Number::New(env, static_cast<double>(value));
}

// eventfdWrite(fd, add: number): true, or false when the counter would overflow.
Napi::Value EventfdWrite(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd;
  uint64_t add;
  if (info.Length() != 2 || !ArgFd(info, 0, &fd) || !ArgSize(info, 1, &add) || add == 0)
    return ThrowUsage(env, "eventfdWrite(fd: number, add: number (>= 1))");
  ssize_t n;
  do n = write(fd, &add, sizeof add);
  while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Napi::Boolean::New(env, false);
  if (n < 0) return ThrowSys(env, "write", errno, FdName(fd));
  if (n != sizeof add) return ThrowSys(env, "write", EINVAL, FdName(fd) + ": not an eventfd");
  return Napi::Boolean::New(env, true);
}

}  // namespace

void InitEventfd(Napi::Env env, Napi::Object exports) {
  exports.Set("eventfdCreate", Napi::Function::New(env, EventfdCreate, "eventfdCreate"));
  exports.Set("eventfdRead", Napi::Function::New(env, EventfdRead, "eventfdRead"));
  exports.Set("eventfdWrite", Napi::Function::New(env, EventfdWrite, "eventfdWrite"));
}

}  // namespace dpkit
