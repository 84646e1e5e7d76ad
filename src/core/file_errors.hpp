// Owns how bipo looks at a path before touching it and how a failed system
// call on a path becomes an error: an InputError when the path itself is the
// problem (the user's to fix), a SystemError when the machine is (full disk,
// permissions). Every reader and writer of files uses these.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <string_view>

namespace bipo {

/// The kind of file a stat() mode describes, in words ("a regular file",
/// "a folder", "a FIFO (named pipe)", ...).
[[nodiscard]] std::string file_type_in_words(mode_t mode);

/// What is at `path`, not following a final symbolic link, in words ("a
/// directory", "a FIFO", "a character device", "a symbolic link to X", ...);
/// empty when nothing is there. Throws SystemError if it cannot be told.
[[nodiscard]] std::string what_is_at(const std::filesystem::path& path);

/// Throws InputError naming `path` and what is there unless nothing is or a
/// regular file is: bipo writes only to regular files or new paths, so that
/// writing never replaces a device, a FIFO, a folder or a socket, and never
/// writes through a symbolic link (which could point anywhere).
void require_regular_file_or_nothing(const std::filesystem::path& path);

/// Throws the error for a system call on `path` that failed with errno
/// `error_number`, as "cannot <doing> <path>: <the system's reason>": an
/// InputError when the reason is the path itself (no such folder, a part of
/// it is not a folder, a symbolic link loop, a name too long, a folder where
/// a file was expected), a SystemError otherwise (full disk, permission
/// denied, read-only file system, I/O error, ...).
[[noreturn]] void throw_file_error(std::string_view doing, const std::filesystem::path& path,
                                   int error_number);

}  // namespace bipo
