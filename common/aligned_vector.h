// AlignedVector: a std::vector whose storage starts on a 64-byte cache
// line, for the per-node columns the vectorised scoring loops read a
// whole vector register at a time (an unaligned 64-byte load spans two
// lines).
#ifndef METRICS_SCHEDULER_COMMON_ALIGNED_VECTOR_H_
#define METRICS_SCHEDULER_COMMON_ALIGNED_VECTOR_H_

#include <cstddef>
#include <new>
#include <vector>

namespace ms {

inline constexpr std::size_t kCacheLine = 64;

template <typename T>
struct CacheLineAllocator {
  using value_type = T;

  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    return static_cast<T*>(
        ::operator new (n * sizeof(T), std::align_val_t{kCacheLine}));
  }
  void deallocate(T* p, std::size_t) noexcept {
    ::operator delete (p, std::align_val_t{kCacheLine});
  }

  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const noexcept {
    return true;
  }
};

template <typename T>
using AlignedVector = std::vector<T, CacheLineAllocator<T>>;

}  // namespace ms

#endif  // METRICS_SCHEDULER_COMMON_ALIGNED_VECTOR_H_
