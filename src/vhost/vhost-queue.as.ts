// The vhost data path's common case, one call per burst (twins:
// vhostEnqueueTs and vhostDequeueTs in vhost-queue.twin.ts, same signatures).
// Each kernel does the packets that take the common path and stops at the
// first that does not; VhostQueue does that one the general way, checks and
// all, and calls again. `q` is the vring's data-path block
// (vhost-queue.record.ts), read into locals at entry; `burst` a burst's heap
// offset. Two passes each, as DPDK's batched copies: the descriptors first,
// then the bytes.
import { copyBytes } from '../mem/copy.as';
import { MBUF_SHIFT, M_BUF_ADDR, M_DATA_LEN, M_DATA_OFF, M_NEXT, M_PKT_LEN, M_PORT } from '../mem/mbuf-layout.as';
import { guestTranslate } from '../virtio/guest-memory.as';
import { putRxHeader } from '../virtio/net-hdr.as';
import { NET_HDR_SIZE } from '../virtio/virtio-net-layout.as';
import { DESC_FLAGS, DESC_LEN, DESC_SIZE, VRING_DESC_F_WRITE } from '../virtio/vring-layout.as';
import { VQ_ADDRS, VQ_AVAIL, VQ_AVAIL_RING, VQ_DESC, VQ_FLAGS, VQ_F_AVAIL_PER_PACKET, VQ_LAST_AVAIL, VQ_MASK, VQ_NUM, VQ_PORT, VQ_SEG_ROOM, VQ_TABLE, VQ_USED, VQ_USED_IDX } from './vhost-queue-layout.as';

/**
 * Host enqueue (rte_vhost_enqueue_burst), the common case: each packet into
 * the next avail entry when that is one device-writable descriptor in guest
 * memory big enough for header and packet. `avail` entries are available
 * after `lastAvail` (re-read before each packet with VQ_F_AVAIL_PER_PACKET).
 * The first pass notes each packet's place at `addrs`, the second copies.
 * @returns how many packets it enqueued (each took one avail and one used entry).
 */
export function vhostEnqueue(q: u32, lc: u32, burst: u32, n: u32): u32 {
  const desc = load<u32>(q, VQ_DESC);
  const availRing = load<u32>(q, VQ_AVAIL_RING);
  const usedRing = load<u32>(q, VQ_USED);
  const mask = load<u32>(q, VQ_MASK);
  const num = load<u32>(q, VQ_NUM);
  const table = load<u32>(q, VQ_TABLE);
  const perPacket = load<u32>(q, VQ_FLAGS) & VQ_F_AVAIL_PER_PACKET;
  const lastAvail = load<u32>(q, VQ_LAST_AVAIL);
  const usedIdx = load<u32>(q, VQ_USED_IDX);
  let avail = load<u32>(q, VQ_AVAIL);
  const dsts = load<u32>(q, VQ_ADDRS);
  let i: u32 = 0;
  for (; i < n; i++) {
    // The vhost enqueue study's other arm (avail_per_packet=1) reads the guest's avail index before every packet.
    if (perPacket) {
      avail = (<u32>atomic.load<u16>(availRing - 2) - lastAvail) & 0xffff;
      if (avail > num) break;
    }
    if (i >= avail) break;
    const m = load<u32>(burst + (i << 2));
    const r = m << MBUF_SHIFT;
    const need = NET_HDR_SIZE + load<u32>(r, M_PKT_LEN);
    const head = <u32>load<u16>(availRing + (((lastAvail + i) & mask) << 1));
    if (head >= num) break;
    const d = desc + head * DESC_SIZE;
    if ((<u32>load<u16>(d, DESC_FLAGS)) != VRING_DESC_F_WRITE || load<u32>(d, DESC_LEN) < need) break;
    const gpa = <f64>load<u32>(d, 4) * 4294967296.0 + <f64>load<u32>(d);
    const at = guestTranslate(table, gpa, need);
    if (at < 0) break;
    store<u32>(dsts + (i << 2), <u32>at);
    const e = usedRing + 4 + (((usedIdx + i) & mask) << 3);
    store<u32>(e, head);
    store<u32>(e, need, 4);
  }
  for (let k: u32 = 0; k < i; k++) {
    const dst = load<u32>(dsts + (k << 2));
    putRxHeader(dst);
    let p = dst + NET_HDR_SIZE;
    for (let s = load<u32>(burst + (k << 2)); s != 0; s = load<u32>(s << MBUF_SHIFT, M_NEXT)) {
      const sr = s << MBUF_SHIFT;
      const len = <u32>load<u16>(sr, M_DATA_LEN);
      copyBytes(p, load<u32>(sr, M_BUF_ADDR) + <u32>load<u16>(sr, M_DATA_OFF), len);
      p += len;
    }
  }
  return i;
}

/**
 * Host dequeue (rte_vhost_dequeue_burst), the common case: each avail entry
 * that is one device-readable descriptor in guest memory holding a header
 * and at most `segRoom` bytes of packet goes into the next of the burst's
 * fresh mbufs. The first pass notes where each packet is at `addrs`, the
 * second copies, so the guest's cache lines are fetched many at a time. The
 * second pass takes addresses and lengths only from what the first checked:
 * no descriptor is fetched twice, so a guest rewriting one meanwhile changes
 * nothing.
 * @returns how many packets it took (each one avail and one used entry).
 */
export function vhostDequeue(q: u32, lc: u32, burst: u32, n: u32): u32 {
  const desc = load<u32>(q, VQ_DESC);
  const availRing = load<u32>(q, VQ_AVAIL_RING);
  const usedRing = load<u32>(q, VQ_USED);
  const mask = load<u32>(q, VQ_MASK);
  const num = load<u32>(q, VQ_NUM);
  const table = load<u32>(q, VQ_TABLE);
  const port = load<u32>(q, VQ_PORT);
  const lastAvail = load<u32>(q, VQ_LAST_AVAIL);
  const usedIdx = load<u32>(q, VQ_USED_IDX);
  const segRoom = load<u32>(q, VQ_SEG_ROOM);
  const srcs = load<u32>(q, VQ_ADDRS);
  let i: u32 = 0;
  for (; i < n; i++) {
    const head = <u32>load<u16>(availRing + (((lastAvail + i) & mask) << 1));
    if (head >= num) break;
    const d = desc + head * DESC_SIZE;
    const total = load<u32>(d, DESC_LEN);
    if (load<u16>(d, DESC_FLAGS) != 0 || total <= NET_HDR_SIZE || total - NET_HDR_SIZE > segRoom) break;
    const gpa = <f64>load<u32>(d, 4) * 4294967296.0 + <f64>load<u32>(d);
    const at = guestTranslate(table, gpa, total);
    if (at < 0) break;
    const len = total - NET_HDR_SIZE;
    const r = load<u32>(burst + (i << 2)) << MBUF_SHIFT;
    store<u32>(srcs + (i << 2), <u32>at + NET_HDR_SIZE);
    store<u16>(r, <u16>len, M_DATA_LEN);
    store<u32>(r, len, M_PKT_LEN);
    store<u16>(r, <u16>port, M_PORT);
    const e = usedRing + 4 + (((usedIdx + i) & mask) << 3);
    store<u32>(e, head);
    store<u32>(e, 0, 4);
  }
  for (let k: u32 = 0; k < i; k++) {
    const r = load<u32>(burst + (k << 2)) << MBUF_SHIFT;
    copyBytes(load<u32>(r, M_BUF_ADDR) + <u32>load<u16>(r, M_DATA_OFF), load<u32>(srcs + (k << 2)), <u32>load<u16>(r, M_DATA_LEN));
  }
  return i;
}
