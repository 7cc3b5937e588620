// memfd and mmap over a shared WebAssembly memory.
//
// What V8 does with a wasm memory (Node 20, V8 11.3, x64, trap handler on; see
// docs/native.md for how this was observed): every wasm32 memory, shared or
// not, reserves 10 GiB of address space up front (2 GiB guard below, 4 GiB of
// addressable space, 4 GiB guard above), whatever its maximum. Only the
// current length is read-write (private anonymous pages); the rest is
// PROT_NONE. memory.grow mprotects just the new pages to read-write, and a
// shared memory's backing store never moves. So a MAP_FIXED mapping inside
// the current length stays put through growth, and one outside it would turn
// guard pages into memory a kernel could reach out of bounds: refused.
//
// Every memory the shim has mapped into is recorded here by its base address,
// holding V8's BackingStore so the reservation cannot be freed (and its
// addresses reused) while a mapping of ours lives in it. One mutex guards the
// record; mmap itself is atomic for other threads, which see either the old
// pages or the new ones.
#include "memory.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <v8.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "common.h"

namespace dpkit {
namespace {

/** wasm32 addresses 4 GiB: the heap and every window mapped into it share them. */
constexpr uint64_t kWasm32Budget = uint64_t(1) << 32;
/** Backing copies the heap in chunks and skips all-zero ones, so untouched heap costs no memfd pages. */
constexpr size_t kCopyChunk = 64 * 1024;

struct Memory {
  std::shared_ptr<v8::BackingStore> store;  // keeps the reservation mapped while we map into it
  int backingFd = -1;                       // the shim's own dup of the backing memfd
  uint64_t backedLength = 0;
  std::map<uint64_t, uint64_t> windows;  // offset -> length
  std::map<uint64_t, uint64_t> guards;   // offset -> PROT_NONE bytes on each side of that window
};

std::mutex mu;
std::map<uintptr_t, Memory> memories;  // by base address

uint64_t PageSize() {
  static const uint64_t size = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return size;
}

// N-API has no SharedArrayBuffer accessor in Node 20. napi_value is a
// v8::Local<v8::Value> under another name (node_api.cc converts it with this
// same copy), and V8's BackingStore is what must be held to keep the memory.
std::shared_ptr<v8::BackingStore> ArgStore(const Napi::CallbackInfo& info, size_t i) {
  if (i >= info.Length()) return nullptr;
  napi_value raw = info[i];
  v8::Local<v8::Value> v;
  static_assert(sizeof v == sizeof raw, "napi_value is a v8::Local");
  memcpy(static_cast<void*>(&v), &raw, sizeof raw);
  if (!v->IsSharedArrayBuffer()) return nullptr;
  return v.As<v8::SharedArrayBuffer>()->GetBackingStore();
}

std::string Hex(uint64_t v) {
  char buf[24];
  snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string Range(uint64_t off, uint64_t len) { return "[" + Hex(off) + ", " + Hex(off + len) + ")"; }

/** Why [off, off+len) of a memory at `base` with `length` bytes is no place for a mapping, or "". */
std::string CheckWindow(uintptr_t base, uint64_t length, uint64_t off, uint64_t len, uint64_t align) {
  std::string w = "window " + Range(off, len);
  if (len == 0) return w + ": length is 0";
  if (base % PageSize() != 0) return w + ": the memory is not page aligned (pass a WebAssembly.Memory's buffer)";
  if (off % align != 0 || len % align != 0) return w + ": offset and length must be multiples of " + std::to_string(align) + " bytes";
  if (off + len > kWasm32Budget) return w + ": past wasm32's 4 GiB; heap and mapped peer memory must fit in 4 GiB together";
  if (off + len > length) return w + ": past the memory's current " + std::to_string(length) + " bytes (map only inside it)";
  return "";
}

/**
 * Puts ordinary memory back over [off, off+len): the backing memfd's pages
 * (zeroed first) where the memory is backed, anonymous zero pages elsewhere.
 * Returns 0 or an errno.
 */
int Restore(uintptr_t base, const Memory& m, uint64_t off, uint64_t len) {
  uint64_t end = off + len;
  if (m.backingFd >= 0 && off < m.backedLength) {
    uint64_t n = std::min(end, m.backedLength) - off;
    if (fallocate(m.backingFd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, n) != 0) return errno;
    void* p = mmap(reinterpret_cast<void*>(base + off), n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, m.backingFd, off);
    if (p == MAP_FAILED) return errno;
    off += n;
  }
  if (off < end) {
    void* p = mmap(reinterpret_cast<void*>(base + off), end - off, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return errno;
  }
  return 0;
}

bool AllZero(const uint8_t* p, size_t n) {
  const uint64_t* w = reinterpret_cast<const uint64_t*>(p);
  for (size_t i = 0; i < n / 8; i++)
    if (w[i] != 0) return false;
  return true;
}

// memfdCreate(name: string, size: number, seal: boolean): fd
Napi::Value MemfdCreate(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  uint64_t size;
  if (info.Length() != 3 || !info[0].IsString() || !ArgSize(info, 1, &size) || !info[2].IsBoolean())
    return ThrowUsage(env, "memfdCreate(name: string, size: number, seal: boolean)");
  std::string name = info[0].As<Napi::String>().Utf8Value();
  int fd = memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return ThrowSys(env, "memfd_create", errno, name);
  if (ftruncate(fd, static_cast<off_t>(size)) != 0 ||
      (info[2].As<Napi::Boolean>() && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0)) {
    int err = errno;
    close(fd);
    return ThrowSys(env, "memfd_create", err, name + " size " + std::to_string(size));
  }
  return Napi::Number::New(env, fd);
}

// fdSeals(fd): the file's seals (F_GET_SEALS), or -1 for a file that takes no seals (EINVAL:
// not a memfd/shmem file). A peer's region is safe to map only if it cannot shrink under us.
Napi::Value FdSeals(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int fd;
  if (info.Length() != 1 || !ArgFd(info, 0, &fd)) return ThrowUsage(env, "fdSeals(fd: number)");
  int seals = fcntl(fd, F_GET_SEALS);
  if (seals < 0 && errno != EINVAL) return ThrowSys(env, "fcntl F_GET_SEALS", errno, FdName(fd));
  return Napi::Number::New(env, seals < 0 ? -1 : seals);
}

// backMemory(buffer: SharedArrayBuffer, fd): copies the memory into fd and maps fd over all of it.
Napi::Value BackMemory(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::shared_ptr<v8::BackingStore> store = ArgStore(info, 0);
  int fd;
  if (info.Length() != 2 || !store || !ArgFd(info, 1, &fd)) return ThrowUsage(env, "backMemory(buffer: SharedArrayBuffer, fd: number)");
  auto base = reinterpret_cast<uintptr_t>(store->Data());
  std::lock_guard<std::mutex> lock(mu);
  uint64_t length = store->ByteLength();
  auto it = memories.find(base);
  if (it != memories.end() && it->second.backingFd >= 0) return ThrowRefused(env, "EBUSY", "backMemory: the memory is already backed by an fd");
  if (it != memories.end() && !it->second.windows.empty()) return ThrowRefused(env, "EBUSY", "backMemory: the memory has mapped windows; unmap them first");
  std::string why = CheckWindow(base, length, 0, length, PageSize());
  if (!why.empty()) return ThrowRefused(env, "EINVAL", "backMemory: " + why);
  struct stat st;
  if (fstat(fd, &st) != 0) return ThrowSys(env, "fstat", errno, FdName(fd));
  if (static_cast<uint64_t>(st.st_size) < length)
    return ThrowRefused(env, "EINVAL", "backMemory: " + FdName(fd) + " is " + std::to_string(st.st_size) + " bytes; the memory needs " + std::to_string(length));

  // Fill the fd through a temporary mapping, then move that mapping over the
  // memory in one mremap: a failure before the move leaves the memory as it was.
  void* tmp = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (tmp == MAP_FAILED) return ThrowSys(env, "mmap", errno, FdName(fd));
  if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, length) != 0) {
    int err = errno;
    munmap(tmp, length);
    return ThrowSys(env, "fallocate", err, FdName(fd));
  }
  int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) {
    int err = errno;
    munmap(tmp, length);
    return ThrowSys(env, "fcntl", err, FdName(fd) + " F_DUPFD_CLOEXEC");
  }
  const auto* src = reinterpret_cast<const uint8_t*>(base);
  auto* dst = static_cast<uint8_t*>(tmp);
  for (uint64_t o = 0; o < length; o += kCopyChunk) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(kCopyChunk, length - o));
    if (!AllZero(src + o, n)) memcpy(dst + o, src + o, n);
  }
  void* moved = mremap(tmp, length, length, MREMAP_MAYMOVE | MREMAP_FIXED, reinterpret_cast<void*>(base));
  if (moved == MAP_FAILED) {
    // mremap may have unmapped the memory before failing: put the bytes back from the copy.
    int err = errno;
    Memory anonymous;
    if (Restore(base, anonymous, 0, length) == 0) memcpy(reinterpret_cast<void*>(base), tmp, length);
    munmap(tmp, length);
    close(own);
    return ThrowSys(env, "mremap", err, "memfd over the memory");
  }
  Memory& m = memories[base];
  m.store = store;
  m.backingFd = own;
  m.backedLength = length;
  return env.Undefined();
}

