#include "app/run.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <iomanip>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <ostream>
#include <sstream>
#include <system_error>
#include <thread>

#include "app/exit_status.hpp"
#include "app/parallel_run.hpp"
#include "core/errors.hpp"
#include "io/result_folder.hpp"
#include "io/result_writer.hpp"
#include "mesh/generate.hpp"
#include "mesh/gmsh_io.hpp"
#include "parallel/parallel_runtime.hpp"
#include "solver/analysis.hpp"
#include "solver/blas_threads.hpp"
#include "solver/driver.hpp"
#include "solver/step_snapshot.hpp"
#include "version.hpp"

namespace bipo {

namespace fs = std::filesystem;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The progress line of a converged step of a program of `n_total`
/// increments.
std::string progress_line(const StepResult& step, int n_total) {
  const double seconds = step.seconds_linear + step.seconds_contact;
  std::ostringstream line;
  line << "increment " << std::setw(4) << std::defaultfloat << step.position << "/" << n_total
       << "  factor " << std::fixed << std::setprecision(4) << step.factor << "  newton "
       << std::setw(2) << step.newton_iterations << "  sweeps " << std::setw(4) << step.sweeps
       << "  G " << std::scientific << std::setprecision(1) << step.scaled_certificate
       << "  open/stick/slip " << step.n_open << "/" << step.n_stick << "/" << step.n_slip << "  "
       << std::fixed << std::setprecision(3) << seconds << " s\n";
  return line.str();
}

/// The progress line of an increment under way, after one of its contact
/// iterations.
std::string increment_progress_line(const IncrementProgress& progress, int n_total) {
  std::ostringstream line;
  line << "increment " << std::defaultfloat << progress.position << "/" << n_total << ", "
       << std::fixed << std::setprecision(1) << progress.seconds << " s in: newton "
       << progress.newton_iterations;
  if (progress.pass_ended != nullptr)
    line << " (the Newton pass ended: " << progress.pass_ended << ")";
  if (progress.sweeps > 0) line << ", sweeps " << progress.sweeps;
  line << ", residual " << std::scientific << std::setprecision(1) << progress.scaled_residual
       << ", G " << progress.scaled_certificate;
  // The sparse path's Newton steps are where a long increment's time goes.
  if (progress.contact_linear_iterations > 0)
    line << "; gmres " << progress.contact_linear_iterations << ", preconditioner set-ups "
         << progress.contact_factorizations;
  // Long-restart steps are the slow ones (docs/performance.md).
  if (progress.contact_long_restart_steps > 0)
    line << ", long-restart steps " << progress.contact_long_restart_steps;
  line << "\n";
  return line.str();
}

/// `name` (the case file's), followed by the swept value of a sweep's case:
/// the cases of a sweep share one file.
std::string case_label(const Case& c, std::string name) {
  for (const CaseOverride& o : c.overrides)
    if (o.option == "--sweep") name.append(" [").append(o.text()).append("]");
  return name;
}

/// Where the progress and error lines of one case go. Cases may run at once
/// (RunOptions::jobs): each line is written whole under one lock, prefixed
/// with its case file's name when several cases run at once.
class CaseLog {
 public:
  CaseLog(std::ostream& out, std::mutex& mutex, std::string prefix)
      : out_(out), mutex_(mutex), prefix_(std::move(prefix)) {}
  /// Writes `text` (whole lines, each ending in a newline) and flushes;
  /// without the prefix for lines that name their case themselves.
  void write(const std::string& text, bool with_prefix = true) {
    std::string prefixed;
    std::size_t begin = 0;
    while (with_prefix && begin < text.size()) {
      const std::size_t end = std::min(text.find('\n', begin), text.size() - 1) + 1;
      prefixed += prefix_;
      prefixed.append(text, begin, end - begin);
      begin = end;
    }
    const std::lock_guard<std::mutex> lock(mutex_);
    out_ << (with_prefix ? prefixed : text) << std::flush;
  }

