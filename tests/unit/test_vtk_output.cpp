// Output writers: .vtu written and read back exactly (every compressor,
// integer fields as integers, step data as field data), Gmsh/VTK hexahedron
// ordering, .pvd collection, atomic text files and CSV histories.
#include <gtest/gtest.h>
#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkCellType.h>
#include <vtkDataArray.h>
#include <vtkFieldData.h>
#include <vtkHexahedron.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkQuad.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLDataElement.h>
#include <vtkXMLDataParser.h>
#include <vtkXMLUnstructuredGridReader.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "../process_temp_path.hpp"
#include "core/errors.hpp"
#include "io/vtk_output.hpp"

namespace fs = std::filesystem;

namespace {

class VtkOutput : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = bipo::test::process_temp_path("bipo_vtk_" + std::string(info->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// Names of the files in dir (not recursive), sorted.
  static std::vector<std::string> listing(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  static std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  fs::path dir_;
};

/// Two unit cubes side by side along x, Gmsh ordering.
struct TwoHexes {
  std::vector<Eigen::Vector3d> points;
  std::vector<std::array<int, 8>> hexes;
  TwoHexes() {
    for (int k = 0; k < 2; ++k)
      for (int j = 0; j < 2; ++j)
        for (int i = 0; i < 3; ++i) points.emplace_back(i + 0.1 * k, j, k + 1.0 / 3.0);
    const auto id = [](int i, int j, int k) { return i + 3 * j + 6 * k; };
    for (int e = 0; e < 2; ++e) {
      hexes.push_back({id(e, 0, 0), id(e + 1, 0, 0), id(e + 1, 1, 0), id(e, 1, 0), id(e, 0, 1),
                       id(e + 1, 0, 1), id(e + 1, 1, 1), id(e, 1, 1)});
    }
  }
};

std::vector<double> ramp(std::size_t n, double scale) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = scale * (static_cast<double>(i) + 1.0) / 7.0;  // not exact in binary
  return v;
}

vtkSmartPointer<vtkUnstructuredGrid> read_back(const fs::path& file) {
  vtkNew<vtkXMLUnstructuredGridReader> reader;
  reader->SetFileName(file.c_str());
  reader->Update();
  vtkSmartPointer<vtkUnstructuredGrid> grid = reader->GetOutput();
  return grid;
}

void expect_array(vtkDataArray* a, int n_components, const std::vector<double>& values) {
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->GetNumberOfComponents(), n_components);
  ASSERT_EQ(static_cast<std::size_t>(a->GetNumberOfTuples() * n_components), values.size());
  for (vtkIdType t = 0; t < a->GetNumberOfTuples(); ++t) {
    for (int c = 0; c < n_components; ++c) {
      EXPECT_EQ(a->GetComponent(t, c), values[static_cast<std::size_t>(t * n_components + c)]);
    }
  }
}

}  // namespace

