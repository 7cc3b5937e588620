// AF_XDP for net_af_xdp. The shim opens an XDP socket whose UMEM is a range
// of the heap itself (the pages of the wasm memory, registered with
// XDP_UMEM_REG at the memory's base address plus the range's offset), loads
// and attaches the XDP program through libxdp, and puts the socket into the
// program's xsks_map. The four rings are mapped into the heap by mapWindow
// (memory.cc takes the socket's fd and the XDP_PGOFF_* offsets) and walked by
// wasm kernels; on the data path the only calls are the wake-ups the kernel
// asks for (XDP_USE_NEED_WAKEUP): a sendto per tx burst, a recvfrom when rx
// found nothing.
//
// Compiled only when pkg-config finds libxdp (binding.gyp defines
// DPKIT_HAVE_LIBXDP): without it the addon still loads, exports no xdp*
// functions, and net_af_xdp says so in one line.
#include "xdp.h"

#ifdef DPKIT_HAVE_LIBXDP
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <xdp/libxdp.h>

#include <map>
#include <memory>
#include <mutex>

#include "common.h"
#include "memory.h"

#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif
#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL 69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET 70
#endif

namespace dpkit {
namespace {

/** SO_BUSY_POLL's microseconds when busy_budget is on, DPDK's value. */
constexpr int kBusyPollUs = 20;

std::mutex mu;
/** Attached programs by handle: the program and where it is attached, for detaching. */
struct Attached {
  struct xdp_program* prog;
  int progFd;
  int ifindex;
  uint32_t mode;  // XDP_FLAGS_DRV_MODE or XDP_FLAGS_SKB_MODE
};
std::map<int, Attached> programs;
int nextProgram = 1;
/** Sockets whose UMEM is heap memory: the memory's store is held until the socket closes. */
std::map<int, std::shared_ptr<v8::BackingStore>> umems;

int Quiet(enum libxdp_print_level, const char*, va_list) { return 0; }
int QuietBpf(enum libbpf_print_level, const char*, va_list) { return 0; }

/** libbpf's own errors (LIBBPF_ERRNO__*, 4000 and up) have no errno name: thrown as refused, with libbpf's words. */
Napi::Value ThrowBpf(Napi::Env env, const char* call, int err, const std::string& what) {
  if (err < 4000) return ThrowSys(env, call, err, what);
  char buf[128];
  libbpf_strerror(err, buf, sizeof buf);
  return ThrowRefused(env, "EINVAL", std::string(call) + " " + what + ": " + buf);
}

Napi::Value Fail(Napi::Env env, int fd, const char* call, int err, const std::string& what) {
  close(fd);
  return ThrowSys(env, call, err, what);
}

uint32_t Get(const Napi::Object& o, const char* key) { return o.Get(key).As<Napi::Number>().Uint32Value(); }

Napi::Object Offsets(Napi::Env env, const struct xdp_ring_offset& r) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("producer", Napi::Number::New(env, static_cast<double>(r.producer)));
  o.Set("consumer", Napi::Number::New(env, static_cast<double>(r.consumer)));
  o.Set("flags", Napi::Number::New(env, static_cast<double>(r.flags)));
  o.Set("desc", Napi::Number::New(env, static_cast<double>(r.desc)));
  return o;
}

// xdpProgramAttach(ifindex, file: string ('' for libxdp's xsk_def_xdp_prog.o), entries, frags: boolean):
//   { handle, mapFd, mode: 'native' | 'skb' }. The program is attached in native
//   mode, or generic (skb) mode when the driver has no XDP of its own; never over
//   another program (EBUSY).
Napi::Value XdpProgramAttach(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint64_t ifindex, entries;
  if (info.Length() != 4 || !ArgSize(info, 0, &ifindex) || !info[1].IsString() || !ArgSize(info, 2, &entries) || !info[3].IsBoolean())
    return ThrowUsage(env, "xdpProgramAttach(ifindex: number, file: string, entries: number, frags: boolean)");
  bool frags = info[3].As<Napi::Boolean>();
  std::string file = info[1].As<Napi::String>().Utf8Value();
  libxdp_set_print(Quiet);
  libbpf_set_print(QuietBpf);
  struct xdp_program* prog = file.empty() ? xdp_program__find_file("xsk_def_xdp_prog.o", nullptr, nullptr)
                                          : xdp_program__open_file(file.c_str(), nullptr, nullptr);
  long err = libxdp_get_error(prog);
  if (err) return ThrowBpf(env, "xdp_program__open_file", static_cast<int>(-err), file.empty() ? "xsk_def_xdp_prog.o" : file);
  struct bpf_map* map = bpf_object__find_map_by_name(xdp_program__bpf_obj(prog), "xsks_map");
  if (!map) {
    xdp_program__close(prog);
    return ThrowRefused(env, "ENOENT", "xsks_map " + file + ": the object has no map of that name (the XSKMAP the program redirects to)");
  }
  if (bpf_map__type(map) != BPF_MAP_TYPE_XSKMAP) {
    xdp_program__close(prog);
    return ThrowRefused(env, "EINVAL", "xsks_map " + file + ": not a BPF_MAP_TYPE_XSKMAP");
  }
  // The default program's map is sized here, before the load: one slot per queue id.
  if (file.empty() && bpf_map__max_entries(map) < entries) bpf_map__set_max_entries(map, static_cast<uint32_t>(entries));
  // libxdp opens and finds the program; libbpf loads and attaches it. (libxdp 1.3's own attach
  // and detach leave a program fd open per use, which a port that comes and goes must not.)
  struct bpf_object* obj = xdp_program__bpf_obj(prog);
  struct bpf_program* bp = bpf_object__find_program_by_name(obj, xdp_program__name(prog));
  // Multi-buffer packets reach only a program that says it handles them (SEC("xdp.frags")).
  if (bp && frags) bpf_program__set_flags(bp, bpf_program__flags(bp) | BPF_F_XDP_HAS_FRAGS);
  int rc = bp ? bpf_object__load(obj) : -ENOENT;
  int progFd = rc ? -1 : bpf_program__fd(bp);
  if (rc || progFd < 0) {
    xdp_program__close(prog);
    return ThrowBpf(env, "bpf_object__load", rc ? -rc : EBADF, file.empty() ? "xsk_def_xdp_prog.o" : file);
  }
  uint32_t mode = XDP_FLAGS_DRV_MODE;
  rc = bpf_xdp_attach(static_cast<int>(ifindex), progFd, XDP_FLAGS_UPDATE_IF_NOEXIST | mode, nullptr);
  if (rc == -EOPNOTSUPP) rc = bpf_xdp_attach(static_cast<int>(ifindex), progFd, XDP_FLAGS_UPDATE_IF_NOEXIST | (mode = XDP_FLAGS_SKB_MODE), nullptr);
  if (rc) {
    xdp_program__close(prog);
    std::string what = (file.empty() ? std::string("xsk_def_xdp_prog.o") : file) + " on ifindex " + std::to_string(ifindex);
    if (rc == -EBUSY || rc == -EEXIST) return ThrowRefused(env, "EBUSY", "bpf_xdp_attach " + what + ": the interface has an XDP program already (detach it: ip link set dev IFACE xdp off)");
    return ThrowSys(env, "bpf_xdp_attach", -rc, what);
  }
  int mapFd = bpf_map__fd(map);
  std::lock_guard<std::mutex> lock(mu);
  int handle = nextProgram++;
  programs[handle] = Attached{prog, progFd, static_cast<int>(ifindex), mode};
  Napi::Object o = Napi::Object::New(env);
  o.Set("handle", Napi::Number::New(env, handle));
  o.Set("mapFd", Napi::Number::New(env, mapFd));
  o.Set("mode", Napi::String::New(env, mode == XDP_FLAGS_DRV_MODE ? "native" : "skb"));
  return o;
}

// xdpProgramDetach(handle): detaches the program from its interface (gone already is fine) and frees it.
Napi::Value XdpProgramDetach(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint64_t handle;
  if (info.Length() != 1 || !ArgSize(info, 0, &handle)) return ThrowUsage(env, "xdpProgramDetach(handle: number)");
  Attached a;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = programs.find(static_cast<int>(handle));
    if (it == programs.end()) return ThrowRefused(env, "EINVAL", "xdpProgramDetach: no program " + std::to_string(handle));
    a = it->second;
    programs.erase(it);
  }
  // Only if it is still ours: old_prog_fd makes the kernel leave another program alone.
  struct bpf_xdp_attach_opts opts;
  memset(&opts, 0, sizeof opts);
  opts.sz = sizeof opts;
  opts.old_prog_fd = a.progFd;
  int rc = bpf_xdp_detach(a.ifindex, a.mode, &opts);
  xdp_program__close(a.prog);
  // ENODEV / ENOENT: the interface, and the program with it, has gone; EEXIST: another program replaced ours.
  if (rc && rc != -ENODEV && rc != -ENOENT && rc != -EINVAL && rc != -EEXIST) return ThrowSys(env, "bpf_xdp_detach", -rc, "ifindex " + std::to_string(a.ifindex));
  return env.Undefined();
}

