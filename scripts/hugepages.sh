#!/bin/sh
# Reserves hugepages and mounts hugetlbfs, so the bench runs DPDK as DPDK is meant to run
# (src/apps/bench/dpdk-memory.ts): MB of the default page size (default 2560: two DPDK
# processes of 1 GiB each, with room). Root only; undo with `echo 0 > /proc/sys/vm/nr_hugepages`.
set -eu
mb=${1:-2560}
kb=$(awk '/^Hugepagesize:/ {print $2}' /proc/meminfo)
[ -n "$kb" ] || { echo "hugepages.sh: this kernel has no hugepages" >&2; exit 1; }
pages=$(( mb * 1024 / kb ))
echo "$pages" > /proc/sys/vm/nr_hugepages
got=$(cat /proc/sys/vm/nr_hugepages)
[ "$got" -ge "$pages" ] || echo "hugepages.sh: asked for $pages pages of $kb kB, the kernel gave $got (memory too fragmented?)" >&2
mkdir -p /dev/hugepages
mountpoint -q /dev/hugepages || mount -t hugetlbfs nodev /dev/hugepages
echo "hugepages: $got of $kb kB reserved, hugetlbfs on /dev/hugepages"
