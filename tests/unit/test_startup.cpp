// What starting bipo loads: the executable does not need the Gmsh library
// (its ELF dynamic section and the loader's list at start-up say so), and
// the one command that needs Gmsh, writing a .msh file, loads it then, or
// fails with a system error naming the library.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "mesh/generate.hpp"
#include "mesh/gmsh_library.hpp"
#include "mesh/msh_reader.hpp"

namespace fs = std::filesystem;

using namespace bipo_test;  // NOLINT: the shared helpers of cli_support.hpp

namespace {

/// A fresh folder per test (tests run in parallel, one process each).
class Startup : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("bipo_startup_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  /// The standard output of `command` run by the shell, and its exit code.
  [[nodiscard]] Outcome shell(const std::string& command) const {
    return run_shell(dir_, command, dir_);
  }

  fs::path dir_;
};

/// The lines of `text` that contain `word`.
std::vector<std::string> lines_with(const std::string& text, const std::string& word) {
  std::vector<std::string> found;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(word) != std::string::npos) found.push_back(line);
  }
  return found;
}

TEST_F(Startup, TheExecutableDoesNotNeedGmsh) {
  if (shell("command -v objdump").exit_code != 0) GTEST_SKIP() << "no objdump to read the ELF";
  const Outcome o = shell("objdump -p " + quoted(BIPO_EXE));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::vector<std::string> needed = lines_with(o.out, "NEEDED");
  // The dynamic section is there and read: bipo needs the C library.
  ASSERT_FALSE(lines_with(o.out, "libc.so").empty()) << o.out;
  for (const std::string& line : needed) {
    EXPECT_EQ(line.find("gmsh"), std::string::npos) << line;
  }
}

TEST_F(Startup, StartingLoadsNoGmshLibrary) {
  // With LD_TRACE_LOADED_OBJECTS, the GNU dynamic loader lists every library
  // it maps at start-up (the dependencies of the dependencies too) and runs
  // nothing.
  const Outcome o = shell("LD_TRACE_LOADED_OBJECTS=1 " + quoted(BIPO_EXE));
  if (o.exit_code != 0 || lines_with(o.out, "libc.so").empty()) {
    GTEST_SKIP() << "not the GNU dynamic loader: " << o.out << o.err;
  }
  EXPECT_TRUE(lines_with(o.out, "gmsh").empty()) << o.out;
  // The libraries of Gmsh's CAD kernel and GUI toolkit are not there either.
  EXPECT_TRUE(lines_with(o.out, "libTK").empty()) << o.out;
  EXPECT_TRUE(lines_with(o.out, "libfltk").empty()) << o.out;
}

TEST_F(Startup, WritingAMeshLoadsGmsh) {
  const Outcome o = shell(
      quoted(BIPO_EXE) + " mesh cylinder --core 2 --ring 1 --layers 1 --binary --output small.msh");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out, "wrote small.msh: 34 nodes, 12 hexahedra, 17 bottom nodes\n");
  const bipo::Mesh expected = bipo::generate_cylinder({.core = 2, .ring = 1, .layers = 1});
  const bipo::Mesh written = bipo::read_msh(dir_ / "small.msh");
  EXPECT_EQ(written.nodes, expected.nodes);  // binary: bit for bit
  EXPECT_EQ(written.hexes, expected.hexes);
  EXPECT_EQ(written.node_sets, expected.node_sets);
}

TEST_F(Startup, AMissingGmshIsASystemErrorNamingIt) {
  const std::string library = bipo::gmsh_library_name();
  if (library.find('/') != std::string::npos) {
    GTEST_SKIP() << "Gmsh is loaded by absolute path (" << library << "): no search to divert";
  }
  // A file of Gmsh's soname that is no library, first in the loader's search.
  fs::create_directories(dir_ / "lib");
  std::ofstream(dir_ / "lib" / library) << "not a shared library\n";
  fs::create_directories(dir_ / "out");
  const Outcome o = shell("LD_LIBRARY_PATH=" + quoted(dir_ / "lib") + " " + quoted(BIPO_EXE) +
                          " mesh cylinder --core 2 --ring 1 --layers 1 --output out/small.msh");
  EXPECT_EQ(o.exit_code, 1) << o.err;
  const std::string expected = "bipo: system error: writing out/small.msh needs the Gmsh library " +
                               library + ", which could not be loaded: ";
  EXPECT_EQ(o.err.substr(0, expected.size()), expected) << o.err;
  EXPECT_EQ(o.out, "");
  // Nothing written, no private folder left behind.
  EXPECT_TRUE(fs::is_empty(dir_ / "out"));
  // The rest of bipo starts as usual without Gmsh.
  const Outcome version =
      shell("LD_LIBRARY_PATH=" + quoted(dir_ / "lib") + " " + quoted(BIPO_EXE) + " --version");
  EXPECT_EQ(version.exit_code, 0) << version.err;
}

}  // namespace
