// DelegateMappingBuilder: generated and manual identifiers, int and string
// keys, every refusal, and that a refused insert changes nothing.
#include "compiler/backend/delegate_mapping_builder.h"

#include <catch2/catch.hpp>

#include "compiler/common/compile_error.h"

using namespace etc;
using Catch::Matchers::Contains;

namespace {

ir::Node make_node(std::string name, std::string op_type, std::vector<int32_t> handles) {
  ir::Node n;
  n.id = 3;
  n.op = EdgeOp::Conv;
  n.meta.onnx_name = std::move(name);
  n.meta.onnx_op_type = std::move(op_type);
  n.meta.debug_handles = std::move(handles);
  return n;
}

const IntDelegateDebugMap& int_map(const DelegateMappingBuilder& b) {
  return std::get<IntDelegateDebugMap>(b.get_delegate_mapping());
}

const StringDelegateDebugMap& string_map(const DelegateMappingBuilder& b) {
  return std::get<StringDelegateDebugMap>(b.get_delegate_mapping());
}

}  // namespace

TEST_CASE("generated identifiers count from zero in insert order", "[backend][delegate_mapping]") {
  const ir::Node conv = make_node("conv_3", "Conv", {7, 3});
  const ir::Node relu = make_node("relu_4", "Relu", {3, 9});
  DelegateMappingBuilder b(/*generated_identifiers=*/true);
  CHECK(b.insert_delegate_mapping_entry(std::vector<const ir::Node*>{&conv, &relu}) == DelegateIdentifier{0});
  CHECK(b.insert_delegate_mapping_entry(std::vector<int32_t>{5, 5, 2}) == DelegateIdentifier{1});
  CHECK(b.insert_delegate_mapping_entry(std::vector<const ir::Node*>{&relu}) == DelegateIdentifier{2});
  const IntDelegateDebugMap expected{{0, {3, 7, 9}}, {1, {2, 5}}, {2, {3, 9}}};
  CHECK(int_map(b) == expected);
  CHECK(delegate_debug_map_size(b.get_delegate_mapping()) == 3);
}

TEST_CASE("manual identifiers may be ints or strings, one type per map", "[backend][delegate_mapping]") {
  const ir::Node conv = make_node("conv_3", "Conv", {4});
  DelegateMappingBuilder ints;
  CHECK(ints.insert_delegate_mapping_entry(std::vector<const ir::Node*>{&conv},
                                           DelegateIdentifier{int64_t{42}}) == DelegateIdentifier{42});
  CHECK(ints.insert_delegate_mapping_entry(std::vector<int32_t>{1}, DelegateIdentifier{int64_t{-5}}) ==
        DelegateIdentifier{-5});
  CHECK(int_map(ints) == IntDelegateDebugMap{{-5, {1}}, {42, {4}}});

  DelegateMappingBuilder strings;
  CHECK(strings.insert_delegate_mapping_entry(std::vector<int32_t>{2, 1}, DelegateIdentifier{"conv+relu"}) ==
        DelegateIdentifier{"conv+relu"});
  CHECK(strings.insert_delegate_mapping_entry(std::vector<const ir::Node*>{&conv},
                                              DelegateIdentifier{"conv"}) == DelegateIdentifier{"conv"});
  CHECK(string_map(strings) == StringDelegateDebugMap{{"conv", {4}}, {"conv+relu", {1, 2}}});
}

TEST_CASE("an empty builder holds an empty int map", "[backend][delegate_mapping]") {
  CHECK(int_map(DelegateMappingBuilder()).empty());
  CHECK(int_map(DelegateMappingBuilder(true)).empty());
}

TEST_CASE("negative debug handles are dropped", "[backend][delegate_mapping]") {
  const ir::Node fused = make_node("add_1", "Add", {-1, 6, 6});
  DelegateMappingBuilder b(true);
  b.insert_delegate_mapping_entry(std::vector<const ir::Node*>{&fused});
  b.insert_delegate_mapping_entry(std::vector<int32_t>{-3, 8});
  CHECK(int_map(b) == IntDelegateDebugMap{{0, {6}}, {1, {8}}});
}

TEST_CASE("naming an identifier in generated mode is refused", "[backend][delegate_mapping]") {
  DelegateMappingBuilder b(true);
  CHECK_THROWS_WITH(b.insert_delegate_mapping_entry(std::vector<int32_t>{1}, DelegateIdentifier{int64_t{0}}),
                    Contains("generated") && Contains("do not pass one"));
  CHECK_THROWS_AS(b.insert_delegate_mapping_entry(std::vector<int32_t>{1}, DelegateIdentifier{"x"}),
                  CompileError);
}

TEST_CASE("manual mode needs an identifier", "[backend][delegate_mapping]") {
  const ir::Node conv = make_node("conv_3", "Conv", {1});
  DelegateMappingBuilder b;
  CHECK_THROWS_WITH(b.insert_delegate_mapping_entry(std::vector<const ir::Node*>{&conv}),
                    Contains("node 'conv_3' (Conv)") && Contains("manual identifiers"));
}

