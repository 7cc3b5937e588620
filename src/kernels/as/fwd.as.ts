// What is left of the shared kernel file: every kernel now lives beside its
// owner. net_vhost still counts bytes through drivers/burst-bytes.ts under
// the old name; once it uses Mbufs.pktLenSum this file goes.
export { mbufPktLenSum as pktLenSum } from '../../mem/mbuf.as';