TEST_F(VtkOutput, HexMeshWrittenAndReadBackExactly) {
  const TwoHexes m;
  const std::size_t np = m.points.size();
  const std::vector<bipo::PointField> pf{{"displacement", 3, ramp(3 * np, 1e-3)},
                                         {"von_mises", 1, ramp(np, 250.0)},
                                         {"stress", 9, ramp(9 * np, -3.0)}};
  const std::vector<bipo::CellField> cf{{"element", 1, {1.0, 2.0}},
                                        {"mean_stress", 9, ramp(18, 0.5)}};
  const fs::path file = dir_ / "out" / "step_0001.vtu";  // folder created by the writer
  bipo::write_vtu(file, m.points, m.hexes, pf, cf);

  EXPECT_EQ(listing(dir_ / "out"), std::vector<std::string>{"step_0001.vtu"});  // no temporary left
  const std::string text = slurp(file);
  EXPECT_NE(text.find("format=\"appended\""), std::string::npos);
  // base64, not raw: docs/outputs.md, "VTU compression" (meshio misreads raw appended data).
  EXPECT_NE(text.find("encoding=\"base64\""), std::string::npos);
  EXPECT_NE(text.find("compressor=\"vtkZLibDataCompressor\""), std::string::npos);

  const auto grid = read_back(file);
  ASSERT_EQ(grid->GetNumberOfPoints(), static_cast<vtkIdType>(np));
  ASSERT_EQ(grid->GetNumberOfCells(), 2);
  for (std::size_t i = 0; i < np; ++i) {
    double x[3];
    grid->GetPoint(static_cast<vtkIdType>(i), x);
    EXPECT_EQ(x[0], m.points[i].x());
    EXPECT_EQ(x[1], m.points[i].y());
    EXPECT_EQ(x[2], m.points[i].z());
  }
  for (vtkIdType e = 0; e < 2; ++e) {
    EXPECT_EQ(grid->GetCellType(e), VTK_HEXAHEDRON);
    vtkIdType n = 0;
    const vtkIdType* ids = nullptr;
    grid->GetCellPoints(e, n, ids);
    ASSERT_EQ(n, 8);
    for (int k = 0; k < 8; ++k)
      EXPECT_EQ(ids[k], m.hexes[static_cast<std::size_t>(e)][static_cast<std::size_t>(k)]);
  }
  for (const auto& f : pf)
    expect_array(grid->GetPointData()->GetArray(f.name.c_str()), f.n_components, f.values);
  for (const auto& f : cf)
    expect_array(grid->GetCellData()->GetArray(f.name.c_str()), f.n_components, f.values);
  EXPECT_STREQ(grid->GetPointData()->GetArray("stress")->GetComponentName(1), "XY");
  EXPECT_STREQ(grid->GetPointData()->GetArray("displacement")->GetComponentName(2), "Z");
}

TEST_F(VtkOutput, GmshHexOrderingIsVtkOrdering) {
  // Gmsh's reference hexahedron: nodes 0-3 on zeta = -1, 4-7 on zeta = +1.
  const double gmsh[8][3] = {{-1, -1, -1}, {1, -1, -1}, {1, 1, -1}, {-1, 1, -1},
                             {-1, -1, 1},  {1, -1, 1},  {1, 1, 1},  {-1, 1, 1}};
  vtkNew<vtkHexahedron> hex;
  const double* pc = hex->GetParametricCoords();  // VTK's reference cell is [0, 1]^3
  for (int i = 0; i < 8; ++i) {
    for (int d = 0; d < 3; ++d) EXPECT_EQ(2.0 * pc[3 * i + d] - 1.0, gmsh[i][d]) << "node " << i;
  }
  const double gmsh_quad[4][2] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}};
  vtkNew<vtkQuad> quad;
  const double* qc = quad->GetParametricCoords();
  for (int i = 0; i < 4; ++i) {
    for (int d = 0; d < 2; ++d)
      EXPECT_EQ(2.0 * qc[3 * i + d] - 1.0, gmsh_quad[i][d]) << "node " << i;
  }
}

TEST_F(VtkOutput, QuadSurfaceWrittenAndReadBack) {
  const std::vector<Eigen::Vector3d> pts{{0, 0, 0}, {1, 0, 0}, {1, 1, 0},
                                         {0, 1, 0}, {2, 0, 0}, {2, 1, 0}};
  const std::vector<std::array<int, 4>> quads{{0, 1, 2, 3}, {1, 4, 5, 2}};
  const std::vector<bipo::PointField> pf{{"f", 1, ramp(6, -1.0)}, {"r", 3, ramp(18, 3.0)}};
  const std::vector<bipo::CellField> cf{{"status", 1, {0.0, 2.0}}};
  const fs::path file = dir_ / "contact_0001.vtu";
  bipo::write_vtu(file, pts, quads, pf, cf);
  const auto grid = read_back(file);
  ASSERT_EQ(grid->GetNumberOfCells(), 2);
  EXPECT_EQ(grid->GetCellType(1), VTK_QUAD);
  vtkIdType n = 0;
  const vtkIdType* ids = nullptr;
  grid->GetCellPoints(1, n, ids);
  ASSERT_EQ(n, 4);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(ids[k], quads[1][static_cast<std::size_t>(k)]);
  for (const auto& f : pf)
    expect_array(grid->GetPointData()->GetArray(f.name.c_str()), f.n_components, f.values);
  expect_array(grid->GetCellData()->GetArray("status"), 1, cf[0].values);
  EXPECT_EQ(listing(dir_), std::vector<std::string>{"contact_0001.vtu"});
}