 private:
  std::ostream& out_;
  std::mutex& mutex_;
  std::string prefix_;
};

/// Every rank holds the dense contact path's matrices: the ranks on one
/// machine share its memory (SetupChoices::available_memory). The least of
/// the ranks' shares, so that every rank chooses the same contact path and
/// preconditioner (a collective: the ranks ask at the same points, and
/// --jobs is 1 under mpirun).
double available_memory_per_rank() {
  double least = 0.0, most = 0.0;
  parallel_min_max(available_memory_bytes() / ranks_on_this_machine(), least, most);
  return least;
}

}  // namespace

namespace {

/// The BLAS threads of one case run alone: its solver.blas_threads, or auto
/// for its number of unknowns, at most the threads of a rank when several
/// share the machine (app/parallel_run.hpp).
std::function<std::string(int)> case_blas_threads(const Case& c) {
  return [requested = c.solver.blas_threads](int n_free) {
    std::optional<int> threads = blas_threads_for(requested, n_free);
    if (const std::optional<int> per_rank = threads_per_rank(); per_rank && !requested)
      threads = std::min(threads.value_or(*per_rank), *per_rank);
    return apply_blas_threads(threads);
  };
}

}  // namespace

Mesh load_mesh(const Case& c) {
  if (c.mesh.file) return read_msh(*c.mesh.file);
  if (c.mesh.block) return generate_block(*c.mesh.block);
  return generate_cylinder(*c.mesh.cylinder);
}

void check_case(const Case& c, std::ostream& log) {
  std::optional<Mesh> read;
  std::exception_ptr mesh_error;
  try {
    read = load_mesh(c);
  } catch (...) {
    mesh_error = std::current_exception();
  }
  agree_on_error(mesh_error);
  if (mesh_error) std::rethrow_exception(mesh_error);
  const Mesh& mesh = *read;
  // Validation against the mesh happens in the Analysis constructor; the
  // factorization it also does costs about one increment and proves that the
  // conditions remove every rigid-body motion.
  const Analysis analysis(c, mesh, nullptr,
                          {nullptr, case_blas_threads(c), available_memory_per_rank, nullptr});
  log << c.source.string() << ": OK: " << mesh.n_nodes() << " nodes, " << describe_elements(mesh)
      << ", " << analysis.n_free() << " free dofs, " << analysis.contact_mesh_nodes().size()
      << " contact nodes, " << c.program.n_increments() << " increments in "
      << cycle_program(c).n_cycles() << " cycles\n";
}

namespace {

/// The set-ups that the cases of one mesh share (see run_cases). The first
/// case to start sets up; cases that start meanwhile wait for it rather than
/// repeat the factorization, then share it or, for another body or supports,
/// set up on their own, and their set-up is offered to the later cases too.
class SharedSetups {
 public:
  struct Claim {
    std::vector<std::shared_ptr<const Analysis>> donors;  ///< to try, in order
    bool first = false;  ///< no donor yet: call publish() or abandon() after set-up
  };
  Claim claim() {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [&] { return !first_in_progress_; });
    Claim c{donors_, donors_.empty()};
    if (c.first) first_in_progress_ = true;
    return c;
  }
  /// Offers a set-up to the cases that start later.
  void publish(const Claim& claim, std::shared_ptr<const Analysis> analysis) {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      donors_.push_back(std::move(analysis));
      if (claim.first) first_in_progress_ = false;
    }
    ready_.notify_all();
  }
  /// The set-up failed (an input error of that case): the next case tries.
  void abandon(const Claim& claim) {
    if (!claim.first) return;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      first_in_progress_ = false;
    }
    ready_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  bool first_in_progress_ = false;
  std::vector<std::shared_ptr<const Analysis>> donors_;
};

