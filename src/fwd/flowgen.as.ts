// flowgen's kernel (twin: flowgenFillTwin in flowgen.twin.ts). `s` is the
// stream's block (fwd.record.ts: its header template, the template's sum and
// its engine's block), `lc` the lcore block (unused), `burst` a burst's heap
// offset.
import { mtod } from '../mem/mbuf.as';
import { MBUF_SHIFT, M_VLAN_TCI, M_VLAN_TCI_OUTER } from '../mem/mbuf-layout.as';
import { FWDE_FLOW, FWDE_FLOWS, FWDE_IP_DST, FWDE_OL_HI, FWDE_PKT_LEN, FWDE_VLAN, FWDE_VLAN_OUTER, FWDS_ENGINE, FWDS_SUM_NO_DST, FWDS_TMPL } from './fwd-layout.as';
import { genAddrSet, genFieldsSet } from './tx-fields.as';

/**
 * For each freshly allocated mbuf of the burst: its lengths and tx fields
 * (the VLAN ids whatever the offloads, as testpmd's flowgen), the stream's
 * 42-byte header with the IPv4 destination txIpDst + flow and its checksum
 * finished from the template's sum. The payload is left as the buffer held
 * it, as testpmd's flowgen and txonly leave it. The flow walks 0..flows-1
 * and wraps; the next one goes back to the engine's block.
 */
export function flowgenFill(s: u32, lc: u32, burst: u32, n: u32): void {
  const e = load<u32>(s, FWDS_ENGINE);
  const pktLen = load<u32>(e, FWDE_PKT_LEN);
  const olHi = load<u32>(e, FWDE_OL_HI);
  const vlan = <u16>load<u32>(e, FWDE_VLAN);
  const vlanOuter = <u16>load<u32>(e, FWDE_VLAN_OUTER);
  const ipDst = load<u32>(e, FWDE_IP_DST);
  const flows = load<u32>(e, FWDE_FLOWS);
  let flow = load<u32>(e, FWDE_FLOW);
  const sumNoDst = load<u32>(s, FWDS_SUM_NO_DST);
  const tmpl = s + FWDS_TMPL;
  const t0 = v128.load(tmpl);
  const t1 = v128.load(tmpl, 16);
  const t2 = load<u64>(tmpl, 32);
  const t3 = load<u16>(tmpl, 40);
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(burst + (i << 2)) << MBUF_SHIFT;
    genFieldsSet(r, pktLen, olHi);
    store<u16>(r, vlan, M_VLAN_TCI);
    store<u16>(r, vlanOuter, M_VLAN_TCI_OUTER);
    const p = mtod(r);
    v128.store(p, t0);
    v128.store(p, t1, 16);
    store<u64>(p, t2, 32);
    store<u16>(p, t3, 40);
    genAddrSet(p, 30, ipDst + flow, sumNoDst);
    flow++;
    flow = flow < flows ? flow : 0;
  }
  store<u32>(e, flow, FWDE_FLOW);
}
