// net_nicsim's hardware: what the model NIC's DMA engine does with the tx
// descriptors a driver posted, one call per queue and pass of the hardware
// thread. Twin: nicsimXmitTs in src/drivers/nicsim/hw.ts (same layout, same
// protocol; test/kernels/nicsim-kernel.test.ts compares them byte for byte).
// The layout mirrors src/drivers/nicsim/layout.ts, in bytes.

import { copyBytes } from '../../mem/copy.as';

/** Descriptor words, as byte offsets. */
const TXD_ADDR: u32 = 0;
const TXD_LEN_CMD: u32 = 8;
const TXD_STATUS: u32 = 12;
const RXD_ADDR: u32 = 0;
const RXD_BUF_LEN: u32 = 4;
const RXD_LEN: u32 = 8;
const RXD_STATUS: u32 = 12;
const TX_CMD_EOP: u32 = 1;
const TX_CMD_RS: u32 = 2;
const TX_STATUS_DD: u32 = 1;
const RX_STATUS_DD: u32 = 1;
const RX_STATUS_EOP: u32 = 2;
/** Queue blocks. */
const TXQ_TAIL: u32 = 0;
const TXQ_HEAD: u32 = 64;
const TXQ_RING: u32 = 68;
const TXQ_NB_DESC: u32 = 72;
const TXQ_LINK_DROPS: u32 = 80;
const RXQ_TAIL: u32 = 0;
const RXQ_HEAD: u32 = 64;
const RXQ_RING: u32 = 68;
const RXQ_NB_DESC: u32 = 72;
const RXQ_STATS: u32 = 76;
/** ethdev/stats.ts RXQ_ERRORS and RXQ_MISSED, as byte offsets of f64 slots. */
const Q_ERRORS: u32 = 2 * 8;
const Q_MISSED: u32 = 3 * 8;

// Checked by the kernel test against layout.ts (not `layout*`: those are the mbuf/fwd set).
export const nicsimLayoutTxdLenCmd: u32 = TXD_LEN_CMD;
export const nicsimLayoutTxdStatus: u32 = TXD_STATUS;
export const nicsimLayoutRxdBufLen: u32 = RXD_BUF_LEN;
export const nicsimLayoutRxdLen: u32 = RXD_LEN;
export const nicsimLayoutRxdStatus: u32 = RXD_STATUS;
export const nicsimLayoutTxqHead: u32 = TXQ_HEAD;
export const nicsimLayoutTxqRing: u32 = TXQ_RING;
export const nicsimLayoutTxqNbDesc: u32 = TXQ_NB_DESC;
export const nicsimLayoutTxqLinkDrops: u32 = TXQ_LINK_DROPS;
export const nicsimLayoutRxqHead: u32 = RXQ_HEAD;
export const nicsimLayoutRxqRing: u32 = RXQ_RING;
export const nicsimLayoutRxqNbDesc: u32 = RXQ_NB_DESC;
export const nicsimLayoutRxqStats: u32 = RXQ_STATS;

/**
 * Sends what tx queue `txq` (block offset) has posted, packet by packet, up
 * to about `budget` descriptors: gathers each packet's segments into the
 * buffer of the next rx descriptor of `rxq` (the cable's other end; 0 when
 * that port is down), writes the rx descriptor's length and DD|EOP, and
 * writes DD back on every tx descriptor with RS set, and only there.
 * A packet the rx ring has no descriptor for is dropped and counted in the rx
 * queue's imissed; one larger than the rx buffer, in its errors; with no rx
 * queue at all, in the tx queue's link-down drops.
 * @returns tx descriptors consumed.
 */
export function nicsimXmit(txq: u32, rxq: u32, budget: u32): u32 {
  const tail = atomic.load<u32>(txq + TXQ_TAIL);
  let head = load<u32>(txq + TXQ_HEAD);
  if (head == tail) return 0;
  const ring = load<u32>(txq + TXQ_RING);
  const nb = load<u32>(txq + TXQ_NB_DESC);
  let rxRing: u32 = 0;
  let rxNb: u32 = 0;
  let rxHead: u32 = 0;
  let rxTail: u32 = 0;
  if (rxq != 0) {
    rxRing = load<u32>(rxq + RXQ_RING);
    rxNb = load<u32>(rxq + RXQ_NB_DESC);
    rxHead = load<u32>(rxq + RXQ_HEAD);
    rxTail = atomic.load<u32>(rxq + RXQ_TAIL);
  }
  let done: u32 = 0;
  let missed: u32 = 0;
  let oversize: u32 = 0;
  let linkDrops: u32 = 0;
  while (head != tail && done < budget) {
    // The rx tail is re-read only when the ring looks full: caching the other side's index tripled a 2-thread ring's rate at burst 1.
    if (rxq != 0 && rxHead == rxTail) rxTail = atomic.load<u32>(rxq + RXQ_TAIL);
    const hasRx = rxq != 0 && rxHead != rxTail;
    const rd = rxRing + (rxHead << 4);
    let dst: u32 = 0;
    let room: u32 = 0;
    if (hasRx) {
      dst = load<u32>(rd + RXD_ADDR);
      room = load<u32>(rd + RXD_BUF_LEN);
    }
    let len: u32 = 0;
    let fits = hasRx;
    for (;;) {
      const d = ring + (head << 4);
      const lc = load<u32>(d + TXD_LEN_CMD);
      const seg = lc & 0xffff;
      if (fits) {
        if (len + seg <= room) copyBytes(dst + len, load<u32>(d + TXD_ADDR), seg);
        else fits = false;
      }
      len += seg;
      // The bytes are read: the driver may free this buffer as soon as it sees DD.
      if ((lc >>> 16) & TX_CMD_RS) atomic.store<u32>(d + TXD_STATUS, TX_STATUS_DD);
      head = head + 1 == nb ? 0 : head + 1;
      done++;
      // A packet always ends before the tail (the driver posts whole packets); stop there regardless.
      if ((lc >>> 16) & TX_CMD_EOP || head == tail) break;
    }
    if (rxq == 0) linkDrops++;
    else if (!hasRx) missed++;
    else if (!fits) oversize++;
    else {
      store<u32>(rd + RXD_LEN, len);
      atomic.store<u32>(rd + RXD_STATUS, RX_STATUS_DD | RX_STATUS_EOP);
      rxHead = rxHead + 1 == rxNb ? 0 : rxHead + 1;
    }
  }
  atomic.store<u32>(txq + TXQ_HEAD, head);
  if (rxq != 0) {
    store<u32>(rxq + RXQ_HEAD, rxHead);
    const stats = load<u32>(rxq + RXQ_STATS) << 3;
    if (missed) store<f64>(stats + Q_MISSED, load<f64>(stats + Q_MISSED) + <f64>missed);
    if (oversize) store<f64>(stats + Q_ERRORS, load<f64>(stats + Q_ERRORS) + <f64>oversize);
  }
  if (linkDrops) store<f64>(txq + TXQ_LINK_DROPS, load<f64>(txq + TXQ_LINK_DROPS) + <f64>linkDrops);
  return done;
}
