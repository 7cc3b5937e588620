// A real VM as the vhost-user frontend: QEMU boots Debian's kernel with a
// busybox initramfs whose init brings up every virtio-net device and pings
// the address one below its own on each (echo mode), or pings another guest
// (pair mode), and powers off. The guest's serial console is a file the test
// reads; the init waits for states (a device, a carrier, an answer), bounded.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

const REQUIRED = process.env['DPKIT_REQUIRE_TOOLS'] === '1';
const QEMU = 'qemu-system-x86_64';
const BUSYBOX = '/bin/busybox';
const has = (cmd: string): boolean => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

/** The newest kernel in /boot, with its version (for its modules). */
function newestKernel(): { image: string; version: string } | undefined {
  if (!existsSync('/boot')) return undefined;
  const images = readdirSync('/boot').filter((f) => f.startsWith('vmlinuz-')).sort();
  const image = images.at(-1);
  return image ? { image: join('/boot', image), version: image.slice('vmlinuz-'.length) } : undefined;
}

/**
 * The module files virtio-pci and virtio-net need on `version`, in load order
 * (modprobe resolves the dependencies; built-in ones need no file).
 */
function virtioModules(version: string): string[] | undefined {
  const r = spawnSync('modprobe', ['--show-depends', '-a', '-S', version, 'virtio_pci', 'virtio_net'], { encoding: 'utf8' });
  if (r.status !== 0) return undefined;
  const files: string[] = [];
  for (const line of r.stdout.split('\n')) {
    const m = /^insmod (\S+)/.exec(line);
    if (m && !files.includes(m[1]!)) files.push(m[1]!);
  }
  return files;
}

const kernel = newestKernel();
const modules = kernel && virtioModules(kernel.version);
const missing = [
  !has(QEMU) && `${QEMU} (Debian package qemu-system-x86)`,
  !existsSync(BUSYBOX) && `${BUSYBOX} (busybox-static)`,
  // The initramfs has no libc: a dynamically linked busybox (package busybox) cannot be its init.
  existsSync(BUSYBOX) && spawnSync('ldd', [BUSYBOX]).status === 0 && `a static ${BUSYBOX} (busybox-static; this one is dynamically linked)`,
  !kernel && 'a kernel in /boot (linux-image-amd64)',
  kernel && !modules && `virtio_net's modules for ${kernel.version} (modprobe --show-depends failed)`,
  modules?.some((f) => f.endsWith('.xz') || f.endsWith('.zst')) && "compressed modules (busybox's insmod loads plain .ko files)",
].filter((m): m is string => typeof m === 'string');
if (REQUIRED && missing.length > 0) throw new Error(`DPKIT_REQUIRE_TOOLS=1 but the VM tests lack ${missing.join(', ')} (.ci/run installs them)`);
/** Why the VM tests skip, or false when they run. */
export const skipQemu: string | false = missing.length > 0 && `no VM here: ${missing.join(', ')}`;

/** Echo mode: NIC `nic` has MAC guestMac(nic), the guest takes 10.0.nic.2 on it and pings guestPeer(nic), 10.0.nic.1. */
export const guestPeer = (nic: number): string => `10.0.${nic}.1`;
export const guestMac = (nic: number): string => `52:54:00:00:00:0${nic + 1}`;

/**
 * ICMP payload sizes the guest pings with: the default, and a full 1514-byte
 * frame. `-A -i 3`: the next echo as soon as the reply is in, or after 3 s
 * without one.
 */
export const PING_SIZES = [56, 1472];
/** Echoes a size, a CPU and a round: with both sizes more than a 256-slot ring, so each queue's rings wrap (packed: the wrap counters flip). */
export const PINGS = 150;
/** The guest's CPUs, and so the queue pairs its virtio-net driver uses on each NIC. */
export const GUEST_CPUS = 2;

/** Bytes the sending guest of a pair serves the other over HTTP (busybox httpd and wget), after the pings. */
export const TRANSFER = 4 << 20;

/** Rounds of pings; between them the guest unloads and reloads virtio-net (each device reset and set up again). */
export const ROUNDS = 2;