TEST_F(VtkOutput, EveryCompressionReadsBackExactly) {
  const TwoHexes m;
  const std::size_t np = m.points.size();
  const std::vector<bipo::PointField> pf{{"displacement", 3, ramp(3 * np, 1e-3)}};
  const std::vector<bipo::CellField> cf{{"von_mises", 1, ramp(2, 250.0)}};
  const std::pair<bipo::VtuCompression, std::string> cases[] = {
      {bipo::VtuCompression::zlib, "compressor=\"vtkZLibDataCompressor\""},
      {bipo::VtuCompression::lz4, "compressor=\"vtkLZ4DataCompressor\""},
      {bipo::VtuCompression::lzma, "compressor=\"vtkLZMADataCompressor\""},
      {bipo::VtuCompression::none, ""}};
  for (const auto& [compression, attribute] : cases) {
    bipo::VtuOptions options;
    options.compression = compression;
    const fs::path file = dir_ / (std::to_string(static_cast<int>(compression)) + ".vtu");
    bipo::write_vtu(file, m.points, m.hexes, pf, cf, options);
    const std::string head = slurp(file).substr(0, 300);
    if (attribute.empty())
      EXPECT_EQ(head.find("compressor="), std::string::npos) << head;
    else
      EXPECT_NE(head.find(attribute), std::string::npos) << head;
    const auto grid = read_back(file);
    ASSERT_EQ(grid->GetNumberOfPoints(), static_cast<vtkIdType>(np));
    expect_array(grid->GetPointData()->GetArray("displacement"), 3, pf[0].values);
    expect_array(grid->GetCellData()->GetArray("von_mises"), 1, cf[0].values);
  }
  bipo::VtuOptions bad;
  bad.compression_level = 0;
  EXPECT_THROW(bipo::write_vtu(dir_ / "bad.vtu", m.points, m.hexes, pf, cf, bad),
               std::invalid_argument);
  EXPECT_FALSE(fs::exists(dir_ / "bad.vtu"));
}

TEST_F(VtkOutput, IntegerFieldsAreWrittenAsIntegers) {
  const TwoHexes m;
  const std::size_t np = m.points.size();
  std::vector<double> state(np, -1.0);
  state[0] = 2.0;
  state[5] = 1.0;
  const std::vector<bipo::PointField> pf{
      {"state", 1, state, bipo::ValueType::int32},
      {"flag", 1, std::vector<double>(np, 1.0), bipo::ValueType::uint8}};
  const std::vector<bipo::CellField> cf{{"face_state", 1, {3.0, 255.0}, bipo::ValueType::uint8}};
  const fs::path file = dir_ / "ints.vtu";
  bipo::write_vtu(file, m.points, m.hexes, pf, cf);
  const std::string head = slurp(file).substr(0, 2000);
  EXPECT_NE(head.find("type=\"Int32\" Name=\"state\""), std::string::npos) << head;
  EXPECT_NE(head.find("type=\"UInt8\" Name=\"flag\""), std::string::npos) << head;
  EXPECT_NE(head.find("type=\"UInt8\" Name=\"face_state\""), std::string::npos) << head;
  const auto grid = read_back(file);
  EXPECT_EQ(grid->GetPointData()->GetArray("state")->GetDataType(), VTK_INT);
  EXPECT_EQ(grid->GetCellData()->GetArray("face_state")->GetDataType(), VTK_UNSIGNED_CHAR);
  expect_array(grid->GetPointData()->GetArray("state"), 1, state);
  expect_array(grid->GetCellData()->GetArray("face_state"), 1, cf[0].values);

  // A value the type cannot hold exactly is refused, and nothing written.
  for (const double v : {0.5, 256.0, -1.0, std::nan("")}) {
    const std::vector<bipo::CellField> bad{{"face_state", 1, {0.0, v}, bipo::ValueType::uint8}};
    EXPECT_THROW(bipo::write_vtu(dir_ / "bad.vtu", m.points, m.hexes, {}, bad),
                 std::invalid_argument)
        << v;
  }
  const std::vector<bipo::CellField> big{{"n", 1, {0.0, 2147483648.0}, bipo::ValueType::int32}};
  EXPECT_THROW(bipo::write_vtu(dir_ / "bad.vtu", m.points, m.hexes, {}, big),
               std::invalid_argument);
  EXPECT_FALSE(fs::exists(dir_ / "bad.vtu"));
}

