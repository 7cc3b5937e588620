// AF_PACKET with TPACKET_V2 rx and tx rings, as DPDK's net_af_packet. The
// shim only opens and configures the socket: the rings are mapped into the
// heap by mapWindow (memory.cc takes a packet socket's fd as any other) and
// walked by wasm kernels; the one system call on the data path is the tx
// kick, a sendto per burst.
#include "netif.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common.h"

namespace dpkit {
namespace {

/** An interface's facts by name or index, through a throwaway datagram socket; false with errno set when there is none. */
bool IfaceQuery(const std::string& name, unsigned index, struct ifreq* flags, int* mtu, uint8_t mac[6], unsigned* ifindex) {
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return false;
  struct ifreq r;
  memset(&r, 0, sizeof r);
  bool ok = true;
  if (index != 0) {
    r.ifr_ifindex = static_cast<int>(index);
    ok = ioctl(s, SIOCGIFNAME, &r) == 0;
  } else {
    strncpy(r.ifr_name, name.c_str(), IFNAMSIZ - 1);
  }
  ok = ok && ioctl(s, SIOCGIFINDEX, &r) == 0;
  if (ok) *ifindex = static_cast<unsigned>(r.ifr_ifindex);
  ok = ok && ioctl(s, SIOCGIFFLAGS, &r) == 0;
  if (ok) *flags = r;
  ok = ok && ioctl(s, SIOCGIFMTU, &r) == 0;
  if (ok) *mtu = r.ifr_mtu;
  ok = ok && ioctl(s, SIOCGIFHWADDR, &r) == 0;
  if (ok) memcpy(mac, r.ifr_hwaddr.sa_data, 6);
  int err = errno;
  close(s);
  errno = err;
  return ok;
}

// ifaceInfo(nameOrIndex: string | number): { name, ifindex, flags, mtu, mac } | null when there is no such interface.
Napi::Value IfaceInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint64_t index = 0;
  std::string name;
  if (info.Length() != 1 || !(info[0].IsString() || ArgSize(info, 0, &index)))
    return ThrowUsage(env, "ifaceInfo(nameOrIndex: string | number)");
  if (info[0].IsString()) name = info[0].As<Napi::String>().Utf8Value();
  if (name.size() >= IFNAMSIZ) return env.Null();
  struct ifreq r;
  int mtu = 0;
  uint8_t mac[6] = {0};
  unsigned ifindex = 0;
  if (!IfaceQuery(name, static_cast<unsigned>(index), &r, &mtu, mac, &ifindex)) {
    if (errno == ENODEV || errno == ENXIO) return env.Null();
    return ThrowSys(env, "ioctl", errno, name.empty() ? "ifindex " + std::to_string(index) : name);
  }
  Napi::Object o = Napi::Object::New(env);
  o.Set("name", Napi::String::New(env, r.ifr_name));
  o.Set("ifindex", Napi::Number::New(env, ifindex));
  o.Set("flags", Napi::Number::New(env, static_cast<uint16_t>(r.ifr_flags)));
  o.Set("mtu", Napi::Number::New(env, mtu));
  Napi::Uint8Array m = Napi::Uint8Array::New(env, 6);
  memcpy(m.Data(), mac, 6);
  o.Set("mac", m);
  return o;
}

Napi::Value Fail(Napi::Env env, int fd, const char* call, int err, const std::string& what) {
  close(fd);
  return ThrowSys(env, call, err, what);
}

// packetOpen(iface, blockSize, blockCount, frameSize, qdiscBypass: boolean, fanout: number (PACKET_FANOUT's
//            argument, group id | mode and flags << 16; 0: none)
//            [, receiveOutgoing: boolean]):
//   { fd, ifindex, mapLength }: a TPACKET_V2 socket bound to iface with an rx and a tx
//   ring of blockCount blocks each, mapped (by the caller) as one range, rx first.
Napi::Value PacketOpen(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint64_t blockSize, blockCount, frameSize, fanout;
  if (info.Length() < 6 || info.Length() > 7 || (info.Length() == 7 && !info[6].IsBoolean()) || !info[0].IsString() || !ArgSize(info, 1, &blockSize) || !ArgSize(info, 2, &blockCount) ||
      !ArgSize(info, 3, &frameSize) || !info[4].IsBoolean() || !ArgSize(info, 5, &fanout) || fanout > 0xffffffffu)
    return ThrowUsage(env, "packetOpen(iface: string, blockSize: number, blockCount: number, frameSize: number, qdiscBypass: boolean, fanout: number[, receiveOutgoing: boolean])");
  bool receiveOutgoing = info.Length() == 7 && info[6].As<Napi::Boolean>();
  std::string iface = info[0].As<Napi::String>().Utf8Value();
  unsigned ifindex = iface.size() < IFNAMSIZ ? if_nametoindex(iface.c_str()) : 0;
  if (ifindex == 0) return ThrowSys(env, "if_nametoindex", ENODEV, iface);
  int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_ALL));
  if (fd < 0) return ThrowSys(env, "socket", errno, "AF_PACKET " + iface);
  int v = TPACKET_V2;
  if (setsockopt(fd, SOL_PACKET, PACKET_VERSION, &v, sizeof v) != 0) return Fail(env, fd, "setsockopt", errno, iface + " PACKET_VERSION");
  // A forwarder must not receive what the host itself sends out of the interface
  // (a capture, net_pcap's rx_iface, asks to: libpcap's default direction is in and out).
  v = 1;
  if (!receiveOutgoing && setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &v, sizeof v) != 0)
    return Fail(env, fd, "setsockopt", errno, iface + " PACKET_IGNORE_OUTGOING");
  if (info[4].As<Napi::Boolean>() && setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &v, sizeof v) != 0)
    return Fail(env, fd, "setsockopt", errno, iface + " PACKET_QDISC_BYPASS");
  struct tpacket_req req;
  req.tp_block_size = static_cast<unsigned>(blockSize);
  req.tp_block_nr = static_cast<unsigned>(blockCount);
  req.tp_frame_size = static_cast<unsigned>(frameSize);
  req.tp_frame_nr = static_cast<unsigned>(blockCount * (blockSize / frameSize));
  if (setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof req) != 0) return Fail(env, fd, "setsockopt", errno, iface + " PACKET_RX_RING");
  if (setsockopt(fd, SOL_PACKET, PACKET_TX_RING, &req, sizeof req) != 0) return Fail(env, fd, "setsockopt", errno, iface + " PACKET_TX_RING");
  struct sockaddr_ll sll;
  memset(&sll, 0, sizeof sll);
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = htons(ETH_P_ALL);
  sll.sll_ifindex = static_cast<int>(ifindex);
  if (bind(fd, reinterpret_cast<struct sockaddr*>(&sll), sizeof sll) != 0) return Fail(env, fd, "bind", errno, iface);
  // Promiscuous while the socket lives: the kernel drops the membership when it closes.
  struct packet_mreq mr;
  memset(&mr, 0, sizeof mr);
  mr.mr_ifindex = static_cast<int>(ifindex);
  mr.mr_type = PACKET_MR_PROMISC;
  if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof mr) != 0) return Fail(env, fd, "setsockopt", errno, iface + " PACKET_MR_PROMISC");
  if (fanout != 0) {
    uint32_t arg = static_cast<uint32_t>(fanout);
    if (setsockopt(fd, SOL_PACKET, PACKET_FANOUT, &arg, sizeof arg) != 0) return Fail(env, fd, "setsockopt", errno, iface + " PACKET_FANOUT");
  }
  Napi::Object o = Napi::Object::New(env);
  o.Set("fd", Napi::Number::New(env, fd));
  o.Set("ifindex", Napi::Number::New(env, ifindex));
  o.Set("mapLength", Napi::Number::New(env, static_cast<double>(2 * blockSize * blockCount)));
  return o;
}

