// net_nicsim's hardware: what the model NIC's DMA engine does with the tx
// descriptors a driver posted, one call per queue and pass of the hardware
// thread (hw.ts). Twin: NicsimTwin.xmit in nicsim.twin.ts (same signature; the
// tests compare them byte for byte). Records: nicsim.record.ts.
import { RXQ_STAT_ERRORS, RXQ_STAT_MISSED } from '../../ethdev/stats-layout.as';
import { copyBytes } from '../../mem/copy.as';
import {
  NICRXQ_HEAD,
  NICRXQ_NB_DESC,
  NICRXQ_RING,
  NICRXQ_STATS,
  NICRXQ_TAIL,
  NICTXQ_HEAD,
  NICTXQ_LINK_DROPS,
  NICTXQ_NB_DESC,
  NICTXQ_PEER_RXQ,
  NICTXQ_RING,
  NICTXQ_TAIL,
  RX_STATUS_DD,
  RX_STATUS_EOP,
  RXD_ADDR,
  RXD_BUF_LEN,
  RXD_LEN,
  RXD_STATUS,
  TX_CMD_EOP,
  TX_CMD_RS,
  TX_STATUS_DD,
  TXD_ADDR,
  TXD_LEN_CMD,
  TXD_STATUS,
} from './nicsim-layout.as';

/**
 * Sends what tx queue `txq` (its block's heap offset) has posted, packet by
 * packet, up to about `budget` descriptors: gathers each packet's segments
 * into the buffer of the next rx descriptor of the queue's peer rx queue (the
 * cable's other end; none while that end is down), writes the rx descriptor's
 * length and DD|EOP, and writes DD back on every tx descriptor with RS set,
 * and only there. A packet the rx ring has no descriptor for is dropped and
 * counted in the rx queue's imissed; one larger than the rx buffer, in its
 * errors; with no rx queue at all, in the tx queue's link-down drops.
 * @returns tx descriptors consumed.
 */
export function nicsimXmit(txq: u32, budget: u32): u32 {
  const tail = atomic.load<u32>(txq + NICTXQ_TAIL);
  let head = load<u32>(txq + NICTXQ_HEAD);
  if (head == tail) return 0;
  const ring = load<u32>(txq + NICTXQ_RING);
  const nb = load<u32>(txq + NICTXQ_NB_DESC);
  const rxq = load<u32>(txq + NICTXQ_PEER_RXQ);
  let rxRing: u32 = 0;
  let rxNb: u32 = 0;
  let rxHead: u32 = 0;
  let rxTail: u32 = 0;
  if (rxq != 0) {
    rxRing = load<u32>(rxq + NICRXQ_RING);
    rxNb = load<u32>(rxq + NICRXQ_NB_DESC);
    rxHead = load<u32>(rxq + NICRXQ_HEAD);
    rxTail = atomic.load<u32>(rxq + NICRXQ_TAIL);
  }
  let done: u32 = 0;
  let missed: u32 = 0;
  let oversize: u32 = 0;
  let linkDrops: u32 = 0;
  while (head != tail && done < budget) {
    // The rx tail is re-read only when the ring looks full: caching the other side's index tripled a 2-thread ring's rate at burst 1.
    if (rxq != 0 && rxHead == rxTail) rxTail = atomic.load<u32>(rxq + NICRXQ_TAIL);
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
  atomic.store<u32>(txq + NICTXQ_HEAD, head);
  if (rxq != 0) {
    store<u32>(rxq + NICRXQ_HEAD, rxHead);
    const stats = load<u32>(rxq + NICRXQ_STATS);
    if (missed) store<f64>(stats + RXQ_STAT_MISSED, load<f64>(stats + RXQ_STAT_MISSED) + <f64>missed);
    if (oversize) store<f64>(stats + RXQ_STAT_ERRORS, load<f64>(stats + RXQ_STAT_ERRORS) + <f64>oversize);
  }
  if (linkDrops) store<f64>(txq + NICTXQ_LINK_DROPS, load<f64>(txq + NICTXQ_LINK_DROPS) + <f64>linkDrops);
  return done;
}
