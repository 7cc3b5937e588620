/**
 * vhost-user's wire format (the vhost-user spec, "Message specification"):
 * a 12-byte header (request u32, flags u32, payload size u32, little-endian)
 * then the payload, on an AF_UNIX stream; file descriptors ride along as
 * SCM_RIGHTS with the message's first byte.
 *
 * Both ends use this module: the backend decodes what a frontend sends
 * (every field bounds-checked, a problem returned as a string naming it,
 * never thrown), the frontend encodes its requests and decodes the replies.
 * Control plane only: messages are small objects made per message.
 */
import { Req, reqName } from './protocol.js';

export const HDR_SIZE = 12;
/** Flags: protocol version 1 in bits 0-1, REPLY on answers, NEED_REPLY asks for a REPLY_ACK. */
export const FLAG_VERSION = 0x1;
export const FLAG_VERSION_MASK = 0x3;
export const FLAG_REPLY = 0x4;
export const FLAG_NEED_REPLY = 0x8;
/** The largest payload dpkit accepts: SET_MEM_TABLE with 8 regions is 264 bytes, CONFIG would be 268. */
export const MAX_PAYLOAD = 512;
/** The most regions one SET_MEM_TABLE carries (VHOST_MEMORY_BASELINE_NREGIONS). */
export const MAX_WIRE_REGIONS = 8;
/** SET_VRING_KICK / CALL / ERR: the vring index bits, and "no fd: poll" (VHOST_USER_VRING_NOFD_MASK). */
export const VRING_INDEX_MASK = 0xff;
export const VRING_NOFD = 0x100;
/** Protocol feature bits dpkit speaks. */
export const PROTOCOL_F_MQ = 0;
export const PROTOCOL_F_REPLY_ACK = 3;

const REGION_SIZE = 32;
const MEM_HDR = 8;

/** One region of SET_MEM_TABLE as it travels: where the guest sees it, and where in the passed fd it lives. */
export interface WireRegion {
  gpa: number;
  size: number;
  userAddr: number;
  mmapOffset: number;
}

/** A request as it travels (fds travel beside it, counted by `fdsExpected`). */
export type WireMsg =
  | { req: typeof Req.GET_FEATURES | typeof Req.SET_OWNER | typeof Req.RESET_OWNER | typeof Req.GET_PROTOCOL_FEATURES | typeof Req.GET_QUEUE_NUM }
  | { req: typeof Req.SET_FEATURES | typeof Req.SET_PROTOCOL_FEATURES; features: bigint }
  | { req: typeof Req.SET_MEM_TABLE; regions: WireRegion[] }
  | { req: typeof Req.SET_LOG_BASE }
  | { req: typeof Req.SET_VRING_NUM | typeof Req.SET_VRING_BASE; index: number; num: number }
  | { req: typeof Req.SET_VRING_ENABLE; index: number; enable: boolean }
  | { req: typeof Req.GET_VRING_BASE; index: number }
  | { req: typeof Req.SET_VRING_ADDR; index: number; flags: number; desc: number; used: number; avail: number; log: number }
  | { req: typeof Req.SET_VRING_KICK | typeof Req.SET_VRING_CALL | typeof Req.SET_VRING_ERR; index: number; nofd: boolean };

/** How a request is answered: a u64, a vring state (index, num), or nothing (a REPLY_ACK u64 when asked). */
export type ReplyKind = 'u64' | 'state' | 'none';

export function replyKind(req: number): ReplyKind {
  switch (req) {
    case Req.GET_FEATURES:
    case Req.GET_PROTOCOL_FEATURES:
    case Req.GET_QUEUE_NUM:
      return 'u64';
    case Req.GET_VRING_BASE:
      return 'state';
    default:
      return 'none';
  }
}

/** The fds a well-formed message carries. */
export function fdsExpected(m: WireMsg): number {
  switch (m.req) {
    case Req.SET_MEM_TABLE:
      return m.regions.length;
    case Req.SET_LOG_BASE:
      return 1;
    case Req.SET_VRING_KICK:
    case Req.SET_VRING_CALL:
    case Req.SET_VRING_ERR:
      return m.nofd ? 0 : 1;
    default:
      return 0;
  }
}

