// The telemetry v2 protocol and socket: requests parsed as DPDK's client_handler parses them,
// replies as its JSON, and a socket that survives what a hostile or careless client does.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { recvMsg, sendMsg, unixConnect, unixListen } from '../../src/native/unix.js';
import { closeFd } from '../../src/native/watch.js';
import { TELEMETRY_SOCKET, TelemetryInUseError, TelemetryServer } from '../../src/telemetry/server.js';
import { intParam, MAX_CONNECTIONS, MAX_OUTPUT_LEN, parseRequest, TelemetryRegistry } from '../../src/telemetry/telemetry.js';
import { until } from '../apps/testpmd/run.js';

const enc = (s: string) => new TextEncoder().encode(s);

function registry(): TelemetryRegistry {
  const reg = new TelemetryRegistry(1234);
  reg.register('/test/echo', 'Echoes its parameter. Parameters: string', (p) => p ?? 'none');
  reg.register('/test/big', 'A reply over max_output_len. Takes no parameters', () => 'x'.repeat(MAX_OUTPUT_LEN));
  reg.register('/test/throws', 'Always throws. Takes no parameters', () => {
    throw new Error('boom');
  });
  return reg;
}

describe('telemetry protocol', () => {
  it("splits requests as DPDK's strtok does", () => {
    assert.deepEqual(parseRequest(enc('/ethdev/stats,0')), { cmd: '/ethdev/stats', param: '0' });
    assert.deepEqual(parseRequest(enc(',,/info')), { cmd: '/info', param: undefined });
    assert.deepEqual(parseRequest(enc('/help,/ethdev/stats,more')), { cmd: '/help', param: '/ethdev/stats,more' });
    assert.deepEqual(parseRequest(enc('/x,')), { cmd: '/x', param: undefined });
    assert.deepEqual(parseRequest(enc(',')), { cmd: undefined, param: undefined });
    assert.deepEqual(parseRequest(enc('/a\0,b')), { cmd: '/a', param: undefined }, 'a NUL ends the text');
    assert.equal(parseRequest(enc('/' + 'y'.repeat(2000))).cmd!.length, 1023, 'cut to the read buffer');
  });

  it('takes numeric parameters as strtoul does, and refuses what does not start with a digit', () => {
    assert.deepEqual(['0', '12,3', '0x1f', '010', '7\n', 'a1', '', undefined, '-1'].map(intParam), [0, 12, 31, 8, 7, undefined, undefined, undefined, undefined]);
  });

  it("answers with DPDK's JSON: the built-in commands, null for unknown or refused ones", () => {
    const reg = registry();
    const reply = (s: string) => JSON.parse(reg.reply(enc(s)));
    assert.deepEqual(reply('/'), { '/': ['/', '/help', '/info', '/test/big', '/test/echo', '/test/throws'] });
    assert.deepEqual(reply('/info'), { '/info': { version: 'DPDK 22.11.0 (dpkit)', pid: 1234, max_output_len: 16384 } });
    assert.deepEqual(reply('/help,/test/echo'), { '/help': { '/test/echo': 'Echoes its parameter. Parameters: string' } });
    assert.deepEqual(reply('/help'), { '/help': 'Returns help text for a command. Parameters: string command' });
    assert.deepEqual(reply('/help,/nope'), { '/help': null });
    assert.deepEqual(reply('/test/echo,a,b'), { '/test/echo': 'a,b' });
    assert.deepEqual(reply('garbage'), { garbage: null });
    assert.deepEqual(reply(''), { '(null)': null });
    assert.deepEqual(reply('/test/throws'), { '/test/throws': null }, 'a throwing handler is a refusal');
    assert.deepEqual(reply('/test/big'), { '/test/big': null }, 'too long for max_output_len: null, not cut JSON');
    assert.deepEqual(reply('"}' + 'z'.repeat(100)), { ['"}' + 'z'.repeat(54)]: null }, 'key cut to MAX_CMD_LEN and escaped');
    assert.deepEqual(reply('\xff\xfe/ethdev'), { '\xff\xfe/ethdev': null });
  });
});

