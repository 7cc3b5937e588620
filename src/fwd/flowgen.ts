/**
 * flowgen forwarding (testpmd's flowgen.c): a generator of many flows. Each
 * pass frees whatever the rx queue delivers (still counted as received), then
 * builds a burst of IPv4/UDP packets from ctx.pool and transmits it. The
 * destination address walks txIpDst + 0, 1, … flowgenFlows − 1 and wraps,
 * continuing across bursts; packets the tx queue refuses move the walk back
 * so no flow is skipped (as testpmd backs out its flow counter).
 *
 * Packets: Ethernet (dst = the stream's peer, src = the tx port), IPv4
 * (txIpSrc → txIpDst + flow, TTL 64, correct header checksum), UDP
 * (txUdpSrc → txUdpDst, checksum 0 = none), zero payload; one segment of
 * sum(txPkts) bytes (testpmd's flowgen subtracts 4 for the FCS; dpkit's
 * lengths exclude it already). VLAN / QinQ insert flags follow the tx
 * offloads, as in testpmd. flowgen's clone option is not implemented.
 *
 * The engine reads the packet shape from ctx.config when it is made (testpmd
 * builds its engines at `start`); burst size is read each pass.
 */
import { ArgError } from '../errors.js';
import { cksumAdd, cksumFold } from '../net/checksum.js';
import { ETHER_ADDR_LEN, ETHER_HDR_LEN, ETHER_TYPE_IPV4 } from '../net/ether.js';
import {
  ETHER_SRC_OFF,
  ETHER_TYPE_OFF,
  IPPROTO_UDP,
  IPV4_CKSUM_OFF,
  IPV4_DST_OFF,
  IPV4_HDR_LEN,
  IPV4_PROTO_OFF,
  IPV4_SRC_OFF,
  IPV4_TOTAL_LEN_OFF,
  IPV4_TTL_OFF,
  IPV4_VHL_DEF,
  IPV4_VHL_OFF,
  IP_DEFTTL,
  UDP_DST_PORT_OFF,
  UDP_HDR_LEN,
  UDP_LEN_OFF,
  UDP_SRC_PORT_OFF,
  setBe16,
  setBe32,
} from '../net/headers.js';
import { receive, transmit } from './common.js';
import type { Mempool } from '../mem/mempool.js';
import { FS_TX_PACKETS, type FwdConfig, type FwdContext, type FwdEngine, type FwdStream } from './engine.js';
import { txOlFlagsHi } from './tx-fields.js';

/** Ethernet + IPv4 + UDP: the smallest packet flowgen can build. */
const HDRS_LEN = ETHER_HDR_LEN + IPV4_HDR_LEN + UDP_HDR_LEN;
const IP = ETHER_HDR_LEN;
const UDP = ETHER_HDR_LEN + IPV4_HDR_LEN;

/**
 * Checks the packet shape and flow count flowgen would use (run by the
 * control plane before any lcore starts, and by the engine itself).
 * @throws ArgError when sum(txPkts) is not a whole number of bytes between
 *   the 42 bytes of Ethernet + IPv4 + UDP headers and what one mbuf of
 *   `pool` holds (dpkit's flowgen builds single-segment packets), or when
 *   flowgenFlows is not a positive integer.
 */
export function flowgenCheck(cfg: FwdConfig, pool: Mempool): void {
  let pktLen = 0;
  for (const seg of cfg.txPkts) {
    if (!Number.isInteger(seg) || seg < 0) throw new ArgError(`flowgen: txpkts segment length ${seg} is not a non-negative integer`);
    pktLen += seg;
  }
  const room = pool.bufLen - pool.headroom;
  if (pktLen < HDRS_LEN) {
    throw new ArgError(`flowgen: packet length ${pktLen} (sum of txpkts ${cfg.txPkts.join(',')}) is below the ${HDRS_LEN} bytes of Ethernet + IPv4 + UDP headers`);
  }
  if (pktLen > room) {
    throw new ArgError(
      `flowgen: packet length ${pktLen} (sum of txpkts ${cfg.txPkts.join(',')}) does not fit one mbuf of pool ${pool.name} ` +
        `(${room} bytes of data room after ${pool.headroom} of headroom); flowgen builds single-segment packets`,
    );
  }
  const flows = cfg.flowgenFlows;
  if (!Number.isInteger(flows) || flows < 1 || flows > 0xffffffff) throw new ArgError(`flowgen: flowgen-flows=${flows} must be a positive integer`);
}

/**
 * Makes the flowgen engine for one lcore: validates the packet shape
 * (flowgenCheck) and builds the header template once.
 * @returns an engine whose fwd() drains and frees the rx queue, then
 *   generates and transmits up to a burst of packets.
 * @throws ArgError as flowgenCheck.
 */
