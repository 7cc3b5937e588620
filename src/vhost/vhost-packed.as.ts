// The vhost data path's common case over a packed ring, one call per burst
// (twins: PackedTwin in vhost-packed.twin.ts, same signatures). As the split
// kernels (vhost-queue.as.ts): each does the packets that take the common
// path, one descriptor each, and stops at the first that does not; VhostQueue
// does that one the general way (vhost-packed.ts) and calls again. `q` is the
// vring's data-path block (vhost-queue.record.ts): lastAvail and usedIdx are
// ring positions there, their wrap counters in `wrap`. Three passes: the
// descriptors, the bytes, then the used flags that hand each element back
// (a used element's flags go last: the driver reads its id, length and bytes
// once it sees them).
import { copyBytes } from '../mem/copy.as';
import { MBUF_SHIFT, M_BUF_ADDR, M_DATA_LEN, M_DATA_OFF, M_NEXT, M_PKT_LEN, M_PORT } from '../mem/mbuf-layout.as';
import { guestTranslate } from '../virtio/guest-memory.as';
import { PDESC_FLAGS, PDESC_ID, PDESC_LEN, PDESC_SIZE, VRING_PACKED_DESC_F_AVAIL, VRING_PACKED_DESC_F_USED } from '../virtio/packed-layout.as';
import { putRxHeader } from '../virtio/net-hdr.as';
import { NET_HDR_SIZE } from '../virtio/virtio-net-layout.as';
import { VRING_DESC_F_WRITE } from '../virtio/vring-layout.as';
import { VQ_ADDRS, VQ_DESC, VQ_LAST_AVAIL, VQ_NUM, VQ_PORT, VQ_SEG_ROOM, VQ_TABLE, VQ_USED_IDX, VQ_WRAP, VQ_WRAP_AVAIL, VQ_WRAP_USED } from './vhost-queue-layout.as';

/** The AVAIL and USED bits a descriptor made available under wrap counter `w` carries. */
// @ts-ignore: decorator
@inline
function availBits(w: u32): u32 {
  return w != 0 ? VRING_PACKED_DESC_F_AVAIL : VRING_PACKED_DESC_F_USED;
}

/** The AVAIL and USED bits of a used element written under wrap counter `w`. */
// @ts-ignore: decorator
@inline
function usedBits(w: u32): u32 {
  return w != 0 ? VRING_PACKED_DESC_F_AVAIL | VRING_PACKED_DESC_F_USED : 0;
}

/** Writes the flags of `count` used elements from position `pos` under wrap counter `w`, in ring order. */
// @ts-ignore: decorator
@inline
function handBack(desc: u32, num: u32, pos: u32, w: u32, count: u32, extra: u32): void {
  for (let k: u32 = 0; k < count; k++) {
    atomic.store<u16>(desc + pos * PDESC_SIZE + PDESC_FLAGS, <u16>(usedBits(w) | extra));
    if (++pos == num) {
      pos = 0;
      w ^= 1;
    }
  }
}

/**
 * Host enqueue over a packed ring, the common case: each packet into the
 * next available descriptor when that is one device-writable buffer (no
 * chain, no indirect table) in guest memory big enough for header and packet.
 * @returns how many packets it enqueued (each took one descriptor and wrote one used element).
 */
