// What bipo writes, under hostile names and a hostile file system: no output
// lands outside its results folder, every output is well-formed (XML, JSON,
// CSV) whatever bytes the names hold, an earlier run's results survive a run
// that stops before its first step, bipo writes only to regular files or new
// paths, and a full disk or a read-only file system is a system error (exit
// 1) that names the path and the system's reason. The real bipo executable
// is run as a user would; every test also checks that nothing outside the
// results folder changed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vtkDataArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLUnstructuredGridReader.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "core/errors.hpp"
#include "core/file_errors.hpp"
#include "core/text_encoding.hpp"
#include "io/result_folder.hpp"
#include "io/vtk_output.hpp"

namespace fs = std::filesystem;

using namespace bipo_test;  // NOLINT: the shared helpers of cli_support.hpp

namespace {

/// Every entry under `root` (not following links) with its kind and, for a
/// regular file, its bytes; entries under `skip` are left out.
std::map<std::string, std::string> snapshot(const fs::path& root, const fs::path& skip = {}) {
  std::map<std::string, std::string> entries;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const fs::path& p = it->path();
    if (!skip.empty() && (p == skip)) {
      it.disable_recursion_pending();
      continue;
    }
    const auto status = fs::symlink_status(p);
    std::string what;
    if (fs::is_symlink(status))
      what = "link " + fs::read_symlink(p).string();
    else if (fs::is_regular_file(status))
      what = "file " + slurp(p);
    else if (fs::is_directory(status))
      what = "folder";
    else if (fs::is_fifo(status))
      what = "fifo";
    else if (fs::is_character_file(status))
      what = "character device";
    else
      what = "other";
    entries[fs::relative(p, root).string()] = what;
  }
  return entries;
}

/// The entries that differ between two snapshots ("" if none): what a
/// failure shows instead of two whole snapshots.
std::string changes(const std::map<std::string, std::string>& before,
                    const std::map<std::string, std::string>& after) {
  std::string list;
  for (const auto& [name, what] : before) {
    const auto at = after.find(name);
    if (at == after.end())
      list += "removed " + name + "\n";
    else if (at->second != what)
      list += "changed " + name + "\n";
  }
  for (const auto& [name, what] : after)
    if (before.count(name) == 0) list += "added " + name + "\n";
  return list;
}

/// True if `file` is well-formed XML for Python's expat-based parser (the
/// raw binary of a .vtu's appended data section, which VTK's format puts
/// outside XML's rules, is left out).
bool well_formed_xml(const fs::path& file, const fs::path& scratch) {
  std::string text = slurp(file);
  const std::string open = "<AppendedData encoding=\"raw\">";
  const auto begin = text.find(open);
  const auto end = text.rfind("</AppendedData>");
  if (begin != std::string::npos && end != std::string::npos && end > begin)
    text.erase(begin + open.size(), end - begin - open.size());
  std::ofstream(scratch, std::ios::binary) << text;
  const std::string command =
      "python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' " +
      quoted(scratch) + " 2>/dev/null";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/// Names of the point arrays of a .vtu as VTK's XML reader gives them back.
std::set<std::string> point_array_names(const fs::path& file) {
  vtkNew<vtkXMLUnstructuredGridReader> reader;
  reader->SetFileName(file.c_str());
  reader->Update();
  std::set<std::string> names;
  vtkPointData* data = reader->GetOutput()->GetPointData();
  for (int i = 0; i < data->GetNumberOfArrays(); ++i) names.insert(data->GetArrayName(i));
  return names;
}

/// The fields of a CSV line (RFC 4180 quoting).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted_field = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char ch = line[i];
    if (quoted_field) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (ch == '"') {
        quoted_field = false;
      } else {
        fields.back() += ch;
      }
    } else if (ch == '"') {
      quoted_field = true;
    } else if (ch == ',') {
      fields.emplace_back();
    } else {
      fields.back() += ch;
    }
  }
  return fields;
}

