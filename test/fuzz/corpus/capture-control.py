#!/usr/bin/env python3
# How vhost-user-dpdk.jsonl and memif-dpdk.jsonl were captured: the control messages two real
# DPDK 22.11 testpmds (Debian's) exchanged, through this proxy, one JSON line per message
# ({dir: client|server, hex, fds}). Usage: capture-control.py vhost|memif LISTEN SERVER OUT.
#   EAL="--no-huge -m 1024 --no-pci"
#   vhost: dpdk-testpmd --lcores 0@0,1@0 $EAL --file-prefix a --vdev net_vhost0,iface=/tmp/vh.sock,queues=1 -- --forward-mode=txonly
#          capture-control.py vhost /tmp/px.sock /tmp/vh.sock vhost.jsonl
#          dpdk-testpmd --lcores 0@1,1@1 $EAL --file-prefix b --vdev virtio_user0,path=/tmp/px.sock,packed_vq=0 -- --forward-mode=rxonly
#          (and again with queues=2 on both, packed_vq=1, --rxq=2 --txq=2)
#   memif: dpdk-testpmd ... --vdev net_memif0,role=server,socket=/tmp/m.sock,socket-abstract=no -- --forward-mode=rxonly
#          capture-control.py memif /tmp/px2.sock /tmp/m.sock memif.jsonl
#          dpdk-testpmd ... --vdev net_memif0,role=client,socket=/tmp/px2.sock,socket-abstract=no -- --forward-mode=txonly
import array, json, socket, sys, select, struct, os
kind, listen, server, out = sys.argv[1:5]
typ = socket.SOCK_STREAM if kind == 'vhost' else socket.SOCK_SEQPACKET
if os.path.exists(listen): os.unlink(listen)
ls = socket.socket(socket.AF_UNIX, typ); ls.bind(listen); ls.listen(1)
c, _ = ls.accept()
s = socket.socket(socket.AF_UNIX, typ); s.connect(server)
f = open(out, 'a')
bufs = {c: b'', s: b''}
def recv(sock):
    data, anc, flags, _ = sock.recvmsg(4096, socket.CMSG_SPACE(64 * 4))
    fds = array.array('i')
    for lvl, t, d in anc:
        if lvl == socket.SOL_SOCKET and t == socket.SCM_RIGHTS:
            fds.frombytes(d[:len(d) - len(d) % 4])
    return data, list(fds)
pending = {c: [], s: []}
while True:
    r, _, _ = select.select([c, s], [], [], 30)
    if not r: break
    for sock in r:
        data, fds = recv(sock)
        if not data: sys.exit(0)
        other = s if sock is c else c
        d = 'client' if sock is c else 'server'
        send = lambda m, fs: other.sendmsg([m], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', fs))] if fs else [])
        if kind == 'memif':
            send(data, fds)
            f.write(json.dumps({'dir': d, 'hex': data.hex(), 'fds': len(fds)}) + '\n')
            for fd in fds: os.close(fd)
        else:
            # A stream merges messages: forward one at a time, each with the fds its request carries.
            bufs[sock] += data; pending[sock] += fds
            while len(bufs[sock]) >= 12:
                req, fl, size = struct.unpack_from('<III', bufs[sock], 0)
                if len(bufs[sock]) < 12 + size: break
                m, bufs[sock] = bufs[sock][:12 + size], bufs[sock][12 + size:]
                n = 0
                if d == 'client':
                    if req == 5: n = struct.unpack_from('<I', m, 12)[0]
                    elif req in (12, 13, 14): n = 0 if struct.unpack_from('<Q', m, 12)[0] & 0x100 else 1
                    elif req in (6, 7, 21, 32): n = 1
                fs, pending[sock] = pending[sock][:n], pending[sock][n:]
                send(m, fs)
                for fd in fs: os.close(fd)
                f.write(json.dumps({'dir': d, 'hex': m.hex(), 'fds': len(fs)}) + '\n')
        f.flush()