TEST_CASE("a duplicate identifier is refused", "[backend][delegate_mapping]") {
  DelegateMappingBuilder ints;
  ints.insert_delegate_mapping_entry(std::vector<int32_t>{1}, DelegateIdentifier{int64_t{7}});
  CHECK_THROWS_WITH(
      ints.insert_delegate_mapping_entry(std::vector<int32_t>{2}, DelegateIdentifier{int64_t{7}}),
      Contains("identifier 7 is already in the map"));
  DelegateMappingBuilder strings;
  strings.insert_delegate_mapping_entry(std::vector<int32_t>{1}, DelegateIdentifier{"a"});
  CHECK_THROWS_WITH(strings.insert_delegate_mapping_entry(std::vector<int32_t>{2}, DelegateIdentifier{"a"}),
                    Contains("identifier 'a' is already in the map"));
  CHECK(int_map(ints).at(7) == DebugHandles{1});
  CHECK(string_map(strings).at("a") == DebugHandles{1});
}

TEST_CASE("int and string identifiers do not mix in one map", "[backend][delegate_mapping]") {
  DelegateMappingBuilder ints;
  ints.insert_delegate_mapping_entry(std::vector<int32_t>{1}, DelegateIdentifier{int64_t{0}});
  CHECK_THROWS_WITH(ints.insert_delegate_mapping_entry(std::vector<int32_t>{2}, DelegateIdentifier{"a"}),
                    Contains("one map holds one identifier type"));
  DelegateMappingBuilder strings;
  strings.insert_delegate_mapping_entry(std::vector<int32_t>{1}, DelegateIdentifier{"a"});
  CHECK_THROWS_WITH(
      strings.insert_delegate_mapping_entry(std::vector<int32_t>{2}, DelegateIdentifier{int64_t{1}}),
      Contains("one map holds one identifier type"));
  CHECK(int_map(ints).size() == 1);
  CHECK(string_map(strings).size() == 1);
}

TEST_CASE("an empty node or handle list is refused", "[backend][delegate_mapping]") {
  DelegateMappingBuilder b(true);
  CHECK_THROWS_WITH(b.insert_delegate_mapping_entry(std::vector<const ir::Node*>{}),
                    Contains("at least one node"));
  CHECK_THROWS_WITH(b.insert_delegate_mapping_entry(std::vector<int32_t>{}),
                    Contains("at least one debug handle"));
  CHECK_THROWS_AS(b.insert_delegate_mapping_entry(std::vector<const ir::Node*>{nullptr}), CompileError);
}

TEST_CASE("an entry without a valid debug handle is refused, naming the nodes",
          "[backend][delegate_mapping]") {
  const ir::Node bare = make_node("conv_3", "Conv", {});
  const ir::Node negative = make_node("relu_4", "Relu", {-1});
  DelegateMappingBuilder b(true);
  CHECK_THROWS_WITH(b.insert_delegate_mapping_entry(std::vector<const ir::Node*>{&bare}),
                    Contains("node 'conv_3' (Conv)") && Contains("no valid debug handle"));
  CHECK_THROWS_WITH(b.insert_delegate_mapping_entry(std::vector<const ir::Node*>{&bare, &negative}),
                    Contains("node 'relu_4' (Relu)") && Contains("only negative ones: [-1]"));
  CHECK_THROWS_WITH(b.insert_delegate_mapping_entry(std::vector<int32_t>{-1, -2}),
                    Contains("no valid debug handle"));
}

TEST_CASE("nodes without an ONNX name are named by op and id", "[backend][delegate_mapping]") {
  ir::Node n;
  n.id = 12;
  n.op = EdgeOp::Relu;
  DelegateMappingBuilder b(true);
  CHECK_THROWS_WITH(b.insert_delegate_mapping_entry(std::vector<const ir::Node*>{&n}),
                    Contains("node #12 (relu)"));
}

TEST_CASE("a failed insert does not use up a generated identifier", "[backend][delegate_mapping]") {
  const ir::Node bare = make_node("conv_3", "Conv", {});
  DelegateMappingBuilder b(true);
  CHECK(b.insert_delegate_mapping_entry(std::vector<int32_t>{1}) == DelegateIdentifier{0});
  CHECK_THROWS(b.insert_delegate_mapping_entry(std::vector<const ir::Node*>{&bare}));
  CHECK_THROWS(b.insert_delegate_mapping_entry(std::vector<int32_t>{-4}));
  CHECK_THROWS(b.insert_delegate_mapping_entry(std::vector<int32_t>{2}, DelegateIdentifier{int64_t{1}}));
  CHECK(int_map(b) == IntDelegateDebugMap{{0, {1}}});
  CHECK(b.insert_delegate_mapping_entry(std::vector<int32_t>{2}) == DelegateIdentifier{1});
}

TEST_CASE("a failed first manual insert does not fix the key type", "[backend][delegate_mapping]") {
  DelegateMappingBuilder b;
  CHECK_THROWS(b.insert_delegate_mapping_entry(std::vector<int32_t>{-1}, DelegateIdentifier{int64_t{0}}));
  CHECK(b.insert_delegate_mapping_entry(std::vector<int32_t>{3}, DelegateIdentifier{"s"}) ==
        DelegateIdentifier{"s"});
  CHECK(string_map(b) == StringDelegateDebugMap{{"s", {3}}});
}
