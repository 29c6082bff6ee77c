#pragma once
// Delegate metadata parsers: turn the metadata bytes a backend attaches to
// its profiling events (event_tracer_end_profiling_delegate) into named
// columns for the Inspector (ExecuTorch's delegate_metadata_parser). One per
// backend id, in a registry; a backend without one gets its bytes as hex.
//
// A parser must accept any bytes: metadata comes from an untrusted file. On
// bytes it cannot read it returns one column saying so, never throws.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace etc::devtools {

using MetadataColumns = std::vector<std::pair<std::string, std::string>>;

// What a parser may ask about the delegate whose event it reads: the ONNX
// nodes behind another of its integer identifiers ("'add_3' (Add)"; empty
// when the map has no such entry).
struct MetadataContext {
  std::string backend_id;
  std::function<std::string(int64_t)> describe_id;
};

using MetadataParser =
    std::function<MetadataColumns(const uint8_t* data, size_t size, const MetadataContext&)>;

// Replaces any parser registered for `backend_id`.
void register_metadata_parser(std::string_view backend_id, MetadataParser parser);
// The parser for `backend_id`, or hex_metadata when none is registered.
MetadataParser metadata_parser_for(std::string_view backend_id);
// The parsers of the backends built into etc (demo, xnnpack).
void register_builtin_metadata_parsers();

// {"metadata", "0a0b…"}; nothing for empty bytes.
MetadataColumns hex_metadata(const uint8_t* data, size_t size, const MetadataContext&);

}  // namespace etc::devtools
