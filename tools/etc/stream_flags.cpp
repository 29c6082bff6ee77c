#include "tools/etc/stream_flags.h"

#include "tools/etc/tool_error.h"

namespace etc::cli {
namespace {

std::pair<std::string, std::string> split_flag(const std::string& flag, const char* option,
                                               const char* form) {
  const size_t eq = flag.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == flag.size())
    throw ToolError(std::string(option) + " '" + flag + "': expected " + form);
  return {flag.substr(0, eq), flag.substr(eq + 1)};
}

}  // namespace

Stream::Stream(const std::vector<std::string>& feedback, const std::vector<std::string>& chunks,
               const Method& m, const std::string& program) {
  auto input_index = [&](const std::string& name, const std::string& flag) {
    for (size_t i = 0; i < m.num_inputs(); ++i)
      if (m.input_name(i) == name) return i;
    throw ToolError(program + ": " + flag + ": the program has no input '" + name + "'");
  };
  std::set<size_t> fed;
  for (const std::string& flag : feedback) {
    const auto [out, in] = split_flag(flag, "--feedback", "OUTPUT=INPUT");
    size_t o = m.num_outputs();
    for (size_t i = 0; i < m.num_outputs(); ++i)
      if (m.output_name(i) == out) o = i;
    if (o == m.num_outputs())
      throw ToolError(program + ": --feedback " + flag + ": the program has no output '" + out + "'");
    const size_t i = input_index(in, "--feedback " + flag);
    if (!fed.insert(i).second)
      throw ToolError(program + ": --feedback " + flag + ": input '" + in + "' is fed twice");
    if (!(m.output(o).spec == m.input_spec(i)))
      throw ToolError(program + ": --feedback " + flag + ": output '" + out + "' is " +
                      m.output(o).spec.str() + " but input '" + in + "' is " + m.input_spec(i).str());
    feedback_.push_back({o, i, out, in});
  }
  for (const std::string& flag : chunks) {
    const auto [name, file] = split_flag(flag, "--chunks", "NAME=FILE");
    const size_t i = input_index(name, "--chunks " + flag);
    if (fed.count(i))
      throw ToolError(program + ": --chunks " + flag + ": input '" + name + "' is also fed back");
    for (const Chunks& c : chunks_)
      if (c.input == i) throw ToolError(program + ": --chunks: input '" + name + "' is given twice");
    io::OwnedTensor all = io::read_tensor_file(file);
    const TensorSpec& want = m.input_spec(i);
    bool ok = all.spec.dtype == want.dtype && all.spec.shape.rank() == want.shape.rank() + 1 &&
              all.spec.shape[0] > 0;
    for (int d = 0; ok && d < want.shape.rank(); ++d) ok = all.spec.shape[d + 1] == want.shape[d];
    if (!ok)
      throw ToolError(file + ": --chunks for input '" + name + "' (" + want.str() + ") needs " +
                      dtype_name(want.dtype) + "[N, ...] with N >= 1 chunks of that shape; the file holds " +
                      all.spec.str());
    const int64_t count = all.spec.shape[0];
    chunks_.push_back({i, name, file, std::move(all), count, want.nbytes()});
  }
}

std::set<std::string> Stream::chunked_inputs() const {
  std::set<std::string> names;
  for (const Chunks& c : chunks_) names.insert(c.name);
  return names;
}

Status Stream::before_run(Method& m, int64_t k) const {
  for (const Chunks& c : chunks_) {
    const size_t chunk = static_cast<size_t>(k % c.count);
    ETC_TRY(m.set_input(c.input, m.input_spec(c.input), c.all.bytes.data() + chunk * c.chunk_bytes));
  }
  return Status::Ok();
}

Status Stream::after_run(Method& m) const {
  for (const Feedback& f : feedback_)
    ETC_TRY(m.set_input(f.input, m.input_spec(f.input), m.output(f.output).data));
  return Status::Ok();
}

std::string Stream::describe() const {
  std::string out;
  for (const Feedback& f : feedback_)
    out += (out.empty() ? "" : "; ") + f.input_name + " <- " + f.output_name;
  for (const Chunks& c : chunks_)
    out += (out.empty() ? "" : "; ") + c.name + ": " + std::to_string(c.count) + " chunks from " + c.file;
  return out;
}

}  // namespace etc::cli
