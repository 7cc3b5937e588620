import assert from 'node:assert/strict';
import { existsSync, fstatSync, mkdtempSync, readFileSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { startWorker } from '../../src/eal/spawn.js';
import { eventfdCreate, eventfdRead } from '../../src/native/eventfd.js';
import { memfdCreate } from '../../src/native/memory.js';
import { NativeError } from '../../src/native/native.js';
import { abstractName, recvMsg, sendMsg, unixAccept, unixConnect, unixListen, type UnixSocketType } from '../../src/native/unix.js';
import { closeFd, READABLE, unwatch, watch } from '../../src/native/watch.js';
import { joinWorkers } from '../helpers.js';
import { noShim, openFds } from './util.js';

const dir = noShim ? '' : mkdtempSync(join(tmpdir(), 'dpkit-unix-'));
after(() => dir && rmSync(dir, { recursive: true, force: true }));

/** A connected pair: [client, server side], and the listener, all to close. */
function pair(type: UnixSocketType, path = join(dir, `${type}-${Math.random().toString(36).slice(2)}.sock`)) {
  const listener = unixListen(path, type);
  const client = unixConnect(path, type);
  // A unix connect is queued on the listener when it returns: accept cannot miss it.
  const server = unixAccept(listener);
  assert.ok(server >= 0);
  return { listener, client, server, close: () => [client, server, listener].forEach(closeFd) };
}

/** n memfds, the i-th holding "region i". */
function regions(n: number): number[] {
  return Array.from({ length: n }, (_, i) => {
    const fd = memfdCreate(`region${i}`, 4096);
    writeSync(fd, Buffer.from(`region ${i}`), 0, 8, 0);
    return fd;
  });
}

function contentOf(fd: number): string {
  const b = Buffer.alloc(8);
  readSync(fd, b, 0, 8, 0);
  return b.toString();
}

const O_CLOEXEC = 0o2000000;
function closeOnExec(fd: number): boolean {
  const flags = /flags:\s+(\d+)/.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))![1]!;
  return (parseInt(flags, 8) & O_CLOEXEC) !== 0;
}

