/**
 * One vhost-user message at a time off a non-blocking AF_UNIX stream: the
 * header's 12 bytes first, then exactly its payload, so a read never takes
 * bytes (or fds) of the next message. fds that arrive meanwhile belong to the
 * message being read; the caller owns a frame's fds and closes them.
 */
import { closeFd } from '../native/watch.js';
import { recvMsg } from '../native/unix.js';
import { HDR_SIZE, MAX_PAYLOAD, header } from './wire.js';
import { reqName } from './protocol.js';

export interface Frame {
  req: number;
  flags: number;
  payload: DataView;
  fds: number[];
}

/** `again`: nothing more pending yet; `eof`: the peer closed; a string: the stream is broken (named). */
export type ReadResult = Frame | 'again' | 'eof' | string;

export class MsgReader {
  private readonly buf = new Uint8Array(HDR_SIZE + MAX_PAYLOAD);
  private readonly view = new DataView(this.buf.buffer);
  private have = 0;
  private fds: number[] = [];

  /** Reads from `fd` until a whole message is in (returned), or nothing more is pending. */
  next(fd: number): ReadResult {
    for (;;) {
      const want = this.have < HDR_SIZE ? HDR_SIZE : HDR_SIZE + header(this.view).size;
      if (this.have === HDR_SIZE && want > this.buf.length) {
        const h = header(this.view);
        return `${reqName(h.req)}: oversized payload of ${h.size} bytes, at most ${MAX_PAYLOAD}`;
      }
      if (this.have === want) {
        const h = header(this.view);
        const frame: Frame = { req: h.req, flags: h.flags, payload: new DataView(this.buf.slice(HDR_SIZE, want).buffer), fds: this.fds };
        this.fds = [];
        this.have = 0;
        return frame;
      }
      const r = recvMsg(fd, this.buf.subarray(this.have, want));
      if (r === null) return 'again';
      for (const f of r.fds) this.fds.push(f);
      if (r.fdsTruncated) return 'more fds than a message may carry (the kernel dropped some)';
      if (r.bytes === 0 && r.fds.length === 0) return this.have === 0 ? 'eof' : `the peer closed in the middle of a message (${this.have} bytes of ${want})`;
      this.have += r.bytes;
    }
  }

  /** Closes fds of a message not completely read (at teardown). */
  dropFds(): void {
    for (const f of this.fds) closeFd(f);
    this.fds = [];
    this.have = 0;
  }
}