const INIT = `#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $(cat /modules); do insmod /lib/$m || echo "GUEST insmod $m failed"; done
# up IFACE ADDR: waits for the device, gives it ADDR/24, and waits for its carrier, which comes once
# the backend has set the rings up (QEMU as the server: once dpkit connected); prints the carrier.
up() {
  for i in $(seq 1 60); do [ -e /sys/class/net/$1 ] && break; sleep 1; done
  ip link set $1 up && ip addr add $2/24 dev $1
  for i in $(seq 1 120); do [ "$(cat /sys/class/net/$1/carrier 2>/dev/null)" = 1 ] && break; sleep 1; done
  cat /sys/class/net/$1/carrier 2>/dev/null
}
round() {
  for i in $(seq 1 60); do [ -e /sys/class/net/eth0 ] && break; sleep 1; done
  for dev in /sys/class/net/eth*; do
    [ -e $dev ] || { echo "GUEST no virtio-net device"; break; }
    n=\${dev##*/}; mac=$(cat $dev/address)
    net=10.0.$((0x\${mac##*:} - 1))
    echo "GUEST round $1 $mac carrier $(up $n $net.2)"
    # From each CPU: virtio-net maps CPU i to queue pair i (XPS), so each pair carries its own.
    for cpu in $(seq 0 $((${GUEST_CPUS} - 1))); do
      for s in ${PING_SIZES.join(' ')}; do taskset $((1 << cpu)) ping -A -i 3 -c ${PINGS} -W 10 -s $s $net.1; done
    done
  done
}
# Pair mode (dpkit.self=IP dpkit.peer=IP on the kernel's command line): one NIC, ping the other
# guest; then the other guest fetches ${TRANSFER} random bytes over HTTP from the one with dpkit.send=1.
for p in $(cat /proc/cmdline); do case $p in dpkit.self=*) self=\${p#*=};; dpkit.peer=*) peer=\${p#*=};; dpkit.send=*) send=\${p#*=};; esac; done
if [ -n "$peer" ]; then
  echo "GUEST $self carrier $(up eth0 $self)"
  nc -l -p 7 < /dev/null > /done &
  # The other guest may still be booting: the counted pings start once it answers one.
  for i in $(seq 1 300); do ping -c 1 -W 1 $peer > /dev/null && break; done
  for s in ${PING_SIZES.join(' ')}; do ping -A -i 3 -c ${PINGS} -W 10 -s $s $peer; done
  # The sender serves the bytes over HTTP (busybox httpd), the other fetches them (wget).
  # Neither guest powers off while the other still needs it: each tells the other it is done, and
  # waits for its word; the sender's word waits for the receiver's, which comes once every byte is in.
  tell_done() { for i in $(seq 1 600); do echo done | nc $peer 7 && break; sleep 1; done; }
  if [ "$send" = 1 ]; then
    mkdir -p /www && head -c ${TRANSFER} /dev/urandom > /www/data
    echo "GUEST sent $(wc -c < /www/data) bytes, md5 $(md5sum < /www/data)"
    httpd -p 8080 -h /www
  else
    for i in $(seq 1 600); do wget -q -O /recv http://$peer:8080/data && break; sleep 1; done
    echo "GUEST received $(wc -c < /recv) bytes, md5 $(md5sum < /recv)"
    tell_done
  fi
  for i in $(seq 1 600); do [ -s /done ] && break; sleep 1; done
  [ "$send" = 1 ] && tell_done
  echo "GUEST $peer said $(cat /done)"
  echo "GUEST done"
  poweroff -f
fi
round 1
for r in $(seq 2 ${ROUNDS}); do
  # The driver's removal resets each device (QEMU stops the rings: GET_VRING_BASE); its return sets them up again.
  rmmod virtio_net && insmod /lib/virtio_net.ko || echo "GUEST reload failed"
  round $r
done
echo "GUEST done"
poweroff -f
`;

