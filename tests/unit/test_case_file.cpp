// Case-file reader: a full valid case read to the right values, and one test
// per error kind, each checking that the message names the file, the key path
// and the line.
#include <gtest/gtest.h>

#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "../process_temp_path.hpp"
#include "core/errors.hpp"
#include "io/case_file.hpp"

namespace fs = std::filesystem;

namespace {

class CaseFile : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = bipo::test::process_temp_path("bipo_case_" + std::string(info->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "cases");
    fs::create_directories(dir_ / "meshes");
    std::ofstream(dir_ / "meshes" / "punch.msh") << "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& yaml, const std::string& name = "case.yaml") {
    const fs::path p = dir_ / "cases" / name;
    std::ofstream(p) << yaml;
    return p;
  }

  /// 1-based line of the first line of `yaml` containing `marker`.
  static int line_of(const std::string& yaml, const std::string& marker) {
    const auto pos = yaml.find(marker);
    EXPECT_NE(pos, std::string::npos) << marker;
    return 1 +
           static_cast<int>(std::count(yaml.begin(), yaml.begin() + static_cast<long>(pos), '\n'));
  }

  /// Reads `yaml` expecting an InputError "<file>:<line>: <path>: ..." that
  /// also contains `detail`.
  void expect_error(const std::string& yaml, const std::string& path, int line,
                    const std::string& detail) {
    const fs::path file = write(yaml);
    try {
      (void)bipo::read_case(file);
      ADD_FAILURE() << "no error for " << path;
    } catch (const bipo::InputError& e) {
      const std::string msg = e.what();
      const std::string prefix = file.string() + ":" + std::to_string(line) + ": " + path + ": ";
      EXPECT_EQ(msg.rfind(prefix, 0), 0u) << "message: " << msg << "\nexpected prefix: " << prefix;
      EXPECT_NE(msg.find(detail), std::string::npos)
          << "message: " << msg << "\nexpected: " << detail;
    }
  }

  fs::path dir_;
};

const std::string kHead =
    "mesh: {cylinder: {}}\n"
    "material: {young: 210000, poisson: 0.3}\n"
    "load_program: [{to: 1, increments: 5}]\n";

const std::string kFull = R"(title: "Punch A"
mesh:
  file: ../meshes/punch.msh
material: {young: 210000, poisson: 0.3}
load_program:
  - {to: 1.0, increments: 5}
  - repeat: 2
    segments:
      - {to: 0.5, increments: 10}
      - {to: 1.0, increments: 5}
boundary_conditions:
  - set: top
    displacement: {x: 0, y: 0, z: -0.1}
  - set: side
    displacement: {z: 0.5}
    program: [{to: 1, increments: 35}]
loads:
  - {set: top, force_per_node: [0, 0, -10]}
contact:
  - name: floor
    set: bottom
    plane: {point: [0, 0, 0], normal: [0, 0, 2]}
    friction: {mu1: 0.3, mu2: 0.15, p1: 0.05, p2: 0.2}
    direction: {angle: 90}
    rho: 1000
    motion: {displacement: [0.01, 0, 0], program: [{to: -1, increments: 35}]}
  - set: wall
    plane: {point: [0, 0, 1], normal: [-3, 0, 0]}
    friction: {mu: 0.2}
    direction: {vector: [1, 1, 0]}
    rho: auto
  - set: lid
    plane: {point: [0, 0, 1], normal: [0, 0, -1]}
    friction: {mu: 0}
probes:
  - {name: P, point: [5, 0, 0], point_p: true}
  - {name: Q, point: [0, 5, 0], set: other}
solver: {force_tolerance: 1e-8, law_tolerance: 1e-9, max_iterations: 500, max_cuts: 2,
         blas_threads: 2, contact_solver: sparse}
output: {directory: ../results/punch_A, fields: [displacement, contact], every: 2, vtk: false}
)";

}  // namespace