TEST_F(VtkOutput, FieldDataWrittenAndReadBack) {
  const TwoHexes m;
  bipo::VtuOptions options;
  options.field_data = {{"TimeValue", 6.5},
                        {"load_factor", 1.0 / 3.0},
                        {"cycle", 6.0, bipo::ValueType::int32},
                        {"segment_kind", -1.0, bipo::ValueType::int32}};
  const fs::path file = dir_ / "step.vtu";
  bipo::write_vtu(file, m.points, m.hexes, {}, {}, options);
  const auto grid = read_back(file);
  vtkFieldData* fd = grid->GetFieldData();
  ASSERT_NE(fd, nullptr);
  for (const auto& d : options.field_data) {
    vtkDataArray* a = fd->GetArray(d.name.c_str());
    ASSERT_NE(a, nullptr) << d.name;
    EXPECT_EQ(a->GetNumberOfTuples(), 1) << d.name;
    EXPECT_EQ(a->GetComponent(0, 0), d.value) << d.name;
    EXPECT_EQ(a->GetDataType(), d.type == bipo::ValueType::int32 ? VTK_INT : VTK_DOUBLE) << d.name;
  }
  options.field_data.push_back({"cycle", 7.0, bipo::ValueType::int32});
  EXPECT_THROW(bipo::write_vtu(dir_ / "twice.vtu", m.points, m.hexes, {}, {}, options),
               std::invalid_argument);
}

TEST_F(VtkOutput, InconsistentInputIsRejected) {
  const TwoHexes m;
  EXPECT_THROW(bipo::write_vtu(dir_ / "a.vtu", m.points, m.hexes, {{"u", 3, {1.0, 2.0}}}, {}),
               std::invalid_argument);
  auto bad = m.hexes;
  bad[1][7] = 99;
  EXPECT_THROW(bipo::write_vtu(dir_ / "a.vtu", m.points, bad, {}, {}), std::invalid_argument);
  EXPECT_TRUE(listing(dir_).empty());
}

TEST_F(VtkOutput, FailedWriteLeavesNoTemporaryAndNamesThePath) {
  const TwoHexes m;
  // The target name is a non-empty folder: writing the temporary works, the
  // rename fails; the temporary must be removed.
  const fs::path target = dir_ / "step.vtu";
  fs::create_directories(target / "inside");
  try {
    bipo::write_vtu(target, m.points, m.hexes, {}, {});
    FAIL() << "no error";
  } catch (const bipo::InputError& e) {
    EXPECT_NE(std::string(e.what()).find(target.string()), std::string::npos) << e.what();
  }
  EXPECT_EQ(listing(dir_), std::vector<std::string>{"step.vtu"});
  EXPECT_THROW(bipo::write_text_atomically(target, "x"), bipo::InputError);
  EXPECT_EQ(listing(dir_), std::vector<std::string>{"step.vtu"});
  // The folder cannot be created under a regular file.
  std::ofstream(dir_ / "plain") << "x";
  EXPECT_THROW(bipo::write_vtu(dir_ / "plain" / "a.vtu", m.points, m.hexes, {}, {}),
               bipo::InputError);
}

TEST_F(VtkOutput, TextWrittenAtomically) {
  const fs::path file = dir_ / "summary.json";
  bipo::write_text_atomically(file, "{\"a\": 1}\n");
  EXPECT_EQ(slurp(file), "{\"a\": 1}\n");
  bipo::write_text_atomically(file, "");
  EXPECT_EQ(slurp(file), "");
  EXPECT_EQ(listing(dir_), std::vector<std::string>{"summary.json"});
}

