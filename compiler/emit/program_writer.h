#pragma once
// ExportedProgram → program file (.etp), see runtime/schema/program.fbs.
//
// Steps, in order:
//   1. flatten + plan   the graph and its control-flow bodies become one value
//                       table and chains of instructions (flatten.h); arena
//                       placement for activations, inputs and outputs
//   2. pack_constants   one segment, each constant 64-byte aligned, shared data once
//   3. pack_delegates   one segment per lowered delegate for its processed bytes,
//                       after the constants segment (segment 0 when present)
//   4. build            operators (those kernel calls use), values, instructions
//                       (KernelCall per edge node, DelegateCall per call_delegate
//                       node: args are inputs then outputs, IfCall / LoopCall
//                       per control-flow node), chains, delegates (backend
//                       id, compile specs, debug handle map), debug info
//   5. write            temp file in the target folder, then rename: a failed
//                       compile never leaves a partial file behind

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace etc::emit {

struct EmitStats {
  size_t file_size = 0;
  size_t constant_bytes = 0;
  size_t arena_size = 0;
  size_t arena_lower_bound = 0;
  size_t num_instructions = 0;
  size_t num_delegates = 0;   // fb::Delegate tables (one per lowered module)
  size_t delegate_bytes = 0;  // processed bytes of all delegates
};

// Serializes the program to bytes. Throws CompileError on unsupported content.
std::vector<uint8_t> serialize_program(const ir::ExportedProgram& program, EmitStats* stats = nullptr);

// The same file as pieces to write in order, without assembling it: the
// flatbuffer, zero padding, and each segment where it lies (a delegate's
// segment views `program`'s processed bytes, which must outlive the image).
// A model's weights are most of a program: writing them from where they
// already are saves copying them once more.
struct ProgramImage {
  ProgramImage() = default;
  ProgramImage(ProgramImage&&) = default;  // the pieces keep viewing the moved buffers
  ProgramImage& operator=(ProgramImage&&) = default;
  ProgramImage(const ProgramImage&) = delete;
  ProgramImage& operator=(const ProgramImage&) = delete;

  std::vector<uint8_t> flatbuffer;
  std::vector<uint8_t> constants;
  std::vector<std::span<const uint8_t>> pieces;
  size_t size() const;
};
ProgramImage serialize_program_image(const ir::ExportedProgram& program, EmitStats* stats = nullptr);

}  // namespace etc::emit
