// libFuzzer target for the .msh reader (issue 11): any bytes given as a mesh
// file must either read or fail with InputError; a crash, a hang, another
// exception type or unbounded memory is a bug. The bytes go straight to
// parse_msh, the parser behind read_msh (read_msh adds only the file checks,
// which the unit tests cover), so an execution costs no file write.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/errors.hpp"
#include "mesh/msh_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)bipo::parse_msh(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.msh");
  } catch (const bipo::InputError&) {
    // the expected outcome for bad input
  }
  return 0;
}
