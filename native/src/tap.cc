// TAP devices for net_tap, as DPDK's rte_eth_tap: /dev/net/tun queues
// (IFF_TAP | IFF_NO_PI | IFF_MULTI_QUEUE, one fd per queue pair) and the
// per-burst loops Node cannot do: a tap hands over one frame per read() and
// takes one per write(), so the shim walks a whole burst in one call.
//
// The bytes move once each way, between the tap and the mbufs: tapRxBurst
// readv()s each frame straight into mbufs the queue allocated for the burst
// (the head, and past its data room the spares, chained), and tapTxBurst
// writev()s each packet from its segments. Both read the queue's block
// (tap.record.ts) and the mbuf records with the generated layouts
// (tap-layout.h, mbuf-layout.h); every heap offset they follow is checked
// against the heap's length first, so a stray handle is an error, not a write
// outside the heap.
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common.h"
#include "mbuf-layout.h"
#include "tap-layout.h"

namespace dpkit {
namespace {

using namespace layout;

template <typename T>
T Load(const uint8_t* p) {
  T v;
  memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
void Store(uint8_t* p, T v) {
  memcpy(p, &v, sizeof v);
}

/** The heap, a queue block in it and a burst array: what both burst calls start from. */
struct Call {
  uint8_t* heap;
  size_t len;
  uint8_t* q;
  uint32_t* burst;
  uint64_t n;
};

/** Reads (heap: Uint8Array, q, burst, n) and checks the block and the burst lie in the heap. */
bool ArgCall(const Napi::CallbackInfo& info, Call* c) {
  uint64_t q, burst;
  if (!ArgBytes(info, 0, &c->heap, &c->len) || !ArgSize(info, 1, &q) || !ArgSize(info, 2, &burst) || !ArgSize(info, 3, &c->n)) return false;
  if (q % 8 != 0 || q + TAP_QUEUE_SIZE > c->len || burst % 4 != 0 || burst + c->n * 4 > c->len) return false;
  c->q = c->heap + q;
  c->burst = reinterpret_cast<uint32_t*>(c->heap + burst);
  return true;
}

/** One mbuf segment, checked: its record and its data room (or data) in the heap. */
struct Seg {
  uint8_t* rec;
  uint8_t* data;
  uint32_t room;  // rx: bytes from the data start to the buffer's end; tx: data_len
};

/** Segment `h` of the heap, its room from its data start (rx); false when the handle or its buffer is outside the heap. */
bool RxSeg(const Call& c, uint32_t h, Seg* s) {
  const uint64_t r = static_cast<uint64_t>(h) << MBUF_SHIFT;
  if (h == 0 || r + MBUF_SIZE > c.len) return false;
  s->rec = c.heap + r;
  const uint64_t off = Load<uint16_t>(s->rec + M_DATA_OFF);
  const uint64_t buf = Load<uint32_t>(s->rec + M_BUF_ADDR);
  const uint64_t blen = Load<uint16_t>(s->rec + M_BUF_LEN);
  if (off >= blen || buf + blen > c.len) return false;
  s->data = c.heap + buf + off;
  s->room = static_cast<uint32_t>(blen - off);
  return true;
}

/** Segment `h` as tx writes it: its data (data_len bytes); false when outside the heap. */
bool TxSeg(const Call& c, uint32_t h, Seg* s) {
  const uint64_t r = static_cast<uint64_t>(h) << MBUF_SHIFT;
  if (h == 0 || r + MBUF_SIZE > c.len) return false;
  s->rec = c.heap + r;
  const uint64_t at = static_cast<uint64_t>(Load<uint32_t>(s->rec + M_BUF_ADDR)) + Load<uint16_t>(s->rec + M_DATA_OFF);
  s->room = Load<uint16_t>(s->rec + M_DATA_LEN);
  if (at + s->room > c.len) return false;
  s->data = c.heap + at;
  return true;
}

const char* kRxUsage = "tapRxBurst(heap: Uint8Array, q: number, burst: number, n: number, avail: number)";
const char* kTxUsage = "tapTxBurst(heap: Uint8Array, q: number, burst: number, n: number)";

// tapRxBurst(heap, q, burst, n, avail): reads frames into the `avail` fresh
// mbufs of the block's array, at most `n` (and TAPQ_RX_BURST_MAX), until the
// tap has none (EAGAIN) or the array cannot give one more frame a head (from
// the front) and the block's `spares` segments (from the back). Each frame is
// one readv() over the head and the spares; the spares it filled are chained
// to the head (data_len each, nb_segs, pkt_len, port on the head), back moves
// past them, and the head goes into burst[]. A frame longer than its mbufs
// (the tap's MTU raised past TAP_MAX_FRAME) was cut by the kernel: it is
// dropped and counted in `errors`, its mbufs reused. Writes front, back,
// bytes, errors into the block; with fewer than 1 + spares mbufs it reads
// nothing and sets `waiting` when a frame is there (rx_nombuf). Returns the
// frames received, or -errno when the first read failed otherwise (-EBADFD:
// the interface is gone), or -EFAULT for a handle outside the heap.
Napi::Value TapRxBurst(const Napi::CallbackInfo& info) {
  Call c;
  uint64_t avail;
  if (info.Length() != 5 || !ArgCall(info, &c) || !ArgSize(info, 4, &avail)) return ThrowUsage(info.Env(), kRxUsage);
  const int fd = static_cast<int>(Load<uint32_t>(c.q + TAPQ_FD));
  const uint16_t port = static_cast<uint16_t>(Load<uint32_t>(c.q + TAPQ_PORT));
  const uint64_t arr = Load<uint32_t>(c.q + TAPQ_MBUFS);
  const uint32_t spares = Load<uint32_t>(c.q + TAPQ_SPARES);
  const uint64_t slots = TAPQ_RX_BURST_MAX + TAPQ_MAX_SEGS - 1;
  if (spares >= TAPQ_MAX_SEGS || arr % 4 != 0 || arr + slots * 4 > c.len || avail > slots) return ThrowUsage(info.Env(), kRxUsage);
  const uint32_t* mb = reinterpret_cast<const uint32_t*>(c.heap + arr);
  const uint64_t n = c.n < TAPQ_RX_BURST_MAX ? c.n : TAPQ_RX_BURST_MAX;
  uint64_t front = 0, back = avail, got = 0;
  uint32_t bytes = 0, errors = 0, waiting = 0;
  int64_t result = 0;
  if (avail < 1 + spares && n > 0) {
    struct pollfd p = {fd, POLLIN, 0};
    waiting = poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
  }
  struct iovec iov[TAPQ_MAX_SEGS];
  Seg seg[TAPQ_MAX_SEGS];
  uint32_t handle[TAPQ_MAX_SEGS];
  while (got < n && front + spares < back) {
    uint64_t cap = 0;
    bool ok = true;
    for (uint32_t s = 0; s <= spares && ok; s++) {
      handle[s] = s == 0 ? mb[front] : mb[back - s];
      ok = RxSeg(c, handle[s], &seg[s]);
      iov[s].iov_base = seg[s].data;
      iov[s].iov_len = seg[s].room;
      cap += seg[s].room;
    }
    if (!ok) {
      if (got == 0) result = -EFAULT;
      break;
    }
    const ssize_t r = readv(fd, iov, static_cast<int>(1 + spares));
    if (r <= 0) {
      if (r < 0 && errno != EAGAIN && got == 0) result = -errno;
      break;
    }
    const uint32_t len = static_cast<uint32_t>(r);
    if (len > cap) {
      errors++;
      continue;
    }
    uint32_t left = len, used = 0;
    for (; left > 0; used++) {
      const uint32_t dl = left < seg[used].room ? left : seg[used].room;
      Store<uint16_t>(seg[used].rec + M_DATA_LEN, static_cast<uint16_t>(dl));
      if (used > 0) Store<uint32_t>(seg[used - 1].rec + M_NEXT, handle[used]);
      left -= dl;
    }
    if (used == 0) used = 1;  // an empty frame: the head alone
    Store<uint16_t>(seg[0].rec + M_NB_SEGS, static_cast<uint16_t>(used));
    Store<uint32_t>(seg[0].rec + M_PKT_LEN, len);
    Store<uint16_t>(seg[0].rec + M_PORT, port);
    back -= used - 1;
    c.burst[got++] = mb[front++];
    bytes += len;
  }
  Store<uint32_t>(c.q + TAPQ_FRONT, static_cast<uint32_t>(front));
  Store<uint32_t>(c.q + TAPQ_BACK, static_cast<uint32_t>(back));
  Store<uint32_t>(c.q + TAPQ_BYTES, bytes);
  Store<uint32_t>(c.q + TAPQ_ERRORS, errors);
  Store<uint32_t>(c.q + TAPQ_WAITING, waiting);
  return Napi::Number::New(info.Env(), static_cast<double>(result < 0 ? result : static_cast<int64_t>(got)));
}

// tapTxBurst(heap, q, burst, n): writes the packets burst[0..n) in order, one
// writev() over each one's segments, until the tap has no room (EAGAIN,
// ENOBUFS): the packets from there on were not taken and stay the caller's.
// A packet longer than TAP_MAX_FRAME, with more than TAPQ_TX_MAX_SEGS
// segments or a segment outside the heap, or refused for another reason (the
// interface down or gone) is taken and counted in `errors`, so a dead tap
// never stalls its sender. Writes bytes and errors into the block. Returns
// the packets taken; the caller frees them.
Napi::Value TapTxBurst(const Napi::CallbackInfo& info) {
  Call c;
  if (info.Length() != 4 || !ArgCall(info, &c)) return ThrowUsage(info.Env(), kTxUsage);
  const int fd = static_cast<int>(Load<uint32_t>(c.q + TAPQ_FD));
  struct iovec iov[TAPQ_TX_MAX_SEGS];
  uint32_t bytes = 0, errors = 0;
  uint64_t i = 0;
  for (; i < c.n; i++) {
    uint32_t h = c.burst[i];
    int k = 0;
    uint64_t len = 0;
    bool ok = true;
    for (; h != 0 && ok && k < static_cast<int>(TAPQ_TX_MAX_SEGS); k++) {
      Seg s;
      ok = TxSeg(c, h, &s);
      if (!ok) break;
      iov[k].iov_base = s.data;
      iov[k].iov_len = s.room;
      len += s.room;
      h = Load<uint32_t>(s.rec + M_NEXT);
    }
    if (!ok || h != 0 || len > TAP_MAX_FRAME) {
      errors++;
      continue;
    }
    const ssize_t w = writev(fd, iov, k);
    if (w < 0) {
      if (errno == EAGAIN || errno == ENOBUFS) break;
      errors++;
      continue;
    }
    bytes += static_cast<uint32_t>(w);
  }
  Store<uint32_t>(c.q + TAPQ_BYTES, bytes);
  Store<uint32_t>(c.q + TAPQ_ERRORS, errors);
  return Napi::Number::New(info.Env(), static_cast<double>(i));
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
  exports.Set("tapRxBurst", Napi::Function::New(env, TapRxBurst, "tapRxBurst"));
  exports.Set("tapTxBurst", Napi::Function::New(env, TapTxBurst, "tapTxBurst"));
  exports.Set("ifaceSetUp", Napi::Function::New(env, IfaceSetUp, "ifaceSetUp"));
  exports.Set("ifaceSetMtu", Napi::Function::New(env, IfaceSetMtu, "ifaceSetMtu"));
}

}  // namespace dpkit
