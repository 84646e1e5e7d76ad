#include "core/file_errors.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <system_error>

#include "core/errors.hpp"

namespace bipo {

namespace fs = std::filesystem;

std::string file_type_in_words(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return "a regular file";
    case S_IFDIR:
      return "a folder";
    case S_IFLNK:
      return "a symbolic link";
    case S_IFIFO:
      return "a FIFO (named pipe)";
    case S_IFSOCK:
      return "a socket";
    case S_IFCHR:
      return "a character device";
    case S_IFBLK:
      return "a block device";
    default:
      return "a file of unknown type";
  }
}

[[noreturn]] void throw_file_error(std::string_view doing, const fs::path& path, int error_number) {
  std::string message = "cannot ";
  message.append(doing).append(" ").append(path.string()).append(": ");
  message += std::generic_category().message(error_number);
  switch (error_number) {
    case ENOENT:
    case ENOTDIR:
    case ELOOP:
    case ENAMETOOLONG:
    case EISDIR:
    case EEXIST:
      throw InputError(message);
    default:
      throw SystemError(message);
  }
}

std::string what_is_at(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    // ENOTDIR: a part of the path is not a folder, so nothing is at the path
    // (creating it will say why it cannot be).
    if (errno == ENOENT || errno == ENOTDIR) return "";
    throw_file_error("examine", path, errno);
  }
  std::string what = file_type_in_words(st.st_mode);
  if (S_ISLNK(st.st_mode)) {
    std::error_code ec;
    const fs::path target = fs::read_symlink(path, ec);
    if (!ec) what += " to '" + target.string() + "'";
  }
  return what;
}

void require_regular_file_or_nothing(const fs::path& path) {
  const std::string what = what_is_at(path);
  if (what.empty() || what == "a regular file") return;
  throw InputError(path.string() + " is " + what +
                   ": bipo writes only to regular files or new paths");
}

}  // namespace bipo
