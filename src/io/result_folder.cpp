#include "io/result_folder.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <system_error>

#include "core/errors.hpp"
#include "core/file_errors.hpp"
#include "core/text_encoding.hpp"

namespace bipo {

namespace fs = std::filesystem;

namespace {

bool is_folder_entry(const std::string& name) {
  return name == "vtk" || name == "probes" || name == "maps";
}

constexpr std::string_view staging_prefix = ".bipo-staging-";
constexpr const char* staging_lock_name = ".lock";

/// The staging folder's lock file opened (no link followed) and locked
/// without waiting: its descriptor, or -1 if it is absent, cannot be
/// opened or is locked by another open file (a live run).
int lock_staging(const fs::path& lock_file, bool create) {
  const int flags = O_RDWR | O_NOFOLLOW | O_CLOEXEC | (create ? O_CREAT | O_EXCL : 0);
  const int fd = ::open(lock_file.c_str(), flags, 0644);
  if (fd < 0) return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

std::string unsafe_name_reason(std::string_view name) {
  if (name.empty()) return "it is empty";
  if (name == "." || name == "..") return "it is '" + std::string(name) + "'";
  for (const char ch : name) {
    if (ch == '/') return "it contains '/'";
    if (ch == '\\') return "it contains '\\'";
    if (ch == '\0') return "it contains a NUL byte";
    const auto byte = static_cast<unsigned char>(ch);
    if (byte < 0x20 || byte == 0x7F)
      return "it contains the control character " + printable(std::string_view(&ch, 1));
  }
  if (name.front() == '.') return "it starts with '.'";
  if (name.size() > 255) return "it is longer than 255 bytes";
  return "";
}

const std::vector<std::string>& ResultFolder::owned_entries() {
  static const std::vector<std::string> names{"summary.json", "history.csv", "history.csv.partial",
                                              "cycles.csv",   "bipo.pvd",    "contact.pvd",
                                              "vtk",          "probes",      "maps"};
  return names;
}

void ResultFolder::check(const fs::path& directory, const std::string& label) {
  struct stat st {};
  if (::stat(directory.c_str(), &st) != 0) {
    const int error = errno;
    if (error == ENOENT) {
      const std::string what = what_is_at(directory);
      if (what.empty()) return;  // created when the run starts
      throw InputError(label + ": " + directory.string() + " is " + what +
                       ", which does not exist: expected a folder");
    }
    if (error == ENOTDIR) {
      throw InputError(label + ": " + directory.string() + ": a part of this path is not a folder");
    }
    throw_file_error("examine the results folder", directory, error);
  }
  if (!S_ISDIR(st.st_mode)) {
    throw InputError(label + ": " + directory.string() + " is " + file_type_in_words(st.st_mode) +
                     ", not a folder");
  }
  for (const std::string& name : owned_entries()) {
    const fs::path entry = directory / name;
    const std::string what = what_is_at(entry);
    const std::string expected = is_folder_entry(name) ? "a folder" : "a regular file";
    if (what.empty() || what == expected) continue;
    throw InputError(label + ": " + entry.string() + " is " + what + ", not " + expected +
                     ": a run replaces only the regular files and folders it writes, so move "
                     "it away");
  }
}

int ResultFolder::remove_abandoned_staging(const fs::path& directory, double settled_seconds) {
  std::vector<fs::path> candidates;
  std::error_code ec;
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code status_error;
    if (name.rfind(staging_prefix, 0) == 0 &&
        it->symlink_status(status_error).type() == fs::file_type::directory)
      candidates.push_back(it->path());
  }
  const auto now = fs::file_time_type::clock::now();
  int removed = 0;
  for (const fs::path& folder : candidates) {
    std::error_code time_error;
    const auto changed = fs::last_write_time(folder, time_error);
    if (time_error || std::chrono::duration<double>(now - changed).count() < settled_seconds)
      continue;
    const int fd = lock_staging(folder / staging_lock_name, false);
    if (fd < 0) continue;
    std::error_code remove_error;
    if (fs::remove_all(folder, remove_error) > 0 && !remove_error) ++removed;
    ::close(fd);
  }
  return removed;
}

ResultFolder::ResultFolder(fs::path directory, std::string label)
    : directory_(std::move(directory)) {
  check(directory_, label);
  std::error_code ec;
  fs::create_directories(directory_, ec);
  if (ec) throw_file_error("create the results folder", directory_, ec.value());
  remove_abandoned_staging(directory_);
  for (int n = 0;; ++n) {
    staging_ = directory_ /
               (std::string(staging_prefix) + std::to_string(::getpid()) + "-" + std::to_string(n));
    if (::mkdir(staging_.c_str(), 0777) == 0) break;
    if (errno != EEXIST) throw_file_error("create", staging_, errno);
  }
  // A file system without locks (some network ones) leaves the folder
  // unlocked: later runs then never remove it, as for an older bipo's.
  staging_lock_ = lock_staging(staging_ / staging_lock_name, true);
}

ResultFolder::~ResultFolder() {
  if (staging_lock_ >= 0) ::close(staging_lock_);
  if (committed_) return;
  std::error_code ignored;
  fs::remove_all(staging_, ignored);
}

fs::path ResultFolder::path(std::initializer_list<std::string_view> components) const {
  fs::path p = committed_ ? directory_ : staging_;
  for (const std::string_view name : components) {
    const std::string reason = unsafe_name_reason(name);
    if (!reason.empty()) {
      std::string message = "'";
      message.append(printable(name)).append("' cannot be a file name in the results folder ");
      message.append(directory_.string()).append(": ").append(reason);
      throw InputError(message);
    }
    p /= name;
  }
  return p;
}

void ResultFolder::commit() {
  if (committed_) return;
  const auto remove = [](const fs::path& p) {
    std::error_code ec;
    fs::remove_all(p, ec);  // a symbolic link is removed, not followed
    if (ec) throw_file_error("remove the earlier run's", p, ec.value());
  };
  const auto move_in = [&](const std::string& name) {
    const fs::path target = directory_ / name;
    if (::rename((staging_ / name).c_str(), target.c_str()) != 0)
      throw_file_error("move the new result into place at", target, errno);
  };
  remove(directory_ / "summary.json");
  for (const std::string& name : owned_entries()) remove(directory_ / name);
  // The names first: renaming entries out of a folder while reading it may
  // skip some.
  std::vector<std::string> staged;
  std::error_code ec;
  for (fs::directory_iterator it(staging_, ec), end; !ec && it != end; it.increment(ec))
    staged.push_back(it->path().filename().string());
  if (ec) throw_file_error("list", staging_, ec.value());
  bool has_summary = false;
  for (const std::string& name : staged) {
    if (name == "summary.json")
      has_summary = true;
    else if (name != staging_lock_name)
      move_in(name);
  }
  if (has_summary) move_in("summary.json");
  const fs::path lock_file = staging_ / staging_lock_name;
  if (::unlink(lock_file.c_str()) != 0 && errno != ENOENT)
    throw_file_error("remove", lock_file, errno);
  if (::rmdir(staging_.c_str()) != 0) throw_file_error("remove", staging_, errno);
  if (staging_lock_ >= 0) ::close(staging_lock_);
  staging_lock_ = -1;
  committed_ = true;
}

}  // namespace bipo
