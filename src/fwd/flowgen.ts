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
 * (txUdpSrc → txUdpDst, checksum 0 = none), the payload as the buffer held
 * it (as testpmd's flowgen and txonly: only headers are written); one segment of
 * sum(txPkts) bytes (testpmd's flowgen subtracts 4 for the FCS; dpkit's
 * lengths exclude it already). VLAN / QinQ insert flags follow the tx
 * offloads, as in testpmd. flowgen's clone option is not implemented.
 *
 * The engine reads the packet shape from ctx.config when it is made (testpmd
 * builds its engines at `start`); burst size is read each pass. The packets
 * are filled by the kernel flowgenFill (flowgen.as.ts) or its twin
 * (flowgen.twin.ts); rx, allocation, tx and the flow's back-out are here.
 */
import { ArgError } from '../errors.js';
import { cksumAdd } from '../net/checksum.js';
import { ETHER_HDR_LEN } from '../net/ether.js';
import { IPV4_CKSUM_OFF, IPV4_DST_OFF, IPV4_HDR_LEN } from '../net/headers.js';
import { engineBlock, streamBlocks } from './blocks.js';
import { receive, transmit } from './common.js';
import type { Mempool } from '../mem/mempool.js';
import { FS_TX_PACKETS, type FwdConfig, type FwdContext, type FwdEngine, type FwdStream } from './engine.js';
import { flowgenOps } from './flowgen.twin.js';
import { FWDE_W_FLOW, FWDE_W_FLOWS, FWDS_TMPL, FWDS_W_SUM_NO_DST } from './fwd-layout.js';
import { TXONLY_HDR_LEN, txonlyTemplate } from './txonly.js';

/** Ethernet + IPv4 + UDP: the smallest packet flowgen can build. */
const HDRS_LEN = TXONLY_HDR_LEN;
/** The IPv4 header's checksum and destination in the packet. */
const IP_CKSUM_AT = ETHER_HDR_LEN + IPV4_CKSUM_OFF;
const IP_DST_AT = ETHER_HDR_LEN + IPV4_DST_OFF;

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
  const { heap, pool, burst, mb } = ctx;
  const cfg = ctx.config;
  flowgenCheck(cfg, pool);
  const pktLen = cfg.txPkts.reduce((a, b) => a + b, 0);
  const flows = cfg.flowgenFlows;
  const u32 = heap.u32;
  const f64 = heap.f64;
  const lc = heap.lcore;
  const e = engineBlock(ctx, 'flowgen');
  const flowAt = (e >>> 2) + FWDE_W_FLOW;
  u32[(e >>> 2) + FWDE_W_FLOWS] = flows;
  u32[flowAt] = 0;
  // txonly's header with the destination and checksum left 0: each packet adds its destination to the sum.
  const block = streamBlocks(ctx, e, 'flowgen', (s, fs) => {
    const t = txonlyTemplate(cfg, pktLen, fs.txMac, fs.peerMac);
    t.fill(0, IP_CKSUM_AT, IP_CKSUM_AT + 2);
    t.fill(0, IP_DST_AT, IP_DST_AT + 4);
    heap.u8.set(t, s + FWDS_TMPL);
    u32[(s >>> 2) + FWDS_W_SUM_NO_DST] = cksumAdd(t, ETHER_HDR_LEN, IPV4_HDR_LEN, 0);
  });
  const fill = flowgenOps(heap);

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
      fill(block(fs), lc, burst.heapOffset, n);

      const before = f64[fs.stats + FS_TX_PACKETS]!;
      transmit(ctx, fs, n);
      const dropped = n - (f64[fs.stats + FS_TX_PACKETS]! - before);
      // Refused packets' flows come round again next time.
      if (dropped > 0) u32[flowAt] = (((u32[flowAt]! - dropped) % flows) + flows) % flows;
    },
  };
}
