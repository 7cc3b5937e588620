/**
 * memif's control messages (version 2.0, as DPDK's drivers/net/memif/memif.h
 * and libmemif define them): every message is one 128-byte SOCK_SEQPACKET
 * datagram, a u16 type and then the type's packed fields, little-endian.
 * ADD_REGION carries the region's memfd and ADD_RING the ring's eventfd as
 * SCM_RIGHTS. Control plane only: the functions here allocate freely.
 *
 * The conversation (the server answers each client message with ACK; the
 * client sends its next message when the previous one is answered):
 *   server: HELLO (limits)        client: INIT (id, secret, mode)
 *   client: ADD_REGION × r, ADD_RING × (C2S + S2C rings), CONNECT
 *   server: CONNECTED             either: DISCONNECT (code, reason), then closes
 */
import { DpkitError } from '../../errors.js';

/** Bytes of every message (sizeof(memif_msg_t), 128-byte aligned). */
export const MSG_SIZE = 128;
export const MEMIF_VERSION = (2 << 8) | 0;
export const NAME_SIZE = 32;
export const SECRET_SIZE = 24;
export const REASON_SIZE = 96;
/** DPDK's ETH_MEMIF_MAX_LOG2_RING_SIZE. */
export const MAX_LOG2_RING_SIZE = 14;
/** DPDK's ETH_MEMIF_MAX_NUM_Q_PAIRS. */
export const MAX_QUEUE_PAIRS = 255;
export const MODE_ETHERNET = 0;
export const ADD_RING_FLAG_C2S = 1;

export const MsgType = {
  NONE: 0,
  ACK: 1,
  HELLO: 2,
  INIT: 3,
  ADD_REGION: 4,
  ADD_RING: 5,
  CONNECT: 6,
  CONNECTED: 7,
  DISCONNECT: 8,
} as const;
export type MsgType = (typeof MsgType)[keyof typeof MsgType];

const TYPE_NAMES = ['NONE', 'ACK', 'HELLO', 'INIT', 'ADD_REGION', 'ADD_RING', 'CONNECT', 'CONNECTED', 'DISCONNECT'];

/** A message's type by name, for log lines (`type 99` when unknown). */
export function typeName(t: number): string {
  return TYPE_NAMES[t] ?? `type ${t}`;
}

/** A memif peer broke the protocol: `reason` is what goes into the DISCONNECT message. */
export class MemifError extends DpkitError {
  constructor(
    readonly device: string,
    readonly reason: string,
    detail = '',
  ) {
    super('EPROTO', `${device}: ${reason}${detail ? ` (${detail})` : ''}`);
  }
}

export interface Hello {
  name: string;
  minVersion: number;
  maxVersion: number;
  maxRegion: number;
  maxS2cRing: number;
  maxC2sRing: number;
  maxLog2RingSize: number;
}
export interface Init {
  version: number;
  id: number;
  mode: number;
  secret: string;
  name: string;
}
export interface AddRegion {
  index: number;
  size: number;
}
export interface AddRing {
  flags: number;
  index: number;
  region: number;
  offset: number;
  log2RingSize: number;
  privateHdrSize: number;
}
export interface Disconnect {
  code: number;
  reason: string;
}

/** A received message, decoded by type; `unknown` keeps the type number for the log line. */
export type Msg =
  | { type: typeof MsgType.ACK }
  | { type: typeof MsgType.HELLO; hello: Hello }
  | { type: typeof MsgType.INIT; init: Init }
  | { type: typeof MsgType.ADD_REGION; region: AddRegion }
  | { type: typeof MsgType.ADD_RING; ring: AddRing }
  | { type: typeof MsgType.CONNECT; ifName: string }
  | { type: typeof MsgType.CONNECTED; ifName: string }
  | { type: typeof MsgType.DISCONNECT; disconnect: Disconnect }
  | { type: 'unknown'; raw: number };

function cstr(b: Uint8Array, at: number, size: number): string {
  let end = at;
  while (end < at + size && b[end] !== 0) end++;
  return Buffer.from(b.buffer, b.byteOffset + at, end - at).toString('latin1');
}

function putStr(b: Uint8Array, at: number, size: number, s: string): void {
  // strlcpy: at most size - 1 bytes, always NUL-terminated (the rest of the message is zero).
  const bytes = Buffer.from(s, 'latin1');
  b.set(bytes.subarray(0, size - 1), at);
}

