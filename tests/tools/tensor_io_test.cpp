#include "tools/etc/tensor_io.h"

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tests/support/temp_files.h"
#include "tools/etc/tool_error.h"

using namespace etc;

namespace {

std::string temp_path(const std::string& name) { return etc::testing::test_temp_path("tensor_io_" + name); }

}  // namespace

TEST_CASE(".npy files round-trip every dtype and rank", "[tensor_io]") {
  const std::vector<TensorSpec> specs = {
      {DType::Float32, {2, 3}}, {DType::Int64, {5}},          {DType::Bool, {}}, {DType::UInt8, {1, 1, 4}},
      {DType::Float64, {0, 3}}, {DType::Int32, {2, 2, 2, 2}}, {DType::Int8, {7}}};
  for (const TensorSpec& spec : specs) {
    std::vector<uint8_t> data(spec.nbytes());
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = static_cast<uint8_t>(spec.dtype == DType::Bool ? i % 2 : i * 7);
    const std::string path = temp_path("roundtrip.npy");
    io::write_npy(path, spec, data.data());
    const io::OwnedTensor back = io::read_npy(path);
    INFO(dtype_name(spec.dtype) << spec.shape.str());
    CHECK(back.spec == spec);
    CHECK(back.bytes == data);
    std::remove(path.c_str());
  }
}

TEST_CASE(".npy data starts on a 64-byte boundary", "[tensor_io]") {
  const float v[3] = {1, 2, 3};
  const auto bytes = io::encode_npy(TensorSpec{DType::Float32, {3}}, v);
  CHECK((bytes.size() - sizeof(v)) % 64 == 0);
}

TEST_CASE("a .npy whose data is shorter than its header says is refused", "[tensor_io]") {
  const float v[4] = {1, 2, 3, 4};
  auto bytes = io::encode_npy(TensorSpec{DType::Float32, {4}}, v);
  bytes.resize(bytes.size() - 4);
  const std::string path = temp_path("short.npy");
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  CHECK_THROWS_WITH(io::read_npy(path), Catch::Contains("short.npy") && Catch::Contains("needs 16"));
  std::remove(path.c_str());
}

// A .npy of 4 float32 values whose header's shape field reads `shape`.
std::string npy_with_shape(const std::string& shape) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string text = std::string("\x93NUMPY\x01\x00", 8);
  text += static_cast<char>(header.size() & 0xff);
  text += static_cast<char>(header.size() >> 8);
  text += header;
  const float v[4] = {1, 2, 3, 4};
  text.append(reinterpret_cast<const char*>(v), sizeof(v));
  const std::string path = temp_path("shape.npy");
  std::ofstream(path, std::ios::binary).write(text.data(), static_cast<std::streamsize>(text.size()));
  return path;
}

TEST_CASE("a .npy header shape must be a tuple of non-negative dims", "[tensor_io]") {
  CHECK(io::read_npy(npy_with_shape("(4,)")).spec.shape == Shape{4});
  CHECK(io::read_npy(npy_with_shape("(2,2)")).spec.shape == (Shape{2, 2}));
  CHECK(io::read_npy(npy_with_shape("(1, 4)")).spec.shape == (Shape{1, 4}));
  CHECK_THROWS_WITH(io::read_npy(npy_with_shape("(-4,)")),
                    Catch::Contains("shape.npy") && Catch::Contains("negative dim"));
  CHECK_THROWS_WITH(io::read_npy(npy_with_shape("(-2, -2)")), Catch::Contains("negative dim"));
  CHECK_THROWS_WITH(io::read_npy(npy_with_shape("(x,)")), Catch::Contains("not a non-negative integer"));
  CHECK_THROWS_WITH(io::read_npy(npy_with_shape("(,4)")), Catch::Contains("empty entry"));
  CHECK_THROWS_WITH(io::read_npy(npy_with_shape("(4294967296, 4294967296, 4294967296)")),
                    Catch::Contains("more elements than can be counted"));
  std::remove(temp_path("shape.npy").c_str());
}

TEST_CASE("unknown tensor file types are refused by name", "[tensor_io]") {
  CHECK_THROWS_AS(io::read_tensor_file("input.bin"), cli::ToolError);
  CHECK_THROWS_WITH(io::read_tensor_file("/no/such/x.npy"), Catch::Contains("/no/such/x.npy"));
}