export function flowgen(ctx: FwdContext): FwdEngine {
  const cfg = ctx.config;
  const pool = ctx.pool;
  flowgenCheck(cfg, pool);
  const pktLen = cfg.txPkts.reduce((a, b) => a + b, 0);
  const flows = cfg.flowgenFlows;

  // Everything but the MACs (per stream) and the destination address / header checksum (per flow).
  const tmpl = new Uint8Array(HDRS_LEN);
  setBe16(tmpl, ETHER_TYPE_OFF, ETHER_TYPE_IPV4);
  tmpl[IP + IPV4_VHL_OFF] = IPV4_VHL_DEF;
  setBe16(tmpl, IP + IPV4_TOTAL_LEN_OFF, pktLen - ETHER_HDR_LEN);
  tmpl[IP + IPV4_TTL_OFF] = IP_DEFTTL;
  tmpl[IP + IPV4_PROTO_OFF] = IPPROTO_UDP;
  setBe32(tmpl, IP + IPV4_SRC_OFF, cfg.txIpSrc);
  setBe16(tmpl, UDP + UDP_SRC_PORT_OFF, cfg.txUdpSrc);
  setBe16(tmpl, UDP + UDP_DST_PORT_OFF, cfg.txUdpDst);
  setBe16(tmpl, UDP + UDP_LEN_OFF, pktLen - ETHER_HDR_LEN - IPV4_HDR_LEN);
  // The header sum without the destination (zero in the template) and checksum: per packet only dst is added.
  const baseSum = cksumAdd(tmpl, IP, IPV4_HDR_LEN, 0);
  const ipDst = cfg.txIpDst >>> 0;
  const txFlags = txOlFlagsHi(cfg);
  const vlanTci = cfg.vlanTci;
  const vlanTciOuter = cfg.vlanTciOuter;

  const mb = ctx.mb;
  const u8 = ctx.heap.u8;
  const view = ctx.heap.view;
  const f64 = ctx.heap.f64;
  // The stream's 42 header bytes as ten 32-bit words and a 16-bit one, made once a burst: written
  // through the heap's DataView they compile to plain stores, where u8.set and byte loops were a
  // builtin call and 24 bounds-checked stores a packet (flowgen ran at 0.2 x DPDK 25.11's).
  const hdr = new Uint8Array(HDRS_LEN + 2);
  const hdrView = new DataView(hdr.buffer);
  const words = new Uint32Array(11);
  const burst = ctx.burst;
  /** Next flow index: per lcore, kept across streams and bursts (testpmd's per-lcore _next_flow). */
  let nextFlow = 0;

  return {
    name: 'flowgen',
    fwd(fs: FwdStream): void {
      const nRx = receive(ctx, fs);
      if (nRx > 0) mb.freeBulk(burst, nRx);

      const want = Math.min(ctx.config.burst, burst.length);
      let n = pool.allocBulk(burst, want);
      if (n === 0) {
        // Fewer than a burst left: take what there is, as testpmd's one-by-one raw alloc does.
        while (n < want) {
          const h = pool.alloc();
          if (h === 0) break;
          burst[n++] = h;
        }
        if (n === 0) return;
      }

      hdr.set(tmpl, 0);
      for (let k = 0; k < ETHER_ADDR_LEN; k++) {
        hdr[k] = fs.peerMac[k]!;
        hdr[ETHER_SRC_OFF + k] = fs.txMac[k]!;
      }
      for (let k = 0; k < 11; k++) words[k] = hdrView.getUint32(k * 4, true);
      let flow = nextFlow;
      for (let i = 0; i < n; i++) {
        const h = burst[i]!;
        const at = mb.mtod(h);
        for (let k = 0; k < 10; k++) view.setUint32(at + k * 4, words[k]!, true);
        view.setUint16(at + 40, words[10]!, true);
        const dst = (ipDst + flow) >>> 0;
        view.setUint32(at + IP + IPV4_DST_OFF, dst);
        view.setUint16(at + IP + IPV4_CKSUM_OFF, ~cksumFold(baseSum + (dst >>> 16) + (dst & 0xffff)) & 0xffff);
        // Zero payload, a word at a time.
        const end = at + pktLen;
        let o = at + HDRS_LEN;
        for (; o + 4 <= end; o += 4) view.setUint32(o, 0);
        for (; o < end; o++) u8[o] = 0;
        mb.setDataLen(h, pktLen);
        mb.setPktLen(h, pktLen);
        mb.setTxOffload(h, ETHER_HDR_LEN, IPV4_HDR_LEN, 0);
        mb.setOlFlagsHi(h, txFlags);
        mb.setVlanTci(h, vlanTci);
        mb.setVlanTciOuter(h, vlanTciOuter);
        if (++flow >= flows) flow = 0;
      }

      const before = f64[fs.stats + FS_TX_PACKETS]!;
      transmit(ctx, fs, n);
      const dropped = n - (f64[fs.stats + FS_TX_PACKETS]! - before);
      // Refused packets' flows come round again next time.
      if (dropped > 0) flow = (((flow - dropped) % flows) + flows) % flows;
      nextFlow = flow;
    },
  };
}
