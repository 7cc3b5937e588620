/**
 * The soak's driver pairs: every pair that needs no peer outside this
 * process, each as a testpmd command line with one forwarding lcore. The
 * soak forwards on them for minutes; the restart test stops and starts
 * them under one another.
 */
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nativeUnavailable } from '../../native/native.js';
import type { Testpmd } from '../testpmd/testpmd.js';

/** A 64-byte UDP frame, repeated: the capture net_pcap replays. */
function capture(): Uint8Array {
  const frames = 32;
  const out = new Uint8Array(24 + frames * (16 + 64));
  const v = new DataView(out.buffer);
  v.setUint32(0, 0xa1b2c3d4, true);
  v.setUint16(4, 2, true);
  v.setUint16(6, 4, true);
  v.setUint32(16, 65535, true);
  v.setUint32(20, 1, true); // Ethernet
  for (let i = 0; i < frames; i++) {
    const r = 24 + i * 80;
    v.setUint32(r + 8, 64, true);
    v.setUint32(r + 12, 64, true);
    const f = r + 16;
    out.set([2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00, 0x45, 0, 0, 50, 0, 0, 0, 0, 64, 17], f);
    out.set([10, 0, 0, i, 10, 0, 1, i], f + 26);
  }
  return out;
}

/** A soak pair: a testpmd command line, the bursts it starts with (tx_first), the socket files its ports make. */
export interface Pair {
  name: string;
  argv: string[];
  txFirst: number;
  sockets: string[];
}

/** The driver pairs the soak forwards on, as testpmd command lines; `skip` hears of a pair left out, and why. */
export function pairs(dir: string, skip: (line: string) => void): Pair[] {
  const pcap = join(dir, 'replay.pcap');
  writeFileSync(pcap, capture());
  const common = ['--', '--total-num-mbufs=8192', '--forward-mode=io'];
  const list: Pair[] = [
    { name: 'null', argv: ['-l', '0-1', '--vdev', 'net_null0,size=64', '--vdev', 'net_null1,size=64', ...common], txFirst: 0, sockets: [] },
    { name: 'ring', argv: ['-l', '0-1', '--vdev', 'net_ring0', '--vdev', 'net_ring1', ...common], txFirst: 4, sockets: [] },
    { name: 'pcap', argv: ['-l', '0-1', '--vdev', `net_pcap0,rx_pcap=${pcap},infinite_rx=1,tx_pcap=/dev/null`, '--vdev', `net_pcap1,rx_pcap=${pcap},infinite_rx=1,tx_pcap=/dev/null`, ...common], txFirst: 0, sockets: [] },
    // Both ends of one vhost-user path in one testpmd pair in process (vhost/in-process.ts): no socket, no peer.
    { name: 'vhost', argv: ['-l', '0-1', '--vdev', `net_vhost0,iface=${join(dir, 'soak-vhost.sock')}`, '--vdev', `virtio_user0,path=${join(dir, 'soak-vhost.sock')}`, ...common], txFirst: 4, sockets: [] },
    // Two cabled NIC models: descriptor rings, lazy tx reclaim, and the model's hardware thread.
    { name: 'nicsim', argv: ['-l', '0-1', '--vdev', 'net_nicsim0,peer=net_nicsim1', '--vdev', 'net_nicsim1', ...common], txFirst: 4, sockets: [] },
  ];
  // A memif server and its client in one testpmd, over a real socket file (not an abstract name)
  // so that closing the ports is seen to remove it; memfd regions and the control socket need the shim.
  const why = nativeUnavailable();
  if (why !== undefined) {
    skip(`memif: skipped: the native shim is ${why}`);
  } else {
    const sock = join(dir, 'soak-memif.sock');
    rmSync(sock, { force: true }); // a run killed before closing its ports left it
    const at = `socket=${sock},socket-abstract=no`;
    list.push({ name: 'memif', argv: ['-l', '0-1', '--vdev', `net_memif0,role=server,${at}`, '--vdev', `net_memif1,role=client,${at}`, ...common], txFirst: 4, sockets: [sock] });
  }
  return list;
}

/**
 * Stops each pair's testpmd (when forwarding) and closes it, then looks for
 * its socket files: @returns the problems, one line each naming the pair
 * (a LeakError's line when a pool is not full).
 */
export async function closePairs(runs: readonly (Pair & { pmd: Testpmd })[]): Promise<string[]> {
  const problems: string[] = [];
  for (const r of runs) {
    try {
      if (r.pmd.forwarding) await r.pmd.stop();
      r.pmd.close(); // LeakError when a pool is not full
    } catch (e) {
      problems.push(`${r.name}: ${(e as Error).message}`);
    }
    for (const f of r.sockets) if (existsSync(f)) problems.push(`${r.name}: ${f} left behind once its ports closed`);
  }
  return problems;
}
