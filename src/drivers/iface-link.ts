/**
 * The link of a port on a Linux network interface (net_af_packet,
 * net_af_xdp): up while the interface is up with carrier; gone for good, with
 * one line on stderr, once the interface has disappeared. While the port
 * runs, one of its sockets is watched for the error the kernel raises when
 * the interface goes down or away (ENETDOWN), so the port notices without
 * being asked. The process goes on with its other ports.
 */
import { requireNative } from '../native/native.js';
import { IFF_RUNNING, IFF_UP, ifaceInfo, socketError, type IfaceInfo } from '../native/packet.js';
import { HANGUP, watch } from '../native/watch.js';
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

export class IfaceLink {
  private gone = false;
  private watched = -1;

  /** `dev` the port's device name, `portId` its id, for the line logged when `iface` (index `ifindex`) goes. */
  constructor(
    private readonly dev: string,
    private readonly portId: number,
    /** The interface's name. */
    readonly name: string,
    private readonly ifindex: number,
  ) {}

  /** Watches socket `fd` (HANGUP: its pending error) until stop(); nothing when already watching or gone. */
  start(fd: number): void {
    if (this.watched >= 0 || this.gone) return;
    this.watched = fd;
    watch(fd, () => this.onSocketError(fd), HANGUP);
  }

  /** Stops watching (before the socket closes). */
  stop(): void {
    if (this.watched < 0) return;
    requireNative(this.dev).unwatch(this.watched);
    this.watched = -1;
  }

  private onSocketError(fd: number): void {
    socketError(fd); // clears it (ENETDOWN): the watch would fire again
    this.watched = -1;
    if (this.info() !== null) this.start(fd); // down but still there: watch for the next change
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
