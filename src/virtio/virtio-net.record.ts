// The virtio-net header, declared once (scripts/gen-layouts.ts writes
// virtio-net-layout.ts and virtio-net-layout.as.ts).
import { defineRecords } from '../eal/record.js';

export default defineRecords({
  name: 'netHdr',
  doc: `
struct virtio_net_hdr_mrg_rxbuf (virtio 1.x 5.1.6), little-endian: dpkit
requires VIRTIO_F_VERSION_1, so every packet on the ring is behind these 12
bytes, with num_buffers whether or not MRG_RXBUF is negotiated.`,
  size: 12,
  sizeName: 'NET_HDR_SIZE',
  prefix: 'HDR',
  fields: {
    flags: { type: 'u8', at: 0, doc: 'VIRTIO_NET_HDR_F_* (0: dpkit offloads nothing through the header).' },
    gsoType: { type: 'u8', at: 1, doc: 'VIRTIO_NET_HDR_GSO_* (0).' },
    hdrLen: { type: 'u16', at: 2, doc: 'GSO header length.' },
    gsoSize: { type: 'u16', at: 4, doc: 'GSO segment size.' },
    csumStart: { type: 'u16', at: 6, doc: 'Checksum offload: where summing starts.' },
    csumOffset: { type: 'u16', at: 8, doc: 'Checksum offload: where the sum goes, from csumStart.' },
    numBuffers: { type: 'u16', at: 10, doc: 'Buffers (used entries) the packet spans: 1 unless MRG_RXBUF merged several.' },
  },
});
