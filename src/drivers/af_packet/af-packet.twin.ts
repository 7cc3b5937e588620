/**
 * net_af_packet's ring walks, the wasm kernels (af-packet.as.ts) or their
 * TypeScript twins (here, same signatures), chosen once when a queue is
 * opened (`afPacketOps`). Arguments are heap byte offsets: `q` the queue's
 * block (af-packet.record.ts), `lc` the calling thread's lcore block,
 * `burst` a burst. tp_status goes through Atomics (load before the frame's
 * bytes, store after), as the kernels' atomic.load / atomic.store.
 */
import type { Heap } from '../../eal/heap.js';
import { queueOps, QueueTwin } from '../../ethdev/queue-ops.js';
import { RXQ_BYTES, RXQ_NOMBUF, RXQ_PACKETS, TXQ_BYTES, TXQ_ERRORS, TXQ_PACKETS } from '../../ethdev/stats-layout.js';
import type { Mbufs } from '../../mem/mbuf.js';
import { rawCksum } from '../../net/checksum.js';
import { H_BUF_LEN, H_DATA_LEN, H_DATA_OFF, H_NB_SEGS, H_PORT, H_VLAN_TCI, MBUF_HALF_SHIFT, MBUF_WORD_SHIFT, OlFlags, W_NEXT, W_OL_FLAGS, W_PKT_LEN } from '../../mem/mbuf-layout.js';
import type { Mempool } from '../../mem/mempool.js';
import {
  AFP_TX_DATA,

  AFPQ_W_COUNT,
  AFPQ_W_FRAMES,
  AFPQ_W_FRAME_CAP,
  AFPQ_W_FREED,
  AFPQ_W_FULL,
  AFPQ_W_HEAD,
  AFPQ_W_PORT,
  AFPQ_W_SEGS,
  AFPQ_W_SENT,
  AFPQ_W_STATS,
  TP2_H_MAC,
  TP2_H_VLAN_TCI,
  TP2_W_LEN,
  TP2_W_SNAPLEN,
  TP2_W_STATUS,
  TP_STATUS_AVAILABLE,
  TP_STATUS_CSUMNOTREADY,
  TP_STATUS_KERNEL,
  TP_STATUS_SEND_REQUEST,
  TP_STATUS_USER,
  TP_STATUS_VLAN_VALID,
} from './af-packet-layout.js';

export interface AfPacketOps {
  /** Frames the kernel handed over, into fresh mbufs, handed back. @returns packets in the burst (0 when the pool is short: rx_nombuf). */
  rx(q: number, lc: number, burst: number, n: number): number;
  /** Packets into free frames, marked for sending, then freed. @returns how many it took (the block's `sent`, `full`, `freed` say the rest). */
  tx(q: number, lc: number, burst: number, n: number): number;
}

/**
 * The kernels when the heap has them, else the twins. `mp` is the rx queue's
 * pool (null on a tx queue): a debug pool keeps rx on the twins, whose pool
 * calls do its checks.
 */
export function afPacketOps(heap: Heap, mb: Mbufs, mp: Mempool | null): AfPacketOps {
  return queueOps(heap, mp, 'afPacketRx', 'afPacketTx', () => new AfPacketTwin(heap, mb, mp));
}

/** The twins: what the kernels do, readable, and their oracle in the tests. */
class AfPacketTwin extends QueueTwin implements AfPacketOps {
  private readonly i32: Int32Array;

  constructor(
    heap: Heap,
    private readonly mb: Mbufs,
    private readonly mp: Mempool | null,
  ) {
    super(heap);
    this.i32 = heap.i32;
  }

  rx(q: number, lc: number, burst: number, n: number): number {
    const { u8, u16, u32, i32 } = this;
    const w = q >>> 2;
    const frames = u32[w + AFPQ_W_FRAMES]! >>> 2;
    const count = u32[w + AFPQ_W_COUNT]!;
    const head = u32[w + AFPQ_W_HEAD]!;
    let k = 0;
    for (let f = head; k < n; k++) {
      if ((Atomics.load(i32, (u32[frames + f]! >>> 2) + TP2_W_STATUS) & TP_STATUS_USER) === 0) break;
      f = f + 1 === count ? 0 : f + 1;
    }
    if (k === 0) return 0;
    const stats = u32[w + AFPQ_W_STATS]! >>> 3;
    const b = burst >>> 2;
    const mp = this.mp!;
    if (mp.allocBulk(this.words, k, b) !== k) {
      this.f64[stats + RXQ_NOMBUF] += k;
      return 0;
    }
    const port = u32[w + AFPQ_W_PORT]!;
    let f = head;
    let bytes = 0;
    let i = 0;
    for (; i < k; i++) {
      const fr = u32[frames + f]!;
      const len = u32[(fr >>> 2) + TP2_W_SNAPLEN]!;
      const src = fr + u16[(fr >>> 1) + TP2_H_MAC]!;
      const status = Atomics.load(i32, (fr >>> 2) + TP2_W_STATUS);
      if ((status & TP_STATUS_CSUMNOTREADY) !== 0) this.completeL4Csum(src, len);
      const h = u32[b + i]!;
      const hh = h << MBUF_HALF_SHIFT;
      const room = u16[hh + H_BUF_LEN]! - u16[hh + H_DATA_OFF]!;
      if (len <= room) {
        u8.copyWithin(this.mb.mtod(h), src, src + len);
        u16[hh + H_DATA_LEN] = len;
      } else {
        const extra = Math.floor((len - 1) / room);
        if (mp.allocBulk(this.words, extra, w + AFPQ_W_SEGS) !== extra) {
          this.f64[stats + RXQ_NOMBUF] += 1;
          this.mb.freeBulkDirect(lc, burst + i * 4, k - i);
          break;
        }
        this.fillChain(w, h, src, len, room, extra);
      }
      u32[(h << MBUF_WORD_SHIFT) + W_PKT_LEN] = len;
      u16[hh + H_PORT] = port;
      if ((status & TP_STATUS_VLAN_VALID) !== 0) {
        u16[hh + H_VLAN_TCI] = u16[(fr >>> 1) + TP2_H_VLAN_TCI]!;
        u32[(h << MBUF_WORD_SHIFT) + W_OL_FLAGS] = u32[(h << MBUF_WORD_SHIFT) + W_OL_FLAGS]! | OlFlags.RX_VLAN | OlFlags.RX_VLAN_STRIPPED;
      }
      Atomics.store(i32, (fr >>> 2) + TP2_W_STATUS, TP_STATUS_KERNEL);
      bytes += len;
      f = f + 1 === count ? 0 : f + 1;
    }
    u32[w + AFPQ_W_HEAD] = f;
    this.f64[stats + RXQ_PACKETS] += i;
    this.f64[stats + RXQ_BYTES] += bytes;
    return i;
  }