/** A u64 field as a number, or -1 when it is not exact as one (above 2^53). */
function u64(v: DataView, at: number): number {
  const hi = v.getUint32(at + 4, true);
  if (hi >= 0x200000) return -1;
  return hi * 4294967296 + v.getUint32(at, true);
}

function needSize(req: number, size: number, want: number): string | null {
  return size === want ? null : `${reqName(req)}: payload of ${size} bytes, expected ${want}`;
}

/**
 * Decodes request `req`'s `payload` (exactly the header's size bytes).
 * @returns the message, or a problem naming the request and the field.
 */
export function decodeMsg(req: number, payload: DataView): WireMsg | string {
  const size = payload.byteLength;
  switch (req) {
    case Req.GET_FEATURES:
    case Req.SET_OWNER:
    case Req.RESET_OWNER:
    case Req.GET_PROTOCOL_FEATURES:
    case Req.GET_QUEUE_NUM:
      // Some frontends send a zero u64 with these; both are accepted.
      return size === 0 || size === 8 ? { req } : `${reqName(req)}: payload of ${size} bytes, expected 0`;
    case Req.SET_FEATURES:
    case Req.SET_PROTOCOL_FEATURES:
      return needSize(req, size, 8) ?? { req, features: payload.getBigUint64(0, true) };
    case Req.SET_LOG_BASE:
      return { req };
    case Req.SET_MEM_TABLE: {
      if (size < MEM_HDR) return `SET_MEM_TABLE: payload of ${size} bytes, shorter than its 8-byte header`;
      const n = payload.getUint32(0, true);
      if (n === 0) return 'SET_MEM_TABLE: no regions';
      if (n > MAX_WIRE_REGIONS) return `SET_MEM_TABLE: ${n} regions, at most ${MAX_WIRE_REGIONS}`;
      if (size < MEM_HDR + n * REGION_SIZE) return `SET_MEM_TABLE: ${n} regions need ${MEM_HDR + n * REGION_SIZE} bytes, the payload has ${size}`;
      const regions: WireRegion[] = [];
      for (let i = 0; i < n; i++) {
        const at = MEM_HDR + i * REGION_SIZE;
        const r = { gpa: u64(payload, at), size: u64(payload, at + 8), userAddr: u64(payload, at + 16), mmapOffset: u64(payload, at + 24) };
        if (r.gpa < 0 || r.size < 0 || r.userAddr < 0 || r.mmapOffset < 0) return `SET_MEM_TABLE: region ${i}: an address above 2^53`;
        if (r.size === 0) return `SET_MEM_TABLE: region ${i} is empty`;
        regions.push(r);
      }
      return { req, regions };
    }
    case Req.SET_VRING_NUM:
    case Req.SET_VRING_BASE:
    case Req.SET_VRING_ENABLE:
    case Req.GET_VRING_BASE: {
      const bad = needSize(req, size, 8);
      if (bad) return bad;
      const index = payload.getUint32(0, true);
      const num = payload.getUint32(4, true);
      if (req === Req.GET_VRING_BASE) return { req, index };
      if (req === Req.SET_VRING_ENABLE) return num > 1 ? `SET_VRING_ENABLE: vring ${index}: enable=${num}, expected 0 or 1` : { req, index, enable: num === 1 };
      return { req, index, num };
    }
    case Req.SET_VRING_ADDR: {
      const bad = needSize(req, size, 40);
      if (bad) return bad;
      const m = { req, index: payload.getUint32(0, true), flags: payload.getUint32(4, true), desc: u64(payload, 8), used: u64(payload, 16), avail: u64(payload, 24), log: u64(payload, 32) };
      if (m.desc < 0 || m.used < 0 || m.avail < 0) return `SET_VRING_ADDR: vring ${m.index}: an address above 2^53`;
      return m;
    }
    case Req.SET_VRING_KICK:
    case Req.SET_VRING_CALL:
    case Req.SET_VRING_ERR: {
      const bad = needSize(req, size, 8);
      if (bad) return bad;
      const v = payload.getUint32(0, true);
      if (payload.getUint32(4, true) !== 0 || (v & ~(VRING_INDEX_MASK | VRING_NOFD)) !== 0) return `${reqName(req)}: unknown bits in 0x${payload.getBigUint64(0, true).toString(16)}`;
      return { req, index: v & VRING_INDEX_MASK, nofd: (v & VRING_NOFD) !== 0 };
    }
    default:
      return `${reqName(req)}: not supported`;
  }
}