// mapWindow(buffer: SharedArrayBuffer, offset, length, fd, fdOffset[, guard])
// guard: bytes (whole pages) on each side of the window made PROT_NONE, so a
// wasm kernel that strays past the window traps instead of reaching the heap.
Napi::Value MapWindow(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::shared_ptr<v8::BackingStore> store = ArgStore(info, 0);
  uint64_t off, len, fdOff, guard = 0;
  int fd;
  if ((info.Length() != 5 && info.Length() != 6) || !store || !ArgSize(info, 1, &off) || !ArgSize(info, 2, &len) || !ArgFd(info, 3, &fd) || !ArgSize(info, 4, &fdOff) ||
      (info.Length() == 6 && !ArgSize(info, 5, &guard)))
    return ThrowUsage(env, "mapWindow(buffer: SharedArrayBuffer, offset: number, length: number, fd: number, fdOffset: number, guard?: number)");
  auto base = reinterpret_cast<uintptr_t>(store->Data());
  struct stat st;
  if (fstat(fd, &st) != 0) return ThrowSys(env, "fstat", errno, FdName(fd));
  // hugetlbfs (a VM's guest memory) maps only in whole huge pages, at addresses aligned to them.
  uint64_t align = PageSize();
  struct statfs fs;
  if (fstatfs(fd, &fs) == 0 && fs.f_type == HUGETLBFS_MAGIC) align = static_cast<uint64_t>(fs.f_bsize);
  std::lock_guard<std::mutex> lock(mu);
  std::string why = CheckWindow(base, store->ByteLength(), off, len, align);
  if (why.empty() && (fdOff % align != 0 || (base + off) % align != 0))
    why = "window " + Range(off, len) + ": fd offset " + Hex(fdOff) + " and the window's address must be multiples of " + std::to_string(align) + " bytes";
  // The file's last page may be partial (a memif region is sized in bytes): mapping it whole is
  // what mmap allows, the bytes past the end read as zeroes and never fault.
  uint64_t fileEnd = (static_cast<uint64_t>(st.st_size) + align - 1) / align * align;
  if (why.empty() && S_ISREG(st.st_mode) && fileEnd < fdOff + len)
    why = "window " + Range(off, len) + ": " + FdName(fd) + " is " + std::to_string(st.st_size) + " bytes, the window needs " + std::to_string(fdOff + len);
  Memory& m = memories[base];
  if (!m.store) m.store = store;
  if (why.empty() && guard != 0 && (guard % PageSize() != 0 || guard > off || off + len + guard > store->ByteLength()))
    why = "window " + Range(off, len) + ": guard " + Hex(guard) + " must be whole pages with room on both sides inside the memory";
  if (why.empty()) {
    // Windows and their guard pages may not overlap one another.
    for (auto& [o, l] : m.windows) {
      uint64_t g = m.guards.count(o) ? m.guards[o] : 0;
      if (o - g < off + len + guard && off - guard < o + l + g) {
        why = "window " + Range(off, len) + ": overlaps the mapped window " + Range(o, l) + " or its guard pages";
        break;
      }
    }
  }
  if (!why.empty()) {
    if (m.windows.empty() && m.backingFd < 0) memories.erase(base);
    return ThrowRefused(env, "EINVAL", "mapWindow: " + why);
  }
  void* p = mmap(reinterpret_cast<void*>(base + off), len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, static_cast<off_t>(fdOff));
  if (p == MAP_FAILED) {
    // Most failures (EACCES, ENODEV...) come before the kernel touches the
    // range; a late one (ENOMEM) may leave it unmapped, a hole that would
    // fault: msync tells which, and only a hole gets fresh zero pages.
    int err = errno;
    if (msync(reinterpret_cast<void*>(base + off), len, MS_ASYNC) != 0 && errno == ENOMEM) Restore(base, m, off, len);
    if (m.windows.empty() && m.backingFd < 0) memories.erase(base);
    return ThrowSys(env, "mmap", err, FdName(fd) + " into window " + Range(off, len));
  }
  if (guard != 0 && (mprotect(reinterpret_cast<void*>(base + off - guard), guard, PROT_NONE) != 0 ||
                     mprotect(reinterpret_cast<void*>(base + off + len), guard, PROT_NONE) != 0)) {
    int err = errno;
    mprotect(reinterpret_cast<void*>(base + off - guard), guard, PROT_READ | PROT_WRITE);
    Restore(base, m, off, len);
    if (m.windows.empty() && m.backingFd < 0) memories.erase(base);
    return ThrowSys(env, "mprotect", err, "guard pages around window " + Range(off, len));
  }
  m.windows[off] = len;
  if (guard != 0) m.guards[off] = guard;
  return env.Undefined();
}