  /** The kernel's completeL4Csum: the TCP or UDP checksum of the frame at `p` that the sender left to offload. */
  private completeL4Csum(p: number, len: number): void {
    const u8 = this.u8;
    const be16 = (at: number) => (u8[at]! << 8) | u8[at + 1]!;
    let l3 = p + 14;
    let type = be16(p + 12);
    if (type === 0x8100) {
      type = be16(p + 16);
      l3 += 4;
    }
    let l4: number;
    let end: number;
    let proto: number;
    if (type === 0x0800) {
      l4 = l3 + ((u8[l3]! & 15) << 2);
      end = l3 + be16(l3 + 2);
      proto = u8[l3 + 9]!;
    } else if (type === 0x86dd) {
      l4 = l3 + 40;
      end = l4 + be16(l3 + 4);
      proto = u8[l3 + 6]!;
    } else {
      return;
    }
    const at = proto === 6 ? 16 : proto === 17 ? 6 : 0;
    if (at === 0 || end > p + len || l4 + at + 2 > end) return;
    let c = ~rawCksum(u8, l4, end - l4) & 0xffff;
    if (c === 0 && proto === 17) c = 0xffff; // UDP: 0 means "no checksum"
    u8[l4 + at] = c >>> 8;
    u8[l4 + at + 1] = c & 0xff;
  }

  /** The kernel's fillChain: `len` bytes from `src` into mbuf `h` and `extra` segments from the block's segs. */
  private fillChain(w: number, h: number, src: number, len: number, room: number, extra: number): void {
    const { u8, u16, u32, mb } = this;
    let n = Math.min(len, room);
    u8.copyWithin(mb.mtod(h), src, src + n);
    u16[(h << MBUF_HALF_SHIFT) + H_DATA_LEN] = n;
    let done = n;
    let prev = h;
    for (let s = 0; s < extra; s++) {
      const sh = u32[w + AFPQ_W_SEGS + s]!;
      n = Math.min(len - done, room);
      u8.copyWithin(mb.mtod(sh), src + done, src + done + n);
      u16[(sh << MBUF_HALF_SHIFT) + H_DATA_LEN] = n;
      u32[(prev << MBUF_WORD_SHIFT) + W_NEXT] = sh;
      prev = sh;
      done += n;
    }
    u16[(h << MBUF_HALF_SHIFT) + H_NB_SEGS] = 1 + extra;
  }

  tx(q: number, lc: number, burst: number, n: number): number {
    const { u8, u16, u32, i32, mb } = this;
    const w = q >>> 2;
    const frames = u32[w + AFPQ_W_FRAMES]! >>> 2;
    const count = u32[w + AFPQ_W_COUNT]!;
    const cap = u32[w + AFPQ_W_FRAME_CAP]!;
    const b = burst >>> 2;
    let f = u32[w + AFPQ_W_HEAD]!;
    let i = 0;
    let sent = 0;
    let bytes = 0;
    let errors = 0;
    let full = 0;
    for (; i < n; i++) {
      const fr = u32[frames + f]!;
      if (Atomics.load(i32, (fr >>> 2) + TP2_W_STATUS) !== TP_STATUS_AVAILABLE) {
        full = 1;
        break;
      }
      const h = u32[b + i]!;
      const len = u32[(h << MBUF_WORD_SHIFT) + W_PKT_LEN]!;
      if (len > cap) {
        errors++;
        continue;
      }
      let dst = fr + AFP_TX_DATA;
      for (let s = h; s !== 0; s = u32[(s << MBUF_WORD_SHIFT) + W_NEXT]!) {
        const dl = u16[(s << MBUF_HALF_SHIFT) + H_DATA_LEN]!;
        const at = mb.mtod(s);
        u8.copyWithin(dst, at, at + dl);
        dst += dl;
      }
      u32[(fr >>> 2) + TP2_W_LEN] = len;
      Atomics.store(i32, (fr >>> 2) + TP2_W_STATUS, TP_STATUS_SEND_REQUEST);
      sent++;
      bytes += len;
      f = f + 1 === count ? 0 : f + 1;
    }
    u32[w + AFPQ_W_HEAD] = f;
    u32[w + AFPQ_W_SENT] = sent;
    u32[w + AFPQ_W_FULL] = full;
    const stats = u32[w + AFPQ_W_STATS]! >>> 3;
    this.f64[stats + TXQ_PACKETS] += sent;
    this.f64[stats + TXQ_BYTES] += bytes;
    if (errors !== 0) this.f64[stats + TXQ_ERRORS] += errors;
    u32[w + AFPQ_W_FREED] = mb.freeBulkDirect(lc, burst, i);
    return i;
  }
}

