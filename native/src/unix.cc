// Every socket made here is non-blocking and close-on-exec, and so is every
// fd received. Sends and receives pass MSG_DONTWAIT as well, so an fd that
// came from elsewhere still never blocks the event loop.
#include "unix.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common.h"

namespace dpkit {
namespace {

/** Linux's SCM_MAX_FD: the most fds one message carries (vhost-user needs 8). */
constexpr size_t kMaxFds = 253;

bool ArgType(const Napi::CallbackInfo& info, size_t i, int* type) {
  if (i >= info.Length() || !info[i].IsString()) return false;
  std::string s = info[i].As<Napi::String>().Utf8Value();
  if (s == "stream") *type = SOCK_STREAM;
  else if (s == "seqpacket") *type = SOCK_SEQPACKET;
  else return false;
  return true;
}

/** A path, or a Linux abstract name when it starts with NUL; `shown` is how errors print it ("@name"). */
struct Address {
  sockaddr_un sun{};
  socklen_t len = 0;
  std::string shown;
  int err = 0;  // ENAMETOOLONG or EINVAL when the name cannot be an address
};

Address ArgAddress(const Napi::CallbackInfo& info, size_t i) {
  Address a;
  std::string path = info[i].As<Napi::String>().Utf8Value();
  bool abstract = !path.empty() && path[0] == '\0';
  a.shown = abstract ? "@" + path.substr(1) : path;
  a.sun.sun_family = AF_UNIX;
  // A path needs its terminating NUL inside sun_path; an abstract name does not.
  size_t room = sizeof a.sun.sun_path - (abstract ? 0 : 1);
  if (path.empty() || (!abstract && path.find('\0') != std::string::npos)) a.err = EINVAL;
  else if (path.size() > room) a.err = ENAMETOOLONG;
  else {
    memcpy(a.sun.sun_path, path.data(), path.size());
    a.len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size() + (abstract ? 0 : 1));
  }
  return a;
}

// unixListen(path: string, type: "stream" | "seqpacket", backlog: number): fd
Napi::Value UnixListen(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int type;
  uint64_t backlog;
  if (info.Length() != 3 || !info[0].IsString() || !ArgType(info, 1, &type) || !ArgSize(info, 2, &backlog))
    return ThrowUsage(env, "unixListen(path: string, type: 'stream' | 'seqpacket', backlog: number)");
  Address a = ArgAddress(info, 0);
  if (a.err) return ThrowSys(env, "bind", a.err, a.shown);
  int fd = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return ThrowSys(env, "socket", errno, a.shown);
  const char* failed = nullptr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a.sun), a.len) != 0) failed = "bind";
  else if (listen(fd, static_cast<int>(backlog > 4096 ? 4096 : backlog)) != 0) failed = "listen";
  if (failed) {
    int err = errno;
    close(fd);
    return ThrowSys(env, failed, err, a.shown);
  }
  return Napi::Number::New(env, fd);
}

// unixAccept(fd): the connection's fd, or -1 when none is pending.
Napi::Value UnixAccept(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd;
  if (info.Length() != 1 || !ArgFd(info, 0, &fd)) return ThrowUsage(env, "unixAccept(fd: number)");
  for (;;) {
    int c = accept4(fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (c >= 0) return Napi::Number::New(env, c);
    if (errno == EINTR) continue;
    // ECONNABORTED: the peer left before we accepted; nothing to hand out.
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ECONNABORTED) return Napi::Number::New(env, -1);
    return ThrowSys(env, "accept", errno, FdName(fd));
  }
}

// unixConnect(path: string, type): fd, connected (AF_UNIX connects at once or fails).
Napi::Value UnixConnect(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int type;
  if (info.Length() != 2 || !info[0].IsString() || !ArgType(info, 1, &type))
    return ThrowUsage(env, "unixConnect(path: string, type: 'stream' | 'seqpacket')");
  Address a = ArgAddress(info, 0);
  if (a.err) return ThrowSys(env, "connect", a.err, a.shown);
  int fd = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return ThrowSys(env, "socket", errno, a.shown);
  int r;
  do r = connect(fd, reinterpret_cast<sockaddr*>(&a.sun), a.len);
  while (r != 0 && errno == EINTR);
  if (r != 0) {
    // EAGAIN here means the listener's backlog is full: retry later.
    int err = errno;
    close(fd);
    return ThrowSys(env, "connect", err, a.shown);
  }
  return Napi::Number::New(env, fd);
}

