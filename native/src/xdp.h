// AF_XDP sockets with their UMEM in the heap and the XDP program through
// libxdp, for net_af_xdp (DESIGN §8). Node has no AF_XDP and no BPF.
#pragma once
#include <napi.h>

namespace dpkit {
void InitXdp(Napi::Env env, Napi::Object exports);
}
