// Owns bipo's result files: VTK unstructured grids (.vtu) for ParaView, the
// .pvd collection that lists them over time, and the CSV history files. Every
// file is written so that a reader never sees a half-written one: whole files
// go to a temporary name in the same folder and are renamed into place; CSV
// histories grow under "<name>.partial" and get their final name only when
// finished. Writes only to regular files or new paths (never through a
// symbolic link, never over a device, FIFO or folder), and every name it
// writes into a file is valid UTF-8, escaped for XML or quoted for CSV
// (core/text_encoding.hpp). Errors: InputError when the path is unusable (not
// a regular file, a part of it not a folder), SystemError when the system
// refuses (full disk, permission denied), both as "cannot <do> <path>:
// <reason>". Knows nothing of finite elements or contact.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace bipo {

/// How a field's values are stored in the file. The values are held as
/// doubles; an integer type writes them converted, and each must then be a
/// whole number in the type's range (else std::invalid_argument): states
/// and flags as integers, so that ParaView offers them as categories.
enum class ValueType { float64, int32, uint8 };

/// A field with one value per point, row-major: values[i * n_components + c].
/// 1 component: scalar; 3: vector (X, Y, Z); 9: tensor, row-major
/// (XX, XY, XZ, YX, ...; write a symmetric tensor in full so that ParaView
/// recognizes it). Other counts are written as plain multi-component arrays.
struct PointField {
  std::string name;
  int n_components = 1;
  std::vector<double> values;
  ValueType type = ValueType::float64;
};

/// A field with one value per cell, same layout as PointField.
struct CellField {
  std::string name;
  int n_components = 1;
  std::vector<double> values;
  ValueType type = ValueType::float64;
};

/// One value about the whole data set (VTK field data, one tuple): the step
/// data of a result file, such as its load factor or cycle.
struct FieldDatum {
  std::string name;
  double value = 0.0;
  ValueType type = ValueType::float64;
};

/// The compressor of the appended binary data (docs/outputs.md, "VTU
/// compression", for what reads which and what each costs).
enum class VtuCompression { zlib, lz4, lzma, none };

/// What else goes into a .vtu file besides its grid and fields.
struct VtuOptions {
  VtuCompression compression = VtuCompression::zlib;
  /// VTK's compression level, 1 (fastest) to 9 (smallest); bipo writes 1
  /// (docs/outputs.md, "VTU compression", for the measured trade).
  int compression_level = 1;
  std::vector<FieldDatum> field_data;
};

/// Writes hexahedra (VTK_HEXAHEDRON; Gmsh's linear hexahedron node ordering is
/// VTK's) as a binary, appended .vtu file compressed as `options` says, with
/// its field data, atomically (a
/// temporary file in the same folder renamed into place; the folder is
/// created if missing). Field names are written XML-escaped
/// (xml_escaped(): a reader gets the name back, with U+FFFD for bytes that
/// are not UTF-8). Throws std::invalid_argument for inconsistent input (node
/// index out of range, field of the wrong size, two fields of one name) and
/// InputError or SystemError naming the path if the file cannot be written.
void write_vtu(const std::filesystem::path& file, const std::vector<Eigen::Vector3d>& points,
               const std::vector<std::array<int, 8>>& hexes,
               const std::vector<PointField>& point_fields,
               const std::vector<CellField>& cell_fields, const VtuOptions& options = {});

/// Same for quadrilaterals (VTK_QUAD, nodes counter-clockwise as in Gmsh),
/// e.g. the contact face.
void write_vtu(const std::filesystem::path& file, const std::vector<Eigen::Vector3d>& points,
               const std::vector<std::array<int, 4>>& quads,
               const std::vector<PointField>& point_fields,
               const std::vector<CellField>& cell_fields, const VtuOptions& options = {});

/// The VTK cell types bipo writes (VTK's own numbers, vtkCellType.h).
enum class VtkCellType : unsigned char {
  triangle = 5,
  quad = 9,
  tetra = 10,
  hexahedron = 12,
  wedge = 13
};

/// Cells of several types in one grid: cell e has the type types[e] and the
/// points connectivity[offsets[e]] .. connectivity[offsets[e + 1] - 1], in
/// VTK's node order for its type. offsets starts at 0 and has one more entry
/// than types.
struct MixedCells {
  std::vector<VtkCellType> types;
  std::vector<int> offsets{0};
  std::vector<int> connectivity;
};