// sendMsg(fd, bytes: Uint8Array, fds: number[]): bytes sent, or -1 when the socket is full.
Napi::Value SendMsg(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd;
  uint8_t* data;
  size_t length;
  if (info.Length() != 3 || !ArgFd(info, 0, &fd) || !ArgBytes(info, 1, &data, &length) || !info[2].IsArray())
    return ThrowUsage(env, "sendMsg(fd: number, bytes: Uint8Array, fds: number[])");
  Napi::Array fdArray = info[2].As<Napi::Array>();
  if (fdArray.Length() > kMaxFds) return ThrowSys(env, "sendmsg", EINVAL, FdName(fd) + ": " + std::to_string(fdArray.Length()) + " fds, at most 253 per message");
  int fds[kMaxFds];
  for (uint32_t i = 0; i < fdArray.Length(); i++) {
    Napi::Value v = fdArray.Get(i);
    double d = v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : -1;
    if (!(d >= 0 && d <= INT32_MAX) || static_cast<int>(d) != d) return ThrowUsage(env, "sendMsg: fds must be non-negative integers");
    fds[i] = static_cast<int>(d);
  }
  iovec iov{data, length};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof fds)];
  if (fdArray.Length() > 0) {
    size_t n = fdArray.Length() * sizeof(int);
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(n);
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(n);
    memcpy(CMSG_DATA(c), fds, n);
  }
  for (;;) {
    ssize_t n = sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n >= 0) return Napi::Number::New(env, static_cast<double>(n));
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Napi::Number::New(env, -1);
    return ThrowSys(env, "sendmsg", errno, FdName(fd));
  }
}

// recvMsg(fd, into: Uint8Array): { bytes, fds, truncated, fdsTruncated }, or null when nothing is pending.
Napi::Value RecvMsg(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd;
  uint8_t* data;
  size_t length;
  if (info.Length() != 2 || !ArgFd(info, 0, &fd) || !ArgBytes(info, 1, &data, &length))
    return ThrowUsage(env, "recvMsg(fd: number, into: Uint8Array)");
  iovec iov{data, length};
  alignas(cmsghdr) char control[CMSG_SPACE(kMaxFds * sizeof(int))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do n = recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return env.Null();
    return ThrowSys(env, "recvmsg", errno, FdName(fd));
  }
  Napi::Array fds = Napi::Array::New(env);
  uint32_t nfds = 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t k = 0; k < count; k++) {
      int rfd;
      memcpy(&rfd, CMSG_DATA(c) + k * sizeof(int), sizeof rfd);
      fds.Set(nfds++, Napi::Number::New(env, rfd));
    }
  }
  Napi::Object out = Napi::Object::New(env);
  out.Set("bytes", Napi::Number::New(env, static_cast<double>(n)));
  out.Set("fds", fds);
  out.Set("truncated", Napi::Boolean::New(env, (msg.msg_flags & MSG_TRUNC) != 0));
  out.Set("fdsTruncated", Napi::Boolean::New(env, (msg.msg_flags & MSG_CTRUNC) != 0));
  return out;
}

}  // namespace

void InitUnix(Napi::Env env, Napi::Object exports) {
  exports.Set("unixListen", Napi::Function::New(env, UnixListen, "unixListen"));
  exports.Set("unixAccept", Napi::Function::New(env, UnixAccept, "unixAccept"));
  exports.Set("unixConnect", Napi::Function::New(env, UnixConnect, "unixConnect"));
  exports.Set("sendMsg", Napi::Function::New(env, SendMsg, "sendMsg"));
  exports.Set("recvMsg", Napi::Function::New(env, RecvMsg, "recvMsg"));
}

}  // namespace dpkit