TEST_F(CaseFile, FullCaseReadToTheRightValues) {
  const fs::path file = write(kFull);
  const bipo::Case c = bipo::read_case(file);
  const fs::path root = fs::absolute(dir_).lexically_normal();

  EXPECT_EQ(c.title, "Punch A");
  EXPECT_EQ(c.source.string(), (root / "cases" / "case.yaml").string());
  ASSERT_TRUE(c.mesh.file.has_value());
  EXPECT_FALSE(c.mesh.cylinder.has_value());
  EXPECT_EQ(c.mesh.file->string(), (root / "meshes" / "punch.msh").string());
  EXPECT_EQ(c.material.young, 210000.0);
  EXPECT_EQ(c.material.poisson, 0.3);

  // Program: 5 up, then two cycles of (10 down to 0.5, 5 up to 1).
  const bipo::LoadProgram& p = c.program;
  ASSERT_EQ(p.segments.size(), 5u);
  EXPECT_EQ(p.n_increments(), 35);
  EXPECT_EQ(p.n_cycles(), 2);
  EXPECT_DOUBLE_EQ(p.factor(0), 0.0);
  EXPECT_DOUBLE_EQ(p.factor(1), 0.2);
  EXPECT_DOUBLE_EQ(p.factor(2.5), 0.5);
  EXPECT_DOUBLE_EQ(p.factor(5), 1.0);
  EXPECT_DOUBLE_EQ(p.factor(10), 0.75);
  EXPECT_DOUBLE_EQ(p.factor(15), 0.5);
  EXPECT_DOUBLE_EQ(p.factor(17.5), 0.75);
  EXPECT_DOUBLE_EQ(p.factor(20), 1.0);
  EXPECT_DOUBLE_EQ(p.factor(30), 0.5);
  EXPECT_DOUBLE_EQ(p.factor(35), 1.0);
  EXPECT_THROW((void)p.factor(35.5), std::out_of_range);
  EXPECT_THROW((void)p.factor(-1), std::out_of_range);
  EXPECT_EQ(p.cycle(0), 0);
  EXPECT_EQ(p.cycle(5), 0);
  EXPECT_EQ(p.cycle(6), 1);
  EXPECT_EQ(p.cycle(20), 1);
  EXPECT_EQ(p.cycle(21), 2);
  EXPECT_EQ(p.cycle(35), 2);
  EXPECT_THROW((void)p.cycle(36), std::out_of_range);

  ASSERT_EQ(c.dirichlet.size(), 2u);
  EXPECT_EQ(c.dirichlet[0].set, "top");
  EXPECT_EQ(c.dirichlet[0].value[0], 0.0);
  EXPECT_EQ(c.dirichlet[0].value[1], 0.0);
  EXPECT_EQ(c.dirichlet[0].value[2], -0.1);
  EXPECT_FALSE(c.dirichlet[0].program.has_value());
  EXPECT_FALSE(c.dirichlet[1].value[0].has_value());
  EXPECT_FALSE(c.dirichlet[1].value[1].has_value());
  EXPECT_EQ(c.dirichlet[1].value[2], 0.5);
  ASSERT_TRUE(c.dirichlet[1].program.has_value());
  EXPECT_DOUBLE_EQ(c.dirichlet[1].program->factor(7), 0.2);

  ASSERT_EQ(c.loads.size(), 1u);
  EXPECT_EQ(c.loads[0].force_per_node, Eigen::Vector3d(0, 0, -10));

  ASSERT_EQ(c.contacts.size(), 3u);
  const bipo::ContactPlane& floor = c.contacts[0];
  EXPECT_EQ(floor.name, "floor");
  EXPECT_EQ(floor.set, "bottom");
  EXPECT_EQ(floor.normal, Eigen::Vector3d(0, 0, 1));
  // angle 90 about n = z from the x axis: t1 = y, t2 = n x t1 = -x.
  EXPECT_NEAR((floor.direction - Eigen::Vector3d(0, 1, 0)).norm(), 0.0, 1e-15);
  EXPECT_NEAR((floor.normal.cross(floor.direction) - Eigen::Vector3d(-1, 0, 0)).norm(), 0.0, 1e-15);
  EXPECT_EQ(floor.friction.mu1, 0.3);
  EXPECT_EQ(floor.friction.mu2, 0.15);
  EXPECT_EQ(floor.friction.p1, 0.05);
  EXPECT_EQ(floor.friction.p2, 0.2);
  EXPECT_EQ(floor.rho, 1000.0);
  EXPECT_EQ(floor.motion, Eigen::Vector3d(0.01, 0, 0));
  ASSERT_TRUE(floor.motion_program.has_value());
  EXPECT_DOUBLE_EQ(floor.motion_program->factor(35), -1.0);

  const bipo::ContactPlane& wall = c.contacts[1];
  EXPECT_EQ(wall.name, "plane_1");
  EXPECT_EQ(wall.normal, Eigen::Vector3d(-1, 0, 0));
  EXPECT_NEAR((wall.direction - Eigen::Vector3d(0, 1, 0)).norm(), 0.0, 1e-15);  // [1,1,0] projected
  EXPECT_EQ(wall.friction.mu1, 0.2);
  EXPECT_EQ(wall.friction.mu2, 0.2);
  EXPECT_EQ(wall.friction.p1, 0.2);  // associated by default
  EXPECT_EQ(wall.friction.p2, 0.2);
  EXPECT_FALSE(wall.rho.has_value());
  EXPECT_EQ(wall.motion, Eigen::Vector3d::Zero());

  const bipo::ContactPlane& lid = c.contacts[2];
  EXPECT_EQ(lid.name, "plane_2");
  EXPECT_EQ(lid.friction.mu1, 0.0);
  EXPECT_EQ(lid.friction.p2, 0.0);
  EXPECT_EQ(lid.direction, Eigen::Vector3d(1, 0, 0));  // default: angle 0 = global x projected

  ASSERT_EQ(c.probes.size(), 2u);
  EXPECT_EQ(c.probes[0].name, "P");
  EXPECT_EQ(c.probes[0].set, "bottom");  // default: the first contact plane's set
  EXPECT_EQ(c.probes[0].point, Eigen::Vector3d(5, 0, 0));
  EXPECT_EQ(c.probes[1].set, "other");
  EXPECT_EQ(c.probe_p, "P");

  EXPECT_EQ(c.solver.force_tolerance, 1e-8);
  EXPECT_EQ(c.solver.law_tolerance, 1e-9);
  EXPECT_EQ(c.solver.max_iterations, 500);
  EXPECT_EQ(c.solver.max_cuts, 2);
  EXPECT_EQ(c.solver.blas_threads, 2);
  EXPECT_EQ(c.solver.contact_solver, bipo::ContactSolverChoice::sparse);

  EXPECT_EQ(c.output.directory.string(), (root / "results" / "punch_A").string());
  EXPECT_EQ(c.output.fields, (std::vector<std::string>{"displacement", "contact"}));
  EXPECT_EQ(c.output.every, 2);
  EXPECT_FALSE(c.output.vtk);
}

