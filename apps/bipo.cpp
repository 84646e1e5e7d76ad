// bipo's command line: a thin main that parses arguments, calls src/app, and
// turns errors into a message on stderr and a non-zero exit code.

#include <CLI/CLI.hpp>
#include <iostream>
#include <optional>
#include <vector>

#include "app/allocator.hpp"
#include "app/exit_status.hpp"
#include "app/parallel_run.hpp"
#include "app/run.hpp"
#include "app/sweep.hpp"
#include "core/errors.hpp"
#include "io/case_file.hpp"
#include "io/case_overrides.hpp"
#include "mesh/generate.hpp"
#include "mesh/gmsh_io.hpp"
#include "version.hpp"

namespace {

/// What the command line asked for, as CLI11 fills it.
struct Arguments {
  std::vector<std::string> case_files;  // run
  std::string output_dir;
  bool quiet = false;
  std::string jobs = "1";
  std::string progress = "10";
  std::vector<std::string> sets;    // run, check: --set KEY=VALUE
  std::vector<std::string> sweeps;  // run: --sweep KEY=V1,V2,...
  std::string case_file;            // check
  bipo::CylinderParams cylinder;    // mesh cylinder
  std::string sector = "full";
  std::string mesh_output;
  bool binary = false;
  double format = 4.1;
};

void add_set_option(CLI::App& command, Arguments& a) {
  command
      .add_option("--set", a.sets,
                  "KEY=VALUE: a value in place of the case file's, e.g. "
                  "contact[0].friction.mu=0.25 (repeatable; validated like the file; "
                  "docs/case-file.md)")
      ->allow_extra_args(false);
}

CLI::App* add_run_command(CLI::App& app, Arguments& a) {
  auto* run = app.add_subcommand(
      "run",
      "Run case files and write their results. With several cases, consecutive cases on the same "
      "mesh, material, supports and contact nodes share one set-up (one factorization)");
  run->add_option("cases", a.case_files, "YAML case files (docs/case-file.md)")->required();
  run->add_option("-o,--output", a.output_dir,
                  "Results folder (overrides output.directory; one case file only; relative to "
                  "the working directory)");
  add_set_option(*run, a);
  run->add_option("--sweep", a.sweeps,
                  "KEY=V1,V2,...: run the case once per value, with one shared set-up when the key "
                  "leaves the body alone, each into <results folder>/NNN_<value>, with an "
                  "index.csv (one case file)")
      ->allow_extra_args(false);
  run->add_flag("-q,--quiet", a.quiet, "No progress lines");
  run->add_option("--progress", a.progress,
                  "SECONDS: within an increment, a line on its contact iterations when this "
                  "long has passed since the last line (0: after every Newton step)")
      ->capture_default_str();
  run->add_option("-j,--jobs", a.jobs,
                  "Cases run at once, on as many threads: a number, or auto for the processor "
                  "count (the BLAS then runs on one thread per case)")
      ->capture_default_str();
  return run;
}

CLI::App* add_mesh_cylinder_command(CLI::App& app, Arguments& a) {
  auto* mesh = app.add_subcommand("mesh", "Write a generated mesh to a Gmsh .msh file");
  auto* cylinder = mesh->add_subcommand("cylinder", "The punch cylinder (O-grid, axis z)");
  mesh->require_subcommand(1);
  bipo::CylinderParams& p = a.cylinder;
  cylinder->add_option("--radius", p.radius, "Radius [length]")->capture_default_str();
  cylinder->add_option("--height", p.height, "Height [length]")->capture_default_str();
  cylinder->add_option("--core", p.core, "Elements along a side of the central square")
      ->capture_default_str();
  cylinder->add_option("--ring", p.ring, "Radial elements of each ring block")
      ->capture_default_str();
  cylinder->add_option("--layers", p.layers, "Elements along the axis")->capture_default_str();
  cylinder
      ->add_option("--rim-grading", p.rim_grading,
                   "Grading toward the rim in the ring blocks (>= 1, 1 = uniform)")
      ->capture_default_str();
  cylinder
      ->add_option("--bottom-grading", p.bottom_grading,
                   "Grading of the layers toward z = 0 (>= 1, 1 = uniform)")
      ->capture_default_str();
  cylinder
      ->add_option("--sector", a.sector,
                   "full, or quarter: the part x >= 0, y >= 0 with node sets symmetry_x0 and "
                   "symmetry_y0 (even --core)")
      ->check(CLI::IsMember({"full", "quarter"}))
      ->capture_default_str();
  cylinder->add_option("-o,--output", a.mesh_output, "The .msh file to write")->required();
  cylinder->add_flag("--binary", a.binary, "Binary instead of ASCII");
  cylinder->add_option("--format", a.format, "MSH format version: 4.1 or 2.2")
      ->check(CLI::IsMember({2.2, 4.1}))
      ->capture_default_str();
  return cylinder;
}

/// The --set values, checked (InputError naming the argument otherwise).
std::vector<bipo::CaseOverride> overrides_of(const Arguments& a) {
  std::vector<bipo::CaseOverride> overrides;
  for (const std::string& set : a.sets) overrides.push_back(bipo::parse_override(set, "--set"));
  return overrides;
}

/// Reads every case file before anything runs: an error in any of them
/// stops the command before it writes results. Returns 0, or 2 if any file
/// has an input error, else 1 if any could not be read (a system error);
/// the errors written to `log`.
int read_cases(const Arguments& a, const std::vector<bipo::CaseOverride>& overrides,
               std::vector<bipo::Case>& cases, std::ostream& log) {
  int read_failure = 0;
  std::exception_ptr first_error;
  for (const auto& file : a.case_files) {
    try {
      cases.push_back(bipo::read_case(file, overrides));
    } catch (...) {
      const bipo::ErrorReport report = bipo::report_error(std::current_exception());
      log << report.line << "\n";
      if (!first_error) first_error = std::current_exception();
      if (read_failure != 2) read_failure = report.exit_code;
    }
  }
  // Under mpirun every rank reads the files: a file that one rank cannot
  // read ends the job (docs/parallel.md).
  bipo::agree_on_exit_code(read_failure,
                           first_error ? bipo::report_error(first_error).line : std::string());
  return read_failure;
}

int run_command(const Arguments& a) {
  std::ostream& log = bipo::on_output_rank(std::cerr);
  bipo::RunOptions options;
  // Relative to the working directory, as every path of the command line.
  if (!a.output_dir.empty())
    options.output_directory = std::filesystem::absolute(a.output_dir).lexically_normal();
  options.quiet = a.quiet;
  options.jobs = bipo::parse_jobs(a.jobs);
  options.progress_interval = bipo::parse_progress_interval(a.progress);
  const std::vector<bipo::CaseOverride> overrides = overrides_of(a);
  if (!a.quiet && !overrides.empty()) {
    log << "bipo: in place of the case file's values:";
    for (const auto& o : overrides) log << " " << o.named();
    log << "\n";
  }
  if (!a.sweeps.empty()) {
    if (a.sweeps.size() > 1 || a.case_files.size() > 1)
      throw bipo::InputError("--sweep: expected one --sweep and one case file, got " +
                             std::to_string(a.sweeps.size()) + " and " +
                             std::to_string(a.case_files.size()));
    return bipo::run_sweep(a.case_files.front(), overrides, bipo::parse_sweep(a.sweeps.front()),
                           options, log);
  }
  std::vector<bipo::Case> cases;
  if (const int read_failure = read_cases(a, overrides, cases, log); read_failure != 0)
    return read_failure;
  return bipo::run_cases(cases, options, log);
}

/// Under mpirun, rank 0 alone generates, writes and prints; every rank
/// learns its outcome and exits with its code (docs/parallel.md): ranks
/// writing one file at once could leave it corrupt.
int mesh_cylinder_command(Arguments a) {
  if (a.sector == "quarter") a.cylinder.sector = bipo::CylinderParams::Sector::quarter;
  bipo::write_on_output_rank([&] {
    const bipo::Mesh m = bipo::generate_cylinder(a.cylinder);
    bipo::write_msh(m, a.mesh_output, a.binary, a.format);
    std::cout << "wrote " << a.mesh_output << ": " << m.n_nodes() << " nodes, " << m.n_hexes()
              << " hexahedra, " << m.node_sets.at("bottom").size() << " bottom nodes\n";
  });
  return 0;
}

/// The exit status of `command`, or of the error it throws, written to
/// stderr (by rank 0 alone under mpirun; an error that only this rank may
/// have seen ends the job: app/parallel_run.hpp).
template <typename Command>
int run_reporting_errors(Command&& command) {
  try {
    return command();
  } catch (...) {
    const bipo::ErrorReport report = bipo::report_error(std::current_exception());
    if (bipo::is_distributed() && !bipo::same_on_every_rank(std::current_exception()))
      bipo::abort_job(report.line, report.exit_code);
    // Before the runtime starts, the launcher's rank says who prints.
    if (bipo::is_output_rank() && bipo::launcher_rank() == 0) std::cerr << report.line << "\n";
    return report.exit_code;
  }
}

}  // namespace

