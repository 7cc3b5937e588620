// The exact-match hash table's records in the heap, declared once
// (scripts/gen-layouts.ts writes hash-layout.ts and hash-layout.as.ts).
import { defineRecords } from '../eal/record.js';

export default defineRecords(
  {
    name: 'hash',
    doc: `
One exact-match hash table (rte_hash, cuckoo): this header, its buckets,
its key store and the stack of free key slots, each named by heap offset so
any thread that has the heap looks up from the header's offset alone.
A key hashes to 32 bits: the low bits pick its primary bucket, the top 16 are
its short signature, and primary ^ signature (masked) is its secondary
bucket, so a key moved between its two buckets finds its way back without
its hash. Key slot 0 is never used: a bucket entry with key index 0 is free,
and a key's position (what lookups return) is its key index - 1.`,
    size: 64,
    prefix: 'HASH',
    index: { u32: 'HASH_W' },
    fields: {
      buckets: { type: 'u32', at: 0, doc: 'Heap offset of the buckets (hashBucket records).' },
      keys: { type: 'u32', at: 4, doc: 'Heap offset of the key store: entries + 1 slots of keyStride bytes (the key, zero-padded, then its u32 data).' },
      free: { type: 'u32', at: 8, doc: 'Heap offset of the free key indexes: a stack of `entries` u32.' },
      freeTop: { type: 'u32', at: 12, doc: 'Free key indexes on the stack.' },
      entries: { type: 'u32', at: 16, doc: 'Keys the table holds (rte_hash_parameters.entries).' },
      keyLen: { type: 'u32', at: 20, doc: 'Bytes per key, 1..64 (key_len).' },
      keyStride: { type: 'u32', at: 24, doc: 'Bytes per key slot: the key rounded up to 4, then 4 of data, rounded up to 16.' },
      bucketMask: { type: 'u32', at: 28, doc: 'Buckets - 1 (a power of two).' },
      initVal: { type: 'u32', at: 32, doc: 'The hash function\'s seed (hash_func_init_val).' },
      moves: { type: 'u32', at: 36, doc: 'Keys moved to their other bucket to make room (cuckoo displacements), for tests and stats.' },
    },
    consts: {
      HASH_BUCKET_ENTRIES: { value: 8, doc: 'Entries per bucket (RTE_HASH_BUCKET_ENTRIES).' },
      HASH_KEY_LEN_MAX: { value: 64, doc: 'Longest key.' },
      HASH_BFS_MAX: { value: 1000, doc: 'Buckets a cuckoo search for room visits before the add gives up (RTE_HASH_BFS_QUEUE_MAX_LEN).' },
    },
  },
  {
    name: 'hashBucket',
    doc: `
One bucket: 8 short signatures, then the 8 key indexes they belong to (0:
free entry), one cache line. A lookup compares the signatures first and the
key only where one matches.`,
    size: 64,
    prefix: 'HB',
    fields: {
      sig: { type: 'u16', at: 0, count: 8, doc: 'Short signatures: the top 16 bits of each key\'s hash.' },
      keyIdx: { type: 'u32', at: 16, count: 8, doc: 'Key store index of each entry, 0 when the entry is free.' },
    },
  },
);
