// libFuzzer target for the .msh reader (issue 11): any bytes given as a mesh
// file must either read or fail with InputError; a crash, a hang, another
// exception type or unbounded memory is a bug. The bytes go through a real
// file because read_msh's contract is a path.
#include <cstddef>
#include <cstdint>

#include "fuzz_support.hpp"
#include "io/errors.hpp"
#include "mesh/gmsh_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto file = bipo::fuzz::scratch_file("mesh.msh");
  bipo::fuzz::write_bytes(file, data, size);
  try {
    (void)bipo::read_msh(file);
  } catch (const bipo::InputError&) {
    // the expected outcome for bad input
  }
  return 0;
}
