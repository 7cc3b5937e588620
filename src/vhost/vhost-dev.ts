/**
 * The vhost backend's control plane (lib/vhost's vhost_user.c): answers the
 * frontend's vhost-user messages, keeps the negotiated features, the guest
 * memory table and each vring's addresses, and publishes what a polling
 * lcore needs into the vring state blocks (vring-state.ts).
 *
 * Everything a frontend sends is checked: unknown or unoffered features,
 * VERSION_1 missing, ring sizes, indices beyond the queues, addresses
 * outside the memory table. A refused message throws VhostError naming the
 * device and the problem, and leaves the device as it was.
 */
import { VhostError } from '../errors.js';
import type { Heap } from '../eal/heap.js';
import { GuestMemory, MAX_REGIONS } from '../virtio/guest-memory.js';
import { VRING_MAX_SIZE, Vring, isVringSize } from '../virtio/vring.js';
import { PACKED_EVENT_FLAGS, PackedRing, RING_EVENT_FLAGS_DISABLE } from '../virtio/packed.js';
import { Feature, SUPPORTED_FEATURES, VRING_USED_F_NO_NOTIFY, bit, featureNames, has, type Features } from '../virtio/virtio-net.js';
import { PROTOCOL_F_MQ, PROTOCOL_F_REPLY_ACK } from './wire.js';
import { NO_NOTIFIER, Req, reqName, type Backend, type MemRegion, type VhostUserMsg, type VhostUserReply } from './protocol.js';
import { VHOST_QUEUE_SIZE } from './vhost-queue-layout.js';
import type { VhostQueueDesc } from './vhost-queue.js';
import * as S from './vring-state.js';

/** vhost-user protocol features dpkit's backend speaks: MQ (multiple queue pairs), REPLY_ACK (the socket transport answers). */
export const SUPPORTED_PROTOCOL_FEATURES: Features = bit(PROTOCOL_F_MQ) | bit(PROTOCOL_F_REPLY_ACK);

interface VringConf {
  num: number;
  desc: number;
  avail: number;
  used: number;
  addrSet: boolean;
  base: number;
  kick: number;
  call: number;
  kickSet: boolean;
  enabled: boolean;
}

export interface VhostDevOptions {
  /** Queue pairs (net_vhost's `queues`). */
  queues: number;
  /** Features the backend refuses to offer (e.g. MRG_RXBUF off for a study). */
  disable?: Features;
  /** The vhost enqueue study's other arm: read the avail index per packet. */
  availPerPacket?: boolean;
}

export class VhostDev implements Backend {
  readonly mem: GuestMemory;
  /** f64 slot of vring 0's state block. */
  readonly states: number;
  /** Heap byte offset of vring 0's data-path block (vhost-queue.record.ts), one per vring after it. */
  private readonly blocks: number;
  private readonly f64: Float64Array;
  private readonly u16: Uint16Array;
  private readonly vrings: VringConf[];
  private readonly offered: Features;
  private features: Features = 0n;
  private protocolFeatures: Features = 0n;
  private featuresSet = false;
  private regions: MemRegion[] = [];
  private owner = false;

  constructor(
    readonly heap: Heap,
    readonly name: string,
    readonly opts: VhostDevOptions,
  ) {
    this.mem = GuestMemory.create(heap);
    this.states = S.reserveVringStates(heap, 2 * opts.queues);
    this.blocks = heap.reserve(2 * opts.queues * VHOST_QUEUE_SIZE, 64, 'vhost queue blocks');
    this.f64 = heap.f64;
    this.u16 = heap.u16;
    // As DPDK's vhost: MQ offered, so a virtio driver reads max_virtqueue_pairs (a frontend's own, for virtio_user).
    const mq = opts.queues > 1 ? bit(Feature.NET_F_MQ) : 0n;
    // Packed rings too, as DPDK's vhost: a frontend that does not ask for them (DPDK's virtio_user without packed_vq=1) keeps split ones.
    this.offered = (SUPPORTED_FEATURES | mq | bit(Feature.F_RING_PACKED)) & ~(opts.disable ?? 0n);
    this.vrings = Array.from({ length: 2 * opts.queues }, () => VhostDev.freshVring());
  }

