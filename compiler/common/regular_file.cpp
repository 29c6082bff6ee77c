#include "compiler/common/regular_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "compiler/common/limits.h"

namespace etc {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Closes the descriptor on every way out.
struct Fd {
  explicit Fd(int f) : fd(f) {}
  int fd;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Opens `path` as a regular file of at most max_bytes to read from `offset`
// (length < 0: to its end): the descriptor in `fd`, the file's size in
// `size`, the range's length in `count`; or why not.
std::string open_regular_file(const std::string& path, int64_t offset, int64_t length, uint64_t max_bytes,
                              Fd& fd, uint64_t& size, uint64_t& count) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
  fd.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd.fd < 0) return std::string("cannot open: ") + std::strerror(errno);
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0) return std::string("cannot read its status: ") + std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return std::string("is ") + kind_of(st.st_mode) + ", not a regular file";
  size = static_cast<uint64_t>(st.st_size);
  const uint64_t from = offset < 0 ? size + 1 : static_cast<uint64_t>(offset);
  count = length < 0 ? size - std::min(from, size) : static_cast<uint64_t>(length);
  if (from > size || count > size - from)
    return "the range [" + std::to_string(offset) + ", +" + std::to_string(length) + ") lies outside its " +
           std::to_string(size) + " bytes";
  if (count > max_bytes)
    return "holds " + format_bytes(count) + " to read, above --max-file-bytes (" + format_bytes(max_bytes) +
           ")";
  return {};
}

}  // namespace

MappedFile::MappedFile(MappedFile&& other) noexcept : data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  std::swap(data_, other.data_);  // `other` unmaps what this held
  std::swap(size_, other.size_);
  return *this;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
}

std::string map_regular_file(const std::string& path, MappedFile& file, std::optional<uint64_t> max_bytes) {
  Fd fd{-1};
  uint64_t size = 0, count = 0;
  if (std::string error =
          open_regular_file(path, 0, -1, max_bytes.value_or(limits().max_file_bytes), fd, size, count);
      !error.empty())
    return error;
  MappedFile mapped;
  if (count > 0) {
    // MAP_POPULATE: the page tables filled in one pass rather than a fault
    // per 64 KiB as the parser walks the file.
    void* p = ::mmap(nullptr, static_cast<size_t>(count), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd.fd, 0);
    if (p == MAP_FAILED) return std::string("cannot map it into memory: ") + std::strerror(errno);
    mapped.data_ = static_cast<const char*>(p);
    mapped.size_ = static_cast<size_t>(count);
  }
  file = std::move(mapped);
  return {};
}

std::string read_regular_file_range(const std::string& path, int64_t offset, int64_t length,
                                    std::string& bytes, uint64_t& size,
                                    std::optional<uint64_t> max_bytes_flag) {
  Fd fd{-1};
  uint64_t count = 0;
  if (std::string error = open_regular_file(
          path, offset, length, max_bytes_flag.value_or(limits().max_file_bytes), fd, size, count);
      !error.empty())
    return error;
  const uint64_t from = static_cast<uint64_t>(offset);
  bytes.assign(static_cast<size_t>(count), '\0');
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n =
        ::pread(fd.fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(from + done));
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return "changed size while being read";
    if (n < 0) return std::string("read failed: ") + std::strerror(errno);
    done += static_cast<size_t>(n);
  }
  return {};
}

std::string read_regular_file(const std::string& path, std::string& bytes,
                              std::optional<uint64_t> max_bytes) {
  uint64_t size = 0;
  return read_regular_file_range(path, 0, -1, bytes, size, max_bytes);
}

}  // namespace etc
