/**
 * net_pcap's replay kernel (pcap.as.ts) or its TypeScript twin (here, same
 * signature), chosen once when a replaying rx queue is opened (`pcapOps`).
 * Arguments are heap byte offsets: `q` the queue's replay block
 * (pcap.record.ts), `lc` the calling thread's lcore block, `burst` a burst.
 */
import type { Heap } from '../../eal/heap.js';
import { RXQ_BYTES, RXQ_PACKETS } from '../../ethdev/stats-layout.js';
import type { Mbufs } from '../../mem/mbuf.js';
import type { Mempool } from '../../mem/mempool.js';
import { PCAP_REPLAY_ENTRY_SIZE, REPLAY_ENTRY_W_CAPLEN, REPLAY_ENTRY_W_DATA, REPLAY_W_COUNT, REPLAY_W_CURSOR, REPLAY_W_PORT, REPLAY_W_ROOM, REPLAY_W_STATS, REPLAY_W_TABLE } from './pcap-layout.js';

export interface PcapOps {
  /** infinite_rx over freshly allocated mbufs, up to the first packet that needs a chain. @returns mbufs filled. */
  replay(q: number, lc: number, burst: number, n: number): number;
}

/** The kernel when the heap has kernels and the pool is not a debug pool (whose checks are TypeScript's), else the twin. */
export function pcapOps(heap: Heap, mb: Mbufs, mp: Mempool): PcapOps {
  const k = heap.kernels;
  if (k === null || mp.debug) return new PcapTwin(heap, mb);
  return { replay: k.fn('pcapReplay') };
}

/** The twin: what the kernel does, readable, and its oracle in the tests. */
class PcapTwin implements PcapOps {
  private readonly u8: Uint8Array;
  private readonly u32: Uint32Array;
  private readonly f64: Float64Array;

  constructor(
    heap: Heap,
    private readonly mb: Mbufs,
  ) {
    this.u8 = heap.u8;
    this.u32 = heap.u32;
    this.f64 = heap.f64;
  }

  replay(q: number, _lc: number, burst: number, n: number): number {
    const u32 = this.u32;
    const mb = this.mb;
    const w = q >>> 2;
    const b = burst >>> 2;
    const table = u32[w + REPLAY_W_TABLE]! >>> 2;
    const count = u32[w + REPLAY_W_COUNT]!;
    const port = u32[w + REPLAY_W_PORT]!;
    const room = u32[w + REPLAY_W_ROOM]!;
    let c = u32[w + REPLAY_W_CURSOR]!;
    let bytes = 0;
    let i = 0;
    for (; i < n; i++) {
      const t = table + c * (PCAP_REPLAY_ENTRY_SIZE >>> 2);
      const len = u32[t + REPLAY_ENTRY_W_CAPLEN]!;
      if (len > room) break;
      const h = u32[b + i]!;
      const src = u32[t + REPLAY_ENTRY_W_DATA]!;
      this.u8.copyWithin(mb.mtod(h), src, src + len);
      mb.setPktLen(h, len);
      mb.setDataLen(h, len);
      mb.setPort(h, port);
      bytes += len;
      if (++c === count) c = 0;
    }
    u32[w + REPLAY_W_CURSOR] = c;
    const stats = u32[w + REPLAY_W_STATS]! >>> 3;
    this.f64[stats + RXQ_PACKETS] += i;
    this.f64[stats + RXQ_BYTES] += bytes;
    return i;
  }
}