describe('unix sockets with fds', { skip: noShim }, () => {
  for (const type of ['stream', 'seqpacket'] as const) {
    it(`passes 8 fds (a vhost-user memory table) in one ${type} message, as close-on-exec copies of the same files`, () => {
      const p = pair(type);
      const sent = regions(8);
      assert.equal(sendMsg(p.client, Buffer.from('SET_MEM_TABLE'), sent), 13);
      const buf = new Uint8Array(64);
      const m = recvMsg(p.server, buf)!;
      assert.equal(Buffer.from(buf.subarray(0, m.bytes)).toString(), 'SET_MEM_TABLE');
      assert.equal(m.fds.length, 8);
      assert.equal(m.truncated || m.fdsTruncated, false);
      m.fds.forEach((fd, i) => {
        assert.equal(fstatSync(fd).ino, fstatSync(sent[i]!).ino);
        assert.equal(contentOf(fd), `region ${i}`);
        assert.ok(closeOnExec(fd), `received fd ${fd} is close-on-exec`);
      });
      assert.equal(recvMsg(p.server, buf), null, 'nothing more is pending');
      [...sent, ...m.fds].forEach(closeFd);
      p.close();
    });
  }

  it('keeps message boundaries on seqpacket, with each message its own fds, and says when one was cut short', () => {
    const p = pair('seqpacket');
    const [a, b, c] = regions(3);
    sendMsg(p.client, Buffer.from('one'), [a!]);
    sendMsg(p.client, Buffer.from('two!'));
    sendMsg(p.client, Buffer.from('three'), [b!, c!]);
    sendMsg(p.client, Buffer.alloc(100, 0x41));
    const buf = new Uint8Array(16);
    const got = [];
    for (let m = recvMsg(p.server, buf); m; m = recvMsg(p.server, buf)) {
      got.push({ text: Buffer.from(buf.subarray(0, m.bytes)).toString(), fds: m.fds.map(contentOf), truncated: m.truncated });
      m.fds.forEach(closeFd);
    }
    assert.deepEqual(got, [
      { text: 'one', fds: ['region 0'], truncated: false },
      { text: 'two!', fds: [], truncated: false },
      { text: 'three', fds: ['region 1', 'region 2'], truncated: false },
      { text: 'A'.repeat(16), fds: [], truncated: true },
    ]);
    [a!, b!, c!].forEach(closeFd);
    p.close();
  });

  it('reads a stream peer that closed as 0 bytes, and an empty socket as null', () => {
    const p = pair('stream');
    const buf = new Uint8Array(8);
    assert.equal(recvMsg(p.server, buf), null);
    closeFd(p.client);
    assert.deepEqual(recvMsg(p.server, buf), { bytes: 0, fds: [], truncated: false, fdsTruncated: false });
    closeFd(p.server);
    closeFd(p.listener);
    assert.equal(unixAccept(unixListen(join(dir, 'lonely.sock'), 'stream')) , -1, 'no connection pending');
  });

  it('listens and connects on a Linux abstract name, with no file made', () => {
    const name = `dpkit-test-${process.pid}`;
    const p = pair('seqpacket', abstractName(name));
    assert.match(readFileSync('/proc/net/unix', 'utf8'), new RegExp(`@${name}\\n`));
    assert.equal(existsSync(name), false);
    assert.equal(sendMsg(p.client, Buffer.from('hi')), 2);
    assert.equal(recvMsg(p.server, new Uint8Array(4))!.bytes, 2);
    p.close();
    assert.doesNotMatch(readFileSync('/proc/net/unix', 'utf8'), new RegExp(`@${name}\\n`), 'the name went with its last socket');
  });

  it('services a control channel from readiness callbacks on the main thread: accept, receive, reply, no timers', async () => {
    const path = join(dir, 'echo.sock');
    const listener = unixListen(path, 'stream');
    const served = new Promise<string>((resolve) => {
      watch(listener, () => {
        const conn = unixAccept(listener);
        if (conn < 0) return;
        watch(conn, () => {
          const buf = new Uint8Array(64);
          const m = recvMsg(conn, buf);
          if (!m) return;
          if (m.bytes === 0) {
            closeFd(conn);
            resolve('peer closed');
            return;
          }
          sendMsg(conn, Buffer.concat([Buffer.from('echo '), buf.subarray(0, m.bytes)]), m.fds);
          m.fds.forEach(closeFd);
        });
      });
    });
    const client = unixConnect(path, 'stream');
    const efd = eventfdCreate(5);
    sendMsg(client, Buffer.from('hello'), [efd]);
    const reply = await new Promise<{ text: string; count: number }>((resolve) =>
      watch(client, () => {
        const buf = new Uint8Array(64);
        const m = recvMsg(client, buf);
        if (!m) return;
        unwatch(client);
        const count = eventfdRead(m.fds[0]!);
        m.fds.forEach(closeFd);
        resolve({ text: Buffer.from(buf.subarray(0, m.bytes)).toString(), count });
      }),
    );
    assert.deepEqual(reply, { text: 'echo hello', count: 5 });
    closeFd(client);
    assert.equal(await served, 'peer closed');
    closeFd(listener);
    closeFd(efd);
  });

  it("services a control channel in a worker thread, on the worker's own loop", async () => {
    const path = abstractName(`dpkit-worker-${process.pid}`);
    const listener = unixListen(path, 'seqpacket');
    const worker = startWorker('socket.worker', import.meta.url, { workerData: { path, linger: false } });
    const done = joinWorkers<{ events: number; received: number }>([worker]);
    const kick = eventfdCreate();
    const kicked = new Promise<number>((resolve) => watch(kick, () => resolve(eventfdRead(kick))));
    const conn = await new Promise<number>((resolve) =>
      watch(listener, () => {
        const c = unixAccept(listener);
        if (c >= 0) resolve(c);
      }),
    );
    unwatch(listener);
    sendMsg(conn, Buffer.from('SET_VRING_KICK'), [kick]);
    assert.equal(await kicked, 3);
    const ack = await new Promise<string>((resolve) =>
      watch(conn, () => {
        const buf = new Uint8Array(64);
        const m = recvMsg(conn, buf);
        if (m) resolve(Buffer.from(buf.subarray(0, m.bytes)).toString());
      }),
    );
    assert.equal(ack, 'ack SET_VRING_KICK');
    assert.deepEqual(await done, [{ events: READABLE, received: 1 }]);
    [conn, listener, kick].forEach(closeFd);
  });

  it('closes the watches of a worker terminated while it watches; its fds stay open, owned by whoever holds the number', async () => {
    const path = abstractName(`dpkit-linger-${process.pid}`);
    const listener = unixListen(path, 'seqpacket');
    const worker = startWorker('socket.worker', import.meta.url, { workerData: { path, linger: true } });
    const { fd } = await new Promise<{ fd: number }>((resolve) => worker.once('message', resolve));
    assert.equal(await worker.terminate(), 1);
    const conn = unixAccept(listener);
    assert.equal(recvMsg(conn, new Uint8Array(4)), null, "fds belong to the process: the worker's socket outlives it");
    closeFd(fd);
    assert.deepEqual(recvMsg(conn, new Uint8Array(4)), { bytes: 0, fds: [], truncated: false, fdsTruncated: false });
    [conn, listener].forEach(closeFd);
  });

  it('reports bad paths, dead peers and bad fds as NativeError naming the path or fd, leaking no fd', () => {
    const stale = join(dir, 'stale.sock');
    closeFd(unixListen(stale, 'stream')); // the file stays; nothing listens
    const busy = unixListen(join(dir, 'busy.sock'), 'seqpacket');
    const p = pair('stream');
    const before = openFds();
    const cases: [string, () => unknown, Partial<NativeError>][] = [
      ['path too long', () => unixListen('/tmp/' + 'x'.repeat(103), 'stream'), { code: 'ENAMETOOLONG', syscall: 'bind' }],
      ['abstract name too long', () => unixConnect(abstractName('y'.repeat(108)), 'stream'), { code: 'ENAMETOOLONG', what: '@' + 'y'.repeat(108) }],
      ['connect to nothing', () => unixConnect(join(dir, 'nobody.sock'), 'stream'), { code: 'ENOENT', syscall: 'connect', what: join(dir, 'nobody.sock') }],
      ['connect to a stale socket file', () => unixConnect(stale, 'stream'), { code: 'ECONNREFUSED', what: stale }],
      ['connect to an abstract name nobody holds', () => unixConnect(abstractName(`dpkit-none-${process.pid}`), 'seqpacket'), { code: 'ECONNREFUSED' }],
      ['wrong socket type', () => unixConnect(join(dir, 'busy.sock'), 'stream'), { code: 'EPROTOTYPE' }],
      ['listen where a socket is', () => unixListen(join(dir, 'busy.sock'), 'seqpacket'), { code: 'EADDRINUSE', syscall: 'bind' }],
      ['accept on a bad fd', () => unixAccept(987_654), { code: 'EBADF', syscall: 'accept', what: 'fd 987654' }],
      ['send on a bad fd', () => sendMsg(987_654, Buffer.from('x')), { code: 'EBADF', syscall: 'sendmsg' }],
      ['send a bad fd', () => sendMsg(p.client, Buffer.from('x'), [987_654]), { code: 'EBADF', syscall: 'sendmsg' }],
      ['send too many fds', () => sendMsg(p.client, Buffer.from('x'), new Array(254).fill(p.client)), { code: 'EINVAL', syscall: 'sendmsg' }],
      ['receive on a bad fd', () => recvMsg(987_654, new Uint8Array(4)), { code: 'EBADF', syscall: 'recvmsg' }],
      ['receive on a listener', () => recvMsg(busy, new Uint8Array(4)), { code: 'ENOTCONN', syscall: 'recvmsg' }],
      ['watch a bad fd', () => watch(987_654, () => {}), { code: 'EBADF', syscall: 'uv_poll_init' }],
      ['close a bad fd', () => closeFd(987_654), { code: 'EBADF', syscall: 'close' }],
    ];
    for (const [what, call, expected] of cases) {
      assert.throws(call, (e) => e instanceof NativeError && Object.entries(expected).every(([k, v]) => (e as unknown as Record<string, unknown>)[k] === v) && e.message.includes(e.what), what);
    }
    assert.equal(recvMsg(p.server, new Uint8Array(4)), null, 'the refused sends sent nothing');
    assert.deepEqual(openFds(), before);
    closeFd(-1); // a no-op, for owners that mark a closed fd -1
    assert.equal(unwatch(p.server), false, 'unwatching what is not watched is harmless');
    p.close();
    closeFd(busy);
  });
});
