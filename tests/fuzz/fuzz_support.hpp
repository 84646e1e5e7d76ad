// What the fuzz targets share: one scratch file per process (in /dev/shm when
// there is one, so that an execution costs no disk write) that each input is
// written to before the reader under test opens it.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace bipo::fuzz {

/// `<tmp>/bipo_fuzz_<pid>/<name>`; the folder is created once and removed at
/// exit.
inline std::filesystem::path scratch_file(const std::string& name) {
  static const std::filesystem::path folder = [] {
    const std::filesystem::path shm = "/dev/shm";
    std::error_code ec;
    const std::filesystem::path base =
        std::filesystem::is_directory(shm, ec) ? shm : std::filesystem::temp_directory_path();
    auto dir = base / ("bipo_fuzz_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    static const std::filesystem::path to_remove = dir;
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(to_remove, ignored);
    });
    return dir;
  }();
  return folder / name;
}

inline void write_bytes(const std::filesystem::path& file, const std::uint8_t* data,
                        std::size_t size) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

}  // namespace bipo::fuzz
