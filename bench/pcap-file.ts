/**
 * `npm run bench -- pcap-file`: capture file throughput of dpkit's streaming
 * reader and buffered writer, in Mpps and MB/s (file bytes, record headers
 * included), on one thread against the page cache. The replay path through
 * testpmd beside DPDK is the `pcap` preset.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Benchmark, BenchCase } from '../src/apps/bench/types.js';
import { summarize } from '../src/apps/bench/stats.js';
import { PcapReader } from '../src/pcap/reader.js';
import { PcapWriter } from '../src/pcap/writer.js';

const dir = mkdtempSync(join(tmpdir(), 'dpkit-pcap-file-'));
process.once('exit', () => rmSync(dir, { recursive: true, force: true }));

/** Packets per file: about 100 MB at 1518 B, 2 M at 64 B. */
const count = (size: number) => Math.min(2_000_000, Math.floor(100e6 / (size + 16)));

function write(file: string, size: number, format: 'pcap' | 'pcapng'): number {
  const frame = new Uint8Array(size).fill(0x5a);
  const n = count(size);
  const t0 = performance.now();
  const w = PcapWriter.create(file, { format });
  for (let i = 0; i < n; i++) w.write(frame, 0, size, 1_700_000_000 + (i >>> 20), i & 0xfffff);
  w.close();
  return n / ((performance.now() - t0) / 1000) / 1e6;
}

function read(file: string): number {
  const t0 = performance.now();
  const r = new PcapReader(file);
  let n = 0;
  let sum = 0;
  while (r.next()) {
    n++;
    sum += r.window[r.dataOff]!; // touch the packet, as a consumer would
  }
  r.close();
  if (sum < 0) throw new Error('unreachable');
  return n / ((performance.now() - t0) / 1000) / 1e6;
}

export const benchmark: Benchmark = {
  name: 'pcap-file',
  title: 'capture files: streaming read and buffered write on one thread (Mpps)',
  defaults: { reps: 5 },
  cases: (opts) => {
    const sizes = opts.quick ? [64] : [64, 1518];
    const out: BenchCase[] = [];
    for (const format of ['pcap', 'pcapng'] as const) {
      for (const size of sizes) {
        const file = join(dir, `${size}.${format}`);
        out.push({ name: `write ${format} ${size} B`, params: { op: 'write', format, size }, measure: async () => ({ mpps: write(file, size, format), gc: 0 }) });
        out.push({ name: `read ${format} ${size} B`, params: { op: 'read', format, size }, measure: async () => ({ mpps: read(file), gc: 0 }) });
      }
    }
    return out;
  },
  summary: (results) =>
    results
      .map((r) => {
        const mpps = summarize(r.samples).median;
        const file = join(dir, `${r.params['size']}.${r.params['format']}`);
        const bytesPerPacket = statSync(file).size / count(Number(r.params['size']));
        return `${r.name}: ${mpps.toFixed(2)} Mpps, ${((mpps * bytesPerPacket) | 0).toString()} MB/s`;
      })
      .join('\n'),
};