/// The set-up choices of case `c`: the first set-up of `claim` that fits,
/// and the BLAS threads (`blas_threads` when cases run at once).
SetupChoices setup_choices(const Case& c, const SharedSetups::Claim& claim,
                           const std::optional<std::string>& blas_threads) {
  SetupChoices choices;
  // The first set-up offered that fits this case's body, supports and contact nodes.
  choices.setup_donor = [&donors = claim.donors](const Analysis& being_set_up) -> const Analysis* {
    for (const auto& donor : donors)
      if (being_set_up.can_share_setup_with(*donor)) return donor.get();
    return nullptr;
  };
  if (blas_threads)
    choices.blas_threads = [&blas_threads](int) { return *blas_threads; };
  else
    choices.blas_threads = case_blas_threads(c);
  choices.available_memory = available_memory_per_rank;
  return choices;
}

/// Sets up case `c` on `mesh`: shares a set-up of `shared` when one fits,
/// else offers its own to the cases that start later.
std::shared_ptr<Analysis> set_up_case(const Case& c, const Mesh& mesh, SharedSetups& shared,
                                      const std::optional<std::string>& blas_threads,
                                      std::function<void(const std::string&)> progress) {
  const SharedSetups::Claim claim = shared.claim();
  SetupChoices choices = setup_choices(c, claim, blas_threads);
  choices.progress = std::move(progress);
  std::shared_ptr<Analysis> created;
  try {
    created = std::make_shared<Analysis>(c, mesh, nullptr, choices);
  } catch (...) {
    shared.abandon(claim);
    throw;
  }
  if (!created->shares_setup()) shared.publish(claim, created);
  return created;
}

/// The first line of a case's log: its mesh, unknowns, set-up and results folder.
std::string header_line(const Case& c, const Mesh& mesh, const Analysis& analysis,
                        const fs::path& directory) {
  std::ostringstream header;
  header << "bipo " << version_string << ": " << case_label(c, c.source.filename().string()) << ": "
         << mesh.n_nodes() << " nodes, " << describe_elements(mesh) << ", "
         << analysis.contact_mesh_nodes().size() << " contact nodes";
  // Which contact path ran matters for time and memory (summary.json says why).
  if (!analysis.contact_mesh_nodes().empty()) header << " (" << analysis.contact_solver() << ")";
  header << ", " << analysis.n_free() << " unknowns; ";
  if (analysis.shares_setup())
    header << "set-up shared with " << analysis.setup_donor_case().filename().string();
  else
    header << "set-up " << std::fixed << std::setprecision(3)
           << analysis.timings().assembly + analysis.timings().factorization +
                  analysis.timings().delassus + analysis.timings().load_patterns
           << " s";
  header << "; results in " << directory.string() << "\n";
  return header.str();
}

/// The closing line of a case.
std::string done_line(const fs::path& directory, std::chrono::steady_clock::time_point start) {
  std::ostringstream done;
  done << "done in " << std::fixed << std::setprecision(3) << seconds_since(start)
       << " s; results in " << directory.string() << "\n";
  return done.str();
}

/// After running out of memory in the steps: summary.json says "failed" and
/// why, as after a numerical failure. Rank 0's own write, not shared with
/// the others (the error may be this rank's alone: the job then ends), and
/// a failure to write is dropped: the lack of memory is the error to report.
void finish_out_of_memory(std::optional<ResultWriter>& writer, const std::string& message,
                          double seconds) {
  if (!writer) return;
  try {
    writer->finish("failed", "out of memory: " + message, seconds);
  } catch (...) {  // NOLINT(bugprone-empty-catch)
  }
}

