// Tests of src/mesh/msh_reader: bipo's own .msh parser. Valid files give the
// mesh that was written (all four variants, the punch mesh, hand-written
// files with surface groups and unnamed groups); every kind of file that
// crashed, hung, ran a script or lost elements in the Gmsh SDK's reader is an
// InputError naming the file and the problem; the path checks say what the
// path is; `bipo check` of a case whose mesh is a Gmsh script exits 2 without
// running it.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "core/errors.hpp"
#include "mesh/generate.hpp"
#include "mesh/gmsh_io.hpp"
#include "mesh/msh_reader.hpp"

namespace bipo {
using namespace bipo_test;  // NOLINT: the shared helpers of cli_support.hpp

namespace {

namespace fs = std::filesystem;

// A fresh directory per test, removed at the end.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("bipo_msh_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  [[nodiscard]] fs::path operator/(const std::string& name) const { return path_ / name; }
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

// The message of the InputError thrown by f (fails the test if none, or if
// anything else is thrown).
std::string input_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an InputError";
  return {};
}

// The message of parsing `bytes` as the file "case.msh".
std::string parse_error(const std::string& bytes) {
  return input_error_of([&] { (void)parse_msh(bytes, "case.msh"); });
}

// Fails unless `message` contains every fragment.
void expect_mentions(const std::string& message, std::initializer_list<std::string> fragments) {
  for (const std::string& fragment : fragments) {
    EXPECT_NE(message.find(fragment), std::string::npos)
        << "'" << fragment << "' not in: " << message;
  }
}

// Bytes of binary values, little-endian as on the machines bipo runs on.
class Bytes {
 public:
  template <class T>
  Bytes& put(T value) {
    char raw[sizeof(T)];
    std::memcpy(raw, &value, sizeof(T));
    bytes_.append(raw, sizeof(T));
    return *this;
  }
  Bytes& text(const std::string& s) {
    bytes_ += s;
    return *this;
  }
  [[nodiscard]] const std::string& str() const { return bytes_; }

