#include "io/vtk_output.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkCellType.h>
#include <vtkDoubleArray.h>
#include <vtkErrorCode.h>
#include <vtkFieldData.h>
#include <vtkIdTypeArray.h>
#include <vtkIntArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkSmartPointer.h>
#include <vtkUnsignedCharArray.h>
#include <vtkUnstructuredGrid.h>
#include <vtkXMLUnstructuredGridWriter.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <mutex>
#include <set>
#include <stdexcept>
#include <utility>

#include "core/errors.hpp"
#include "core/file_errors.hpp"
#include "core/text_encoding.hpp"

namespace bipo {

namespace {

namespace fs = std::filesystem;

/// Creates the folder of `file` if needed.
void make_parent(const fs::path& file) {
  const fs::path dir = file.parent_path();
  if (dir.empty()) return;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw_file_error("create the folder", dir, ec.value());
}

/// A fresh temporary name in the folder of `file` (same file system, so the
/// final rename is atomic), hidden so that a glob on "*.vtu" does not see it.
fs::path temporary_name(const fs::path& file) {
  static std::atomic<unsigned> counter{0};
  std::string name(".");
  name += file.filename().string();
  name += '.';
  name += std::to_string(::getpid());
  name += '.';
  name += std::to_string(counter++);
  name += ".tmp";
  return file.parent_path() / name;
}

void remove_quietly(const fs::path& p) {
  std::error_code ec;
  fs::remove(p, ec);
}

/// Renames `tmp` to `file`; on failure removes `tmp` and throws.
void commit(const fs::path& tmp, const fs::path& file) {
  if (::rename(tmp.c_str(), file.c_str()) != 0) {
    const int error = errno;
    remove_quietly(tmp);
    throw_file_error("write", file, error);
  }
}

/// Text of a vtkErrorCode (system errno values below FirstVTKErrorCode).
std::string vtk_error_text(unsigned long code) {
  if (code != 0 && code < vtkErrorCode::FirstVTKErrorCode)
    return std::strerror(static_cast<int>(code));
  switch (code) {
    case vtkErrorCode::CannotOpenFileError:
      return "cannot open the file";
    case vtkErrorCode::OutOfDiskSpaceError:
      return "out of disk space";
    case vtkErrorCode::NoFileNameError:
      return "no file name";
    default:
      return "write failed, VTK error code " + std::to_string(code);
  }
}

/// An empty VTK array of `type`.
vtkSmartPointer<vtkDataArray> new_array(ValueType type) {
  switch (type) {
    case ValueType::int32:
      return vtkSmartPointer<vtkIntArray>::New();
    case ValueType::uint8:
      return vtkSmartPointer<vtkUnsignedCharArray>::New();
    case ValueType::float64:
      break;
  }
  return vtkSmartPointer<vtkDoubleArray>::New();
}

/// Checks that `v` can be stored as `type` exactly (what the field is for:
/// `kind` and `name`, for the message).
void check_storable(double v, ValueType type, const char* kind, const std::string& name) {
  if (type == ValueType::float64) return;
  const double low = type == ValueType::uint8 ? 0.0 : -2147483648.0;
  const double high = type == ValueType::uint8 ? 255.0 : 2147483647.0;
  if (!(v >= low && v <= high) || v != std::floor(v)) {
    throw std::invalid_argument(std::string(kind) + " field '" + printable(name) + "': value " +
                                full_precision(v) + " is not an integer in [" +
                                full_precision(low) + ", " + full_precision(high) + "]");
  }
}

/// The VTK array of a named field of `n_items` tuples of `n_components`
/// values, of type `type`.
vtkSmartPointer<vtkDataArray> make_array(const std::string& name, int n_components,
                                         const std::vector<double>& values, ValueType type,
                                         std::size_t n_items, const char* kind) {
  if (name.empty()) throw std::invalid_argument(std::string(kind) + " field with an empty name");
  if (n_components < 1) {
    throw std::invalid_argument(std::string(kind) + " field '" + name +
                                "': n_components must be >= 1");
  }
  const std::size_t nc = static_cast<std::size_t>(n_components);
  if (values.size() != n_items * nc) {
    throw std::invalid_argument(std::string(kind) + " field '" + name + "': expected " +
                                std::to_string(n_items * nc) + " values (" +
                                std::to_string(n_items) + " x " + std::to_string(nc) + "), got " +
                                std::to_string(values.size()));
  }
  auto a = new_array(type);
  // VTK 9.1 writes array names into the XML as they are: escaped here, an
  // XML reader (ParaView's) gives back the name itself.
  a->SetName(xml_escaped(name).c_str());
  a->SetNumberOfComponents(n_components);
  a->SetNumberOfTuples(static_cast<vtkIdType>(n_items));
  if (type == ValueType::float64) {
    if (!values.empty())
      std::memcpy(a->GetVoidPointer(0), values.data(), values.size() * sizeof(double));
  } else {
    for (std::size_t i = 0; i < values.size(); ++i) {
      check_storable(values[i], type, kind, name);
      a->SetComponent(static_cast<vtkIdType>(i / nc), static_cast<int>(i % nc), values[i]);
    }
  }
  if (n_components == 3) {
    const char* names[] = {"X", "Y", "Z"};
    for (int c = 0; c < 3; ++c) a->SetComponentName(c, names[c]);
  } else if (n_components == 9) {
    const char* names[] = {"XX", "XY", "XZ", "YX", "YY", "YZ", "ZX", "ZY", "ZZ"};
    for (int c = 0; c < 9; ++c) a->SetComponentName(c, names[c]);
  }
  return a;
}

template <typename Field>
vtkSmartPointer<vtkDataArray> make_array(const Field& f, std::size_t n_items, const char* kind) {
  return make_array(f.name, f.n_components, f.values, f.type, n_items, kind);
}

/// Names as written (two names that differ only in bytes that are not
/// UTF-8 are written alike).
template <typename Field>
void check_unique_names(const std::vector<Field>& fields, const char* kind) {
  std::set<std::string> names;
  for (const auto& f : fields) {
    if (!names.insert(xml_escaped(f.name)).second) {
      throw std::invalid_argument(std::string(kind) + " field '" + printable(f.name) +
                                  "' given twice");
    }
  }
}

/// The points of a grid, in double precision.
vtkSmartPointer<vtkPoints> grid_points(const std::vector<Eigen::Vector3d>& points) {
  auto pts = vtkSmartPointer<vtkPoints>::New();
  pts->SetDataTypeToDouble();
  pts->SetNumberOfPoints(static_cast<vtkIdType>(points.size()));
  for (std::size_t i = 0; i < points.size(); ++i) {
    pts->SetPoint(static_cast<vtkIdType>(i), points[i].x(), points[i].y(), points[i].z());
  }
  return pts;
}

/// The cells of a grid of `n_points` points as offsets and connectivity;
/// std::invalid_argument, naming `file`, for a cell that refers to no point.
template <std::size_t N>
vtkSmartPointer<vtkCellArray> grid_cells(const fs::path& file,
                                         const std::vector<std::array<int, N>>& cells,
                                         std::size_t n_points) {
  vtkNew<vtkIdTypeArray> offsets;
  vtkNew<vtkIdTypeArray> connectivity;
  offsets->SetNumberOfValues(static_cast<vtkIdType>(cells.size() + 1));
  connectivity->SetNumberOfValues(static_cast<vtkIdType>(cells.size() * N));
  offsets->SetValue(0, 0);
  for (std::size_t e = 0; e < cells.size(); ++e) {
    for (std::size_t k = 0; k < N; ++k) {
      const int v = cells[e][k];
      if (v < 0 || static_cast<std::size_t>(v) >= n_points) {
        throw std::invalid_argument(file.string() + ": cell " + std::to_string(e) +
                                    " refers to point " + std::to_string(v) + ", outside [0, " +
                                    std::to_string(n_points) + ")");
      }
      connectivity->SetValue(static_cast<vtkIdType>(e * N + k), v);
    }
    offsets->SetValue(static_cast<vtkIdType>(e + 1), static_cast<vtkIdType>((e + 1) * N));
  }
  auto cell_array = vtkSmartPointer<vtkCellArray>::New();
  cell_array->SetData(offsets, connectivity);
  return cell_array;
}

/// The .vtu file of `grid`, encoded in memory; std::runtime_error, naming
/// `file`, if VTK cannot encode it.
std::string encoded_vtu(const fs::path& file, vtkUnstructuredGrid* grid,
                        const VtuOptions& options) {
  // VTK writes the appended format in hundreds of small writes and seeks per
  // file; writing to memory and then the whole file at once is much faster.
  vtkNew<vtkXMLUnstructuredGridWriter> writer;
  writer->WriteToOutputStringOn();
  writer->SetInputData(grid);
  writer->SetDataModeToAppended();
  // Base64, not raw: meshio's reader of raw appended data renumbers the
  // offsets in place and can read the wrong array (docs/outputs.md, "VTU
  // compression").
  writer->EncodeAppendedDataOn();
  // docs/outputs.md, "VTU compression": zlib is what every reader reads
  // (ParaView, meshio, VisIt); LZ4 is faster to write but meshio cannot read
  // it; LZMA is the smallest and the slowest.
  switch (options.compression) {
    case VtuCompression::zlib:
      writer->SetCompressorTypeToZLib();
      break;
    case VtuCompression::lz4:
      writer->SetCompressorTypeToLZ4();
      break;
    case VtuCompression::lzma:
      writer->SetCompressorTypeToLZMA();
      break;
    case VtuCompression::none:
      writer->SetCompressorTypeToNone();
      break;
  }
  if (options.compression_level < 1 || options.compression_level > 9)
    throw std::invalid_argument(file.string() + ": compression level " +
                                std::to_string(options.compression_level) + " outside [1, 9]");
  if (options.compression != VtuCompression::none)
    writer->SetCompressionLevel(options.compression_level);
  writer->SetHeaderTypeToUInt64();
  const int ok = writer->Write();
  const unsigned long code = writer->GetErrorCode();
  // In memory: a failure here is VTK's, not the file system's.
  if (ok != 1 || code != vtkErrorCode::NoError)
    throw std::runtime_error(file.string() + ": VTK could not encode the grid (" +
                             vtk_error_text(code) + ")");
  return writer->GetOutputString();
}

/// The field data of a grid: one single-tuple array per datum.
void add_field_data(vtkUnstructuredGrid* grid, const std::vector<FieldDatum>& data) {
  std::set<std::string> names;
  for (const auto& d : data) {
    if (!names.insert(xml_escaped(d.name)).second)
      throw std::invalid_argument("field datum '" + printable(d.name) + "' given twice");
    grid->GetFieldData()->AddArray(make_array(d.name, 1, {d.value}, d.type, 1, "field-data"));
  }
}

/// VTK does not promise that pipelines in different threads are independent
/// (object factories, output window): cases running at once take turns, on
/// one mutex for every kind of grid.
std::mutex& vtk_pipeline_mutex() {
  static std::mutex mutex;
  return mutex;
}

template <std::size_t N>
void write_cells(const fs::path& file, const std::vector<Eigen::Vector3d>& points,
                 const std::vector<std::array<int, N>>& cells, int vtk_type,
                 const std::vector<PointField>& point_fields,
                 const std::vector<CellField>& cell_fields, const VtuOptions& options) {
  const std::lock_guard<std::mutex> lock(vtk_pipeline_mutex());
  const std::size_t n_points = points.size();
  check_unique_names(point_fields, "point");
  check_unique_names(cell_fields, "cell");

  vtkNew<vtkUnstructuredGrid> grid;
  grid->SetPoints(grid_points(points));
  grid->SetCells(vtk_type, grid_cells(file, cells, n_points));

  for (const auto& f : point_fields)
    grid->GetPointData()->AddArray(make_array(f, n_points, "point"));
  for (const auto& f : cell_fields)
    grid->GetCellData()->AddArray(make_array(f, cells.size(), "cell"));
  add_field_data(grid, options.field_data);

  write_text_atomically(file, encoded_vtu(file, grid, options));
}

}  // namespace

void append_number(std::string& out, double v) {
  char buf[32];
  const auto result = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, result.ptr);
}