/// Runs the load program of case `c` set up in `analysis`, its results
/// written to `directory` as the steps converge (by rank 0 alone under
/// mpirun), with the progress lines and the closing one (timed from
/// `start`).
void run_program(Analysis& analysis, const Case& c, const fs::path& directory,
                 const RunOptions& options, CaseLog& log,
                 std::chrono::steady_clock::time_point start) {
  const std::string label =
      options.output_directory ? "--output" : c.source.string() + ": output.directory";
  RunDescription description = describe_run(analysis);
  description.parallel_ranks = parallel_size();
  std::optional<ResultWriter> writer;
  write_on_output_rank([&] { writer.emplace(description, directory, label); });
  // An increment that takes minutes (10^4 contact nodes and more) shows its
  // contact iterations, at most one line per progress_interval. The log
  // drops the other ranks' lines, and no rank waits for another here.
  auto last_line = std::chrono::steady_clock::now();
  if (!options.quiet)
    analysis.set_increment_progress([&](const IncrementProgress& progress) {
      if (seconds_since(last_line) < options.progress_interval) return;
      log.write(increment_progress_line(progress, c.program.n_increments()));
      last_line = std::chrono::steady_clock::now();
    });
  struct ForgetProgress {  // the callback refers to this frame
    Analysis& analysis;
    ~ForgetProgress() { analysis.set_increment_progress(nullptr); }
  } forget_progress{analysis};
  try {
    run_load_program(analysis, [&](const Analysis& advanced, const StepResult& step) {
      // Under MPI each rank holds its rows of the displacements: every
      // rank's gathered to rank 0 alone, for its results, between the
      // increments.
      std::optional<Eigen::VectorXd> gathered;
      if (advanced.displacement_divided()) gathered = advanced.displacement_on_first_rank();
      write_on_output_rank([&] {
        writer->on_step(gathered ? snapshot_of(advanced, step, *gathered)
                                 : snapshot_of(advanced, step));
        if (!options.quiet) log.write(progress_line(step, c.program.n_increments()));
      });
      last_line = std::chrono::steady_clock::now();
      check_ranks_agree(advanced, step.position);
    });
  } catch (const NumericalError& error) {
    write_on_output_rank([&] { writer->finish("failed", error.what(), seconds_since(start)); });
    throw;
  } catch (const OutOfMemoryError& error) {
    finish_out_of_memory(writer, error.what(), seconds_since(start));
    throw;
  } catch (const std::bad_alloc&) {
    finish_out_of_memory(writer, out_of_memory_message(), seconds_since(start));
    throw;
  }
  write_on_output_rank([&] { writer->finish("completed", "", seconds_since(start)); });
  if (!options.quiet) log.write(done_line(directory, start));
}

/// Runs case `c` on `mesh` (see run_cases), sharing the set-up of `shared`
/// when it can.
void run_on_mesh(const Case& c, const Mesh& mesh, SharedSetups& shared,
                 const std::optional<std::string>& blas_threads, const RunOptions& options,
                 CaseLog& log) {
  const auto start = std::chrono::steady_clock::now();
  // A long set-up (minutes on a large contact zone) shows its phases with
  // the time so far: all of them on a mesh of 10,000 elements or more (its
  // factorization takes seconds), else those that start a second or more
  // into it.
  std::function<void(const std::string&)> progress;
  if (!options.quiet)
    progress = [&log, start, large = mesh.n_elements() >= 10000](const std::string& phase) {
      const double elapsed = seconds_since(start);
      if (!large && elapsed < 1.0) return;
      std::ostringstream line;
      line << "set-up, " << std::fixed << std::setprecision(1) << elapsed << " s: " << phase
           << "\n";
      log.write(line.str());
    };
  const std::shared_ptr<Analysis> created =
      set_up_case(c, mesh, shared, blas_threads, std::move(progress));
  Analysis& analysis = *created;
  const fs::path directory = options.output_directory.value_or(c.output.directory);
  if (!options.quiet) log.write(header_line(c, mesh, analysis, directory), false);
  run_program(analysis, c, directory, options, log, start);
}

