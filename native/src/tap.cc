// TAP devices for net_tap, as DPDK's rte_eth_tap: /dev/net/tun queues
// (IFF_TAP | IFF_NO_PI | IFF_MULTI_QUEUE, one fd per queue pair) and the
// per-burst loops Node cannot do: a tap hands over one frame per read() and
// takes one per write(), so the shim walks a whole burst in one call.
//
// The frames live in the heap, in rings laid out as TPACKET_V2 rings
// (af-packet.record.ts: tp_status, tp_len, tp_snaplen, tp_mac; the packet at
// byte 32). tapRx and tapTx play the kernel's part of net_af_packet's rings:
// tapRx fills frames the wasm rx kernel handed back (TP_STATUS_KERNEL) and
// gives them to it (TP_STATUS_USER); tapTx writes frames the tx kernel filled
// (TP_STATUS_SEND_REQUEST) and frees them (TP_STATUS_AVAILABLE). So the mbuf
// work stays in the kernels and their twins, and the shim touches only bytes.
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common.h"

namespace dpkit {
namespace {

constexpr uint32_t kStatusFree = 0;       // TP_STATUS_KERNEL (rx) / TP_STATUS_AVAILABLE (tx)
constexpr uint32_t kStatusFilled = 1;     // TP_STATUS_USER (rx) / TP_STATUS_SEND_REQUEST (tx)
constexpr uint32_t kFrameData = 32;       // AFP_TX_DATA: where a frame's packet starts

uint32_t LoadStatus(const uint8_t* frame) { return __atomic_load_n(reinterpret_cast<const uint32_t*>(frame), __ATOMIC_ACQUIRE); }
void StoreStatus(uint8_t* frame, uint32_t s) { __atomic_store_n(reinterpret_cast<uint32_t*>(frame), s, __ATOMIC_RELEASE); }

/** Ring arguments shared by tapRx and tapTx: the heap, the frame table, where to start, how many at most. */
struct Ring {
  int fd;
  uint8_t* heap;
  size_t heapLen;
  const uint32_t* table;
  uint64_t count, start, max, frameSize;
};

/** Reads (fd, heap: Uint8Array, table, count, start, max, frameSize) and checks every frame lies in the heap. */
bool ArgRing(const Napi::CallbackInfo& info, Ring* r) {
  uint64_t table;
  if (info.Length() != 7 || !ArgFd(info, 0, &r->fd) || !ArgBytes(info, 1, &r->heap, &r->heapLen) || !ArgSize(info, 2, &table) ||
      !ArgSize(info, 3, &r->count) || !ArgSize(info, 4, &r->start) || !ArgSize(info, 5, &r->max) || !ArgSize(info, 6, &r->frameSize))
    return false;
  if (r->count == 0 || r->start >= r->count || table % 4 != 0 || table + r->count * 4 > r->heapLen || r->frameSize <= kFrameData) return false;
  r->table = reinterpret_cast<const uint32_t*>(r->heap + table);
  for (uint64_t i = 0; i < r->count; i++) {
    if (r->table[i] % 4 != 0 || r->table[i] + r->frameSize > r->heapLen) return false;
  }
  return true;
}

const char* kRingUsage = "(fd: number, heap: Uint8Array, table: number, count: number, start: number, max: number, frameSize: number)";

// tapRx(fd, heap, table, count, start, max, frameSize): reads frames into free
// ring frames from `start` on, at most `max`, until the tap has none
// (EAGAIN) or a frame is still the rx kernel's. Returns the frames filled, or
// -errno when the first read failed otherwise (EBADFD: the interface is gone).
Napi::Value TapRx(const Napi::CallbackInfo& info) {
  Ring r;
  if (!ArgRing(info, &r)) return ThrowUsage(info.Env(), (std::string("tapRx") + kRingUsage).c_str());
  uint64_t f = r.start;
  int64_t done = 0;
  const size_t cap = r.frameSize - kFrameData;
  while (static_cast<uint64_t>(done) < r.max) {
    uint8_t* fr = r.heap + r.table[f];
    if (LoadStatus(fr) != kStatusFree) break;
    ssize_t n = read(r.fd, fr + kFrameData, cap);
    if (n < 0) {
      if (done == 0 && errno != EAGAIN) done = -errno;
      break;
    }
    const uint32_t len = static_cast<uint32_t>(n);
    const uint16_t mac = kFrameData;
    memcpy(fr + 4, &len, 4);   // tp_len
    memcpy(fr + 8, &len, 4);   // tp_snaplen
    memcpy(fr + 12, &mac, 2);  // tp_mac
    StoreStatus(fr, kStatusFilled);
    done++;
    f = f + 1 == r.count ? 0 : f + 1;
  }
  return Napi::Number::New(info.Env(), static_cast<double>(done));
}

// tapTx(fd, heap, table, count, start, max, frameSize): writes the frames the
// tx kernel filled, from `start` on, at most `max`, and frees them. A frame
// the tap refuses for want of room (EAGAIN, ENOBUFS) stays for the next call;
// one refused for another reason (the interface down or gone) is dropped, so
// the ring never stalls. Returns the frames freed.
Napi::Value TapTx(const Napi::CallbackInfo& info) {
  Ring r;
  if (!ArgRing(info, &r)) return ThrowUsage(info.Env(), (std::string("tapTx") + kRingUsage).c_str());
  uint64_t f = r.start;
  uint64_t done = 0;
  const uint32_t cap = static_cast<uint32_t>(r.frameSize - kFrameData);
  while (done < r.max) {
    uint8_t* fr = r.heap + r.table[f];
    if (LoadStatus(fr) != kStatusFilled) break;
    uint32_t len;
    memcpy(&len, fr + 4, 4);
    if (len <= cap && write(r.fd, fr + kFrameData, len) < 0 && (errno == EAGAIN || errno == ENOBUFS)) break;
    StoreStatus(fr, kStatusFree);
    done++;
    f = f + 1 == r.count ? 0 : f + 1;
  }
  return Napi::Number::New(info.Env(), static_cast<double>(done));
}

// tapOpen(name): a non-blocking, close-on-exec fd on /dev/net/tun attached to
// tap `name` (created when there is none; a name with %d gets the first free
// number), as one more queue. Returns { fd, name }.
Napi::Value TapOpen(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 1 || !info[0].IsString()) return ThrowUsage(env, "tapOpen(name: string)");
  std::string name = info[0].As<Napi::String>().Utf8Value();
  if (name.empty() || name.size() >= IFNAMSIZ) return ThrowRefused(env, "EINVAL", "iface=" + name + ": an interface name has 1 to " + std::to_string(IFNAMSIZ - 1) + " bytes");
  int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return ThrowSys(env, "open", errno, "/dev/net/tun");
  struct ifreq r;
  memset(&r, 0, sizeof r);
  r.ifr_flags = IFF_TAP | IFF_NO_PI | IFF_MULTI_QUEUE;
  strncpy(r.ifr_name, name.c_str(), IFNAMSIZ - 1);
  if (ioctl(fd, TUNSETIFF, &r) != 0) {
    int err = errno;
    close(fd);
    return ThrowSys(env, "ioctl", err, "TUNSETIFF " + name);
  }
  Napi::Object o = Napi::Object::New(env);
  o.Set("fd", Napi::Number::New(env, fd));
  o.Set("name", Napi::String::New(env, r.ifr_name));
  return o;
}

// tapName(fd): the name of the tap the fd is attached to now (TUNGETIFF), or
// null once the interface is gone (EBADFD).
Napi::Value TapName(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd;
  if (info.Length() != 1 || !ArgFd(info, 0, &fd)) return ThrowUsage(env, "tapName(fd: number)");
  struct ifreq r;
  memset(&r, 0, sizeof r);
  if (ioctl(fd, TUNGETIFF, &r) != 0) {
    if (errno == EBADFD) return env.Null();
    return ThrowSys(env, "ioctl", errno, FdName(fd) + " TUNGETIFF");
  }
  return Napi::String::New(env, r.ifr_name);
}

// ifaceSetUp(name, up: boolean): sets or clears IFF_UP (SIOCSIFFLAGS).
Napi::Value IfaceSetUp(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 2 || !info[0].IsString() || !info[1].IsBoolean()) return ThrowUsage(env, "ifaceSetUp(name: string, up: boolean)");
  std::string name = info[0].As<Napi::String>().Utf8Value();
  if (name.size() >= IFNAMSIZ) return ThrowSys(env, "ioctl", ENODEV, name);
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return ThrowSys(env, "socket", errno, name);
  struct ifreq r;
  memset(&r, 0, sizeof r);
  strncpy(r.ifr_name, name.c_str(), IFNAMSIZ - 1);
  int err = 0;
  if (ioctl(s, SIOCGIFFLAGS, &r) != 0) {
    err = errno;
  } else {
    r.ifr_flags = static_cast<short>(info[1].As<Napi::Boolean>() ? (r.ifr_flags | IFF_UP) : (r.ifr_flags & ~IFF_UP));
    if (ioctl(s, SIOCSIFFLAGS, &r) != 0) err = errno;
  }
  close(s);
  if (err) return ThrowSys(env, "ioctl", err, "SIOCSIFFLAGS " + name);
  return env.Undefined();
}

