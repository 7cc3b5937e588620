// A worker for unix.test.ts: a control channel serviced on the worker's own
// event loop. It connects, waits (watch) for a message carrying an eventfd,
// kicks that eventfd and replies, then closes everything and reports.
// With `linger`, it keeps its watch and only posts its fd: the test then
// terminates it, and the shim must close the watch as the worker goes.
import { parentPort, workerData } from 'node:worker_threads';
import { eventfdWrite } from '../../src/native/eventfd.js';
import { recvMsg, sendMsg, unixConnect } from '../../src/native/unix.js';
import { closeFd, READABLE, watch } from '../../src/native/watch.js';

const { path, linger } = workerData as { path: string; linger: boolean };
const fd = unixConnect(path, 'seqpacket');
watch(fd, (events) => {
  const buf = new Uint8Array(64);
  const m = recvMsg(fd, buf);
  if (!m) return;
  const [kick] = m.fds;
  eventfdWrite(kick!, 3);
  sendMsg(fd, Buffer.from('ack ' + Buffer.from(buf.subarray(0, m.bytes)).toString()));
  closeFd(kick!);
  closeFd(fd); // also unwatches: the worker's loop has nothing left and it exits
  parentPort!.postMessage({ events, received: m.fds.length });
}, READABLE);
if (linger) parentPort!.postMessage({ fd });
