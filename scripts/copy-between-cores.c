// What a copy out of another core's cache costs, by vector width: the memif
// server's receive at 1518 B without the rest of a port (docs/benchmarks.md,
// memif, "What the copy is not").
//
// A producer on CPU 0 writes 1518-byte packets into a ring of 1024 slots of
// 2048 B (memif's layout: one client's C2S buffers) and publishes its head;
// a consumer on CPU 1 copies each packet out into one of 32 buffers 2176 B
// apart (a burst of dpkit's mbufs) and publishes its tail. The consumer's
// packet rate, best of six one-second runs, for one copy routine:
//
//   0  glibc's memmove, through a pointer (what V8's memory.copy ends in)
//   1  32-byte AVX2 loads and stores, ascending, 64 B a step (rte_memcpy's shape)
//   2  16-byte loads and stores, 128 B a step, all loads first (copyBytes'
//      inline blocks: wasm's widest vector)
//   3  16-byte loads and stores, 64 B a step
//
// Build and run (no DPDK, no dpkit; only when nothing else runs):
//   gcc -O2 -mavx2 -pthread scripts/copy-between-cores.c -o /tmp/copy-between-cores
//   for m in 0 1 2 3; do /tmp/copy-between-cores $m; done
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SLOTS 1024
#define SLOT_SIZE 2048
#define PKT_LEN 1518
#define BURST 32
#define MBUF_STRIDE 2176
#define HEADROOM 128

static uint8_t *region;
static _Alignas(64) _Atomic uint16_t head;
static _Alignas(64) _Atomic uint16_t tail;
static _Alignas(64) _Atomic int stop;

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *producer(void *arg) {
  (void)arg;
  pin(0);
  uint8_t *pkt = aligned_alloc(64, 4096);
  memset(pkt, 7, 4096);
  uint16_t h = 0;
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    uint16_t t = atomic_load_explicit(&tail, memory_order_acquire);
    uint16_t free = SLOTS - (uint16_t)(h - t);
    if (free > BURST) free = BURST;
    for (unsigned i = 0; i < free; i++) memcpy(region + ((h + i) & (SLOTS - 1)) * SLOT_SIZE, pkt + HEADROOM, PKT_LEN);
    h += free;
    atomic_store_explicit(&head, h, memory_order_release);
  }
  return NULL;
}

static inline void copy32(uint8_t *d, const uint8_t *s, size_t n) {
  size_t o = 0;
  for (; o + 64 <= n; o += 64) {
    __m256i a = _mm256_loadu_si256((const __m256i *)(s + o));
    __m256i b = _mm256_loadu_si256((const __m256i *)(s + o + 32));
    _mm256_storeu_si256((__m256i *)(d + o), a);
    _mm256_storeu_si256((__m256i *)(d + o + 32), b);
  }
  if (o < n) copy32(d + n - 64, s + n - 64, 64);
}

#define COPY16(name, step)                                                                   \
  static inline void name(uint8_t *d, const uint8_t *s, size_t n) {                          \
    size_t o = 0;                                                                            \
    __m128i r[step / 16];                                                                    \
    for (;; o += step) {                                                                     \
      if (o + step > n) o = n - step; /* the last block overlaps the one before, as copyBytes */ \
      for (int k = 0; k < step / 16; k++) r[k] = _mm_loadu_si128((const __m128i *)(s + o + 16 * k)); \
      for (int k = 0; k < step / 16; k++) _mm_storeu_si128((__m128i *)(d + o + 16 * k), r[k]); \
      if (o + step == n) break;                                                              \
    }                                                                                        \
  }
COPY16(copy16x128, 128)
COPY16(copy16x64, 64)

static void *(*volatile libc_memmove)(void *, const void *, size_t) = memmove;

int main(int argc, char **argv) {
  int mode = argc > 1 ? atoi(argv[1]) : 0;
  if (mode < 0 || mode > 3) {
    fprintf(stderr, "copy-between-cores: mode %d: expected 0 (memmove), 1 (32 B), 2 (16 B x 128), 3 (16 B x 64)\n", mode);
    return 2;
  }
  region = aligned_alloc(4096, SLOTS * SLOT_SIZE);
  memset(region, 0, SLOTS * SLOT_SIZE);
  uint8_t *mbufs = aligned_alloc(4096, BURST * MBUF_STRIDE + 4096);
  memset(mbufs, 0, BURST * MBUF_STRIDE + 4096);
  pthread_t p;
  pthread_create(&p, NULL, producer, NULL);
  pin(1);
  uint16_t t = 0;
  double best = 0;
  for (int run = 0; run < 6; run++) {
    struct timespec a, b;
    uint64_t got = 0;
    double ns;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do {
      for (int it = 0; it < 20000; it++) {
        uint16_t avail = atomic_load_explicit(&head, memory_order_acquire) - t;
        if (avail > BURST) avail = BURST;
        for (unsigned i = 0; i < avail; i++) {
          uint8_t *d = mbufs + i * MBUF_STRIDE + HEADROOM;
          const uint8_t *s = region + ((t + i) & (SLOTS - 1)) * SLOT_SIZE;
          if (mode == 0) libc_memmove(d, s, PKT_LEN);
          else if (mode == 1) copy32(d, s, PKT_LEN);
          else if (mode == 2) copy16x128(d, s, PKT_LEN);
          else copy16x64(d, s, PKT_LEN);
        }
        t += avail;
        got += avail;
        atomic_store_explicit(&tail, t, memory_order_release);
      }
      clock_gettime(CLOCK_MONOTONIC, &b);
      ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
    } while (ns < 1e9);
    if (got / ns * 1e3 > best) best = got / ns * 1e3;
  }
  atomic_store(&stop, 1);
  pthread_join(p, NULL);
  static const char *names[] = {"memmove", "32-byte vectors", "16-byte vectors, 128 B a step", "16-byte vectors, 64 B a step"};
  printf("%s: %.2f Mpps (%u-byte packets, best of six seconds)\n", names[mode], best, PKT_LEN);
  return 0;
}