std::vector<std::string> csv_lines(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool contains(const std::string& text, const std::string& piece) {
  return text.find(piece) != std::string::npos;
}

class OutputSafety : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("bipo_output_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    io_ = dir_;
    io_ += "_io";  // bipo's own stdout and stderr, outside the snapshots
    for (const fs::path& p : {dir_, io_}) {
      fs::remove_all(p);
      fs::create_directories(p);
    }
  }
  void TearDown() override {
    if (!mount_point_.empty()) ::umount2(mount_point_.c_str(), MNT_DETACH);
    fs::remove_all(io_);
    if (!HasFailure()) fs::remove_all(dir_);
  }

  [[nodiscard]] Outcome bipo(const std::string& arguments) const {
    return run_bipo(dir_, arguments, io_);
  }

  fs::path write(const std::string& name, const std::string& text) const {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

  /// A tmpfs of `kib` KiB at dir_/disk (root only: false otherwise).
  bool mount_small_disk(int kib) {
    const fs::path point = dir_ / "disk";
    fs::create_directories(point);
    const std::string options = "size=" + std::to_string(kib) + "k";
    if (::mount("tmpfs", point.c_str(), "tmpfs", 0, options.c_str()) != 0) return false;
    mount_point_ = point;
    return true;
  }

  /// Fills the small disk so that nothing more fits.
  void fill_disk() const {
    const int fd = ::open((mount_point_ / "filler").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    ASSERT_GE(fd, 0);
    const std::string block(4096, 'x');
    while (::write(fd, block.data(), block.size()) > 0) {
    }
    ASSERT_EQ(errno, ENOSPC);
    ::close(fd);
  }

  /// Frees `pages` pages of the full small disk (tmpfs counts whole pages).
  void free_disk_pages(long pages) const {
    const fs::path filler = mount_point_ / "filler";
    const auto page = static_cast<std::uintmax_t>(::sysconf(_SC_PAGESIZE));
    const std::uintmax_t used = (fs::file_size(filler) + page - 1) / page;
    fs::resize_file(filler, (used - static_cast<std::uintmax_t>(pages)) * page);
  }

  fs::path dir_, io_, mount_point_;
};

// --- Names never become paths outside the folder -----------------------------------------

TEST(ResultFolderPaths, EveryComponentIsCheckedAndStaysInside) {
  const fs::path root = fs::temp_directory_path() / ("bipo_paths_" + std::to_string(::getpid()));
  fs::remove_all(root);
  {
    bipo::ResultFolder folder(root / "results", "test");
    // Before commit() outputs go to the staging folder, inside the results.
    const fs::path staged = folder.path({"probes", "P.csv"});
    EXPECT_EQ(staged.parent_path().parent_path(), folder.staging());
    EXPECT_EQ(folder.staging().parent_path(), root / "results");
    const std::vector<std::pair<std::string, std::string>> refused{
        {"", "empty"},
        {".", "'.'"},
        {"..", "'..'"},
        {"../history.csv", "'/'"},
        {"/etc/victim.csv", "'/'"},
        {"a\\b.csv", "'\\'"},
        {std::string("a\0b.csv", 7), "NUL"},
        {"a\nb.csv", "control character \\x0A"},
        {".hidden.csv", "starts with '.'"},
        {std::string(256, 'a'), "255 bytes"}};
    for (const auto& [name, reason] : refused) {
      SCOPED_TRACE(bipo::printable(name));
      try {
        (void)folder.path({"probes", name});
        ADD_FAILURE() << "accepted";
      } catch (const bipo::InputError& e) {
        EXPECT_TRUE(contains(e.what(), reason)) << e.what();
        EXPECT_TRUE(contains(e.what(), "'" + bipo::printable(name) + "'")) << e.what();
        EXPECT_TRUE(contains(e.what(), (root / "results").string())) << e.what();
      }
      EXPECT_THROW((void)folder.path({name}), bipo::InputError);
    }
    // Names with other bytes are fine: they stay one component.
    EXPECT_EQ(folder.path({"probes", "caf\xC3\xA9 <1>.csv"}),
              folder.staging() / "probes" / "caf\xC3\xA9 <1>.csv");
    bipo::write_text_atomically(folder.path({"summary.json"}), "{}\n");
    folder.commit();
    EXPECT_EQ(folder.path({"summary.json"}), root / "results" / "summary.json");
    EXPECT_EQ(slurp(root / "results" / "summary.json"), "{}\n");
    EXPECT_FALSE(fs::exists(folder.staging()));
  }
  EXPECT_EQ(snapshot(root).size(), 2u) << "results/ and results/summary.json only";
  fs::remove_all(root);
}

TEST_F(OutputSafety, ProbeNamesThatWouldLeaveTheFolderAreInputErrors) {
  const fs::path victim = dir_ / "victim.csv";
  std::ofstream(victim) << "precious\n";
  (void)write("history.csv", "precious too\n");
  const fs::path results = dir_ / "results";
  const std::vector<std::pair<std::string, std::string>> names{
      // The reader shows the first 64 characters of a longer name.
      {(dir_ / "victim").string(), (dir_ / "victim").string().substr(0, 40)},  // was dir/victim.csv
      {"../history", "../history"},  // was the history's file
      {"a\\0b", "a\\x00b"},          // YAML escape of NUL: was a file 'a'
      {"..", ".."},
      {".hidden", ".hidden"},
      {"a\\\\b", "a\\b"}};
  for (const auto& [name, shown] : names) {
    SCOPED_TRACE(name);
    const fs::path c = write(
        "probe.yaml", small_case + "probes:\n  - {name: \"" + name + "\", point: [0, 0, 0]}\n");
    const auto before = snapshot(dir_, results);
    const Outcome o = bipo("run --quiet " + quoted(c) + " --output " + quoted(results));
    EXPECT_EQ(o.exit_code, 2) << o.err;
    EXPECT_TRUE(contains(o.err, "probes[0]")) << o.err;
    EXPECT_TRUE(contains(o.err, "name")) << o.err;
    EXPECT_TRUE(contains(o.err, shown)) << o.err;
    EXPECT_FALSE(fs::exists(results / "summary.json"));
    EXPECT_EQ(changes(before, snapshot(dir_, results)), "") << "a file outside the results changed";
  }
  EXPECT_EQ(slurp(victim), "precious\n");
}

// --- Output is well-formed whatever the names hold ----------------------------------------

TEST(OutputEncoding, InvalidUtf8BecomesReplacementCharacters) {
  const std::string r = "\xEF\xBF\xBD";  // U+FFFD
  // Unicode's example of maximal subparts (The Unicode Standard, ch. 3,
  // "U+FFFD Substitution of Maximal Subparts").
  EXPECT_EQ(bipo::valid_utf8("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64"),
            "a" + r + r + r + "b" + r + "c" + r + r + "d");
  EXPECT_EQ(bipo::valid_utf8("\xC0\x80"), r + r);                  // overlong NUL
  EXPECT_EQ(bipo::valid_utf8("\xED\xA0\x80"), r + r + r);          // a surrogate
  EXPECT_EQ(bipo::valid_utf8("\xF4\x90\x80\x80"), r + r + r + r);  // above U+10FFFF
  EXPECT_EQ(bipo::valid_utf8("caf\xE9"), "caf" + r);               // Latin-1
  EXPECT_EQ(bipo::valid_utf8("\xFF"), r);
  const std::string good = "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80";
  EXPECT_EQ(bipo::valid_utf8(good), good);

  EXPECT_EQ(bipo::xml_escaped("<a&b>'\"\t\n\r\x01\xFF"),
            "&lt;a&amp;b&gt;&apos;&quot;&#9;&#10;&#13;" + r + r);
  EXPECT_EQ(bipo::csv_field("plain"), "plain");
  EXPECT_EQ(bipo::csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(bipo::csv_field("say \"hi\"\n"), "\"say \"\"hi\"\"\n\"");
  EXPECT_EQ(bipo::csv_field("\xFF"), r);
  EXPECT_EQ(bipo::printable(std::string("a\0b\x1B[31m\xFF\\", 10)), "a\\x00b\\x1B[31m\\xFF\\\\");
}

/// The writers on their own, with names no reader would give them: the
/// .vtu is well-formed and VTK's reader gives the names back; the CSV header
/// has one field per column.
TEST_F(OutputSafety, WritersEscapeEveryName) {
  const std::vector<Eigen::Vector3d> points{{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0},
                                            {0, 0, 1}, {1, 0, 1}, {1, 1, 1}, {0, 1, 1}};
  const std::vector<std::array<int, 8>> hexes{{0, 1, 2, 3, 4, 5, 6, 7}};
  const std::string hostile = "set_<a&b>'c\"d\te,f";
  const std::vector<bipo::PointField> fields{{hostile, 1, std::vector<double>(8, 1.0)},
                                             {"bad \xFF byte", 1, std::vector<double>(8, 2.0)}};
  const fs::path vtu = dir_ / "grid.vtu";
  bipo::write_vtu(vtu, points, hexes, fields, {});
  EXPECT_TRUE(well_formed_xml(vtu, io_ / "check.xml")) << slurp(vtu).substr(0, 2000);
  EXPECT_EQ(point_array_names(vtu), (std::set<std::string>{hostile, "bad \xEF\xBF\xBD byte"}));

  const fs::path csv = dir_ / "h.csv";
  bipo::CsvWriter writer(csv, {"a", "b,\"c\"", "line\nbreak", "\xFF"});
  writer.append_row({1, 2, 3, 4});
  writer.finish();
  const std::string text = slurp(csv);
  EXPECT_EQ(text, "a,\"b,\"\"c\"\"\",\"line\nbreak\",\xEF\xBF\xBD\n1,2,3,4\n");
  EXPECT_THROW(bipo::CsvWriter(dir_ / "dup.csv", {"x", "x"}), std::invalid_argument);
}

/// A mesh whose node set names hold XML's and CSV's special characters, a
/// title with XML's special characters, a case in a folder whose name is
/// Latin-1: the run completes and every output parses. (A raw 0xFF byte in
/// the case file itself is refused by the reader; the writers' replacement
/// of such bytes is tested above.)
TEST_F(OutputSafety, HostileNamesGiveWellFormedOutputs) {
  const Outcome m = bipo("mesh cylinder --core 2 --ring 1 --layers 1 --format 2.2 --output m.msh");
  ASSERT_EQ(m.exit_code, 0) << m.err;
  // A set the case does not name (the case reader accepts only safe names
  // for the sets it uses), so it reaches the outputs only through the
  // `sets` field.
  const std::string lateral = "<t&o>,'p";
  (void)write("hostile.msh", replaced(slurp(dir_ / "m.msh"), "\"lateral\"", "\"" + lateral + "\""));
  const fs::path latin1 = dir_ / "caf\xE9";
  fs::create_directories(latin1);
  const fs::path c = latin1 / "case.yaml";
  std::ofstream(c, std::ios::binary)
      << "title: \"caf\\u00e9 <&>\"\n"
      << replaced(small_case, "mesh: {cylinder: {core: 2, ring: 1, layers: 1}}",
                  "mesh: {file: ../hostile.msh}");
  const fs::path results = dir_ / "results";
  const auto before = snapshot(dir_, results);
  const Outcome o = bipo("run --quiet " + quoted(c) + " --output " + quoted(results));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(changes(before, snapshot(dir_, results)), "");

  const std::string r = "\xEF\xBF\xBD";
  const auto summary = nlohmann::json::parse(slurp(results / "summary.json"));
  EXPECT_EQ(summary.value("title", ""), "caf\xC3\xA9 <&>");
  EXPECT_TRUE(contains(summary.value("case", ""), "caf" + r + "/case.yaml"));
  EXPECT_EQ(summary.value("status", ""), "completed");

  for (const char* file :
       {"vtk/bipo_000002.vtu", "vtk/contact_000002.vtu", "bipo.pvd", "contact.pvd"}) {
    EXPECT_TRUE(well_formed_xml(results / file, io_ / "check.xml")) << file;
  }
  EXPECT_EQ(point_array_names(results / "vtk" / "bipo_000002.vtu").count("set_" + lateral), 1u);

  const auto lines = csv_lines(results / "history.csv");
  ASSERT_EQ(lines.size(), 3u);
  const auto header = csv_fields(lines[0]);
  EXPECT_EQ(header.size(), csv_fields(lines[1]).size());
  EXPECT_EQ(header.at(4), "reaction_top_x");
  EXPECT_EQ(header.at(6), "reaction_top_z");
}

// --- An earlier run's results survive until the new run has written a step ----------------

// --- Staging folders of runs that are gone --------------------------------------------------

namespace {

/// A staging folder as a run makes it: a `.lock` file and a staged output.
void make_staging(const fs::path& folder, bool with_lock) {
  fs::create_directories(folder);
  if (with_lock) std::ofstream(folder / ".lock");
  std::ofstream(folder / "history.csv") << "step\n";
}

/// Dates a folder back an hour, as if its run had been killed long ago.
void age(const fs::path& folder) {
  fs::last_write_time(folder, fs::file_time_type::clock::now() - std::chrono::hours(1));
}

/// True if another open file holds the lock of `lock_file` (flock).
bool locked_by_someone(const fs::path& lock_file) {
  const int fd = ::open(lock_file.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  const bool taken = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  return taken;
}

}  // namespace

TEST(ResultFolderStaging, OnlyFoldersOfRunsThatAreGoneAreRemoved) {
  const fs::path root = fs::temp_directory_path() / ("bipo_staging_" + std::to_string(::getpid()));
  fs::remove_all(root);
  const fs::path results = root / "results";
  fs::create_directories(root / "elsewhere");
  std::ofstream(root / "elsewhere" / ".lock");
  const fs::path gone = results / ".bipo-staging-111-0";
  const fs::path live = results / ".bipo-staging-222-0";
  const fs::path older_bipo = results / ".bipo-staging-333-0";  // no .lock
  const fs::path fresh = results / ".bipo-staging-444-0";       // made a moment ago
  const fs::path link = results / ".bipo-staging-555-0";
  const fs::path lock_link = results / ".bipo-staging-666-0";  // .lock a symbolic link
  make_staging(gone, true);
  make_staging(live, true);
  make_staging(older_bipo, false);
  make_staging(fresh, true);
  make_staging(lock_link, false);
  fs::create_symlink(root / "elsewhere" / ".lock", lock_link / ".lock");
  fs::create_directory_symlink(root / "elsewhere", link);
  fs::create_directories(results / ".bipo-other");
  std::ofstream(results / "notes.txt") << "the user's own file\n";
  const int held = ::open((live / ".lock").c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX | LOCK_NB), 0);
  for (const fs::path& folder : {gone, live, older_bipo, lock_link}) age(folder);

  EXPECT_EQ(bipo::ResultFolder::remove_abandoned_staging(results), 1);
  EXPECT_FALSE(fs::exists(gone));
  for (const fs::path& kept : {live, older_bipo, fresh, lock_link, link, results / ".bipo-other",
                               results / "notes.txt", root / "elsewhere" / ".lock"})
    EXPECT_TRUE(fs::exists(fs::symlink_status(kept))) << kept;
  EXPECT_TRUE(fs::exists(live / "history.csv"));
  // Once its run lets go of the lock (it ended however it did), it goes.
  ::close(held);
  EXPECT_EQ(bipo::ResultFolder::remove_abandoned_staging(results), 1);
  EXPECT_FALSE(fs::exists(live));
  // The fresh one only once it has settled.
  EXPECT_EQ(bipo::ResultFolder::remove_abandoned_staging(results, 0.0), 1);
  EXPECT_FALSE(fs::exists(fresh));
  fs::remove_all(root);
}

TEST(ResultFolderStaging, ARunLocksItsStagingFolderUntilItCommitsOrIsGone) {
  const fs::path root =
      fs::temp_directory_path() / ("bipo_staging_run_" + std::to_string(::getpid()));
  fs::remove_all(root);
  const fs::path results = root / "results";
  {
    bipo::ResultFolder folder(results, "test");
    EXPECT_TRUE(locked_by_someone(folder.staging() / ".lock"));
    // A run starting now beside it leaves it alone, settled or not.
    EXPECT_EQ(bipo::ResultFolder::remove_abandoned_staging(results, 0.0), 0);
    bipo::write_text_atomically(folder.path({"summary.json"}), "{}\n");
    folder.commit();
    EXPECT_FALSE(fs::exists(folder.staging()));
  }
  // The lock file is not an output.
  EXPECT_EQ(snapshot(root).size(), 2u) << "results/ and results/summary.json only";
  // A run killed before it commits: a child process makes its folder and
  // ends without a word (as a kill or the out-of-memory killer would).
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      const bipo::ResultFolder folder(results, "test");
      std::ofstream(folder.staging() / "history.csv") << "step\n";
      ::_exit(0);
    } catch (...) {
      ::_exit(1);
    }
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  std::vector<fs::path> left;
  for (const auto& entry : fs::directory_iterator(results))
    if (entry.path().filename().string().rfind(".bipo-staging-", 0) == 0)
      left.push_back(entry.path());
  ASSERT_EQ(left.size(), 1u);
  EXPECT_FALSE(locked_by_someone(left[0] / ".lock"));
  // The next run into the folder, once it has settled, removes it.
  age(left[0]);
  {
    bipo::ResultFolder next(results, "test");
    EXPECT_FALSE(fs::exists(left[0]));
    EXPECT_TRUE(fs::exists(next.staging()));
  }
  EXPECT_EQ(slurp(results / "summary.json"), "{}\n");
  fs::remove_all(root);
}

TEST_F(OutputSafety, ARunThatStopsBeforeItsFirstStepLeavesTheEarlierResults) {
  const fs::path results = dir_ / "results";
  const fs::path good = write("good.yaml", small_case);
  ASSERT_EQ(bipo("run --quiet " + quoted(good) + " --output " + quoted(results)).exit_code, 0);
  std::ofstream(results / "notes.txt") << "the user's own file\n";
  // A probe on a set that is not a contact set: found after reading.
  const fs::path bad =
      write("bad.yaml", small_case + "probes:\n  - {name: Q, point: [0, 0, 0], set: top}\n");
  const auto earlier = snapshot(results);
  const auto outside = snapshot(dir_, results);
  const Outcome o = bipo("run --quiet " + quoted(bad) + " --output " + quoted(results));
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_TRUE(contains(o.err, "probe 'Q'")) << o.err;
  EXPECT_TRUE(contains(o.err, "'top'")) << o.err;
  EXPECT_EQ(changes(earlier, snapshot(results)), "") << "the earlier results changed";
  EXPECT_EQ(changes(outside, snapshot(dir_, results)), "");
}

TEST_F(OutputSafety, ASuccessfulRunReplacesTheEarlierResultsWholly) {
  const fs::path results = dir_ / "results";
  const fs::path first = write("first.yaml", small_case +
                                                 "probes:\n  - {name: P, point: [0, 0, 0]}\n"
                                                 "  - {name: Q, point: [1, 0, 0]}\n");
  ASSERT_EQ(bipo("run --quiet " + quoted(first) + " --output " + quoted(results)).exit_code, 0);
  ASSERT_TRUE(fs::exists(results / "probes" / "Q.csv"));
  ASSERT_TRUE(fs::exists(results / "vtk" / "bipo_000002.vtu"));
  std::ofstream(results / "history.csv.partial") << "an interrupted run's\n";
  std::ofstream(results / "notes.txt") << "the user's own file\n";
  // One probe, no VTK, one increment.
  const fs::path second =
      write("second.yaml", replaced(small_case, "increments: 2", "increments: 1") +
                               "probes:\n  - {name: P, point: [0, 0, 0]}\noutput: {vtk: false}\n");
  const auto outside = snapshot(dir_, results);
  const Outcome o = bipo("run --quiet " + quoted(second) + " --output " + quoted(results));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::set<std::string> names;
  for (const auto& [name, what] : snapshot(results)) names.insert(name);
  EXPECT_EQ(names, (std::set<std::string>{"summary.json", "history.csv", "cycles.csv", "maps",
                                          "maps/index.csv", "maps/step_000001.csv", "probes",
                                          "probes/P.csv", "notes.txt"}));
  EXPECT_EQ(slurp(results / "notes.txt"), "the user's own file\n");
  EXPECT_EQ(csv_lines(results / "history.csv").size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(slurp(results / "summary.json")).value("steps_converged", 0), 1);
  EXPECT_EQ(changes(outside, snapshot(dir_, results)), "");
}

/// A numerical failure at the first increment is a result of the new run:
/// its summary says so, in place of the earlier one.
TEST_F(OutputSafety, ARunThatFailsNumericallyAtOnceReplacesTheEarlierResults) {
  const fs::path results = dir_ / "results";
  const fs::path good = write("good.yaml", small_case);
  ASSERT_EQ(bipo("run --quiet " + quoted(good) + " --output " + quoted(results)).exit_code, 0);
  std::string text = replaced(small_case, "x: 0, y: 0, z: -0.01", "x: 0.01, y: 0, z: -0.01");
  text = replaced(text, "friction: {mu: 0.3}", "friction: {mu1: 0.3, mu2: 0.1, p1: 0.05, p2: 0.2}");
  text += "solver: {max_iterations: 1, max_cuts: 0, law_tolerance: 1e-14}\n";
  const Outcome o =
      bipo("run --quiet " + quoted(write("hard.yaml", text)) + " --output " + quoted(results));
  ASSERT_EQ(o.exit_code, 3) << o.err;
  const auto j = nlohmann::json::parse(slurp(results / "summary.json"));
  EXPECT_EQ(j.value("status", ""), "failed");
  EXPECT_EQ(j.value("steps_converged", -1), 0);
  EXPECT_TRUE(contains(j.value("case", ""), "hard.yaml"));
  EXPECT_EQ(csv_lines(results / "history.csv").size(), 1u);  // the header
  EXPECT_FALSE(fs::exists(results / "vtk"));
}

// --- Only regular files or new paths --------------------------------------------------------

TEST_F(OutputSafety, TheResultsFolderMustBeAFolder) {
  std::ofstream(dir_ / "plain") << "not a folder\n";
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0644), 0);
  const fs::path in_case = write("file.yaml", small_case + "output: {directory: plain}\n");
  const fs::path good = write("good.yaml", small_case);
  const auto before = snapshot(dir_);

  Outcome o = bipo("run --quiet " + quoted(in_case));
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_TRUE(contains(o.err, "file.yaml: output.directory")) << o.err;
  EXPECT_TRUE(contains(o.err, (dir_ / "plain").string() + " is a regular file")) << o.err;

  o = bipo("run --quiet " + quoted(good) + " --output fifo");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_TRUE(contains(o.err, "--output")) << o.err;
  EXPECT_TRUE(contains(o.err, (dir_ / "fifo").string() + " is a FIFO")) << o.err;

  o = bipo("run --quiet " + quoted(good) + " --output plain/sub");
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_TRUE(contains(o.err, (dir_ / "plain" / "sub").string())) << o.err;
  EXPECT_TRUE(contains(o.err, "not a folder")) << o.err;

  EXPECT_EQ(changes(before, snapshot(dir_)), "");
}