int main(int argc, char** argv) {
  bipo::keep_freed_memory_in_heap();
  CLI::App app{
      "bipo: 3D finite-element frictional contact with the bipotential method (orthotropic "
      "Coulomb friction, non-associated sliding rule).\nSee README.md and docs/."};
  app.set_version_flag("--version", std::string("bipo ") + bipo::version_string);
  app.require_subcommand(1);
  Arguments arguments;
  const CLI::App* run = add_run_command(app, arguments);
  auto* check = app.add_subcommand("check", "Validate a case file and its mesh without solving");
  check->add_option("case", arguments.case_file, "YAML case file")->required();
  add_set_option(*check, arguments);
  const CLI::App* mesh_cylinder = add_mesh_cylinder_command(app, arguments);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end parsing with code 0; every other parse error
    // is bad input, and bipo's exit code for input errors is 2 (CLI11's own
    // codes, 105 and so on, are not documented for users). Under mpirun,
    // every rank parses alike and rank 0 alone prints.
    const int code = bipo::launcher_rank() == 0 ? app.exit(e) : e.get_exit_code();
    return code == 0 ? 0 : 2;
  }

  // Under mpirun: MPI and the PETSc plugin, from here to the end, whatever
  // the exit (docs/parallel.md).
  std::optional<bipo::ParallelSession> session;
  if (const int failed = run_reporting_errors([&] { return session.emplace(), 0; }); failed != 0)
    return failed;
  return run_reporting_errors([&] {
    if (*mesh_cylinder) return mesh_cylinder_command(arguments);
    if (*run) return run_command(arguments);
    bipo::check_case(bipo::read_case(arguments.case_file, overrides_of(arguments)),
                     bipo::on_output_rank(std::cout));
    return 0;
  });
}
