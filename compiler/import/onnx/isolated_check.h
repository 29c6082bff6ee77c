#pragma once
// libonnx's checker and shape inference trust parts of a model's structure
// they do not check first (a Conv weight of too low a rank is read out of
// bounds, for one), so a hostile model can crash them. check_and_infer runs
// both in a child process: a crash there becomes an error naming the file,
// and the parent takes back only what inference adds (value_info and the
// graph outputs' types).

#include <onnx/onnx_pb.h>

#include <string>

namespace etc::onnx_import {

// Throws CompileError "PATH: ONNX checker rejected the model: ...",
// "PATH: ONNX shape inference failed: ..." or, when the child dies,
// "PATH: ONNX checker or shape inference crashed on this model (signal N):
// the model is malformed" (or did not finish within 60 s, twice: a child
// that times out is run once more, since a fork from a process with other
// threads can rarely hang on a lock one of them held).
void check_and_infer(onnx::ModelProto& model, const std::string& path);

}  // namespace etc::onnx_import
