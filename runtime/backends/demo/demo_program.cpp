// Parser of the demo text program. The blob comes from a program file, so it
// is untrusted: every token is checked, and a message names the line.
#include "runtime/backends/demo/demo_program.h"

#include <algorithm>
#include <charconv>
#include <new>
#include <string>

#include "runtime/backends/demo/demo_format.h"

namespace etc::demo {
namespace {

struct OpInfo {
  std::string_view name;
  DemoOp op;
  uint8_t num_sources;
  const char* usage;
};

constexpr OpInfo kOps[] = {
    {"add", DemoOp::Add, 2, "dst a b"},
    {"sub", DemoOp::Sub, 2, "dst a b"},
    {"mul", DemoOp::Mul, 2, "dst a b"},
    {"sin", DemoOp::Sin, 1, "dst a"},
    {"cos", DemoOp::Cos, 1, "dst a"},
    {"relu", DemoOp::Relu, 1, "dst a"},
    {"mul_add", DemoOp::MulAdd, 3, "dst a b c"},
};

using Tokens = std::vector<std::string_view>;

Tokens split(std::string_view line) {
  Tokens tokens;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) tokens.push_back(line.substr(start, i - start));
  }
  return tokens;
}

// Canonical decimal: digits only, no sign, no leading zero.
bool parse_decimal(std::string_view s, uint64_t max, uint64_t& out) {
  if (s.empty() || s.size() > 20 || (s.size() > 1 && s[0] == '0')) return false;
  for (char ch : s)
    if (ch < '0' || ch > '9') return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && out <= max;
}

bool parse_float(std::string_view s, float& out) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

// A token as it may appear in a message: quoted, printable, short.
std::string quoted(std::string_view s) {
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < 32; ++i) out += (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
  return out + (s.size() > 32 ? "...'" : "'");
}

const char* prefix_of(DemoOperandKind kind) {
  switch (kind) {
    case DemoOperandKind::Input: return "in";
    case DemoOperandKind::Output: return "out";
    case DemoOperandKind::Constant: return "c";
    case DemoOperandKind::Buffer: return "t";
  }
  return "?";
}

class Parser {
 public:
  Result<std::unique_ptr<DemoProgram>> parse(std::string_view text);

 private:
  struct Declared {
    int64_t numel = 0;
    size_t offset = 0;
    bool written = false;
    int line = 0;
  };

  template <typename... Parts>
  Failure bad(const Parts&... parts) const {
    return fail(Error::InvalidProgram, "demo: program line ", std::to_string(line_), ": ", parts...);
  }
  Status header(std::string_view line);
  Status declaration(DemoOperandKind kind, const Tokens& tokens);
  Status instruction(const Tokens& tokens);
  Result<DemoOperand> operand(std::string_view name) const;
  Status finish() const;

  std::unique_ptr<DemoProgram> program_ = std::make_unique<DemoProgram>();
  std::vector<Declared> declared_[4];  // by DemoOperandKind
  int64_t largest_declared_ = 0;       // elements of the largest input, output or constant so far
  int line_ = 0;
};

Result<std::unique_ptr<DemoProgram>> Parser::parse(std::string_view text) {
  if (text.empty())
    return fail(Error::DelegateInvalidCompatibility,
                "demo: not a demo program: the processed bytes are empty");
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_;
    if (line_ == 1) {
      ETC_TRY(header(line));
      continue;
    }
    const Tokens tokens = split(line);
    if (tokens.empty()) continue;
    if (tokens[0] == "input") {
      ETC_TRY(declaration(DemoOperandKind::Input, tokens));
    } else if (tokens[0] == "output") {
      ETC_TRY(declaration(DemoOperandKind::Output, tokens));
    } else if (tokens[0] == "const") {
      ETC_TRY(declaration(DemoOperandKind::Constant, tokens));
    } else if (tokens[0] == "buffer") {
      ETC_TRY(declaration(DemoOperandKind::Buffer, tokens));
    } else {
      ETC_TRY(instruction(tokens));
    }
  }
  ETC_TRY(finish());
  for (const Declared& d : declared_[static_cast<int>(DemoOperandKind::Input)])
    program_->input_numel.push_back(d.numel);
  for (const Declared& d : declared_[static_cast<int>(DemoOperandKind::Output)])
    program_->output_numel.push_back(d.numel);
  return std::move(program_);
}

Status Parser::header(std::string_view line) {
  const Tokens tokens = split(line);
  if (tokens.empty() || tokens[0] != kDemoMagic)
    return fail(Error::DelegateInvalidCompatibility, "demo: not a demo program: line 1 should be '",
                kDemoMagic, " ", std::to_string(kDemoVersion), "'");
  uint64_t version = 0;
  if (tokens.size() != 2 || !parse_decimal(tokens[1], UINT32_MAX, version))
    return bad("expected '", kDemoMagic, " <version>'");
  if (version != static_cast<uint64_t>(kDemoVersion))
    return fail(Error::DelegateInvalidCompatibility, "demo: program version ", std::to_string(version),
                ", this runtime reads version ", std::to_string(kDemoVersion),
                "; recompile the model with a matching etc");
  return Status::Ok();
}