// xdpSocketOpen(buffer, { ifindex, queue, mapFd, umemOffset, umemLength, chunkSize,
//   rxSize, txSize, fillSize, compSize, sharedFd (-1: own UMEM), busyBudget, sg }):
//   { fd, zeroCopy, rx, tx, fill, comp } with each ring's mmap offsets.
Napi::Value XdpSocketOpen(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::shared_ptr<v8::BackingStore> store = MemoryStore(info, 0);
  if (info.Length() != 2 || !store || !info[1].IsObject()) return ThrowUsage(env, "xdpSocketOpen(buffer: SharedArrayBuffer, opts: object)");
  Napi::Object o = info[1].As<Napi::Object>();
  uint32_t ifindex = Get(o, "ifindex"), queue = Get(o, "queue"), chunk = Get(o, "chunkSize");
  uint32_t rxSize = Get(o, "rxSize"), txSize = Get(o, "txSize"), fillSize = Get(o, "fillSize"), compSize = Get(o, "compSize");
  uint32_t busy = Get(o, "busyBudget");
  bool sg = o.Get("sg").ToBoolean();
  int mapFd = o.Get("mapFd").As<Napi::Number>().Int32Value();
  int shared = o.Get("sharedFd").As<Napi::Number>().Int32Value();
  uint64_t off = static_cast<uint64_t>(o.Get("umemOffset").As<Napi::Number>().DoubleValue());
  uint64_t len = static_cast<uint64_t>(o.Get("umemLength").As<Napi::Number>().DoubleValue());
  std::string what = "queue " + std::to_string(queue) + " of ifindex " + std::to_string(ifindex);
  if (off + len > store->ByteLength() || off % sysconf(_SC_PAGESIZE) != 0)
    return ThrowRefused(env, "EINVAL", "xdpSocketOpen: UMEM [" + std::to_string(off) + ", +" + std::to_string(len) + ") is not a page-aligned range of the memory");
  int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
  if (fd < 0) return ThrowSys(env, "socket", errno, "AF_XDP " + what);
  if (shared < 0) {
    struct xdp_umem_reg reg;
    memset(&reg, 0, sizeof reg);
    reg.addr = reinterpret_cast<uint64_t>(store->Data()) + off;
    reg.len = len;
    reg.chunk_size = chunk;
    reg.headroom = 0;
    // Unaligned chunks: a chunk is an mbuf's buffer, at the pool's stride, not a power of two.
    reg.flags = XDP_UMEM_UNALIGNED_CHUNK_FLAG;
    if (setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof reg) != 0) return Fail(env, fd, "setsockopt", errno, what + " XDP_UMEM_REG");
  }
  // A socket sharing another's UMEM still has its own fill and completion rings (another queue id).
  if (setsockopt(fd, SOL_XDP, XDP_UMEM_FILL_RING, &fillSize, sizeof fillSize) != 0) return Fail(env, fd, "setsockopt", errno, what + " XDP_UMEM_FILL_RING");
  if (setsockopt(fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &compSize, sizeof compSize) != 0) return Fail(env, fd, "setsockopt", errno, what + " XDP_UMEM_COMPLETION_RING");
  if (setsockopt(fd, SOL_XDP, XDP_RX_RING, &rxSize, sizeof rxSize) != 0) return Fail(env, fd, "setsockopt", errno, what + " XDP_RX_RING");
  if (setsockopt(fd, SOL_XDP, XDP_TX_RING, &txSize, sizeof txSize) != 0) return Fail(env, fd, "setsockopt", errno, what + " XDP_TX_RING");
  struct xdp_mmap_offsets mo;
  socklen_t olen = sizeof mo;
  if (getsockopt(fd, SOL_XDP, XDP_MMAP_OFFSETS, &mo, &olen) != 0) return Fail(env, fd, "getsockopt", errno, what + " XDP_MMAP_OFFSETS");
  struct sockaddr_xdp sxdp;
  memset(&sxdp, 0, sizeof sxdp);
  sxdp.sxdp_family = AF_XDP;
  sxdp.sxdp_ifindex = ifindex;
  sxdp.sxdp_queue_id = queue;
  sxdp.sxdp_flags = XDP_USE_NEED_WAKEUP | (sg ? XDP_USE_SG : 0);
  if (shared >= 0) {
    sxdp.sxdp_flags |= XDP_SHARED_UMEM;
    sxdp.sxdp_shared_umem_fd = static_cast<uint32_t>(shared);
  }
  if (bind(fd, reinterpret_cast<struct sockaddr*>(&sxdp), sizeof sxdp) != 0) return Fail(env, fd, "bind", errno, what);
  if (busy > 0) {
    int v = 1;
    int us = kBusyPollUs;
    int b = static_cast<int>(busy);
    if (setsockopt(fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, &v, sizeof v) != 0 || setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &us, sizeof us) != 0 ||
        setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, &b, sizeof b) != 0)
      return Fail(env, fd, "setsockopt", errno, what + " SO_BUSY_POLL_BUDGET");
  }
  if (bpf_map_update_elem(mapFd, &queue, &fd, BPF_ANY) != 0) return Fail(env, fd, "bpf_map_update_elem", errno, what + " xsks_map");
  struct xdp_options opts;
  socklen_t optlen = sizeof opts;
  bool zc = getsockopt(fd, SOL_XDP, XDP_OPTIONS, &opts, &optlen) == 0 && (opts.flags & XDP_OPTIONS_ZEROCOPY) != 0;
  {
    std::lock_guard<std::mutex> lock(mu);
    umems[fd] = store;
  }
  Napi::Object r = Napi::Object::New(env);
  r.Set("fd", Napi::Number::New(env, fd));
  r.Set("zeroCopy", Napi::Boolean::New(env, zc));
  r.Set("rx", Offsets(env, mo.rx));
  r.Set("tx", Offsets(env, mo.tx));
  r.Set("fill", Offsets(env, mo.fr));
  r.Set("comp", Offsets(env, mo.cr));
  return r;
}

