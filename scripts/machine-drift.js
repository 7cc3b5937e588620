#!/usr/bin/env node
// How this machine's shared hardware drifts while nothing of ours runs: every
// PERIOD_MS, one CPU's copy bandwidth through the L3 (8 MiB TypedArray.set, the
// C library's memmove) and the cache-line round trip between CPUs 0 and 1 (the
// bench's CPU probe, src/apps/bench/cpu-probe.ts). A VM whose vCPUs the
// hypervisor moves between host cores, or whose L3 other tenants share, shows
// levels that switch on a scale of seconds; the two-process bench pairs follow
// such switches mid-run (docs/benchmarks.md, "Why the pairs are bimodal").
//
//   npm run build && node scripts/machine-drift.js [SAMPLES]    (default 200, 0.25 s apart)
//
// Prints one "GB/s/ns" pair per sample, then each figure's quartiles.
import { Worker } from 'node:worker_threads';
import { CpuProbe } from '../dist/src/apps/bench/cpu-probe.js';
import { summarize } from '../dist/src/apps/bench/stats.js';

const SAMPLES = Number(process.argv[2] ?? 200);
const PERIOD_MS = 200;
const COPY_MS = 50;

const copier = new Worker(
  `const { parentPort } = require('node:worker_threads');
   const a = new Uint8Array(8 << 20), b = new Uint8Array(8 << 20);
   a.fill(1);
   parentPort.on('message', (ms) => {
     const t0 = performance.now();
     let n = 0;
     while (performance.now() - t0 < ms) { b.set(a); n++; }
     parentPort.postMessage((n * a.length) / ((performance.now() - t0) / 1000) / 1e9);
   });`,
  { eval: true },
);
const probe = await CpuProbe.start();
if (!probe) {
  console.error('machine-drift: the CPU probe needs the native shim and two CPUs');
  process.exit(1);
}
const gbps = [];
const rtt = [];
for (let i = 0; i < SAMPLES; i++) {
  gbps.push(await new Promise((resolve) => {
    copier.once('message', resolve);
    copier.postMessage(COPY_MS);
  }));
  rtt.push((await probe.probe()).roundTripNs);
  await new Promise((r) => setTimeout(r, PERIOD_MS));
}
await probe.close();
await copier.terminate();
console.log(gbps.map((g, i) => `${g.toFixed(1)}/${Math.round(rtt[i])}`).join(' '));
const quartiles = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return `${q(0).toFixed(1)} | ${q(0.25).toFixed(1)} ${summarize(s).median.toFixed(1)} ${q(0.75).toFixed(1)} | ${q(1).toFixed(1)}`;
};
console.log(`copy GB/s (min | quartiles | max): ${quartiles(gbps)}`);
console.log(`cache-line round trip ns: ${quartiles(rtt)}`);