TEST_F(CaseFile, DefaultsOfAMinimalCase) {
  const bipo::Case c = bipo::read_case(write(kHead, "punch_min.yaml"));
  ASSERT_TRUE(c.mesh.cylinder.has_value());
  EXPECT_EQ(c.mesh.cylinder->radius, 10.0);
  EXPECT_EQ(c.mesh.cylinder->core, 8);
  EXPECT_EQ(c.mesh.cylinder->layers, 4);
  EXPECT_EQ(c.mesh.cylinder->rim_grading, 1.0);
  EXPECT_EQ(c.mesh.cylinder->bottom_grading, 1.0);
  EXPECT_TRUE(c.dirichlet.empty());
  EXPECT_TRUE(c.contacts.empty());
  EXPECT_TRUE(c.probe_p.empty());
  EXPECT_EQ(c.program.n_cycles(), 0);
  EXPECT_EQ(c.solver.max_iterations, 10000);
  EXPECT_FALSE(c.solver.blas_threads.has_value());  // auto
  EXPECT_EQ(c.solver.contact_solver, bipo::ContactSolverChoice::automatic);
  EXPECT_EQ(c.output.directory.string(),
            (fs::current_path() / "results" / "punch_min").lexically_normal().string());
  EXPECT_EQ(c.output.fields.size(), 5u);
  EXPECT_EQ(c.output.every, 1);
  EXPECT_TRUE(c.output.vtk);
}