  private static freshVring(): VringConf {
    return { num: 0, desc: 0, avail: 0, used: 0, addrSet: false, base: 0, kick: NO_NOTIFIER, call: NO_NOTIFIER, kickSet: false, enabled: false };
  }

  /** The data-path descriptor of vring `index`. */
  queueDesc(index: number, port: number): VhostQueueDesc {
    const state = this.states + index * S.STATE_SLOTS;
    return { memTable: this.mem.at, state, q: this.blocks + index * VHOST_QUEUE_SIZE, port, nombuf: state + S.S_NOMBUF, link: this.states };
  }

  /** The negotiated vhost-user protocol features (after SET_PROTOCOL_FEATURES). */
  get negotiatedProtocol(): Features {
    return this.protocolFeatures;
  }

  /** Vrings the device has: two per queue pair. */
  get vringCount(): number {
    return this.vrings.length;
  }

  /** The negotiated features (after SET_FEATURES). */
  get negotiated(): Features {
    return this.features;
  }

  /** True when the vring can carry packets. */
  vringReady(index: number): boolean {
    return this.f64[this.states + index * S.STATE_SLOTS + S.S_READY] === 1;
  }

  /** Link up: the first queue pair's two rings are ready (DPDK: the device is running). */
  ready(): boolean {
    return this.vringReady(0) && this.vringReady(1);
  }

  /** A counter summed over vrings of one direction (0: rx rings, the enqueue side; 1: tx rings). */
  counter(slot: number, dir: 0 | 1): number {
    let sum = 0;
    for (let i = dir; i < this.vrings.length; i += 2) sum += this.f64[this.states + i * S.STATE_SLOTS + slot]!;
    return sum;
  }

