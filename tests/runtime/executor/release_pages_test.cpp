// FreeableBuffer::free() on a delegate's blob: in a program mapped from a
// file, the blob's whole pages leave the process's resident memory (and read
// back intact if touched again); for borrowed bytes it changes nothing.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/executor/method.h"
#include "tests/runtime/backend/stub_backend.h"
#include "tests/support/program_bytes.h"
#include "tests/support/temp_files.h"

namespace etc {
namespace {

constexpr size_t kBlobBytes = size_t{2} << 20;

std::string blob_pattern() {
  std::string blob(kBlobBytes, '\0');
  for (size_t i = 0; i < blob.size(); ++i) blob[i] = static_cast<char>('a' + (i * 7) % 26);
  return blob;
}

std::vector<uint8_t> program_with_big_blob() {
  testing::ProgramBytes p;
  const int x = p.input("x", {2});
  const int y = p.output("y", {2});
  p.call_delegate(p.delegate("stub", blob_pattern(), {}, testing::ProgramBytes::Placement::Segment), {x},
                  {y});
  return p.build();
}

// Kilobytes of the mapping that holds `address` that this process has
// resident (/proc/self/smaps "Rss"); mincore would tell the page cache's
// state instead, which a file's pages stay in.
size_t mapping_rss_kb(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  REQUIRE(smaps);
  const auto a = reinterpret_cast<uintptr_t>(address);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx ", &lo, &hi) == 2 && line.find(':') > line.find('-') &&
        line.find(' ') > line.find('-')) {
      inside = a >= lo && a < hi;
      continue;
    }
    size_t kb = 0;
    if (inside && std::sscanf(line.c_str(), "Rss: %zu kB", &kb) == 1) return kb;
  }
  FAIL("no mapping holds the blob");
  return 0;
}

struct Freed {
  const uint8_t* blob = nullptr;
  size_t size = 0;
  // Of the blob's mapping, just before and just after free(). (Measured
  // there: a later fault anywhere in a large page-cache folio the blob
  // shares with the program's other bytes maps the whole folio again, at no
  // cost in memory, since the page cache holds it either way.)
  size_t rss_before_kb = 0, rss_after_kb = 0;
};

// Initialises the program's one delegate with a stub that reads its whole
// blob, then frees it.
Freed init_and_free(const Program& program) {
  testing::StubBackend& stub = testing::stub_backend();
  Freed seen;
  stub.on_init = [&](BackendInitContext&, FreeableBuffer* processed,
                     Span<const CompileSpecView>) -> Result<DelegateHandle*> {
    seen.blob = static_cast<const uint8_t*>(processed->data());
    seen.size = processed->size();
    CHECK(std::string(reinterpret_cast<const char*>(seen.blob), seen.size) == blob_pattern());  // pages in
    seen.rss_before_kb = mapping_rss_kb(seen.blob);
    processed->free();
    CHECK(processed->data() == nullptr);
    seen.rss_after_kb = mapping_rss_kb(seen.blob);
    static int handle = 0;
    return static_cast<DelegateHandle*>(&handle);
  };
  stub.on_destroy = [](DelegateHandle*) {};  // the handle above is not the heap's
  auto method = Method::init(program);
  REQUIRE(method.ok());
  return seen;
}

TEST_CASE("freeing a blob in a mapped program returns its pages, which read back intact", "[executor]") {
  const std::vector<uint8_t> bytes = program_with_big_blob();
  const std::string path = etc::testing::test_temp_path("release_pages_test.etp");
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  auto program = Program::load(path);
  std::remove(path.c_str());  // the mapping keeps the file's pages reachable
  REQUIRE(program.ok());
  const Freed freed = init_and_free(program.get());
  REQUIRE(freed.size == kBlobBytes);
  const size_t blob_kb = kBlobBytes >> 10;
  CHECK(freed.rss_before_kb >= blob_kb);
  // All of the blob's whole pages left; at most a partial page at each end stays.
  CHECK(freed.rss_after_kb + blob_kb <= freed.rss_before_kb + 8);
  // Touched again, the bytes come back from the file unchanged.
  CHECK(std::string(reinterpret_cast<const char*>(freed.blob), freed.size) == blob_pattern());
}

TEST_CASE("freeing a blob of borrowed program bytes leaves them alone", "[executor]") {
  const std::vector<uint8_t> bytes = program_with_big_blob();
  auto program = testing::load_program_bytes(bytes);
  REQUIRE(program.ok());
  const Freed freed = init_and_free(program.get());
  REQUIRE(freed.size == kBlobBytes);
  CHECK(freed.rss_after_kb + 8 >= freed.rss_before_kb);
  CHECK(std::string(reinterpret_cast<const char*>(freed.blob), freed.size) == blob_pattern());
}

}  // namespace
}  // namespace etc