/// Exit status of one case: 0 completed, 2 input error, 3 numerical failure,
/// 1 any other error; the error is written to `log`. Under mpirun, every
/// rank ends the case with the same status, or the job ends (an error that
/// only some ranks may have seen ends it at once: the others may be waiting
/// for this rank in a solve).
int run_one_case(const Case& c, const Mesh* mesh, const std::exception_ptr& mesh_error,
                 SharedSetups& shared, const std::optional<std::string>& blas_threads,
                 const RunOptions& options, CaseLog& log, const std::string& prefix) {
  ErrorReport report{0, ""};
  try {
    if (mesh == nullptr) std::rethrow_exception(mesh_error);
    run_on_mesh(c, *mesh, shared, blas_threads, options, log);
  } catch (...) {
    report = report_error(std::current_exception(), prefix);
    if (is_distributed() && !same_on_every_rank(std::current_exception()))
      abort_job(report.line, report.exit_code);
  }
  agree_on_exit_code(report.exit_code, report.line);
  if (report.exit_code != 0) log.write(report.line + "\n", false);
  return report.exit_code;
}

/// Refuses (InputError) options that do not fit `cases`, and results folders
/// that two cases share or that are not results folders.
void check_run(const std::vector<Case>& cases, const RunOptions& options) {
  if (options.output_directory && cases.size() > 1)
    throw InputError("--output names one results folder: give a single case file with it");
  if (options.jobs < 1)
    throw InputError("--jobs must be at least 1, got " + std::to_string(options.jobs));
  // The ranks' solves are collectives, taken in the same order by all.
  if (is_distributed() && options.jobs > 1)
    throw InputError("--jobs " + std::to_string(options.jobs) +
                     ": under mpirun the cases run one after the other (each one on all the "
                     "ranks): leave --jobs at 1");
  // Two cases writing one folder would leave the results of neither (at once)
  // or silently only the last one's (one after the other).
  std::map<fs::path, const Case*> folders;
  for (const Case& c : cases) {
    const fs::path folder =
        options.output_directory.value_or(c.output.directory).lexically_normal();
    const auto [at, inserted] = folders.emplace(folder, &c);
    if (!inserted)
      throw InputError(c.source.string() + " and " + at->second->source.string() +
                       " write their results to the same folder " + folder.string() +
                       " (output.directory): give each case its own");
    ResultFolder::check(folder, options.output_directory
                                    ? std::string("--output")
                                    : c.source.string() + ": output.directory");
  }
}

/// The threads of each of `jobs` cases at once: one (the library's default
/// if the environment sets a count); none (each case sets its own) for one
/// case at a time.
std::optional<int> threads_per_case_at_once(int jobs) {
  return jobs > 1 ? blas_threads_for(std::nullopt, 0) : std::nullopt;
}

/// The BLAS threads of `jobs` cases at once, set for the process (and
/// OpenMP's for the calling thread); none for one case at a time.
std::optional<std::string> blas_threads_at_once(int jobs) {
  // The BLAS thread count is process-wide: with cases at once each gets one
  // thread (the library's default if the environment sets it), whatever
  // their solver.blas_threads says.
  std::optional<std::string> blas_threads;
  if (jobs > 1)
    blas_threads = apply_blas_threads(threads_per_case_at_once(jobs)) + ", " +
                   std::to_string(jobs) + " cases at once";
  return blas_threads;
}

/// The cases of one mesh group (see CaseRun::run): their mesh or the error
/// reading it, their shared set-ups, and the next case to start.
struct MeshGroup {
  std::size_t end;
  std::optional<Mesh> mesh;
  std::exception_ptr mesh_error;
  SharedSetups shared;
  std::atomic<std::size_t> next;
};

/// The cases of one run_cases call being run, up to `jobs` at once, and the
/// exit status of each.
class CaseRun {
 public:
  CaseRun(const std::vector<Case>& cases, const RunOptions& options, std::ostream& log)
      : cases_(cases),
        options_(options),
        log_(log),
        jobs_(std::min<int>(options.jobs, static_cast<int>(cases.size()))),
        blas_threads_(blas_threads_at_once(jobs_)),
        status_(cases.size(), 0) {}

