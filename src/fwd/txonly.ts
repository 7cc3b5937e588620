/**
 * txonly: generate IPv4/UDP packets and send them (testpmd's txonly): each
 * packet is --txpkts segments long (a chain when several), with Ethernet
 * dst = the tx port's peer, src = the tx port, IPv4 198.18.0.1 → 198.18.0.2,
 * UDP 9 → 9, TTL 64. --txonly-multi-flow varies the source address per packet
 * (as testpmd: (dst | var << 8) + lcore) so a receiver's RSS spreads them.
 * Single-segment packets are filled by the kernel txonlyFill (txonly.as.ts)
 * or its twin (txonly.twin.ts); chains are built here.
 */
import { ArgError } from '../errors.js';
import { ETHER_HDR_LEN, ETHER_TYPE_IPV4 } from '../net/ether.js';
import { H_DATA_LEN, H_NB_SEGS, H_VLAN_TCI, H_VLAN_TCI_OUTER, MBUF_HALF_SHIFT, MBUF_WORD_SHIFT, OlFlagsHi, W_NEXT, W_OL_FLAGS_HI, W_PKT_LEN, W_TX_OFFLOAD } from '../mem/mbuf-layout.js';
import { engineBlock, streamBlocks } from './blocks.js';
import { transmit } from './common.js';
import type { Mempool } from '../mem/mempool.js';
import type { FwdConfig, FwdContext, FwdEngine, FwdStream } from './engine.js';
import { FWDE_W_IP_VAR, FWDS_TMPL, FWDS_W_SUM_NO_SRC } from './fwd-layout.js';
import { TX_OFFLOAD_ETH_IPV4, txOlFlagsHi } from './tx-fields.js';
import { txonlyOps, txonlyTemplateWords, txonlyWriteHeaders } from './txonly.twin.js';

const IPV4_HDR_LEN = 20;
const UDP_HDR_LEN = 8;
/** Ethernet + IPv4 + UDP: the bytes txonly writes into every packet. */
export const TXONLY_HDR_LEN = ETHER_HDR_LEN + IPV4_HDR_LEN + UDP_HDR_LEN;
const IP_DEFTTL = 64;
const IPPROTO_UDP = 17;

/** The 42 header bytes of a txonly packet of `pktLen` bytes from `src` to `dst` MAC. */
export function txonlyTemplate(config: FwdConfig, pktLen: number, src: Uint8Array, dst: Uint8Array): Uint8Array {
  const t = new Uint8Array(TXONLY_HDR_LEN);
  const v = new DataView(t.buffer);
  t.set(dst.subarray(0, 6), 0);
  t.set(src.subarray(0, 6), 6);
  v.setUint16(12, ETHER_TYPE_IPV4);
  v.setUint8(14, 0x45);
  v.setUint16(16, pktLen - ETHER_HDR_LEN);
  v.setUint8(22, IP_DEFTTL);
  v.setUint8(23, IPPROTO_UDP);
  v.setUint32(26, config.txIpSrc);
  v.setUint32(30, config.txIpDst);
  v.setUint16(24, ipv4Checksum(t, 14));
  v.setUint16(34, config.txUdpSrc);
  v.setUint16(36, config.txUdpDst);
  v.setUint16(38, pktLen - ETHER_HDR_LEN - IPV4_HDR_LEN);
  return t;
}

