/**
 * net_tap's `remote=IFACE`, as DPDK's: traffic the remote interface receives
 * is redirected to the tap, so the port receives it, and what the port sends
 * (the tap's ingress, seen from the kernel) is redirected out of the remote
 * interface. DPDK installs these as TC rules through netlink (tap_flow.c's
 * implicit rules: the remote's promiscuous rule, which testpmd's default
 * promiscuous mode turns on, and TAP_REMOTE_TX); dpkit runs `tc` with the
 * same rules, a control-plane step at probe and close only:
 *
 *     tc qdisc add dev REMOTE ingress
 *     tc filter add dev REMOTE ingress protocol all u32 match u32 0 0 action mirred egress redirect dev TAP
 *     tc qdisc add dev TAP ingress
 *     tc filter add dev TAP ingress protocol all u32 match u32 0 0 action mirred egress redirect dev REMOTE
 *
 * Closing the port deletes the remote's ingress qdisc (its filter goes with
 * it); the tap's go with the tap. A remote that already has an ingress or
 * clsact qdisc is refused, its rules left as they were (DPDK flushes them).
 */
import { spawnSync } from 'node:child_process';
import { ArgError } from '../../errors.js';

/**
 * Every frame: u32 with an empty mask (cls_u32 is in every kernel build; the
 * kernels here have no cls_matchall or cls_flower: "TC classifier not found").
 */
const MATCH_ALL = ['protocol', 'all', 'u32', 'match', 'u32', '0', '0'];

/** `tc ...`; @returns its stderr's first line when it fails, undefined when it succeeds. */
function tc(args: string[]): string | undefined {
  const r = spawnSync('tc', args, { encoding: 'utf8' });
  if (r.error) return (r.error as NodeJS.ErrnoException).code === 'ENOENT' ? 'tc not found (iproute2)' : r.error.message;
  return r.status === 0 ? undefined : (r.stderr.trim().split('\n')[0] ?? `exit ${r.status}`);
}

/** The redirection between `remote` and `tap`, installed and later removed. */
export class TapRemote {
  private removed = false;

  /**
   * Installs the four rules.
   * @throws ArgError naming the device, the interface and tc's complaint
   *   (an ingress qdisc already there, no such interface, no CAP_NET_ADMIN);
   *   what was installed is removed first.
   */
  constructor(
    dev: string,
    /** The remote interface's name. */
    readonly remote: string,
    tap: string,
  ) {
    const steps: [string, string[]][] = [
      [remote, ['qdisc', 'add', 'dev', remote, 'ingress']],
      [remote, ['filter', 'add', 'dev', remote, 'ingress', ...MATCH_ALL, 'action', 'mirred', 'egress', 'redirect', 'dev', tap]],
      [tap, ['qdisc', 'add', 'dev', tap, 'ingress']],
      [tap, ['filter', 'add', 'dev', tap, 'ingress', ...MATCH_ALL, 'action', 'mirred', 'egress', 'redirect', 'dev', remote]],
    ];
    for (const [i, [iface, args]] of steps.entries()) {
      const err = tc(args);
      if (err === undefined) continue;
      if (i > 0) this.remove();
      // The kernel keeps one ingress slot per interface, shared with clsact; tc's own words for it name neither.
      if (i === 0 && /Exclusivity flag on|File exists/.test(err)) {
        throw new ArgError(`${dev}: remote=${remote}: ${remote} already has an ingress or clsact qdisc (another program's TC rules), which the redirection needs; remove it (tc qdisc del dev ${remote} ingress, or clsact) or choose another interface`);
      }
      throw new ArgError(`${dev}: remote=${remote}: tc ${args.join(' ')} on ${iface}: ${err}`);
    }
  }

  /** Deletes the remote's ingress qdisc and with it the redirection. Idempotent; a remote that has gone is fine. */
  remove(): void {
    if (this.removed) return;
    this.removed = true;
    tc(['qdisc', 'del', 'dev', this.remote, 'ingress']);
  }
}