TEST_F(CaseFile, DirectionAngleReference) {
  // n parallel to x: angle 0 is global y; angle 90 is n x y = z.
  const std::string yaml =
      kHead +
      "contact:\n"
      "  - {set: s, plane: {point: [0,0,0], normal: [1,0,0]}, friction: {mu: 0.1}}\n"
      "  - {set: s, plane: {point: [0,0,0], normal: [1,0,0]}, friction: {mu: 0.1},"
      " direction: {angle: 90}}\n"
      "  - {set: s, plane: {point: [0,0,0], normal: [0,1,1]}, friction: {mu: 0.1},"
      " direction: {angle: 180}}\n";
  const bipo::Case c = bipo::read_case(write(yaml));
  EXPECT_NEAR((c.contacts[0].direction - Eigen::Vector3d(0, 1, 0)).norm(), 0.0, 1e-15);
  EXPECT_NEAR((c.contacts[1].direction - Eigen::Vector3d(0, 0, 1)).norm(), 0.0, 1e-15);
  EXPECT_NEAR((c.contacts[2].direction - Eigen::Vector3d(-1, 0, 0)).norm(), 0.0, 1e-15);
  EXPECT_NEAR(c.contacts[2].normal.norm(), 1.0, 1e-15);
}

TEST_F(CaseFile, UnknownKeyAtNestedLevel) {
  const std::string yaml = kHead +
                           "contact:\n"
                           "  - set: bottom\n"
                           "    plane: {point: [0,0,0], normal: [0,0,1]}\n"
                           "    friction: {mu: 0.2, mu3: 0.1}\n";
  expect_error(yaml, "contact[0].friction.mu3", line_of(yaml, "mu3"),
               "unknown key 'mu3'; allowed keys: mu, p, mu1, mu2, p1, p2");
}

TEST_F(CaseFile, UnknownTopLevelKey) {
  const std::string yaml = kHead + "solvr: {max_cuts: 2}\n";
  expect_error(yaml, "solvr", line_of(yaml, "solvr"), "allowed keys: title, mesh, material");
}

TEST_F(CaseFile, WrongType) {
  const std::string yaml =
      "mesh: {cylinder: {}}\nmaterial: {young: stiff, poisson: 0.3}\nload_program: [{to: 1, "
      "increments: 5}]\n";
  expect_error(yaml, "material.young", 2, "expected a number in [1e-6, 1e15], got stiff");

  const std::string yaml2 = kHead + "solver:\n  max_iterations: 10.5\n";
  expect_error(yaml2, "solver.max_iterations", line_of(yaml2, "10.5"),
               "expected an integer in [1, 1000000], got 10.5");

  const std::string yaml3 =
      "mesh: {cylinder: {}}\nmaterial: {young: 1, poisson: 0.3}\nload_program: {to: 1}\n";
  expect_error(yaml3, "load_program", 3, "expected a non-empty list");

  const std::string yaml4 = kHead + "output: {vtk: maybe}\n";
  expect_error(yaml4, "output.vtk", 4, "expected true or false, got maybe");

  const std::string yaml5 = kHead + "solver: {blas_threads: 0}\n";
  expect_error(yaml5, "solver.blas_threads", line_of(yaml5, "blas_threads"),
               "expected auto or an integer in [1, 1024], got 0");

  const std::string yaml6 = kHead + "solver: {contact_solver: iterative}\n";
  expect_error(yaml6, "solver.contact_solver", line_of(yaml6, "contact_solver"),
               "expected auto, dense or sparse, got iterative");
}

TEST_F(CaseFile, MissingRequiredKey) {
  const std::string yaml =
      "mesh: {cylinder: {}}\nmaterial: {young: 210000}\nload_program: [{to: 1, increments: 5}]\n";
  expect_error(yaml, "material.poisson", 2, "missing required key");

  const std::string yaml2 = "mesh: {cylinder: {}}\nmaterial: {young: 210000, poisson: 0.3}\n";
  expect_error(yaml2, "load_program", 1, "missing required key");

  const std::string yaml3 = kHead + "boundary_conditions:\n  - {set: top}\n";
  expect_error(yaml3, "boundary_conditions[0].displacement", 5, "missing required key");
}

TEST_F(CaseFile, YoungModulusNotPositive) {
  const std::string yaml =
      "mesh: {cylinder: {}}\nmaterial: {young: 0, poisson: 0.3}\nload_program: [{to: 1, "
      "increments: 5}]\n";
  expect_error(yaml, "material.young", 2, "expected a number in [1e-6, 1e15], got 0");
  const std::string yaml2 =
      "mesh: {cylinder: {}}\nmaterial: {young: -5, poisson: 0.3}\nload_program: [{to: 1, "
      "increments: 5}]\n";
  expect_error(yaml2, "material.young", 2, "got -5");
}