// ifaceSetMtu(name, mtu): sets the interface's MTU (SIOCSIFMTU, as DPDK's af_packet and tap mtu_set).
Napi::Value IfaceSetMtu(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 2 || !info[0].IsString() || !info[1].IsNumber()) return ThrowUsage(env, "ifaceSetMtu(name: string, mtu: number)");
  std::string name = info[0].As<Napi::String>().Utf8Value();
  int64_t mtu = info[1].As<Napi::Number>().Int64Value();
  if (mtu < 0 || mtu > 0x7fffffff) return ThrowUsage(env, "ifaceSetMtu(name: string, mtu: number)");
  if (name.size() >= IFNAMSIZ) return ThrowSys(env, "ioctl", ENODEV, name);
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return ThrowSys(env, "socket", errno, name);
  struct ifreq r;
  memset(&r, 0, sizeof r);
  strncpy(r.ifr_name, name.c_str(), IFNAMSIZ - 1);
  r.ifr_mtu = static_cast<int>(mtu);
  int err = ioctl(s, SIOCSIFMTU, &r) != 0 ? errno : 0;
  close(s);
  if (err) return ThrowSys(env, "ioctl", err, "SIOCSIFMTU " + name);
  return env.Undefined();
}

}  // namespace

void InitTap(Napi::Env env, Napi::Object exports) {
  exports.Set("tapOpen", Napi::Function::New(env, TapOpen, "tapOpen"));
  exports.Set("tapName", Napi::Function::New(env, TapName, "tapName"));
  exports.Set("tapRx", Napi::Function::New(env, TapRx, "tapRx"));
  exports.Set("tapTx", Napi::Function::New(env, TapTx, "tapTx"));
  exports.Set("ifaceSetUp", Napi::Function::New(env, IfaceSetUp, "ifaceSetUp"));
  exports.Set("ifaceSetMtu", Napi::Function::New(env, IfaceSetMtu, "ifaceSetMtu"));
}

}  // namespace dpkit
