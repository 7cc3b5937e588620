// Linux interfaces (issue 20): AF_PACKET sockets with PACKET_MMAP rings and
// the interface facts a driver needs (packet.cc). Node has no raw sockets
// and no ioctl.
#pragma once
#include <napi.h>

namespace dpkit {
void InitPacket(Napi::Env env, Napi::Object exports);
}  // namespace dpkit
