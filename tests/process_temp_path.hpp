// A path in the temporary folder that belongs to this process alone: the
// name asked for, then the process id. Two test processes that run the same
// test at once (the release and sanitizer suites side by side, two
// checkouts on one machine) then never remove or overwrite each other's
// files; a fixed name in /tmp made one of them read the other's half-written
// results.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace bipo::test {

inline std::filesystem::path process_temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
}

}  // namespace bipo::test
