// Replays the fuzz corpus (tests/fuzz/corpus/, issue 11) through the readers
// in the ordinary build, so that the default suite keeps every input that once
// crashed or hung a reader (and every seed) on the right side: it reads, or it
// fails with InputError. The fuzzers themselves need clang (scripts/fuzz.sh).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "io/case_file.hpp"
#include "mesh/gmsh_io.hpp"

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> corpus(const std::string& target) {
  std::vector<fs::path> files;
  for (const auto& entry :
       fs::directory_iterator(fs::path(BIPO_SOURCE_DIR) / "tests" / "fuzz" / "corpus" / target))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

/// Reads every file of the target's corpus with `read`. A file whose name
/// starts with `bad_` (an input that once crashed, hung or fooled a reader,
/// or one of the hostile examples) must fail with InputError; every
/// other one is a valid seed and must read. Returns the number of files.
template <class Read>
std::size_t replay(const std::string& target, Read&& read) {
  const auto files = corpus(target);
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.string());
    const bool bad = file.filename().string().rfind("bad_", 0) == 0;
    try {
      read(file);
      EXPECT_FALSE(bad) << "a bad input was read without an error";
    } catch (const bipo::InputError& e) {
      EXPECT_TRUE(bad) << "a valid seed was refused: " << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "escaped the reader: " << e.what();
    }
  }
  return files.size();
}

}  // namespace

TEST(FuzzCorpus, CaseFilesReadOrFailWithInputError) {
  EXPECT_GE(replay("case_file", [](const fs::path& f) { (void)bipo::read_case(f); }), 10u);
}

TEST(FuzzCorpus, MeshFilesReadOrFailWithInputError) {
  EXPECT_GE(replay("msh", [](const fs::path& f) { (void)bipo::read_msh(f); }), 12u);
  EXPECT_FALSE(fs::exists("/tmp/bipo_fuzz_must_not_exist")) << "a mesh file ran a command";
}