describe('telemetry socket', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dpkit-telemetry-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const prefix = `dpkit-telemetry-test-${process.pid}`;
  // Used when not root; root's runtime directory is /var/run/dpdk, as EAL's.
  process.env['XDG_RUNTIME_DIR'] = dir;

  const buf = new Uint8Array(MAX_OUTPUT_LEN + 16);
  /** The next message on `fd`, the event loop turning meanwhile (the server runs on it). */
  async function next(fd: number): Promise<string | null> {
    let got: string | null | undefined;
    await until(() => {
      const m = recvMsg(fd, buf);
      if (m) got = m.bytes === 0 ? null : Buffer.from(buf.subarray(0, m.bytes)).toString();
      return got !== undefined;
    }, () => `no message on fd ${fd}`);
    return got!;
  }

  it('greets each client, answers each message, caps connections at DPDK\'s 10 and survives garbage and hang-ups', async () => {
    const server = new TelemetryServer(registry(), prefix);
    try {
      assert.ok(server.path.endsWith(join('dpdk', prefix, TELEMETRY_SOCKET)), server.path);
      assert.throws(() => new TelemetryServer(registry(), prefix), TelemetryInUseError, 'a live socket is not taken over');
      const fds: number[] = [];
      for (let i = 0; i < MAX_CONNECTIONS; i++) {
        fds.push(unixConnect(server.path, 'seqpacket'));
        assert.deepEqual(JSON.parse((await next(fds[i]!))!), { version: 'DPDK 22.11.0 (dpkit)', pid: 1234, max_output_len: 16384 });
      }
      const extra = unixConnect(server.path, 'seqpacket');
      assert.equal(await next(extra), null, 'the 11th client is closed at once');
      closeFd(extra);

      const [a, b, c] = fds as [number, number, number];
      sendMsg(a, enc('x'.repeat(5000)));
      assert.deepEqual(JSON.parse((await next(a))!), { ['x'.repeat(56)]: null }, 'a message longer than the buffer is cut, answered');
      sendMsg(a, new Uint8Array([0xde, 0xad, 0xbe, 0xef, 0, 1, 2]));
      assert.match((await next(a))!, /^\{".*":null\}$/);
      sendMsg(a, enc('/test/echo,hi'), [a]);
      assert.deepEqual(JSON.parse((await next(a))!), { '/test/echo': 'hi' }, 'passed fds are closed, the request answered');
      // A client that asks for a big reply and hangs up before reading it.
      sendMsg(b, enc('/'));
      closeFd(b);
      // One that fills its socket with requests and never reads: dropped, not blocking anyone.
      const flood = () => {
        try {
          while (sendMsg(c, enc('/help,/test/echo')) > 0);
        } catch {
          // EPIPE or ECONNRESET: the server has dropped it.
        }
        return server.connections <= MAX_CONNECTIONS - 2;
      };
      await until(flood, () => `${server.connections} connections`);
      closeFd(c);
      sendMsg(a, new Uint8Array(0));
      assert.equal(await next(a), null, 'an empty message ends the connection, as DPDK\'s read() of 0');
      closeFd(a);
      const d = fds[3]!;
      sendMsg(d, enc('/info'));
      assert.equal(JSON.parse((await next(d))!)['/info'].pid, 1234, 'the others are still served');
      for (const fd of fds.slice(3)) closeFd(fd);
      await until(() => server.connections === 0, () => `${server.connections} connections`);
    } finally {
      server.close();
    }
    assert.equal(existsSync(server.path), false, 'socket file removed');
    rmSync(join(server.path, '..'), { recursive: true });
  });

  it('replaces a stale socket file, as DPDK does', () => {
    const first = new TelemetryServer(registry(), `${prefix}-stale`);
    const path = first.path;
    first.close();
    closeFd(unixListen(path, 'seqpacket')); // bound, then closed: a file nobody accepts on
    assert.ok(existsSync(path));
    const server = new TelemetryServer(registry(), `${prefix}-stale`);
    server.close();
    assert.equal(existsSync(path), false);
    rmSync(join(path, '..'), { recursive: true });
  });
});
