// Benchmark of whole fretting runs (issue 15, item 7: 1000 fretting cycles
// of the seed-sized sphere-on-flat case, 20 increments per cycle, in under a
// minute): runs `bipo run` on cases/bench_fretting_sphere_1000.yaml (325
// contact nodes) as a user does, each variant of the output options in turn,
// repetition by repetition (interleaved: the machine is shared), and prints
// per variant the median wall time of the whole process, the medians of the
// run's own split of it (summary.json `seconds`: set-up, linear solves,
// contact iterations, output) and the ratio to the first variant's median.
//
//   bench_fretting_run [--reps N] [--cycles C] [--only NAME] [--keep DIR]
//
// --cycles C runs C cycles instead of 1000 (the hold and the repeat count
// set with --set); --only runs one variant; --keep writes the results under
// DIR (default: a temporary folder, removed at the end).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench_support.hpp"

namespace {

namespace fs = std::filesystem;
using namespace bench;  // NOLINT: the shared helpers of bench_support.hpp

struct Options {
  int reps = 3;
  int cycles = 1000;
  std::string only;
  std::string keep;
};

/// One way of running the case: the extra `--set` arguments of its command.
struct Variant {
  std::string name;
  std::string sets;
};

const std::vector<Variant>& variants() {
  static const std::vector<Variant> list{
      {"default outputs (maps at every extreme)", ""},
      {"maps every 10 cycles", "--set output.cycle_every=10"},
      {"maps of cycles 0, 1 and the last", "--set output.cycle_every=1000000"},
  };
  return list;
}

struct RunTimes {
  std::vector<double> wall, setup, linear, contact, output;
};

void usage() {
  std::fprintf(stderr,
               "usage: bench_fretting_run [--reps N] [--cycles C] [--only NAME] [--keep DIR]\n");
}

Options parse(int argc, char** argv) {
  Options o;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--reps")
      o.reps = std::atoi(option_value(argc, argv, a, usage));
    else if (arg == "--cycles")
      o.cycles = std::atoi(option_value(argc, argv, a, usage));
    else if (arg == "--only")
      o.only = option_value(argc, argv, a, usage);
    else if (arg == "--keep")
      o.keep = option_value(argc, argv, a, usage);
    else {
      usage();
      std::exit(2);
    }
  }
  if (o.reps < 1 || o.cycles < 1) {
    usage();
    std::exit(2);
  }
  return o;
}

/// Runs the case once; returns false if bipo failed.
bool run_once(const Options& o, const Variant& v, const fs::path& out, RunTimes& times) {
  const std::string case_file =
      std::string(BIPO_SOURCE_DIR) + "/cases/bench_fretting_sphere_1000.yaml";
  std::string command = std::string("'") + BIPO_EXE + "' run -q -o '" + out.string() + "' '" +
                        case_file + "' " + v.sets;
  if (o.cycles != 1000)
    command += " --set 'load_program[1].increments=" + std::to_string(20 * o.cycles) +
               "' --set 'contact[0].motion.program[1].repeat=" + std::to_string(o.cycles) + "'";
  const auto start = Clock::now();
  if (std::system(command.c_str()) != 0) return false;
  times.wall.push_back(seconds_since(start));
  std::ifstream in(out / "summary.json");
  const nlohmann::json s = nlohmann::json::parse(in)["seconds"];
  times.setup.push_back(s["assembly"].get<double>() + s["factorization"].get<double>() +
                        s["delassus"].get<double>());
  times.linear.push_back(s["linear_solves"].get<double>());
  times.contact.push_back(s["contact_sweeps"].get<double>());
  times.output.push_back(s["output"].get<double>());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const fs::path root =
      o.keep.empty() ? fs::temp_directory_path() / "bipo_bench_fretting_run" : fs::path(o.keep);
  fs::create_directories(root);
  std::printf("fretting runs: %d cycles of 20 increments, 325 contact nodes, %d reps\n", o.cycles,
              o.reps);
  std::printf("load average at start: %s\n", load_average().c_str());
  std::map<std::string, RunTimes> times;
  for (int rep = 0; rep < o.reps; ++rep)
    for (std::size_t i = 0; i < variants().size(); ++i) {
      const Variant& v = variants()[i];
      if (!o.only.empty() && v.name.find(o.only) == std::string::npos) continue;
      if (!run_once(o, v, root / ("variant_" + std::to_string(i)), times[v.name])) {
        std::fprintf(stderr, "bipo run failed (%s)\n", v.name.c_str());
        return 1;
      }
    }
  std::printf("load average at end: %s\n\n", load_average().c_str());
  std::printf("%-42s %9s %7s %8s %8s %8s %8s\n", "variant (medians, s)", "wall", "ratio", "set-up",
              "linear", "contact", "output");
  double first = 0.0;
  for (const Variant& v : variants()) {
    if (!times.count(v.name)) continue;
    const RunTimes& t = times[v.name];
    const double wall = median(t.wall);
    if (first == 0.0) first = wall;
    std::printf("%-42s %9.2f %7.3f %8.3f %8.2f %8.2f %8.2f\n", v.name.c_str(), wall, wall / first,
                median(t.setup), median(t.linear), median(t.contact), median(t.output));
  }
  if (o.keep.empty()) fs::remove_all(root);
  return 0;
}
