// Benchmark of the VTU compressions (issue 16, docs/outputs.md "VTU
// compression"): each given .vtu file, as bipo wrote it, is read back and
// written again by write_vtu with every compressor (zlib at levels 1 and 5,
// LZ4, LZMA, none); prints the median wall time of a write over several runs
// and the file size. Real result files, because a compressor's ratio and
// speed depend on the values: the step's fields, not synthetic ones.
//
//   bipo run -q -o A cases/punch_A.yaml
//   bench_vtu_output [--reps N] A/vtk/bipo_000095.vtu A/vtk/contact_000095.vtu
#include <unistd.h>
#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkCellType.h>
#include <vtkDataArray.h>
#include <vtkFieldData.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLUnstructuredGridReader.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "bench_support.hpp"
#include "io/vtk_output.hpp"

namespace {

using namespace bench;  // NOLINT: the shared helpers of bench_support.hpp
namespace fs = std::filesystem;

/// What write_vtu needs to write a grid again.
struct Grid {
  std::vector<Eigen::Vector3d> points;
  std::vector<std::array<int, 8>> hexes;
  std::vector<std::array<int, 4>> quads;
  std::vector<bipo::PointField> point_fields;
  std::vector<bipo::CellField> cell_fields;
  std::vector<bipo::FieldDatum> field_data;
};

bipo::ValueType type_of(vtkDataArray* a) {
  switch (a->GetDataType()) {
    case VTK_INT:
      return bipo::ValueType::int32;
    case VTK_UNSIGNED_CHAR:
      return bipo::ValueType::uint8;
    default:
      return bipo::ValueType::float64;
  }
}

template <typename Field>
std::vector<Field> fields_of(vtkFieldData* data) {
  std::vector<Field> fields;
  for (int k = 0; k < data->GetNumberOfArrays(); ++k) {
    vtkDataArray* a = data->GetArray(k);
    Field f{a->GetName(), a->GetNumberOfComponents(), {}, type_of(a)};
    for (vtkIdType t = 0; t < a->GetNumberOfTuples(); ++t)
      for (int c = 0; c < f.n_components; ++c) f.values.push_back(a->GetComponent(t, c));
    fields.push_back(std::move(f));
  }
  return fields;
}

Grid read_grid(const fs::path& file) {
  vtkNew<vtkXMLUnstructuredGridReader> reader;
  reader->SetFileName(file.c_str());
  reader->Update();
  vtkUnstructuredGrid* g = reader->GetOutput();
  Grid grid;
  for (vtkIdType i = 0; i < g->GetNumberOfPoints(); ++i) {
    double x[3];
    g->GetPoint(i, x);
    grid.points.emplace_back(x[0], x[1], x[2]);
  }
  for (vtkIdType e = 0; e < g->GetNumberOfCells(); ++e) {
    vtkIdType n = 0;
    const vtkIdType* ids = nullptr;
    g->GetCellPoints(e, n, ids);
    if (n == 8) {
      std::array<int, 8> h{};
      for (int k = 0; k < 8; ++k) h[k] = static_cast<int>(ids[k]);
      grid.hexes.push_back(h);
    } else {
      std::array<int, 4> q{};
      for (int k = 0; k < 4; ++k) q[k] = static_cast<int>(ids[k]);
      grid.quads.push_back(q);
    }
  }
  grid.point_fields = fields_of<bipo::PointField>(g->GetPointData());
  grid.cell_fields = fields_of<bipo::CellField>(g->GetCellData());
  for (const auto& f : fields_of<bipo::CellField>(g->GetFieldData()))
    grid.field_data.push_back({f.name, f.values.at(0), f.type});
  return grid;
}

void write(const fs::path& file, const Grid& g, const bipo::VtuOptions& options) {
  if (!g.hexes.empty())
    bipo::write_vtu(file, g.points, g.hexes, g.point_fields, g.cell_fields, options);
  else
    bipo::write_vtu(file, g.points, g.quads, g.point_fields, g.cell_fields, options);
}

void usage() {
  std::fprintf(stderr, "usage: bench_vtu_output [--reps N] FILE.vtu...\n");
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 9;
  std::vector<fs::path> files;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--reps")
      reps = std::atoi(option_value(argc, argv, a, usage));
    else if (!arg.empty() && arg[0] != '-')
      files.emplace_back(arg);
    else {
      usage();
      return 2;
    }
  }
  if (files.empty() || reps < 1) {
    usage();
    return 2;
  }
  const fs::path dir = fs::temp_directory_path() / ("bench_vtu_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  struct Choice {
    const char* label;
    bipo::VtuCompression compression;
    int level;
  };
  const Choice choices[] = {{"zlib level 1 (default)", bipo::VtuCompression::zlib, 1},
                            {"zlib level 5", bipo::VtuCompression::zlib, 5},
                            {"lz4 level 1", bipo::VtuCompression::lz4, 1},
                            {"lzma level 1", bipo::VtuCompression::lzma, 1},
                            {"none", bipo::VtuCompression::none, 1}};
  std::printf("median of %d writes; load average %s\n", reps, load_average().c_str());
  for (const fs::path& file : files) {
    const Grid grid = read_grid(file);
    std::printf("\n%s: %zu points, %zu cells, %zu point fields\n", file.filename().c_str(),
                grid.points.size(), grid.hexes.size() + grid.quads.size(),
                grid.point_fields.size());
    std::printf("  %-24s %10s %12s\n", "compression", "ms", "size KiB");
    for (const Choice& c : choices) {
      bipo::VtuOptions options;
      options.compression = c.compression;
      options.compression_level = c.level;
      options.field_data = grid.field_data;
      const fs::path out = dir / "out.vtu";
      const double seconds = time_median(reps, [&] { write(out, grid, options); });
      std::printf("  %-24s %10.2f %12.1f\n", c.label, 1e3 * seconds,
                  static_cast<double>(fs::file_size(out)) / 1024.0);
    }
  }
  fs::remove_all(dir);
  return 0;
}