/// Same as above for mixed cells (e.g. a mesh of hexahedra, wedges and
/// tetrahedra, or a face of quadrilaterals and triangles). Also throws
/// std::invalid_argument for inconsistent offsets.
void write_vtu(const std::filesystem::path& file, const std::vector<Eigen::Vector3d>& points,
               const MixedCells& cells, const std::vector<PointField>& point_fields,
               const std::vector<CellField>& cell_fields, const VtuOptions& options = {});

/// Appends the shortest decimal text that reads back as exactly `v`
/// (std::to_chars): the number format of the CSV outputs.
void append_number(std::string& out, double v);
[[nodiscard]] std::string full_precision(double v);

/// Writes `content` to `file` atomically (temporary file in the same folder,
/// renamed into place; the folder is created if missing): a reader, or a
/// later run, sees the old file or the new one, never a partial one, even if
/// the process is killed. The file is not forced to disk (no fsync, which
/// cost about a fifth of the output time): a system crash may still lose
/// the latest files.
/// `file` must be a regular file or absent (else InputError naming it and
/// what it is); the temporary is created exclusively (never an existing
/// file, never through a link). Throws InputError or SystemError naming the
/// path on failure and leaves no temporary file.
void write_text_atomically(const std::filesystem::path& file, const std::string& content);

/// A ParaView .pvd collection: a list of (time, .vtu file) pairs. The
/// constructor writes an empty collection (replacing a stale one) and every
/// add() rewrites the file atomically, so it is always a valid collection of
/// the steps written so far.
class PvdCollection {
 public:
  explicit PvdCollection(std::filesystem::path file);

  /// Appends a step; `relative_vtu_name` is relative to the .pvd's folder.
  /// Throws std::invalid_argument for a non-finite time.
  void add(double time, const std::string& relative_vtu_name);
  /// (Re)writes the collection atomically.
  void write() const;
  /// The caller moved the collection's file to `file`: later writes go there.
  void relocate(std::filesystem::path file);

  [[nodiscard]] const std::filesystem::path& path() const { return file_; }
  [[nodiscard]] std::size_t size() const { return steps_.size(); }

 private:
  struct Step {
    double time;
    std::string file;
  };
  std::filesystem::path file_;
  std::vector<Step> steps_;
};

/// A CSV history file (one header line, then one row per call, full precision
/// "%.17g", flushed after each row). While it is being written the file is
/// "<name>.partial"; finish() renames it to "<name>". Opening removes a stale
/// "<name>" or "<name>.partial" left by a previous run (regular files only,
/// else InputError), so "<name>" exists only for a completed history, and
/// creates "<name>.partial" exclusively. A writer destroyed without finish()
/// (error, crash) leaves the ".partial" file: its rows are valid but the
/// history is incomplete.
class CsvWriter {
 public:
  /// Column names must be non-empty and distinct as written (else
  /// std::invalid_argument); they are written as csv_field() (valid UTF-8,
  /// quoted per RFC 4180 when they hold a comma, a quote or a line break).
  /// Throws InputError or SystemError naming the path if the file cannot be
  /// created.
  CsvWriter(std::filesystem::path file, std::vector<std::string> columns);
  ~CsvWriter();
  CsvWriter(const CsvWriter&) = delete;
  CsvWriter& operator=(const CsvWriter&) = delete;
  CsvWriter(CsvWriter&&) noexcept = default;
  CsvWriter& operator=(CsvWriter&&) noexcept = default;

  /// Appends one row (as many values as columns, else std::invalid_argument).
  void append_row(const std::vector<double>& values);
  /// Closes the file and gives it its final name. Idempotent.
  void finish();
  /// The caller moved the file (partial_path() while not finished) so that
  /// its final name is now `file`: later rows and finish() use that name.
  void relocate(std::filesystem::path file);

  /// Final name of the file.
  [[nodiscard]] const std::filesystem::path& path() const { return file_; }
  /// Name while being written ("<name>.partial").
  [[nodiscard]] std::filesystem::path partial_path() const;
  [[nodiscard]] std::size_t n_rows() const { return n_rows_; }
  [[nodiscard]] bool finished() const { return !out_; }

 private:
  struct Closer {
    void operator()(std::FILE* f) const;
  };
  std::filesystem::path file_;
  std::size_t n_columns_ = 0;
  std::size_t n_rows_ = 0;
  std::unique_ptr<std::FILE, Closer> out_;
};

}  // namespace bipo
