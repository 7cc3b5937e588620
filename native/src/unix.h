// AF_UNIX sockets that carry fds (DESIGN §8): vhost-user and memif speak
// SOCK_STREAM with SCM_RIGHTS, DPDK telemetry v2 speaks SOCK_SEQPACKET. Node's
// net module has neither fd passing nor SOCK_SEQPACKET.
#pragma once
#include <napi.h>

namespace dpkit {
void InitUnix(Napi::Env env, Napi::Object exports);
}
