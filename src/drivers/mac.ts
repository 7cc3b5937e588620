/**
 * A stable, locally administered MAC for a virtual device, derived from its
 * name (DPDK's vdevs draw a random one; a stable one makes runs repeatable).
 */
export function vdevMac(name: string): Uint8Array {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  const mac = new Uint8Array(6);
  mac[0] = 0x02; // locally administered, unicast
  mac[1] = 0x64; // 'd'
  for (let i = 2; i < 6; i++) mac[i] = (h >>> ((i - 2) * 8)) & 0xff;
  return mac;
}
