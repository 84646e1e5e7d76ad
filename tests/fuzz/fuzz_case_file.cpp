// libFuzzer target for the case-file reader (issue 11): any bytes given as a
// case file must either read or fail with InputError. Anything else (a crash,
// a hang, another exception type, unbounded memory) is a bug. The bytes go
// through a real file because read_case's contract is a path (its file checks
// are part of what is fuzzed).
#include <cstddef>
#include <cstdint>

#include "core/errors.hpp"
#include "fuzz_support.hpp"
#include "io/case_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = bipo::fuzz::scratch_file("case.yaml");
  bipo::fuzz::write_bytes(file, data, size);
  try {
    (void)bipo::read_case(file);
  } catch (const bipo::InputError&) {
    // the expected outcome for bad input
  }
  return 0;
}