/**
 * Decodes one received datagram. The length is checked here (every memif
 * message is exactly MSG_SIZE bytes); field values are the caller's to judge.
 * @throws MemifError "Invalid message size" for anything else.
 */
export function decode(device: string, b: Uint8Array, length: number): Msg {
  if (length !== MSG_SIZE) throw new MemifError(device, 'Invalid message size', `${length} bytes, expected ${MSG_SIZE}`);
  const v = new DataView(b.buffer, b.byteOffset, MSG_SIZE);
  const type = v.getUint16(0, true);
  switch (type) {
    case MsgType.ACK:
      return { type };
    case MsgType.HELLO:
      return {
        type,
        hello: {
          name: cstr(b, 2, NAME_SIZE),
          minVersion: v.getUint16(34, true),
          maxVersion: v.getUint16(36, true),
          maxRegion: v.getUint16(38, true),
          maxS2cRing: v.getUint16(40, true),
          maxC2sRing: v.getUint16(42, true),
          maxLog2RingSize: v.getUint8(44),
        },
      };
    case MsgType.INIT:
      return { type, init: { version: v.getUint16(2, true), id: v.getUint32(4, true), mode: v.getUint8(8), secret: cstr(b, 9, SECRET_SIZE), name: cstr(b, 33, NAME_SIZE) } };
    case MsgType.ADD_REGION:
      return { type, region: { index: v.getUint16(2, true), size: Number(v.getBigUint64(4, true)) } };
    case MsgType.ADD_RING:
      return {
        type,
        ring: { flags: v.getUint16(2, true), index: v.getUint16(4, true), region: v.getUint16(6, true), offset: v.getUint32(8, true), log2RingSize: v.getUint8(12), privateHdrSize: v.getUint16(13, true) },
      };
    case MsgType.CONNECT:
    case MsgType.CONNECTED:
      return { type, ifName: cstr(b, 2, NAME_SIZE) };
    case MsgType.DISCONNECT:
      return { type, disconnect: { code: v.getUint32(2, true), reason: cstr(b, 6, REASON_SIZE) } };
    default:
      return { type: 'unknown', raw: type };
  }
}

function message(type: MsgType): { b: Uint8Array; v: DataView } {
  const b = new Uint8Array(MSG_SIZE);
  const v = new DataView(b.buffer);
  v.setUint16(0, type, true);
  return { b, v };
}

export function encodeAck(): Uint8Array {
  return message(MsgType.ACK).b;
}

export function encodeHello(h: Hello): Uint8Array {
  const { b, v } = message(MsgType.HELLO);
  putStr(b, 2, NAME_SIZE, h.name);
  v.setUint16(34, h.minVersion, true);
  v.setUint16(36, h.maxVersion, true);
  v.setUint16(38, h.maxRegion, true);
  v.setUint16(40, h.maxS2cRing, true);
  v.setUint16(42, h.maxC2sRing, true);
  v.setUint8(44, h.maxLog2RingSize);
  return b;
}

export function encodeInit(i: Init): Uint8Array {
  const { b, v } = message(MsgType.INIT);
  v.setUint16(2, i.version, true);
  v.setUint32(4, i.id, true);
  v.setUint8(8, i.mode);
  putStr(b, 9, SECRET_SIZE, i.secret);
  putStr(b, 33, NAME_SIZE, i.name);
  return b;
}

export function encodeAddRegion(r: AddRegion): Uint8Array {
  const { b, v } = message(MsgType.ADD_REGION);
  v.setUint16(2, r.index, true);
  v.setBigUint64(4, BigInt(r.size), true);
  return b;
}

export function encodeAddRing(r: AddRing): Uint8Array {
  const { b, v } = message(MsgType.ADD_RING);
  v.setUint16(2, r.flags, true);
  v.setUint16(4, r.index, true);
  v.setUint16(6, r.region, true);
  v.setUint32(8, r.offset, true);
  v.setUint8(12, r.log2RingSize);
  v.setUint16(13, r.privateHdrSize, true);
  return b;
}

export function encodeConnect(type: typeof MsgType.CONNECT | typeof MsgType.CONNECTED, ifName: string): Uint8Array {
  const { b } = message(type);
  putStr(b, 2, NAME_SIZE, ifName);
  return b;
}

export function encodeDisconnect(d: Disconnect): Uint8Array {
  const { b, v } = message(MsgType.DISCONNECT);
  v.setUint32(2, d.code, true);
  putStr(b, 6, REASON_SIZE, d.reason);
  return b;
}
