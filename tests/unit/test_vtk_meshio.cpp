// The .vtu files as a Python user reads them: bipo runs a small cyclic case,
// and meshio (Debian's python3-meshio, an XML reader independent of VTK)
// reads its VTK files; read_results_with_meshio.py checks the point, cell
// and field data against the CSV maps, history and index of the same steps.
// Fails, never skips, when /usr/bin/python3 or meshio is missing: the
// project's setup (scripts/setup.sh) installs them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "cli_support.hpp"

namespace fs = std::filesystem;
using namespace bipo_test;  // NOLINT: the shared helpers of cli_support.hpp

namespace {

const fs::path kPython = "/usr/bin/python3";
const fs::path kChecker =
    fs::path(BIPO_SOURCE_DIR) / "tests" / "unit" / "read_results_with_meshio.py";

class MeshioReadsVtu : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("bipo_meshio_" + GetParam() + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }
  fs::path dir_;
};

/// The small case, loaded, unloaded to half and reloaded in a repeat block
/// (cycles 0 and 1, segment ends at steps 2, 3 and 4), the platen moving
/// sideways too (slip and stick on the face), with `compression`.
std::string cyclic_case(const std::string& compression) {
  std::string text =
      replaced(small_case, "core: 2, ring: 1, layers: 1", "core: 3, ring: 2, layers: 2");
  text = replaced(text, "load_program: [{to: 1.0, increments: 2}]",
                  "load_program:\n  - {to: 1.0, increments: 2}\n  - repeat: 1\n    segments:\n"
                  "      - {to: 0.5, increments: 1}\n      - {to: 1.0, increments: 1}");
  text = replaced(text, "x: 0, y: 0, z: -0.01", "x: 0.002, y: 0, z: -0.01");
  return text + "output: {directory: results, vtu_compression: " + compression + "}\n";
}

TEST_P(MeshioReadsVtu, PointCellAndFieldDataEqualTheCsvMaps) {
  ASSERT_TRUE(fs::exists(kPython)) << kPython << " is missing: run scripts/setup.sh";
  const fs::path case_file = dir_ / "cyclic.yaml";
  std::ofstream(case_file) << cyclic_case(GetParam());
  const Outcome run = run_bipo(dir_, "run --quiet " + quoted(case_file), dir_);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string compressor =
      GetParam() == "zlib" ? "vtkZLibDataCompressor" : "vtkLZMADataCompressor";
  const std::string head = slurp(dir_ / "results" / "vtk" / "contact_000002.vtu").substr(0, 400);
  EXPECT_NE(head.find("compressor=\"" + compressor + "\""), std::string::npos) << head;

  const Outcome check = run_shell(
      dir_, quoted(kPython) + " " + quoted(kChecker) + " " + quoted(dir_ / "results"), dir_);
  EXPECT_EQ(check.exit_code, 0) << check.err << check.out;
  EXPECT_NE(check.out.find("meshio read 6 .vtu files"), std::string::npos) << check.out;
}

// The compressions meshio reads: not LZ4 (it has no LZ4 decoder) nor none
// (its reader of raw uncompressed appended data fails on VTK's files;
// docs/outputs.md, "VTU compression").
INSTANTIATE_TEST_SUITE_P(Compressions, MeshioReadsVtu, ::testing::Values("zlib", "lzma"));

}  // namespace
