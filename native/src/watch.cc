// One uv_poll_t per watched fd, on the loop of the env (thread) that asked:
// the main thread and every worker have their own loop and their own watches.
// An active watch keeps its loop alive, as a listening net.Server does. When a
// worker exits, an async cleanup hook closes its watches before Node closes
// its loop (a loop closed with open handles aborts the process).
#include "watch.h"

#include <errno.h>
#include <unistd.h>
#include <uv.h>

#include <unordered_map>

#include "common.h"

namespace dpkit {
namespace {

/** Reported to the callback when libuv reports an error on the fd (e.g. EBADF). */
constexpr int kError = 16;

struct Watches;

struct Watch {
  uv_poll_t poll;
  Watches* owner;
  Napi::FunctionReference callback;
  napi_async_context context = nullptr;
};

/** This env's watches. Freed when the env has gone and every handle has closed. */
struct Watches {
  napi_env env;
  uv_loop_t* loop;
  std::unordered_map<int, Watch*> byFd;
  int closing = 0;
  napi_async_cleanup_hook_handle teardown = nullptr;
};

void FinishTeardown(Watches* s) {
  napi_remove_async_cleanup_hook(s->teardown);
  delete s;
}

void OnClosed(uv_handle_t* h) {
  Watch* w = static_cast<Watch*>(h->data);
  Watches* s = w->owner;
  delete w;
  if (--s->closing == 0 && s->teardown) FinishTeardown(s);
}

/** Stops and closes one watch; JS references go now (the env is alive), the memory in OnClosed. */
void Stop(Watch* w) {
  uv_poll_stop(&w->poll);
  w->callback.Reset();
  if (w->context) napi_async_destroy(w->owner->env, w->context);
  w->context = nullptr;
  w->owner->closing++;
  uv_close(reinterpret_cast<uv_handle_t*>(&w->poll), OnClosed);
}

void OnTeardown(napi_async_cleanup_hook_handle handle, void* arg) {
  Watches* s = static_cast<Watches*>(arg);
  s->teardown = handle;
  for (auto& [fd, w] : s->byFd) Stop(w);
  s->byFd.clear();
  if (s->closing == 0) FinishTeardown(s);
}

void OnPoll(uv_poll_t* h, int status, int events) {
  Watch* w = static_cast<Watch*>(h->data);
  napi_env env = w->owner->env;
  Napi::HandleScope scope(env);
  int ready = status < 0 ? kError : events & (UV_READABLE | UV_WRITABLE | UV_DISCONNECT);
  napi_value argv[] = {Napi::Number::New(env, ready)};
  napi_value recv;  // napi_make_callback needs an object for `this`
  napi_get_global(env, &recv);
  // The callback may unwatch (even this fd): w is not touched after it returns.
  napi_make_callback(env, w->context, recv, w->callback.Value(), 1, argv, nullptr);
  bool pending = false;
  napi_is_exception_pending(env, &pending);
  if (pending) {
    napi_value e;
    napi_get_and_clear_last_exception(env, &e);
    napi_fatal_exception(env, e);  // process 'uncaughtException', as a throw in any callback
  }
}

Watches* State(Napi::Env env) {
  void* data = nullptr;
  napi_get_instance_data(env, &data);
  return static_cast<Watches*>(data);
}

// watch(fd, events: number, onReady: (events: number) => void): starts or re-arms the fd's watch.
Napi::Value WatchFd(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd;
  uint64_t events;
  if (info.Length() != 3 || !ArgFd(info, 0, &fd) || !ArgSize(info, 1, &events) || events == 0 ||
      (events & ~uint64_t(UV_READABLE | UV_WRITABLE | UV_DISCONNECT)) != 0 || !info[2].IsFunction())
    return ThrowUsage(env, "watch(fd: number, events: READABLE | WRITABLE | HANGUP, onReady: (events: number) => void)");
  Watches* s = State(env);
  Watch* w;
  auto it = s->byFd.find(fd);
  if (it != s->byFd.end()) {
    w = it->second;
  } else {
    w = new Watch();
    w->owner = s;
    int err = uv_poll_init(s->loop, &w->poll, fd);
    if (err != 0) {
      delete w;
      return ThrowSys(env, "uv_poll_init", -err, FdName(fd));
    }
    w->poll.data = w;
    napi_async_init(env, nullptr, Napi::String::New(env, "dpkit:watch"), &w->context);
    s->byFd[fd] = w;
  }
  w->callback = Napi::Persistent(info[2].As<Napi::Function>());
  int err = uv_poll_start(&w->poll, static_cast<int>(events), OnPoll);
  if (err != 0) {
    s->byFd.erase(fd);
    Stop(w);
    return ThrowSys(env, "uv_poll_start", -err, FdName(fd));
  }
  return env.Undefined();
}

/** Stops this thread's watch of fd, if any; true when there was one. */
bool Unwatch(Napi::Env env, int fd) {
  Watches* s = State(env);
  auto it = s->byFd.find(fd);
  if (it == s->byFd.end()) return false;
  Watch* w = it->second;
  s->byFd.erase(it);
  Stop(w);
  return true;
}

// unwatch(fd): true when this thread was watching fd.
Napi::Value UnwatchFd(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd;
  if (info.Length() != 1 || !ArgFd(info, 0, &fd)) return ThrowUsage(env, "unwatch(fd: number)");
  return Napi::Boolean::New(env, Unwatch(env, fd));
}

// close(fd): unwatches it on this thread, then closes it; -1 is a no-op.
Napi::Value CloseFd(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd;
  if (info.Length() != 1 || !ArgFd(info, 0, &fd)) return ThrowUsage(env, "close(fd: number)");
  if (fd == -1) return env.Undefined();
  Unwatch(env, fd);  // libuv must stop polling an fd before it is closed
  // On Linux the fd is released even when close reports EINTR: never retry.
  if (close(fd) != 0 && errno != EINTR) return ThrowSys(env, "close", errno, FdName(fd));
  return env.Undefined();
}

// write(2) of `length` bytes of `bytes` from `offset`, EINTR retried: what a
// capture writer's flush needs. fs.writeSync allocates a context object every
// call, which an lcore writing captures paid for in garbage collections; this
// allocates nothing on the JavaScript heap (its result is a small integer).
Napi::Value WriteFd(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd;
  uint8_t* data;
  size_t size;
  if (info.Length() != 4 || !ArgFd(info, 0, &fd) || !ArgBytes(info, 1, &data, &size) || !info[2].IsNumber() || !info[3].IsNumber())
    return ThrowUsage(env, "writeFd(fd: number, bytes: Uint8Array, offset: number, length: number)");
  double offset = info[2].As<Napi::Number>().DoubleValue();
  double length = info[3].As<Napi::Number>().DoubleValue();
  if (!(offset >= 0 && length >= 0 && offset + length <= static_cast<double>(size)) || offset != static_cast<double>(static_cast<size_t>(offset)) ||
      length != static_cast<double>(static_cast<size_t>(length)))
    return ThrowUsage(env, "writeFd: offset and length must be whole numbers inside bytes");
  ssize_t n;
  do n = write(fd, data + static_cast<size_t>(offset), static_cast<size_t>(length));
  while (n < 0 && errno == EINTR);
  if (n < 0) return ThrowSys(env, "write", errno, FdName(fd));
  return Napi::Number::New(env, static_cast<double>(n));
}

}  // namespace

void InitWatch(Napi::Env env, Napi::Object exports) {
  Watches* s = new Watches();
  s->env = env;
  napi_get_uv_event_loop(env, &s->loop);
  napi_set_instance_data(env, s, nullptr, nullptr);
  napi_add_async_cleanup_hook(env, OnTeardown, s, nullptr);
  exports.Set("watch", Napi::Function::New(env, WatchFd, "watch"));
  exports.Set("unwatch", Napi::Function::New(env, UnwatchFd, "unwatch"));
  exports.Set("close", Napi::Function::New(env, CloseFd, "close"));
  exports.Set("writeFd", Napi::Function::New(env, WriteFd, "writeFd"));
}

}  // namespace dpkit