std::string full_precision(double v) {
  std::string s;
  append_number(s, v);
  return s;
}

void write_vtu(const fs::path& file, const std::vector<Eigen::Vector3d>& points,
               const std::vector<std::array<int, 8>>& hexes,
               const std::vector<PointField>& point_fields,
               const std::vector<CellField>& cell_fields, const VtuOptions& options) {
  write_cells(file, points, hexes, VTK_HEXAHEDRON, point_fields, cell_fields, options);
}

void write_vtu(const fs::path& file, const std::vector<Eigen::Vector3d>& points,
               const std::vector<std::array<int, 4>>& quads,
               const std::vector<PointField>& point_fields,
               const std::vector<CellField>& cell_fields, const VtuOptions& options) {
  write_cells(file, points, quads, VTK_QUAD, point_fields, cell_fields, options);
}

static_assert(static_cast<int>(VtkCellType::triangle) == VTK_TRIANGLE &&
              static_cast<int>(VtkCellType::quad) == VTK_QUAD &&
              static_cast<int>(VtkCellType::tetra) == VTK_TETRA &&
              static_cast<int>(VtkCellType::hexahedron) == VTK_HEXAHEDRON &&
              static_cast<int>(VtkCellType::wedge) == VTK_WEDGE);

void write_vtu(const fs::path& file, const std::vector<Eigen::Vector3d>& points,
               const MixedCells& cells, const std::vector<PointField>& point_fields,
               const std::vector<CellField>& cell_fields, const VtuOptions& options) {
  const std::lock_guard<std::mutex> lock(vtk_pipeline_mutex());
  const std::size_t n_cells = cells.types.size();
  if (cells.offsets.size() != n_cells + 1 || cells.offsets.front() != 0 ||
      static_cast<std::size_t>(cells.offsets.back()) != cells.connectivity.size() ||
      !std::is_sorted(cells.offsets.begin(), cells.offsets.end()))
    throw std::invalid_argument(file.string() + ": inconsistent cell offsets");
  for (const int v : cells.connectivity)
    if (v < 0 || static_cast<std::size_t>(v) >= points.size())
      throw std::invalid_argument(file.string() + ": a cell refers to point " + std::to_string(v) +
                                  ", outside [0, " + std::to_string(points.size()) + ")");
  check_unique_names(point_fields, "point");
  check_unique_names(cell_fields, "cell");
  vtkNew<vtkIdTypeArray> offsets, connectivity;
  offsets->SetNumberOfValues(static_cast<vtkIdType>(n_cells + 1));
  for (std::size_t e = 0; e <= n_cells; ++e)
    offsets->SetValue(static_cast<vtkIdType>(e), cells.offsets[e]);
  connectivity->SetNumberOfValues(static_cast<vtkIdType>(cells.connectivity.size()));
  for (std::size_t k = 0; k < cells.connectivity.size(); ++k)
    connectivity->SetValue(static_cast<vtkIdType>(k), cells.connectivity[k]);
  vtkNew<vtkCellArray> cell_array;
  cell_array->SetData(offsets, connectivity);
  vtkNew<vtkUnsignedCharArray> types;
  types->SetNumberOfValues(static_cast<vtkIdType>(n_cells));
  for (std::size_t e = 0; e < n_cells; ++e)
    types->SetValue(static_cast<vtkIdType>(e), static_cast<unsigned char>(cells.types[e]));

  vtkNew<vtkUnstructuredGrid> grid;
  grid->SetPoints(grid_points(points));
  grid->SetCells(types, cell_array);
  for (const auto& f : point_fields)
    grid->GetPointData()->AddArray(make_array(f, points.size(), "point"));
  for (const auto& f : cell_fields) grid->GetCellData()->AddArray(make_array(f, n_cells, "cell"));
  add_field_data(grid, options.field_data);
  write_text_atomically(file, encoded_vtu(file, grid, options));
}

