#include "runtime/executor/file_data.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

namespace etc {

Result<FileData> FileData::map(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(Error::AccessFailed, path, ": cannot open: ", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(Error::AccessFailed, path, ": not a regular file");
  }
  FileData out;
  out.size_ = static_cast<size_t>(st.st_size);
  if (out.size_ > 0) {
    void* p = ::mmap(nullptr, out.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return fail(Error::AccessFailed, path, ": cannot map: ", std::strerror(err));
    }
    out.data_ = static_cast<const uint8_t*>(p);
    out.mapped_ = true;
  }
  ::close(fd);
  return out;
}

FileData FileData::borrow(const void* data, size_t size) {
  FileData out;
  out.data_ = static_cast<const uint8_t*>(data);
  out.size_ = size;
  return out;
}

FileData::FileData(FileData&& o) noexcept { *this = std::move(o); }

FileData& FileData::operator=(FileData&& o) noexcept {
  if (this != &o) {
    if (mapped_) ::munmap(const_cast<uint8_t*>(data_), size_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    mapped_ = std::exchange(o.mapped_, false);
  }
  return *this;
}

FileData::~FileData() {
  if (mapped_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

void FileData::release_pages(const void* begin, size_t size) const {
  const auto* b = static_cast<const uint8_t*>(begin);
  if (!mapped_ || b < data_ || size > size_ || b - data_ > static_cast<ptrdiff_t>(size_ - size)) return;
  const long page_size = ::sysconf(_SC_PAGESIZE);
  if (page_size <= 0) return;
  const auto page = static_cast<uintptr_t>(page_size);
  const uintptr_t first = (reinterpret_cast<uintptr_t>(b) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(b) + size) / page * page;
  if (end > first) ::madvise(reinterpret_cast<void*>(first), end - first, MADV_DONTNEED);
}

}  // namespace etc