// xdpSocketClose(fd, mapFd, queue): takes the socket out of the map (when the map is still there), closes it, lets the memory go.
Napi::Value XdpSocketClose(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd, mapFd;
  uint64_t queue;
  if (info.Length() != 3 || !ArgFd(info, 0, &fd) || !ArgFd(info, 1, &mapFd) || !ArgSize(info, 2, &queue))
    return ThrowUsage(env, "xdpSocketClose(fd: number, mapFd: number, queue: number)");
  uint32_t q = static_cast<uint32_t>(queue);
  if (mapFd >= 0) bpf_map_delete_elem(mapFd, &q);
  close(fd);
  std::lock_guard<std::mutex> lock(mu);
  umems.erase(fd);
  return env.Undefined();
}

// xdpWakeRx(fd): recvfrom(MSG_DONTWAIT), which lets the kernel fill the rx ring. Returns 0 or the errno (data path: never throws).
Napi::Value XdpWakeRx(const Napi::CallbackInfo& info) {
  int fd;
  if (info.Length() != 1 || !ArgFd(info, 0, &fd)) return ThrowUsage(info.Env(), "xdpWakeRx(fd: number)");
  ssize_t n = recvfrom(fd, nullptr, 0, MSG_DONTWAIT, nullptr, nullptr);
  return Napi::Number::New(info.Env(), n < 0 && errno != EAGAIN ? errno : 0);
}