/** One's-complement checksum of the 20-byte IPv4 header at `off` (checksum field taken as 0). */
function ipv4Checksum(b: Uint8Array, off: number): number {
  let sum = 0;
  for (let i = 0; i < IPV4_HDR_LEN; i += 2) if (i !== 10) sum += (b[off + i]! << 8) | b[off + i + 1]!;
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

/**
 * Checks the packet shape txonly would build from `config.txPkts` with mbufs
 * of `pool` (testpmd's set_tx_pkt_segments checks): run by the control plane
 * before any lcore starts, and by the engine itself.
 * @throws ArgError when a segment is empty or larger than an mbuf's data
 *   room, or the packet is shorter than its Ethernet/IPv4/UDP header.
 */
export function txonlyCheck(config: FwdConfig, pool: Mempool): void {
  const segs = config.txPkts;
  const pktLen = segs.reduce((a, b) => a + b, 0);
  const room = pool.bufLen - pool.headroom;
  if (segs.some((s) => s > room || s <= 0)) throw new ArgError(`txonly: --txpkts ${segs.join(',')}: each segment must be 1..${room} bytes (the mbuf data room)`);
  if (pktLen < TXONLY_HDR_LEN) throw new ArgError(`txonly: packet length ${pktLen} is shorter than the ${TXONLY_HDR_LEN}-byte Ethernet/IPv4/UDP header`);
}

export function txonly(ctx: FwdContext): FwdEngine {
  const { heap, mb, pool, burst, config } = ctx;
  txonlyCheck(config, pool);
  const segs = config.txPkts;
  const pktLen = segs.reduce((a, b) => a + b, 0);
  const nbSegs = segs.length;
  const u8 = heap.u8;
  const u16 = heap.u16;
  const u32 = heap.u32;
  const dv = heap.view;
  const lc = heap.lcore;
  const olHi = txOlFlagsHi(config);
  const multiFlow = config.txOnlyMultiFlow;
  const e = engineBlock(ctx, 'txonly');
  const ipVarAt = (e >>> 2) + FWDE_W_IP_VAR;
  // Each stream's block holds its header (the peer and tx port differ) and the header's sum without the source.
  const block = streamBlocks(ctx, e, 'txonly', (s, fs) => {
    const bytes = txonlyTemplate(config, pktLen, fs.txMac, fs.peerMac);
    u8.set(bytes, s + FWDS_TMPL);
    const v = new DataView(bytes.buffer);
    let sum = 0;
    for (let i = 14; i < 34; i += 2) if (i !== 24 && i !== 26 && i !== 28) sum += v.getUint16(i);
    u32[(s >>> 2) + FWDS_W_SUM_NO_SRC] = sum;
  });
  const fill = txonlyOps(heap);
  const seg = heap.burst(nbSegs);
  const lcoreId = heap.lcoreId;
  const hdr = new Uint8Array(TXONLY_HDR_LEN);
  const hdrView = new DataView(hdr.buffer);
  const words = new Uint32Array(11);

  const setFields = (h: number): void => {
    const r = h << MBUF_WORD_SHIFT;
    u32[r + W_OL_FLAGS_HI] = olHi;
    u32[r + W_TX_OFFLOAD] = TX_OFFLOAD_ETH_IPV4;
    if (olHi & OlFlagsHi.TX_VLAN) u16[(h << MBUF_HALF_SHIFT) + H_VLAN_TCI] = config.vlanTci;
    if (olHi & OlFlagsHi.TX_QINQ) u16[(h << MBUF_HALF_SHIFT) + H_VLAN_TCI_OUTER] = config.vlanTciOuter;
  };

  /** Writes the headers of the stream whose block is `s` at `p` in `view`, advancing the engine's flow variable. */
  const writeHeaders = (s: number, view: DataView, p: number): void => {
    u32[ipVarAt] = txonlyWriteHeaders(view, p, words, multiFlow, config.txIpDst, u32[ipVarAt]!, lcoreId, u32[(s >>> 2) + FWDS_W_SUM_NO_SRC]!);
  };

  /** Slow path: a first segment shorter than the headers; stage them, then copy across segments. */
  const writeHeadersSegs = (s: number, h: number): void => {
    writeHeaders(s, hdrView, 0);
    let k = 0;
    for (let m = h; m !== 0 && k < TXONLY_HDR_LEN; m = mb.next(m)) {
      const len = Math.min(mb.dataLen(m), TXONLY_HDR_LEN - k);
      u8.set(hdr.subarray(k, k + len), mb.mtod(m));
      k += len;
    }
  };

  return {
    name: 'txonly',
    fwd(fs: FwdStream): void {
      const s = block(fs);
      const want = config.burst;
      let n = 0;
      if (nbSegs === 1) {
        if (pool.allocBulk(burst, want) === want) n = want;
        else while (n < want && (burst[n] = pool.alloc()) !== 0) n++;
        fill(s, lc, burst.heapOffset, n);
      } else {
        txonlyTemplateWords(dv, s + FWDS_TMPL, words);
        for (; n < want; n++) {
          if (pool.allocBulk(seg, nbSegs) === 0) break;
          for (let i = 0; i < nbSegs; i++) {
            const m = seg[i]!;
            u16[(m << MBUF_HALF_SHIFT) + H_DATA_LEN] = segs[i]!;
            if (i + 1 < nbSegs) u32[(m << MBUF_WORD_SHIFT) + W_NEXT] = seg[i + 1]!;
          }
          const h = seg[0]!;
          u32[(h << MBUF_WORD_SHIFT) + W_PKT_LEN] = pktLen;
          u16[(h << MBUF_HALF_SHIFT) + H_NB_SEGS] = nbSegs;
          setFields(h);
          if (segs[0]! >= TXONLY_HDR_LEN) writeHeaders(s, dv, mb.mtod(h));
          else writeHeadersSegs(s, h);
          burst[n] = h;
        }
      }
      if (n > 0) transmit(ctx, fs, n);
    },
  };
}
