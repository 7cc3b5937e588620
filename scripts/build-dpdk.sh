#!/bin/sh
# Build DPDK natively (for this CPU) as the benchmarks' strongest yardstick.
#
#   scripts/build-dpdk.sh SRC [BUILD]
#
# SRC is a DPDK git checkout or source tree (default tag v25.11.2: `git -C SRC checkout v25.11.2`);
# BUILD defaults to SRC/build. Only what the benchmarks run is built: the null, ring, pcap,
# vhost, virtio (virtio_user), memif, af_packet, af_xdp (when libxdp-dev and libbpf-dev are
# installed) and tap PMDs, testpmd, and the l2fwd, l3fwd and
# skeleton examples. The result is BUILD/app/dpdk-testpmd, which `npm run bench -- testpmd
# --dpdk BUILD` names dpdk-<version>-native.
#
# Environment: CPU_SET (default native) is meson's -Dcpu_instruction_set; JOBS (default: the
# number of cores) is ninja's -j. Run it under `nice -n 19` on a shared machine: it takes about
# 15-20 minutes on 2 cores.
set -eu

usage() { echo "usage: scripts/build-dpdk.sh SRC [BUILD]" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
SRC=$1
BUILD=${2:-$SRC/build}
CPU_SET=${CPU_SET:-native}
JOBS=${JOBS:-$(nproc)}

if [ ! -f "$SRC/meson.build" ] || [ ! -f "$SRC/VERSION" ]; then
  echo "build-dpdk: $SRC is not a DPDK source tree (no meson.build and VERSION)" >&2
  exit 1
fi

# Debian's tools; a second python3 first on PATH would lack elftools, so Debian's comes first.
PATH=/usr/bin:$PATH
export PATH
missing=""
command -v meson >/dev/null 2>&1 || missing="$missing meson"
command -v ninja >/dev/null 2>&1 || missing="$missing ninja-build"
python3 -c 'import elftools' 2>/dev/null || missing="$missing python3-pyelftools"
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
[ -f /usr/include/numa.h ] || missing="$missing libnuma-dev"
[ -f /usr/include/pcap.h ] || [ -f /usr/include/pcap/pcap.h ] || missing="$missing libpcap-dev"
if [ -n "$missing" ]; then
  echo "build-dpdk: installing$missing from Debian" >&2
  apt-get install -y $missing >&2 || {
    echo "build-dpdk: could not install$missing (run: apt-get update && apt-get install -y$missing)" >&2
    exit 1
  }
fi

DRIVERS=net/null,net/ring,net/pcap,net/vhost,net/virtio,net/memif,net/af_packet,net/tap,mempool/ring,mempool/stack,bus/vdev,bus/pci
# af_xdp is the kernel-ports benchmark's fastest arm; meson skips it quietly without libxdp and libbpf.
if pkg-config --exists libxdp libbpf 2>/dev/null; then DRIVERS=$DRIVERS,net/af_xdp; fi
if [ ! -f "$BUILD/build.ninja" ]; then
  meson setup "$BUILD" "$SRC" \
    -Dbuildtype=release \
    -Dcpu_instruction_set="$CPU_SET" \
    -Denable_drivers="$DRIVERS" \
    -Denable_apps=test-pmd \
    -Dexamples=l2fwd,l3fwd,skeleton \
    -Dtests=false \
    -Denable_docs=false \
    -Ddefault_library=static
fi
ninja -C "$BUILD" -j "$JOBS"

test -x "$BUILD/app/dpdk-testpmd" || { echo "build-dpdk: $BUILD/app/dpdk-testpmd was not built" >&2; exit 1; }
# Recorded beside the build so the bench can name the arm and list the flags without asking meson.
{
  echo "version=$(cat "$SRC/VERSION")"
  echo "cpu_instruction_set=$CPU_SET"
  echo "buildtype=release"
  echo "cc=$(cc --version | head -n 1)"
  echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
} > "$BUILD/dpkit-build.txt"
echo "build-dpdk: $BUILD/app/dpdk-testpmd ($(cat "$SRC/VERSION"), -Dcpu_instruction_set=$CPU_SET)"
