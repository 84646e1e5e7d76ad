// What the tests that read case files or run the real bipo share: reading a
// file whole, quoting a path for the shell, editing a case text, the small
// valid case most of them start from, and running bipo and its outcome.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace bipo_test {

/// What a run of the bipo program gave.
struct Outcome {
  int exit_code = -1;
  std::string out;  ///< standard output
  std::string err;  ///< standard error
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// A path in single quotes for the shell (the paths used here have none).
inline std::string quoted(const std::filesystem::path& p) {
  // Appended, not "'" + ... + "'": GCC 12 gives a false -Wrestrict there.
  std::string q = "'";
  q.append(p.string());
  q.push_back('\'');
  return q;
}

/// `command` run by the shell from `folder`, its standard output and error
/// kept in stdout.txt and stderr.txt of `io` (an existing folder).
inline Outcome run_shell(const std::filesystem::path& folder, const std::string& command,
                         const std::filesystem::path& io) {
  const std::filesystem::path out = io / "stdout.txt";
  const std::filesystem::path err = io / "stderr.txt";
  const std::string full =
      "cd " + quoted(folder) + " && " + command + " >" + quoted(out) + " 2>" + quoted(err);
  const int status = std::system(full.c_str());
  Outcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.out = slurp(out);
  o.err = slurp(err);
  return o;
}

/// `bipo <arguments>` run from `folder` (BIPO_EXE, the program under test);
/// see run_shell.
inline Outcome run_bipo(const std::filesystem::path& folder, const std::string& arguments,
                        const std::filesystem::path& io) {
  return run_shell(folder, quoted(BIPO_EXE) + " " + arguments, io);
}

/// `text` with the first occurrence of `from` replaced by `to` (a test
/// failure if there is none).
inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  if (at == std::string::npos)
    ADD_FAILURE() << "'" << from << "' not in the text";
  else
    text.replace(at, from.size(), to);
  return text;
}

/// A small valid frictional case (34 nodes, 17 contact nodes); line numbers
/// in the tests refer to this text.
inline const std::string small_case =
    "mesh: {cylinder: {core: 2, ring: 1, layers: 1}}\n"       // 1
    "material: {young: 1000, poisson: 0.3}\n"                 // 2
    "load_program: [{to: 1.0, increments: 2}]\n"              // 3
    "boundary_conditions:\n"                                  // 4
    "  - {set: top, displacement: {x: 0, y: 0, z: -0.01}}\n"  // 5
    "contact:\n"                                              // 6
    "  - set: bottom\n"                                       // 7
    "    plane: {point: [0, 0, 0], normal: [0, 0, 1]}\n"      // 8
    "    friction: {mu: 0.3}\n";                              // 9

}  // namespace bipo_test
