// A vector for large buffers whose every element is written before it is read.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace foldc::rt {

/// Allocates for BulkVector. Growing the vector does not zero the new
/// elements (the elements are default-initialised: for floats, nothing is
/// written), since its user writes them before reading them. Blocks of a
/// megabyte and more are mapped on their own and asked for transparent huge
/// pages: one inference over one tree of 2^17 leaves touches hundreds of
/// megabytes for the first time, and in 4 KiB pages the page faults cost more
/// than the kernels' arithmetic.
template <class T> struct BulkAllocator {
  using value_type = T;
  static constexpr size_t kMappedBytes = size_t(1) << 20;
  static constexpr size_t kLineBytes = 64;

  BulkAllocator() = default;
  template <class U> BulkAllocator(const BulkAllocator<U> &) noexcept {}

  T *allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kMappedBytes) // on a cache line, as mapped blocks are
      return static_cast<T *>(::operator new(bytes, std::align_val_t(kLineBytes)));
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      throw std::bad_alloc();
    madvise(p, bytes, MADV_HUGEPAGE); // a hint: without huge pages, it is plain memory
    return static_cast<T *>(p);
  }
  void deallocate(T *p, size_t n) noexcept {
    const size_t bytes = n * sizeof(T);
    if (bytes < kMappedBytes)
      ::operator delete(p, std::align_val_t(kLineBytes));
    else
      munmap(p, bytes);
  }

  /// Default-initialises (no zeros written), where std::allocator value-initialises.
  template <class U> void construct(U *p) noexcept(noexcept(U())) {
    ::new (static_cast<void *>(p)) U;
  }
  template <class U, class... Args> void construct(U *p, Args &&...args) {
    ::new (static_cast<void *>(p)) U(std::forward<Args>(args)...);
  }

  template <class U> bool operator==(const BulkAllocator<U> &) const noexcept { return true; }
};

/// A std::vector whose growth leaves new elements unwritten, its large
/// blocks in huge pages where the host has them.
template <class T> using BulkVector = std::vector<T, BulkAllocator<T>>;

} // namespace foldc::rt
