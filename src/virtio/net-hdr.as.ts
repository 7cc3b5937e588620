// The virtio-net header a device writes before each received packet, as the
// kernels write it (twin: putRxHeader in virtio-net.ts).
import { HDR_NUM_BUFFERS } from './virtio-net-layout.as';

/** The header's last word with num_buffers (its upper half) 1 and nothing else. */
const LAST_WORD: u32 = 1 << ((HDR_NUM_BUFFERS - 8) * 8);

/**
 * Writes the 12-byte header at `dst` for a packet in one buffer: no offload
 * flags, num_buffers 1. Only where it differs, as DPDK's vhost assigns each
 * field unless equal: the guest reads this line after every packet, so it is
 * shared, and a store would take it back across cores each time, while a
 * recycled buffer already holds the same header from its last lap.
 */
// @ts-ignore: decorator (AssemblyScript inlines it; TypeScript has no function decorators)
@inline
export function putRxHeader(dst: u32): void {
  if ((load<u32>(dst) | load<u32>(dst, 4)) != 0 || load<u32>(dst, 8) != LAST_WORD) {
    store<u32>(dst, 0);
    store<u32>(dst, 0, 4);
    store<u32>(dst, LAST_WORD, 8);
  }
}
