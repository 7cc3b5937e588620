/**
 * The engines' blocks in the heap (fwd.record.ts), which their kernels and
 * twins read: an engine's settings, written once when the engine is made,
 * and what it keeps per stream, written the first time it forwards the
 * stream (a stream's ports never change while it runs).
 */
import { OlFlagsHi } from '../mem/mbuf-layout.js';
import type { FwdContext, FwdStream } from './engine.js';
import {
  FWD_ENGINE_SIZE,
  FWD_STREAM_SIZE,
  FWDE_F_MULTI_FLOW,
  FWDE_F_QINQ,
  FWDE_F_VLAN,
  FWDE_W_FLAGS,
  FWDE_W_IP_DST,
  FWDE_W_IP_VAR,
  FWDE_W_KEEP_HI,
  FWDE_W_OL_HI,
  FWDE_W_PKT_LEN,
  FWDE_W_VLAN,
  FWDE_W_VLAN_OUTER,
  FWDS_MAC,
  FWDS_W_ENGINE,
  FWDS_W_STATS,
} from './fwd-layout.js';
import { KEEP_HI, txOlFlagsHi } from './tx-fields.js';

/**
 * Reserves and writes the block of engine `name` from ctx.config: the tx
 * flags and VLAN ids of ol_flags_init, the kept flag bits, txonly's packet
 * length, destination and flow variable (0).
 * @returns its heap offset. Throws NoMemError when the heap is full.
 */
export function engineBlock(ctx: FwdContext, name: string): number {
  const { heap, config } = ctx;
  const e = heap.reserve(FWD_ENGINE_SIZE, 64, `${name} engine`);
  const u32 = heap.u32;
  const w = e >>> 2;
  const olHi = txOlFlagsHi(config);
  u32[w + FWDE_W_OL_HI] = olHi;
  u32[w + FWDE_W_KEEP_HI] = KEEP_HI;
  u32[w + FWDE_W_VLAN] = config.vlanTci;
  u32[w + FWDE_W_VLAN_OUTER] = config.vlanTciOuter;
  u32[w + FWDE_W_FLAGS] =
    (olHi & OlFlagsHi.TX_VLAN ? FWDE_F_VLAN : 0) | (olHi & OlFlagsHi.TX_QINQ ? FWDE_F_QINQ : 0) | (config.txOnlyMultiFlow ? FWDE_F_MULTI_FLOW : 0);
  u32[w + FWDE_W_PKT_LEN] = config.txPkts.reduce((a, b) => a + b, 0);
  u32[w + FWDE_W_IP_DST] = config.txIpDst;
  u32[w + FWDE_W_IP_VAR] = 0;
  return e;
}

/**
 * The per-stream blocks of the engine whose block is `e`: each made on a
 * stream's first lookup with its engine, its counters and its 12 address
 * bytes (the peer, then the tx port), then handed to `init` for what the
 * engine adds (txonly's template).
 * @returns the lookup, fs → the block's heap offset.
 */
export function streamBlocks(ctx: FwdContext, e: number, name: string, init?: (s: number, fs: FwdStream) => void): (fs: FwdStream) => number {
  const heap = ctx.heap;
  const blocks = new WeakMap<FwdStream, number>();
  return (fs) => {
    let s = blocks.get(fs);
    if (s === undefined) {
      s = heap.reserve(FWD_STREAM_SIZE, 64, `${name} stream`);
      const w = s >>> 2;
      heap.u32[w + FWDS_W_ENGINE] = e;
      heap.u32[w + FWDS_W_STATS] = fs.stats * 8;
      heap.u8.set(fs.peerMac.subarray(0, 6), s + FWDS_MAC);
      heap.u8.set(fs.txMac.subarray(0, 6), s + FWDS_MAC + 6);
      init?.(s, fs);
      blocks.set(fs, s);
    }
    return s;
  };
}