// unmapWindow(buffer: SharedArrayBuffer, offset, length): exactly a window mapWindow made.
Napi::Value UnmapWindow(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  std::shared_ptr<v8::BackingStore> store = ArgStore(info, 0);
  uint64_t off, len;
  if (info.Length() != 3 || !store || !ArgSize(info, 1, &off) || !ArgSize(info, 2, &len))
    return ThrowUsage(env, "unmapWindow(buffer: SharedArrayBuffer, offset: number, length: number)");
  auto base = reinterpret_cast<uintptr_t>(store->Data());
  std::lock_guard<std::mutex> lock(mu);
  auto it = memories.find(base);
  if (it == memories.end() || it->second.windows.count(off) == 0 || it->second.windows[off] != len)
    return ThrowRefused(env, "EINVAL", "unmapWindow: no window " + Range(off, len) + " is mapped in this memory");
  Memory& m = it->second;
  if (m.guards.count(off)) {
    uint64_t g = m.guards[off];
    if (mprotect(reinterpret_cast<void*>(base + off - g), g, PROT_READ | PROT_WRITE) != 0 || mprotect(reinterpret_cast<void*>(base + off + len), g, PROT_READ | PROT_WRITE) != 0)
      return ThrowSys(env, "mprotect", errno, "guard pages around window " + Range(off, len));
    m.guards.erase(off);
  }
  int err = Restore(base, m, off, len);
  if (err) return ThrowSys(env, "mmap", err, "heap pages over window " + Range(off, len));
  m.windows.erase(off);
  if (m.windows.empty() && m.backingFd < 0) memories.erase(it);
  return env.Undefined();
}

}  // namespace

std::shared_ptr<v8::BackingStore> MemoryStore(const Napi::CallbackInfo& info, size_t i) { return ArgStore(info, i); }

void InitMemory(Napi::Env env, Napi::Object exports) {
  exports.Set("pageSize", Napi::Number::New(env, static_cast<double>(PageSize())));
  exports.Set("memfdCreate", Napi::Function::New(env, MemfdCreate, "memfdCreate"));
  exports.Set("backMemory", Napi::Function::New(env, BackMemory, "backMemory"));
  exports.Set("mapWindow", Napi::Function::New(env, MapWindow, "mapWindow"));
  exports.Set("unmapWindow", Napi::Function::New(env, UnmapWindow, "unmapWindow"));
  exports.Set("fdSeals", Napi::Function::New(env, FdSeals, "fdSeals"));
}

}  // namespace dpkit
