// Answers each message with this thread's nowNs() (test/eal/clock.test.ts).
import { parentPort } from 'node:worker_threads';
import { clockIsNative, clockUncertaintyNs, nowNs } from '../../src/eal/clock.js';

parentPort!.on('message', (m: string) => {
  if (m === 'stop') parentPort!.close();
  else parentPort!.postMessage({ now: nowNs(), u: clockUncertaintyNs(), native: clockIsNative() });
});