TEST_F(VtkOutput, PvdCollectionIsWellFormedAfterEachStep) {
  const fs::path file = dir_ / "punch.pvd";
  bipo::PvdCollection pvd(file);
  ASSERT_TRUE(fs::exists(file));  // empty but valid from the start

  const auto parse = [&](std::size_t expected_steps) {
    vtkNew<vtkXMLDataParser> parser;
    parser->SetFileName(file.c_str());
    ASSERT_EQ(parser->Parse(), 1) << slurp(file);
    vtkXMLDataElement* root = parser->GetRootElement();
    ASSERT_NE(root, nullptr);
    EXPECT_STREQ(root->GetName(), "VTKFile");
    EXPECT_STREQ(root->GetAttribute("type"), "Collection");
    vtkXMLDataElement* collection = root->GetNestedElement(0);
    ASSERT_NE(collection, nullptr);
    EXPECT_STREQ(collection->GetName(), "Collection");
    ASSERT_EQ(static_cast<std::size_t>(collection->GetNumberOfNestedElements()), expected_steps);
  };
  parse(0);
  pvd.add(0.1, "step_0001.vtu");
  parse(1);
  pvd.add(2.0 / 3.0, "a&b <c>.vtu");
  parse(2);
  EXPECT_EQ(pvd.size(), 2u);

  const std::string text = slurp(file);
  EXPECT_NE(text.find("timestep=\"0.1\" group=\"\" part=\"0\" file=\"step_0001.vtu\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("file=\"a&amp;b &lt;c&gt;.vtu\""), std::string::npos) << text;
  EXPECT_EQ(listing(dir_), std::vector<std::string>{"punch.pvd"});
  EXPECT_THROW(pvd.add(std::nan(""), "x.vtu"), std::invalid_argument);
}

TEST_F(VtkOutput, CsvHistoryIsPartialUntilFinished) {
  const fs::path file = dir_ / "history.csv";
  std::ofstream(file) << "stale,complete\n1,2\n";  // from an earlier run
  {
    bipo::CsvWriter csv(file, {"increment", "factor", "note, with comma"});
    EXPECT_FALSE(fs::exists(file));  // the stale history is gone
    EXPECT_TRUE(fs::exists(csv.partial_path()));
    csv.append_row({1, 0.1, -1e-300});
    // Rows are flushed: readable while the run goes on.
    EXPECT_EQ(slurp(csv.partial_path()), "increment,factor,\"note, with comma\"\n1,0.1,-1e-300\n");
    EXPECT_THROW(csv.append_row({1, 2}), std::invalid_argument);
    csv.append_row({2, 1.0 / 3.0, 0});
    EXPECT_EQ(csv.n_rows(), 2u);
    csv.finish();
    EXPECT_TRUE(csv.finished());
    csv.finish();  // idempotent
    EXPECT_THROW(csv.append_row({3, 1, 0}), std::logic_error);
  }
  EXPECT_EQ(listing(dir_), std::vector<std::string>{"history.csv"});
  EXPECT_EQ(slurp(file),
            "increment,factor,\"note, with comma\"\n1,0.1,-1e-300\n"
            "2,0.3333333333333333,0\n");
}

TEST(NumberFormat, ShortestTextReadsBackAsTheSameDouble) {
  std::mt19937_64 generator(2026);
  std::uniform_int_distribution<std::uint64_t> bits;
  int checked = 0;
  while (checked < 20000) {
    const auto pattern = bits(generator);
    double value = 0.0;
    std::memcpy(&value, &pattern, sizeof value);
    if (!std::isfinite(value)) continue;
    const std::string text = bipo::full_precision(value);
    EXPECT_EQ(std::strtod(text.c_str(), nullptr), value) << text;
    EXPECT_LE(text.size(), 24u) << text;
    ++checked;
  }
  EXPECT_EQ(bipo::full_precision(0.1), "0.1");
  EXPECT_EQ(bipo::full_precision(-2.0), "-2");
}

TEST_F(VtkOutput, CsvNotFinishedStaysPartial) {
  const fs::path file = dir_ / "probe_P.csv";
  {
    bipo::CsvWriter csv(file, {"a"});
    csv.append_row({1.5});
  }  // e.g. the run stopped on an error
  EXPECT_EQ(listing(dir_), std::vector<std::string>{"probe_P.csv.partial"});
  EXPECT_EQ(slurp(dir_ / "probe_P.csv.partial"), "a\n1.5\n");
}