 private:
  std::string bytes_;
};

// --------------------------------------------------------- hand-written --

const std::string kHeader22 = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n";
const std::string kHeader41 = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n";

// Two hexahedra side by side: nodes 1-12, x in {0, 1, 2}.
const std::string kNodes22 =
    "$Nodes\n12\n"
    "1 0 0 0\n2 1 0 0\n3 2 0 0\n4 0 1 0\n5 1 1 0\n6 2 1 0\n"
    "7 0 0 1\n8 1 0 1\n9 2 0 1\n10 0 1 1\n11 1 1 1\n12 2 1 1\n"
    "$EndNodes\n";
const std::string kHexA = "1 2 5 4 7 8 11 10";
const std::string kHexB = "2 3 6 5 8 9 12 11";
const std::string kTwoHexes22 =
    "$Elements\n2\n1 5 2 1 1 " + kHexA + "\n2 5 2 1 1 " + kHexB + "\n$EndElements\n";

// The 4.1 version: nodes z = 0 in surface 5, z = 1 in volume 3; hexahedron
// 20 in volume 3 and 10 in volume 5 (listed first: Gmsh orders by entity).
const std::string kEntities41 =
    "$Entities\n1 0 2 2\n"
    "1 0 0 0 1 5\n"             // point 1, physical 5
    "1 0 0 0 2 1 0 2 3 -7 0\n"  // surface 1, physicals 3 and 7
    "2 0 0 0 2 1 0 1 3 0\n"     // surface 2, physical 3
    "5 0 0 0 1 1 1 1 9 0\n"     // volume 5, physical 9
    "3 0 0 0 2 1 1 2 9 4 0\n"   // volume 3, physicals 9 and 4
    "$EndEntities\n";
const std::string kNodes41 =
    "$Nodes\n2 12 1 12\n"
    "3 5 0 6\n1\n2\n3\n4\n5\n6\n0 0 0\n1 0 0\n2 0 0\n0 1 0\n1 1 0\n2 1 0\n"
    "3 3 0 6\n7\n8\n9\n10\n11\n12\n0 0 1\n1 0 1\n2 0 1\n0 1 1\n1 1 1\n2 1 1\n"
    "$EndNodes\n";
const std::string kElements41 =
    "$Elements\n5 6 1 20\n"
    "3 5 5 1\n10 " +
    kHexA +
    "\n"
    "3 3 5 1\n20 " +
    kHexB +
    "\n"
    "2 1 3 1\n3 1 2 5 4\n"
    "2 2 3 1\n4 2 3 6 5\n"
    "0 1 15 2\n1 1\n2 3\n"
    "$EndElements\n";
const std::string kFile41 = kHeader41 +
                            "$PhysicalNames\n3\n2 3 \"base\"\n3 9 \"base\"\n0 5 \"corner\"\n"
                            "$EndPhysicalNames\n" +
                            kEntities41 + kNodes41 + kElements41;

TEST(MshReader, A41FileWithSurfaceGroupsUnnamedGroupsAndSharedNames) {
  const Mesh mesh = parse_msh(kFile41, "groups.msh");
  ASSERT_EQ(mesh.n_nodes(), 12);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(mesh.node_tags[i], std::size_t(i) + 1);
  EXPECT_EQ(mesh.nodes[11], Eigen::Vector3d(2, 1, 1));
  // Volume 3 before volume 5, whatever the file order.
  EXPECT_EQ(mesh.hex_tags, (std::vector<std::size_t>{20, 10}));
  EXPECT_EQ(mesh.hexes[0], (Hex8{1, 2, 5, 4, 7, 8, 11, 10}));
  EXPECT_EQ(mesh.hexes[1], (Hex8{0, 1, 4, 3, 6, 7, 10, 9}));
  // "base": the quadrangles of surfaces 1 and 2 (physical 2 3) merged with
  // both volumes (physical 3 9).
  EXPECT_EQ(mesh.node_set("base").size(), 12u);
  EXPECT_EQ(mesh.node_set("corner"), (std::vector<int>{0, 2}));
  EXPECT_EQ(mesh.node_set("physical_2_7"), (std::vector<int>{0, 1, 3, 4}));
  EXPECT_EQ(mesh.node_set("physical_3_4"), (std::vector<int>{1, 2, 4, 5, 7, 8, 10, 11}));
  EXPECT_EQ(mesh.node_set("all").size(), 12u);
  EXPECT_EQ(mesh.node_sets.size(), 5u);
}

TEST(MshReader, A22FileWithSurfaceGroupsUnnamedGroupsAndSharedNames) {
  // In 2.2 a group is the elements of the elementary entities its elements
  // are in: quadrangle 3 (elementary 8, no physical) joins group 6 through
  // quadrangle 4 of the same entity.
  const std::string file = kHeader22 +
                           "$PhysicalNames\n3\n2 6 \"face\"\n3 1 \"face\"\n0 2 \"\"\n"
                           "$EndPhysicalNames\n" +
                           kNodes22 +
                           "$Elements\n7\n"
                           "7 5 2 1 4 " +
                           kHexB +
                           "\n"
                           "5 5 2 1 2 " +
                           kHexA +
                           "\n"
                           "3 3 2 0 8 1 2 5 4\n"
                           "4 3 2 6 8 2 3 6 5\n"
                           "6 3 2 9 1 7 8 11 10\n"
                           "1 15 2 2 1 12\n"
                           "2 1 1 3 1 2\n"
                           "$EndElements\n";
  const Mesh mesh = parse_msh(file, "groups22.msh");
  ASSERT_EQ(mesh.n_hexes(), 2);
  // Elementary 2 before elementary 4.
  EXPECT_EQ(mesh.hex_tags, (std::vector<std::size_t>{5, 7}));
  EXPECT_EQ(mesh.node_set("face").size(), 12u);  // volume group 1 merged in
  EXPECT_EQ(mesh.node_set("physical_2_9"), (std::vector<int>{6, 7, 9, 10}));
  EXPECT_EQ(mesh.node_set("physical_0_2"), (std::vector<int>{11}));    // named ""
  EXPECT_EQ(mesh.node_set("physical_1_3"), (std::vector<int>{0, 1}));  // elementary 0
  EXPECT_EQ(mesh.node_sets.size(), 5u);
}

TEST(MshReader, A41FileWithoutEntitiesTakesTheNodeBlocksAsEntities) {
  const std::string file = kHeader41 + kNodes41 + "$Elements\n2 2 1 2\n3 5 5 1\n1 " + kHexA +
                           "\n3 3 5 1\n2 " + kHexB + "\n$EndElements\n";
  const Mesh mesh = parse_msh(file, "bare.msh");
  EXPECT_EQ(mesh.hex_tags, (std::vector<std::size_t>{2, 1}));
  EXPECT_EQ(mesh.node_sets.size(), 1u);
  // An element block needs the entity of some node block.
  const std::string msg = parse_error(replaced(file, "3 3 5 1\n2 ", "3 4 5 1\n2 "));
  expect_mentions(msg,
                  {"case.msh", "refers to entity 4 of dimension 3", "no $Nodes block declares"});
}

TEST(MshReader, SkipsSectionsItDoesNotRead) {
  const std::string comments = "$Comments\nwritten by hand\n$Nodes\n$EndComments\n";
  const std::string unknown = "$BipoExtra\n1 2 3\n$EndBipoExtra\n";
  const std::string data = "$NodeData\n1\n\"u\"\n1\n0.0\n3\n0\n1\n2\n1 0.5\n2 0.7\n$EndNodeData\n";
  const Mesh mesh =
      parse_msh(kHeader22 + comments + kNodes22 + unknown + kTwoHexes22 + data, "extra.msh");
  EXPECT_EQ(mesh.n_hexes(), 2);
  const std::string open = parse_error(kHeader22 + kNodes22 + kTwoHexes22 + "$Notes\nabc\n");
  expect_mentions(open, {"case.msh", "line 24", "$Notes is not closed", "$EndNotes"});
  const std::string stray = parse_error(kHeader22 + kNodes22 + "$EndNodes\n" + kTwoHexes22);
  expect_mentions(stray, {"case.msh", "line 19", "unexpected $EndNodes"});
  const std::string junk = parse_error(kHeader22 + kNodes22 + "stray words\n" + kTwoHexes22);
  expect_mentions(junk, {"line 19", "expected a section header", "'stray words'"});
}

TEST(MshReader, RefusesPartitionedAndParametricMeshes) {
  expect_mentions(parse_error(kHeader41 + "$PartitionedEntities\n2\n0\n$EndPartitionedEntities\n"),
                  {"case.msh", "line 4", "partitioned meshes", "not supported"});
  expect_mentions(parse_error(kHeader22 + "$ParametricNodes\n0\n$EndParametricNodes\n"),
                  {"case.msh", "$ParametricNodes", "not supported"});
}

// ---------------------------------------------------------- round trips --

// A coordinate as Gmsh writes it in ASCII (%.16g) and C reads it back.
double ascii_image(double x) {
  char text[64];
  std::snprintf(text, sizeof text, "%.16g", x);
  return std::strtod(text, nullptr);
}

// The written mesh's nodes, hexahedra and sets, tags included; nodes bit for
// bit (after %.16g in ASCII).
void expect_written_mesh(const Mesh& written, const Mesh& read, bool binary, bool version41) {
  ASSERT_EQ(read.n_nodes(), written.n_nodes());
  ASSERT_EQ(read.n_hexes(), written.n_hexes());
  for (int i = 0; i < read.n_nodes(); ++i) {
    for (int k = 0; k < 3; ++k) {
      const double expected = binary ? written.nodes[i][k] : ascii_image(written.nodes[i][k]);
      ASSERT_EQ(std::memcmp(&read.nodes[i][k], &expected, sizeof(double)), 0)
          << "node " << i << " coordinate " << k << ": " << read.nodes[i][k] << " vs " << expected;
    }
  }
  EXPECT_EQ(read.hexes, written.hexes);
  EXPECT_EQ(read.node_sets, written.node_sets);
  if (version41) {
    EXPECT_EQ(read.node_tags, written.node_tags);
    EXPECT_EQ(read.hex_tags, written.hex_tags);
  } else {
    // 2.2: nodes 1..n in the mesh's order, the point elements of the sets
    // first, then the hexahedra.
    std::size_t points = 0;
    for (const auto& [name, set] : written.node_sets) points += name == "all" ? 0 : set.size();
    for (int i = 0; i < read.n_nodes(); ++i) EXPECT_EQ(read.node_tags[i], std::size_t(i) + 1);
    for (int e = 0; e < read.n_hexes(); ++e) {
      EXPECT_EQ(read.hex_tags[e], points + std::size_t(e) + 1);
    }
  }
}

TEST(MshReader, ReadsWhatWriteMshWroteInEveryFormat) {
  TempDir dir;
  Mesh mesh = generate_box({0, 0, 0}, {1.1, 0.7, 1.3}, 3, 2, 2);
  distort_interior_nodes(mesh, 0.2, 11);
  for (std::size_t i = 0; i < mesh.node_tags.size(); ++i) mesh.node_tags[i] = 5 + 7 * i;
  for (std::size_t e = 0; e < mesh.hex_tags.size(); ++e) mesh.hex_tags[e] = 300 - 3 * e;
  mesh.node_sets["a corner"] = {0};
  CylinderParams p;
  p.core = 4;
  p.ring = 2;
  p.layers = 2;
  p.rim_grading = 1.7;
  const Mesh cylinder = generate_cylinder(p);
  for (const Mesh* written : std::array<const Mesh*, 2>{&mesh, &cylinder}) {
    for (const double version : {4.1, 2.2}) {
      for (const bool binary : {false, true}) {
        SCOPED_TRACE(std::to_string(version) + (binary ? " binary" : " ASCII"));
        const fs::path file = dir / "m.msh";
        write_msh(*written, file, binary, version);
        expect_written_mesh(*written, read_msh(file), binary, version == 4.1);
        // The same through the in-memory entry point.
        expect_written_mesh(*written, parse_msh(slurp(file), "m.msh"), binary, version == 4.1);
      }
    }
  }
}

TEST(MshReader, ReadsThePunchMeshAsTheGeneratorMadeIt) {
  const fs::path punch = fs::path(BIPO_SOURCE_DIR) / "meshes" / "punch.msh";
  const Mesh mesh = read_msh(punch);
  EXPECT_EQ(mesh.n_nodes(), 1685);
  EXPECT_EQ(mesh.n_hexes(), 1280);
  EXPECT_EQ(mesh.node_set("bottom").size(), 337u);
  EXPECT_EQ(mesh.node_set("top").size(), 337u);
  EXPECT_EQ(mesh.node_set("lateral").size(), 160u);
  EXPECT_EQ(mesh.node_set("all").size(), 1685u);
  EXPECT_EQ(mesh.node_sets.size(), 4u);
  // meshes/README.md: written from generate_cylinder(CylinderParams{}) as
  // 4.1 ASCII.
  expect_written_mesh(generate_cylinder(CylinderParams{}), mesh, false, true);
}

// ------------------------------------------------ not a mesh: scripts --

TEST(MshReader, AGmshScriptIsRefusedUnrun) {
  TempDir dir;
  const fs::path victim = dir / "victim";
  const fs::path script = dir / "evil.msh";
  write_bytes(script, "System \"touch " + victim.string() + "\";\n");
  std::string msg = input_error_of([&] { (void)read_msh(script); });
  expect_mentions(msg, {script.string(), "not a Gmsh mesh file",
                        "expected a $MeshFormat section at line 1", "got 'System \"touch"});
  EXPECT_FALSE(fs::exists(victim));

  // Exit would end the process with status 0; Sleep would hang.
  write_bytes(script, "Exit;\n");
  msg = input_error_of([&] { (void)read_msh(script); });
  expect_mentions(msg, {script.string(), "not a Gmsh mesh file", "got 'Exit;'"});
  const auto start = std::chrono::steady_clock::now();
  write_bytes(script, "Sleep 20;\n");
  msg = input_error_of([&] { (void)read_msh(script); });
  expect_mentions(msg, {script.string(), "not a Gmsh mesh file", "got 'Sleep 20;'"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));

  // Whatever precedes $MeshFormat: a blank line, a byte order mark, a
  // comment section, nothing at all.
  expect_mentions(parse_error("\n" + kHeader22), {"case.msh", "got ''"});
  expect_mentions(parse_error("\xEF\xBB\xBF" + kHeader22), {"byte order mark"});
  expect_mentions(parse_error("$Comments\nx\n$EndComments\n" + kHeader22), {"got '$Comments'"});
  expect_mentions(parse_error(""), {"case.msh", "got an empty file"});
  expect_mentions(parse_error("$MeshFormatX\n"), {"not a Gmsh mesh file"});
}

TEST(MshReader, OnlyVersions22And41AreRead) {
  for (const std::string version : {"4", "4.0", "3", "3.0", "1", "2.1", "2", "5", "x"}) {
    const std::string msg = parse_error("$MeshFormat\n" + version + " 0 8\n$EndMeshFormat\n");
    expect_mentions(msg, {"case.msh", "line 2", "MSH version '" + version + "' is not supported",
                          "2.2 and 4.1"});
  }
  expect_mentions(parse_error("$MeshFormat\n4.1 2 8\n$EndMeshFormat\n"),
                  {"line 2", "file type", "between 0 and 1", "found 2"});
  expect_mentions(parse_error("$MeshFormat\n4.1 1 4\n$EndMeshFormat\n"),
                  {"line 2", "data size must be 8", "found 4"});
  expect_mentions(parse_error("$MeshFormat\n4.1 0 8 9\n$EndMeshFormat\n"),
                  {"line 2", "unexpected '9'"});
  // The binary endianness marker.
  expect_mentions(parse_error(Bytes().text("$MeshFormat\n4.1 1 8\n").put<int>(0x01000000).str()),
                  {"byte offset 20", "big-endian"});
  expect_mentions(parse_error(Bytes().text("$MeshFormat\n4.1 1 8\n").put<int>(7).str()),
                  {"byte offset 20", "endianness marker", "found 7"});
}

// ---------------------------------------------- the SDK's crash classes --

TEST(MshReader, PhysicalNameDimensionsOutside0To3) {
  for (const std::string dim : {"4", "-1", "6", "17"}) {
    for (const std::string& header : {kHeader22, kHeader41}) {
      const std::string msg =
          parse_error(header + "$PhysicalNames\n1\n" + dim + " 1 \"top\"\n$EndPhysicalNames\n");
      expect_mentions(msg,
                      {"case.msh", "line 6", "$PhysicalNames",
                       "the dimension of physical name 1 must be between 0 and 3", "found " + dim});
    }
  }
}

TEST(MshReader, NodeCountsMustMatchTheList22) {
  // One less than listed (a SIGSEGV in the SDK).
  std::string msg =
      parse_error(kHeader22 + replaced(kNodes22, "$Nodes\n12\n", "$Nodes\n11\n") + kTwoHexes22);
  expect_mentions(msg, {"case.msh", "line 17", "expected $EndNodes after the 11 declared nodes",
                        "found '12 2 1 1'", "lists more than it declares"});
  msg = parse_error(kHeader22 + replaced(kNodes22, "$Nodes\n12\n", "$Nodes\n13\n") + kTwoHexes22);
  expect_mentions(msg,
                  {"case.msh", "line 18", "declares 13 nodes, but lists 12", "found '$EndNodes'"});
}

TEST(MshReader, ElementCountsMustMatchTheList22) {
  // A count smaller than the list: the SDK read 11 hexahedra of 12.
  std::string msg =
      parse_error(kHeader22 + kNodes22 + replaced(kTwoHexes22, "$Elements\n2\n", "$Elements\n1\n"));
  expect_mentions(msg, {"case.msh", "line 22", "expected $EndElements after the 1 declared",
                        "found '2 5 2 1 1 2 3 6 5 8 9 12 11'", "lists more than it declares"});
  msg =
      parse_error(kHeader22 + kNodes22 + replaced(kTwoHexes22, "$Elements\n2\n", "$Elements\n3\n"));
  expect_mentions(msg, {"line 23", "declares 3 elements, but lists 2"});
  // An extra 20-node hexahedron beyond the count (a SIGABRT in the SDK).
  msg =
      parse_error(kHeader22 + kNodes22 +
                  replaced(kTwoHexes22, "$EndElements",
                           "3 17 2 1 1 1 2 3 4 5 6 7 8 9 10 11 12 1 2 3 4 5 6 7 8\n$EndElements"));
  expect_mentions(
      msg, {"line 23", "expected $EndElements after the 2 declared elements", "found '3 17 2 1 1"});
}

TEST(MshReader, CountsMustMatchTheList41) {
  const std::string more_nodes = replaced(kFile41, "$Nodes\n2 12 1 12\n", "$Nodes\n2 13 1 13\n");
  expect_mentions(parse_error(more_nodes),
                  {"case.msh", "$Nodes", "the header declares 13 nodes, but the blocks hold 12"});
  const std::string fewer_nodes = replaced(kFile41, "$Nodes\n2 12 1 12\n", "$Nodes\n2 11 1 12\n");
  expect_mentions(parse_error(fewer_nodes),
                  {"$Nodes block 2: declares 6 nodes, but the section header declares 11 in all "
                   "and the blocks before hold 6"});
  const std::string short_block = replaced(kFile41, "3 3 0 6\n7\n", "3 3 0 5\n7\n");
  expect_mentions(parse_error(short_block),
                  {"$Nodes block 2", "expected the y coordinate, found the end of the line"});
  const std::string long_block = replaced(replaced(kFile41, "3 3 0 6\n7\n", "3 3 0 7\n7\n"),
                                          "$Nodes\n2 12 1 12\n", "$Nodes\n2 13 1 12\n");
  expect_mentions(parse_error(long_block), {"$Nodes block 2", "a node tag must be between 1"});
  const std::string more_blocks =
      replaced(kFile41, "$Elements\n5 6 1 20\n", "$Elements\n6 6 1 20\n");
  expect_mentions(parse_error(more_blocks),
                  {"$Elements: declares 6 entity blocks, but lists 5", "found '$EndElements'"});
  const std::string fewer_elements =
      replaced(kFile41, "$Elements\n5 6 1 20\n", "$Elements\n5 5 1 20\n");
  expect_mentions(parse_error(fewer_elements),
                  {"$Elements block 5: declares 2 elements, but the section header declares 5"});
  // An element beyond its block's count is read as the next block header.
  const std::string extra =
      replaced(kFile41, "2 1 3 1\n3 1 2 5 4\n", "2 1 3 1\n3 1 2 5 4\n5 2 3 6 5\n");
  expect_mentions(parse_error(extra),
                  {"$Elements block 4", "expected the block header", "found '5 2 3 6 5'",
                   "does the block before list more than it declares?"});
  const std::string points =
      replaced(replaced(kFile41, "0 1 15 2\n1 1\n2 3\n", "0 1 15 3\n1 1\n2 3\n"),
               "$Elements\n5 6 1 20\n", "$Elements\n5 7 1 20\n");
  expect_mentions(parse_error(points),
                  {"$Elements block 5: declares 3 elements, but lists 2", "'$EndElements'"});
  const std::string entities = replaced(kFile41, "$Entities\n1 0 2 2\n", "$Entities\n1 0 2 3\n");
  expect_mentions(parse_error(entities),
                  {"$Entities (volumes): declares 3, but lists 2", "'$EndEntities'"});
}

// A cylinder written in binary 4.1, and where its $Nodes header starts.
std::string binary41_cylinder(std::size_t& nodes_header) {
  TempDir dir;
  CylinderParams p;
  p.core = 2;
  p.ring = 1;
  p.layers = 1;
  write_msh(generate_cylinder(p), dir / "c.msh", true, 4.1);
  std::string bytes = slurp(dir / "c.msh");
  nodes_header = bytes.find("$Nodes\n") + 7;
  return bytes;
}

TEST(MshReader, BinaryCountsMustMatch41) {
  // The section header says 3 nodes; the block of the volume holds 34 (a
  // double free in the SDK).
  std::size_t header = 0;
  std::string bytes = binary41_cylinder(header);
  std::size_t counts[4];
  std::memcpy(counts, bytes.data() + header, sizeof counts);
  ASSERT_EQ(counts[1], 34u);
  counts[1] = 3;
  std::memcpy(bytes.data() + header, counts, sizeof counts);
  const std::string msg = parse_error(bytes);
  expect_mentions(msg, {"case.msh", "byte offset",
                        "$Nodes block 4: declares 34 nodes, but the "
                        "section header declares 3 in all"});
  counts[1] = 35;
  std::memcpy(bytes.data() + header, counts, sizeof counts);
  expect_mentions(parse_error(bytes),
                  {"byte offset", "$Nodes: the header declares 35 nodes, but the blocks hold 34"});
  counts[1] = 34;
  std::memcpy(bytes.data() + header, counts, sizeof counts);
  std::size_t elements_header = bytes.find("$Elements\n") + 10;
  std::size_t element_counts[4];
  std::memcpy(element_counts, bytes.data() + elements_header, sizeof element_counts);
  element_counts[1] -= 1;
  std::memcpy(bytes.data() + elements_header, element_counts, sizeof element_counts);
  expect_mentions(parse_error(bytes), {"byte offset", "$Elements block",
                                       "but the section header "
                                       "declares " +
                                           std::to_string(element_counts[1])});
  element_counts[1] += 1;
  std::memcpy(bytes.data() + elements_header, element_counts, sizeof element_counts);
  EXPECT_EQ(parse_msh(bytes, "c.msh").n_hexes(), 12);
  // A header claiming more nodes than the file can hold.
  counts[1] = std::size_t{1} << 60;
  std::memcpy(bytes.data() + header, counts, sizeof counts);
  expect_mentions(parse_error(bytes), {"byte offset " + std::to_string(header),
                                       "declares 1152921504606846976 nodes (32 bytes each)",
                                       "bytes are left in the file"});
}

TEST(MshReader, BinaryCountsMustMatch22) {
  TempDir dir;
  write_msh(generate_box({0, 0, 0}, {1, 1, 1}, 2, 1, 1), dir / "b.msh", true, 2.2);
  const std::string bytes = slurp(dir / "b.msh");
  ASSERT_NE(bytes.find("$Nodes\n12\n"), std::string::npos);
  expect_mentions(parse_error(replaced(bytes, "$Nodes\n12\n", "$Nodes\n11\n")),
                  {"case.msh", "byte offset", "$Nodes: expected $EndNodes after the 11 declared"});
  expect_mentions(parse_error(replaced(bytes, "$Nodes\n12\n", "$Nodes\n13\n")),
                  {"case.msh", "byte offset", "$Nodes"});
  // write_msh's box: sets xmin..zmax are points before the hexahedra.
  const auto at = bytes.find("$Elements\n");
  ASSERT_NE(at, std::string::npos);
  const auto nl = bytes.find('\n', at + 10);
  const int count = std::stoi(bytes.substr(at + 10, nl - at - 10));
  const std::string fewer = bytes.substr(0, at + 10) + std::to_string(count - 1) + bytes.substr(nl);
  // (Gmsh writes one element per block in binary 2.2.)
  expect_mentions(parse_error(fewer),
                  {"byte offset", "$Elements: expected $EndElements after the " +
                                      std::to_string(count - 1) + " declared elements"});
  const std::string more = bytes.substr(0, at + 10) + std::to_string(count + 1) + bytes.substr(nl);
  expect_mentions(parse_error(more), {"$Elements"});
}

TEST(MshReader, DuplicateTagsAreErrorsNotDroppedElements) {
  std::string msg = parse_error(kHeader22 + kNodes22 +
                                replaced(kTwoHexes22, "2 5 2 1 1 " + kHexB, "1 5 2 1 1 " + kHexB));
  expect_mentions(msg, {"case.msh", "line 22", "element tag 1 is used twice", "first at line 21"});
  msg = parse_error(kHeader22 + replaced(kNodes22, "\n7 0 0 1\n", "\n3 0 0 1\n") + kTwoHexes22);
  expect_mentions(msg, {"case.msh", "line 12", "node tag 3 is defined twice", "first at line 8"});
  msg = parse_error(replaced(kFile41, "20 " + kHexB, "10 " + kHexB));
  expect_mentions(msg, {"element tag 10 is used twice"});
  msg = parse_error(replaced(kFile41, "\n9\n10\n", "\n9\n2\n"));
  expect_mentions(msg, {"node tag 2 is defined twice"});
  // The same physical group named twice, the same entity declared twice.
  msg = parse_error(replaced(kFile41, "0 5 \"corner\"", "2 3 \"corner\""));
  expect_mentions(msg, {"line 8", "dimension 2 and tag 3 is named twice", "first at line 6"});
  msg = parse_error(replaced(kFile41, "2 0 0 0 2 1 0 1 3 0\n", "1 0 0 0 2 1 0 1 3 0\n"));
  expect_mentions(msg, {"line 14", "entity 1 of dimension 2 is declared twice"});
}

TEST(MshReader, ReferencesMustExist) {
  std::string msg = parse_error(kHeader22 + kNodes22 +
                                replaced(kTwoHexes22, "2 3 6 5 8 9 12 11", "2 3 6 5 8 9 99 11"));
  expect_mentions(msg, {"case.msh", "line 22",
                        "element 2 refers to node 99, which $Nodes does "
                        "not define"});
  msg = parse_error(kHeader22 + kNodes22 + replaced(kTwoHexes22, "1 5 2 1 1 1", "1 5 2 1 1 0"));
  expect_mentions(msg, {"line 21", "a node tag must be between 1 and"});
  msg = parse_error(replaced(kFile41, "3 3 5 1\n", "3 8 5 1\n"));
  expect_mentions(msg, {"$Elements block 2",
                        "refers to entity 8 of dimension 3, which $Entities "
                        "does not declare"});
  msg = parse_error(replaced(kFile41, "3 3 0 6\n", "3 8 0 6\n"));
  expect_mentions(msg, {"$Nodes block 2", "refers to entity 8 of dimension 3"});
  // An element in an entity of another dimension.
  msg = parse_error(replaced(kFile41, "2 1 3 1\n", "3 3 3 1\n"));
  expect_mentions(msg, {"elements of type 3 (\"Quadrilateral 4\") (dimension 2) in entity 3 of "
                        "dimension 3"});
  // $Nodes before $Elements, $Entities before both.
  msg = parse_error(kHeader22 + kTwoHexes22 + kNodes22);
  expect_mentions(msg, {"line 4", "$Elements comes before $Nodes"});
  msg = parse_error(kHeader41 + kNodes41 + kEntities41);
  expect_mentions(msg, {"$Entities must come before $Nodes"});
  expect_mentions(parse_error(kHeader22 + kNodes22), {"case.msh", "no $Elements section"});
  expect_mentions(parse_error(kHeader22), {"case.msh", "no $Nodes section"});
  expect_mentions(parse_error(kHeader22 + kNodes22 + kNodes22 + kTwoHexes22),
                  {"line 19", "a second $Nodes section"});
}

TEST(MshReader, ElementTypesAndTheirNodeCounts) {
  for (const std::string type : {"0", "32", "92", "200", "-5"}) {
    const std::string msg =
        parse_error(kHeader22 + kNodes22 + replaced(kTwoHexes22, "1 5 2", "1 " + type + " 2"));
    expect_mentions(msg, {"case.msh", "line 21", "element type " + type + " is not supported",
                          "types 1 to 31"});
  }
  // A hexahedron with 7 or 9 nodes.
  std::string msg = parse_error(kHeader22 + kNodes22 +
                                replaced(kTwoHexes22, " " + kHexA + "\n", " 1 2 5 4 7 8 11\n"));
  expect_mentions(msg, {"line 21", "element 1 lists 7 nodes, but type 5 (\"Hexahedron 8\") has 8"});
  msg = parse_error(kHeader22 + kNodes22 +
                    replaced(kTwoHexes22, " " + kHexA + "\n", " " + kHexA + " 3\n"));
  expect_mentions(msg, {"line 21", "element 1 lists more than the 8 nodes", "found '3'"});
  // A 20-node hexahedron in the volume is named by type.
  msg = parse_error(kHeader22 + kNodes22 + "$Elements\n2\n1 5 2 1 1 " + kHexA +
                    "\n2 17 2 1 1 1 2 3 4 5 6 7 8 9 10 11 12 1 2 3 4 5 6 7 8\n$EndElements\n");
  expect_mentions(msg, {"case.msh", "1 elements of type \"Hexahedron 20\"",
                        "bipo accepts only 8-node hexahedra"});
  // 2.2 tags: the elementary tag is not negative, further tags are partitions.
  msg = parse_error(kHeader22 + kNodes22 + replaced(kTwoHexes22, "1 5 2 1 1", "1 5 2 1 -1"));
  expect_mentions(msg, {"line 21", "element 1 has the negative elementary tag -1"});
  msg = parse_error(kHeader22 + kNodes22 + replaced(kTwoHexes22, "1 5 2 1 1", "1 5 3 1 1 4"));
  expect_mentions(msg, {"line 21", "element 1 has 3 tags", "third tag (4) is not 0"});
  msg = parse_error(kHeader22 + kNodes22 + replaced(kTwoHexes22, "1 5 2 1 1", "1 5 5 1 1 1 2 3"));
  expect_mentions(msg, {"line 21", "element 1 has 5 tags", "make 4 tags",
                        "parent and domain tags are not supported"});
  const Mesh partitioned = parse_msh(
      kHeader22 + kNodes22 + replaced(kTwoHexes22, "1 5 2 1 1", "1 5 5 1 1 2 1 -2"), "p.msh");
  EXPECT_EQ(partitioned.n_hexes(), 2);
}

TEST(MshReader, NonFiniteCoordinatesNameTheNode) {
  for (const std::string bad : {"nan", "inf", "-inf", "NAN", "infinity", "1e999"}) {
    const std::string msg = parse_error(
        kHeader22 + replaced(kNodes22, "\n5 1 1 0\n", "\n5 1 " + bad + " 0\n") + kTwoHexes22);
    expect_mentions(msg,
                    {"case.msh", "line 10", "node 5 has a non-finite coordinate (" + bad + ")"});
  }
  expect_mentions(parse_error(replaced(kFile41, "\n1 1 0\n", "\n1 nan 0\n")),
                  {"line 31", "node 5 has a non-finite coordinate (nan)"});
  // Binary: a NaN in the coordinates of the box's node 4.
  TempDir dir;
  write_msh(generate_box({0, 0, 0}, {1, 1, 1}, 1, 1, 1), dir / "b.msh", true, 4.1);
  std::string bytes = slurp(dir / "b.msh");
  const std::size_t header = bytes.find("$Nodes\n") + 7;
  std::size_t counts[4];
  std::memcpy(counts, bytes.data() + header, sizeof counts);
  // Skip the blocks before the volume's (empty point blocks), then the tags.
  std::size_t at = header + 32;
  while (true) {
    std::size_t n = 0;
    std::memcpy(&n, bytes.data() + at + 12, 8);
    at += 20;
    if (n == counts[1]) break;
    at += 32 * n;
  }
  const std::size_t coordinate = at + 8 * counts[1] + 3 * 8 * 3 + 8;  // node 4, y
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::memcpy(bytes.data() + coordinate, &nan, 8);
  expect_mentions(parse_error(bytes), {"byte offset " + std::to_string(coordinate),
                                       "node 4 has a non-finite coordinate (nan)"});
  // Finite coordinates whose Jacobian overflows.
  std::string huge_nodes = replaced(kNodes22, "\n3 2 0 0\n", "\n3 1e300 0 0\n");
  huge_nodes = replaced(huge_nodes, "\n6 2 1 0\n", "\n6 2 1e300 0\n");
  huge_nodes = replaced(huge_nodes, "\n9 2 0 1\n", "\n9 2 0 1e300\n");
  const std::string huge = kHeader22 + huge_nodes + kTwoHexes22;
  expect_mentions(parse_error(huge), {"case.msh", "hexahedron 2", "non-finite Jacobian"});
}

TEST(MshReader, NumbersParseEntirelyAndFitTheirType) {
  std::string msg =
      parse_error(kHeader22 + replaced(kNodes22, "\n5 1 1 0\n", "\n5 1 1x 0\n") + kTwoHexes22);
  expect_mentions(msg, {"line 10", "expected the y coordinate (a number), found '1x'"});
  msg = parse_error(kHeader22 + replaced(kNodes22, "\n5 1 1 0\n", "\n99999999999 1 1 0\n") +
                    kTwoHexes22);
  expect_mentions(msg, {"line 10", "a node tag must be between 1 and 2147483647"});
  msg = parse_error(replaced(kFile41, "\n3 3 0 6\n7\n", "\n3 3 0 6\n99999999999999999999\n"));
  expect_mentions(msg, {"$Nodes block 2",
                        "a node tag must be between 1 and 18446744073709551615, "
                        "found 99999999999999999999"});
  msg = parse_error(kHeader22 + replaced(kNodes22, "$Nodes\n12\n", "$Nodes\n12.0\n") + kTwoHexes22);
  expect_mentions(msg, {"line 5", "expected the number of nodes (an integer), found '12.0'"});
  // A header count beyond what the bytes can hold: refused before anything
  // is allocated.
  msg = parse_error(kHeader22 + "$Nodes\n2000000000\n1 0 0 0\n$EndNodes\n");
  expect_mentions(msg, {"line 5", "declares 2000000000 nodes, more than the", "bytes left"});
  msg = parse_error(kHeader41 + "$Nodes\n1 1000000000000000000 1 1\n$EndNodes\n");
  expect_mentions(msg, {"declares 1000000000000000000 nodes"});
}

TEST(MshReader, PhysicalNamesAreQuotedCleanUtf8) {
  const auto named = [](const std::string& record) {
    return replaced(kFile41, "0 5 \"corner\"", record);
  };
  EXPECT_EQ(parse_msh(named("0 5 \"coin d\xC3\xA9part\""), "u.msh").node_set("coin d\xC3\xA9part"),
            (std::vector<int>{0, 2}));
  expect_mentions(parse_error(named("0 5 corner")), {"line 8", "expected the quoted name"});
  expect_mentions(parse_error(named("0 5 \"corner")), {"line 8", "no closing double quote"});
  expect_mentions(parse_error(named("0 5 \"cor\"ner\"")), {"line 8", "unexpected 'ner\"'"});
  for (const std::string bad :
       {"a\tb", "a\x01z", "\xFF", "\xC3", "\xC0\xAF", "\xED\xA0\x80", "\xC2\x85", "a\x7Fz"}) {
    expect_mentions(parse_error(named("0 5 \"" + bad + "\"")),
                    {"line 8", "not valid UTF-8 text without control characters"});
  }
}

// An entity in very many physical groups: each group copies it, so the
// total is bounded (and nothing in the parse is quadratic in the tags).
TEST(MshReader, ManyPhysicalGroupsOnOneEntityAreBounded) {
  // (Built with streams: GCC 12 warns wrongly (-Wrestrict) on chains of +.)
  const auto start = std::chrono::steady_clock::now();
  std::ostringstream file;
  file << kHeader41 << "$Entities\n0 0 0 1\n1 0 0 0 2 1 1 100000";
  for (int p = 1; p <= 100000; ++p) file << ' ' << p;
  file << " 0\n$EndEntities\n$Nodes\n1 12 1 12\n3 1 0 12\n";
  for (int i = 1; i <= 12; ++i) file << i << '\n';
  file << "0 0 0\n1 0 0\n2 0 0\n0 1 0\n1 1 0\n2 1 0\n"
       << "0 0 1\n1 0 1\n2 0 1\n0 1 1\n1 1 1\n2 1 1\n$EndNodes\n"
       << "$Elements\n1 2 1 2\n3 1 5 2\n1 " << kHexA << "\n2 " << kHexB << "\n$EndElements\n";
  expect_mentions(parse_error(file.str()),
                  {"case.msh", "the 100000 physical groups would list 1600000 node references",
                   "entities belong to too many physical groups"});
  // 2.2: the groups of an entity come from its elements.
  std::ostringstream points;
  points << kHeader22 << kNodes22 << "$Elements\n"
         << 2 + 30000 << "\n1 5 2 0 1 " << kHexA << "\n2 5 2 0 1 " << kHexB << '\n';
  for (int p = 1; p <= 30000; ++p) points << 2 + p << " 15 2 " << p << " 1 1\n";
  points << "$EndElements\n";
  expect_mentions(parse_error(points.str()),
                  {"the 30000 physical groups would list 900000000 node references"});
  // Many groups sharing one name are merged once.
  std::ostringstream shared;
  shared << kHeader22 << "$PhysicalNames\n20000\n";
  for (int p = 1; p <= 20000; ++p) shared << "0 " << p << " \"shared\"\n";
  shared << "$EndPhysicalNames\n"
         << kNodes22 << "$Elements\n"
         << 2 + 20000 << "\n1 5 2 0 1 " << kHexA << "\n2 5 2 0 1 " << kHexB << '\n';
  for (int p = 1; p <= 20000; ++p) {
    shared << 2 + p << " 15 2 " << p << ' ' << 100 + p << ' ' << 1 + p % 12 << '\n';
  }
  shared << "$EndElements\n";
  const Mesh mesh = parse_msh(shared.str(), "shared.msh");
  EXPECT_EQ(mesh.node_set("shared").size(), 12u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

TEST(MshReader, TruncatedFilesAreErrorsAtEveryByte) {
  TempDir dir;
  Mesh mesh = generate_box({0, 0, 0}, {1, 1, 1}, 1, 1, 2);
  mesh.node_sets.erase("xmax");
  for (const double version : {4.1, 2.2}) {
    for (const bool binary : {false, true}) {
      SCOPED_TRACE(std::to_string(version) + (binary ? " binary" : " ASCII"));
      write_msh(mesh, dir / "t.msh", binary, version);
      const std::string bytes = slurp(dir / "t.msh");
      ASSERT_EQ(bytes.substr(bytes.size() - 13), "$EndElements\n");
      EXPECT_EQ(parse_msh(bytes.substr(0, bytes.size() - 1), "t.msh").n_hexes(), 2);
      for (std::size_t cut = 0; cut + 1 < bytes.size(); ++cut) {
        const std::string msg =
            input_error_of([&] { (void)parse_msh(bytes.substr(0, cut), "t.msh"); });
        ASSERT_EQ(msg.rfind("t.msh: ", 0), 0u) << "cut at " << cut << ": " << msg;
      }
    }
  }
}

// Random byte changes give a mesh or an InputError, nothing else (the fuzz
// target does this at scale).
TEST(MshReader, ChangedBytesGiveAMeshOrAnInputError) {
  TempDir dir;
  Mesh mesh = generate_box({0, 0, 0}, {1, 1, 1}, 2, 1, 1);
  std::mt19937 random(12345);
  for (const double version : {4.1, 2.2}) {
    for (const bool binary : {false, true}) {
      write_msh(mesh, dir / "r.msh", binary, version);
      const std::string bytes = slurp(dir / "r.msh");
      for (int trial = 0; trial < 3000; ++trial) {
        std::string changed = bytes;
        const int changes = 1 + static_cast<int>(random() % 4);
        for (int c = 0; c < changes; ++c) {
          const std::size_t at = random() % changed.size();
          const auto byte = static_cast<char>(random() % 256);
          switch (random() % 3) {
            case 0:
              changed[at] = byte;
              break;
            case 1:
              changed.erase(at, 1 + random() % 8);
              break;
            default:
              changed.insert(at, 1 + random() % 3, byte);
              break;
          }
        }
        try {
          (void)parse_msh(changed, "r.msh");
        } catch (const InputError& e) {
          ASSERT_EQ(std::string(e.what()).rfind("r.msh: ", 0), 0u) << e.what();
        }
      }
    }
  }
}

TEST(MshReader, BinaryPostProcessingDataAreSkippedByTheirCounts) {
  TempDir dir;
  write_msh(generate_box({0, 0, 0}, {1, 1, 1}, 1, 1, 1), dir / "d.msh", true, 4.1);
  const std::string mesh = slurp(dir / "d.msh");
  // Two nodal values whose bytes contain the line "$EndNodeData": a line
  // search would stop inside the data.
  double first = 0.0, second = 0.0;
  std::memcpy(&first, "\n$EndNod", 8);
  const char tail[8] = {'a', '\n', 0, 0, 0, 0, 0, 0};
  std::memcpy(&second, tail, 8);
  const std::string data = Bytes()
                               .text("$NodeData\n1\n\"v\"\n1\n0\n3\n0\n1\n2\n")
                               .put<int>(1)
                               .put<double>(first)
                               .put<int>(0x74614465)  // "eDat"
                               .put<double>(second)
                               .text("\n$EndNodeData\n")
                               .str();
  EXPECT_EQ(parse_msh(mesh + data, "d.msh").n_hexes(), 1);
  const std::string element_node_data = Bytes()
                                            .text("$ElementNodeData\n0\n0\n3\n0\n2\n1\n")
                                            .put<int>(1)
                                            .put<int>(8)
                                            .text(std::string(8 * 2 * 8, '\n'))
                                            .text("\n$EndElementNodeData\n")
                                            .str();
  EXPECT_EQ(parse_msh(mesh + element_node_data, "d.msh").n_hexes(), 1);
  // A count beyond the data.
  const std::string cut = data.substr(0, data.rfind("$EndNodeData") - 10);
  expect_mentions(parse_error(mesh + cut + "\n"), {"case.msh", "byte offset", "$NodeData"});
  const std::string periodic = Bytes()
                                   .text("$Periodic\n")
                                   .put<std::size_t>(1)
                                   .put<int>(0)
                                   .put<int>(1)
                                   .put<int>(2)
                                   .put<std::size_t>(0)
                                   .put<std::size_t>(1)
                                   .put<std::size_t>(1)
                                   .put<std::size_t>(10)  // '\n'
                                   .text("\n$EndPeriodic\n")
                                   .str();
  EXPECT_EQ(parse_msh(mesh + periodic, "d.msh").n_hexes(), 1);
}

// ---------------------------------------------------------------- paths --

TEST(MshReader, PathsThatAreNotRegularFilesSayWhatTheyAre) {
  TempDir dir;
  const auto error_for = [](const fs::path& path) {
    return input_error_of([&] { (void)read_msh(path); });
  };
  std::string msg = error_for(dir / "missing.msh");
  expect_mentions(msg, {(dir / "missing.msh").string(), "no such file"});
  msg = error_for(dir.path());
  expect_mentions(msg, {dir.path().string(), "is a directory"});

  const fs::path fifo = dir / "pipe.msh";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  msg = error_for(fifo);  // must not wait for a writer
  expect_mentions(msg, {fifo.string(), "is a FIFO (named pipe), not a regular file"});

  fs::create_symlink("loop_b.msh", dir / "loop_a.msh");
  fs::create_symlink("loop_a.msh", dir / "loop_b.msh");
  msg = error_for(dir / "loop_a.msh");
  expect_mentions(msg, {(dir / "loop_a.msh").string(), "symbolic link loop"});

  fs::create_symlink("gone.msh", dir / "dangling.msh");
  msg = error_for(dir / "dangling.msh");
  expect_mentions(msg, {"symbolic link to a missing file ('gone.msh')"});

  msg = error_for("/dev/null");
  expect_mentions(msg, {"/dev/null", "is a device (character device), not a regular file"});

  write_bytes(dir / "plain.msh", kHeader22);
  msg = error_for(dir / "plain.msh" / "inner.msh");
  expect_mentions(msg, {"a component of the path is not a directory"});

  // A symbolic link to a mesh is read through.
  write_msh(generate_box({0, 0, 0}, {1, 1, 1}, 1, 1, 1), dir / "box.msh");
  fs::create_symlink("box.msh", dir / "link.msh");
  EXPECT_EQ(read_msh(dir / "link.msh").n_hexes(), 1);

  // Larger than the limit: refused before reading (a sparse file).
  const fs::path big = dir / "big.msh";
  write_bytes(big, kHeader22);
  fs::resize_file(big, kMaxMshFileBytes + 1);
  msg = error_for(big);
  expect_mentions(msg, {big.string(), "4294967297 bytes, more than the limit of 4294967296"});

  if (::geteuid() != 0) {  // root reads anything
    const fs::path locked = dir / "locked.msh";
    write_bytes(locked, kHeader22);
    fs::permissions(locked, fs::perms::none);
    expect_mentions(error_for(locked), {locked.string(), "Permission denied"});
  }
}

// ------------------------------------------------------------------ CLI --

// `bipo check` of a case whose mesh.file is a Gmsh script exits 2, names the
// file, and runs nothing.
TEST(MshReaderCli, CheckOfACaseWhoseMeshIsAScriptExitsTwoUnrun) {
  TempDir dir;
  const fs::path victim = dir / "created_by_the_script";
  write_bytes(dir / "evil.msh", "System \"touch " + victim.string() + "\";\nExit;\n");
  write_bytes(dir / "case.yaml",
              "mesh: {file: evil.msh}\n"
              "material: {young: 1000, poisson: 0.3}\n"
              "load_program: [{to: 1.0, increments: 1}]\n");
  const fs::path err = dir / "stderr.txt";
  // Built by appending: GCC 12 warns wrongly (-Wrestrict) on a chain of +.
  std::string command = "'";
  command.append(BIPO_EXE).append("' check '").append((dir / "case.yaml").string());
  command.append("' >/dev/null 2>'").append(err.string()).append("'");
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  const std::string message = slurp(err);
  expect_mentions(message, {"evil.msh", "not a Gmsh mesh file"});
  EXPECT_FALSE(fs::exists(victim));
}

// `bipo check` says what mesh.file names when it is not a regular file.
TEST(MshReaderCli, CheckSaysWhatTheMeshPathIs) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "pipe.msh").c_str(), 0600), 0);
  fs::create_directory(dir / "folder.msh");
  fs::create_symlink("loop_b.msh", dir / "loop_a.msh");
  fs::create_symlink("loop_a.msh", dir / "loop_b.msh");
  for (const auto& [mesh, what] :
       {std::pair<std::string, std::string>{"pipe.msh", "is a FIFO (named pipe)"},
        {"folder.msh", "is a directory"},
        {"loop_a.msh", "symbolic link loop"},
        {"/dev/null", "is a device"},
        {"missing.msh", "no such file"}}) {
    SCOPED_TRACE(mesh);
    write_bytes(dir / "case.yaml", "mesh: {file: " + mesh +
                                       "}\n"
                                       "material: {young: 1000, poisson: 0.3}\n"
                                       "load_program: [{to: 1.0, increments: 1}]\n");
    const fs::path err = dir / "stderr.txt";
    std::string command = "timeout 20 '";
    command.append(BIPO_EXE).append("' check '").append((dir / "case.yaml").string());
    command.append("' >/dev/null 2>'").append(err.string()).append("'");
    const int status = std::system(command.c_str());
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 2);
    const std::string message = slurp(err);
    expect_mentions(message, {"case.yaml", "mesh.file", mesh, what});
    EXPECT_EQ(message.find("does not exist"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace bipo