/// Entries of the results folder that a run would replace must be what a
/// run writes: a link planted there (to a file outside) or a FIFO is
/// refused, and stays as it was, as does its target.
TEST_F(OutputSafety, PlantedLinksAndSpecialFilesInTheResultsFolderAreRefused) {
  const fs::path results = dir_ / "results";
  const fs::path good = write("good.yaml", small_case);
  ASSERT_EQ(bipo("run --quiet " + quoted(good) + " --output " + quoted(results)).exit_code, 0);
  std::ofstream(dir_ / "outside.txt") << "precious\n";
  for (const std::string entry : {"summary.json", "history.csv.partial", "vtk"}) {
    SCOPED_TRACE(entry);
    fs::remove_all(results / entry);
    if (entry == "history.csv.partial")
      ASSERT_EQ(::mkfifo((results / entry).c_str(), 0644), 0);
    else
      fs::create_symlink(dir_ / "outside.txt", results / entry);
    const auto before = snapshot(dir_);
    const Outcome o = bipo("run --quiet " + quoted(good) + " --output " + quoted(results));
    EXPECT_EQ(o.exit_code, 2) << o.err;
    EXPECT_TRUE(contains(o.err, "--output: " + (results / entry).string() + " is a ")) << o.err;
    EXPECT_EQ(changes(before, snapshot(dir_)), "");
    fs::remove(results / entry);
  }
  EXPECT_EQ(slurp(dir_ / "outside.txt"), "precious\n");
}