/** A request's bytes: header with `flags` (version 1 added), then the payload. */
export function encodeMsg(m: WireMsg, flags = 0): Uint8Array {
  let size = 0;
  switch (m.req) {
    case Req.SET_FEATURES:
    case Req.SET_PROTOCOL_FEATURES:
    case Req.SET_VRING_NUM:
    case Req.SET_VRING_BASE:
    case Req.SET_VRING_ENABLE:
    case Req.GET_VRING_BASE:
    case Req.SET_VRING_KICK:
    case Req.SET_VRING_CALL:
    case Req.SET_VRING_ERR:
      size = 8;
      break;
    case Req.SET_VRING_ADDR:
      size = 40;
      break;
    case Req.SET_MEM_TABLE:
      size = MEM_HDR + m.regions.length * REGION_SIZE;
      break;
    default:
      size = 0;
  }
  const bytes = new Uint8Array(HDR_SIZE + size);
  const v = new DataView(bytes.buffer);
  v.setUint32(0, m.req, true);
  v.setUint32(4, flags | FLAG_VERSION, true);
  v.setUint32(8, size, true);
  const p = HDR_SIZE;
  const put64 = (at: number, x: number): void => v.setBigUint64(p + at, BigInt(x), true);
  switch (m.req) {
    case Req.SET_FEATURES:
    case Req.SET_PROTOCOL_FEATURES:
      v.setBigUint64(p, m.features, true);
      break;
    case Req.SET_VRING_NUM:
    case Req.SET_VRING_BASE:
      v.setUint32(p, m.index, true);
      v.setUint32(p + 4, m.num, true);
      break;
    case Req.SET_VRING_ENABLE:
      v.setUint32(p, m.index, true);
      v.setUint32(p + 4, m.enable ? 1 : 0, true);
      break;
    case Req.GET_VRING_BASE:
      v.setUint32(p, m.index, true);
      break;
    case Req.SET_VRING_KICK:
    case Req.SET_VRING_CALL:
    case Req.SET_VRING_ERR:
      v.setUint32(p, (m.index & VRING_INDEX_MASK) | (m.nofd ? VRING_NOFD : 0), true);
      break;
    case Req.SET_VRING_ADDR:
      v.setUint32(p, m.index, true);
      v.setUint32(p + 4, m.flags, true);
      put64(8, m.desc);
      put64(16, m.used);
      put64(24, m.avail);
      put64(32, m.log);
      break;
    case Req.SET_MEM_TABLE:
      v.setUint32(p, m.regions.length, true);
      m.regions.forEach((r, i) => {
        const at = MEM_HDR + i * REGION_SIZE;
        put64(at, r.gpa);
        put64(at + 8, r.size);
        put64(at + 16, r.userAddr);
        put64(at + 24, r.mmapOffset);
      });
      break;
    default:
      break;
  }
  return bytes;
}

/** A reply's bytes: the request echoed, REPLY set, a u64 or a vring state. */
export function encodeReply(req: number, value: bigint | { index: number; num: number }): Uint8Array {
  const bytes = new Uint8Array(HDR_SIZE + 8);
  const v = new DataView(bytes.buffer);
  v.setUint32(0, req, true);
  v.setUint32(4, FLAG_VERSION | FLAG_REPLY, true);
  v.setUint32(8, 8, true);
  if (typeof value === 'bigint') v.setBigUint64(HDR_SIZE, value, true);
  else {
    v.setUint32(HDR_SIZE, value.index, true);
    v.setUint32(HDR_SIZE + 4, value.num, true);
  }
  return bytes;
}

/** Header fields of the message at the start of `v`. */
export function header(v: DataView): { req: number; flags: number; size: number } {
  return { req: v.getUint32(0, true), flags: v.getUint32(4, true), size: v.getUint32(8, true) };
}
