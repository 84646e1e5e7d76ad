#include "io/result_folder.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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

ResultFolder::ResultFolder(fs::path directory, std::string label)
    : directory_(std::move(directory)) {
  check(directory_, label);
  std::error_code ec;
  fs::create_directories(directory_, ec);
  if (ec) throw_file_error("create the results folder", directory_, ec.value());
  for (int n = 0;; ++n) {
    staging_ =
        directory_ / (".bipo-staging-" + std::to_string(::getpid()) + "-" + std::to_string(n));
    if (::mkdir(staging_.c_str(), 0777) == 0) break;
    if (errno != EEXIST) throw_file_error("create", staging_, errno);
  }
}

ResultFolder::~ResultFolder() {
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
    else
      move_in(name);
  }
  if (has_summary) move_in("summary.json");
  if (::rmdir(staging_.c_str()) != 0) throw_file_error("remove", staging_, errno);
  committed_ = true;
}

}  // namespace bipo
