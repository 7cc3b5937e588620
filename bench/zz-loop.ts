import { drivers } from '../src/drivers/index.js';
import { Ethdev } from '../src/ethdev/ethdev.js';
import { Heap } from '../src/mem/heap.js';
import { Mbufs } from '../src/mem/mbuf.js';
import { Mempool } from '../src/mem/mempool.js';
const size = Number(process.argv[2] ?? 64);
const dir = process.argv[3] ?? 'h2g';
const heap = Heap.create({ size: 256 << 20 });
const hp = Mempool.create(heap, { name: 'h', n: 16384, cacheSize: 256 });
const gp = Mempool.create(heap, { name: 'g', n: 16384, cacheSize: 256 });
const e = new Ethdev(heap, drivers);
const h = e.create('net_vhost0,iface=/x');
const g = e.create('virtio_user0,path=/x');
for (const [p, pool] of [[h, hp], [g, gp]] as const) { e.configure(p, 1, 1); e.rxQueueSetup(p, 0, 0, pool); e.txQueueSetup(p, 0, 0); e.start(p); }
const mb = new Mbufs(heap);
const b = heap.burst(32), r = heap.burst(32);
const [tx, rx, pool] = dir === 'h2g' ? [h, g, hp] : [g, h, gp];
const txq = e.txQueue(tx, 0), rxq = e.rxQueue(rx, 0);
let total = 0;
const t0 = performance.now();
while (performance.now() - t0 < 3000) {
  for (let k = 0; k < 100; k++) {
    if (pool.allocBulk(b, 32) !== 32) throw new Error('pool');
    for (let i = 0; i < 32; i++) { mb.setDataLen(b[i]!, size); mb.setPktLen(b[i]!, size); }
    const s = txq.txBurst(b, 32);
    if (s < 32) mb.freeBulk(b, 32 - s, s);
    const n = rxq.rxBurst(r, 32);
    total += n;
    mb.freeBulk(r, n);
  }
}
console.log(dir, size, (total / 3 / 1e6).toFixed(2), 'Mpps', JSON.stringify(e.xstats(h)), JSON.stringify(e.xstats(g)));
