#include "app/allocator.hpp"

#include <cstdlib>  // defines __GLIBC__ (through features.h) when the C library is glibc

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace bipo {

void keep_freed_memory_in_heap() {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 256 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);
#endif
}

}  // namespace bipo
