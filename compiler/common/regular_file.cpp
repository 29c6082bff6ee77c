#include "compiler/common/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

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

}  // namespace

std::string read_regular_file_range(const std::string& path, int64_t offset, int64_t length,
                                    std::string& bytes, uint64_t& size,
                                    std::optional<uint64_t> max_bytes_flag) {
  const uint64_t max_bytes = max_bytes_flag.value_or(limits().max_file_bytes);
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
  const Fd fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (fd.fd < 0) return std::string("cannot open: ") + std::strerror(errno);
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0) return std::string("cannot read its status: ") + std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return std::string("is ") + kind_of(st.st_mode) + ", not a regular file";
  size = static_cast<uint64_t>(st.st_size);
  const uint64_t from = offset < 0 ? size + 1 : static_cast<uint64_t>(offset);
  const uint64_t count = length < 0 ? size - std::min(from, size) : static_cast<uint64_t>(length);
  if (from > size || count > size - from)
    return "the range [" + std::to_string(offset) + ", +" + std::to_string(length) + ") lies outside its " +
           std::to_string(size) + " bytes";
  if (count > max_bytes)
    return "holds " + format_bytes(count) + " to read, above --max-file-bytes (" + format_bytes(max_bytes) +
           ")";
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
