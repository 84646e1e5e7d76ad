// Checks of the punch cases that assert physics and properties of the runs
// (issue 5): symmetry of A (axisymmetric up to the O-grid) and of B and C
// (mirror symmetric), the stick zone at the centre during the first loading,
// the law certificate of every converged increment, determinism, and
// `bipo check` on every shipped case.
#include "punch_support.hpp"

namespace {

using namespace bipo_regression;

const std::vector<std::string> all_cases{"punch_A", "punch_B", "punch_C"};

/// |sum r_t| <= `relative` x the normal force at every step up to `last_step`.
void expect_zero_tangential_force(const fs::path& results, const std::string& case_name,
                                  int last_step = 1 << 30, double relative = 1e-8) {
  const Table h = read_csv(results / "history.csv");
  for (std::size_t i = 0; i < h.rows() && static_cast<int>(i) < last_step; ++i) {
    const double n = h["normal_force"][i];
    EXPECT_LE(std::abs(h["tangential_force_t1"][i]), relative * n)
        << case_name << " step " << i + 1;
    EXPECT_LE(std::abs(h["tangential_force_t2"][i]), relative * n)
        << case_name << " step " << i + 1;
  }
}

/// The map is invariant under (x, y) -> (a x + b y, c x + d y): f maps to f,
/// the accumulated slip maps like a vector. Tolerance `relative` (default
/// 1e-6; the solver converges to ~1e-10) of the largest r_n and of the
/// largest slip.
void expect_map_symmetry(const Table& map, double a, double b, double c, double d,
                         const std::string& what, double relative = 1e-6) {
  const double rn = max_abs(map["r_n"]);
  double slip_max = 0.0;
  for (std::size_t i = 0; i < map.rows(); ++i)
    slip_max =
        std::max(slip_max, std::hypot(map["accumulated_slip_x"][i], map["accumulated_slip_y"][i]));
  for (std::size_t i = 0; i < map.rows(); ++i) {
    const double x = map["x"][i], y = map["y"][i];
    const int j = node_at(map, a * x + b * y, c * x + d * y);
    ASSERT_GE(j, 0) << what << ": no node at the image of (" << x << ", " << y << ")";
    const auto J = static_cast<std::size_t>(j);
    EXPECT_NEAR(map["f"][J], map["f"][i], relative * rn)
        << what << " at (" << x << ", " << y << ")";
    const double sx = map["accumulated_slip_x"][i], sy = map["accumulated_slip_y"][i];
    EXPECT_NEAR(map["accumulated_slip_x"][J], a * sx + b * sy, relative * slip_max) << what;
    EXPECT_NEAR(map["accumulated_slip_y"][J], c * sx + d * sy, relative * slip_max) << what;
  }
}

TEST(PunchSymmetry, CaseAIsAxisymmetricOnTheOGrid) {
  const fs::path results = cached_results("punch_A");
  expect_zero_tangential_force(results, "punch_A");
  const auto maps = segment_maps(results);
  ASSERT_EQ(maps.size(), 13u);  // first loading + 6 x (unloading, reloading)
  for (const auto& [step, map] : maps) {
    const std::string what = "punch_A map of step " + std::to_string(step);
    // Rotation by 90 degrees (and hence 180, 270).
    expect_map_symmetry(map, 0, -1, 1, 0, what + " rotated by 90 degrees");
    // Radial slip: exactly radial on the symmetry lines of the O-grid (axes,
    // diagonals); elsewhere the circumferential component is a discretization
    // effect of the O-grid (not axisymmetric), measured at 0.1 % of the
    // largest slip on the seed mesh; bound 0.5 %.
    double slip_max = 0.0;
    for (std::size_t i = 0; i < map.rows(); ++i)
      slip_max = std::max(slip_max,
                          std::hypot(map["accumulated_slip_x"][i], map["accumulated_slip_y"][i]));
    for (std::size_t i = 0; i < map.rows(); ++i) {
      const double x = map["x"][i], y = map["y"][i], r = std::hypot(x, y);
      if (r < 1e-9) continue;
      const double circumferential =
          (x * map["accumulated_slip_y"][i] - y * map["accumulated_slip_x"][i]) / r;
      const bool on_symmetry_line =
          std::abs(x) < 1e-9 || std::abs(y) < 1e-9 || std::abs(std::abs(x) - std::abs(y)) < 1e-9;
      EXPECT_LE(std::abs(circumferential), (on_symmetry_line ? 1e-7 : 5e-3) * slip_max)
          << what << " at (" << x << ", " << y << ")";
    }
  }
}

TEST(PunchSymmetry, CaseBIsMirrorSymmetric) {
  const fs::path results = cached_results("punch_B");
  expect_zero_tangential_force(results, "punch_B");
  const auto maps = segment_maps(results);
  ASSERT_EQ(maps.size(), 13u);
  for (const auto& [step, map] : maps) {
    const std::string what = "punch_B map of step " + std::to_string(step);
    expect_map_symmetry(map, -1, 0, 0, 1, what + " under x -> -x");
    expect_map_symmetry(map, 1, 0, 0, -1, what + " under y -> -y");
  }
}

// Case C (non-associated) is mirror symmetric to 1e-8 up to increment 59.
// At increment 60 (end of the unloading of cycle 4) the solver converges
// (certificate ~1e-15, equilibrium to tolerance) to a state that is NOT
// mirror symmetric: f differs by up to 1.2 % of the largest r_n between
// mirror nodes, 4 nodes change state, the total tangential force becomes
// ~3e-6 of the normal force. The law certificate proves the state is a
// solution of the discrete incremental problem, so with the non-associated
// law that problem has more than one solution there (the symmetric one is
// not the one found). docs/punch.md discusses it. This test pins the finding:
// strict symmetry before, the measured size of the break after. If a change
// of the solver restores the symmetry, tighten the second part.
TEST(PunchSymmetry, CaseCIsMirrorSymmetricUntilItsSymmetryBreakAtIncrement60) {
  const fs::path results = cached_results("punch_C");
  expect_zero_tangential_force(results, "punch_C", 59);
  expect_zero_tangential_force(results, "punch_C", 95, 1e-5);
  const auto maps = segment_maps(results);
  ASSERT_EQ(maps.size(), 13u);
  for (const auto& [step, map] : maps) {
    const std::string what = "punch_C map of step " + std::to_string(step);
    const double relative = step < 60 ? 1e-6 : 2.5e-2;
    expect_map_symmetry(map, -1, 0, 0, 1, what + " under x -> -x", relative);
    expect_map_symmetry(map, 1, 0, 0, -1, what + " under y -> -y", relative);
  }
}

TEST(PunchChecks, StickZoneContainsTheCentreDuringTheFirstLoading) {
  for (const auto& case_name : all_cases) {
    const Table centre = read_csv(cached_results(case_name) / "probes" / "centre.csv");
    int first_loading_steps = 0;
    for (std::size_t i = 0; i < centre.rows(); ++i) {
      if (centre["cycle"][i] != 0.0) continue;
      ++first_loading_steps;
      EXPECT_EQ(centre["state"][i], 1.0) << case_name << ": centre not stuck at step " << i + 1;
    }
    EXPECT_EQ(first_loading_steps, 5) << case_name;
  }
}

TEST(PunchChecks, EveryIncrementSatisfiesTheLawCertificate) {
  const double law_tolerance = 1e-10;  // the cases use the default solver.law_tolerance
  for (const auto& case_name : all_cases) {
    const Table h = read_csv(cached_results(case_name) / "history.csv");
    EXPECT_EQ(h.rows(), 95u) << case_name;
    for (std::size_t i = 0; i < h.rows(); ++i)
      EXPECT_LE(h["scaled_certificate"][i], 100 * law_tolerance) << case_name << " step " << i + 1;
  }
}

/// The shipped case on the quarter x, y >= 0 of the same mesh (generated:
/// the seed mesh file is the generator's 8/8/4 O-grid, PunchMesh test),
/// held by the symmetry conditions, run into a fresh folder.
fs::path run_quarter(const std::string& case_name) {
  const fs::path dir =
      fs::temp_directory_path() / ("bipo_quarter_" + case_name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  std::string text = case_copy_text(case_name, dir / "results");
  const auto replace_line = [&](const std::string& start, const std::string& by) {
    const auto at = text.find(start);
    if (at == std::string::npos) throw std::runtime_error(case_name + ": no line " + start);
    text.replace(at, text.find('\n', at) - at, by);
  };
  replace_line("file: ", "cylinder: {core: 8, ring: 8, layers: 4, sector: quarter}");
  replace_line("  - {set: top,",
               "  - {set: top, displacement: {x: 0, y: 0, z: -0.1}}\n"
               "  - {set: symmetry_x0, displacement: {x: 0}}\n"
               "  - {set: symmetry_y0, displacement: {y: 0}}");
  if (run_text_into(text, dir, "case.yaml") != 0)
    throw std::runtime_error("bipo failed on the quarter of " + case_name);
  return dir;
}

// The cases are mirror symmetric (above), so the quarter model with the
// symmetry conditions must give a quarter of every total: normal force,
// dissipation of every step and cycle, stick/slip areas, up to round-off
// (the whole model converges to 1e-10). For case C only up to increment 59:
// there the whole model leaves the symmetric solution and the quarter,
// which cannot, keeps it (the cycle-4 dissipations then differ by 0.1 %).
TEST(PunchQuarterModel, FourTimesTheQuarterIsTheWholePunch) {
  for (const auto& case_name : all_cases) {
    const fs::path dir = run_quarter(case_name);
    // 13 contact nodes on each symmetry plane (4 core + 1 + 8 ring), each
    // holding one component.
    EXPECT_NE(read_text(dir / "results" / "summary.json").find("\"held_contact_components\": 26"),
              std::string::npos);
    EXPECT_NE(read_text(cached_results(case_name) / "summary.json")
                  .find("\"held_contact_components\": 0"),
              std::string::npos);
    const Table quarter = read_csv(dir / "results" / "history.csv");
    const Table whole = read_csv(cached_results(case_name) / "history.csv");
    ASSERT_EQ(quarter.rows(), whole.rows()) << case_name;
    const std::size_t last = case_name == "punch_C" ? 59 : whole.rows();
    const double n_scale = max_abs(whole["normal_force"]);
    const double d_scale = max_abs(whole["dissipation"]);
    for (std::size_t i = 0; i < last; ++i) {
      EXPECT_NEAR(4 * quarter["normal_force"][i], whole["normal_force"][i], 1e-9 * n_scale)
          << case_name << " step " << i + 1;
      EXPECT_NEAR(4 * quarter["dissipation"][i], whole["dissipation"][i], 1e-8 * d_scale)
          << case_name << " step " << i + 1;
      EXPECT_NEAR(4 * quarter["reaction_top_z"][i], whole["reaction_top_z"][i], 1e-9 * n_scale)
          << case_name << " step " << i + 1;
    }
    const Table quarter_cycles = read_csv(dir / "results" / "cycles.csv");
    const Table whole_cycles = read_csv(cached_results(case_name) / "cycles.csv");
    const std::size_t cycles = case_name == "punch_C" ? 4 : whole_cycles.rows();  // C: 0-3
    for (std::size_t k = 0; k < cycles; ++k)
      for (const std::string column : {"dissipation", "area_stick_end_loading",
                                       "area_slip_end_loading", "area_stick_end_unloading"}) {
        const double reference = whole_cycles[column][k];
        EXPECT_NEAR(4 * quarter_cycles[column][k], reference, 1e-8 * std::abs(reference) + 1e-9)
            << case_name << " cycle " << k << " " << column;
      }
    fs::remove_all(dir);
  }
}

/// history.csv without its wall-clock "seconds" column.
std::string history_without_seconds(const fs::path& file) {
  std::istringstream in(read_text(file));
  std::string line, out;
  while (std::getline(in, line)) out += line.substr(0, line.rfind(',')) + "\n";
  return out;
}

TEST(PunchChecks, RunningACaseTwiceGivesIdenticalResults) {
  for (const auto& case_name : all_cases) {
    const fs::path first = cached_results(case_name);
    const fs::path again = fs::temp_directory_path() /
                           ("bipo_determinism_" + case_name + "_" + std::to_string(::getpid()));
    fs::remove_all(again);
    ASSERT_EQ(run_into(case_name, again), 0) << case_name;
    const fs::path second = again / "results";
    EXPECT_EQ(history_without_seconds(first / "history.csv"),
              history_without_seconds(second / "history.csv"))
        << case_name;
    std::vector<fs::path> files{"cycles.csv"};
    for (const auto& e : fs::directory_iterator(first / "probes"))
      files.push_back(fs::path("probes") / e.path().filename());
    for (const auto& e : fs::directory_iterator(first / "maps"))
      files.push_back(fs::path("maps") / e.path().filename());
    EXPECT_GT(files.size(), 20u);
    for (const auto& f : files)
      EXPECT_EQ(read_text(first / f), read_text(second / f)) << case_name << ": " << f;
    fs::remove_all(again);
  }
}

/// `bipo check` on the shipped cases on the seed mesh (`refined` false) or on
/// a finer mesh (`_refined` and `_converged` files, whose check is slower).
void check_shipped_cases(bool refined) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(source_dir() / "cases")) {
    if (e.path().extension() != ".yaml") continue;
    const std::string stem = e.path().stem().string();
    const bool fine =
        stem.find("_refined") != std::string::npos || stem.find("_converged") != std::string::npos;
    if (fine != refined) continue;
    ++n;
    EXPECT_EQ(run_bipo({"check", e.path().string()}, "/dev/null"), 0) << "bipo check " << e.path();
  }
  EXPECT_GE(n, 3);
}

TEST(PunchChecks, BipoCheckAcceptsEveryShippedCase) {
  check_shipped_cases(false);
}

// Slower (about half a minute per refined case: check_case factorizes and
// condenses the 31512-unknown mesh; about 10 s of CPU per converged case).
TEST(PunchChecks, BipoCheckAcceptsEveryShippedRefinedCase) {
  check_shipped_cases(true);
}

}  // namespace
