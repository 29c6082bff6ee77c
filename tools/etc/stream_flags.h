#pragma once
// The streaming flags of `etc run`, to run a stateful model as it is used:
//   --feedback OUT=IN   after every run, output OUT becomes input IN (a
//                       recurrent state fed back; same dtype and shape)
//   --chunks NAME=FILE  FILE holds N inputs for NAME stacked on a new first
//                       axis; run k (warm-up runs count) reads chunk k mod N

#include <set>
#include <string>
#include <vector>

#include "runtime/executor/method.h"
#include "tools/etc/tensor_io.h"

namespace etc::cli {

class Stream {
 public:
  // Throws ToolError naming the program, flag, file and names involved.
  Stream(const std::vector<std::string>& feedback, const std::vector<std::string>& chunks,
         const Method& method, const std::string& program);

  bool empty() const { return feedback_.empty() && chunks_.empty(); }
  bool chunked() const { return !chunks_.empty(); }
  // Inputs the chunk files supply (the plain --input flags need not).
  std::set<std::string> chunked_inputs() const;
  // Before run k: each chunked input gets its chunk.
  Status before_run(Method& method, int64_t k) const;
  // After a run: each fed-back output is copied into its input.
  Status after_run(Method& method) const;
  std::string describe() const;  // "state <- stateN; input: 100 chunks"

 private:
  struct Feedback {
    size_t output, input;
    std::string output_name, input_name;
  };
  struct Chunks {
    size_t input;
    std::string name, file;
    io::OwnedTensor all;
    int64_t count;
    size_t chunk_bytes;
  };
  std::vector<Feedback> feedback_;
  std::vector<Chunks> chunks_;
};

}  // namespace etc::cli