TEST_F(CaseFile, PoissonOutOfRange) {
  for (const std::string nu : {"0.5", "-1", "0.7", ".nan"}) {
    const std::string yaml = "mesh: {cylinder: {}}\nmaterial:\n  young: 1\n  poisson: " + nu +
                             "\nload_program: [{to: 1, increments: 5}]\n";
    expect_error(yaml, "material.poisson", 4,
                 "expected a number in [-0.99999, 0.49999], got " + nu);
  }
}

TEST_F(CaseFile, BadFriction) {
  const std::string plane =
      "contact:\n  - set: bottom\n    plane: {point: [0,0,0], normal: [0,0,1]}\n";
  const std::string base = kHead + plane;
  const int line = line_of(base, "plane:") + 1;
  expect_error(base + "    friction: {mu: -0.1}\n", "contact[0].friction.mu", line,
               "expected 0 or a number in [1e-6, 1e6], got -0.1");
  expect_error(base + "    friction: {mu1: .nan, mu2: 0.1}\n", "contact[0].friction.mu1", line,
               "expected 0 or a number in [1e-6, 1e6], got .nan");
  expect_error(base + "    friction: {mu1: 0.3, mu2: 0.1, p1: -1, p2: 0.1}\n",
               "contact[0].friction.p1", line, "got -1");
  expect_error(base + "    friction: {mu1: 0.3, mu2: 0.1, p1: 0, p2: 0.1}\n",
               "contact[0].friction.p1", line,
               "expected a number > 0 (the contact has friction), got 0");
  expect_error(base + "    friction: {mu1: 0.3, mu2: 0}\n", "contact[0].friction.mu2", line,
               "both > 0 (or both 0: frictionless)");
  expect_error(base + "    friction: {mu: 0.3, mu2: 0.1}\n", "contact[0].friction", line,
               "got keys of both");
  expect_error(base + "    friction: {mu1: 0.3, p1: 0.1}\n", "contact[0].friction.mu2", line,
               "missing required key");
  expect_error(base + "    friction: {mu: 0, p: 0.1}\n", "contact[0].friction.p", line,
               "the contact is frictionless");
  expect_error(base + "    friction: 0.2\n", "contact[0].friction", line, "got 0.2");
}

TEST_F(CaseFile, BadYamlSyntax) {
  const std::string yaml = kHead + "solver: {max_cuts: 2\noutput: {every: 1}\n";
  const fs::path file = write(yaml);
  try {
    (void)bipo::read_case(file);
    FAIL() << "no error";
  } catch (const bipo::InputError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(file.string() + ":", 0), 0u) << msg;
    EXPECT_NE(msg.find("YAML syntax error"), std::string::npos) << msg;
    // The error is found on line 4 or 5 (the unclosed flow map).
    EXPECT_TRUE(msg.find(file.string() + ":4:") == 0 || msg.find(file.string() + ":5:") == 0)
        << msg;
  }
}

TEST_F(CaseFile, MissingFile) {
  const fs::path file = dir_ / "cases" / "nowhere.yaml";
  try {
    (void)bipo::read_case(file);
    FAIL() << "no error";
  } catch (const bipo::InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(file.string()), std::string::npos) << msg;
    EXPECT_NE(msg.find("not found"), std::string::npos) << msg;
  }
}

TEST_F(CaseFile, MissingMeshFile) {
  const std::string yaml =
      "mesh:\n  file: no.msh\nmaterial: {young: 1, poisson: 0.3}\nload_program: [{to: 1, "
      "increments: 5}]\n";
  expect_error(yaml, "mesh.file", 2, "expected an existing mesh file");
}

TEST_F(CaseFile, ZeroNormal) {
  const std::string yaml = kHead +
                           "contact:\n  - set: bottom\n    friction: {mu: 0.2}\n"
                           "    plane:\n      point: [0, 0, 0]\n      normal: [0, 0, 0]\n";
  expect_error(yaml, "contact[0].plane.normal", line_of(yaml, "normal"),
               "expected a non-zero normal");
}