Status Parser::declaration(DemoOperandKind kind, const Tokens& tokens) {
  std::vector<Declared>& list = declared_[static_cast<int>(kind)];
  const std::string expected = prefix_of(kind) + std::to_string(list.size());
  const bool is_const = kind == DemoOperandKind::Constant;
  if (tokens.size() < 3 || (!is_const && tokens.size() != 3))
    return bad("expected '", tokens[0], " ", expected,
               is_const ? " <elements> <values...>'" : " <elements>'");
  if (tokens[1] != expected)
    return bad("expected ", expected, ", got ", quoted(tokens[1]), " (", tokens[0],
               " declarations are numbered in order from 0)");
  uint64_t numel = 0;
  if (!parse_decimal(tokens[2], kMaxDemoElements, numel))
    return bad("bad element count ", quoted(tokens[2]), " for ", expected);
  // Every operand of an instruction has the same size, so a buffer larger than
  // anything declared before it could never be used: refuse it rather than
  // let a small corrupt blob allocate up to the element cap.
  if (kind == DemoOperandKind::Buffer && static_cast<int64_t>(numel) > largest_declared_)
    return bad(expected, " declares ", std::to_string(numel),
               " elements, more than any input, output or constant declared before it");
  if (kind != DemoOperandKind::Buffer)
    largest_declared_ = std::max(largest_declared_, static_cast<int64_t>(numel));
  Declared d;
  d.numel = static_cast<int64_t>(numel);
  d.line = line_;
  std::vector<float>& storage = program_->storage;
  if (is_const || kind == DemoOperandKind::Buffer) {
    if (numel > static_cast<uint64_t>(kMaxDemoElements) - storage.size())
      return bad(expected, " takes constants and buffers past ", std::to_string(kMaxDemoElements),
                 " elements");
    d.offset = storage.size();
  }
  if (is_const) {
    if (tokens.size() - 3 != numel)
      return bad(expected, " declares ", std::to_string(numel), " elements but lists ",
                 std::to_string(tokens.size() - 3), " values");
    for (size_t i = 3; i < tokens.size(); ++i) {
      float v = 0;
      if (!parse_float(tokens[i], v)) return bad("bad value ", quoted(tokens[i]), " in ", expected);
      storage.push_back(v);
    }
  } else if (kind == DemoOperandKind::Buffer) {
    storage.resize(storage.size() + numel, 0.0f);
  }
  list.push_back(d);
  return Status::Ok();
}

Result<DemoOperand> Parser::operand(std::string_view name) const {
  for (DemoOperandKind kind : {DemoOperandKind::Input, DemoOperandKind::Output, DemoOperandKind::Constant,
                               DemoOperandKind::Buffer}) {
    const std::string_view prefix = prefix_of(kind);
    if (name.substr(0, prefix.size()) != prefix) continue;
    uint64_t index = 0;
    if (!parse_decimal(name.substr(prefix.size()), UINT32_MAX, index)) break;
    const std::vector<Declared>& list = declared_[static_cast<int>(kind)];
    if (index >= list.size()) return bad("undefined operand ", quoted(name));
    return DemoOperand{kind, static_cast<uint32_t>(index), list[index].offset};
  }
  return bad("bad operand ", quoted(name), " (expected in<i>, out<i>, c<i> or t<i>)");
}

Status Parser::instruction(const Tokens& tokens) {
  const OpInfo* info = nullptr;
  for (const OpInfo& op : kOps)
    if (tokens[0] == op.name) info = &op;
  if (info == nullptr) return bad("unknown instruction ", quoted(tokens[0]));
  DemoInstruction ins;
  ins.op = info->op;
  ins.num_sources = info->num_sources;
  size_t num_operands = tokens.size() - 1;
  if (tokens.back()[0] == '#') {
    if (tokens.back().size() == 1) return bad("empty debug identifier '#' (expected #<id>)");
    ins.debug_name = std::string(tokens.back().substr(1));
    --num_operands;
  }
  if (num_operands != 1u + info->num_sources)
    return bad(info->name, " takes ", std::to_string(1 + info->num_sources), " operands (", info->usage,
               "), got ", std::to_string(num_operands));
  ETC_ASSIGN_OR_RETURN(ins.dst, operand(tokens[1]));
  if (ins.dst.kind == DemoOperandKind::Input || ins.dst.kind == DemoOperandKind::Constant)
    return bad(info->name, " writes ", tokens[1], "; only outputs and buffers can be written");
  const auto declared = [this](const DemoOperand& o) -> const Declared& {
    return declared_[static_cast<int>(o.kind)][o.index];
  };
  const int64_t numel = declared(ins.dst).numel;
  for (uint8_t s = 0; s < info->num_sources; ++s) {
    ETC_ASSIGN_OR_RETURN(ins.src[s], operand(tokens[2 + s]));
    const Declared& d = declared(ins.src[s]);
    if (!d.written &&
        (ins.src[s].kind == DemoOperandKind::Output || ins.src[s].kind == DemoOperandKind::Buffer))
      return bad(info->name, " reads ", tokens[2 + s], " before any instruction writes it");
    if (d.numel != numel)
      return bad(info->name, ": ", tokens[2 + s], " has ", std::to_string(d.numel), " elements but ",
                 tokens[1], " has ", std::to_string(numel),
                 " (operands of one instruction have equal counts)");
  }
  ins.numel = static_cast<size_t>(numel);
  declared_[static_cast<int>(ins.dst.kind)][ins.dst.index].written = true;
  program_->instructions.push_back(ins);
  return Status::Ok();
}

Status Parser::finish() const {
  const std::vector<Declared>& outputs = declared_[static_cast<int>(DemoOperandKind::Output)];
  for (size_t i = 0; i < outputs.size(); ++i)
    if (!outputs[i].written)
      return fail(Error::InvalidProgram, "demo: program line ", std::to_string(outputs[i].line),
                  ": output out", std::to_string(i), " is never written");
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<DemoProgram>> parse_demo_program(std::string_view text) {
  try {
    return Parser().parse(text);
  } catch (const std::bad_alloc&) {
    // Counts are capped, but the cap may still exceed what this machine has.
    return fail(Error::DelegateMemoryAllocationFailed, "demo: out of memory for its constants and buffers");
  }
}

}  // namespace etc::demo