// xdpStatistics(fd): struct xdp_statistics as { rxDropped, rxInvalidDescs, txInvalidDescs, rxRingFull, rxFillRingEmpty, txRingEmpty }.
Napi::Value XdpStatistics(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd;
  if (info.Length() != 1 || !ArgFd(info, 0, &fd)) return ThrowUsage(env, "xdpStatistics(fd: number)");
  struct {
    uint64_t rx_dropped, rx_invalid_descs, tx_invalid_descs, rx_ring_full, rx_fill_ring_empty_descs, tx_ring_empty_descs;
  } s;
  memset(&s, 0, sizeof s);
  socklen_t len = sizeof s;
  if (getsockopt(fd, SOL_XDP, XDP_STATISTICS, &s, &len) != 0) return ThrowSys(env, "getsockopt", errno, FdName(fd) + " XDP_STATISTICS");
  Napi::Object o = Napi::Object::New(env);
  o.Set("rxDropped", Napi::Number::New(env, static_cast<double>(s.rx_dropped)));
  o.Set("rxInvalidDescs", Napi::Number::New(env, static_cast<double>(s.rx_invalid_descs)));
  o.Set("txInvalidDescs", Napi::Number::New(env, static_cast<double>(s.tx_invalid_descs)));
  o.Set("rxRingFull", Napi::Number::New(env, static_cast<double>(s.rx_ring_full)));
  o.Set("rxFillRingEmpty", Napi::Number::New(env, static_cast<double>(s.rx_fill_ring_empty_descs)));
  o.Set("txRingEmpty", Napi::Number::New(env, static_cast<double>(s.tx_ring_empty_descs)));
  return o;
}

}  // namespace

void InitXdp(Napi::Env env, Napi::Object exports) {
  exports.Set("xdpProgramAttach", Napi::Function::New(env, XdpProgramAttach, "xdpProgramAttach"));
  exports.Set("xdpProgramDetach", Napi::Function::New(env, XdpProgramDetach, "xdpProgramDetach"));
  exports.Set("xdpSocketOpen", Napi::Function::New(env, XdpSocketOpen, "xdpSocketOpen"));
  exports.Set("xdpSocketClose", Napi::Function::New(env, XdpSocketClose, "xdpSocketClose"));
  exports.Set("xdpWakeRx", Napi::Function::New(env, XdpWakeRx, "xdpWakeRx"));
  exports.Set("xdpStatistics", Napi::Function::New(env, XdpStatistics, "xdpStatistics"));
}

}  // namespace dpkit

#else

namespace dpkit {
// Built without libxdp: net_af_xdp finds no xdp* function and says why.
void InitXdp(Napi::Env, Napi::Object) {}
}  // namespace dpkit

#endif