  handle(msg: VhostUserMsg): VhostUserReply {
    switch (msg.req) {
      case Req.GET_FEATURES:
        return this.offered;
      case Req.SET_FEATURES: {
        const extra = msg.features & ~this.offered;
        if (extra !== 0n) throw this.error(msg.req, `features not offered: ${featureNames(extra)} (0x${extra.toString(16)})`);
        if (!has(msg.features, Feature.F_VERSION_1)) throw this.error(msg.req, 'VIRTIO_F_VERSION_1 is required (legacy virtio is not supported)');
        this.features = msg.features;
        this.featuresSet = true;
        this.publishAll();
        return undefined;
      }
      case Req.SET_OWNER:
        this.owner = true;
        return undefined;
      case Req.RESET_OWNER:
        this.disconnect();
        return undefined;
      case Req.GET_PROTOCOL_FEATURES:
        return SUPPORTED_PROTOCOL_FEATURES;
      case Req.SET_PROTOCOL_FEATURES: {
        const extra = msg.features & ~SUPPORTED_PROTOCOL_FEATURES;
        if (extra !== 0n) throw this.error(msg.req, `protocol features not offered: 0x${extra.toString(16)}`);
        this.protocolFeatures = msg.features;
        return undefined;
      }
      case Req.GET_QUEUE_NUM:
        return this.opts.queues;
      case Req.SET_MEM_TABLE: {
        this.needOwner(msg.req);
        if (msg.regions.length > MAX_REGIONS) throw this.error(msg.req, `${msg.regions.length} regions, at most ${MAX_REGIONS}`);
        // Rings stop while the table changes: no lcore translates through a half-written table.
        this.unpublishAll();
        try {
          this.mem.setRegions(msg.regions.map((r) => ({ gpa: r.gpa, size: r.size, offset: r.heapOffset })));
        } catch (e) {
          this.mem.setRegions(this.regions.map((r) => ({ gpa: r.gpa, size: r.size, offset: r.heapOffset })));
          this.publishAll();
          throw this.error(msg.req, (e as Error).message);
        }
        this.regions = msg.regions.map((r) => ({ ...r }));
        this.publishAll();
        return undefined;
      }
      case Req.SET_VRING_NUM: {
        const v = this.vring(msg.req, msg.index);
        if (!isVringSize(msg.num)) {
          throw this.error(msg.req, `vring ${msg.index}: size ${msg.num} is not a power of two in [1, ${VRING_MAX_SIZE}]`);
        }
        v.num = msg.num;
        this.publish(msg.index);
        return undefined;
      }
      case Req.SET_VRING_ADDR: {
        const v = this.vring(msg.req, msg.index);
        v.desc = msg.desc;
        v.avail = msg.avail;
        v.used = msg.used;
        v.addrSet = true;
        this.publish(msg.index, true);
        return undefined;
      }
      case Req.SET_VRING_BASE: {
        const v = this.vring(msg.req, msg.index);
        // A packed ring's base is two positions, each with its wrap counter in bit 15: the
        // driver's in bits 0..15, the device's (used) in 16..31 (QEMU sends both, DPDK's
        // virtio_user the first alone). Stopped rings have them equal, so the device's is the
        // driver's, as DPDK's vhost takes it.
        const packed = has(this.features, Feature.F_RING_PACKED);
        const max = packed ? 0xffffffff : 0xffff;
        if (!Number.isInteger(msg.num) || msg.num < 0 || msg.num > max) throw this.error(msg.req, `vring ${msg.index}: base ${msg.num} is not a u${packed ? 32 : 16}`);
        const base = msg.num & 0xffff;
        v.base = base;
        const st = this.states + msg.index * S.STATE_SLOTS;
        this.f64[st + S.S_LAST_AVAIL] = base;
        this.f64[st + S.S_LAST_USED] = base;
        this.publish(msg.index);
        return undefined;
      }
      case Req.GET_VRING_BASE: {
        // The frontend stops the ring (vhost-user: GET_VRING_BASE stops it) and learns where it is.
        const v = this.vring(msg.req, msg.index);
        v.enabled = false;
        v.kickSet = false;
        this.publish(msg.index);
        const st = this.states + msg.index * S.STATE_SLOTS;
        // Packed: the device's position in the upper half, as SET_VRING_BASE carries it (QEMU reads both).
        if (has(this.features, Feature.F_RING_PACKED)) return ((this.f64[st + S.S_LAST_USED]! << 16) | this.f64[st + S.S_LAST_AVAIL]!) >>> 0;
        return this.f64[st + S.S_LAST_AVAIL]!;
      }
      case Req.SET_VRING_KICK: {
        const v = this.vring(msg.req, msg.index);
        v.kick = msg.notifier;
        v.kickSet = true;
        this.publish(msg.index);
        return undefined;
      }
      case Req.SET_VRING_CALL: {
        const v = this.vring(msg.req, msg.index);
        v.call = msg.notifier;
        this.publish(msg.index);
        return undefined;
      }
      case Req.SET_VRING_ENABLE: {
        const v = this.vring(msg.req, msg.index);
        v.enabled = msg.enable;
        this.publish(msg.index);
        return undefined;
      }
      default: {
        const req = (msg as { req: number }).req;
        throw this.error(req, 'not supported');
      }
    }
  }

  disconnect(): void {
    this.unpublishAll();
    this.vrings.forEach((_, i) => (this.vrings[i] = VhostDev.freshVring()));
    this.features = 0n;
    this.protocolFeatures = 0n;
    this.featuresSet = false;
    this.owner = false;
    this.regions = [];
    this.mem.setRegions([]);
  }

  private needOwner(req: number): void {
    if (!this.owner) throw this.error(req, 'SET_OWNER first');
  }

  private vring(req: number, index: number): VringConf {
    const v = Number.isInteger(index) ? this.vrings[index] : undefined;
    if (!v) throw this.error(req, `vring ${index} does not exist (device has ${this.vrings.length})`);
    return v;
  }

