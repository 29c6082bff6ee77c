// Seeds for the blob fuzz targets: writes the processed bytes of every
// delegate in the given program files to OUT/BACKEND/NAME-INDEX.bin.
//   etc_fuzz_extract_blobs OUT PROGRAM.etp...
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "runtime/executor/program.h"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s OUT PROGRAM.etp...\n", argv[0]);
    return 2;
  }
  const fs::path out(argv[1]);
  int written = 0;
  for (int a = 2; a < argc; ++a) {
    auto program = etc::Program::load(argv[a]);
    if (!program.ok()) {
      std::fprintf(stderr, "error: %s\n", program.message().c_str());
      return 1;
    }
    const auto* delegates = program.get().fb().delegates();
    for (uint32_t i = 0; delegates && i < delegates->size(); ++i) {
      const etc::fb::Delegate* d = delegates->Get(i);
      const uint8_t* data = nullptr;
      size_t size = 0;
      if (d->inline_data()) {
        data = d->inline_data()->data();
        size = d->inline_data()->size();
      } else if (d->segment() >= 0) {
        const auto seg = program.get().segment(static_cast<uint32_t>(d->segment()));
        data = seg.data();
        size = seg.size();
      }
      const fs::path dir = out / d->backend_id()->str();
      fs::create_directories(dir);
      const fs::path file = dir / (fs::path(argv[a]).stem().string() + "-" + std::to_string(i) + ".bin");
      std::ofstream(file, std::ios::binary)
          .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
      ++written;
    }
  }
  std::printf("wrote %d blobs under %s\n", written, out.c_str());
  return 0;
}
