// Unit tests of io/mesh_cells: the VTK cell types of the element kinds and
// VTK's node order, judged by the orientation VTK documents for each cell
// type, on the cells read back from a written .vtu file.
#include <gtest/gtest.h>
#include <vtkCellType.h>
#include <vtkNew.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLUnstructuredGridReader.h>

#include <Eigen/Dense>
#include <filesystem>
#include <vector>

#include "../process_temp_path.hpp"
#include "io/mesh_cells.hpp"
#include "mesh/quality.hpp"

namespace bipo {
namespace {

/// A hexahedron [0, 1]^3, two prisms filling [1, 2] x [0, 1]^2 and a
/// tetrahedron on top of the first prism, all valid in Gmsh's orders.
Mesh mixed_mesh() {
  Mesh mesh;
  for (int k = 0; k < 2; ++k)
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < 3; ++i) mesh.nodes.emplace_back(i, j, k);
  mesh.nodes.emplace_back(1.7, 0.3, 2.0);  // apex, node 12
  // Node (i, j, k) is i + 3 j + 6 k.
  mesh.hexes.push_back({0, 1, 4, 3, 6, 7, 10, 9});
  mesh.wedges.push_back({1, 2, 5, 7, 8, 11});
  mesh.wedges.push_back({1, 5, 4, 7, 11, 10});
  mesh.tets.push_back({7, 8, 11, 12});
  mesh.node_sets["all"] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  return mesh;
}

/// Whether a cell's points follow VTK's documented orientation (vtkCellType
/// classes' documentation, which ParaView's cell volumes and face normals
/// rely on): the right-hand normal of the base (0, 1, 2) points toward the
/// rest of the cell for a hexahedron (base 0123 toward 4567) and a
/// tetrahedron (toward point 3), and away from it for a wedge (away from the
/// triangle 345).
bool vtk_oriented(int type, const std::vector<Eigen::Vector3d>& x) {
  const Eigen::Vector3d normal = (x[1] - x[0]).cross(x[2] - x[0]);
  Eigen::Vector3d base = (x[0] + x[1] + x[2]) / 3.0, rest = Eigen::Vector3d::Zero();
  const std::size_t first_of_rest = type == VTK_TETRA ? 3 : x.size() / 2;
  for (std::size_t a = first_of_rest; a < x.size(); ++a) rest += x[a];
  rest /= static_cast<double>(x.size() - first_of_rest);
  const double towards_rest = normal.dot(rest - base);
  return type == VTK_WEDGE ? towards_rest < 0.0 : towards_rest > 0.0;
}

TEST(MeshCells, VolumeCellsFollowVtkOrientation) {
  const Mesh mesh = mixed_mesh();
  check_element_jacobians(mesh, "mixed");  // valid in Gmsh's orders
  const auto file = bipo::test::process_temp_path("bipo_mesh_cells_test").replace_extension(".vtu");
  write_vtu(file, mesh.nodes, volume_cells(mesh), {}, {});
  vtkNew<vtkXMLUnstructuredGridReader> reader;
  reader->SetFileName(file.c_str());
  reader->Update();
  std::filesystem::remove(file);
  vtkUnstructuredGrid* grid = reader->GetOutput();
  ASSERT_EQ(grid->GetNumberOfCells(), 4);
  const int expected[4] = {VTK_HEXAHEDRON, VTK_WEDGE, VTK_WEDGE, VTK_TETRA};
  for (vtkIdType c = 0; c < 4; ++c) {
    EXPECT_EQ(grid->GetCellType(c), expected[c]) << c;
    vtkCell* cell = grid->GetCell(c);
    std::vector<Eigen::Vector3d> x;
    for (int a = 0; a < static_cast<int>(cell->GetNumberOfPoints()); ++a) {
      double p[3];
      grid->GetPoint(cell->GetPointId(a), p);
      x.emplace_back(p[0], p[1], p[2]);
    }
    EXPECT_TRUE(vtk_oriented(expected[c], x)) << "cell " << c;
  }
  // Gmsh's prism order taken as VTK's would be inverted (the base's normal
  // points into the cell): the reason for the permutation.
  std::vector<Eigen::Vector3d> gmsh_order;
  for (const int node : mesh.wedges[0]) gmsh_order.push_back(mesh.nodes[node]);
  EXPECT_FALSE(vtk_oriented(VTK_WEDGE, gmsh_order));
}

TEST(MeshCells, FaceCellsAreQuadsThenTriangles) {
  const MixedCells cells = face_cells({{0, 1, 2, 3}}, {{4, 5, 6}, {6, 5, 7}});
  ASSERT_EQ(cells.types.size(), 3u);
  EXPECT_EQ(cells.types[0], VtkCellType::quad);
  EXPECT_EQ(cells.types[2], VtkCellType::triangle);
  EXPECT_EQ(cells.offsets, (std::vector<int>{0, 4, 7, 10}));
  EXPECT_EQ(cells.connectivity, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 6, 5, 7}));
}

}  // namespace
}  // namespace bipo