TEST_F(OutputSafety, MeshOutputIsARegularFileOrANewPath) {
  const std::string mesh = "mesh cylinder --core 2 --ring 1 --layers 1 --output ";
  std::ofstream(dir_ / "outside.txt") << "precious\n";
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0644), 0);
  fs::create_symlink(dir_ / "outside.txt", dir_ / "link.msh");
  fs::create_directories(dir_ / "folder.msh");
  // The old temporary name, planted as a link to a file outside: untouched.
  fs::create_symlink(dir_ / "outside.txt", dir_ / "new.msh.tmp.msh");
  std::vector<std::pair<std::string, std::string>> refused{
      {"fifo", "a FIFO"}, {"link.msh", "a symbolic link"}, {"folder.msh", "a folder"}};
  // A character device: a copy of /dev/full's node (the real one would be
  // replaced if this test ever failed). Needs root.
  if (::mknod((dir_ / "full").c_str(), S_IFCHR | 0666, makedev(1, 7)) == 0)
    refused.emplace_back("full", "a character device");
  const auto before = snapshot(dir_);
  for (const auto& [name, what] : refused) {
    SCOPED_TRACE(name);
    const Outcome o = bipo(mesh + name);
    EXPECT_EQ(o.exit_code, 2) << o.err;
    EXPECT_TRUE(contains(o.err, name + " is " + what)) << o.err;
    EXPECT_EQ(changes(before, snapshot(dir_)), "");
  }
  // A new path and a regular file are written; the temporary is private.
  std::ofstream(dir_ / "old.msh") << "an older mesh\n";
  for (const char* name : {"new.msh", "old.msh"}) {
    const Outcome o = bipo(mesh + name);
    ASSERT_EQ(o.exit_code, 0) << o.err;
    EXPECT_TRUE(contains(slurp(dir_ / name), "$EndElements\n"));
  }
  EXPECT_EQ(slurp(dir_ / "outside.txt"), "precious\n");
  EXPECT_TRUE(fs::is_symlink(dir_ / "new.msh.tmp.msh"));
  for (const auto& entry : fs::directory_iterator(dir_))
    EXPECT_FALSE(contains(entry.path().filename().string(), ".bipo-mesh-")) << entry.path();
}