  /// Runs every case, one mesh group after the other.
  void run() {
    // Consecutive cases with the same mesh source form a group: one mesh, and
    // one set-up shared by those whose body, supports and contact nodes match.
    for (std::size_t begin = 0; begin < cases_.size();) {
      std::size_t end = begin + 1;
      while (end < cases_.size() && cases_[end].mesh == cases_[begin].mesh) ++end;
      run_group(begin, end);
      begin = end;
    }
  }

  /// 2 if any case had an input error, else 3 if any failed numerically,
  /// else 1 if any had another error, else 0.
  [[nodiscard]] int exit_status() const {
    const auto any = [&](int code) {
      return std::find(status_.begin(), status_.end(), code) != status_.end();
    };
    if (any(2)) return 2;
    if (any(3)) return 3;
    return any(1) ? 1 : 0;
  }

 private:
  /// Runs the cases [begin, end) of one mesh on up to jobs_ threads.
  void run_group(std::size_t begin, std::size_t end) {
    MeshGroup group{end, std::nullopt, nullptr, {}, {begin}};
    // An error reading the mesh is each of its cases' error (an input error,
    // or a system error such as a refused permission).
    try {
      group.mesh = load_mesh(cases_[begin]);
    } catch (...) {
      group.mesh_error = std::current_exception();
    }
    agree_on_error(group.mesh_error);
    const auto work = [&] { take_cases(group); };
    const std::size_t workers = std::min<std::size_t>(static_cast<std::size_t>(jobs_), end - begin);
    std::vector<std::thread> threads;
    for (std::size_t w = 1; w < workers; ++w) {
      try {
        threads.emplace_back(work);
      } catch (const std::system_error&) {
        break;  // no more threads to be had: the ones running share the work
      }
    }
    work();
    for (auto& thread : threads) thread.join();
  }

  /// Runs the cases of `group` not yet started, one after the other, until
  /// none is left (on each thread of the group).
  void take_cases(MeshGroup& group) {
    // OpenMP's thread count is per thread (blas_threads.hpp): each worker's
    // own, as the BLAS's for the process.
    if (const std::optional<int> threads = threads_per_case_at_once(jobs_))
      set_openmp_threads_of_this_thread(*threads);
    for (std::size_t i = group.next++; i < group.end; i = group.next++) {
      const std::string prefix =
          cases_.size() > 1 ? case_label(cases_[i], cases_[i].source.string()) + ": " : "";
      CaseLog case_log(
          log_, log_mutex_,
          jobs_ > 1 ? case_label(cases_[i], cases_[i].source.filename().string()) + ": " : "");
      status_[i] = run_one_case(cases_[i], group.mesh ? &*group.mesh : nullptr, group.mesh_error,
                                group.shared, blas_threads_, options_, case_log, prefix);
    }
  }

  const std::vector<Case>& cases_;
  const RunOptions& options_;
  std::ostream& log_;
  const int jobs_;                                 ///< cases at once, at most their number
  const std::optional<std::string> blas_threads_;  ///< set when cases run at once
  std::mutex log_mutex_;
  std::vector<int> status_;
};

}  // namespace

int parse_jobs(const std::string& text) {
  if (text == "auto") return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  int jobs = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), jobs);
  if (error != std::errc() || end != text.data() + text.size() || jobs < 1)
    throw InputError("--jobs: expected a positive integer or auto, got '" + text + "'");
  return jobs;
}

double parse_progress_interval(const std::string& text) {
  double seconds = -1.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  // from_chars reads "nan" and "inf"; the range test refuses them.
  if (error != std::errc() || end != text.data() + text.size() || !(seconds >= 0.0) ||
      !(seconds <= 1e6))
    throw InputError("--progress: expected seconds from 0 to 1e6, got '" + text + "'");
  return seconds;
}

int run_cases(const std::vector<Case>& cases, const RunOptions& options, std::ostream& log) {
  // The results folders are rank 0's alone, so it alone checks them.
  write_on_output_rank([&] { check_run(cases, options); });
  CaseRun run(cases, options, on_output_rank(log));
  run.run();
  return run.exit_status();
}

}  // namespace bipo
