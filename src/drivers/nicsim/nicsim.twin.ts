/**
 * net_nicsim's hardware kernel (nicsim.as.ts) or its TypeScript twin (here,
 * same signature), chosen once when the hardware thread starts (`nicsimOps`).
 * `txq` is a tx queue block's heap offset (nicsim.record.ts).
 */
import type { Heap } from '../../eal/heap.js';
import { RXQ_ERRORS, RXQ_MISSED } from '../../ethdev/stats-layout.js';
import {
  NICRXQ_W_HEAD,
  NICRXQ_W_NB_DESC,
  NICRXQ_W_RING,
  NICRXQ_W_STATS,
  NICRXQ_W_TAIL,
  NICTXQ_S_LINK_DROPS,
  NICTXQ_W_HEAD,
  NICTXQ_W_NB_DESC,
  NICTXQ_W_PEER_RXQ,
  NICTXQ_W_RING,
  NICTXQ_W_TAIL,
  RX_STATUS_DD,
  RX_STATUS_EOP,
  RXD_W_ADDR,
  RXD_W_BUF_LEN,
  RXD_W_LEN,
  RXD_W_STATUS,
  TX_CMD_EOP,
  TX_CMD_RS,
  TX_STATUS_DD,
  TXD_W_ADDR,
  TXD_W_LEN_CMD,
  TXD_W_STATUS,
} from './nicsim-layout.js';

export interface NicsimOps {
  /** One pass of the DMA engine over tx queue `txq`, about `budget` descriptors at most. @returns tx descriptors consumed. */
  xmit(txq: number, budget: number): number;
}

/** The kernel when the heap has kernels, else the twin. */
export function nicsimOps(heap: Heap): NicsimOps {
  const k = heap.kernels;
  if (k === null) return new NicsimTwin(heap);
  return { xmit: k.fn('nicsimXmit') };
}

/** The twin: the same walk, copies and write-backs as nicsimXmit, byte for byte. */
class NicsimTwin implements NicsimOps {
  private readonly u8: Uint8Array;
  private readonly u32: Uint32Array;
  private readonly f64: Float64Array;

  constructor(heap: Heap) {
    this.u8 = heap.u8;
    this.u32 = heap.u32;
    this.f64 = heap.f64;
  }

  xmit(txq: number, budget: number): number {
    const u32 = this.u32;
    const u8 = this.u8;
    const f64 = this.f64;
    const t = txq >>> 2;
    const tail = Atomics.load(u32, t + NICTXQ_W_TAIL);
    let head = u32[t + NICTXQ_W_HEAD]!;
    if (head === tail) return 0;
    const ring = u32[t + NICTXQ_W_RING]! >>> 2;
    const nb = u32[t + NICTXQ_W_NB_DESC]!;
    const rxq = u32[t + NICTXQ_W_PEER_RXQ]!;
    const r = rxq >>> 2;
    const rxRing = rxq !== 0 ? u32[r + NICRXQ_W_RING]! >>> 2 : 0;
    const rxNb = rxq !== 0 ? u32[r + NICRXQ_W_NB_DESC]! : 0;
    let rxHead = rxq !== 0 ? u32[r + NICRXQ_W_HEAD]! : 0;
    let rxTail = rxq !== 0 ? Atomics.load(u32, r + NICRXQ_W_TAIL) : 0;
    let done = 0;
    let missed = 0;
    let oversize = 0;
    let linkDrops = 0;
    while (head !== tail && done < budget) {
      if (rxq !== 0 && rxHead === rxTail) rxTail = Atomics.load(u32, r + NICRXQ_W_TAIL);
      const hasRx = rxq !== 0 && rxHead !== rxTail;
      const rd = rxRing + (rxHead << 2);
      const dst = hasRx ? u32[rd + RXD_W_ADDR]! : 0;
      const room = hasRx ? u32[rd + RXD_W_BUF_LEN]! : 0;
      let len = 0;
      let fits = hasRx;
      for (;;) {
        const d = ring + (head << 2);
        const lc = u32[d + TXD_W_LEN_CMD]!;
        const seg = lc & 0xffff;
        if (fits) {
          if (len + seg <= room) {
            const src = u32[d + TXD_W_ADDR]!;
            u8.copyWithin(dst + len, src, src + seg);
          } else fits = false;
        }
        len += seg;
        if (((lc >>> 16) & TX_CMD_RS) !== 0) Atomics.store(u32, d + TXD_W_STATUS, TX_STATUS_DD);
        head = head + 1 === nb ? 0 : head + 1;
        done++;
        if (((lc >>> 16) & TX_CMD_EOP) !== 0 || head === tail) break;
      }
      if (rxq === 0) linkDrops++;
      else if (!hasRx) missed++;
      else if (!fits) oversize++;
      else {
        u32[rd + RXD_W_LEN] = len;
        Atomics.store(u32, rd + RXD_W_STATUS, RX_STATUS_DD | RX_STATUS_EOP);
        rxHead = rxHead + 1 === rxNb ? 0 : rxHead + 1;
      }
    }
    Atomics.store(u32, t + NICTXQ_W_HEAD, head);
    if (rxq !== 0) {
      u32[r + NICRXQ_W_HEAD] = rxHead;
      const stats = u32[r + NICRXQ_W_STATS]! >>> 3;
      if (missed) f64[stats + RXQ_MISSED] += missed;
      if (oversize) f64[stats + RXQ_ERRORS] += oversize;
    }
    if (linkDrops) f64[(txq >>> 3) + NICTXQ_S_LINK_DROPS] += linkDrops;
    return done;
  }
}