void write_text_atomically(const fs::path& file, const std::string& content) {
  require_regular_file_or_nothing(file);
  make_parent(file);
  const fs::path tmp = temporary_name(file);
  // A new file, never one planted under the temporary name (nor a link).
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw_file_error("write", file, errno);
  const char* data = content.data();
  std::size_t left = content.size();
  int err = 0;
  while (left > 0) {
    const ssize_t n = ::write(fd, data, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      err = errno;
      break;
    }
    data += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) {
    remove_quietly(tmp);
    throw_file_error("write", file, err);
  }
  commit(tmp, file);
}

// --- PvdCollection --------------------------------------------------------------------

PvdCollection::PvdCollection(fs::path file) : file_(std::move(file)) {
  write();
}

void PvdCollection::relocate(fs::path file) {
  file_ = std::move(file);
}

void PvdCollection::add(double time, const std::string& relative_vtu_name) {
  if (!std::isfinite(time)) {
    throw std::invalid_argument(file_.string() + ": non-finite time for " + relative_vtu_name);
  }
  steps_.push_back(Step{time, relative_vtu_name});
  write();
}

void PvdCollection::write() const {
  std::string xml =
      "<?xml version=\"1.0\"?>\n"
      "<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
      "  <Collection>\n";
  for (const auto& s : steps_) {
    xml += "    <DataSet timestep=\"" + full_precision(s.time) +
           "\" group=\"\" part=\"0\" file=\"" + xml_escaped(s.file) + "\"/>\n";
  }
  xml += "  </Collection>\n</VTKFile>\n";
  write_text_atomically(file_, xml);
}

