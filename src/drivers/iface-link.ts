/**
 * The link of a port on a Linux network interface (net_af_packet,
 * net_af_xdp): up while the interface is up with carrier; gone for good, with
 * one line on stderr, once the interface has disappeared. While the port
 * runs, the thread watches one netlink socket for every interface change
 * (RTMGRP_LINK), shared by all its ports, so a port notices without being
 * asked. The process goes on with its other ports.
 *
 * Not the port's own socket: a socket someone watches with epoll makes the
 * kernel take its wait queue's lock with interrupts off for every frame it
 * delivers, which cost the traffic source's CPU a tenth of its time in the
 * af_xdp study (docs/benchmarks.md, "Where the time goes").
 */
import { IFF_RUNNING, IFF_UP, drainFd, ifaceInfo, linkEventsOpen, socketError, type IfaceInfo } from '../native/packet.js';
import { READABLE, closeFd, watch } from '../native/watch.js';
import { NativeError } from '../native/native.js';
import { ifaceSetMtu } from '../native/tap.js';
import { DpkitError } from '../errors.js';

/**
 * Sets interface `iface`'s MTU for device `dev` (DPDK's af_packet and tap
 * mtu_set, SIOCSIFMTU).
 * @throws DpkitError, one line naming the device, the interface and why (EPERM: CAP_NET_ADMIN).
 */
export function setIfaceMtu(dev: string, iface: string, mtu: number): void {
  try {
    ifaceSetMtu(iface, mtu, dev);
  } catch (e) {
    if (!(e instanceof NativeError)) throw e;
    const why = e.code === 'EPERM' ? 'EPERM (needs CAP_NET_ADMIN)' : e.code === 'EINVAL' ? "EINVAL (outside the interface's MTU range)" : e.code;
    throw new DpkitError(e.code, `${dev}: iface=${iface}: cannot set MTU ${mtu}: ${why}`);
  }
}

/** What this thread calls when an interface changes, and the netlink socket that tells of changes (-1 while nothing listens). */
const listeners = new Set<() => void>();
let events = -1;

function onLinkEvents(): void {
  drainFd(events, 'interface link');
  for (const f of [...listeners]) f();
}

/**
 * Calls `changed` on this thread whenever any interface in its network
 * namespace changes (up, down, carrier, MTU, gone, moved away), from one
 * netlink socket the thread's listeners share, opened for the first and
 * closed with the last. `dev` names the device in an error.
 * @returns the function that stops the calls.
 */
export function onLinkChange(dev: string, changed: () => void): () => void {
  if (events < 0) {
    events = linkEventsOpen(dev);
    watch(events, onLinkEvents, READABLE);
  }
  listeners.add(changed);
  return () => {
    if (!listeners.delete(changed) || listeners.size !== 0 || events < 0) return;
    closeFd(events);
    events = -1;
  };
}

export class IfaceLink {
  private gone = false;
  /** The port's socket while watched: its pending error (ENETDOWN) is cleared at each change. */
  private socket = -1;
  private unlisten: () => void = () => {};

  /** `dev` the port's device name, `portId` its id, for the line logged when `iface` (index `ifindex`) goes. */
  constructor(
    private readonly dev: string,
    private readonly portId: number,
    /** The interface's name. */
    readonly name: string,
    private readonly ifindex: number,
  ) {}

  /** Watches the interface until stop(), clearing socket `fd`'s error at each change; nothing when already watching or gone. */
  start(fd: number): void {
    if (this.socket >= 0 || this.gone) return;
    this.socket = fd;
    this.unlisten = onLinkChange(this.dev, () => this.changed());
  }

  /** Stops watching (before the socket closes). */
  stop(): void {
    if (this.socket < 0) return;
    this.socket = -1;
    this.unlisten();
  }

  /** An interface changed, maybe this one: clear the socket's error (it would fire again); a gone interface ends the watch. */
  private changed(): void {
    if (this.socket >= 0) socketError(this.socket);
    if (this.info() === null) this.stop();
  }

  /** The interface now, or null once it has gone (logged once: the port is down for good). */
  info(): IfaceInfo | null {
    if (this.gone) return null;
    const info = ifaceInfo(this.ifindex, this.dev);
    if (info) return info;
    this.gone = true;
    process.stderr.write(`${this.dev}: iface=${this.name} has gone; port ${this.portId} is down\n`);
    return null;
  }

  /** @returns whether the interface is there, up and with carrier. */
  up(): boolean {
    const info = this.info();
    return info !== null && (info.flags & (IFF_UP | IFF_RUNNING)) === (IFF_UP | IFF_RUNNING);
  }

  /** @returns whether the interface has gone (the port is down for good). */
  hasGone(): boolean {
    return this.gone;
  }
}
