// txonly's kernel for single-segment packets (twin: txonlyFillTwin in
// txonly.twin.ts). `s` is the stream's block (fwd.record.ts: its header
// template and its engine's block), `lc` the lcore block (its id goes into
// multi-flow sources), `burst` a burst's heap offset.
import { LCORE_ID } from '../eal/heap-layout.as';
import { mtod } from '../mem/mbuf.as';
import { MBUF_SHIFT, M_VLAN_TCI, M_VLAN_TCI_OUTER } from '../mem/mbuf-layout.as';
import {
  FWDE_FLAGS,
  FWDE_F_MULTI_FLOW,
  FWDE_F_QINQ,
  FWDE_F_VLAN,
  FWDE_IP_DST,
  FWDE_IP_VAR,
  FWDE_OL_HI,
  FWDE_PKT_LEN,
  FWDE_VLAN,
  FWDE_VLAN_OUTER,
  FWDS_ENGINE,
  FWDS_SUM_NO_SRC,
  FWDS_TMPL,
} from './fwd-layout.as';
import { genAddrSet, genFieldsSet } from './tx-fields.as';

/**
 * For each freshly allocated mbuf of the burst: its lengths and tx fields,
 * and the 42-byte Ethernet/IPv4/UDP header copied from the stream's
 * template. With multi-flow, the IPv4 source becomes (dst | var << 8) +
 * lcore and the header checksum is finished from the template's sum without
 * the source; the 8-bit flow variable goes back to the engine's block.
 */
export function txonlyFill(s: u32, lc: u32, burst: u32, n: u32): void {
  const e = load<u32>(s, FWDS_ENGINE);
  const pktLen = load<u32>(e, FWDE_PKT_LEN);
  const olHi = load<u32>(e, FWDE_OL_HI);
  const flags = load<u32>(e, FWDE_FLAGS);
  const setVlan = flags & FWDE_F_VLAN;
  const setQinq = flags & FWDE_F_QINQ;
  const multiFlow = flags & FWDE_F_MULTI_FLOW;
  const vlan = load<u32>(e, FWDE_VLAN);
  const vlanOuter = load<u32>(e, FWDE_VLAN_OUTER);
  const ipDst = load<u32>(e, FWDE_IP_DST);
  let ipVar = load<u32>(e, FWDE_IP_VAR);
  const lcore = load<u32>(lc, LCORE_ID);
  const sumNoSrc = load<u32>(s, FWDS_SUM_NO_SRC);
  const tmpl = s + FWDS_TMPL;
  const t0 = v128.load(tmpl);
  const t1 = v128.load(tmpl, 16);
  const t2 = load<u64>(tmpl, 32);
  const t3 = load<u16>(tmpl, 40);
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(burst + (i << 2)) << MBUF_SHIFT;
    genFieldsSet(r, pktLen, olHi);
    if (setVlan) store<u16>(r, <u16>vlan, M_VLAN_TCI);
    if (setQinq) store<u16>(r, <u16>vlanOuter, M_VLAN_TCI_OUTER);
    const p = mtod(r);
    v128.store(p, t0);
    v128.store(p, t1, 16);
    store<u64>(p, t2, 32);
    store<u16>(p, t3, 40);
    if (multiFlow) {
      const src = (ipDst | ((ipVar & 0xff) << 8)) + lcore;
      ipVar = (ipVar + 1) & 0xff;
      genAddrSet(p, 26, src, sumNoSrc);
    }
  }
  store<u32>(e, ipVar, FWDE_IP_VAR);
}