// --- CsvWriter ------------------------------------------------------------------------

void CsvWriter::Closer::operator()(std::FILE* f) const {
  std::fclose(f);
}

CsvWriter::CsvWriter(fs::path file, std::vector<std::string> columns)
    : file_(std::move(file)), n_columns_(columns.size()) {
  if (columns.empty()) throw std::invalid_argument(file_.string() + ": a CSV file needs columns");
  std::string header;
  std::set<std::string> written;
  for (const auto& c : columns) {
    if (c.empty()) throw std::invalid_argument(file_.string() + ": empty CSV column name");
    const std::string field = csv_field(c);
    if (!written.insert(field).second) {
      throw std::invalid_argument(file_.string() + ": CSV column '" + printable(c) +
                                  "' given twice");
    }
    if (!header.empty()) header += ',';
    header += field;
  }
  header += '\n';

  const fs::path partial = partial_path();
  require_regular_file_or_nothing(file_);
  require_regular_file_or_nothing(partial);
  make_parent(file_);
  // A complete history of an earlier run is no longer current, and the
  // history of an interrupted one is replaced.
  for (const fs::path& stale : {file_, partial}) {
    if (::unlink(stale.c_str()) != 0 && errno != ENOENT)
      throw_file_error("remove the earlier", stale, errno);
  }
  const int fd =
      ::open(partial.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw_file_error("create", partial, errno);
  out_.reset(::fdopen(fd, "w"));
  if (!out_) {
    const int error = errno;
    ::close(fd);
    throw_file_error("create", partial, error);
  }
  if (std::fputs(header.c_str(), out_.get()) < 0 || std::fflush(out_.get()) != 0)
    throw_file_error("write", partial, errno);
}

CsvWriter::~CsvWriter() = default;

fs::path CsvWriter::partial_path() const {
  fs::path p = file_;
  p += ".partial";
  return p;
}

void CsvWriter::append_row(const std::vector<double>& values) {
  if (!out_) throw std::logic_error(file_.string() + ": append_row after finish()");
  if (values.size() != n_columns_) {
    throw std::invalid_argument(file_.string() + ": expected " + std::to_string(n_columns_) +
                                " values in a row, got " + std::to_string(values.size()));
  }
  std::string line;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) line += ',';
    append_number(line, values[i]);
  }
  line += '\n';
  if (std::fputs(line.c_str(), out_.get()) < 0 || std::fflush(out_.get()) != 0)
    throw_file_error("write", partial_path(), errno);
  ++n_rows_;
}

void CsvWriter::finish() {
  if (!out_) return;
  const bool flushed = std::fflush(out_.get()) == 0;
  const bool closed = std::fclose(out_.release()) == 0;
  if (!flushed || !closed) throw_file_error("write", partial_path(), errno);
  require_regular_file_or_nothing(file_);
  if (::rename(partial_path().c_str(), file_.c_str()) != 0) throw_file_error("write", file_, errno);
}

void CsvWriter::relocate(fs::path file) {
  file_ = std::move(file);
}

}  // namespace bipo