// --- System errors: exit 1, the path and the system's reason --------------------------------

TEST_F(OutputSafety, AFullDiskIsASystemErrorAndKeepsTheEarlierResults) {
  if (!mount_small_disk(512)) GTEST_SKIP() << "needs root to mount a small tmpfs";
  const fs::path results = dir_ / "disk" / "results";
  const fs::path good = write("good.yaml", small_case);
  ASSERT_EQ(bipo("run --quiet " + quoted(good) + " --output " + quoted(results)).exit_code, 0);
  const auto earlier = snapshot(results);
  fill_disk();
  const auto outside = snapshot(dir_, results);

  Outcome o = bipo("run --quiet " + quoted(good) + " --output " + quoted(results));
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_TRUE(contains(o.err, "system error")) << o.err;
  EXPECT_TRUE(contains(o.err, "cannot write " + results.string() + "/")) << o.err;
  EXPECT_TRUE(contains(o.err, "No space left on device")) << o.err;
  EXPECT_EQ(changes(earlier, snapshot(results)), "");
  EXPECT_EQ(changes(outside, snapshot(dir_, results)), "");

  // Room for the files a run starts with (history, summary, .pvd: a page
  // each) but not for the first step's .vtu (about 10 kB): the run has
  // started writing, in its staging folder, and the earlier results stay.
  free_disk_pages(5);
  const auto partly_full = snapshot(dir_, results);
  o = bipo("run --quiet " + quoted(good) + " --output " + quoted(results));
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_TRUE(contains(o.err, "system error")) << o.err;
  EXPECT_TRUE(contains(o.err, "/vtk/bipo_000001.vtu: No space left on device")) << o.err;
  EXPECT_EQ(changes(earlier, snapshot(results)), "");
  EXPECT_EQ(changes(partly_full, snapshot(dir_, results)), "");

  fill_disk();
  o = bipo("mesh cylinder --core 2 --ring 1 --layers 1 --output disk/m.msh");
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_TRUE(contains(o.err, "cannot write disk/m.msh: No space left on device")) << o.err;
  EXPECT_FALSE(fs::exists(dir_ / "disk" / "m.msh"));
}