/** Writes the initramfs (a newc cpio archive: busybox, the modules, init) into `dir` once; returns its path. */
function buildInitramfs(dir: string): string {
  const out = join(dir, 'initramfs.cpio');
  if (existsSync(out)) return out;
  const root = join(dir, 'root');
  for (const d of ['bin', 'lib', 'proc', 'sys', 'dev']) mkdirSync(join(root, d), { recursive: true });
  copyFileSync(BUSYBOX, join(root, 'bin', 'busybox'));
  chmodSync(join(root, 'bin', 'busybox'), 0o755);
  for (const m of modules!) copyFileSync(m, join(root, 'lib', basename(m)));
  writeFileSync(join(root, 'modules'), modules!.map((m) => basename(m)).join('\n') + '\n');
  writeFileSync(join(root, 'init'), INIT, { mode: 0o755 });
  const r = spawnSync('sh', ['-c', `cd '${root}' && find . | ${BUSYBOX} cpio -o -H newc > '${out}'`], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`building the initramfs failed: ${r.stderr}`);
  return out;
}

/** One NIC of the guest: a vhost-user netdev on `socket` with GUEST_CPUS queue pairs; QEMU listens when `qemuServer`. */
export interface GuestNic {
  socket: string;
  qemuServer?: boolean;
  packed?: boolean;
}

/** A booted guest: its QEMU process, the console as printed so far, and its exit. */
export interface Guest {
  child: ChildProcess;
  console: () => string;
  /** QEMU's own stderr (its errors), for failure messages. */
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: string | null }>;
  command: string;
}

/** How a guest runs: its name (its console file), and in pair mode its address and the other guest's. */
export interface GuestOptions {
  name?: string;
  /** Pair mode: one NIC with address `self`, pinging `peer` (another guest) instead of the echo rounds; `send`: then sends it TRANSFER bytes. */
  pair?: { self: string; peer: string; send?: boolean };
  /** CPUs, and queue pairs on each NIC (GUEST_CPUS unless given). */
  cpus?: number;
}

/**
 * Boots a guest with `nics`. In echo mode NIC i has MAC guestMac(i) and
 * pings guestPeer(i); in pair mode the MAC's fifth byte is the guest's own
 * address's last, so two guests differ. TCG, not KVM: /dev/kvm in a VM is
 * often unusable. Guest RAM is a shared memfd, as vhost-user needs.
 * `vectors=0` (INTx): QEMU 7.2 under TCG crashes in msix_set_vector_notifiers
 * when vhost starts with MSI-X.
 */
export function bootGuest(dir: string, nics: GuestNic[], opts: GuestOptions = {}): Guest {
  const initrd = buildInitramfs(dir);
  const consolePath = join(dir, `${opts.name ?? 'guest'}.console`);
  writeFileSync(consolePath, '');
  const cpus = opts.cpus ?? GUEST_CPUS;
  const pair = opts.pair ? ` dpkit.self=${opts.pair.self} dpkit.peer=${opts.pair.peer}${opts.pair.send ? ' dpkit.send=1' : ''}` : '';
  const args = [
    '-nodefaults', '-no-user-config', '-display', 'none', '-no-reboot',
    '-machine', 'q35,accel=tcg,memory-backend=mem0', '-m', '256', '-smp', String(cpus),
    '-object', 'memory-backend-memfd,id=mem0,size=256M,share=on',
    '-serial', `file:${consolePath}`,
    '-kernel', kernel!.image, '-initrd', initrd,
    '-append', `console=ttyS0 quiet panic=-1 ipv6.disable=1${pair}`,
  ];
  nics.forEach((n, i) => {
    const mac = opts.pair ? `52:54:00:00:${Number(opts.pair.self.split('.')[3]).toString(16).padStart(2, '0')}:0${i + 1}` : guestMac(i);
    args.push('-chardev', `socket,id=char${i},path=${n.socket}${n.qemuServer ? ',server=on,wait=off' : ''}`);
    args.push('-netdev', `vhost-user,id=net${i},chardev=char${i},queues=${cpus}`);
    args.push('-device', `virtio-net-pci,netdev=net${i},mac=${mac},${cpus > 1 ? 'mq=on,' : ''}vectors=0,romfile=${n.packed ? ',packed=on' : ''}`);
  });
  const child = spawn(QEMU, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exit = new Promise<{ code: number | null; signal: string | null }>((r) => child.on('exit', (code, signal) => r({ code, signal })));
  return { child, console: () => readFileSync(consolePath, 'utf8'), stderr: () => stderr, exit, command: `${QEMU} ${args.join(' ')}` };
}
