/**
 * Watchers for the `observe` preset: while a dpkit testpmd forwards, N
 * telemetry clients each ask `/ethdev/stats,0` every 100 ms over the v2
 * socket (DPDK serves 10 at once: the others are refused and reconnect, as
 * real agents do) and M scrapers read `/metrics` every second, from this
 * process, on its event loop, off the measured lcores' CPU only as the OS
 * places it. Dashboard viewers read the page once and then its /events
 * stream (what a browser tab costs the server; the drawing is the browser's).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { recvMsg, sendMsg, unixConnect } from '../../native/unix.js';
import { closeFd } from '../../native/watch.js';
import { runtimeDir, TELEMETRY_SOCKET } from '../../telemetry/server.js';

export interface Watch {
  /** Telemetry clients connected to the testpmd's socket. */
  telemetry: number;
  /** Prometheus scrapers of its /metrics page. */
  metrics: number;
  /** Dashboard viewers: each holds the page's event stream open, as a browser tab does. */
  web: number;
}

const REQUEST = new TextEncoder().encode('/ethdev/stats,0');

/** Reads what is pending (the handshake, the last reply). @returns false when the server closed the connection. */
function drain(fd: number, buf: Uint8Array): boolean {
  for (let m = recvMsg(fd, buf); m; m = recvMsg(fd, buf)) if (m.bytes === 0) return false;
  return true;
}

/**
 * Watches until `stop` resolves. Failures (testpmd not up yet, refused
 * connections) are retried: the watchers only add load, they check nothing.
 */
export async function watchTestpmd(w: Watch, filePrefix: string, metricsUrl: string, webUrl: string, stop: Promise<unknown>): Promise<void> {
  let done = false;
  void stop.then(() => (done = true));
  const path = `${runtimeDir(filePrefix)}/${TELEMETRY_SOCKET}`;
  const buf = new Uint8Array(16384);
  const client = async () => {
    while (!done) {
      let fd = -1;
      try {
        fd = unixConnect(path, 'seqpacket');
        while (!done && drain(fd, buf) && sendMsg(fd, REQUEST) >= 0) await sleep(100);
        await sleep(100); // refused (over DPDK's 10 clients) or dropped: retry later
      } catch {
        await sleep(100);
      } finally {
        if (fd >= 0) closeFd(fd);
      }
    }
  };
  const scraper = async () => {
    while (!done) {
      await fetch(metricsUrl).then((r) => r.text()).catch(() => '');
      await sleep(1000);
    }
  };
  const viewer = async () => {
    while (!done) {
      const abort = new AbortController();
      void stop.then(() => abort.abort());
      try {
        await fetch(webUrl, { signal: abort.signal }).then((r) => r.text());
        const events = await fetch(`${webUrl}events`, { signal: abort.signal });
        for await (const _ of events.body!) if (done) break;
      } catch {
        // not up yet, or stopped
      }
      if (!done) await sleep(500);
    }
  };
  await Promise.all([...Array.from({ length: w.telemetry }, client), ...Array.from({ length: w.metrics }, scraper), ...Array.from({ length: w.web }, viewer)]);
}