TEST_F(CaseFile, DirectionParallelToNormal) {
  const std::string yaml = kHead +
                           "contact:\n  - set: bottom\n    friction: {mu: 0.2}\n"
                           "    plane: {point: [0, 0, 0], normal: [0, 0, 1]}\n"
                           "    direction:\n      vector: [0, 0, -2]\n";
  expect_error(yaml, "contact[0].direction.vector", line_of(yaml, "vector"),
               "not parallel to the plane's normal");
}

TEST_F(CaseFile, ProgramIncrementsMismatch) {
  const std::string yaml = kHead +
                           "boundary_conditions:\n  - set: top\n    displacement: {z: -0.1}\n"
                           "    program: [{to: 1, increments: 4}]\n";
  expect_error(yaml, "boundary_conditions[0].program", line_of(yaml, "    program: ["),
               "expected 5 increments in total (as load_program), got 4");

  const std::string yaml2 =
      kHead +
      "contact:\n  - set: bottom\n    friction: {mu: 0.2}\n"
      "    plane: {point: [0, 0, 0], normal: [0, 0, 1]}\n"
      "    motion:\n      displacement: [1, 0, 0]\n"
      "      program:\n        - repeat: 2\n          segments: [{to: 1, increments: 3}]\n";
  expect_error(yaml2, "contact[0].motion.program", line_of(yaml2, "- repeat"), "got 6");
}

TEST_F(CaseFile, BadProgramItems) {
  const std::string yaml =
      "mesh: {cylinder: {}}\nmaterial: {young: 1, poisson: 0.3}\n"
      "load_program:\n  - {to: 1, increments: 0}\n";
  expect_error(yaml, "load_program[0].increments", 4, "expected an integer in [1, 1000000], got 0");

  const std::string yaml2 =
      "mesh: {cylinder: {}}\nmaterial: {young: 1, poisson: 0.3}\n"
      "load_program:\n  - repeat: 2\n    segments:\n"
      "      - {repeat: 2, segments: [{to: 1, increments: 1}]}\n";
  expect_error(yaml2, "load_program[0].segments[0].repeat", 6, "cannot be nested");

  const std::string yaml3 =
      "mesh: {cylinder: {}}\nmaterial: {young: 1, poisson: 0.3}\nload_program: []\n";
  expect_error(yaml3, "load_program", 3, "got an empty list");
}

TEST_F(CaseFile, CylinderGradings) {
  const std::string yaml =
      "mesh:\n  cylinder: {core: 4, ring: 4, layers: 2, rim_grading: 1.5, bottom_grading: 2}\n"
      "material: {young: 1, poisson: 0.3}\nload_program: [{to: 1, increments: 1}]\n";
  const bipo::Case c = bipo::read_case(write(yaml));
  ASSERT_TRUE(c.mesh.cylinder.has_value());
  EXPECT_EQ(c.mesh.cylinder->rim_grading, 1.5);
  EXPECT_EQ(c.mesh.cylinder->bottom_grading, 2.0);
  EXPECT_EQ(c.mesh.cylinder->core, 4);

  const std::string tail =
      "material: {young: 1, poisson: 0.3}\nload_program: [{to: 1, increments: 1}]\n";
  expect_error("mesh:\n  cylinder: {rim_grading: 0.5}\n" + tail, "mesh.cylinder.rim_grading", 2,
               "expected a number in [1, 10], got 0.5");
  expect_error("mesh:\n  cylinder: {rim_grading: -2}\n" + tail, "mesh.cylinder.rim_grading", 2,
               "expected a number in [1, 10], got -2");
  expect_error("mesh:\n  cylinder:\n    bottom_grading: .inf\n" + tail,
               "mesh.cylinder.bottom_grading", 3, "expected a number in [1, 10], got .inf");
  expect_error("mesh:\n  cylinder: {bottom_grading: .nan}\n" + tail, "mesh.cylinder.bottom_grading",
               2, "expected a number in [1, 10], got .nan");
  expect_error("mesh:\n  cylinder: {bottom_grading: steep}\n" + tail,
               "mesh.cylinder.bottom_grading", 2, "expected a number in [1, 10], got steep");
  expect_error("mesh:\n  cylinder: {grading: 2}\n" + tail, "mesh.cylinder.grading", 2,
               "allowed keys: radius, height, core, ring, layers, rim_grading, bottom_grading, "
               "sector");
}

