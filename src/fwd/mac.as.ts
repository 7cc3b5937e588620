// mac's kernel (twin: macFwdTwin in mac.twin.ts). `s` is the stream's block
// (fwd.record.ts: its address words and its engine's block), `lc` the lcore
// block (unused), `burst` a burst's heap offset.
import { mtod } from '../mem/mbuf.as';
import { MBUF_SHIFT, M_VLAN_TCI, M_VLAN_TCI_OUTER } from '../mem/mbuf-layout.as';
import { FWDE_KEEP_HI, FWDE_OL_HI, FWDE_VLAN, FWDE_VLAN_OUTER, FWDS_ENGINE, FWDS_MAC } from './fwd-layout.as';
import { olFlagsHi, txFieldsSet } from './tx-fields.as';

/**
 * macfwd: write the 12 address bytes (peer, then tx port), then the tx
 * fields as macfwd does (VLAN ids set on every packet).
 */
export function macFwd(s: u32, lc: u32, burst: u32, n: u32): void {
  const e = load<u32>(s, FWDS_ENGINE);
  const w0 = load<u32>(s, FWDS_MAC);
  const w1 = load<u32>(s, FWDS_MAC + 4);
  const w2 = load<u32>(s, FWDS_MAC + 8);
  const ol = olFlagsHi(load<u32>(e, FWDE_OL_HI));
  const keep = olFlagsHi(load<u32>(e, FWDE_KEEP_HI));
  const vlan = load<u32>(e, FWDE_VLAN);
  const vlanOuter = load<u32>(e, FWDE_VLAN_OUTER);
  for (let i: u32 = 0; i < n; i++) {
    const r = load<u32>(burst + (i << 2)) << MBUF_SHIFT;
    const p = mtod(r);
    store<u32>(p, w0);
    store<u32>(p, w1, 4);
    store<u32>(p, w2, 8);
    txFieldsSet(r, ol, keep);
    store<u16>(r, <u16>vlan, M_VLAN_TCI);
    store<u16>(r, <u16>vlanOuter, M_VLAN_TCI_OUTER);
  }
}