TEST_F(OutputSafety, AReadOnlyFileSystemIsASystemError) {
  if (!mount_small_disk(512)) GTEST_SKIP() << "needs root to mount a small tmpfs";
  const fs::path results = dir_ / "disk" / "results";
  const fs::path good = write("good.yaml", small_case);
  ASSERT_EQ(bipo("run --quiet " + quoted(good) + " --output " + quoted(results)).exit_code, 0);
  const auto earlier = snapshot(results);
  ASSERT_EQ(::mount("tmpfs", mount_point_.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, nullptr), 0);
  const auto outside = snapshot(dir_, results);

  const Outcome o = bipo("run --quiet " + quoted(good) + " --output " + quoted(results));
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_TRUE(contains(o.err, "system error")) << o.err;
  EXPECT_TRUE(contains(o.err, results.string())) << o.err;
  EXPECT_TRUE(contains(o.err, "Read-only file system")) << o.err;
  EXPECT_EQ(changes(earlier, snapshot(results)), "");
  EXPECT_EQ(changes(outside, snapshot(dir_, results)), "");
}

/// Reading what one may not read is a system error too (exit 1, the path and
/// the system's reason), for the case file and for the mesh. Root reads
/// everything, so bipo runs as the user nobody (setpriv, util-linux).
TEST_F(OutputSafety, AnUnreadableInputIsASystemError) {
  const std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  if (::geteuid() != 0 ||
      std::system((as_nobody + quoted(BIPO_EXE) + " --version >/dev/null 2>&1").c_str()) != 0)
    GTEST_SKIP() << "needs root, setpriv and a bipo that the user nobody may run";
  ASSERT_EQ(bipo("mesh cylinder --core 2 --ring 1 --layers 1 --output m.msh").exit_code, 0);
  const fs::path c =
      write("case.yaml", replaced(small_case, "mesh: {cylinder: {core: 2, ring: 1, layers: 1}}",
                                  "mesh: {file: m.msh}"));
  fs::permissions(dir_, fs::perms::all, fs::perm_options::add);  // nobody may enter
  const auto run_as_nobody = [&](const fs::path& file) {
    const std::string command = "cd " + quoted(dir_) + " && " + as_nobody + quoted(BIPO_EXE) +
                                " check " + quoted(file) + " >/dev/null 2>" +
                                quoted(io_ / "stderr.txt");
    const int status = std::system(command.c_str());
    return std::make_pair(WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(io_ / "stderr.txt"));
  };
  ASSERT_EQ(run_as_nobody(c).first, 0) << run_as_nobody(c).second;

  fs::permissions(dir_ / "m.msh", fs::perms::none);
  const auto [mesh_code, mesh_err] = run_as_nobody(c);
  EXPECT_EQ(mesh_code, 1) << mesh_err;
  EXPECT_TRUE(contains(mesh_err, (dir_ / "m.msh").string())) << mesh_err;
  EXPECT_TRUE(contains(mesh_err, "Permission denied")) << mesh_err;

  // `bipo run` too: the mesh's error is the case's, and no result is written.
  const std::string run_command = "cd " + quoted(dir_) + " && " + as_nobody + quoted(BIPO_EXE) +
                                  " run --quiet " + quoted(c) + " --output " +
                                  quoted(dir_ / "results") + " 2>" + quoted(io_ / "stderr.txt");
  const int run_status = std::system(run_command.c_str());
  EXPECT_EQ(WIFEXITED(run_status) ? WEXITSTATUS(run_status) : -1, 1);
  EXPECT_TRUE(contains(slurp(io_ / "stderr.txt"), "bipo: system error:"))
      << slurp(io_ / "stderr.txt");
  EXPECT_FALSE(fs::exists(dir_ / "results" / "summary.json"));

  fs::permissions(c, fs::perms::none);
  const auto [case_code, case_err] = run_as_nobody(c);
  EXPECT_EQ(case_code, 1) << case_err;
  EXPECT_TRUE(contains(case_err, c.string())) << case_err;
  EXPECT_TRUE(contains(case_err, "Permission denied")) << case_err;
}