TEST_F(CaseFile, CylinderSector) {
  const std::string tail =
      "material: {young: 1, poisson: 0.3}\nload_program: [{to: 1, increments: 1}]\n";
  const bipo::Case whole = bipo::read_case(write("mesh:\n  cylinder: {core: 4}\n" + tail));
  EXPECT_EQ(whole.mesh.cylinder->sector, bipo::CylinderParams::Sector::full);
  const bipo::Case full =
      bipo::read_case(write("mesh:\n  cylinder: {core: 4, sector: full}\n" + tail));
  EXPECT_EQ(full.mesh.cylinder->sector, bipo::CylinderParams::Sector::full);
  const bipo::Case quarter =
      bipo::read_case(write("mesh:\n  cylinder: {sector: quarter, core: 6}\n" + tail));
  EXPECT_EQ(quarter.mesh.cylinder->sector, bipo::CylinderParams::Sector::quarter);
  EXPECT_EQ(quarter.mesh.cylinder->core, 6);
  expect_error("mesh:\n  cylinder: {sector: half}\n" + tail, "mesh.cylinder.sector", 2,
               "expected full or quarter, got half");
  expect_error("mesh:\n  cylinder:\n    core: 5\n    sector: quarter\n" + tail,
               "mesh.cylinder.sector", 4,
               "a quarter sector needs an even core (grid lines on the axes), got core 5");
}

TEST_F(CaseFile, OtherRangeAndConsistencyErrors) {
  expect_error("mesh: {cylinder: {core: 0}}\n", "mesh.cylinder.core", 1,
               "expected an integer in [1, 10000], got 0");
  expect_error("mesh: {cylinder: {}, file: a.msh}\n", "mesh", 1,
               "exactly one of the keys file, cylinder");
  expect_error(kHead + "output: {fields: [displacement, strain]}\n", "output.fields[1]", 4,
               "got strain");
  expect_error(kHead + "solver: {force_tolerance: 0}\n", "solver.force_tolerance", 4,
               "expected a number in [1e-15, 1], got 0");
  expect_error(kHead + "material: {young: 2, poisson: 0.3}\n", "material", 4,
               "duplicate key 'material'");
  const std::string c =
      "contact:\n  - {set: b, plane: {point: [0,0,0], normal: [0,0,1]}, friction: {mu: 0.1}, ";
  expect_error(kHead + c + "rho: fast}\n", "contact[0].rho", 5,
               "expected auto or a number in [1e-30, 1e30], got fast");
  expect_error(kHead + c + "rho: 1}\n" + "probes:\n  - {name: A, point: [0,0,0], point_p: true}\n" +
                   "  - {name: B, point: [1,0,0], point_p: yes}\n",
               "probes[1].point_p", 8, "at most one probe");
  expect_error(kHead + "probes:\n  - {name: A, point: [0,0]}\n", "probes[0].point", 5,
               "expected a list of 3 numbers [x, y, z], got a list of 2 items");
  expect_error(kHead + "probes:\n  - {name: A, point: [0,0,0]}\n", "probes[0].set", 5,
               "no contact plane");
  expect_error(kHead + "boundary_conditions:\n  - {set: top, displacement: {}}\n",
               "boundary_conditions[0].displacement", 5, "at least one of the keys x, y, z");
  expect_error(kHead + "title:\n", "title", 4, "expected a string, got nothing (null)");
  expect_error(kHead.substr(0, kHead.find("load_program")) +
                   "load_program: [{repeat: 100000, segments: [{to: 1, increments: 1000}]}]\n",
               "load_program[0]", 3, "expected at most 1000000 increments");
  expect_error("- 1\n- 2\n", "(top level)", 1, "expected a map of case keys, got a list");
  // The second document starts at its "---" marker.
  expect_error(kHead + "---\ntitle: b\n", "(top level)", 4,
               "a single YAML document, got a second one starting on line 4");
}

