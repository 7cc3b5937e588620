/**
 * A testpmd user engine: VLAN push on the way from an even port to its pair
 * (port 0 -> 1), VLAN pop on the way back (1 -> 0). Run it with
 * `dpkit testpmd ... -- --forward-mode=./dist/examples/vlan-engine/engine.js`.
 * Everything goes through the public mbuf accessors; nothing is allocated per packet.
 */
import type { Burst, Mbufs, UserEngine, UserEngineContext, UserStream } from 'dpkit';

/** The tag pushed: VLAN id 100, priority 0 (the TCI). */
export const VLAN_TCI = 100;
const TPID_VLAN = 0x8100;
/** Destination and source addresses: what moves when a tag goes in or out. */
const MACS = 12;
const TAG = 4;

let mbufs: Mbufs;
let u8: Uint8Array;

/** Views once per lcore, before forwarding. */
function setup(ctx: UserEngineContext): void {
  mbufs = ctx.mbufs;
  u8 = ctx.heap.u8;
}

/** Inserts the tag after the addresses. @returns false (nothing changed) for a runt or a full headroom. */
function push(h: number): boolean {
  if (mbufs.dataLen(h) < MACS + 2) return false;
  const p = mbufs.prepend(h, TAG);
  if (p < 0) return false;
  u8.copyWithin(p, p + TAG, p + TAG + MACS);
  u8[p + MACS] = TPID_VLAN >>> 8;
  u8[p + MACS + 1] = TPID_VLAN & 0xff;
  u8[p + MACS + 2] = VLAN_TCI >>> 8;
  u8[p + MACS + 3] = VLAN_TCI & 0xff;
  return true;
}

/** Removes an outer 802.1Q tag; an untagged frame passes unchanged. */
function pop(h: number): void {
  if (mbufs.dataLen(h) < MACS + TAG) return;
  const p = mbufs.mtod(h);
  if (u8[p + MACS] !== TPID_VLAN >>> 8 || u8[p + MACS + 1] !== (TPID_VLAN & 0xff)) return;
  u8.copyWithin(p + TAG, p, p + MACS);
  mbufs.adj(h, TAG);
}

function burst(b: Burst, n: number, stream: UserStream): number {
  if ((stream.rxPort & 1) === 1) {
    for (let i = 0; i < n; i++) pop(b[i]!);
    return n;
  }
  // Push, keeping the tagged packets in order at the front; what cannot take a tag is dropped.
  let k = 0;
  for (let i = 0; i < n; i++) {
    const h = b[i]!;
    if (push(h)) b[k++] = h;
    else mbufs.free(h);
  }
  return k;
}

export const engine: UserEngine = { setup, burst };
