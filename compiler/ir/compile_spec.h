#pragma once
// Ahead-of-time options handed to a backend: CompileSpec (key + opaque bytes)
// and DelegationSpec (which backend, with which specs). Partitioners return one
// DelegationSpec per tag; to_backend passes the specs to the backend's
// preprocess and stores them in the program next to the processed blob, where
// the runtime half of the backend reads them again at init.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace etc {

struct CompileSpec {
  std::string key;
  std::vector<uint8_t> value;

  // A spec whose value is the UTF-8 bytes of `text` (no terminator).
  static CompileSpec from_string(std::string key, std::string_view text) {
    return CompileSpec{std::move(key), std::vector<uint8_t>(text.begin(), text.end())};
  }
  std::string value_string() const { return std::string(value.begin(), value.end()); }
  bool operator==(const CompileSpec&) const = default;
};

struct DelegationSpec {
  std::string backend_id;
  std::vector<CompileSpec> compile_specs;
  bool operator==(const DelegationSpec&) const = default;
};

}  // namespace etc