// packetKick(fd): sends every frame the tx ring holds at TP_STATUS_SEND_REQUEST,
// without waiting. Returns 0 or the errno (the data path counts, never throws).
Napi::Value PacketKick(const Napi::CallbackInfo& info) {
  int fd;
  if (info.Length() != 1 || !ArgFd(info, 0, &fd)) return ThrowUsage(info.Env(), "packetKick(fd: number)");
  ssize_t n = sendto(fd, nullptr, 0, MSG_DONTWAIT, nullptr, 0);
  return Napi::Number::New(info.Env(), n < 0 ? errno : 0);
}

// socketError(fd): the socket's pending error (SO_ERROR, which clears it), 0 when none.
Napi::Value SocketError(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd;
  if (info.Length() != 1 || !ArgFd(info, 0, &fd)) return ThrowUsage(env, "socketError(fd: number)");
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return ThrowSys(env, "getsockopt", errno, FdName(fd) + " SO_ERROR");
  return Napi::Number::New(env, err);
}

// linkEventsOpen(): a non-blocking NETLINK_ROUTE socket joined to RTMGRP_LINK: readable
// whenever any interface changes (up, down, carrier, gone). Watching it, rather than a port's own
// socket, costs the data path nothing: a socket with an epoll watcher makes the kernel take its
// wait queue's lock, interrupts off, on every frame it delivers.
Napi::Value LinkEventsOpen(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() != 0) return ThrowUsage(env, "linkEventsOpen()");
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return ThrowSys(env, "socket", errno, "AF_NETLINK NETLINK_ROUTE");
  struct sockaddr_nl a;
  memset(&a, 0, sizeof a);
  a.nl_family = AF_NETLINK;
  a.nl_groups = RTMGRP_LINK;
  if (bind(fd, reinterpret_cast<struct sockaddr*>(&a), sizeof a) != 0) {
    int e = errno;
    close(fd);
    return ThrowSys(env, "bind", e, "AF_NETLINK RTMGRP_LINK");
  }
  return Napi::Number::New(env, fd);
}

// drainFd(fd): reads a non-blocking socket until it would block; the bytes read (the messages
// themselves are not needed: the reader asks for the state it cares about afterwards). A netlink
// overrun (ENOBUFS) is one more reason to look, not an error.
Napi::Value DrainFd(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd;
  if (info.Length() != 1 || !ArgFd(info, 0, &fd)) return ThrowUsage(env, "drainFd(fd: number)");
  char buf[8192];
  double total = 0;
  for (;;) {
    ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) {
      total += static_cast<double>(n);
      continue;
    }
    if (n == 0 || errno == EAGAIN || errno == EWOULDBLOCK) break;
    if (errno == EINTR || errno == ENOBUFS) continue;
    return ThrowSys(env, "recv", errno, FdName(fd));
  }
  return Napi::Number::New(env, total);
}

}  // namespace

void InitPacket(Napi::Env env, Napi::Object exports) {
  exports.Set("linkEventsOpen", Napi::Function::New(env, LinkEventsOpen, "linkEventsOpen"));
  exports.Set("drainFd", Napi::Function::New(env, DrainFd, "drainFd"));
  exports.Set("ifaceInfo", Napi::Function::New(env, IfaceInfo, "ifaceInfo"));
  exports.Set("packetOpen", Napi::Function::New(env, PacketOpen, "packetOpen"));
  exports.Set("packetKick", Napi::Function::New(env, PacketKick, "packetKick"));
  exports.Set("socketError", Napi::Function::New(env, SocketError, "socketError"));
}

}  // namespace dpkit
