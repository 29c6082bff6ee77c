// Step 1–2 of the import: read, parse, inline external data, check, infer shapes.
#include <algorithm>
#include <filesystem>
#include <limits>

#include "compiler/common/compile_error.h"
#include "compiler/common/limits.h"
#include "compiler/common/regular_file.h"
#include "compiler/import/onnx/importer.h"
#include "compiler/import/onnx/isolated_check.h"
#include "compiler/import/onnx/tensor_proto.h"

namespace etc::onnx_import {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void fail_file(const std::string& path, const std::string& reason) {
  throw CompileError(path + ": " + reason);
}

// Replaces a tensor's external-data reference by the bytes it points to.
void inline_external(onnx::TensorProto& t, const std::string& model_path) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location")
      location = kv.value();
    else if (kv.key() == "offset")
      offset = std::stoll(kv.value());
    else if (kv.key() == "length")
      length = std::stoll(kv.value());
  }
  const std::string what = "initializer '" + t.name() + "'";
  if (location.empty()) fail_file(model_path, what + ": external data has no location");
  const fs::path rel(location);
  if (rel.is_absolute() || rel.lexically_normal().string().rfind("..", 0) == 0)
    fail_file(model_path, what + ": external data location '" + location +
                              "' must be a relative path inside the model's folder");
  const fs::path folder =
      fs::path(model_path).parent_path().empty() ? fs::path(".") : fs::path(model_path).parent_path();
  const fs::path file = folder / rel;
  // The check above is lexical; a symbolic link inside the folder may still
  // point outside it. Compare where both really are.
  std::error_code ec;
  if (!fs::exists(file, ec))
    fail_file(model_path, what + ": external data file '" + file.string() + "' is missing or unreadable");
  const fs::path real_folder = fs::canonical(folder, ec);
  const fs::path real_file = ec ? fs::path() : fs::weakly_canonical(file, ec);
  if (ec)
    fail_file(model_path, what + ": external data file '" + file.string() + "' is missing or unreadable");
  const std::string folder_prefix = (real_folder / "").string();
  if (real_file.string().rfind(folder_prefix, 0) != 0)
    fail_file(model_path, what + ": external data location '" + location +
                              "' leads outside the model's folder (to '" + real_file.string() + "')");
  std::string bytes;
  uint64_t size = 0;
  const std::string error = read_regular_file_range(file.string(), offset, length, bytes, size);
  if (!error.empty()) fail_file(model_path, what + ": external data file '" + file.string() + "' " + error);
  t.set_raw_data(std::move(bytes));
  t.clear_external_data();
  t.set_data_location(onnx::TensorProto_DataLocation_DEFAULT);
}

void inline_graph_external(onnx::GraphProto& g, const std::string& path) {
  for (auto& t : *g.mutable_initializer())
    if (t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) inline_external(t, path);
  for (auto& n : *g.mutable_node())
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_t() && a.t().data_location() == onnx::TensorProto_DataLocation_EXTERNAL)
        inline_external(*a.mutable_t(), path);
      if (a.has_g()) inline_graph_external(*a.mutable_g(), path);
    }
}

// Attributes that are positive counts in every ONNX op that has them, which
// ONNX's own shape inference divides by (a zero stride crashed it with
// SIGFPE). The checker lets any value through; they are refused here, before
// shape inference runs, naming the node.
constexpr const char* kPositiveAttributes[] = {"strides", "dilations", "kernel_shape", "blocksize", "group"};

void check_positive_attributes(const onnx::GraphProto& g, const std::string& path) {
  for (const auto& n : g.node()) {
    for (const auto& a : n.attribute()) {
      if (a.has_g()) check_positive_attributes(a.g(), path);
      for (const auto& sub : a.graphs()) check_positive_attributes(sub, path);
      bool positive_count = false;
      for (const char* name : kPositiveAttributes) positive_count = positive_count || a.name() == name;
      if (!positive_count) continue;
      const bool bad = a.type() == onnx::AttributeProto::INT
                           ? a.i() <= 0
                           : std::any_of(a.ints().begin(), a.ints().end(), [](int64_t v) { return v <= 0; });
      if (!bad) continue;
      std::string got = std::to_string(a.i());
      if (a.type() != onnx::AttributeProto::INT) {
        got = "[";
        for (int k = 0; k < a.ints_size(); ++k) got += (k ? ", " : "") + std::to_string(a.ints(k));
        got += "]";
      }
      fail_file(path, "node '" + n.name() + "' (" + n.op_type() + "): attribute '" + a.name() +
                          "' must be positive, got " + got);
    }
  }
}

// Graph inputs with static dims are held to the tensor limits before libonnx
// sees them: its shape inference would otherwise work on an input of 2^40
// dims for as long as that takes (ConstantOfShape makes a rank of it).
void check_declared_input_sizes(const onnx::GraphProto& g, const std::string& path) {
  for (const auto& in : g.input()) {
    if (!in.type().has_tensor_type() || !in.type().tensor_type().has_shape()) continue;
    const auto& shape = in.type().tensor_type().shape();
    if (shape.dim_size() > kMaxRank) continue;  // refused with its own message at bind time
    TensorSpec spec;
    spec.dtype = dtype_from_onnx(in.type().tensor_type().elem_type());
    if (spec.dtype == DType::Invalid) continue;
    bool fixed = true;
    for (const auto& d : shape.dim()) {
      fixed = fixed && d.has_dim_value() && d.dim_value() >= 0;
      if (fixed) spec.shape.push_back(d.dim_value());
    }
    if (!fixed) continue;
    if (const std::string error = tensor_size_error(spec); !error.empty())
      fail_file(path, "input '" + in.name() + "': " + error);
  }
}

}  // namespace

onnx::ModelProto load_model(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) fail_file(path, "no such file");
  if (fs::is_directory(path, ec)) fail_file(path, "is a directory, not an ONNX model");
  // Parsed from the page cache: a copy would be as large as the weights.
  MappedFile file;
  if (const std::string error = map_regular_file(path, file); !error.empty()) fail_file(path, error);
  if (file.size() == 0) fail_file(path, "empty file, not an ONNX model");
  if (file.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
    fail_file(path,
              "holds " + std::to_string(file.size()) +
                  " bytes, above protobuf's 2 GiB limit for one message (an ONNX model this large keeps "
                  "its weights as external data)");
  onnx::ModelProto model;
  if (!model.ParseFromArray(file.data(), static_cast<int>(file.size())))
    fail_file(path, "not a valid ONNX model (protobuf parse failed: corrupt or truncated file?)");
  if (!model.has_graph() || model.ir_version() <= 0)
    fail_file(path, "not a valid ONNX model (no graph or IR version; is this an ONNX file?)");
  inline_graph_external(*model.mutable_graph(), path);
  // Attribute values libonnx would divide by, refused before it sees them.
  check_positive_attributes(model.graph(), path);
  check_declared_input_sizes(model.graph(), path);
  check_and_infer(model, path);
  return model;
}

}  // namespace etc::onnx_import