TEST_F(CaseFile, DocumentedExamplesAreValid) {
  // Every ```yaml block under an "## Example" heading of docs/case-file.md is a
  // complete case that must read without error.
  std::ifstream in(fs::path(BIPO_SOURCE_DIR) / "docs" / "case-file.md");
  ASSERT_TRUE(in) << "docs/case-file.md not found";
  std::vector<std::string> examples;
  std::string line, block;
  bool in_example = false, in_block = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) in_example = line.rfind("## Example", 0) == 0;
    if (in_example && line == "```yaml") {
      in_block = true;
      block.clear();
    } else if (in_block && line == "```") {
      in_block = false;
      examples.push_back(block);
    } else if (in_block) {
      block += line + "\n";
    }
  }
  ASSERT_EQ(examples.size(), 2u);
  std::ofstream(dir_ / "meshes" / "example2.msh") << "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n";
  const bipo::Case a = bipo::read_case(write(examples[0], "punch_A.yaml"));
  EXPECT_EQ(a.program.n_increments(), 95);
  EXPECT_EQ(a.program.n_cycles(), 6);
  EXPECT_EQ(a.program.cycle(5), 0);
  EXPECT_EQ(a.program.cycle(95), 6);
  EXPECT_DOUBLE_EQ(a.program.factor(5), 1.0);
  EXPECT_DOUBLE_EQ(a.program.factor(15), 0.5);
  EXPECT_EQ(a.probe_p, "P");
  EXPECT_EQ(a.probes[0].set, "bottom");
  const bipo::Case b = bipo::read_case(write(examples[1], "fretting.yaml"));
  EXPECT_EQ(b.program.n_increments(), 60);
  ASSERT_TRUE(b.contacts[0].motion_program.has_value());
  EXPECT_EQ(b.contacts[0].motion_program->n_cycles(), 5);
  EXPECT_DOUBLE_EQ(b.contacts[0].motion_program->factor(12), 1.0);
  EXPECT_DOUBLE_EQ(b.contacts[0].motion_program->factor(17), -1.0);
  const double s = std::sqrt(0.5);
  EXPECT_NEAR((b.contacts[0].direction - Eigen::Vector3d(s, s, 0)).norm(), 0.0, 1e-15);
  EXPECT_EQ(b.contacts[0].friction.p1, 0.4);
}

TEST_F(CaseFile, VtuCompressionKey) {
  EXPECT_EQ(bipo::read_case(write(kHead)).output.vtu_compression,
            bipo::VtuCompressionChoice::zlib);  // the default that ParaView and meshio read
  const std::pair<const char*, bipo::VtuCompressionChoice> choices[] = {
      {"zlib", bipo::VtuCompressionChoice::zlib},
      {"lz4", bipo::VtuCompressionChoice::lz4},
      {"lzma", bipo::VtuCompressionChoice::lzma},
      {"none", bipo::VtuCompressionChoice::none}};
  for (const auto& [name, choice] : choices) {
    const std::string yaml = kHead + "output: {vtu_compression: " + name + "}\n";
    EXPECT_EQ(bipo::read_case(write(yaml)).output.vtu_compression, choice) << name;
  }
  expect_error(kHead + "output:\n  vtu_compression: gzip\n", "output.vtu_compression", 5,
               "expected zlib, lz4, lzma or none, got gzip");
  expect_error(kHead + "output:\n  vtu_compression: ZLIB\n", "output.vtu_compression", 5,
               "expected zlib, lz4, lzma or none, got ZLIB");
  expect_error(kHead + "output:\n  vtu_compression: [zlib]\n", "output.vtu_compression", 5,
               "expected zlib, lz4, lzma or none");
  expect_error(kHead + "output:\n  vtu_compression:\n", "output.vtu_compression", 5,
               "expected zlib, lz4, lzma or none");
}

TEST_F(CaseFile, CycleEveryKey) {
  EXPECT_EQ(bipo::read_case(write(kHead)).output.cycle_every, 1);  // every cycle's maps
  EXPECT_EQ(bipo::read_case(write(kHead + "output: {cycle_every: 100}\n")).output.cycle_every, 100);
  expect_error(kHead + "output:\n  cycle_every: 0\n", "output.cycle_every", 5,
               "expected an integer in [1, 1000000], got 0");
  expect_error(kHead + "output:\n  cycle_every: 2.5\n", "output.cycle_every", 5, "2.5");
}
