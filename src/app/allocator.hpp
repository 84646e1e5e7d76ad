// Owns the process-wide tuning of the C library's allocator that bipo's
// programs (the command line and the benchmarks) apply at start-up.
#pragma once

namespace bipo {

/// Keeps freed memory in glibc's heap instead of unmapping it. bipo
/// allocates and frees dense matrices of several MB (the condensed stiffness
/// and its inverse, the Newton systems); by default glibc maps each one
/// afresh and every first touch of a page faults. On punch case A this
/// removes a quarter of the page faults. No effect with another C library.
void keep_freed_memory_in_heap();

}  // namespace bipo
