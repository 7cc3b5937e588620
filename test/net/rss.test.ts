import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RSS_DEFAULT_KEY, Toeplitz, rssInputIpv4 } from '../../src/net/rss.js';

const ip4 = (s: string) => s.split('.').map(Number);
/** Expands an IPv6 address to its 16 bytes. */
function ip6(s: string): number[] {
  const [head, tail] = s.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = [...h, ...new Array(8 - h.length - t.length).fill('0'), ...t];
  return groups.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff]);
}
const ports = (sp: number, dp: number) => [sp >> 8, sp & 0xff, dp >> 8, dp & 0xff];

// Microsoft's RSS verification suite ("Verifying the RSS Hash Calculation"), with its key.
const V4: [string, number, string, number, number, number][] = [
  ['66.9.149.187', 2794, '161.142.100.80', 1766, 0x323e8fc2, 0x51ccc178],
  ['199.92.111.2', 14230, '65.69.140.83', 4739, 0xd718262a, 0xc626b0ea],
  ['24.19.198.95', 12898, '12.22.207.184', 38024, 0xd2d0a5de, 0x5c2b394a],
  ['38.27.205.30', 48228, '209.142.163.6', 2217, 0x82989176, 0xafc7327f],
  ['153.39.163.191', 44251, '202.188.127.2', 1303, 0x5d1809c5, 0x10e828a2],
];
const V6: [string, number, string, number, number, number][] = [
  ['3ffe:2501:200:1fff::7', 2794, '3ffe:2501:200:3::1', 1766, 0x2cc18cd5, 0x40207d3d],
  ['3ffe:501:8::260:97ff:fe40:efab', 14230, 'ff02::1', 4739, 0x0f0c461c, 0xdde51bbf],
  ['3ffe:1900:4545:3:200:f8ff:fe21:67cf', 44251, 'fe80::200:f8ff:fe21:67cf', 38024, 0x4b61e985, 0x02d1feef],
];

describe('Toeplitz RSS hash', () => {
  const t = new Toeplitz(RSS_DEFAULT_KEY);

  for (const [src, sp, dst, dp, ipOnly, withPorts] of V4) {
    it(`IPv4 ${src}:${sp} -> ${dst}:${dp}`, () => {
      assert.equal(t.hash(rssInputIpv4(ip4(src), ip4(dst))).toString(16), ipOnly.toString(16));
      assert.equal(t.hash(rssInputIpv4(ip4(src), ip4(dst), sp, dp)).toString(16), withPorts.toString(16));
    });
  }

  for (const [src, sp, dst, dp, ipOnly, withPorts] of V6) {
    it(`IPv6 ${src}:${sp} -> ${dst}:${dp}`, () => {
      assert.equal(t.hash(Uint8Array.from([...ip6(src), ...ip6(dst)])).toString(16), ipOnly.toString(16));
      assert.equal(t.hash(Uint8Array.from([...ip6(src), ...ip6(dst), ...ports(sp, dp)])).toString(16), withPorts.toString(16));
    });
  }

  it('hashes a tuple split over two headers as the XOR of its parts', () => {
    const whole = rssInputIpv4(ip4('66.9.149.187'), ip4('161.142.100.80'), 2794, 1766);
    const l3 = whole.subarray(0, 8);
    const l4 = whole.subarray(8);
    assert.equal((t.hashAt(l3, 0, 8, 0) ^ t.hashAt(l4, 0, 4, 8)) >>> 0, 0x51ccc178);
  });

  it('refuses inputs longer than the key allows', () => {
    assert.throws(() => t.hash(new Uint8Array(37)), /at most 36/);
    assert.throws(() => new Toeplitz(new Uint8Array(4)), /at least 8 are needed/);
  });
});
