// Replays the fuzz corpus (tests/fuzz/corpus/, issue 11) through the readers
// in the ordinary build, so that the default suite keeps every input that once
// crashed or hung a reader (and every seed) on the right side: it reads, or it
// fails with InputError. The fuzzers themselves need clang (scripts/fuzz.sh).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "io/case_file.hpp"
#include "io/errors.hpp"
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

/// Reads every file of the target's corpus with `read`; returns how many
/// were accepted. A failure names the file and what escaped.
template <class Read>
int replay(const std::string& target, Read&& read) {
  int accepted = 0;
  for (const fs::path& file : corpus(target)) {
    SCOPED_TRACE(file.string());
    try {
      read(file);
      ++accepted;
    } catch (const bipo::InputError&) {
      // rejected with a message: the right outcome for a bad input
    } catch (const std::exception& e) {
      ADD_FAILURE() << "escaped the reader: " << e.what();
    }
  }
  return accepted;
}

}  // namespace

TEST(FuzzCorpus, CaseFilesReadOrFailWithInputError) {
  ASSERT_GE(corpus("case_file").size(), 5u);
  // The seeds that are valid case files must stay valid (a reader that
  // rejected everything would pass the loop above).
  EXPECT_GE(replay("case_file", [](const fs::path& f) { (void)bipo::read_case(f); }), 4);
}

TEST(FuzzCorpus, MeshFilesReadOrFailWithInputError) {
  ASSERT_GE(corpus("msh").size(), 7u);
  EXPECT_GE(replay("msh", [](const fs::path& f) { (void)bipo::read_msh(f); }), 7);
}