TEST(FileErrors, TheReasonDecidesTheKind) {
  const fs::path p = "/some/where/x.csv";
  for (const int error : {ENOSPC, EACCES, EROFS, EIO, EDQUOT}) {
    try {
      bipo::throw_file_error("write", p, error);
    } catch (const bipo::SystemError& e) {
      EXPECT_EQ(std::string(e.what()),
                "cannot write /some/where/x.csv: " + std::generic_category().message(error));
    }
  }
  for (const int error : {ENOENT, ENOTDIR, ELOOP, ENAMETOOLONG, EISDIR})
    EXPECT_THROW(bipo::throw_file_error("write", p, error), bipo::InputError);
}

// --- Column names are unique ---------------------------------------------------------------

TEST_F(OutputSafety, EveryCsvColumnNameIsUnique) {
  // Three conditions on `top` (the case reader accepts no `#` in the set
  // names it uses, so a set cannot be named like a numbered label).
  const std::string text = replaced(small_case, "contact:",
                                    "  - {set: top, displacement: {z: -0.01}}\n"
                                    "  - {set: top, displacement: {x: 0, y: 0}}\n"
                                    "contact:") +
                           "probes:\n  - {name: P, point: [0, 0, 0], point_p: true}\n";
  const fs::path results = dir_ / "results";
  const fs::path twice = write("twice.yaml", text);
  const auto outside = snapshot(dir_, results);
  const Outcome o = bipo("run --quiet " + quoted(twice) + " --output " + quoted(results));
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(changes(outside, snapshot(dir_, results)), "");

  const auto header = csv_fields(csv_lines(results / "history.csv").at(0));
  const std::vector<std::string> reactions(header.begin() + 4, header.begin() + 13);
  EXPECT_EQ(reactions,
            (std::vector<std::string>{"reaction_top_x", "reaction_top_y", "reaction_top_z",
                                      "reaction_top#2_x", "reaction_top#2_y", "reaction_top#2_z",
                                      "reaction_top#3_x", "reaction_top#3_y", "reaction_top#3_z"}));
  for (const char* file :
       {"history.csv", "cycles.csv", "probes/P.csv", "maps/index.csv", "maps/step_000002.csv"}) {
    const auto columns = csv_fields(csv_lines(results / file).at(0));
    EXPECT_EQ(std::set<std::string>(columns.begin(), columns.end()).size(), columns.size()) << file;
  }
}

}  // namespace