  private error(req: number, problem: string): VhostError {
    return new VhostError(this.name, `${reqName(req)}: ${problem}`);
  }

  /** A frontend's own address (SET_VRING_ADDR's user addresses) to guest-physical, through the table. */
  private uaToGpa(ua: number): number {
    for (const r of this.regions) if (ua >= r.userAddr && ua - r.userAddr < r.size) return r.gpa + (ua - r.userAddr);
    return -1;
  }

  private enabled(v: VringConf): boolean {
    // Without protocol features a ring runs once it has a kick (vhost-user: "starts directly enabled").
    return has(this.features, Feature.F_PROTOCOL_FEATURES) ? v.enabled && v.kickSet : v.kickSet || v.enabled;
  }

  private unpublishAll(): void {
    for (let i = 0; i < this.vrings.length; i++) this.setReady(i, false);
  }

  private publishAll(): void {
    for (let i = 0; i < this.vrings.length; i++) this.publish(i);
  }

  private setReady(index: number, ready: boolean): void {
    const st = this.states + index * S.STATE_SLOTS;
    this.f64[st + S.S_READY] = ready ? 1 : 0;
    this.f64[st + S.S_GEN]++;
  }

  /**
   * Writes vring `index`'s state for the data path, ready only when
   * everything is set. `strict`: report addresses outside the memory table
   * (on SET_VRING_ADDR) instead of waiting for a table that covers them.
   */
  private publish(index: number, strict = false): void {
    const v = this.vrings[index]!;
    const st = this.states + index * S.STATE_SLOTS;
    const f = this.f64;
    f[st + S.S_READY] = 0;
    f[st + S.S_GEN]++;
    if (!v.addrSet || v.num === 0 || this.regions.length === 0) return;
    const desc = this.uaToGpa(v.desc);
    const avail = this.uaToGpa(v.avail);
    const used = this.uaToGpa(v.used);
    const packed = has(this.features, Feature.F_RING_PACKED);
    const ring = desc < 0 || avail < 0 || used < 0 ? 'its addresses are outside the memory table' : packed ? PackedRing.open(this.mem, v.num, desc, avail, used) : Vring.open(this.mem, v.num, desc, avail, used);
    if (typeof ring === 'string') {
      if (strict) throw this.error(Req.SET_VRING_ADDR, `vring ${index}: ${ring}`);
      return;
    }
    if (!this.featuresSet || !this.enabled(v)) return;
    f[st + S.S_NUM] = v.num;
    f[st + S.S_DESC] = desc;
    f[st + S.S_AVAIL] = avail;
    f[st + S.S_USED] = used;
    f[st + S.S_CALL] = v.call;
    f[st + S.S_KICK] = v.kick;
    let flags = 0;
    if (has(this.features, Feature.NET_F_MRG_RXBUF)) flags |= S.F_MRG_RXBUF;
    if (has(this.features, Feature.RING_F_EVENT_IDX)) flags |= S.F_EVENT_IDX;
    if (has(this.features, Feature.RING_F_INDIRECT_DESC)) flags |= S.F_INDIRECT;
    if (this.opts.availPerPacket) flags |= S.F_AVAIL_PER_PACKET;
    if (packed) flags |= S.F_PACKED;
    f[st + S.S_FLAGS] = flags;
    // The backend polls: it asks for no kicks (without EVENT_IDX; with it, a stale avail_event does the same).
    if (ring instanceof PackedRing) Atomics.store(this.u16, (ring.deviceEvent + PACKED_EVENT_FLAGS) >>> 1, RING_EVENT_FLAGS_DISABLE);
    else if ((flags & S.F_EVENT_IDX) === 0) Atomics.store(this.u16, ring.used >>> 1, VRING_USED_F_NO_NOTIFY);
    else Atomics.store(this.u16, (ring.used + 4 + 8 * v.num) >>> 1, (f[st + S.S_LAST_AVAIL]! - 1) & 0xffff);
    f[st + S.S_READY] = 1;
    f[st + S.S_GEN]++;
  }
}