export function vhostPackedEnqueue(q: u32, lc: u32, burst: u32, n: u32): u32 {
  const desc = load<u32>(q, VQ_DESC);
  const num = load<u32>(q, VQ_NUM);
  const table = load<u32>(q, VQ_TABLE);
  const wrap = load<u32>(q, VQ_WRAP);
  const dsts = load<u32>(q, VQ_ADDRS);
  let pa = load<u32>(q, VQ_LAST_AVAIL);
  let wa: u32 = wrap & VQ_WRAP_AVAIL ? 1 : 0;
  let pu = load<u32>(q, VQ_USED_IDX);
  let wu: u32 = wrap & VQ_WRAP_USED ? 1 : 0;
  const pu0 = pu;
  const wu0 = wu;
  let i: u32 = 0;
  for (; i < n; i++) {
    const d = desc + pa * PDESC_SIZE;
    const flags = <u32>atomic.load<u16>(d, PDESC_FLAGS);
    if (flags != (availBits(wa) | VRING_DESC_F_WRITE)) break; // not available, or chained, indirect, read-only
    const r = load<u32>(burst + (i << 2)) << MBUF_SHIFT;
    const need = NET_HDR_SIZE + load<u32>(r, M_PKT_LEN);
    if (load<u32>(d, PDESC_LEN) < need) break;
    const gpa = <f64>load<u32>(d, 4) * 4294967296.0 + <f64>load<u32>(d);
    const at = guestTranslate(table, gpa, need);
    if (at < 0) break;
    const id = load<u16>(d, PDESC_ID);
    store<u32>(dsts + (i << 2), <u32>at);
    const u = desc + pu * PDESC_SIZE;
    store<u32>(u, need, PDESC_LEN);
    store<u16>(u, id, PDESC_ID);
    if (++pa == num) {
      pa = 0;
      wa ^= 1;
    }
    if (++pu == num) {
      pu = 0;
      wu ^= 1;
    }
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
  handBack(desc, num, pu0, wu0, i, VRING_DESC_F_WRITE);
  return i;
}

/**
 * Host dequeue over a packed ring, the common case: each available
 * descriptor that is one device-readable buffer (no chain, no indirect
 * table) holding a header and at most `segRoom` bytes of packet goes into the
 * next of the burst's fresh mbufs. The second pass copies only what the first
 * checked (a guest rewriting a descriptor meanwhile changes nothing).
 * @returns how many packets it took (each one descriptor and one used element).
 */
export function vhostPackedDequeue(q: u32, lc: u32, burst: u32, n: u32): u32 {
  const desc = load<u32>(q, VQ_DESC);
  const num = load<u32>(q, VQ_NUM);
  const table = load<u32>(q, VQ_TABLE);
  const port = load<u32>(q, VQ_PORT);
  const segRoom = load<u32>(q, VQ_SEG_ROOM);
  const wrap = load<u32>(q, VQ_WRAP);
  const srcs = load<u32>(q, VQ_ADDRS);
  let pa = load<u32>(q, VQ_LAST_AVAIL);
  let wa: u32 = wrap & VQ_WRAP_AVAIL ? 1 : 0;
  let pu = load<u32>(q, VQ_USED_IDX);
  let wu: u32 = wrap & VQ_WRAP_USED ? 1 : 0;
  const pu0 = pu;
  const wu0 = wu;
  let i: u32 = 0;
  for (; i < n; i++) {
    const d = desc + pa * PDESC_SIZE;
    if (<u32>atomic.load<u16>(d, PDESC_FLAGS) != availBits(wa)) break; // not available, or chained, indirect, writable
    const total = load<u32>(d, PDESC_LEN);
    if (total <= NET_HDR_SIZE || total - NET_HDR_SIZE > segRoom) break;
    const gpa = <f64>load<u32>(d, 4) * 4294967296.0 + <f64>load<u32>(d);
    const at = guestTranslate(table, gpa, total);
    if (at < 0) break;
    const id = load<u16>(d, PDESC_ID);
    const len = total - NET_HDR_SIZE;
    const r = load<u32>(burst + (i << 2)) << MBUF_SHIFT;
    store<u32>(srcs + (i << 2), <u32>at + NET_HDR_SIZE);
    store<u16>(r, <u16>len, M_DATA_LEN);
    store<u32>(r, len, M_PKT_LEN);
    store<u16>(r, <u16>port, M_PORT);
    const u = desc + pu * PDESC_SIZE;
    store<u32>(u, 0, PDESC_LEN);
    store<u16>(u, id, PDESC_ID);
    if (++pa == num) {
      pa = 0;
      wa ^= 1;
    }
    if (++pu == num) {
      pu = 0;
      wu ^= 1;
    }
  }
  for (let k: u32 = 0; k < i; k++) {
    const r = load<u32>(burst + (k << 2)) << MBUF_SHIFT;
    copyBytes(load<u32>(r, M_BUF_ADDR) + <u32>load<u16>(r, M_DATA_OFF), load<u32>(srcs + (k << 2)), <u32>load<u16>(r, M_DATA_LEN));
  }
  handBack(desc, num, pu0, wu0, i, 0);
  return i;
}
