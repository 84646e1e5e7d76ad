// Defines BIPO_TEST_SANITIZED in a build with AddressSanitizer or
// ThreadSanitizer (the `asan` and `tsan` presets), with GCC's and clang's
// spellings alike: the tests that cap the address space skip or loosen the
// cap there, since the sanitizers reserve terabytes of it, and the few too
// slow in the Debug sanitizer build skip themselves.
#pragma once

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define BIPO_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BIPO_TEST_SANITIZED 1
#endif
