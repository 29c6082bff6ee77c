#include "tools/etc/tensor_io.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <iterator>

#include "compiler/common/regular_file.h"
#include "tools/etc/atomic_file.h"
#include "tools/etc/tool_error.h"

namespace etc::io {

using cli::ToolError;
namespace {

std::string read_all(const std::string& path) {
  std::string bytes;
  if (const std::string error = read_regular_file(path, bytes); !error.empty())
    throw ToolError(path + ": " + error);
  return bytes;
}

// The "shape" field of a .npy header: a Python tuple of non-negative
// integers, "()" for a scalar, "(3,)" for one dimension. Anything else — a
// negative or non-numeric dim, a rank above kMaxRank, dims whose product
// overflows — is refused, naming the file.
Shape parse_npy_shape(const std::string& field, const std::string& path) {
  const auto bad = [&](const std::string& why) {
    return ToolError(path + ": .npy shape " + field + " " + why);
  };
  const size_t open = field.find('('), close = field.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) throw bad("is not a tuple");
  Shape shape;
  uint64_t elements = 1;
  std::string item;
  const auto finish = [&](bool last) {
    item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
    if (item.empty()) {
      if (last) return;
      throw bad("has an empty entry");
    }
    if (item[0] == '-') throw bad("has a negative dim");
    if (item.size() > 18 ||
        !std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw bad("has a dim that is not a non-negative integer");
    const uint64_t dim = std::stoull(item);
    if (shape.rank() == kMaxRank) throw bad("has more than " + std::to_string(kMaxRank) + " dims");
    if (dim != 0 && elements > (uint64_t{1} << 62) / dim)
      throw bad("holds more elements than can be counted");
    elements *= dim;
    shape.push_back(static_cast<int64_t>(dim));
    item.clear();
  };
  for (size_t i = open + 1; i < close; ++i) {
    if (field[i] == ',')
      finish(false);
    else
      item += field[i];
  }
  finish(true);
  return shape;
}

const char* npy_descr(DType d) {
  switch (d) {
    case DType::Float32: return "<f4";
    case DType::Float64: return "<f8";
    case DType::Int64: return "<i8";
    case DType::Int32: return "<i4";
    case DType::Bool: return "|b1";
    case DType::UInt8: return "|u1";
    case DType::Int8: return "|i1";
    case DType::Invalid: break;
  }
  return "";
}

DType dtype_from_descr(const std::string& d) {
  for (DType t :
       {DType::Float32, DType::Float64, DType::Int64, DType::Int32, DType::Bool, DType::UInt8, DType::Int8}) {
    const std::string want = npy_descr(t);
    if (d == want || (want[0] == '|' && d == "<" + want.substr(1)) || (want[0] == '|' && d == want.substr(1)))
      return t;
  }
  return DType::Invalid;
}

// Value of `'key': value` in a numpy header dict, up to the next ',' or '}' (or ')' for tuples).
std::string header_field(const std::string& header, const std::string& key, const std::string& path) {
  const size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) throw ToolError(path + ": .npy header has no '" + key + "'");
  size_t p = header.find(':', k);
  if (p == std::string::npos) throw ToolError(path + ": malformed .npy header");
  ++p;
  while (p < header.size() && header[p] == ' ') ++p;
  size_t end;
  if (p < header.size() && header[p] == '(')
    end = header.find(')', p) + 1;
  else
    end = header.find_first_of(",}", p);
  if (end == std::string::npos || end == 0) throw ToolError(path + ": malformed .npy header");
  return header.substr(p, end - p);
}

}  // namespace

OwnedTensor read_npy(const std::string& path) {
  const std::string bytes = read_all(path);
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    throw ToolError(path + ": not a .npy file (bad magic)");
  const int major = static_cast<uint8_t>(bytes[6]);
  size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw ToolError(path + ": truncated .npy header");
    uint32_t len = 0;
    std::memcpy(&len, bytes.data() + 8, 4);
    header_len = len;
    header_start = 12;
  } else {
    throw ToolError(path + ": unsupported .npy version " + std::to_string(major));
  }
  if (header_start + header_len > bytes.size()) throw ToolError(path + ": truncated .npy header");
  const std::string header = bytes.substr(header_start, header_len);
  std::string descr = header_field(header, "descr", path);
  descr.erase(std::remove(descr.begin(), descr.end(), '\''), descr.end());
  if (header_field(header, "fortran_order", path).find("True") != std::string::npos)
    throw ToolError(path + ": Fortran-order .npy arrays are not supported");
  OwnedTensor t;
  t.spec.dtype = dtype_from_descr(descr);
  if (t.spec.dtype == DType::Invalid) throw ToolError(path + ": unsupported .npy dtype '" + descr + "'");
  t.spec.shape = parse_npy_shape(header_field(header, "shape", path), path);
  const size_t data_start = header_start + header_len;
  if (bytes.size() - data_start != t.spec.nbytes())
    throw ToolError(path + ": .npy data holds " + std::to_string(bytes.size() - data_start) +
                    " bytes, its header needs " + std::to_string(t.spec.nbytes()));
  t.bytes.assign(bytes.begin() + static_cast<std::ptrdiff_t>(data_start), bytes.end());
  return t;
}

namespace {

bool ends_with(const std::string& path, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return path.size() >= n && path.compare(path.size() - n, n, suffix) == 0;
}

}  // namespace

bool is_tensor_proto_path(const std::string& path) { return ends_with(path, ".pb"); }

OwnedTensor read_npy_file(const std::string& path) {
  if (ends_with(path, ".npy")) return read_npy(path);
  throw ToolError(path + ": unknown tensor file type (expected .npy or .pb)");
}

std::vector<uint8_t> encode_npy(const TensorSpec& spec, const void* data) {
  std::string shape = "(";
  for (int i = 0; i < spec.shape.rank(); ++i) shape += std::to_string(spec.shape[i]) + ", ";
  if (spec.shape.rank() > 1)
    shape.resize(shape.size() - 1), shape.back() = ')';
  else if (spec.shape.rank() == 1)
    shape.resize(shape.size() - 1), shape += ")";
  else
    shape += ")";
  std::string header = std::string("{'descr': '") + npy_descr(spec.dtype) +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so the data starts at a multiple of 64, header ends with '\n'.
  const size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header += '\n';
  static constexpr uint8_t kMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  std::vector<uint8_t> out;
  out.reserve(sizeof(kMagic) + 2 + header.size() + spec.nbytes());
  out.insert(out.end(), std::begin(kMagic), std::end(kMagic));
  out.push_back(static_cast<uint8_t>(header.size() & 0xff));
  out.push_back(static_cast<uint8_t>(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  const auto* p = static_cast<const uint8_t*>(data);
  out.insert(out.end(), p, p + spec.nbytes());
  return out;
}

void write_npy(const std::string& path, const TensorSpec& spec, const void* data) {
  cli::write_file_atomically(path, encode_npy(spec, data));
}

}  // namespace etc::io
