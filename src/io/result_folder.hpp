// Owns where bipo's outputs may go: the only way a result path is built
// (ResultFolder::path, which refuses any name that could leave the results
// folder), the rule that bipo writes only to regular files or new paths, the
// staging that keeps an earlier run's results until the new run has written
// its first step. How a failed system call becomes an error is
// core/file_errors.hpp. See docs/outputs.md.
#pragma once

#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace bipo {

/// Why `name` cannot be one component of a path in a results folder, or ""
/// if it can: it must be 1 to 255 bytes, not `.` or `..`, not start with `.`
/// (names bipo keeps for its temporary files), and hold no `/`, `\`, NUL or
/// other control character.
[[nodiscard]] std::string unsafe_name_reason(std::string_view name);

/// A run's results folder. Its outputs are first written to a fresh hidden
/// staging folder inside it (`.bipo-staging-<process>-<n>`); commit() then
/// replaces the earlier run's outputs (owned_entries()) with them, so that a
/// run that stops before commit() leaves the earlier results untouched.
/// The run holds a lock on its staging folder's `.lock` file until then, so
/// that a later run can tell a staging folder whose run is gone (killed,
/// out of memory) from a live one: remove_abandoned_staging. Nothing else
/// in the folder is ever touched.
class ResultFolder {
 public:
  /// The names of the entries that a run owns in its results folder: the
  /// files and folders of docs/outputs.md, and the history of an
  /// interrupted run (history.csv.partial).
  static const std::vector<std::string>& owned_entries();

  /// Checks, touching nothing, that `directory` can hold results: it is a
  /// folder (a symbolic link to one is followed) or does not exist yet, and
  /// each owned entry in it is absent or of the kind a run writes (a regular
  /// file, or a folder for vtk/, probes/, maps/; not a symbolic link).
  /// Throws InputError starting with `label` (the key or option that named
  /// the folder) and naming the path and what is there otherwise.
  static void check(const std::filesystem::path& directory, const std::string& label);

  /// check(), then creates the folder if needed, removes the staging
  /// folders that earlier runs abandoned there (remove_abandoned_staging)
  /// and creates a fresh staging folder, locked. Throws InputError or
  /// SystemError naming the path.
  ResultFolder(std::filesystem::path directory, std::string label);
  /// Removes the staging folder unless committed.
  ~ResultFolder();
  ResultFolder(const ResultFolder&) = delete;
  ResultFolder& operator=(const ResultFolder&) = delete;

  /// The path of an output: `components` joined under the staging folder
  /// before commit(), under the results folder after. Each component must
  /// pass unsafe_name_reason(), else InputError naming it: no output can be
  /// outside the results folder, whatever the names.
  [[nodiscard]] std::filesystem::path path(
      std::initializer_list<std::string_view> components) const;

  /// Moves the staged outputs into the results folder in place of the owned
  /// entries of an earlier run (removed first, summary.json first of all, so
  /// that a summary never describes a mix of two runs; the new summary.json
  /// comes last) and removes the staging folder. Files open for writing in
  /// the staging folder stay open (same file system, the same files). Throws
  /// SystemError naming the path on failure. Idempotent.
  void commit();

  [[nodiscard]] bool committed() const { return committed_; }

  /// Removes the `.bipo-staging-*` folders in `directory` that no live run
  /// holds: each has a `.lock` file that its run keeps locked (flock) until
  /// it commits or ends, and the kernel releases the lock of a process
  /// that is gone however it ended. Only a folder whose lock can be taken
  /// now and that has not changed for `settled_seconds` is removed (its run
  /// takes the lock right after creating it), never a symbolic link, a
  /// folder without a `.lock` (an older bipo's) or one on a file system
  /// without locks. Returns how many were removed; errors are ignored (a
  /// folder that cannot be removed is left as it was).
  static int remove_abandoned_staging(const std::filesystem::path& directory,
                                      double settled_seconds = 60.0);
  [[nodiscard]] const std::filesystem::path& directory() const { return directory_; }
  [[nodiscard]] const std::filesystem::path& staging() const { return staging_; }

 private:
  std::filesystem::path directory_;
  std::filesystem::path staging_;
  int staging_lock_ = -1;  ///< the open, locked `.lock` of the staging folder
  bool committed_ = false;
};

}  // namespace bipo
